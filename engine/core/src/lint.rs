//! Load-time checks of names the scripts spell out as string literals.
//!
//! A card calling `stat("x")` for a counter its variant does not declare
//! would otherwise pass `check` and fail only when a game reaches it. The
//! lint walks the Rhai syntax tree of every rule script and card script and
//! checks each string literal a native takes as a name against what the
//! variant declares. Which argument of which native names what is one
//! table, [`argument_names`], which the language server reads too (its
//! completions, hovers and renames), so the two cannot disagree:
//!
//! | call | the literal must name |
//! | --- | --- |
//! | `stat(LIT, ..)` | a counter (`[stats]`) |
//! | `enter_step(LIT)` | a step |
//! | `add(LIT, ..)`, `add_all(LIT, ..)` | an action |
//! | `draw(LIT, ..)`, `draw_secret(LIT, ..)`, `card(LIT, ..)`, `reveal(LIT, ..)`, `deck_left(LIT)`, `card_ids(LIT)`, `shuffle_into(LIT, ..)`, `card_hook(LIT, ..)` | a deck |
//! | `deal(LIT, ..)`, `pile(LIT, ..)`, `pile_size(LIT, ..)`, `move_all(LIT, LIT, ..)`, `move_card(.., LIT, LIT, ..)`, `draw_from(LIT, .., .., LIT)`, `deal(.., .., .., LIT, ..)` | a deck or a pile (the last one a pile) |
//! | `param(LIT)` | a parameter |
//! | `words(LIT)` | a `[notation]` enumeration |
//! | `roll(.., .., LIT)`, `draw(.., [count,] LIT)`, `draw_secret(.., .., [count,] LIT)`, `roll_secret(.., .., .., LIT)`, `deal(.., .., .., [pile,] LIT)` | a rule-script function (the continuation) |
//!
//! Card ids (`card(deck, LIT)`), card hooks (`card_hook(.., .., LIT, ..)`)
//! and `has_deck(LIT)` (a guard, true or false by design) are named in the
//! table for the editor, not checked here. Names computed
//! at run time are not checked. A deck name that also appears in a
//! `has_deck(LIT)` call anywhere in the scripts is exempt: a shared script
//! may name a deck that only some variants declare, behind
//! `if has_deck("extras") { .. }`.

use crate::error::Diagnostic;
use crate::variant::Variant;
use rhai::{ASTNode, Expr, FnCallExpr, Position, Stmt, AST};
use std::collections::HashSet;

/// What a string argument of a native names, when it names something the
/// variant declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameKind {
    Action,
    Step,
    Param,
    Stat,
    Enum,
    Deck,
    Card,
    Pile,
    Hook,
    /// A rule-script function: a chance native's continuation.
    Function,
}

/// The argument counts at which a chance native's last argument is its
/// continuation (`draw(deck, then)`, `draw(deck, count, then)`).
fn continuation_arities(native: &str) -> &'static [usize] {
    match native {
        "roll" => &[3],
        "roll_secret" => &[4],
        "draw" => &[2, 3],
        "draw_secret" => &[3, 4],
        "deal" => &[4, 5],
        _ => &[],
    }
}

/// What the string argument `arg` (0-based) of a call of `native` names,
/// first the likeliest; empty when it names nothing declared. `argc` is the
/// call's number of arguments when it is known; without it (a call an
/// editor's user is still typing) any string after the first of a chance
/// native may be its continuation.
pub fn argument_names(native: &str, arg: usize, argc: Option<usize>) -> &'static [NameKind] {
    use NameKind::*;
    let arities = continuation_arities(native);
    if !arities.is_empty() && arg >= 1 {
        match argc {
            Some(n) if arg + 1 == n && arities.contains(&n) => return &[Function],
            None if (native, arg) == ("deal", 3) => return &[Pile, Function],
            None => return &[Function],
            Some(_) => {}
        }
    }
    match (native, arg) {
        ("add" | "add_all", 0) => &[Action],
        ("enter_step", 0) => &[Step],
        ("param", 0) => &[Param],
        ("stat", 0) => &[Stat],
        ("words", 0) => &[Enum],
        ("card", 1) => &[Card],
        ("card_hook", 2) => &[Hook],
        (
            "card" | "card_ids" | "deck_left" | "has_deck" | "shuffle_into" | "reveal" | "draw" | "draw_secret"
            | "card_hook",
            0,
        ) => &[Deck],
        ("deal", 0) => &[Deck, Pile],
        ("deal", 3) => &[Pile],
        ("pile" | "pile_size" | "move_all", 0) | ("move_all" | "move_card", 1) | ("move_card", 2) => &[Pile, Deck],
        ("draw_from", 0) => &[Pile, Deck],
        ("draw_from", 3) => &[Pile],
        _ => &[],
    }
}

/// One call found: the native's name, its literal arguments (by index), and
/// where each is.
struct Call {
    name: String,
    args: Vec<Option<(String, Position)>>,
}

