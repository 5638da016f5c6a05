//! What the compiler refuses, and why: one table that the refusal
//! messages are made from and that `docs/compiler.md` must list (a test
//! below reads the docs), so the documented list cannot drift from the
//! implemented one.
//!
//! `rulesmith check` refuses the same scripts (it runs the compiler's front
//! end), so a variant that checks is one the compiler takes.

/// One construct the compiler does not translate.
pub struct Refusal {
    /// The construct as the docs name it (its bullet starts with it, in
    /// backquotes when it is code).
    pub construct: &'static str,
    /// Why, and what to write instead.
    pub why: &'static str,
}

/// Every refusal, in the order `docs/compiler.md` lists them.
pub const REFUSED: &[Refusal] = &[
    Refusal {
        construct: "switch cases of other kinds",
        why: "a `switch` case matches a whole number, a string or true/false (Rhai keeps only a hash of \
              each case's value, which the compiler finds again among the script's literals); for a \
              character, compare with if / else",
    },
    Refusal {
        construct: "try/catch",
        why: "a caught failure would have to undo what the block changed, as the interpreter does not; \
              test the condition before the failing call instead",
    },
    Refusal {
        construct: "break with a value",
        why: "a loop's value is not modelled; set a variable before `break`",
    },
    Refusal {
        construct: "modules",
        why: "`import`, `export` and `module::function` calls: rule sets share code by `extends` and \
              script files, which the compiler reads whole",
    },
    Refusal {
        construct: "floats",
        why: "rule sets count in whole numbers, and the compiled engine has no floating-point values",
    },
    Refusal {
        construct: "a function pointer",
        why: "an anonymous function or `Fn(\"name\")` must be written as the argument of the method that \
              calls it (`a.filter(|x| x > 0)`, `a.sort(|a, b| a - b)`): kept in a variable, passed to \
              a function of yours or called with `call`, which function runs is known only at run time",
    },
    Refusal {
        construct: "this in a function given to a method",
        why: "Rhai binds `this` in a function that `filter`, `map`, `sort`... call to the array element, \
              not to the game's data; pass what it needs as the element or write a loop",
    },
    Refusal {
        construct: "card_hook with a computed name",
        why: "the deck and the hook of `card_hook(deck, id, hook, [..])` pick the functions it may run; \
              write both as strings",
    },
    Refusal {
        construct: "a computed continuation",
        why: "the function that receives the outcomes of `roll` or `draw` is typed by what it receives; \
              write its name as a string",
    },
    Refusal {
        construct: "card with a computed deck when decks differ",
        why: "`card(deck, id)` with a deck named at run time gives one record type for every deck, so \
              every deck must declare the same fields",
    },
    Refusal {
        construct: "other methods and functions",
        why: "a method or native not in the two lists above has no translation; the message names it",
    },
    Refusal {
        construct: "other operators",
        why: "an operator Rhai accepts but rule scripts have no use for (on floats, characters or \
              ranges as values)",
    },
    Refusal {
        construct: "other constants",
        why: "a constant of a type other than a number, true/false, a string, an array or a function",
    },
    Refusal {
        construct: "other statements",
        why: "a statement form Rhai accepts that no rule script needs (a custom syntax)",
    },
    Refusal {
        construct: "other expressions",
        why: "an expression form Rhai accepts that no rule script needs (a custom syntax, a property \
              on a number)",
    },
];

/// The refusal of `construct` (a name from [`REFUSED`]), as one message.
pub fn message(construct: &str) -> String {
    match REFUSED.iter().find(|r| r.construct == construct) {
        Some(r) => format!("the compiler does not translate {}: {}", r.construct, r.why),
        None => {
            debug_assert!(false, "'{construct}' is not in REFUSED");
            format!("the compiler does not translate {construct}")
        }
    }
}

/// [`message`], naming the offending item (an operator, a method).
pub fn message_for(construct: &str, item: &str) -> String {
    format!("'{item}': {}", message(construct))
}

#[cfg(test)]
mod tests {
    use super::REFUSED;

    /// The bullets of docs/compiler.md's section of refusals.
    fn documented() -> Vec<String> {
        let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/compiler.md"))
            .expect("docs/compiler.md");
        let start = docs
            .find("## What the compiler refuses")
            .expect("docs/compiler.md has a section of refusals");
        let section = &docs[start..];
        let section = &section[..section[3..].find("\n## ").map_or(section.len(), |e| e + 3)];
        section
            .lines()
            .filter_map(|l| l.strip_prefix("- **"))
            .filter_map(|l| l.split("**").next())
            .map(|s| s.trim_matches('`').to_string())
            .collect()
    }

    #[test]
    fn the_documented_refusals_are_the_implemented_ones() {
        let implemented: Vec<String> = REFUSED.iter().map(|r| r.construct.to_string()).collect();
        assert_eq!(documented(), implemented);
    }

    #[test]
    fn a_refusal_names_the_construct_and_why() {
        let m = super::message("switch cases of other kinds");
        assert!(m.contains("switch") && m.contains("if / else"), "{m}");
        let m = super::message_for("other operators", "~");
        assert!(m.starts_with("'~'"), "{m}");
    }
}
