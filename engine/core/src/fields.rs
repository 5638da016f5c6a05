//! Load-time warnings about the fields of the game data (`this.NAME`).
//!
//! Rhai creates a property on its first assignment, so `this.at_rsik = 1`
//! (a misspelt `at_risk`) runs without a word and the real field never
//! changes. The scripts are read once, every `this.NAME` sorted into
//! plain assignments (`this.NAME = ..`), updates (`this.NAME += ..`) and
//! other uses (reads, indexing, method calls on it), and a field is
//! suspect when it is:
//!
//! - assigned but never used nor updated: nothing reads what is written;
//! - used or updated but never assigned: nothing sets it (a read gives
//!   `()`, an update fails at run time).
//!
//! These are warnings, not errors: data reached some other way (`this`
//! passed whole to a function, `this[key]` with a computed key) makes the
//! check give up rather than guess.

use crate::error::Diagnostic;
use crate::variant::Variant;
use rhai::{ASTNode, Expr, Position, Stmt, AST};
use std::collections::BTreeMap;

/// How a script touches one field.
#[derive(Default)]
struct Field {
    /// Plain assignments, with where the first one is.
    assigned: Option<(usize, Position)>,
    updated: Option<(usize, Position)>,
    used: Option<(usize, Position)>,
}

/// What one `this.NAME` does to the field.
#[derive(Clone, Copy)]
enum How {
    Assigned,
    Updated,
    Used,
}

/// Whether `e` is `this`.
fn is_this(e: &Expr) -> bool {
    match e {
        Expr::ThisPtr(..) => true,
        Expr::Variable(x, ..) => x.1.as_str() == "this",
        _ => false,
    }
}

/// The field a chain after `this.` starts with: `hand` in `this.hand[s]`.
fn first_property(e: &Expr) -> Option<&str> {
    match e {
        Expr::Property(x, ..) => Some(x.2.as_str()),
        Expr::Dot(b, ..) | Expr::Index(b, ..) => first_property(&b.lhs),
        _ => None,
    }
}

/// The suspect fields of the variant's rule and card scripts, as located
/// warnings; none when the scripts reach the data in ways not followed.
pub fn warnings(v: &Variant, files: &[usize]) -> Vec<Diagnostic> {
    let engine = crate::source::sandbox(crate::rules::Limits::default());
    let mut fields: BTreeMap<String, Field> = BTreeMap::new();
    let mut dynamic = false;
    for &f in files {
        let Ok(ast) = engine.compile(&v.files[f].text) else {
            continue;
        };
        walk(&ast, f, &mut fields, &mut dynamic);
        if dynamic {
            return Vec::new();
        }
    }
    let mut out = Vec::new();
    for (name, field) in &fields {
        let (message, at) = match (field.assigned, field.updated.or(field.used)) {
            (Some(at), None) => (
                format!(
                    "this.{name} is assigned but no script reads it: a misspelt field?{}",
                    near(name, &fields)
                ),
                at,
            ),
            (None, Some(at)) => (
                format!(
                    "this.{name} is {} but no script assigns it (this.{name} = ...): a misspelt field?{}",
                    if field.updated.is_some() { "updated" } else { "read" },
                    near(name, &fields)
                ),
                at,
            ),
            _ => continue,
        };
        let src = &v.files[at.0];
        out.push(Diagnostic::new(&src.path, message).at_line(
            Some(&src.text),
            at.1.line().unwrap_or(0),
            at.1.position().unwrap_or(0),
        ));
    }
    out
}

/// " (did you mean this.NAME?)" for a declared-looking field a letter or
/// two away, else nothing.
fn near(name: &str, fields: &BTreeMap<String, Field>) -> String {
    fields
        .iter()
        .filter(|(other, f)| *other != name && f.assigned.is_some() && (f.used.is_some() || f.updated.is_some()))
        .map(|(other, _)| (edit_distance(name, other), other))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map_or(String::new(), |(_, other)| format!(" (did you mean this.{other}?)"))
}

fn walk(ast: &AST, file: usize, fields: &mut BTreeMap<String, Field>, dynamic: &mut bool) {
    let mut note = |how: How, name: &str, pos: Position| {
        let f = fields.entry(name.to_string()).or_default();
        let slot = match how {
            How::Assigned => &mut f.assigned,
            How::Updated => &mut f.updated,
            How::Used => &mut f.used,
        };
        slot.get_or_insert((file, pos));
    };
    ast.walk(&mut |path: &[ASTNode]| {
        let parent = path.len().checked_sub(2).map(|i| &path[i]);
        match path.last() {
            Some(ASTNode::Expr(e @ Expr::Dot(b, _, pos))) if is_this(&b.lhs) => {
                let Some(name) = first_property(&b.rhs) else {
                    return true; // this.method(..)
                };
                let assignment = match parent {
                    Some(ASTNode::Stmt(Stmt::Assignment(x))) if std::ptr::eq(&x.1.lhs, *e) => Some(&x.0),
                    _ => None,
                };
                match assignment {
                    Some(op) if op.is_op_assignment() => note(How::Updated, name, *pos),
                    Some(_) if matches!(b.rhs, Expr::Property(..)) => note(How::Assigned, name, *pos),
                    _ => note(How::Used, name, *pos),
                }
            }
            Some(ASTNode::Expr(e)) if is_this(e) => {
                // `this` other than before `.NAME`: passed whole, indexed
                // with a computed key, ...: the fields are not all seen.
                let before_dot = matches!(parent, Some(ASTNode::Expr(Expr::Dot(b, ..))) if std::ptr::eq(&b.lhs, *e));
                if !before_dot {
                    *dynamic = true;
                    return false;
                }
            }
            _ => {}
        }
        true
    });
}

/// Levenshtein distance, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (diag + (ca != *cb) as usize).min(up + 1).min(row[j] + 1);
            diag = up;
        }
    }
    row[b.len()]
}
