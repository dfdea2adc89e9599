//! Generates the typed column layer of every table from `schemas/*.json`,
//! and the list of those files that `crate::tables::schema` compiles in.
//!
//! The schema files are the single definition of the tables (analysts read
//! them; the writers build their Arrow schemas from them). From each file
//! this script writes one Rust module, `crate::tables::columns::<table>`,
//! with a `Rows` struct holding one typed builder per column, named as the
//! column, and one function per column that finds it by name in a record
//! batch. A renamed, retyped or removed column is then a compile error at
//! every place that writes or reads it, where a column position in code
//! would have gone on compiling.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    println!("cargo::rerun-if-changed=schemas");
    let mut files: Vec<_> = std::fs::read_dir("schemas")
        .expect("schemas/ folder")
        .map(|e| e.expect("schemas/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut code = String::new();
    let mut tables = Vec::new();
    for path in &files {
        println!("cargo::rerun-if-changed={}", path.display());
        let (table, module) = table_module(path);
        code.push_str(&module);
        tables.push(table);
    }
    // For the test that every generated table builds batches of its schema.
    code.push_str("/// Every table's typed name and the batch its empty `Rows` make.\n#[cfg(test)]\n");
    code.push_str(
        "pub(crate) fn empty_batches() -> Vec<(crate::tables::Table, anyhow::Result<arrow::array::RecordBatch>)> {\n",
    );
    code.push_str("    use crate::tables::write::Rows as _;\n    vec![\n");
    for table in &tables {
        code.push_str(&format!("        ({table}::NAME, {table}::Rows::default().finish()),\n"));
    }
    code.push_str("    ]\n}\n");
    let out_dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    std::fs::write(Path::new(&out_dir).join("table_columns.rs"), code).expect("write table_columns.rs");
    std::fs::write(Path::new(&out_dir).join("schema_files.rs"), schema_files(&files)).expect("write schema_files.rs");
}

/// The list `crate::tables::schema` compiles the schema files in by: every
/// file of `schemas/` with its table's name (the file's stem), so a new
/// file is a table without a list to edit.
fn schema_files(files: &[std::path::PathBuf]) -> String {
    let mut list = String::from("&[\n");
    for path in files {
        let name = path.file_name().and_then(|n| n.to_str()).expect("a UTF-8 schema file name");
        let table = name.strip_suffix(".json").expect("a .json file");
        list.push_str(&format!(
            "    ({table:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/schemas/{name}\"))),\n"
        ));
    }
    list.push(']');
    list
}

/// The Rust types of a schema file's type name: builder, array, and the
/// expression that makes an empty builder.
struct ColumnType {
    builder: String,
    array: &'static str,
    new_builder: String,
}

fn column_type(name: &str, file: &Path) -> ColumnType {
    if let Some(item) = name.strip_prefix("List<").and_then(|s| s.strip_suffix('>')) {
        let (item_builder, data_type) = scalar(item, file);
        return ColumnType {
            builder: format!("arrow::array::ListBuilder<arrow::array::{item_builder}>"),
            array: "ListArray",
            // The item field as `crate::tables::schema::parse_type` makes it.
            new_builder: format!(
                "arrow::array::ListBuilder::new(arrow::array::{item_builder}::new()).with_field(std::sync::Arc::new(\
                 arrow::datatypes::Field::new(\"item\", arrow::datatypes::DataType::{data_type}, true)))"
            ),
        };
    }
    let (builder, _) = scalar(name, file);
    let array = match name {
        "UInt16" => "UInt16Array",
        "UInt32" => "UInt32Array",
        "UInt64" => "UInt64Array",
        "Int64" => "Int64Array",
        "Float64" => "Float64Array",
        "Boolean" => "BooleanArray",
        "Binary" => "BinaryArray",
        _ => "StringArray",
    };
    ColumnType {
        new_builder: format!("arrow::array::{builder}::new()"),
        builder: format!("arrow::array::{builder}"),
        array,
    }
}

/// Builder name and `DataType` variant of a scalar type name.
fn scalar(name: &str, file: &Path) -> (&'static str, &'static str) {
    match name {
        "UInt16" => ("UInt16Builder", "UInt16"),
        "UInt32" => ("UInt32Builder", "UInt32"),
        "UInt64" => ("UInt64Builder", "UInt64"),
        "Int64" => ("Int64Builder", "Int64"),
        "Float64" => ("Float64Builder", "Float64"),
        "Boolean" => ("BooleanBuilder", "Boolean"),
        "Utf8" => ("StringBuilder", "Utf8"),
        "Binary" => ("BinaryBuilder", "Binary"),
        other => panic!("{}: no Rust type for column type {other}", file.display()),
    }
}

/// A column name as a Rust identifier (`fn` is a keyword).
fn ident(name: &str) -> String {
    match name {
        "fn" | "type" | "match" | "ref" | "mod" | "use" | "self" | "impl" | "loop" | "move" => format!("r#{name}"),
        _ => name.to_string(),
    }
}

/// Text for a `#[doc = ...]` attribute.
fn doc(text: &str) -> String {
    format!("#[doc = {text:?}]")
}

/// The table's name and its module.
fn table_module(path: &Path) -> (String, String) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let def: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let table = def["table"].as_str().unwrap_or_else(|| panic!("{}: no table name", path.display()));
    let columns: Vec<(String, String, String)> = def["columns"]
        .as_array()
        .unwrap_or_else(|| panic!("{}: no columns", path.display()))
        .iter()
        .map(|c| {
            let field = |k: &str| c[k].as_str().unwrap_or_else(|| panic!("{}: column without {k}", path.display()));
            (field("name").to_string(), field("type").to_string(), field("doc").to_string())
        })
        .collect();
    let table_doc = def["doc"].as_str().unwrap_or_default();

    let mut m = String::new();
    let _ = writeln!(m, "{}", doc(&format!("Table `{table}` (`schemas/{table}.json`): {table_doc}")));
    let _ = writeln!(m, "pub mod {table} {{");
    let _ = writeln!(m, "    /// The table's name.");
    let _ = writeln!(m, "    pub const TABLE: &str = {table:?};");
    let _ = writeln!(m, "    /// The table's name, typed (see [`crate::tables::Table`]): what a stage's");
    let _ = writeln!(m, "    /// inputs and outputs and a method's tables name it by.");
    let _ = writeln!(m, "    pub const NAME: crate::tables::Table = crate::tables::Table(TABLE);");
    let _ = writeln!(m, "    /// Rows being built, one typed builder per column in the schema file's order;");
    let _ = writeln!(m, "    /// a row is complete when every column has had one value appended.");
    let _ = writeln!(m, "    pub struct Rows {{");
    for (name, ty, column_doc) in &columns {
        let _ = writeln!(m, "        {}", doc(column_doc));
        let _ = writeln!(m, "        pub {}: {},", ident(name), column_type(ty, path).builder);
    }
    let _ = writeln!(m, "    }}");
    let _ = writeln!(m, "    impl Default for Rows {{");
    let _ = writeln!(m, "        fn default() -> Rows {{");
    let _ = writeln!(m, "            Rows {{");
    for (name, ty, _) in &columns {
        let _ = writeln!(m, "                {}: {},", ident(name), column_type(ty, path).new_builder);
    }
    let _ = writeln!(m, "            }}");
    let _ = writeln!(m, "        }}");
    let _ = writeln!(m, "    }}");
    let _ = writeln!(m, "    impl crate::tables::write::Rows for Rows {{");
    let _ = writeln!(m, "        const TABLE: crate::tables::Table = NAME;");
    let _ = writeln!(m, "        fn len(&self) -> usize {{");
    let _ = writeln!(m, "            arrow::array::ArrayBuilder::len(&self.{})", ident(&columns[0].0));
    let _ = writeln!(m, "        }}");
    let _ = writeln!(m, "        fn finish_columns(&mut self) -> Vec<arrow::array::ArrayRef> {{");
    let _ = writeln!(m, "            vec![");
    for (name, _, _) in &columns {
        let _ = writeln!(m, "                arrow::array::ArrayBuilder::finish(&mut self.{}),", ident(name));
    }
    let _ = writeln!(m, "            ]");
    let _ = writeln!(m, "        }}");
    let _ = writeln!(m, "    }}");
    for (name, ty, column_doc) in &columns {
        let array = column_type(ty, path).array;
        let _ = writeln!(
            m,
            "    {}",
            doc(&format!(
                "Column `{name}` of a batch read from `{table}` (or from a query that keeps its name): {column_doc}"
            ))
        );
        let _ = writeln!(
            m,
            "    pub fn {}(batch: &arrow::array::RecordBatch) -> anyhow::Result<&arrow::array::{array}> {{",
            ident(name)
        );
        let _ = writeln!(m, "        crate::tables::column(batch, {name:?})");
        let _ = writeln!(m, "    }}");
    }
    let _ = writeln!(m, "}}");
    (table.to_string(), m)
}
