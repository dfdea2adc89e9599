//! Table schemas, defined once in `schemas/<table>.json` and compiled in.
//!
//! The JSON files are the documentation analysts read and the source the
//! writers build their Arrow schemas from, so the two cannot drift; a test
//! checks every table a run writes against them.

use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use serde::Deserialize;
use std::sync::Arc;

/// One column of a table schema file.
#[derive(Debug, Clone, Deserialize)]
pub struct ColumnDef {
    pub name: String,
    /// `UInt64`, `Utf8`, `List<Utf8>`, ... (see [`parse_type`]).
    #[serde(rename = "type")]
    pub type_name: String,
    pub nullable: bool,
    pub doc: String,
    /// Whether Parquet may dictionary-encode the column (default yes). Off
    /// for hash values (fingerprints, signatures, minima): nearly all
    /// distinct, so a dictionary only costs the writer a hash lookup per
    /// value and the file a page of every value plus an index per row.
    #[serde(default = "on")]
    pub dictionary: bool,
    /// Whether Parquet keeps the column's min/max statistics (default yes).
    /// Off for the word lists and texts of `tokens`: no query filters on
    /// them, and the writer compared every word with its page's min and
    /// max (4% of the tokens stage). Keep it on for columns SQL joins or
    /// groups on, even hash values: DataFusion plans with the statistics
    /// (without them on `signatures.sig`, `shingles.shingle` and
    /// `sketches.minimum`, `candidates` took 1.5 times the CPU and 4 times
    /// the memory on the Javadoc crawl).
    #[serde(default = "on")]
    pub statistics: bool,
}

fn on() -> bool {
    true
}

/// One table schema file.
#[derive(Debug, Clone, Deserialize)]
pub struct TableDef {
    pub table: String,
    pub doc: String,
    pub columns: Vec<ColumnDef>,
}

/// Every schema file, by table name: each file of `schemas/`, listed by
/// `build.rs`.
const SCHEMA_FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/schema_files.rs"));

/// Names of all tables with a schema file.
pub fn table_names() -> impl Iterator<Item = &'static str> {
    SCHEMA_FILES.iter().map(|(n, _)| *n)
}

/// The parsed schema file of `table`. Panics on an unknown table or a broken
/// file: both are programming errors caught by the schema tests.
pub fn table_def(table: &str) -> TableDef {
    let (_, text) =
        SCHEMA_FILES.iter().find(|(n, _)| *n == table).unwrap_or_else(|| panic!("no schema file for table {table}"));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("schemas/{table}.json: {e}"))
}

/// The Arrow schema of `table`.
pub fn arrow_schema(table: &str) -> SchemaRef {
    let def = table_def(table);
    let fields: Vec<Field> = def
        .columns
        .iter()
        .map(|c| {
            let ty =
                parse_type(&c.type_name).unwrap_or_else(|| panic!("schemas/{table}.json: bad type {}", c.type_name));
            Field::new(&c.name, ty, c.nullable)
        })
        .collect();
    Arc::new(Schema::new(fields))
}

/// Parses the type names used in schema files.
pub fn parse_type(name: &str) -> Option<DataType> {
    if let Some(inner) = name.strip_prefix("List<").and_then(|s| s.strip_suffix('>')) {
        let item = parse_type(inner)?;
        return Some(DataType::List(Arc::new(Field::new("item", item, true))));
    }
    Some(match name {
        "UInt16" => DataType::UInt16,
        "UInt32" => DataType::UInt32,
        "UInt64" => DataType::UInt64,
        "Int64" => DataType::Int64,
        "Float64" => DataType::Float64,
        "Boolean" => DataType::Boolean,
        "Utf8" => DataType::Utf8,
        "Binary" => DataType::Binary,
        _ => return None,
    })
}

