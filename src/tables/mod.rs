//! Tables: their schemas, typed columns, writing, and the SQL session that
//! reads them; the foundation every stage and method writes and reads
//! through.
//!
//! - [`schema`]: the schemas, defined once in `schemas/<table>.json`;
//! - [`columns`], generated from those files by `build.rs`: per table a
//!   `Rows` struct with one typed builder per column (what writers fill,
//!   see [`write::TableOutput`]) and one function per column that finds it
//!   by name in a batch;
//! - [`write`]: Parquet tables written atomically, part by part;
//! - [`sql`]: DataFusion sessions over an output folder and the SQL jobs of
//!   `jobs/`;
//! - [`json`]: tables as JSON for other tools, 64-bit ids as strings;
//! - [`shard`]: which part of a stage's work (and of its tables) a task
//!   does.
//!
//! A table is read back by the stage that writes it, for the stages that
//! read it (`tokens` in [`crate::stages::tokens::read`], the boilerplate in
//! [`crate::stages::boilerplate`]): the steps below the stages get rows,
//! Arrow batches or iterators, never a session.

use anyhow::{Context, Result};
use arrow::array::{Array, RecordBatch};

pub mod json;
pub mod lock;
pub mod manifest;
pub mod schema;
pub mod shard;
pub mod sql;
pub mod write;

/// Every table's columns, generated from its schema file (see the module
/// doc above): `columns::documents::Rows`, `columns::documents::url(&batch)`.
pub mod columns {
    include!(concat!(env!("OUT_DIR"), "/table_columns.rs"));
}

/// Column `name` of `batch` as array type `A`: the typed way to read a
/// column of a query result, by name rather than by position. An absent
/// column or another type (a table written by another program, a query
/// changed without its reader) is an error naming the column.
pub fn column<'a, A: Array + 'static>(batch: &'a RecordBatch, name: &str) -> Result<&'a A> {
    let array = batch.column_by_name(name).with_context(|| {
        let names: Vec<&str> = batch.schema_ref().fields().iter().map(|f| f.name().as_str()).collect();
        format!("no column `{name}` among {names:?}")
    })?;
    array
        .as_any()
        .downcast_ref::<A>()
        .with_context(|| format!("column `{name}` is {}, expected {}", array.data_type(), std::any::type_name::<A>()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayBuilder, UInt64Array};

    #[test]
    fn every_table_has_generated_rows_of_its_schema() {
        let generated: Vec<&str> = columns::empty_batches().iter().map(|(t, _)| *t).collect();
        let mut expected: Vec<&str> = crate::tables::schema::table_names().collect();
        expected.sort();
        assert_eq!(generated, expected);
        for (table, batch) in columns::empty_batches() {
            let batch = batch.unwrap_or_else(|e| panic!("{table}: {e:#}"));
            assert_eq!(batch.schema(), crate::tables::schema::arrow_schema(table), "{table}");
        }
    }

    #[test]
    fn a_row_missing_a_column_is_an_error_not_a_shifted_table() {
        use crate::tables::write::Rows as _;
        let mut rows = columns::sketches::Rows::default();
        rows.doc_id.append_value(7);
        rows.position.append_value(0);
        let error = rows.finish().unwrap_err();
        assert!(format!("{error:#}").contains("sketches"), "{error:#}");
        rows.doc_id.append_value(7);
        rows.position.append_value(0);
        rows.minimum.append_value(42);
        assert_eq!(rows.len(), 1);
        let batch = rows.finish().unwrap();
        assert_eq!(columns::sketches::minimum(&batch).unwrap().value(0), 42);
        assert_eq!(rows.doc_id.len(), 0);
    }

    #[test]
    fn a_column_is_read_by_name_and_type() {
        let mut rows = columns::candidates::Rows::default();
        rows.doc_a.append_value(1);
        rows.doc_b.append_value(2);
        rows.method.append_value("a0");
        rows.score.append_null();
        let batch = crate::tables::write::Rows::finish(&mut rows).unwrap();
        assert_eq!(columns::candidates::doc_b(&batch).unwrap().value(0), 2);
        assert_eq!(columns::candidates::method(&batch).unwrap().value(0), "a0");
        let absent = column::<UInt64Array>(&batch, "doc_c").unwrap_err().to_string();
        assert!(absent.contains("no column `doc_c`") && absent.contains("doc_a"), "{absent}");
        let wrong = column::<UInt64Array>(&batch, "method").unwrap_err().to_string();
        assert!(wrong.contains("column `method` is Utf8"), "{wrong}");
    }
}
