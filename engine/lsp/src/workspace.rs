//! What the server knows: the editor's open documents (an overlay over the
//! files on disk) and the variants ("roots") found in the workspace, each
//! with the files it reads and the last version of it that loaded.

use crate::analysis::{self, Analysis};
use rulesmith_core::variant::{Overlay, VARIANT_FILE};
use rulesmith_core::Variant;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One variant: its main file, the files it reads (the scripts, decks and
/// variants up its `extends` chain), and its last successful load.
pub struct Root {
    pub file: PathBuf,
    pub files: BTreeSet<PathBuf>,
    pub variant: Option<Arc<Variant>>,
    /// The files last published with diagnostics of this root, to clear.
    pub published: BTreeSet<PathBuf>,
}

#[derive(Default)]
pub struct Workspace {
    /// Open documents' texts, by absolute path.
    pub overlay: Overlay,
    /// The overlay as last shared with a load (rebuilt after an edit).
    shared: Option<Arc<Overlay>>,
    pub roots: Vec<Root>,
}

/// Folders not searched for variants: build output, dependencies, hidden.
fn skipped(name: &str) -> bool {
    name.starts_with('.') || matches!(name, "target" | "node_modules")
}

impl Workspace {
    /// Finds the variants under `folder` (a few levels deep).
    pub fn discover(&mut self, folder: &Path) {
        fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
            if depth > 6 {
                return;
            }
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
            entries.sort();
            for p in entries {
                if p.is_dir() {
                    if !p.file_name().and_then(|n| n.to_str()).is_some_and(skipped) {
                        walk(&p, depth + 1, out);
                    }
                } else if p.file_name().is_some_and(|n| n == VARIANT_FILE) {
                    out.push(p);
                }
            }
        }
        let mut found = Vec::new();
        walk(folder, 0, &mut found);
        for f in found {
            self.add_root(f);
        }
    }

    /// Adds the variant whose main file is `file`; its index.
    pub fn add_root(&mut self, file: PathBuf) -> usize {
        if let Some(i) = self.roots.iter().position(|r| r.file == file) {
            return i;
        }
        self.roots.push(Root {
            files: BTreeSet::from([file.clone()]),
            file,
            variant: None,
            published: BTreeSet::new(),
        });
        self.roots.len() - 1
    }

    /// The roots that read `path`; a file no known variant reads brings in
    /// the variant of the nearest folder above it that has one.
    pub fn roots_of(&mut self, path: &Path) -> Vec<usize> {
        let found: Vec<usize> = (0..self.roots.len())
            .filter(|&i| self.roots[i].files.contains(path))
            .collect();
        if !found.is_empty() {
            return found;
        }
        let nearest = path
            .ancestors()
            .skip(1)
            .map(|d| d.join(VARIANT_FILE))
            .find(|f| f.is_file() || self.overlay.contains_key(f));
        nearest.map(|f| vec![self.add_root(f)]).unwrap_or_default()
    }

    /// The root whose index a feature uses for `path`: the first that reads
    /// it and loaded, else the first that reads it.
    pub fn root_for(&mut self, path: &Path) -> Option<usize> {
        let roots = self.roots_of(path);
        roots
            .iter()
            .copied()
            .find(|&i| self.roots[i].variant.is_some())
            .or(roots.first().copied())
    }

    pub fn set_text(&mut self, path: PathBuf, text: String) {
        self.overlay.insert(path, text);
        self.shared = None;
    }

    pub fn close(&mut self, path: &Path) {
        self.overlay.remove(path);
        self.shared = None;
    }

    /// The open documents, shared with a load (or a worker thread).
    pub fn overlay(&mut self) -> Arc<Overlay> {
        self.shared
            .get_or_insert_with(|| Arc::new(self.overlay.clone()))
            .clone()
    }

    /// A file's text as the editor shows it: the open document, else the
    /// file on disk.
    pub fn text(&self, path: &Path) -> Option<String> {
        match self.overlay.get(path) {
            Some(t) => Some(t.clone()),
            None => std::fs::read_to_string(path).ok(),
        }
    }

    /// Analyses root `i` and remembers what it read and, when it loaded,
    /// the variant.
    pub fn analyze(&mut self, i: usize) -> Analysis {
        let overlay = self.overlay();
        let analysis = analysis::analyze(&self.roots[i].file, overlay);
        let root = &mut self.roots[i];
        if let Some(v) = &analysis.variant {
            root.files = v.files.iter().map(|f| f.path.clone()).collect();
            root.files.insert(root.file.clone());
            root.variant = Some(v.clone());
        }
        for (_, d) in &analysis.problems {
            root.files.insert(d.file.clone());
        }
        analysis
    }

    /// The Rhai files of root `i` (rule scripts first, in load order, then
    /// card scripts), from its last load.
    pub fn scripts(&self, i: usize) -> Vec<PathBuf> {
        let root = &self.roots[i];
        let mut out: Vec<PathBuf> = match &root.variant {
            Some(v) => v.scripts.iter().map(|&f| v.files[f].path.clone()).collect(),
            None => Vec::new(),
        };
        for f in &root.files {
            if f.extension().is_some_and(|e| e == "rhai") && !out.contains(f) {
                out.push(f.clone());
            }
        }
        out
    }

    /// The TOML files of root `i`: its variant files (the extending one
    /// first) and decks.
    pub fn tomls(&self, i: usize) -> Vec<PathBuf> {
        let root = &self.roots[i];
        let mut out: Vec<PathBuf> = vec![root.file.clone()];
        let mut rest: Vec<PathBuf> = root
            .files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "toml") && **f != root.file)
            .cloned()
            .collect();
        // Variant files before decks.
        rest.sort_by_key(|f| f.file_name().is_none_or(|n| n != VARIANT_FILE));
        out.extend(rest);
        out
    }
}
