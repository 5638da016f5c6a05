//! Loading a variant with every check made before a game is played: its
//! files read and merged as data (`crate::variant`), then what needs the
//! scripts parsed (the names they spell out, their syntax: `crate::lint`,
//! `crate::source`), and the warnings of `rulesmith check`
//! (`crate::fields`). Kept apart from `variant` so that the variant's
//! types sit below the modules that parse scripts, which use them.

use crate::error::{Diagnostic, LoadError};
use crate::variant::{self, Overlay, Read, Variant};
use std::path::Path;
use std::sync::Arc;

impl Variant {
    /// Loads the variant in folder `path` (or the variant file `path`).
    pub fn load(path: impl AsRef<Path>) -> Result<Variant, LoadError> {
        Variant::load_overlaid(path, Arc::default())
    }

    /// [`Variant::load`] with some files' texts taken from `overlay`
    /// instead of the disk: what an editor shows, saved or not.
    pub fn load_overlaid(path: impl AsRef<Path>, overlay: Arc<Overlay>) -> Result<Variant, LoadError> {
        match variant::read(path.as_ref(), overlay) {
            Read::Built(v) => {
                // Names the scripts spell out that the variant lacks.
                let lint = crate::lint::lint(&v);
                if lint.is_empty() {
                    Ok(*v)
                } else {
                    Err(LoadError::new(lint))
                }
            }
            Read::Broken {
                diags,
                chain_broken: true,
                ..
            } => Err(LoadError::new(diags)),
            Read::Broken {
                mut diags,
                files,
                scripts,
                chain_broken: false,
            } => {
                // The data is broken, but the scripts' syntax errors are
                // worth reporting in the same run.
                let engine = crate::source::sandbox(crate::rules::Limits::default());
                for f in scripts {
                    if let Err(d) = crate::source::compile_source(&engine, &files[f], "") {
                        diags.push(d);
                    }
                }
                Err(LoadError::new(diags))
            }
        }
    }

    /// What looks wrong without being an error, for `rulesmith check`:
    /// fields of the game data assigned and never read, or read and never
    /// assigned (see `fields.rs`).
    pub fn warnings(&self) -> Vec<Diagnostic> {
        let mut files = self.scripts.clone();
        for f in self.decks.iter().flat_map(|d| d.cards.iter().filter_map(|c| c.script)) {
            if !files.contains(&f) {
                files.push(f);
            }
        }
        crate::fields::warnings(self, &files)
    }
}