/// Compares column names and types (not nullability, which SQL engines
/// widen freely) of a written schema with the table's schema file; returns
/// the differences, empty when they agree.
pub fn schema_differences(table: &str, written: &Schema) -> Vec<String> {
    let expected = arrow_schema(table);
    let mut diffs = Vec::new();
    let names = |s: &Schema| s.fields().iter().map(|f| f.name().clone()).collect::<Vec<_>>();
    if names(&expected) != names(written) {
        diffs.push(format!("{table}: columns {:?}, schema file says {:?}", names(written), names(&expected)));
        return diffs;
    }
    for (e, w) in expected.fields().iter().zip(written.fields()) {
        if !same_type(e.data_type(), w.data_type(), true) {
            diffs.push(format!(
                "{table}.{}: written {:?}, schema file says {:?}",
                e.name(),
                w.data_type(),
                e.data_type()
            ));
        }
    }
    diffs
}

/// The first difference between the schema of a stored table file and the
/// table's schema file, stricter than [`schema_differences`]: the stages
/// read columns by position as the exact types the schema file names
/// (`Utf8`, not `Utf8View`), so any other name, order or type is reported,
/// as `column doc_id is Int64, schemas/documents.json says UInt64`.
pub fn stored_schema_difference(table: &str, stored: &Schema) -> Option<String> {
    let expected = arrow_schema(table);
    let names = |s: &Schema| s.fields().iter().map(|f| f.name().clone()).collect::<Vec<_>>();
    if names(&expected) != names(stored) {
        return Some(format!("columns {:?}, schemas/{table}.json says {:?}", names(stored), names(&expected)));
    }
    expected
        .fields()
        .iter()
        .zip(stored.fields())
        .find(|(e, s)| !same_type(e.data_type(), s.data_type(), false))
        .map(|(e, s)| format!("column {} is {}, schemas/{table}.json says {}", e.name(), s.data_type(), e.data_type()))
}

/// Type equality that ignores list item field names and nullability; with
/// `view_is_utf8`, `Utf8View` counts as `Utf8` too (what a query may give
/// for a string column, but not what a stored table may hold: the stages
/// downcast its columns to the schema file's exact types).
fn same_type(a: &DataType, b: &DataType, view_is_utf8: bool) -> bool {
    match (a, b) {
        (DataType::List(x), DataType::List(y)) => same_type(x.data_type(), y.data_type(), view_is_utf8),
        (DataType::Utf8, DataType::Utf8View) | (DataType::Utf8View, DataType::Utf8) => view_is_utf8,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_file_parses_and_names_its_table() {
        for name in table_names() {
            let def = table_def(name);
            assert_eq!(def.table, name);
            assert!(!def.columns.is_empty());
            for c in &def.columns {
                assert!(parse_type(&c.type_name).is_some(), "{name}.{}", c.name);
                assert!(!c.doc.is_empty(), "{name}.{} has no doc", c.name);
            }
        }
    }

    #[test]
    fn a_stored_table_must_have_the_exact_types_of_its_schema_file() {
        let expected = arrow_schema("method_overlap");
        assert_eq!(stored_schema_difference("method_overlap", &expected), None);
        // List item names and nullability do not matter.
        let documents = arrow_schema("tokens");
        let renamed: Vec<Field> = documents
            .fields()
            .iter()
            .map(|f| match f.data_type() {
                DataType::List(item) => Field::new(
                    f.name(),
                    DataType::List(Arc::new(Field::new("element", item.data_type().clone(), false))),
                    true,
                ),
                _ => f.as_ref().clone().with_nullable(true),
            })
            .collect();
        assert_eq!(stored_schema_difference("tokens", &Schema::new(renamed)), None);
        let with = |i: usize, ty: DataType| {
            let mut fields: Vec<Field> = expected.fields().iter().map(|f| f.as_ref().clone()).collect();
            fields[i] = Field::new(fields[i].name(), ty, true);
            Schema::new(fields)
        };
        let first = expected.field(0).name().clone();
        assert_eq!(
            stored_schema_difference("method_overlap", &with(0, DataType::Utf8View)).as_deref(),
            Some(format!("column {first} is Utf8View, schemas/method_overlap.json says Utf8").as_str())
        );
        let dice = with(3, DataType::Float32);
        assert_eq!(
            stored_schema_difference("method_overlap", &dice).as_deref(),
            Some("column dice is Float32, schemas/method_overlap.json says Float64")
        );
        let fewer = Schema::new(vec![Field::new("method_a", DataType::Utf8, false)]);
        assert!(stored_schema_difference("method_overlap", &fewer).unwrap().starts_with("columns [\"method_a\"]"));
    }
}
