//! Typed readers of the tables that more than one stage reads, one module
//! per table, so that a stage reads its inputs here rather than through
//! another stage's internals. (Writing goes through [`crate::table`]: atomic
//! Parquet part files with the schemas of `schemas/`.)

pub mod corpus_stats;
pub mod method_state;
pub mod tokens;