fn calls(ast: &AST) -> Vec<Call> {
    let mut out = Vec::new();
    let mut visit = |x: &FnCallExpr| {
        let args = x
            .args
            .iter()
            .map(|a| match a {
                Expr::StringConstant(s, pos) => Some((s.to_string(), *pos)),
                _ => None,
            })
            .collect();
        out.push(Call {
            name: x.name.to_string(),
            args,
        });
    };
    ast.walk(&mut |path: &[ASTNode]| {
        match path.last() {
            Some(ASTNode::Expr(Expr::FnCall(x, _))) => visit(x),
            Some(ASTNode::Stmt(Stmt::FnCall(x, _))) => visit(x),
            _ => {}
        }
        true
    });
    out
}

/// Whether the variant declares `name` as a `kind` (card ids and hooks
/// are not checked: true).
fn declares(v: &Variant, rule_fns: &HashSet<String>, kind: NameKind, name: &str) -> bool {
    match kind {
        NameKind::Action => v.action_index(name).is_some(),
        NameKind::Step => v.step_index(name).is_some(),
        NameKind::Param => v.param(name).is_some(),
        NameKind::Stat => v.stats.iter().any(|(n, _)| n == name),
        NameKind::Enum => v.enums.contains_key(name),
        NameKind::Deck => v.deck_index(name).is_some(),
        NameKind::Pile => v.pile_index(name).is_some(),
        NameKind::Function => rule_fns.contains(name),
        NameKind::Card | NameKind::Hook => true,
    }
}

/// Every literal name in the variant's rule and card scripts that names
/// nothing the variant declares, as located diagnostics.
pub fn lint(v: &Variant) -> Vec<Diagnostic> {
    let engine = crate::source::sandbox(crate::rules::Limits::default());
    let card_files: Vec<usize> = v
        .decks
        .iter()
        .flat_map(|d| d.cards.iter().filter_map(|c| c.script))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    // Parsed files (syntax errors are reported elsewhere).
    let parsed: Vec<(usize, AST)> = v
        .scripts
        .iter()
        .chain(&card_files)
        .filter_map(|&f| engine.compile(&v.files[f].text).ok().map(|ast| (f, ast)))
        .collect();
    let found: Vec<(usize, Vec<Call>)> = parsed.iter().map(|(f, ast)| (*f, calls(ast))).collect();
    let guarded: HashSet<&str> = found
        .iter()
        .flat_map(|(_, cs)| cs.iter())
        .filter(|c| c.name == "has_deck")
        .filter_map(|c| c.args.first()?.as_ref().map(|(s, _)| s.as_str()))
        .collect();
    let rule_fns: HashSet<String> = parsed
        .iter()
        .filter(|(f, _)| v.scripts.contains(f))
        .flat_map(|(_, ast)| ast.iter_functions().map(|f| f.name.to_string()).collect::<Vec<_>>())
        .collect();
    let known = |names: Vec<&str>| names.join(", ");
    let mut diags = Vec::new();
    for (f, cs) in &found {
        let src = &v.files[*f];
        let mut report = |pos: &Position, message: String| {
            diags.push(Diagnostic::new(&src.path, message).at_line(
                Some(&src.text),
                pos.line().unwrap_or(0),
                pos.position().unwrap_or(0),
            ));
        };
        for c in cs {
            for (i, arg) in c.args.iter().enumerate() {
                let Some((s, pos)) = arg else { continue };
                let kinds = argument_names(&c.name, i, Some(c.args.len()));
                if c.name == "has_deck" || kinds.iter().any(|&k| declares(v, &rule_fns, k, s)) {
                    continue;
                }
                let place_kind = kinds.contains(&NameKind::Deck) || kinds.contains(&NameKind::Pile);
                if place_kind && guarded.contains(s.as_str()) {
                    continue;
                }
                let call = match i {
                    0 => format!("{}(\"{s}\")", c.name),
                    _ => format!("{}(.., \"{s}\")", c.name),
                };
                let or_none = |names: Vec<&str>| match names.is_empty() {
                    true => "none".to_string(),
                    false => known(names),
                };
                let decks = || {
                    or_none(
                        v.decks
                            .iter()
                            .filter(|x| x.pile.is_none())
                            .map(|x| x.name.as_str())
                            .collect(),
                    )
                };
                let piles = || or_none(v.piles.iter().map(|x| x.name.as_str()).collect());
                let message = match kinds {
                    [NameKind::Stat] => format!(
                        "{call}: no counter '{s}' is declared in [stats] (declared: {})",
                        known(v.stats.iter().map(|(n, _)| n.as_str()).collect())
                    ),
                    [NameKind::Step] => format!(
                        "{call}: no step '{s}' (declared steps: {})",
                        known(v.steps.iter().map(|x| x.name.as_str()).collect())
                    ),
                    [NameKind::Action] => format!(
                        "{call}: no action '{s}' (declared actions: {})",
                        known(v.actions.iter().map(|x| x.template.name.as_str()).collect())
                    ),
                    [NameKind::Deck] => format!(
                        "{call}: no deck '{s}' (declared decks: {}; a deck only some variants declare must be guarded by has_deck(\"{s}\"))",
                        decks()
                    ),
                    [NameKind::Pile] => format!("{call}: no pile '{s}' (declared piles: {})", piles()),
                    [_, _] if place_kind => format!(
                        "{call}: no deck or pile '{s}' (declared decks: {}; piles: {})",
                        decks(),
                        piles()
                    ),
                    [NameKind::Enum] => format!(
                        "{call}: no enumeration '{s}' (declared in [notation]: {})",
                        known(v.enums.keys().map(String::as_str).collect())
                    ),
                    [NameKind::Param] => format!(
                        "{call}: no parameter '{s}' (declared: {})",
                        known(v.params.iter().map(|x| x.name.as_str()).collect())
                    ),
                    [NameKind::Function] => format!(
                        "{call}: no script function '{s}' to receive the outcomes (it takes one argument, the array of outcomes)"
                    ),
                    // Card ids and hooks are left to the rules at run time.
                    _ => continue,
                };
                report(pos, message);
            }
        }
    }
    diags
}

