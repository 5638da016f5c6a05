//! Rust code generation from the typed tree.
//!
//! Conventions of the generated code (the runtime crate provides the
//! helpers named here):
//! - every function returns `R<T>`; a failure carries the file, function,
//!   line and column of the innermost script function that failed (`.at`);
//! - functions take `this` by `&mut` only if they (or what they call) write
//!   to it, so loops over `this`'s arrays iterate by reference;
//! - sub-expressions that call functions are evaluated into temporaries
//!   first, so no borrow of `this` is held across a call;
//! - checked arithmetic, Rhai's indexing (negative from the end), values
//!   copied on read as Rhai copies them; fuel per loop turn and call, and
//!   the call depth passed down, stand in for Rhai's operation and call
//!   limits.

use crate::infer::{is_mutating, rooted_at_this, Callee, Typed};
use crate::ir::*;
use crate::types::{Len, Shape, Ty};
use crate::{Facts, Scalar};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

mod calls;
mod entry;
mod expressions;
mod functions;
mod natives;
mod statements;
mod structs;

// The walks and names several parts share.
use entry::static_type_name;
use statements::{every_stmt, field_base, loop_depths, var_written};

/// The natives whose first argument names a deck: a literal is resolved
/// when compiling, any other name at run time.
const DECK_NATIVES: &[&str] = &[
    "card",
    "card_ids",
    "deck_left",
    "draw",
    "draw_secret",
    "reveal",
    "shuffle_into",
];

/// The longest array kept on the stack (`[T; N]`): longer ones stay
/// vectors, whose moves and copies do not grow with the length.
pub const MAX_FIXED_LEN: usize = 8;

/// A Rust identifier for any text.
pub fn ident(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

pub struct Emit<'a> {
    facts: &'a Facts,
    funcs: &'a [Func],
    t: &'a mut Typed,
    tmp: usize,
    /// The function being emitted.
    cur: FnId,
    /// Struct name and (key -> rust field) per live record.
    recs: BTreeMap<usize, RecInfo>,
    copy: HashMap<usize, bool>,
    /// Variables of the function being emitted that borrow what they were
    /// given instead of copying it (see `Emit::borrows`): named `(*v)`.
    borrowed: HashSet<VarId>,
    /// Reads `v[c]` that may move the element out instead of copying it
    /// (see `Emit::consumed_reads`), by expression, with `c` made positive.
    consumed: HashMap<ExprId, usize>,
    /// Functions that return a few items inline (see `Emit::few_returns`).
    few: HashSet<FnId>,
}

struct RecInfo {
    name: String,
    fields: Vec<(String, String, Ty, bool)>,
}

impl<'a> Emit<'a> {
    pub fn new(facts: &'a Facts, funcs: &'a [Func], t: &'a mut Typed) -> Self {
        Emit {
            facts,
            funcs,
            t,
            tmp: 0,
            cur: 0,
            recs: BTreeMap::new(),
            copy: HashMap::new(),
            borrowed: HashSet::new(),
            consumed: HashMap::new(),
            few: HashSet::new(),
        }
    }

    fn tmp(&mut self) -> String {
        self.tmp += 1;
        format!("__t{}", self.tmp)
    }

    // ----- types --------------------------------------------------------

    fn shape(&mut self, t: Ty) -> Shape {
        self.t.store.shape(t)
    }

    fn rec_info(&mut self, t: Ty) -> usize {
        let r = self.t.store.rec_id(t).expect("a record type");
        if !self.recs.contains_key(&r) {
            let name = match &self.t.store.recs[r].name {
                Some(n) => n.clone(),
                None => format!("R{r}"),
            };
            let fields: Vec<(String, crate::types::Field)> = self.t.store.recs[r]
                .fields
                .iter()
                .map(|(k, f)| (k.clone(), f.clone()))
                .collect();
            let mut used = std::collections::HashSet::new();
            let mut list = Vec::new();
            for (k, f) in fields {
                let mut id = format!("f_{}", ident(&k));
                while !used.insert(id.clone()) {
                    id.push('_');
                }
                let always = self.t.store.always(r, &f);
                list.push((k, id, f.ty, always));
            }
            self.recs.insert(r, RecInfo { name, fields: list });
            // Field types may name more records.
            let tys: Vec<Ty> = self.recs[&r].fields.iter().map(|f| f.2).collect();
            for ft in tys {
                self.rty(ft);
            }
        }
        r
    }

