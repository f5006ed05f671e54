//! Bundles every scenario under `../scenarios/` at build time: writes
//! `$OUT_DIR/gallery.rs`, a sorted list of `(folder, file name, include_str!(...))`, so a
//! new scenario file appears in the gallery with no code change; and every trace file
//! (`*.trace`, Mahimahi format) the scenarios may name, by its path under `scenarios/`.

use std::fs;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, root: &Path, ext: &str, out: &mut Vec<(String, String, PathBuf)>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, root, ext, out);
        } else if p.extension().is_some_and(|e| e == ext) {
            let rel = p.strip_prefix(root).expect("under root");
            let folder = rel
                .parent()
                .map(|f| f.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default();
            let name = p.file_name().expect("file").to_string_lossy().into_owned();
            out.push((folder, name, p.canonicalize().expect("path")));
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    // A directory here makes cargo rescan it: added, removed and edited files rebuild.
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &root, "toml", &mut files);
    let mut src = String::from("/// Every bundled scenario: (folder, file name, TOML text).\npub static FILES: &[(&str, &str, &str)] = &[\n");
    for (folder, name, path) in &files {
        src.push_str(&format!(
            "    ({folder:?}, {name:?}, include_str!({:?})),\n",
            path.display().to_string()
        ));
    }
    src.push_str("];\n");
    let mut traces = Vec::new();
    collect(&root, &root, "trace", &mut traces);
    src.push_str("/// Every bundled trace file: (path under `scenarios/`, text).\npub static TRACES: &[(&str, &str)] = &[\n");
    for (folder, name, path) in &traces {
        let rel = if folder.is_empty() {
            name.clone()
        } else {
            format!("{folder}/{name}")
        };
        src.push_str(&format!(
            "    ({rel:?}, include_str!({:?})),\n",
            path.display().to_string()
        ));
    }
    src.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("gallery.rs");
    fs::write(out, src).expect("write gallery.rs");
}