/// The dice the scripts roll, as far as their text shows: what the Python
/// bridge numbers chance outcomes by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dice {
    /// No script calls `roll`.
    None,
    /// Every `roll` has its faces written as a number or as `param("NAME")`
    /// of a whole-number parameter: the largest of them.
    Largest(u32),
    /// Some `roll` computes its faces: the text does not tell how many.
    Unknown,
}

/// The largest die of the variant's rule and card scripts (see [`Dice`]).
pub fn dice(v: &Variant) -> Dice {
    let engine = crate::source::sandbox(crate::rules::Limits::default());
    let mut files: Vec<usize> = v.scripts.clone();
    files.extend(v.decks.iter().flat_map(|d| d.cards.iter().filter_map(|c| c.script)));
    let mut out = Dice::None;
    for f in files {
        let Ok(ast) = engine.compile(&v.files[f].text) else {
            return Dice::Unknown;
        };
        let mut faces = |x: &FnCallExpr| {
            // The sides: `roll(count, sides, then)`,
            // `roll_secret(seat, count, sides, then)`.
            let at = match x.name.as_str() {
                "roll" => 1,
                "roll_secret" => 2,
                _ => return,
            };
            if out == Dice::Unknown {
                return;
            }
            let sides = match x.args.get(at) {
                Some(Expr::IntegerConstant(n, _)) => u32::try_from(*n).ok(),
                Some(Expr::FnCall(p, _)) if p.name.as_str() == "param" => match p.args.first() {
                    Some(Expr::StringConstant(s, _)) => v.int_param(s).and_then(|n| u32::try_from(n).ok()),
                    _ => None,
                },
                _ => None,
            };
            out = match (out, sides) {
                (_, None) => Dice::Unknown,
                (Dice::Largest(m), Some(n)) => Dice::Largest(m.max(n)),
                (_, Some(n)) => Dice::Largest(n),
            };
        };
        ast.walk(&mut |path: &[ASTNode]| {
            match path.last() {
                Some(ASTNode::Expr(Expr::FnCall(x, _))) => faces(x),
                Some(ASTNode::Stmt(Stmt::FnCall(x, _))) => faces(x),
                _ => {}
            }
            true
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{argument_names, NameKind::*};

    #[test]
    fn a_chance_natives_continuation_is_its_last_argument_once_the_call_is_complete() {
        assert_eq!(argument_names("draw", 1, Some(2)), [Function]);
        assert_eq!(argument_names("draw", 2, Some(3)), [Function]);
        assert!(argument_names("draw", 1, Some(3)).is_empty(), "the count");
        assert_eq!(argument_names("deal", 3, Some(4)), [Function]);
        assert_eq!(argument_names("deal", 3, Some(5)), [Pile]);
        assert_eq!(argument_names("deal", 4, Some(5)), [Function]);
        // While it is typed, anything after the first may be the continuation.
        assert_eq!(argument_names("deal", 3, None), [Pile, Function]);
        assert_eq!(argument_names("roll", 1, None), [Function]);
    }

    #[test]
    fn places_are_decks_or_piles_and_a_deal_lands_in_a_pile() {
        assert_eq!(argument_names("move_card", 2, Some(4)), [Pile, Deck]);
        assert_eq!(argument_names("draw_from", 3, Some(4)), [Pile]);
        assert_eq!(argument_names("deal", 0, Some(4)), [Deck, Pile]);
        assert!(
            argument_names("move_card", 0, Some(4)).is_empty(),
            "a card id is not a place"
        );
    }
}