    /// The length of arrays of type `t` when they compile to a Rust array
    /// (`[T; N]`): every one has that length, and it is small.
    pub fn fixed_len(&mut self, t: Ty) -> Option<usize> {
        match (self.shape(t), self.t.store.len(t)) {
            (Shape::Arr(_), Len::Fixed(n)) if n <= MAX_FIXED_LEN => Some(n),
            _ => None,
        }
    }

    /// The Rust type of `t`.
    pub fn rty(&mut self, t: Ty) -> String {
        match self.shape(t) {
            Shape::Int | Shape::Unknown => "i64".into(),
            Shape::Bool => "bool".into(),
            Shape::Str => "Str".into(),
            Shape::Unit => "()".into(),
            Shape::Dyn => "Value".into(),
            Shape::Arr(e) => match self.fixed_len(t) {
                Some(n) => format!("[{}; {n}]", self.rty(e)),
                None => format!("Vec<{}>", self.rty(e)),
            },
            Shape::Rec(_) => {
                let r = self.rec_info(t);
                self.recs[&r].name.clone()
            }
        }
    }

    fn is_copy(&mut self, t: Ty) -> bool {
        match self.shape(t) {
            Shape::Int | Shape::Unknown | Shape::Bool | Shape::Unit => true,
            // `[i64; 2]` copies like a number; a vector never does.
            Shape::Arr(el) => self.fixed_len(t).is_some() && self.is_copy(el),
            Shape::Rec(_) => {
                let r = self.rec_info(t);
                if let Some(&c) = self.copy.get(&r) {
                    return c;
                }
                self.copy.insert(r, false);
                let tys: Vec<Ty> = self.recs[&r].fields.iter().map(|f| f.2).collect();
                let c = tys.into_iter().all(|ft| self.is_copy(ft)) && self.recs[&r].name != "This";
                self.copy.insert(r, c);
                c
            }
            _ => false,
        }
    }

    fn same_kind(&mut self, a: Ty, b: Ty) -> bool {
        let (sa, sb) = (self.shape(a), self.shape(b));
        match (&sa, &sb) {
            (Shape::Dyn, Shape::Dyn) => true,
            (Shape::Dyn, _) | (_, Shape::Dyn) => false,
            _ => true,
        }
    }

    /// Converts `code` (of type `from`) to type `to` where they differ:
    /// into a dynamic value, or out of one (checked).
    fn convert(&mut self, code: String, from: Ty, to: Ty, pos: Pos) -> String {
        let scalar = |s: &Shape| matches!(s, Shape::Int | Shape::Bool | Shape::Str | Shape::Unit);
        let (sf, st) = (self.shape(from), self.shape(to));
        if scalar(&sf) && scalar(&st) && sf != st {
            // Two scalar kinds meet only in code that cannot run (the branch
            // after `type_of(x) == "i64"` when `x` is never a number): still
            // well-typed Rust, checked if it ever ran.
            let ty = self.rty(to);
            return format!(
                "<{ty} as FromValue>::from_value(ToValue::to_value(&({code}))){}",
                self.at(pos)
            );
        }
        if self.same_kind(from, to) {
            let arrays = matches!(sf, Shape::Arr(_)) || matches!(st, Shape::Arr(_));
            if arrays && self.rty(from) != self.rty(to) {
                // One array kept fixed-size and one a vector (or holding
                // such): converted through a dynamic value, checked. Rare:
                // a value's flows share its array type.
                let ty = self.rty(to);
                return format!(
                    "<{ty} as FromValue>::from_value(ToValue::to_value(&({code}))){}",
                    self.at(pos)
                );
            }
            return code;
        }
        if self.shape(to) == Shape::Dyn {
            format!("ToValue::to_value(&({code}))")
        } else {
            let ty = self.rty(to);
            format!("<{ty} as FromValue>::from_value({code}){}", self.at(pos))
        }
    }

