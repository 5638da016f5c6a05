//! Load-time checks of names the scripts spell out as string literals.
//!
//! A card calling `stat("x")` for a counter its variant does not declare
//! would otherwise pass `check` and fail only when a game reaches it. The
//! lint walks the Rhai syntax tree of every rule script and card script and
//! checks the first string literal of these natives against the variant:
//!
//! | call | the literal must name |
//! | --- | --- |
//! | `stat(LIT, ..)` | a counter (`[stats]`) |
//! | `enter_step(LIT)` | a step |
//! | `add(LIT, ..)`, `add_all(LIT, ..)` | an action |
//! | `draw(LIT, ..)`, `draw_secret(LIT, ..)`, `deal(LIT, ..)`, `card(LIT, ..)`, `reveal(LIT, ..)`, `deck_left(LIT)`, `card_ids(LIT)`, `shuffle_into(LIT, ..)` | a deck |
//! | `param(LIT)` | a parameter |
//! | `words(LIT)` | a `[notation]` enumeration |
//! | `roll(.., .., LIT)`, `draw(.., [count,] LIT)`, `draw_secret(.., .., [count,] LIT)`, `deal(.., .., .., LIT)` | a rule-script function (the continuation) |
//!
//! Names computed at run time are not checked. A deck name that also
//! appears in a `has_deck(LIT)` call anywhere in the scripts is exempt: a
//! shared script may name a deck that only some variants declare, behind
//! `if has_deck("extras") { .. }`.

use crate::error::Diagnostic;
use crate::variant::Variant;
use rhai::{ASTNode, Expr, FnCallExpr, Position, Stmt, AST};
use std::collections::HashSet;

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
            let lit = |i: usize| c.args.get(i).and_then(|a| a.as_ref());
            let first = lit(0);
            match (c.name.as_str(), first) {
                ("stat", Some((s, pos))) if !v.stats.iter().any(|(n, _)| n == s) => report(
                    pos,
                    format!(
                        "stat(\"{s}\"): no counter '{s}' is declared in [stats] (declared: {})",
                        known(v.stats.iter().map(|(n, _)| n.as_str()).collect())
                    ),
                ),
                ("enter_step", Some((s, pos))) if v.step_index(s).is_none() => report(
                    pos,
                    format!(
                        "enter_step(\"{s}\"): no step '{s}' (declared steps: {})",
                        known(v.steps.iter().map(|x| x.name.as_str()).collect())
                    ),
                ),
                ("add" | "add_all", Some((s, pos))) if v.action_index(s).is_none() => report(
                    pos,
                    format!(
                        "{}(\"{s}\"): no action '{s}' (declared actions: {})",
                        c.name,
                        known(v.actions.iter().map(|x| x.template.name.as_str()).collect())
                    ),
                ),
                ("deal", Some((s, pos)))
                    if v.deck_index(s).is_none() && v.pile_index(s).is_none() && !guarded.contains(s.as_str()) =>
                {
                    report(
                        pos,
                        format!(
                            "deal(\"{s}\"): no deck or pile '{s}' (declared decks: {}; piles: {})",
                            known(v.decks.iter().filter(|x| x.pile.is_none()).map(|x| x.name.as_str()).collect()),
                            known(v.piles.iter().map(|x| x.name.as_str()).collect())
                        ),
                    )
                }
                (
                    "draw" | "draw_secret" | "card" | "reveal" | "deck_left" | "card_ids" | "shuffle_into",
                    Some((s, pos)),
                )
                    if v.deck_index(s).is_none() && !guarded.contains(s.as_str()) =>
                {
                    report(
                        pos,
                        format!(
                            "{}(\"{s}\"): no deck '{s}' (declared decks: {}; a deck only some variants declare must be guarded by has_deck(\"{s}\"))",
                            c.name,
                            known(v.decks.iter().filter(|x| x.pile.is_none()).map(|x| x.name.as_str()).collect())
                        ),
                    )
                }
                ("words", Some((s, pos))) if !v.enums.contains_key(s) => report(
                    pos,
                    format!(
                        "words(\"{s}\"): no enumeration '{s}' (declared in [notation]: {})",
                        known(v.enums.keys().map(String::as_str).collect())
                    ),
                ),
                ("param", Some((s, pos))) if v.param(s).is_none() => report(
                    pos,
                    format!(
                        "param(\"{s}\"): no parameter '{s}' (declared: {})",
                        known(v.params.iter().map(|x| x.name.as_str()).collect())
                    ),
                ),
                _ => {}
            }
            let then = match (c.name.as_str(), c.args.len()) {
                ("roll", 3) | ("draw_secret", 3) | ("draw", 3) => lit(2),
                ("draw_secret", 4) | ("roll_secret", 4) | ("deal", 4) => lit(3),
                ("deal", 5) => lit(4),
                ("draw", 2) => lit(1),
                _ => None,
            };
            if let Some((s, pos)) = then {
                if !rule_fns.contains(s) {
                    report(
                        pos,
                        format!(
                            "{}(.., \"{s}\"): no script function '{s}' to receive the outcomes (it takes one argument, the array of outcomes)",
                            c.name
                        ),
                    );
                }
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
