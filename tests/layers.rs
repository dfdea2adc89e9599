//! The layer order of `src/lib.rs` ("# Layers"), checked: every `crate::`
//! path in the library's code names a module of its own layer or of an
//! earlier one. An import pointing up the list is how cycles start (the
//! configuration importing the method registry while every method imported
//! the configuration), so a new one fails here with the file, the line and
//! both layers; a new top-level module must be given a layer in that list.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Top-level module → layer number, read from the numbered list under
/// "# Layers" in `src/lib.rs`: every ``[`name`]`` of item N is in layer N.
fn layers(lib: &str) -> BTreeMap<String, usize> {
    let mut layers = BTreeMap::new();
    let mut layer = None;
    let mut in_list = false;
    for line in lib.lines() {
        let Some(doc) = line.strip_prefix("//!") else { continue };
        let doc = doc.trim();
        if doc.starts_with("# ") {
            in_list = doc == "# Layers";
            continue;
        }
        if !in_list {
            continue;
        }
        if let Some((number, _)) = doc.split_once(". ") {
            if let Ok(n) = number.parse::<usize>() {
                layer = Some(n);
            }
        }
        let Some(n) = layer else { continue };
        for piece in doc.split("[`").skip(1) {
            let name = piece.split('`').next().unwrap_or("");
            if !name.is_empty() && !name.contains("::") {
                layers.insert(name.to_string(), n);
            }
        }
    }
    layers
}

fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The `crate::<module>` names a line of code uses (comments left out:
/// a doc link may point anywhere).
fn crate_paths(line: &str) -> Vec<&str> {
    let code = line.split("//").next().unwrap_or("");
    code.match_indices("crate::")
        .filter(|(at, _)| !code[..*at].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
        .map(|(at, m)| {
            let rest = &code[at + m.len()..];
            let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

#[test]
fn imports_point_down_the_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let layers = layers(&lib);
    // The list itself: every module lib.rs declares has a layer.
    let declared: Vec<&str> = lib.lines().filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';')).collect();
    assert!(declared.len() >= 10, "lib.rs declares {declared:?}");
    for module in &declared {
        assert!(layers.contains_key(*module), "module `{module}` has no layer in lib.rs's \"# Layers\" list");
    }
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut upward = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let top = relative.components().next().unwrap().as_os_str().to_string_lossy();
        let top = top.strip_suffix(".rs").unwrap_or(&top);
        // The binaries and lib.rs sit above every layer.
        let Some(&own) = layers.get(top) else { continue };
        for (number, line) in std::fs::read_to_string(file).unwrap().lines().enumerate() {
            for used in crate_paths(line) {
                if let Some(&theirs) = layers.get(used) {
                    if theirs > own {
                        upward.push(format!(
                            "{}:{}: `{top}` (layer {own}) uses `crate::{used}` (layer {theirs})",
                            relative.display(),
                            number + 1
                        ));
                    }
                }
            }
        }
    }
    assert!(upward.is_empty(), "imports pointing up the layers:\n{}", upward.join("\n"));
}

#[test]
fn the_layer_list_is_read_as_written() {
    let lib = "//! # Layers\n//!\n//! 1. [`a`] and [`b`],\n//!    [`c`] (see [`c::d`]);\n//! 2. [`e`].\n//!\n//! # Other\n//! [`f`]\n";
    let layers = layers(lib);
    let expected: BTreeMap<String, usize> =
        [("a", 1), ("b", 1), ("c", 1), ("e", 2)].into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    assert_eq!(layers, expected);
    assert_eq!(crate_paths("use crate::tables::sql; // crate::stages"), vec!["tables"]);
    assert_eq!(crate_paths("let x = my_crate::y + crate::runner::now();"), vec!["runner"]);
}