    /// A literal's, native's or method's result where the expression is
    /// dynamic: they give typed results whatever their context, so the value
    /// is converted (a copy when it already is dynamic).
    fn dynamic_if_needed(&mut self, code: String, ty: Ty) -> String {
        if self.shape(ty) == Shape::Dyn {
            format!("ToValue::to_value(&({code}))")
        } else {
            code
        }
    }

    fn at(&self, pos: Pos) -> String {
        format!(".at(F, FN, {}, {})?", pos.line, pos.col)
    }

    fn called_at(&self, pos: Pos) -> String {
        format!(".called_at(F, FN, {}, {})?", pos.line, pos.col)
    }

    // ----- the whole program ---------------------------------------------

    pub fn program(mut self, fingerprint: &str) -> String {
        // One module per script file: rustc compiles (and, after an edit,
        // recompiles) a module as a unit, so an edit to one file rebuilds
        // that file's functions, not the whole rule set.
        let mut by_file: std::collections::BTreeMap<usize, String> = std::collections::BTreeMap::new();
        self.few = self.few_returns();
        for i in 0..self.funcs.len() {
            self.cur = i;
            self.tmp = 0;
            self.borrowed.clear();
            self.consumed = self.consumed_reads(&self.funcs[i].body);
            let f = self.function(i);
            by_file.entry(self.funcs[i].file).or_default().push_str(&f);
        }
        let mut body = String::new();
        for (file, code) in by_file {
            let path = self.facts.files[file].0.display().to_string();
            let _ = writeln!(
                body,
                "/// {path}\npub mod file_{file} {{\nuse super::*;\n\n{code}}}\npub use file_{file}::*;\n"
            );
        }
        let hooks = self.hook_dispatch();
        let entry = self.entry_points();
        let this_ty = self.t.this_ty;
        self.rty(this_ty);
        let structs = self.structs();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "// Generated by rulesmith-compiler. Do not edit: edit the scripts.\n\
             #![allow(unused_mut, unused_variables, unused_parens, unused_braces, non_snake_case, non_camel_case_types, dead_code, while_true, clippy::all)]\n\
             use rulesmith_runtime::prelude::*;\n\n\
             pub const FINGERPRINT: &str = {fingerprint:?};\n"
        );
        out.push_str(&structs);
        out.push_str(&body);
        out.push_str(&hooks);
        out.push_str(&entry);
        out
    }

    fn fn_name(&self, id: FnId) -> String {
        let f = &self.funcs[id];
        match &f.owner {
            Owner::Rules => format!("s{id}_{}", ident(&f.name)),
            Owner::Card { deck, card } => format!(
                "c{id}_{}_{}_{}",
                ident(&self.facts.decks[*deck].name),
                ident(&self.facts.decks[*deck].cards[*card].0),
                ident(&f.name)
            ),
        }
    }

    fn this_param(&self, id: FnId) -> &'static str {
        if self.t.writes_this[id] {
            "this: &mut This"
        } else {
            "this: &This"
        }
    }

    fn var(&self, v: VarId) -> String {
        match self.borrowed.contains(&v) {
            true => format!("(*{})", self.var_name(v)),
            false => self.var_name(v),
        }
    }

    fn var_name(&self, v: VarId) -> String {
        format!("v{v}_{}", ident(&self.funcs[self.cur].vars[v]))
    }

    fn dyn_ty(&mut self) -> Ty {
        self.t.store.make(Shape::Dyn)
    }

    fn int_ty(&mut self) -> Ty {
        self.t.store.make(Shape::Int)
    }
}
