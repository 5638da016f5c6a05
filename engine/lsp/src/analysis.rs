//! What `rulesmith check` reports without playing a game, for one variant
//! as the editor shows it: the load (TOML, schema, names, ranges, Rhai
//! syntax, the lints), the references of the TOML to script functions and
//! their arities (made when the interpreter builds the game), what the
//! compiler would refuse, and the warnings. The same calls as `check`, so
//! the editor and the command cannot disagree.

use rulesmith_core::variant::Overlay;
use rulesmith_core::{Diagnostic, Variant};
use std::path::Path;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One variant analysed: its problems, and the variant when it loaded.
pub struct Analysis {
    pub problems: Vec<(Severity, Diagnostic)>,
    pub variant: Option<Arc<Variant>>,
}

/// Analyses the variant whose main file is `variant_file`, with the texts
/// of `overlay` standing in for the files on disk.
pub fn analyze(variant_file: &Path, overlay: Arc<Overlay>) -> Analysis {
    let errors = |e: rulesmith_core::LoadError| e.diagnostics.into_iter().map(|d| (Severity::Error, d)).collect();
    let variant = match Variant::load_overlaid(variant_file, overlay) {
        Ok(v) => Arc::new(v),
        Err(e) => {
            return Analysis {
                problems: errors(e),
                variant: None,
            }
        }
    };
    // The interpreter compiles the scripts and the game checks that every
    // function the TOML names exists with the right number of arguments.
    if let Err(e) = rulesmith_rhai::interpreted(variant.clone()) {
        return Analysis {
            problems: errors(e),
            variant: Some(variant),
        };
    }
    let mut problems = Vec::new();
    let facts = rulesmith_compiler::from_variant::facts(&variant);
    if let Err(e) = rulesmith_compiler::compile(&facts) {
        let file = variant.files.iter().find(|f| f.path == e.file);
        problems.push((
            Severity::Error,
            Diagnostic::new(
                &e.file,
                format!(
                    "the compiler would refuse this: {} (the interpreter runs it, but compiled rules cannot: \
                     docs/compiler.md lists what the compiler refuses)",
                    e.message
                ),
            )
            .at_line(file.map(|f| f.text.as_str()), e.pos.line as usize, e.pos.col as usize),
        ));
    }
    problems.extend(variant.warnings().into_iter().map(|d| (Severity::Warning, d)));
    Analysis {
        problems,
        variant: Some(variant),
    }
}
