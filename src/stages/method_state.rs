//! Stage `method_state`: `descr_sample`, `df`, `corpus_stats` →
//! `method_state`.
//!
//! The state of the global methods, chosen once from the whole corpus and
//! read back by every task of `signatures`: the lexicons of imatch and a7
//! (from `df`; every `signatures` task rebuilds them from it, and their rows
//! here explain a run), and a9's descriptive words, chosen from the
//! sample's counts that the tasks of stage `descr_sample` wrote (spec §4,
//! "At web scale"): two passes over `descr_sample`, at most
//! `descr_sample_documents` documents whatever the crawl, never over
//! `tokens`. The sample's size and rate go to the manifest
//! (`a9_sample_documents`, `a9_sample_rate_ppb`).
//!
//! Why a stage of its own, run as tasks: it reads the whole term
//! dictionary, which the pipeline process must not do when the SQL stages
//! run on a cluster (`--engine ballista://…`, where that process only
//! drives them). Each method's state is independent of the others', so
//! task I of N (`--shard I/N`) builds the enabled methods at the positions
//! `j % N = I` of the registry's order. The table is the same for any N
//! (its rows are each method's).

use anyhow::Result;
use serde_json::{json, Value};

use crate::config::Config;
use crate::methods::descr::SampleRule;
use crate::methods::registry::{self, StateSource};
use crate::methods::StateRow;
use crate::stages::descr_sample::SampleReader;
use crate::stages::stage::{RunContext, Stage};
use crate::tables::columns::{corpus_stats, descr_sample, df, method_state};
use crate::tables::manifest::StageReport;
use crate::tables::shard::Shard;
use crate::tables::write::TableOutput;
use crate::tables::Table;

/// The method_state stage.
pub struct MethodState;

impl Stage for MethodState {
    fn name(&self) -> &'static str {
        "method_state"
    }
    fn inputs(&self) -> Vec<Table> {
        vec![descr_sample::NAME, df::NAME, corpus_stats::NAME]
    }
    /// Only the task that builds a9 reads the sample: pulled by every
    /// task, its N parts were N² GETs (`scripts/count_requests.py`).
    fn task_inputs(&self, config: &Config, shard: Shard) -> Vec<Table> {
        let reads_sample = own_methods(&config.methods.enabled, shard).iter().any(|m| m == "a9");
        self.inputs().into_iter().filter(|&t| reads_sample || t != descr_sample::NAME).collect()
    }
    fn outputs(&self, _: &Config) -> Vec<Table> {
        vec![method_state::NAME]
    }
    fn config_section(&self, config: &Config) -> Value {
        json!({"methods": config.methods})
    }
    fn shardable(&self) -> bool {
        true
    }
    fn run(&self, ctx: &RunContext) -> Result<StageReport> {
        let config = &ctx.config.methods;
        let own = own_methods(&config.enabled, ctx.shard);
        let mut report = StageReport::default();
        let mut writer = TableOutput::<method_state::Rows>::for_shard(&ctx.out, ctx.shard)?;
        if !own.is_empty() {
            let session = ctx.runtime.block_on(ctx.session())?;
            let terms = registry::doc_reads(&config.enabled).term_ids;
            let stats = ctx.runtime.block_on(crate::stages::stats::load_corpus_stats(&session, terms))?;
            // a9 reads its sample, pass after pass, a batch at a time; the
            // other methods never ask for a pass.
            let started = std::time::Instant::now();
            let built = if own.iter().any(|m| m == "a9") {
                let sample_documents = config.descr.sample_documents;
                let written = SampleRule::for_corpus(stats.n_docs, sample_documents as u64);
                let (sample, size) = SampleReader::open(&ctx.runtime, session, written, sample_documents)?;
                report.counters.insert("a9_sample_documents".into(), size as u64);
                report.counters.insert("a9_sample_rate_ppb".into(), sample.rule().rate_ppb());
                let built = registry::build_signers(&own, config, &stats, StateSource::Corpus(&sample));
                sample.finish()?;
                built
            } else {
                registry::build_signers(&own, config, &stats, StateSource::Corpus(&Vec::new()))
            };
            report.counters.insert("method_state_build_ms".into(), started.elapsed().as_millis() as u64);
            for method in &built {
                for row in method.state() {
                    writer.push(|b| {
                        b.method.append_value(method.id());
                        b.slot.append_value(row.slot);
                        b.term.append_value(&row.term);
                        b.value.append_value(row.value);
                    })?;
                }
            }
        }
        report.counters.insert("methods_built".into(), own.len() as u64);
        report.rows.insert(method_state::TABLE.into(), writer.commit()?);
        Ok(report)
    }
}

/// The enabled methods with a signer whose state task `shard` builds: those
/// at the positions `j % N = I` of the registry's order, which every task
/// computes alike, so each method is built by exactly one task.
fn own_methods(enabled: &[String], shard: Shard) -> Vec<String> {
    registry::METHODS
        .iter()
        .filter(|m| m.signer.is_some() && enabled.iter().any(|id| id == m.id))
        .enumerate()
        .filter(|(j, _)| *j as u64 % u64::from(shard.count) == u64::from(shard.index))
        .map(|(_, m)| m.id.to_string())
        .collect()
}

/// The `method_state` rows of `method`, by slot and term: the state the
/// method chose here, which every task of `signatures` signs with.
pub async fn load_method_state(session: &datafusion::prelude::SessionContext, method: &str) -> Result<Vec<StateRow>> {
    let sql = format!("SELECT slot, term, value FROM method_state WHERE method = '{method}' ORDER BY slot, term");
    let mut rows = Vec::new();
    for b in session.sql(&sql).await?.collect().await? {
        let (slots, terms, values) = (method_state::slot(&b)?, method_state::term(&b)?, method_state::value(&b)?);
        for i in 0..b.num_rows() {
            rows.push(StateRow { slot: slots.value(i), term: terms.value(i).to_string(), value: values.value(i) });
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample is read, hence pulled and checked, by a9's task alone.
    #[test]
    fn only_a9_s_task_reads_the_sample() {
        let mut config = Config::default();
        config.methods.enabled = registry::METHODS.iter().map(|m| m.id.to_string()).collect();
        assert!(MethodState.task_inputs(&config, Shard::WHOLE).contains(&descr_sample::NAME));
        for count in 1..=5 {
            let readers: Vec<u32> = (0..count)
                .filter(|&index| MethodState.task_inputs(&config, Shard { index, count }).contains(&descr_sample::NAME))
                .collect();
            assert_eq!(readers.len(), 1, "{count} tasks: {readers:?}");
            let a9 = Shard { index: readers[0], count };
            assert!(own_methods(&config.methods.enabled, a9).contains(&"a9".to_string()));
            for index in 0..count {
                let inputs = MethodState.task_inputs(&config, Shard { index, count });
                assert!(inputs.contains(&df::NAME) && inputs.contains(&corpus_stats::NAME));
            }
        }
    }

    #[test]
    fn every_method_is_built_by_exactly_one_task() {
        let enabled: Vec<String> = registry::METHODS.iter().map(|m| m.id.to_string()).collect();
        let whole = own_methods(&enabled, Shard::WHOLE);
        assert!(whole.iter().any(|m| m == "a9") && whole.iter().any(|m| m == "imatch"), "{whole:?}");
        for count in 1..=5 {
            let mut union: Vec<String> =
                (0..count).flat_map(|index| own_methods(&enabled, Shard { index, count })).collect();
            union.sort();
            let mut expected = whole.clone();
            expected.sort();
            assert_eq!(union, expected, "{count} tasks");
        }
    }
}
