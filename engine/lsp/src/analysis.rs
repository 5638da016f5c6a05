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

#[cfg(test)]
mod tests {
    use super::*;

    const VARIANT: &str = "[variant]\nname = \"tiny\"\nplayers = { min = 2, max = 2, default = 2 }\n\
                           scripts = [\"rules.rhai\"]\n\n[actions.pass]\ntext = \"pass\"\napply = \"do_pass\"\n\n\
                           [setup]\nrun = \"setup\"\n\n[steps.play]\nlegal = \"play_legal\"\n\n[turn]\nsteps = [\"play\"]\n";
    const RULES: &str =
        "fn setup() { start_turns(0); }\nfn play_legal() { add(\"pass\"); }\nfn do_pass() { end_turn(); }\n";

    /// The unsaved text of a file is what is checked, at its own lines,
    /// and the file on disk is left as it was.
    #[test]
    fn the_overlay_stands_in_for_the_disk() {
        let dir = std::env::temp_dir().join(format!("rulesmith-lsp-overlay-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("variant.toml"), VARIANT).unwrap();
        std::fs::write(dir.join("rules.rhai"), RULES).unwrap();
        let file = dir.join("variant.toml");
        let clean = analyze(&file, Arc::default());
        assert!(clean.problems.is_empty(), "{:?}", clean.problems);
        assert!(clean.variant.is_some());

        let broken = RULES.replace("add(\"pass\")", "\n\nadd(\"pas\")");
        let overlay = Arc::new(Overlay::from([(dir.join("rules.rhai"), broken)]));
        let a = analyze(&file, overlay);
        let [(Severity::Error, d)] = a.problems.as_slice() else {
            panic!("{:?}", a.problems)
        };
        assert_eq!((d.file.clone(), d.line), (dir.join("rules.rhai"), 4), "{d}");
        assert!(d.message.contains("'pas'"), "{d}");
        assert_eq!(std::fs::read_to_string(dir.join("rules.rhai")).unwrap(), RULES);

        // A function the TOML names with the wrong number of parameters.
        let arity = RULES.replace("fn do_pass()", "fn do_pass(x)");
        let a = analyze(&file, Arc::new(Overlay::from([(dir.join("rules.rhai"), arity)])));
        assert!(
            a.problems
                .iter()
                .any(|(_, d)| d.file == file && d.message.contains("do_pass")),
            "{:?}",
            a.problems
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
