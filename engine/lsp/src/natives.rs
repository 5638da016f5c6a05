//! The natives scripts may call, with their signatures and docs, read from
//! the tables of `docs/scripting.md` (built in): the page designers read is
//! the one source, so a hover cannot say something the docs do not. A test
//! checks that every native the compiler knows has a row there.

/// One native function: its name, how it is called, what it does.
#[derive(Clone, Debug)]
pub struct Native {
    pub name: String,
    /// Each way to call it, as the docs write it: `draw(deck, then)`.
    pub signatures: Vec<String>,
    pub doc: String,
}

const SCRIPTING: &str = include_str!("../../../docs/scripting.md");

/// Every native documented in `docs/scripting.md`'s "Native functions"
/// tables, in the docs' order (a function with several rows once).
pub fn natives() -> Vec<Native> {
    let mut out: Vec<Native> = Vec::new();
    let section = SCRIPTING
        .split("\n## ")
        .find(|s| s.starts_with("Native functions"))
        .unwrap_or("");
    for line in section.lines() {
        let Some(row) = line.strip_prefix("| `") else {
            continue;
        };
        let Some((first, doc)) = row.split_once(" | ") else {
            continue;
        };
        let doc = doc.trim_end().trim_end_matches('|').trim().to_string();
        for sig in format!("`{first}").split('`').skip(1).step_by(2) {
            let sig = sig.strip_prefix("this.").unwrap_or(sig);
            let Some((name, _)) = sig.split_once('(') else {
                continue;
            };
            if !name.chars().all(crate::text::is_word) {
                continue;
            }
            match out.iter_mut().find(|n| n.name == name) {
                Some(n) => {
                    if !n.signatures.iter().any(|s| s == sig) {
                        n.signatures.push(sig.to_string());
                        n.doc = format!("{}\n\n`{sig}`: {doc}", n.doc);
                    }
                }
                None => out.push(Native {
                    name: name.to_string(),
                    signatures: vec![sig.to_string()],
                    doc: doc.clone(),
                }),
            }
        }
    }
    out
}

/// What a native's string argument names: the loader's lint table, so the
/// editor offers and checks the same names the loader does.
pub use rulesmith_core::lint::NameKind;

/// What the string argument `arg` (0-based) of a call of `native` names,
/// if it names something the variant declares. The call is still being
/// typed, so its number of arguments is unknown: any string after the
/// first of a chance native is taken for its continuation (or for a pile,
/// in `deal`).
pub fn argument_names(native: &str, arg: usize) -> &'static [NameKind] {
    rulesmith_core::lint::argument_names(native, arg, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_docs_give_every_native_a_signature_and_a_doc() {
        let natives = natives();
        let find = |n: &str| {
            natives
                .iter()
                .find(|x| x.name == n)
                .unwrap_or_else(|| panic!("no native {n}"))
        };
        assert_eq!(find("enter_step").signatures, ["enter_step(name)"]);
        assert!(find("draw").signatures.len() >= 2, "{:?}", find("draw").signatures);
        assert!(find("param").doc.contains("[params]"));
        assert_eq!(find("card_hook").signatures, ["card_hook(deck, id, hook, args)"]);
        // Functions Rhai itself provides are Rhai's to document.
        let missing: Vec<&str> = rulesmith_compiler::infer::NATIVES
            .iter()
            .copied()
            .filter(|name| {
                !["print", "debug", "max", "min", "to_string", "type_of"].contains(name)
                    && !natives.iter().any(|n| n.name == *name)
            })
            .collect();
        assert!(
            missing.is_empty(),
            "natives with no row in docs/scripting.md's tables: {missing:?}"
        );
    }
}
