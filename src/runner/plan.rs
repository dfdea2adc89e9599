//! Whether a stage is up to date: what its tables would depend on if it
//! ran now ([`Plan`]), compared with its manifest, and in words why not.

use anyhow::Result;
use serde_json::Value;
use std::collections::BTreeMap;

use crate::config::Config;
use crate::stages::stage::{spelling_free, MissingInput, RunContext, Stage};
use crate::tables::manifest::{completion, Completion, Manifest};
use crate::tables::shard::Shard;
use crate::tables::Table;

/// What the tables of one task of a stage would depend on if it ran now,
/// and the fingerprint of it all: compared with a manifest's, it tells
/// whether the stage is up to date, and part by part ([`Plan::changes`])
/// why not.
pub struct Plan {
    pub fingerprint: String,
    /// Fingerprints of the manifests of the stages that made the inputs.
    pub inputs: BTreeMap<String, String>,
    /// The stage's external inputs as the manifest records them; the
    /// fingerprint and [`Plan::changes`] see them [`spelling_free`].
    pub external: Value,
    pub config: Value,
    /// `table.column type` of every column the stage writes: a program whose
    /// tables gained or changed a column reruns the stage instead of leaving
    /// old tables that the next stage's schema check would refuse.
    pub output_columns: Vec<String>,
}

impl Plan {
    /// The plan of task `shard` of `stage`. Fails with [`MissingInput`] when
    /// an input comes from a sharded stage whose tasks have not all finished.
    pub fn of(stage: &dyn Stage, all: &[Box<dyn Stage>], ctx: &RunContext, shard: Shard) -> Result<Plan> {
        let mut inputs = BTreeMap::new();
        for table in stage.inputs() {
            let maker = maker_of(table, all, &ctx.config);
            let fp = match completion(&ctx.out, maker) {
                Completion::NotRun => String::new(),
                Completion::Complete(tasks) if tasks.len() == 1 => tasks[0].fingerprint.clone(),
                Completion::Complete(tasks) => {
                    let fps: Vec<Value> = tasks.iter().map(|m| Value::String(m.fingerprint.clone())).collect();
                    fingerprint_of(&[&Value::Array(fps)])
                }
                Completion::Partial { count, missing } => {
                    let list: Vec<String> = missing.iter().map(|i| format!("{i}/{count}")).collect();
                    return Err(MissingInput(format!(
                        "stage {} needs table `{table}` from all {count} tasks of stage {maker}, but tasks {} have not finished; run `pipeline run --stage {maker} --shard I/{count}` for each",
                        stage.name(),
                        list.join(", ")
                    ))
                    .into());
                }
            };
            inputs.insert(table.to_string(), fp);
        }
        let external = stage.external_fingerprint(ctx)?;
        let config = stage.config_section(&ctx.config);
        let output_columns: Vec<String> = stage
            .outputs(&ctx.config)
            .iter()
            .flat_map(|t| {
                crate::tables::schema::arrow_schema(t.name())
                    .fields()
                    .iter()
                    .map(|f| format!("{t}.{} {}", f.name(), f.data_type()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let columns: Vec<Value> = output_columns.iter().cloned().map(Value::String).collect();
        let fingerprint = fingerprint_of(&[
            &Value::String(stage.name().into()),
            &Value::String(env!("CARGO_PKG_VERSION").into()),
            &Value::String(shard.to_string()),
            &serde_json::to_value(&inputs)?,
            &spelling_free(&external),
            &config,
            &Value::Array(columns),
        ]);
        Ok(Plan { fingerprint, inputs, external, config, output_columns })
    }

    /// Why a run now would not give what `manifest` records, part by part
    /// (empty when the fingerprints agree).
    pub fn changes(&self, manifest: &Manifest) -> Vec<String> {
        if self.fingerprint == manifest.fingerprint {
            return Vec::new();
        }
        let mut why = Vec::new();
        if manifest.program_version != env!("CARGO_PKG_VERSION") {
            why.push(format!("written by version {} of the program", manifest.program_version));
        }
        for (table, fp) in &self.inputs {
            if manifest.inputs.get(table) != Some(fp) {
                why.push(format!("input table `{table}` was rewritten"));
            }
        }
        let (before, now) = (spelling_free(&manifest.external_inputs), spelling_free(&self.external));
        if before != now {
            why.push(changed_files(&before, &now));
        }
        if self.config != manifest.config {
            why.push(changed_settings(&manifest.config, &self.config));
        }
        if !manifest.output_columns.is_empty() && self.output_columns != manifest.output_columns {
            why.push("the columns of its tables changed".into());
        }
        if why.is_empty() {
            why.push("written by an earlier build of the program".into());
        }
        why
    }
}

/// The stage that writes `table` ("?" for a table no stage writes).
pub fn maker_of<'a>(table: Table, all: &'a [Box<dyn Stage>], config: &Config) -> &'a str {
    all.iter().find(|s| s.outputs(config).contains(&table)).map(|s| s.name()).unwrap_or("?")
}

/// "input files changed: ..." from two external fingerprints of ingest
/// (`{"files": [{"file", ...}]}`; `path` in manifests written before files
/// were known by their canonical path), naming up to three files; other
/// stages have none, so anything else is reported as a whole.
fn changed_files(before: &Value, now: &Value) -> String {
    let files = |v: &Value| -> BTreeMap<String, Value> {
        v.get("files")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|f| {
                let name = f.get("file").or_else(|| f.get("path")).and_then(Value::as_str).unwrap_or("?");
                (name.to_string(), f.clone())
            })
            .collect()
    };
    let (old, new) = (files(before), files(now));
    let mut changes: Vec<String> = Vec::new();
    for (path, f) in &new {
        match old.get(path) {
            None => changes.push(format!("{path} added")),
            Some(g) if g != f => changes.push(format!("{path} changed")),
            Some(_) => {}
        }
    }
    changes.extend(old.keys().filter(|p| !new.contains_key(*p)).map(|p| format!("{p} removed")));
    if changes.is_empty() {
        return "its inputs outside the output folder changed".into();
    }
    let more = changes.len().saturating_sub(3);
    changes.truncate(3);
    let tail = if more > 0 { format!(" and {more} more") } else { String::new() };
    format!("input files changed: {}{tail}", changes.join(", "))
}

/// "config changed: a.b, c" naming the settings (dotted paths) that differ
/// between two config sections.
fn changed_settings(before: &Value, now: &Value) -> String {
    fn diff(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
                for k in keys {
                    let sub = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                    diff(&sub, x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null), out);
                }
            }
            _ if a != b => out.push(if path.is_empty() { "(all)".into() } else { path.to_string() }),
            _ => {}
        }
    }
    let mut keys = Vec::new();
    diff("", before, now, &mut keys);
    format!("config changed: {}", keys.join(", "))
}

/// A stable hex fingerprint of JSON values (serde_json maps are sorted, so
/// the serialization is canonical).
pub fn fingerprint_of(parts: &[&Value]) -> String {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for p in parts {
        h.update(p.to_string().as_bytes());
        h.update(&[0]);
    }
    format!("{:032x}", h.digest128())
}
