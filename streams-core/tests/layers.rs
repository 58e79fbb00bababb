//! The layering of streams-core, checked: no module imports a module
//! above it (see `ARCHITECTURE.md` at the repository root).
//!
//! The test reads every file under `src/`, takes the layer of the file
//! from its first path component (`src/state/window.rs` is in `state`),
//! and finds each `crate::<module>` path in code (comments and doc
//! comments are skipped: a doc link is not an import, and doc tests run
//! as another crate). A path through a re-export at the crate root
//! (`crate::StreamsConfig`) counts as the module the root takes it from,
//! read from `lib.rs`. Any path to a higher layer fails the test, with the
//! file and line. The allow-list is empty, and should stay so.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, bottom up: a module may use the modules before it.
const LAYERS: &[&str] = &[
    "record",
    "error",
    "serde",
    "time",
    "config",
    "state",
    "processor",
    "topology",
    "engine",
    "dsl",
    "runtime",
];

/// `(file, imported module)` pairs allowed to go up, each with a reason.
/// Empty: every upward import so far could be cut.
const ALLOWED: &[(&str, &str)] = &[];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == module)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Names the crate root re-exports, each with the module it comes from
/// (`pub use config::{StreamsConfig, ..};` in `lib.rs`).
fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for statement in lib.split(';') {
        // Attributes (`#[allow(deprecated)]`) and comments (the crate docs,
        // whose sentences have semicolons too) before the `pub use` do not
        // count.
        let statement: String = statement
            .lines()
            .filter(|l| {
                let l = l.trim_start();
                !l.starts_with("#[") && !l.starts_with("//")
            })
            .collect::<Vec<_>>()
            .join("\n");
        let statement = statement.trim();
        // An item without a semicolon (`pub mod guide { .. }`) may come
        // before the `pub use` in the same piece.
        let Some(rest) = statement
            .find("pub use ")
            .map(|at| &statement[at + "pub use ".len()..])
        else {
            continue;
        };
        let Some((module, items)) = rest.split_once("::") else {
            continue;
        };
        for item in items.split([',', '{', '}', ' ', '\n']) {
            let item = item.trim();
            if item.chars().next().is_some_and(char::is_uppercase) {
                names.insert(item.to_owned(), module.to_owned());
            }
        }
    }
    names
}

/// The modules a line of code reaches through `crate::`.
fn crate_paths(line: &str, root: &BTreeMap<String, String>) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().last();
        rest = &rest[at + "crate::".len()..];
        // `streams_core::` or `my_crate::` is not `crate::`.
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '{')
            .collect();
        if name.starts_with('{') {
            found.push("{".to_owned());
        } else if let Some(module) = root.get(&name) {
            found.push(module.clone());
        } else {
            found.push(name);
        }
    }
    found
}

#[test]
fn no_module_imports_a_module_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).expect("src/lib.rs");
    let root = root_reexports(&lib);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut upward = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&src).expect("under src/");
        let first = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .expect("a file name");
        let module = first.strip_suffix(".rs").unwrap_or(first);
        if module == "lib" {
            continue;
        }
        let own = rank(module).unwrap_or_else(|| {
            panic!("module `{module}` is in no layer: add it to LAYERS and to ARCHITECTURE.md")
        });
        let text = fs::read_to_string(file).expect("a source file");
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            let code = code.split(" // ").next().unwrap_or(code);
            for used in crate_paths(code, &root) {
                let shown = relative.display().to_string();
                if used == "{" {
                    upward.push(format!(
                        "{shown}:{}: `use crate::{{..}}` groups modules; write one `use` per module",
                        n + 1
                    ));
                    continue;
                }
                let Some(theirs) = rank(&used) else {
                    upward.push(format!("{shown}:{}: `crate::{used}` is in no layer", n + 1));
                    continue;
                };
                if theirs > own && !ALLOWED.contains(&(shown.as_str(), used.as_str())) {
                    upward.push(format!(
                        "{shown}:{}: `{module}` uses `{used}`, a layer above it",
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that go up the layers ({}):\n{}",
        LAYERS.join(" < "),
        upward.join("\n")
    );
}

#[test]
fn the_scanner_sees_paths_and_root_reexports() {
    let root = root_reexports("pub use config::{DeserializationHandling, StreamsConfig};\n");
    assert_eq!(
        crate_paths("use crate::state::{StateStore, StoreKind};", &root),
        ["state"]
    );
    assert_eq!(
        crate_paths("fn f(c: &crate::StreamsConfig)", &root),
        ["config"]
    );
    assert_eq!(
        crate_paths("use streams_core::dsl::KStream;", &root),
        Vec::<String>::new()
    );
    assert_eq!(crate_paths("use crate::{dsl, state};", &root), ["{"]);
}
