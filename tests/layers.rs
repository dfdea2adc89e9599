//! The layer order of `src/lib.rs` ("# Layers"), checked: every `crate::`
//! path in the library's code names a module of its own layer or of an
//! earlier one. An import pointing up the list is how cycles start (the
//! configuration importing the method registry while every method imported
//! the configuration), so a new one fails here with the file, the line and
//! both layers; a new top-level module must be given a layer in that list.
//!
//! Within a layer, and within a folder, files must not import each other in
//! a circle either (`a11.rs` importing the registry, which imports
//! `a11.rs`): [`no_file_imports_itself_through_others`] draws the imports
//! between the files of `src/` (what the product compiles; test modules
//! may import anything) and names every circle with its imports.

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
        // Test items may import anything they check (a method's keyed
        // search against the stages that run it): not a dependency of the
        // product.
        for line in product_code(&std::fs::read_to_string(file).unwrap()).lines() {
            for used in crate_paths(line) {
                if let Some(&theirs) = layers.get(used) {
                    if theirs > own {
                        upward.push(format!(
                            "{}: `{top}` (layer {own}) uses `crate::{used}` (layer {theirs}): {}",
                            relative.display(),
                            line.trim()
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

/// A file of `src/` as the module path it declares: `methods/a11.rs` is
/// `["methods", "a11"]`, `methods/mod.rs` is `["methods"]`.
fn module_path(relative: &Path) -> Vec<String> {
    let mut path: Vec<String> = relative.iter().map(|c| c.to_string_lossy().into_owned()).collect();
    let last = path.pop().unwrap_or_default();
    let stem = last.strip_suffix(".rs").unwrap_or(&last);
    if stem != "mod" && stem != "lib" {
        path.push(stem.to_string());
    }
    path
}

/// The code of a file that the product compiles: comments, string
/// literals and `#[cfg(test)]` items left out (a test may import anything
/// it checks; what it imports is not a dependency of the product).
fn product_code(source: &str) -> String {
    let mut code = String::new();
    let mut skip_depth: Option<i64> = None;
    let mut test_item_next = false;
    for line in source.lines() {
        let line = strip_strings_and_comments(line);
        let trimmed = line.trim();
        if let Some(depth) = skip_depth.as_mut() {
            *depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
            if *depth <= 0 && (trimmed.ends_with('}') || trimmed.ends_with(';')) {
                skip_depth = None;
            }
            continue;
        }
        if trimmed == "#[cfg(test)]" {
            test_item_next = true;
            continue;
        }
        if test_item_next {
            if trimmed.starts_with("#[") || trimmed.is_empty() {
                continue;
            }
            test_item_next = false;
            let depth = line.matches('{').count() as i64 - line.matches('}').count() as i64;
            if depth > 0 || !(trimmed.ends_with(';') || trimmed.ends_with('}')) {
                skip_depth = Some(depth);
            }
            continue;
        }
        code.push_str(&line);
        code.push('\n');
    }
    code
}

/// One line with its `//` comment cut and its string and character
/// literals emptied, so that neither a URL nor a `'{'` reads as code.
fn strip_strings_and_comments(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                out.push('"');
                while let Some(s) = chars.next() {
                    match s {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
                out.push('"');
            }
            '\'' => {
                // A character literal ('x', '\n', '{') or a lifetime ('a).
                let rest: String = chars.clone().take(3).collect();
                let literal = if rest.starts_with('\\') {
                    rest.find('\'').filter(|&i| i > 1).map(|i| i + 1)
                } else if rest.chars().nth(1) == Some('\'') {
                    Some(2)
                } else {
                    None
                };
                match literal {
                    Some(n) => {
                        for _ in 0..n {
                            chars.next();
                        }
                        out.push_str("' '");
                    }
                    None => out.push('\''),
                }
            }
            '/' if chars.peek() == Some(&'/') => break,
            _ => out.push(c),
        }
    }
    out
}

/// Every path a piece of code names from the crate (`crate::a::b`,
/// `super::c`, `self::d`, and in `use` items the module's own children):
/// each as the segments after the root it starts from, resolved against
/// `module`, the path of the module the code is in.
fn named_paths(code: &str, module: &[String], children: &dyn Fn(&[String], &str) -> bool) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    // `use` items, their trees expanded; the rest of the code is read for
    // paths written in it.
    let mut rest = code;
    let mut other_code = String::new();
    while let Some(at) = find_word(rest, "use") {
        let tail = &rest[at + 3..];
        let Some(end) = tail.find(';') else { break };
        other_code.push_str(&rest[..at]);
        let tree: String = tail[..end].split_whitespace().collect();
        let mut expanded = Vec::new();
        expand_use_tree(&tree, &mut Vec::new(), &mut expanded);
        for segments in expanded {
            if let Some(path) = resolve(&segments, module, children, true) {
                paths.push(path);
            }
        }
        rest = &tail[end..];
    }
    other_code.push_str(rest);
    let code = other_code.as_str();
    for root in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(root) {
            if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut segments = Vec::new();
            for piece in code[at..].split("::") {
                let ident: String = piece.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                let whole = ident.len() == piece.len();
                if !ident.is_empty() {
                    segments.push(ident);
                }
                if !whole || segments.is_empty() {
                    break;
                }
            }
            if let Some(path) = resolve(&segments, module, children, false) {
                paths.push(path);
            }
        }
    }
    // A child module named bare in code (`warc::export(..)` in
    // `export/mod.rs`): the parent's side of a parent <-> child loop.
    for (at, _) in code.match_indices("::") {
        let before = &code[..at];
        let start = before.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
        let name = &before[start..];
        if name.is_empty() || before[..start].ends_with(':') || !children(module, name) {
            continue;
        }
        let mut segments = vec![name.to_string()];
        let rest = &code[at + 2..];
        let ident: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !ident.is_empty() {
            segments.push(ident);
        }
        if let Some(path) = resolve(&segments, module, children, true) {
            paths.push(path);
        }
    }
    paths
}

/// Where `word` occurs in `code` as a word of its own, first.
fn find_word(code: &str, word: &str) -> Option<usize> {
    code.match_indices(word).map(|(at, _)| at).find(|&at| {
        let before = code[..at].chars().next_back();
        let after = code[at + word.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') && after.is_some_and(|c| c.is_whitespace())
    })
}

/// The paths of a `use` tree written without spaces (`a::{b,c::{d,e}}`).
fn expand_use_tree(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let tree = tree.trim_start_matches("::");
    if let Some(open) = tree.find('{') {
        let head: Vec<String> = tree[..open].split("::").filter(|s| !s.is_empty()).map(str::to_string).collect();
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let depth_before = prefix.len();
        prefix.extend(head);
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_use_tree(&inner[start..i], prefix, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand_use_tree(&inner[start..], prefix, out);
        prefix.truncate(depth_before);
    } else if !tree.is_empty() {
        let leaf = tree.split(" as ").next().unwrap_or(tree);
        let leaf = leaf.split("as").next().filter(|_| !tree.contains("::as")).unwrap_or(leaf);
        let mut path = prefix.clone();
        path.extend(leaf.split("::").filter(|s| !s.is_empty()).map(str::to_string));
        if path.last().is_some_and(|s| s == "self") {
            path.pop();
        }
        out.push(path);
    }
}

/// `segments` as a path from the crate's root, or `None` when it leaves the
/// crate (`std::`, a dependency). In a `use` item a path may also start
/// with a child of `module`.
fn resolve(
    segments: &[String],
    module: &[String],
    children: &dyn Fn(&[String], &str) -> bool,
    in_use: bool,
) -> Option<Vec<String>> {
    let first = segments.first()?;
    let mut base: Vec<String> = match first.as_str() {
        "crate" => Vec::new(),
        "self" => module.to_vec(),
        "super" => module.to_vec(),
        name if in_use && children(module, name) => module.to_vec(),
        _ => return None,
    };
    let mut rest = if first == "crate" || first == "self" { &segments[1..] } else { segments };
    while rest.first().is_some_and(|s| s == "super") {
        base.pop()?;
        rest = &rest[1..];
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The import graph between the files of `src/` (the binaries left out):
/// file → the files whose modules it names, itself and its own folder's
/// `mod.rs` declaring it aside.
fn import_graph(src: &Path) -> BTreeMap<String, std::collections::BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut modules: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut sources = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(src).unwrap();
        let name = relative.to_string_lossy().replace('\\', "/");
        if name == "main.rs" || name.starts_with("bin/") {
            continue;
        }
        modules.insert(module_path(relative), name.clone());
        sources.push((name, module_path(relative), std::fs::read_to_string(file).unwrap()));
    }
    let children = |module: &[String], name: &str| {
        let mut child = module.to_vec();
        child.push(name.to_string());
        modules.contains_key(&child)
    };
    let mut graph = BTreeMap::new();
    for (name, module, source) in &sources {
        let mut uses = std::collections::BTreeSet::new();
        for path in named_paths(&product_code(source), module, &children) {
            // The longest prefix of the path that is a file's module.
            let file = (0..=path.len()).rev().find_map(|n| modules.get(&path[..n]));
            if let Some(file) = file.filter(|f| *f != name) {
                uses.insert(file.clone());
            }
        }
        graph.insert(name.clone(), uses);
    }
    graph
}

/// The circles of `graph`: its strongly connected components of more than
/// one node (Tarjan's algorithm), each sorted, in order of their first node.
fn circles(graph: &BTreeMap<String, std::collections::BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, std::collections::BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: std::collections::BTreeSet<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, node: &'g str) {
            let n = self.index.len();
            self.index.insert(node, n);
            self.low.insert(node, n);
            self.stack.push(node);
            self.on_stack.insert(node);
            for next in self.graph.get(node).into_iter().flatten() {
                let next = next.as_str();
                if !self.index.contains_key(next) {
                    self.visit(next);
                    let low = self.low[node].min(self.low[next]);
                    self.low.insert(node, low);
                } else if self.on_stack.contains(next) {
                    let low = self.low[node].min(self.index[next]);
                    self.low.insert(node, low);
                }
            }
            if self.low[node] == self.index[node] {
                let mut component = Vec::new();
                while let Some(top) = self.stack.pop() {
                    self.on_stack.remove(top);
                    component.push(top.to_string());
                    if top == node {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: Default::default(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            walk.visit(node);
        }
    }
    walk.found.sort();
    walk.found
}

#[test]
fn no_file_imports_itself_through_others() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = import_graph(&src);
    let found = circles(&graph);
    let described: Vec<String> = found
        .iter()
        .map(|circle| {
            let edges: Vec<String> = circle
                .iter()
                .flat_map(|from| {
                    graph[from].iter().filter(|to| circle.contains(to)).map(move |to| format!("{from} -> {to}"))
                })
                .collect();
            format!("{}:\n    {}", circle.join(", "), edges.join("\n    "))
        })
        .collect();
    assert!(found.is_empty(), "files that import each other (in a circle):\n{}", described.join("\n"));
}

#[test]
fn the_circle_checker_reads_paths_and_finds_circles() {
    // Paths as a file names them: `use` trees, `super::`, a child module
    // in a `use`, paths in code; test items, comments and strings left out.
    let code = product_code(
        "use super::{a::{B, c}, d as e};\nuse child::X;\nuse std::fmt;\n\
         fn f() { crate::top::g(\"crate::in_string\"); } // crate::in_comment\n\
         #[cfg(test)]\nmod tests {\n    use crate::only_tests;\n    fn h() { let c = '{'; }\n}\n\
         #[cfg(test)]\nuse crate::also_tests;\nfn after() { self::k(); child::run(); }\n",
    );
    let module: Vec<String> = vec!["m".into(), "n".into()];
    let children = |module: &[String], name: &str| module == ["m", "n"] && name == "child";
    let mut paths: Vec<String> = named_paths(&code, &module, &children).iter().map(|p| p.join("::")).collect();
    paths.sort();
    assert_eq!(paths, ["m::a::B", "m::a::c", "m::d", "m::n::child::X", "m::n::child::run", "m::n::k", "top::g"]);

    // a -> b -> c -> a is one circle; d -> a and c <-> e join nothing new
    // except e, which is in the circle with c; f alone is none.
    let graph: BTreeMap<String, std::collections::BTreeSet<String>> =
        [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a"), ("c", "e"), ("e", "c"), ("f", "f")].into_iter().fold(
            BTreeMap::new(),
            |mut g, (from, to)| {
                g.entry(from.to_string()).or_insert_with(Default::default).insert(to.to_string());
                g.entry(to.to_string()).or_insert_with(Default::default);
                g
            },
        );
    assert_eq!(circles(&graph), [vec!["a", "b", "c", "e"]]);
}

/// The folders and files that may read or write tables through DataFusion:
/// the stages, the tables' own module, and the commands' own I/O (the
/// command line, export, the report, the runner's manifests and locks, and
/// ingest's reader of Parquet and JSON Lines corpora). Everything else is
/// a step over plain data that its caller hands it.
const TABLE_IO: [&str; 8] = ["stages/", "tables/", "cli/", "export/", "report/", "runner/", "ingest/corpus.rs", "bin/"];

/// What opening a session, running SQL, including a job of `jobs/` or
/// writing a table looks like in product code (strings and comments left
/// out). The steps below the stages make rows and batches in memory (the
/// generated `columns::<table>::Rows`); the table writers are the stages'.
fn table_io_in(code: &str) -> Vec<&'static str> {
    [
        "SessionContext",
        ".sql(",
        "include_str!",
        // `tables::sql`'s functions that open a session or run SQL (its
        // names of spill folders and memory sizes are not table I/O).
        "sql_stage_session",
        "session_over",
        "session_with_memory_limit",
        "session_spilling_to",
        "register_table",
        "run_into_table",
        "run_parts_into_table",
        "run_parts_into_shard",
        // `tables::write`'s writers of Parquet tables.
        "TableOutput",
        "TableWriter",
        "TableDir",
        "PartWriter",
        "write_stream",
    ]
    .into_iter()
    .filter(|m| code.contains(m))
    .collect()
}

#[test]
fn only_the_stages_and_the_commands_read_and_write_tables() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for file in &files {
        let name = file.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        if name == "main.rs" || TABLE_IO.iter().any(|allowed| name.starts_with(allowed)) {
            continue;
        }
        let code = product_code(&std::fs::read_to_string(file).unwrap());
        let io = table_io_in(&code);
        if !io.is_empty() {
            found.push(format!("{name}: {}", io.join(", ")));
        }
    }
    assert!(found.is_empty(), "table I/O outside the stages and the commands' own I/O:\n{}", found.join("\n"));
}

#[test]
fn the_table_io_check_sees_sessions_sql_and_jobs() {
    let code = product_code(
        "async fn f(s: &datafusion::prelude::SessionContext) { s.sql(\"SELECT 1\").await; }\n\
         const Q: &str = include_str!(\"../../jobs/q.sql\");\nuse crate::tables::sql::{run_into_table, substitute};\n\
         // SessionContext in a comment\n#[cfg(test)]\nmod tests {\n    fn t(s: SessionContext) {}\n}\n",
    );
    assert_eq!(table_io_in(&code), ["SessionContext", ".sql(", "include_str!", "run_into_table"]);
    assert!(table_io_in(&product_code("fn g(rows: &[u64]) -> u64 { rows.iter().sum() }\n")).is_empty());
    let writes = product_code(
        "use crate::tables::write::{Rows, TableOutput};\n\
         fn w(out: &mut TableOutput<shingles::Rows>) {}\n// a TableWriter in a comment\n",
    );
    assert_eq!(table_io_in(&writes), ["TableOutput"]);
    let rows = "fn append(rows: &mut shingles::Rows) { rows.doc_id.append_value(1); }\n";
    assert!(table_io_in(&product_code(rows)).is_empty());
}
