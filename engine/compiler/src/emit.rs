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

    /// Functions whose every result is a list of a few items written out
    /// (`return [[a, b]];`, `[[a, b], [c, d]]` at the end), up to
    /// `rulesmith_runtime::FEW`, and whose every caller loops over it
    /// (`for p in this.firing_pairs(a, b)`): they return a `Few`, kept
    /// inline, instead of a vector allocated per call. Nothing else sees
    /// the list, so nothing can tell. Entry points and continuations,
    /// whose results the engine reads, never qualify.
    fn few_returns(&mut self) -> HashSet<FnId> {
        let few_items = |e: &Expr| matches!(&e.kind, Kind::Array(items) if items.len() <= rulesmith_runtime::FEW);
        let mut looped: HashMap<FnId, usize> = HashMap::new();
        let mut called: HashMap<FnId, usize> = HashMap::new();
        for f in self.funcs {
            let mut stmts = Vec::new();
            every_stmt(&f.body, &mut stmts);
            for s in stmts {
                if let Stmt::For {
                    iter: Iter::Array(a), ..
                } = s
                {
                    if let Some(Callee::Script(g)) = self.t.callee.get(&a.id) {
                        *looped.entry(*g).or_default() += 1;
                    }
                }
            }
            walk_block(&f.body, &mut |e| {
                if let Some(Callee::Script(g)) = self.t.callee.get(&e.id) {
                    *called.entry(*g).or_default() += 1;
                }
            });
        }
        let facts = self.facts;
        let mut named: HashSet<&str> = [
            &facts.setup,
            &facts.turn_start,
            &facts.turn_end,
            &facts.summary,
            &facts.render,
            &facts.evaluate,
            &facts.labels,
        ]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect();
        named.extend(facts.invariants.iter().map(String::as_str));
        named.extend(facts.actions.iter().map(|a| a.apply.as_str()));
        for st in &facts.steps {
            named.insert(st.legal.as_str());
            named.extend(st.enter.as_deref());
        }
        let continuations: Vec<String> = self.t.continuations.keys().cloned().collect();
        named.extend(continuations.iter().map(String::as_str));
        let mut out = HashSet::new();
        for (id, f) in self.funcs.iter().enumerate() {
            let ret = self.t.ret_ty[id];
            let vec = matches!(self.shape(ret), Shape::Arr(_)) && self.fixed_len(ret).is_none();
            let loops_only = called.get(&id).is_some_and(|&n| n > 0 && looped.get(&id) == Some(&n));
            if !vec || !loops_only || f.owner != Owner::Rules || named.contains(f.name.as_str()) {
                continue;
            }
            let mut stmts = Vec::new();
            every_stmt(&f.body, &mut stmts);
            let returns_few = stmts.iter().all(|s| match s {
                Stmt::Return(Some(e), _) => few_items(e),
                Stmt::Return(None, _) => false,
                _ => true,
            });
            let ends_few = match f.body.stmts.last() {
                Some(Stmt::Expr(e)) | Some(Stmt::Return(Some(e), _)) => few_items(e),
                _ => false,
            };
            if returns_few && ends_few {
                out.insert(id);
            }
        }
        out
    }

    /// A list of a few items written out, as a `Few` of the function's
    /// element type.
    fn few_literal(&mut self, e: &Expr) -> String {
        let ret = self.t.ret_ty[self.cur];
        let Shape::Arr(el) = self.shape(ret) else {
            unreachable!("a few-returning function returns an array")
        };
        let Kind::Array(items) = &e.kind else {
            unreachable!("checked by few_returns")
        };
        let (lets, names) = self.args(items, &vec![Some(el); items.len()]);
        format!("{{ {lets}Few::of([{}]) }}", names.join(", "))
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

    fn structs(&mut self) -> String {
        let mut out = String::new();
        let ids: Vec<usize> = self.recs.keys().copied().collect();
        for r in ids {
            let tys: Vec<Ty> = self.recs[&r].fields.iter().map(|f| f.2).collect();
            let mut rtys = Vec::new();
            for t in &tys {
                rtys.push(self.rty(*t));
            }
            let copy = {
                let name = self.recs[&r].name.clone();
                name != "This" && tys.iter().all(|&t| self.is_copy(t))
            };
            let info = &self.recs[&r];
            let derive = if copy { "Clone, Copy, " } else { "" };
            let _ = writeln!(
                out,
                "#[derive({derive}Debug, Default, PartialEq)]\npub struct {} {{",
                info.name
            );
            for ((_, id, _, always), rt) in info.fields.iter().zip(&rtys) {
                if *always {
                    let _ = writeln!(out, "    pub {id}: {rt},");
                } else {
                    let _ = writeln!(out, "    pub {id}: Option<{rt}>,");
                }
            }
            let _ = writeln!(out, "}}\n");
            if !copy {
                // Written out for `clone_from`: copying a state into a
                // scratch one (search, rollback) then reuses every vector.
                let _ = writeln!(
                    out,
                    "impl Clone for {0} {{\n    fn clone(&self) -> Self {{\n        {0} {{",
                    info.name
                );
                for (_, id, _, _) in &info.fields {
                    let _ = writeln!(out, "            {id}: self.{id}.clone(),");
                }
                let _ = writeln!(out, "        }}\n    }}\n\n    fn clone_from(&mut self, o: &Self) {{");
                for (_, id, _, _) in &info.fields {
                    let _ = writeln!(out, "        self.{id}.clone_from(&o.{id});");
                }
                let _ = writeln!(out, "    }}\n}}\n");
            }
            // To a dynamic map (keys sorted, as Rhai's maps are) and back.
            let _ = writeln!(
                out,
                "impl ToValue for {} {{\n    fn to_value(&self) -> Value {{\n        let mut m = ValueMap::new();",
                info.name
            );
            for (key, id, _, always) in &info.fields {
                if *always {
                    let _ = writeln!(out, "        m.insert({key:?}.into(), self.{id}.to_value());");
                } else {
                    let _ = writeln!(
                        out,
                        "        if let Some(v) = &self.{id} {{ m.insert({key:?}.into(), v.to_value()); }}"
                    );
                }
            }
            let _ = writeln!(out, "        Value::Map(m)\n    }}\n}}\n");
            // Its text (`${m}`, `to_string(m)`) is the map's.
            let _ = writeln!(
                out,
                "impl rulesmith_runtime::value::Text for {} {{\n    fn push_text(&self, out: &mut String) {{\n        rulesmith_runtime::value::Text::push_text(&self.to_value(), out)\n    }}\n}}\n",
                info.name
            );
            let _ = writeln!(
                out,
                "impl FromValue for {} {{\n    fn from_value(v: Value) -> Result<Self, Fail> {{\n        let mut m = v.into_map()?;\n        Ok({} {{",
                info.name, info.name
            );
            for (key, id, _, always) in &info.fields {
                if *always {
                    let _ = writeln!(
                        out,
                        "            {id}: FromValue::from_value(take_field(&mut m, {key:?})?)?,"
                    );
                } else {
                    let _ = writeln!(
                        out,
                        "            {id}: match m.remove({key:?}) {{ Some(v) => Some(FromValue::from_value(v)?), None => None }},"
                    );
                }
            }
            let _ = writeln!(out, "        }})\n    }}\n}}\n");
        }
        out
    }

    // ----- functions --------------------------------------------------------

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

    /// The reads of a function that can move an element out of a local
    /// array instead of copying it: `let m = grid_place(..); this.col =
    /// m[0]; this.row = m[1];` takes each vector once, where copying
    /// would allocate. A read `v[c]` qualifies when `v` is a fixed-size
    /// array of vectors or strings, declared by `let` and never written,
    /// and every use of `v` is such a read with a constant index, each
    /// index read once, in the same loop as the `let` (so that no read
    /// runs twice for one value of `v`).
    fn consumed_reads(&mut self, body: &Block) -> HashMap<ExprId, usize> {
        let mut lets = HashMap::new();
        let mut depth = HashMap::new();
        loop_depths(body, 0, &mut lets, &mut depth);
        let mut uses: HashMap<VarId, usize> = HashMap::new();
        let mut reads: HashMap<VarId, Vec<(ExprId, i64)>> = HashMap::new();
        walk_block(body, &mut |e| match &e.kind {
            Kind::Var(v) => *uses.entry(*v).or_default() += 1,
            Kind::Path(root, segs) => {
                if let (Kind::Var(v), [Seg::Index(Expr { kind: Kind::Int(c), .. })]) = (&root.kind, &segs[..]) {
                    reads.entry(*v).or_default().push((e.id, *c));
                }
            }
            _ => {}
        });
        let mut out = HashMap::new();
        for (v, rs) in reads {
            let Some(&let_depth) = lets.get(&v) else { continue };
            let vt = self.t.var_ty[self.cur][v];
            let (Some(n), Shape::Arr(el)) = (self.fixed_len(vt), self.shape(vt)) else {
                continue;
            };
            let movable = matches!(self.shape(el), Shape::Arr(_) | Shape::Str) && !self.is_copy(el);
            // Negative indices count from the end, as in Rhai.
            let rs: Vec<(ExprId, i64)> = rs
                .into_iter()
                .map(|(id, c)| (id, if c < 0 { c + n as i64 } else { c }))
                .collect();
            let mut seen = HashSet::new();
            let fits = rs
                .iter()
                .all(|&(id, k)| (0..n as i64).contains(&k) && depth.get(&id) == Some(&let_depth) && seen.insert(k));
            if movable && fits && uses.get(&v) == Some(&rs.len()) && !var_written(body, v) {
                out.extend(rs.into_iter().map(|(id, k)| (id, k as usize)));
            }
        }
        out
    }

    /// Can `let v = e` borrow `e` instead of copying it? Yes when `e` reads
    /// a place of `this` in a function that cannot write `this` (nor can
    /// anything it calls), its value is costly to copy (a vector, a
    /// string, a record), and `v` is never written: then neither side can
    /// change while `v` lives (`let p = this.counts[s]` in an evaluation
    /// reads the array in place).
    fn borrows(&mut self, v: VarId, e: &Expr, body: &Block) -> bool {
        let et = self.t.expr_ty[e.id];
        let vt = self.t.var_ty[self.cur][v];
        !self.t.writes_this[self.cur]
            && matches!(&e.kind, Kind::Path(root, _) if matches!(root.kind, Kind::This))
            && self.shape(et) != Shape::Dyn
            && !self.is_copy(et)
            && self.rty(et) == self.rty(vt)
            && !var_written(body, v)
    }

    fn function(&mut self, id: FnId) -> String {
        let f = &self.funcs[id];
        let mut params = String::new();
        for &p in &f.params {
            let pt = self.t.var_ty[id][p];
            let ty = self.rty(pt);
            let _ = write!(params, ", mut {}: {ty}", self.var(p));
        }
        let ret = self.t.ret_ty[id];
        let rty = match (self.few.contains(&id), self.shape(ret)) {
            (true, Shape::Arr(el)) => format!("Few<{}>", self.rty(el)),
            _ => self.rty(ret),
        };
        let mut out = String::new();
        let file = self.facts.files[f.file].0.display().to_string();
        let _ = writeln!(out, "/// `{}` ({}:{})", f.name, file, f.pos.line);
        let _ = writeln!(
            out,
            "pub fn {}({}, rt: &mut Rt, depth: u32{params}) -> R<{rty}> {{",
            self.fn_name(id),
            self.this_param(id)
        );
        let _ = writeln!(out, "    const F: u16 = {}; const FN: &str = {:?};", f.file, f.name);
        let _ = writeln!(out, "    rt.call(depth, {id}).at(F, FN, {}, 1)?;", f.pos.line);
        let body = self.block_value(&f.body, Some(ret), f.pos);
        let _ = writeln!(out, "    Ok({body})\n}}\n");
        out
    }

    /// A block as a Rust block expression. With `want`, its value converted
    /// to that type (unit when the block ends in a statement); without, `()`.
    fn block_value(&mut self, b: &Block, want: Option<Ty>, pos: Pos) -> String {
        let mut out = String::from("{\n");
        let n = b.stmts.len();
        let mut tail = None;
        let mut i = 0;
        while i < n {
            let s = &b.stmts[i];
            let last = i + 1 == n;
            if let (true, Some(want), Stmt::Expr(e)) = (last, want, s) {
                // The function's own last value, in a few-returning function.
                if self.few.contains(&self.cur) && std::ptr::eq(b, &self.funcs[self.cur].body) {
                    tail = Some(self.few_literal(e));
                    break;
                }
                let code = self.expr(e);
                let et = self.t.expr_ty[e.id];
                tail = Some(self.convert(code, et, want, e.pos));
                break;
            }
            if let Some(code) = self.placed_in_place(&b.stmts[i..]) {
                out.push_str(&code);
                out.push('\n');
                i += 3;
                continue;
            }
            let code = self.stmt(s);
            out.push_str(&code);
            out.push('\n');
            i += 1;
        }
        let tail = match (tail, want) {
            (Some(t), _) => t,
            (None, None) => "()".into(),
            (None, Some(w)) => {
                let unit = self.t.store.make(Shape::Unit);
                self.convert("()".into(), unit, w, pos)
            }
        };
        // A block that always returns still needs a tail of the right type.
        let ends_in_return = matches!(b.stmts.last(), Some(Stmt::Return(..)));
        if ends_in_return {
            out.push_str("#[allow(unreachable_code)]\n");
        }
        let _ = write!(out, "{tail}\n}}");
        out
    }

    /// `let m = grid_place(a, b, piece, c, r); a = m[0]; b = m[1];`, the
    /// way scripts move a piece, as one update of `a` and `b` in place:
    /// copying both vectors into new ones and dropping the old would
    /// allocate twice a move. Only where nothing can tell: `m` is used
    /// nowhere else, `a` and `b` are two different variables or fields of
    /// `this` (no index to evaluate twice), and the update changes nothing
    /// when the move fails. Returns the code for the three statements.
    fn placed_in_place(&mut self, stmts: &[Stmt]) -> Option<String> {
        let [Stmt::Let(m, call), Stmt::Assign {
            place: p0,
            op: None,
            value: v0,
            ..
        }, Stmt::Assign {
            place: p1,
            op: None,
            value: v1,
            ..
        }, ..] = stmts
        else {
            return None;
        };
        let Kind::Call { name, args, .. } = &call.kind else {
            return None;
        };
        let native = matches!(self.t.callee.get(&call.id), Some(Callee::Native(n)) if n == "grid_place");
        if name != "grid_place" || !native || args.len() != 5 {
            return None;
        }
        let element = |v: &Expr, k: i64| {
            matches!(&v.kind, Kind::Path(root, segs)
                if matches!(root.kind, Kind::Var(x) if x == *m)
                    && matches!(&segs[..], [Seg::Index(Expr { kind: Kind::Int(i), .. })] if *i == k))
        };
        // A variable, or one field of `this`: written in place as read.
        #[derive(PartialEq)]
        enum Simple<'e> {
            Var(VarId),
            ThisField(&'e str),
        }
        fn simple(e: &Expr) -> Option<Simple<'_>> {
            match &e.kind {
                Kind::Var(v) => Some(Simple::Var(*v)),
                Kind::Path(root, segs) if matches!(root.kind, Kind::This) => match &segs[..] {
                    [Seg::Field(f)] => Some(Simple::ThisField(f.as_str())),
                    _ => None,
                },
                _ => None,
            }
        }
        let same = |a: &Expr, b: &Expr| simple(a).is_some() && simple(a) == simple(b);
        let uses = {
            let mut n = 0;
            walk_block(&self.funcs[self.cur].body, &mut |e| {
                if matches!(e.kind, Kind::Var(x) if x == *m) {
                    n += 1;
                }
            });
            n
        };
        let vec_of_ints = |me: &mut Self, e: &Expr| {
            let t = me.t.expr_ty[e.id];
            me.rty(t) == "Vec<i64>"
        };
        let typed_this = matches!(self.shape(self.t.this_ty), Shape::Rec(_));
        let fits = element(v0, 0)
            && element(v1, 1)
            && same(p0, &args[0])
            && same(p1, &args[1])
            && simple(p0) != simple(p1)
            && uses == 2
            && vec_of_ints(self, p0)
            && vec_of_ints(self, p1)
            && (typed_this || !rooted_at_this(p0) && !rooted_at_this(p1));
        if !fits {
            return None;
        }
        let int = self.int_ty();
        let (lets, n) = self.args(&args[2..], &[Some(int), Some(int), Some(int)]);
        // Read where the call reads them: a missing field fails there.
        let (_, c) = self.place_mut(&args[0]);
        let (_, r) = self.place_mut(&args[1]);
        Some(format!(
            "{{ {lets} grid_place_in({c}, {r}, {}, {}, {}){}; }}",
            n[0],
            n[1],
            n[2],
            self.at(call.pos)
        ))
    }

    fn stmt(&mut self, s: &Stmt) -> String {
        match s {
            Stmt::Let(v, e) if self.borrows(*v, e, &self.funcs[self.cur].body) => {
                let code = self.place_ref(e);
                let ty = self.rty(self.t.var_ty[self.cur][*v]);
                self.borrowed.insert(*v);
                format!("let {}: &{ty} = {code};", self.var_name(*v))
            }
            Stmt::Let(v, e) => {
                let code = self.expr(e);
                let et = self.t.expr_ty[e.id];
                let vt = self.t.var_ty[self.cur][*v];
                let code = self.convert(code, et, vt, e.pos);
                let ty = self.rty(vt);
                format!("let mut {}: {ty} = {code};", self.var_name(*v))
            }
            Stmt::Expr(e) => {
                let code = self.expr_unused(e);
                format!("{code};")
            }
            Stmt::Assign { place, op, value, pos } => self.assign(place, *op, value, *pos),
            Stmt::While(c, b, pos) => {
                let cond = self.cond(c);
                let body = self.block_value(b, None, *pos);
                format!(
                    "while {cond} {{ rt.tick().at(F, FN, {}, {})?; {body}; }}",
                    pos.line, pos.col
                )
            }
            Stmt::Do(b, c, until, pos) => {
                let body = self.block_value(b, None, *pos);
                let cond = self.cond(c);
                let stop = if *until { cond } else { format!("!({cond})") };
                format!(
                    "loop {{ rt.tick().at(F, FN, {}, {})?; {body}; if {stop} {{ break; }} }}",
                    pos.line, pos.col
                )
            }
            Stmt::For {
                var,
                counter,
                iter,
                body,
                pos,
            } => self.for_loop(*var, *counter, iter, body, *pos),
            Stmt::Break(_) => "break;".into(),
            Stmt::Continue(_) => "continue;".into(),
            Stmt::Return(e, pos) => {
                let ret = self.t.ret_ty[self.cur];
                let code = match e {
                    Some(e) if self.few.contains(&self.cur) => self.few_literal(e),
                    Some(e) => {
                        let c = self.expr(e);
                        let et = self.t.expr_ty[e.id];
                        self.convert(c, et, ret, e.pos)
                    }
                    None => {
                        let unit = self.t.store.make(Shape::Unit);
                        self.convert("()".into(), unit, ret, *pos)
                    }
                };
                format!("return Ok({code});")
            }
        }
    }

    fn for_loop(&mut self, var: VarId, counter: Option<VarId>, iter: &Iter, body: &Block, pos: Pos) -> String {
        let v = self.var(var);
        let tick = format!("rt.tick().at(F, FN, {}, {})?;", pos.line, pos.col);
        // The loop variable borrows each element when copying it would
        // allocate (a vector, a string, a record holding one) and nothing can tell the
        // difference: the body writes neither the variable nor what is
        // iterated (which is then iterated in place, below).
        let borrows = match iter {
            Iter::Array(a) => self.element_borrowed(var, a, body),
            Iter::Range { .. } => false,
        };
        if borrows {
            self.borrowed.insert(var);
        }
        let body_code = self.block_value(body, None, pos);
        // `for (x, i) in ..`: the counter, where the script names one.
        let count = match counter {
            Some(c) => format!("let mut {} = (__k as i64);", self.var(c)),
            None => String::new(),
        };
        match iter {
            Iter::Range { from, to, inclusive } => {
                let a = self.expr(from);
                let b = self.expr(to);
                let op = if *inclusive { "..=" } else { ".." };
                let (ta, tb) = (self.tmp(), self.tmp());
                format!(
                    "{{ let {ta}: i64 = {a}; let {tb}: i64 = {b}; for (__k, __x) in ({ta}{op}{tb}).enumerate() {{ {tick} let mut {v} = __x; {count} {body_code}; }} }}"
                )
            }
            Iter::Array(a) if self.shape(self.t.expr_ty[a.id]) == Shape::Dyn => {
                // A dynamic value: its elements, if it is an array.
                let code = self.expr(a);
                let dt = self.dyn_ty();
                let vt = self.t.var_ty[self.cur][var];
                let x = self.convert("__x".into(), dt, vt, pos);
                format!(
                    "for (__k, __x) in viter({code}){}.into_iter().enumerate() {{ {tick} let mut {v} = {x}; {count} {body_code}; }}",
                    self.at(pos)
                )
            }
            Iter::Array(a) => {
                let at = self.t.expr_ty[a.id];
                let el_copy = match self.shape(at) {
                    Shape::Arr(el) => self.is_copy(el),
                    _ => false,
                };
                // Iterate by reference when nothing in the body can write to
                // what is iterated (Rhai iterates over a copy).
                let by_ref = a.is_place() && !self.block_writes(body, a);
                // The loop variable may be dynamic where the elements are not.
                let el = match self.shape(at) {
                    Shape::Arr(el) => el,
                    _ => self.dyn_ty(),
                };
                let vt = self.t.var_ty[self.cur][var];
                if borrows {
                    let r = self.place_ref(a);
                    let name = self.var_name(var);
                    format!("for (__k, {name}) in ({r}).iter().enumerate() {{ {tick} {count} {body_code}; }}")
                } else if by_ref {
                    let r = self.place_ref(a);
                    let take = if el_copy { "*__x" } else { "__x.clone()" };
                    let x = self.convert(take.into(), el, vt, pos);
                    format!(
                        "for (__k, __x) in ({r}).iter().enumerate() {{ {tick} let mut {v} = {x}; {count} {body_code}; }}"
                    )
                } else {
                    let code = self.expr(a);
                    let x = self.convert("__x".into(), el, vt, pos);
                    format!(
                        "for (__k, __x) in ({code}).into_iter().enumerate() {{ {tick} let mut {v} = {x}; {count} {body_code}; }}"
                    )
                }
            }
        }
    }

    /// Can `for var in a { body }` borrow each element (see `for_loop`)?
    fn element_borrowed(&mut self, var: VarId, a: &Expr, body: &Block) -> bool {
        let at = self.t.expr_ty[a.id];
        let Shape::Arr(el) = self.shape(at) else {
            return false;
        };
        let vt = self.t.var_ty[self.cur][var];
        // A copy of a plain record is a few moves, no cheaper to read
        // through a reference: only what a copy allocates is borrowed.
        let costly = !self.is_copy(el) && self.shape(el) != Shape::Dyn;
        costly && a.is_place() && self.rty(el) == self.rty(vt) && !var_written(body, var) && !self.block_writes(body, a)
    }

    /// Might `body` write to the place `a` (or need `this` mutably while
    /// `a` borrows it)?
    fn block_writes(&mut self, body: &Block, a: &Expr) -> bool {
        let this_rooted = rooted_at_this(a);
        let typed_this = matches!(self.shape(self.t.this_ty), Shape::Rec(_));
        let root_var = match &a.kind {
            Kind::Var(v) => Some(*v),
            Kind::Path(r, _) => match r.kind {
                Kind::Var(v) => Some(v),
                _ => None,
            },
            _ => None,
        };
        let mut writes = false;
        each_written_place(body, &mut |p| {
            if this_rooted && rooted_at_this(p) && !(typed_this && distinct_fields_of_this(a, p)) {
                writes = true;
            }
            let pv = match &p.kind {
                Kind::Var(v) => Some(*v),
                Kind::Path(r, _) => match r.kind {
                    Kind::Var(v) => Some(v),
                    _ => None,
                },
                _ => None,
            };
            if root_var.is_some() && pv == root_var {
                writes = true;
            }
        });
        if this_rooted {
            walk_block(body, &mut |e: &Expr| {
                if let Some(Callee::Script(t)) = self.t.callee.get(&e.id) {
                    if self.t.writes_this[*t] {
                        writes = true;
                    }
                }
                if matches!(self.t.callee.get(&e.id), Some(Callee::Native(n)) if n == "card_hook") {
                    writes = true;
                }
            });
        }
        writes
    }

    // ----- places -----------------------------------------------------------

    /// Hoists the index expressions of a path into temporaries; returns the
    /// `let`s and the codes standing for each index.
    fn hoist_indices(&mut self, segs: &[Seg]) -> (String, Vec<Option<(String, Ty)>>) {
        let mut lets = String::new();
        let mut codes = Vec::new();
        for s in segs {
            match s {
                Seg::Field(_) => codes.push(None),
                Seg::Index(i) if matches!(i.kind, Kind::Str(_)) => codes.push(None),
                Seg::Index(i) => {
                    let code = self.expr(i);
                    let t = self.tmp();
                    let _ = write!(lets, "let {t} = {code}; ");
                    codes.push(Some((t, self.t.expr_ty[i.id])));
                }
            }
        }
        (lets, codes)
    }

    /// Walks a path from `root` (a `&T` or `&mut T` expression of type
    /// `root_ty`); returns the code of a reference to the end and its type.
    /// `last` is left out when `stop_before_last` (for assignments).
    #[allow(clippy::too_many_arguments)] // one walk, read and write alike
    fn chain(
        &mut self,
        root: String,
        root_ty: Ty,
        segs: &[Seg],
        idx: &[Option<(String, Ty)>],
        mutable: bool,
        stop_before_last: bool,
        pos: Pos,
    ) -> (String, Ty) {
        let mut cur = root;
        let mut ty = root_ty;
        let n = if stop_before_last { segs.len() - 1 } else { segs.len() };
        let (m, mt) = if mutable { ("_mut", "&mut ") } else { ("", "&") };
        let at = self.at(pos);
        for (s, ix) in segs[..n].iter().zip(idx) {
            let key = s.key().map(str::to_string);
            match (self.shape(ty), key) {
                (Shape::Dyn, Some(k)) => {
                    cur = format!("vfield{m}({cur}, {k:?}){at}");
                }
                (Shape::Dyn, None) => {
                    let (code, it) = ix.clone().expect("an index");
                    let dt = self.dyn_ty();
                    let v = self.convert(code, it, dt, pos);
                    cur = format!("vindex{m}({cur}, &{v}){at}");
                }
                (Shape::Rec(_), Some(k)) => {
                    let r = self.rec_info(ty);
                    let (_, id, ft, always) = self.recs[&r]
                        .fields
                        .iter()
                        .find(|f| f.0 == k)
                        .cloned()
                        .expect("inferred field");
                    let base = field_base(&cur);
                    cur = if always {
                        format!("({mt}{base}.{id})")
                    } else {
                        format!("opt{m}({mt}{base}.{id}, {k:?}){at}")
                    };
                    ty = ft;
                    continue;
                }
                (Shape::Arr(el), None) => {
                    let (code, it) = ix.clone().expect("an index");
                    let it2 = self.int_ty();
                    let code = self.convert(code, it, it2, pos);
                    cur = format!("get{m}({cur}, {code}){at}");
                    ty = el;
                    continue;
                }
                (Shape::Str, None) if !mutable => {
                    let (code, _) = ix.clone().expect("an index");
                    cur = format!("(&str_index({cur}, {code}){at})");
                    continue;
                }
                (s, _) => {
                    cur = format!("fail_ref(\"cannot index or read a property of {s:?}\"){at}");
                    ty = self.dyn_ty();
                    continue;
                }
            }
            ty = self.dyn_ty();
        }
        (cur, ty)
    }

    fn dyn_ty(&mut self) -> Ty {
        self.t.store.make(Shape::Dyn)
    }

    fn int_ty(&mut self) -> Ty {
        self.t.store.make(Shape::Int)
    }

    fn root_ref(&mut self, root: &Expr, mutable: bool) -> String {
        match (&root.kind, mutable) {
            (Kind::This, true) => "&mut *this".into(),
            (Kind::This, false) => "&*this".into(),
            (Kind::Var(v), true) => format!("&mut {}", self.var(*v)),
            (Kind::Var(v), false) => format!("&{}", self.var(*v)),
            _ => unreachable!("a place root"),
        }
    }

    /// A `&T` to a place (variable, `this`, path), indices hoisted.
    fn place_ref(&mut self, e: &Expr) -> String {
        match &e.kind {
            Kind::Path(root, segs) => {
                let (lets, idx) = self.hoist_indices(segs);
                let r = self.root_ref(root, false);
                let rt = self.t.expr_ty[root.id];
                let (code, _) = self.chain(r, rt, segs, &idx, false, false, e.pos);
                if lets.is_empty() {
                    code
                } else {
                    format!("{{ {lets} {code} }}")
                }
            }
            _ => self.root_ref(e, false),
        }
    }

    fn place_mut(&mut self, e: &Expr) -> (String, String) {
        match &e.kind {
            Kind::Path(root, segs) => {
                let (lets, idx) = self.hoist_indices(segs);
                let r = self.root_ref(root, true);
                let rt = self.t.expr_ty[root.id];
                let (code, _) = self.chain(r, rt, segs, &idx, true, false, e.pos);
                (lets, code)
            }
            _ => (String::new(), self.root_ref(e, true)),
        }
    }

    fn assign(&mut self, place: &Expr, op: Option<BinOp>, value: &Expr, pos: Pos) -> String {
        let pt = self.t.expr_ty[place.id];
        // `this.used = [0, 0, 0]` on a vector: its items, each in a
        // temporary, refill the vector in place (below) when it is a field.
        let refill = match (&value.kind, op, self.shape(pt)) {
            (Kind::Array(items), None, Shape::Arr(el))
                if !items.is_empty() && self.fixed_len(pt).is_none() && matches!(place.kind, Kind::Path(..)) =>
            {
                let (lines, temps) = self.args(items, &vec![Some(el); items.len()]);
                Some((lines, temps.join(", ")))
            }
            _ => None,
        };
        let vt = self.t.expr_ty[value.id];
        let mut out = String::from("{ ");
        let nv = self.tmp();
        let value_at = out.len();
        match &refill {
            Some((lines, temps)) => {
                // The literal's value as the code below expects it.
                let _ = write!(out, "{lines}let {nv} = vec![{temps}]; ");
            }
            None => {
                let vcode = self.expr(value);
                let _ = write!(out, "let {nv} = {vcode}; ");
            }
        }
        let value_end = out.len();
        let vt = if refill.is_some() { pt } else { vt };
        let (root, segs): (&Expr, &[Seg]) = match &place.kind {
            Kind::Path(root, segs) => (root, segs),
            _ => (place, &[]),
        };
        let (lets, idx) = self.hoist_indices(segs);
        out.push_str(&lets);
        let new_value = match op {
            None => self.convert(nv.clone(), vt, pt, pos),
            Some(op) => {
                // Read the place, combine, write back.
                let r = self.root_ref(root, false);
                let root_ty = self.t.expr_ty[root.id];
                let (cur, _) = self.chain(r, root_ty, segs, &idx, false, false, pos);
                let copy = self.is_copy(pt);
                let read = if copy {
                    format!("*{cur}")
                } else {
                    format!("({cur}).clone()")
                };
                let old = self.tmp();
                let _ = write!(out, "let {old} = {read}; ");
                let combined = self.binary_code(op, old, pt, nv.clone(), vt, pos);
                let res_ty = self.binary_ty(op, pt, vt);
                self.convert(combined, res_ty, pt, pos)
            }
        };
        let v2 = self.tmp();
        let new_at = out.len();
        let _ = write!(out, "let {v2} = {new_value}; ");
        let new_end = out.len();
        if segs.is_empty() {
            let target = match &root.kind {
                Kind::This => "*this".to_string(),
                Kind::Var(v) => self.var(*v),
                _ => unreachable!(),
            };
            let _ = write!(out, "{target} = {v2}; }}");
            return out;
        }
        let r = self.root_ref(root, true);
        let root_ty = self.t.expr_ty[root.id];
        let (parent, parent_ty) = self.chain(r, root_ty, segs, &idx, true, true, pos);
        let last = segs.last().expect("a segment");
        let key = last.key().map(str::to_string);
        let at = self.at(pos);
        // `this.list = []` empties the vector in place: its allocation is
        // kept for the pushes that usually follow (a turn's locks, say).
        let emptied = op.is_none()
            && matches!(&value.kind, Kind::Array(items) if items.is_empty())
            && matches!(self.shape(pt), Shape::Arr(_))
            && self.fixed_len(pt).is_none();
        match (self.shape(parent_ty), key) {
            (Shape::Rec(_), Some(k)) => {
                let r = self.rec_info(parent_ty);
                let (_, id, _, always) = self.recs[&r].fields.iter().find(|f| f.0 == k).cloned().expect("field");
                let parent = field_base(&parent);
                if emptied {
                    // The empty literal is not built (nor could its element
                    // type be told from it alone).
                    out.replace_range(new_at..new_end, "");
                    out.replace_range(value_at..value_end, "");
                    let _ = match always {
                        true => write!(out, "{parent}.{id}.clear(); }}"),
                        false => write!(
                            out,
                            "match &mut {parent}.{id} {{ Some(__v) => __v.clear(), __slot => *__slot = Some(Vec::new()) }} }}"
                        ),
                    };
                } else if let Some((lines, temps)) = &refill {
                    // The items only: the vector keeps its allocation.
                    out.replace_range(new_at..new_end, "");
                    out.replace_range(value_at..value_end, lines);
                    let _ = match always {
                        true => write!(out, "{{ let __v = &mut {parent}.{id}; __v.clear(); __v.extend([{temps}]); }} }}"),
                        false => write!(
                            out,
                            "match &mut {parent}.{id} {{ Some(__v) => {{ __v.clear(); __v.extend([{temps}]); }} __slot => *__slot = Some(vec![{temps}]) }} }}"
                        ),
                    };
                } else if always {
                    let _ = write!(out, "{parent}.{id} = {v2}; }}");
                } else {
                    let _ = write!(out, "{parent}.{id} = Some({v2}); }}");
                }
            }
            (Shape::Arr(_), None) => {
                let (code, it) = idx.last().cloned().flatten().expect("an index");
                let it2 = self.int_ty();
                let code = self.convert(code, it, it2, pos);
                let _ = write!(out, "*get_mut({parent}, {code}){at} = {v2}; }}");
            }
            (Shape::Dyn, Some(k)) => {
                let _ = write!(out, "vset_field({parent}, {k:?}, {v2}){at}; }}");
            }
            (Shape::Dyn, None) => {
                let (code, it) = idx.last().cloned().flatten().expect("an index");
                let dt = self.dyn_ty();
                let code = self.convert(code, it, dt, pos);
                let _ = write!(out, "*vindex_mut({parent}, &{code}){at} = {v2}; }}");
            }
            (s, _) => {
                let _ = write!(out, "return Err(Fail::new(\"cannot assign into {s:?}\")){at}; }}");
            }
        }
        out
    }

    // ----- expressions ---------------------------------------------------

    /// An expression whose value is dropped.
    fn expr_unused(&mut self, e: &Expr) -> String {
        match &e.kind {
            Kind::If(c, a, b) if !self.t.value_used.contains(&e.id) => {
                let cond = self.cond(c);
                let then = self.block_value(a, None, e.pos);
                let other = self.block_value(b, None, e.pos);
                format!("if {cond} {then} else {other}")
            }
            Kind::Block(b) if !self.t.value_used.contains(&e.id) => self.block_value(b, None, e.pos),
            _ => format!("let _ = {}", self.expr(e)),
        }
    }

    /// A condition as a Rust `bool`.
    fn cond(&mut self, c: &Expr) -> String {
        let code = self.expr(c);
        let ct = self.t.expr_ty[c.id];
        if self.shape(ct) == Shape::Dyn {
            format!("truthy({code}){}", self.at(c.pos))
        } else {
            code
        }
    }

    /// The value of `e`, an owned Rust value of its inferred type.
    pub fn expr(&mut self, e: &Expr) -> String {
        let ty = self.t.expr_ty[e.id];
        let literal = match &e.kind {
            Kind::Int(i) => Some(format!("({i}i64)")),
            Kind::Bool(b) => Some(b.to_string()),
            Kind::Str(s) => Some(format!("Str::lit({s:?})")),
            Kind::Unit => Some("()".into()),
            Kind::Interp(parts) => {
                let mut code = String::from("{ let mut __s = String::new(); ");
                for p in parts {
                    let c = self.expr(p);
                    let _ = write!(code, "push_text(&mut __s, &({c})); ");
                }
                let _ = write!(code, "text(__s){} }}", self.at(e.pos));
                Some(code)
            }
            _ => None,
        };
        if let Some(code) = literal {
            // A literal whose place holds values of several kinds (a map
            // field that is a number here and a string there) is dynamic.
            return self.dynamic_if_needed(code, ty);
        }
        match &e.kind {
            Kind::Int(_) | Kind::Bool(_) | Kind::Str(_) | Kind::Unit | Kind::Interp(_) => {
                unreachable!("literals above")
            }
            Kind::Var(v) => {
                let copy = self.is_copy(ty);
                if copy {
                    self.var(*v)
                } else {
                    format!("{}.clone()", self.var(*v))
                }
            }
            Kind::This => "(*this).clone()".into(),
            Kind::Array(items) => {
                let el = match self.shape(ty) {
                    Shape::Arr(el) => el,
                    _ => self.dyn_ty(),
                };
                let mut lets = String::new();
                let mut names = Vec::new();
                for x in items {
                    let c = self.expr(x);
                    let xt = self.t.expr_ty[x.id];
                    let c = self.convert(c, xt, el, x.pos);
                    let t = self.tmp();
                    let _ = write!(lets, "let {t} = {c}; ");
                    names.push(t);
                }
                if self.shape(ty) == Shape::Dyn {
                    format!("{{ {lets} Value::Arr(vec![{}]) }}", names.join(", "))
                } else if self.fixed_len(ty).is_some() {
                    // Typed: `[]` alone would leave its element type open.
                    let rty = self.rty(ty);
                    format!("{{ {lets} let __a: {rty} = [{}]; __a }}", names.join(", "))
                } else {
                    format!("{{ {lets} vec![{}] }}", names.join(", "))
                }
            }
            Kind::Map(items) => self.map_literal(ty, items, e.pos),
            Kind::Path(root, _) if self.consumed.contains_key(&e.id) => {
                let Kind::Var(v) = root.kind else {
                    unreachable!("a local's element")
                };
                format!("std::mem::take(&mut {}[{}])", self.var_name(v), self.consumed[&e.id])
            }
            Kind::Path(..) => {
                let r = self.place_ref_value(e);
                let copy = self.is_copy(ty);
                if copy {
                    format!("(*{r})")
                } else {
                    format!("({r}).clone()")
                }
            }
            Kind::Binary(op, a, b) => {
                let (ta, tb) = (self.tmp(), self.tmp());
                let (ta_ty, tb_ty) = (self.t.expr_ty[a.id], self.t.expr_ty[b.id]);
                // Strings compared are read in place, not copied
                // (`this.kind[s] == "open"`): the right side always (the
                // left is evaluated before it), the left when evaluating the
                // right can change nothing (a literal or a variable).
                let strings = op.is_comparison() && self.shape(ta_ty) == Shape::Str && self.shape(tb_ty) == Shape::Str;
                let pure = |x: &Expr| matches!(x.kind, Kind::Str(_) | Kind::Var(_));
                let (ca, oa) = self.operand(a, &ta, strings && pure(b));
                let (cb, ob) = self.operand(b, &tb, strings);
                let code = self.binary_code(*op, oa, ta_ty, ob, tb_ty, e.pos);
                let res = self.binary_ty(*op, ta_ty, tb_ty);
                let code = self.convert(code, res, ty, e.pos);
                format!("{{ let {ta} = {ca}; let {tb} = {cb}; {code} }}")
            }
            Kind::Not(a) => format!("(!{})", self.cond(a)),
            Kind::Neg(a) => {
                let c = self.expr(a);
                let at = self.t.expr_ty[a.id];
                if self.shape(at) == Shape::Dyn {
                    format!("vneg({c}){}", self.at(e.pos))
                } else {
                    format!("neg({c}){}", self.at(e.pos))
                }
            }
            Kind::And(items) => {
                let parts: Vec<String> = items.iter().map(|x| self.cond(x)).collect();
                format!("({})", parts.join(" && "))
            }
            Kind::Or(items) => {
                let parts: Vec<String> = items.iter().map(|x| self.cond(x)).collect();
                format!("({})", parts.join(" || "))
            }
            Kind::In(a, b) => self.in_code(a, b, e.pos),
            Kind::If(c, a, b) => {
                let cond = self.cond(c);
                let then = self.block_value(a, Some(ty), e.pos);
                let other = self.block_value(b, Some(ty), e.pos);
                format!("(if {cond} {then} else {other})")
            }
            Kind::Block(b) => self.block_value(b, Some(ty), e.pos),
            Kind::Call { name, args, .. } => match self.t.callee.get(&e.id).cloned() {
                Some(Callee::Script(target)) => self.script_call(target, args, e.pos),
                Some(Callee::Native(_)) => {
                    let code = self.native(e, name, args);
                    self.dynamic_if_needed(code, ty)
                }
                None => format!("return Err(Fail::new(\"no function '{name}'\")){}", self.at(e.pos)),
            },
            Kind::Method { recv, name, args } => {
                let code = self.method(e, recv, name, args);
                self.dynamic_if_needed(code, ty)
            }
        }
    }

    /// An operand bound to `name`: its code, and how the operation names it
    /// (`(*name)` when `borrow` and it is a place, read through a reference).
    fn operand(&mut self, x: &Expr, name: &str, borrow: bool) -> (String, String) {
        if borrow && x.is_place() {
            (self.place_ref(x), format!("(*{name})"))
        } else {
            (self.expr(x), name.to_string())
        }
    }

    /// `place_ref` for reads, also for paths on non-place roots
    /// (`f(x).a[1]`): the root is evaluated into a temporary first.
    fn place_ref_value(&mut self, e: &Expr) -> String {
        if e.is_place() {
            return self.place_ref(e);
        }
        let Kind::Path(root, segs) = &e.kind else {
            unreachable!("a path")
        };
        let rc = self.expr(root);
        let t = self.tmp();
        let (lets, idx) = self.hoist_indices(segs);
        let rt = self.t.expr_ty[root.id];
        let (code, _) = self.chain(format!("&{t}"), rt, segs, &idx, false, false, e.pos);
        format!("{{ let {t} = {rc}; {lets} &{{ {code} }}.clone() }}")
    }

    fn map_literal(&mut self, ty: Ty, items: &[(String, Expr)], pos: Pos) -> String {
        let mut lets = String::new();
        let mut vals = HashMap::new();
        for (k, x) in items {
            let c = self.expr(x);
            let t = self.tmp();
            let _ = write!(lets, "let {t} = {c}; ");
            vals.insert(k.clone(), (t, self.t.expr_ty[x.id], x.pos));
        }
        if self.shape(ty) == Shape::Dyn {
            let mut code = format!("{{ {lets} let mut __m = ValueMap::new(); ");
            for (k, _) in items {
                let (t, xt, p) = vals[k].clone();
                let dt = self.dyn_ty();
                let v = self.convert(t, xt, dt, p);
                let _ = write!(code, "__m.insert({k:?}.into(), {v}); ");
            }
            code.push_str("Value::Map(__m) }");
            return code;
        }
        let r = self.rec_info(ty);
        let name = self.recs[&r].name.clone();
        let fields = self.recs[&r].fields.clone();
        let mut code = format!("{{ {lets} {name} {{ ");
        for (k, id, ft, always) in fields {
            match vals.get(&k).cloned() {
                Some((t, xt, p)) => {
                    let v = self.convert(t, xt, ft, p);
                    if always {
                        let _ = write!(code, "{id}: {v}, ");
                    } else {
                        let _ = write!(code, "{id}: Some({v}), ");
                    }
                }
                None => {
                    let _ = write!(code, "{id}: None, ");
                }
            }
        }
        let _ = pos;
        code.push_str("} }");
        code
    }

    fn binary_ty(&mut self, op: BinOp, a: Ty, b: Ty) -> Ty {
        if op.is_comparison() {
            return self.t.store.make(Shape::Bool);
        }
        match (self.shape(a), self.shape(b), op) {
            (Shape::Dyn, _, _) | (_, Shape::Dyn, _) => self.dyn_ty(),
            (Shape::Str, _, BinOp::Add) | (_, Shape::Str, BinOp::Add) => self.t.store.make(Shape::Str),
            (Shape::Arr(_), Shape::Arr(_), BinOp::Add) => a,
            _ => self.int_ty(),
        }
    }

    fn binary_code(&mut self, op: BinOp, a: String, at: Ty, b: String, bt: Ty, pos: Pos) -> String {
        let (sa, sb) = (self.shape(at), self.shape(bt));
        let loc = self.at(pos);
        if sa == Shape::Dyn || sb == Shape::Dyn {
            let dt = self.dyn_ty();
            let va = self.convert(a, at, dt, pos);
            let vb = self.convert(b, bt, dt, pos);
            let opname = format!("{op:?}");
            return if op.is_comparison() {
                format!("vcompare(Op::{opname}, &{va}, &{vb}){loc}")
            } else {
                format!("varith(Op::{opname}, {va}, {vb}){loc}")
            };
        }
        let numeric = matches!(sa, Shape::Int | Shape::Unknown) && matches!(sb, Shape::Int | Shape::Unknown);
        match op {
            BinOp::Add if sa == Shape::Str || sb == Shape::Str => format!("cat(&{a}, &{b}){}", self.at(pos)),
            BinOp::Add if matches!(sa, Shape::Arr(_)) => format!("concat({a}, {b}){}", self.at(pos)),
            BinOp::Eq | BinOp::Ne if !numeric && !self.t.store.compatible(at, bt) => (op == BinOp::Ne).to_string(),
            BinOp::Eq | BinOp::Ne if matches!(sa, Shape::Arr(_)) && self.rty(at) != self.rty(bt) => {
                // Arrays of two lengths (or one fixed, one a vector):
                // compared as Rhai compares them, item by item.
                let not = if op == BinOp::Ne { "!" } else { "" };
                format!("({not}(ToValue::to_value(&{a}) == ToValue::to_value(&{b})))")
            }
            BinOp::Eq => format!("({a} == {b})"),
            BinOp::Ne => format!("({a} != {b})"),
            BinOp::Lt => format!("({a} < {b})"),
            BinOp::Le => format!("({a} <= {b})"),
            BinOp::Gt => format!("({a} > {b})"),
            BinOp::Ge => format!("({a} >= {b})"),
            BinOp::Add => format!("add({a}, {b}){loc}"),
            BinOp::Sub => format!("sub({a}, {b}){loc}"),
            BinOp::Mul => format!("mul({a}, {b}){loc}"),
            BinOp::Div => format!("div({a}, {b}){loc}"),
            BinOp::Rem => format!("rem({a}, {b}){loc}"),
            BinOp::Pow => format!("pow({a}, {b}){loc}"),
            BinOp::BitAnd if sa == Shape::Bool => format!("({a} & {b})"),
            BinOp::BitOr if sa == Shape::Bool => format!("({a} | {b})"),
            BinOp::BitXor if sa == Shape::Bool => format!("({a} ^ {b})"),
            BinOp::BitAnd => format!("({a} & {b})"),
            BinOp::BitOr => format!("({a} | {b})"),
            BinOp::BitXor => format!("({a} ^ {b})"),
            BinOp::Shl => format!("shl({a}, {b}){loc}"),
            BinOp::Shr => format!("shr({a}, {b}){loc}"),
        }
    }

    fn in_code(&mut self, a: &Expr, b: &Expr, pos: Pos) -> String {
        let bt = self.t.expr_ty[b.id];
        match (self.shape(bt), &a.kind) {
            (Shape::Rec(_), Kind::Str(k)) => {
                let r = self.rec_info(bt);
                let field = self.recs[&r].fields.iter().find(|f| &f.0 == k).cloned();
                let rb = self.ref_of(b);
                match field {
                    Some((_, _, _, true)) => format!("{{ let _ = {rb}; true }}"),
                    Some((_, id, _, false)) => format!("({rb}).{id}.is_some()"),
                    None => "false".into(),
                }
            }
            (Shape::Arr(el), _) => {
                let ca = self.expr(a);
                let at = self.t.expr_ty[a.id];
                let ca = self.convert(ca, at, el, pos);
                let rb = self.ref_of(b);
                format!("{{ let __n = {ca}; ({rb}).contains(&__n) }}")
            }
            (Shape::Str, _) => {
                let ca = self.expr(a);
                let rb = self.ref_of(b);
                format!("{{ let __n = {ca}; str_contains({rb}, &__n) }}")
            }
            _ => {
                let ca = self.expr(a);
                let at = self.t.expr_ty[a.id];
                let dt = self.dyn_ty();
                let ca = self.convert(ca, at, dt, pos);
                let cb = self.expr(b);
                let cb = self.convert(cb, bt, dt, pos);
                format!("vin(&{ca}, &{cb}){}", self.at(pos))
            }
        }
    }

    /// A reference to the value of `e`: to the place itself when it is
    /// one, else to a temporary.
    fn ref_of(&mut self, e: &Expr) -> String {
        if e.is_place() {
            self.place_ref(e)
        } else {
            format!("&({})", self.expr(e))
        }
    }

    /// A call of a script function: a failure in it gets the call (this
    /// place) added to its chain.
    fn script_call(&mut self, target: FnId, args: &[Expr], pos: Pos) -> String {
        let mut lets = String::new();
        let mut names = Vec::new();
        for (a, &p) in args.iter().zip(&self.funcs[target].params) {
            let c = self.expr(a);
            let at = self.t.expr_ty[a.id];
            let pt = self.t.var_ty[target][p];
            let c = self.convert(c, at, pt, a.pos);
            let t = self.tmp();
            let _ = write!(lets, "let {t} = {c}; ");
            names.push(format!(", {t}"));
        }
        let this = if self.t.writes_this[target] {
            "&mut *this"
        } else {
            "&*this"
        };
        format!(
            "{{ {lets} {}({this}, rt, depth + 1{}){} }}",
            self.fn_name(target),
            names.concat(),
            self.called_at(pos)
        )
    }

    /// Arguments evaluated into temporaries, each converted to `want[i]`
    /// (None: as inferred).
    fn args(&mut self, args: &[Expr], want: &[Option<Ty>]) -> (String, Vec<String>) {
        let mut lets = String::new();
        let mut names = Vec::new();
        for (i, a) in args.iter().enumerate() {
            let c = self.expr(a);
            let at = self.t.expr_ty[a.id];
            let c = match want.get(i).copied().flatten() {
                Some(w) => self.convert(c, at, w, a.pos),
                None => c,
            };
            let t = self.tmp();
            let _ = write!(lets, "let {t} = {c}; ");
            names.push(t);
        }
        (lets, names)
    }

    /// An engine native or built-in function.
    fn native(&mut self, e: &Expr, name: &str, args: &[Expr]) -> String {
        let at = self.at(e.pos);
        let (int, str_) = (self.int_ty(), self.t.store.make(Shape::Str));
        let ints = vec![Some(int); args.len()];
        let facts = self.facts;
        let index_of = |list: &[String], n: &str| list.iter().position(|x| x == n);
        // Names resolved now; an unknown one fails where the interpreter would.
        let resolved = |what: &str, list: Vec<String>, arg: &Expr| -> Result<usize, String> {
            match arg.str_lit() {
                Some(n) => index_of(&list, n).ok_or_else(|| {
                    format!(
                        "return Err(Fail::new({:?})){at}",
                        format!("unknown {what} '{n}' (declared: {})", list.join(", "))
                    )
                }),
                None => Err(format!(
                    "return Err(Fail::new(\"the compiled engine needs the {what} written as a string\")){at}"
                )),
            }
        };
        let decks: Vec<String> = facts.decks.iter().map(|d| d.name.clone()).collect();
        macro_rules! idx_or_fail {
            ($what:expr, $list:expr, $arg:expr) => {
                match resolved($what, $list, $arg) {
                    Ok(i) => i,
                    Err(code) => return format!("{{ {code}; }}"),
                }
            };
        }
        // A deck: named by a literal, resolved now; otherwise at run time
        // (`deck_lets` binds `__deck`, the index).
        let (deck_lets, deck_ix) = match args.first() {
            Some(a) if a.str_lit().is_none() && DECK_NATIVES.contains(&name) => {
                let (lets, n) = self.args(std::slice::from_ref(a), &[Some(str_)]);
                (format!("{lets} let __deck = rt.deck_index(&{}){at};", n[0]), None)
            }
            _ => (String::new(), Some(())),
        };
        macro_rules! deck_or_fail {
            ($arg:expr) => {
                match deck_ix {
                    None => "__deck".to_string(),
                    Some(()) => idx_or_fail!("deck", decks.clone(), $arg).to_string(),
                }
            };
        }
        match name {
            "seats" | "active" | "actor" | "turn" | "in_play" | "winner" | "status" | "step" | "draw_game"
            | "round_left" | "last_secret" => {
                format!("rt.{name}()")
            }
            "end_turn" => format!("rt.end_turn(){at}"),
            "is_out" | "start_turns" | "set_actor" | "eliminate" | "win" | "reveal_secrets" | "reveal_decision" => {
                let (lets, n) = self.args(args, &ints);
                format!("{{ {lets} rt.{name}({}){at} }}", n[0])
            }
            "enter_step" => {
                let steps = facts.steps.iter().map(|s| s.name.clone()).collect();
                let i = idx_or_fail!("step", steps, &args[0]);
                format!("rt.enter_step({i})")
            }
            "stat" => {
                let i = idx_or_fail!("statistic", facts.stats.clone(), &args[0]);
                let (lets, n) = self.args(&args[1..], &[Some(int)]);
                format!("{{ {lets} rt.stat({i}, {})}}", n[0])
            }
            "param" => {
                let params = facts.params.iter().map(|p| p.0.clone()).collect();
                let i = idx_or_fail!("parameter", params, &args[0]);
                match facts.params[i].1 {
                    Scalar::Int => format!("rt.param_int({i})"),
                    Scalar::Bool => format!("rt.param_bool({i})"),
                    _ => format!("rt.param_str({i})"),
                }
            }
            "has_deck" => match args[0].str_lit() {
                Some(n) => decks.iter().any(|d| d == n).to_string(),
                None => {
                    let (lets, n) = self.args(args, &[Some(str_)]);
                    format!("{{ {lets} rt.has_deck(&{}) }}", n[0])
                }
            },
            "deck_left" | "card_ids" => {
                let i = deck_or_fail!(&args[0]);
                format!("{{ {deck_lets} rt.{name}({i}) }}")
            }
            "card" => {
                let i = deck_or_fail!(&args[0]);
                // A deck named at run time: every deck has the same fields
                // (inference checked), so the first deck's builder fits.
                let builder = match args[0].str_lit() {
                    Some(_) => ident(&facts.decks[i.parse::<usize>().unwrap_or(0)].name),
                    None => ident(&facts.decks[0].name),
                };
                let (lets, n) = self.args(&args[1..], &[Some(str_)]);
                format!("{{ {deck_lets} {lets} card_{builder}(rt, {i}, &{}){at} }}", n[0])
            }
            "reveal" => {
                let i = deck_or_fail!(&args[0]);
                let (lets, n) = self.args(&args[1..], &[Some(str_)]);
                format!("{{ {deck_lets} {lets} rt.reveal({i}, &{}){at} }}", n[0])
            }
            "add" => {
                let actions = facts.actions.iter().map(|a| a.name.clone()).collect();
                let k = idx_or_fail!("action", actions, &args[0]);
                let (lets, n) = self.args(&args[1..], &ints);
                format!("{{ {lets} rt.add({k}, &[{}]){at} }}", n.join(", "))
            }
            "add_all" => {
                let actions = facts.actions.iter().map(|a| a.name.clone()).collect();
                let k = idx_or_fail!("action", actions, &args[0]);
                self.add_all(k, &args[1], e.pos)
            }
            "roll" => {
                let (lets, n) = self.args(&args[..2], &[Some(int), Some(int)]);
                let then = args[2].str_lit().unwrap_or_default();
                format!("{{ {lets} rt.roll({}, {}, {then:?}){at} }}", n[0], n[1])
            }
            "draw_secret" => {
                // draw_secret(deck, seat, [count,] then)
                let i = deck_or_fail!(&args[0]);
                let last = args.len() - 1;
                let (lets, n) = self.args(&args[1..last], &vec![Some(int); last - 1]);
                let count = n.get(1).map_or("1", String::as_str);
                let then = args[last].str_lit().unwrap_or_default();
                format!(
                    "{{ {deck_lets} {lets} rt.draw({i}, {count}, Some({}), {then:?}){at} }}",
                    n[0]
                )
            }
            "draw" => {
                // draw(deck, [count,] then)
                let i = deck_or_fail!(&args[0]);
                let last = args.len() - 1;
                let (lets, n) = self.args(&args[1..last], &vec![Some(int); last - 1]);
                let count = n.first().map_or("1", String::as_str);
                let then = args[last].str_lit().unwrap_or_default();
                format!("{{ {deck_lets} {lets} rt.draw({i}, {count}, None, {then:?}){at} }}")
            }
            "shuffle_into" => {
                let i = deck_or_fail!(&args[0]);
                let ids = self.t.store.make(Shape::Arr(str_));
                let want = self.slice_want(&args[1], ids);
                let (lets, n) = self.args(&args[1..], &[want]);
                format!("{{ {deck_lets} {lets} rt.shuffle_into({i}, &{}){at} }}", n[0])
            }
            "words" => {
                let (lets, n) = self.args(args, &[Some(str_)]);
                format!("{{ {lets} rt.words(&{}){at} }}", n[0])
            }
            "card_hook" => self.card_hook(e, args),
            // What only a watching player reads: not even built otherwise
            // (a playout does not pay for the words).
            "narrate" => {
                let r = self.ref_of(&args[0]);
                format!("if rt.cx.watched {{ let __n = to_text({r}); rt.cx.narrate(__n.as_str()); }}")
            }
            "show_moves" => "rt.cx.show_moves()".into(),
            "mark" => {
                let (lets, n) = self.args(args, &[Some(str_), Some(str_)]);
                format!(
                    "if rt.cx.watched {{ {lets} rt.cx.mark({}.as_str(), {}.as_str()); }}",
                    n[0], n[1]
                )
            }
            "distinct" => {
                let r = self.ref_of(&args[0]);
                format!("distinct({r})")
            }
            "at_least" => {
                let r = self.ref_of(&args[0]);
                let (lets, n) = self.args(&args[1..], &[Some(int)]);
                format!("{{ {lets} at_least({r}, {}) }}", n[0])
            }
            "grid_slots" | "grid_place" | "grid_compact" => {
                // The columns and rows are read in place, not copied.
                let (lets, n) = self.args(&args[2..], &vec![Some(int); args.len() - 2]);
                let (c, r) = (self.ref_of(&args[0]), self.ref_of(&args[1]));
                let rest: String = n.iter().map(|x| format!(", {x}")).collect();
                let code = format!("{{ {lets} {name}({c}, {r}{rest}){at} }}");
                // The runtime's shapes: slots are [column, row] pairs; a
                // placement is [columns, rows].
                let int = self.int_ty();
                let natural = if name == "grid_slots" {
                    let pair = self.t.store.array(int, Len::Fixed(2));
                    self.t.store.array(pair, Len::Var)
                } else {
                    let per_seat = self.t.store.array(int, Len::Var);
                    self.t.store.array(per_seat, Len::Fixed(2))
                };
                self.native_result(code, natural, e)
            }
            "recall" => {
                let int = self.int_ty();
                let stamp = self.t.store.make(Shape::Arr(int));
                let want = self.slice_want(&args[1], stamp);
                let (lets, n) = self.args(args, &[Some(int), want]);
                format!("{{ {lets} rt.recall({}, &{}){at} }}", n[0], n[1])
            }
            "remember" => {
                let (lets, n) = self.args(args, &ints);
                format!("{{ {lets} rt.remember({}){at} }}", n[0])
            }
            _ if crate::infer::board_native(name).is_some() => self.board(e, name, args),
            "type_of" => {
                let t = self.t.expr_ty[args[0].id];
                match self.shape(t) {
                    Shape::Dyn => {
                        let r = self.ref_of(&args[0]);
                        format!("Str::lit(({r}).type_name())")
                    }
                    s => format!("Str::lit({:?})", static_type_name(&s)),
                }
            }
            "to_string" => {
                let r = self.ref_of(&args[0]);
                format!("to_text({r})")
            }
            "print" | "debug" => {
                let r = self.ref_of(&args[0]);
                format!("rt.print(&to_text({r}))")
            }
            "min" | "max" => {
                let (lets, n) = self.args(args, &ints);
                format!("{{ {lets} {}.{name}({}) }}", n[0], n[1])
            }
            _ => {
                // A method-style built-in written as a function: f(x, ..).
                // Rhai passes x by value here, so a mutating one changes a copy.
                let recv = &args[0];
                self.method(e, recv, name, &args[1..])
            }
        }
    }

    /// A board native (core's `board` module): arrays of numbers are read
    /// in place when they are typed, converted once when dynamic.
    fn board(&mut self, e: &Expr, name: &str, args: &[Expr]) -> String {
        use rulesmith_core::board::Kind;
        let at = self.at(e.pos);
        let (_, kinds, _) = crate::infer::board_native(name).expect("a board native");
        let mut lets = String::new();
        let mut passed = Vec::new();
        for (a, k) in args.iter().zip(kinds.iter()) {
            let t = self.t.expr_ty[a.id];
            let typed = matches!(self.shape(t), Shape::Arr(el) if self.shape(el) == Shape::Int);
            match k {
                Kind::Ints | Kind::Pairs if typed => passed.push(self.ref_of(a)),
                Kind::Ints | Kind::Pairs => {
                    let int = self.int_ty();
                    let want = self.t.store.make(Shape::Arr(int));
                    let (l, n) = self.args(std::slice::from_ref(a), &[Some(want)]);
                    lets.push_str(&l);
                    passed.push(format!("&{}", n[0]));
                }
                Kind::Int => {
                    let int = self.int_ty();
                    let (l, n) = self.args(std::slice::from_ref(a), &[Some(int)]);
                    lets.push_str(&l);
                    passed.push(n[0].clone());
                }
            }
        }
        let function = name.trim_start_matches("board_");
        let code = format!("{{ {lets} board::{function}({}){at} }}", passed.join(", "));
        let (_, _, ret) = crate::infer::board_native(name).expect("a board native");
        if *ret != Kind::Pairs {
            return code;
        }
        // Pairs as `[x, y]` arrays where inference kept them fixed-size.
        let int = self.int_ty();
        let pair = self.t.store.array(int, Len::Fixed(2));
        let fixed = self.t.store.array(pair, Len::Var);
        let ty = self.t.expr_ty[e.id];
        if self.shape(ty) != Shape::Dyn && self.rty(ty) == self.rty(fixed) {
            return format!("fixed_pairs({code})");
        }
        let pair = self.t.store.array(int, Len::Var);
        let vecs = self.t.store.array(pair, Len::Var);
        self.native_result(code, vecs, e)
    }

    /// A native's result, made with the Rust type of `natural`, as the
    /// type inferred for the call `e` (a dynamic one is converted later).
    fn native_result(&mut self, code: String, natural: Ty, e: &Expr) -> String {
        let ty = self.t.expr_ty[e.id];
        if self.shape(ty) == Shape::Dyn {
            return code;
        }
        self.convert(code, natural, ty, e.pos)
    }

    /// What to convert an array argument to for a native that reads it as
    /// a slice: a typed array is passed as it is (fixed-size or not).
    fn slice_want(&mut self, a: &Expr, want: Ty) -> Option<Ty> {
        let t = self.t.expr_ty[a.id];
        match (self.shape(t), self.shape(want)) {
            (Shape::Arr(x), Shape::Arr(y)) if self.rty(x) == self.rty(y) => None,
            _ => Some(want),
        }
    }

    /// `add_all(kind, [d1, d2, ..])`: every combination, the first domain
    /// slowest; a domain is a number, or an array of numbers or of arrays
    /// of numbers (several values at once).
    fn add_all(&mut self, kind: usize, domains: &Expr, pos: Pos) -> String {
        let at = self.at(pos);
        let Kind::Array(items) = &domains.kind else {
            let c = self.expr(domains);
            let t = self.t.expr_ty[domains.id];
            let dt = self.dyn_ty();
            let c = self.convert(c, t, dt, pos);
            return format!("rt.add_all_dyn({kind}, {c}){at}");
        };
        let mut lets = String::new();
        let mut doms = Vec::new();
        for (i, d) in items.iter().enumerate() {
            let t = self.t.expr_ty[d.id];
            // `at_least(values, min)` as the last domain: its indices go to
            // the product as they are found, with no list in between (read
            // where the call is, after every other domain, as before).
            if let (Kind::Call { args, .. }, true) = (&d.kind, i + 1 == items.len()) {
                if matches!(self.t.callee.get(&d.id), Some(Callee::Native(n)) if n == "at_least") {
                    let int = self.int_ty();
                    let (more, n) = self.args(&args[1..], &[Some(int)]);
                    lets.push_str(&more);
                    let r = self.ref_of(&args[0]);
                    doms.push(format!("Domain::AtLeast({r}, {})", n[0]));
                    continue;
                }
            }
            let name = self.tmp();
            let literal_ints =
                matches!((&d.kind, self.shape(t)), (Kind::Array(_), Shape::Arr(el)) if self.shape(el) == Shape::Int);
            let code = if d.is_place() {
                self.place_ref(d)
            } else if literal_ints {
                // `[0, 1, 2]` as a domain: an array on the stack, not a vector.
                let Kind::Array(elems) = &d.kind else { unreachable!() };
                let mut parts = Vec::new();
                for x in elems {
                    let c = self.expr(x);
                    let v = self.tmp();
                    let _ = write!(lets, "let {v}: i64 = {c}; ");
                    parts.push(v);
                }
                let _ = write!(lets, "let {name} = [{}]; ", parts.join(", "));
                format!("&{name}[..]")
            } else {
                let c = self.expr(d);
                let _ = write!(lets, "let {name} = {c}; ");
                format!("&{name}")
            };
            let shape = self.shape(t);
            let dom = match shape {
                Shape::Int => format!("Domain::One(*{code})"),
                Shape::Arr(el) => match self.shape(el) {
                    Shape::Int => format!("Domain::Ints({code})"),
                    Shape::Arr(_) => format!("Domain::Tuples({code})"),
                    _ => format!("Domain::Dyn(&ToValue::to_value({code}))"),
                },
                _ => format!("Domain::Dyn(&ToValue::to_value({code}))"),
            };
            doms.push(dom);
        }
        format!("{{ {lets} rt.add_all({kind}, &[{}]){at} }}", doms.join(", "))
    }

    fn card_hook(&mut self, e: &Expr, args: &[Expr]) -> String {
        let at = self.at(e.pos);
        let deck = args[0].str_lit().unwrap_or_default();
        let hook = args[2].str_lit().unwrap_or_default();
        let Some(d) = self.facts.decks.iter().position(|x| x.name == deck) else {
            let known: Vec<&str> = self.facts.decks.iter().map(|d| d.name.as_str()).collect();
            let msg = format!("unknown deck '{deck}' (declared decks: {})", known.join(", "));
            return format!("{{ return Err(Fail::new({msg:?})){at}; }}");
        };
        let Kind::Array(items) = &args[3].kind else {
            unreachable!("checked by inference")
        };
        let str_ = self.t.store.make(Shape::Str);
        let (lets, id) = self.args(&args[1..2], &[Some(str_)]);
        // Converted to the hook's parameter types (those of the first card
        // that defines it: inference made them all one).
        let first = self.funcs.iter().position(|f| {
            matches!(f.owner, Owner::Card { deck, .. } if deck == d) && f.name == hook && f.params.len() == items.len()
        });
        let want: Vec<Option<Ty>> = match first {
            Some(t) => self.funcs[t]
                .params
                .iter()
                .map(|&p| Some(self.t.var_ty[t][p]))
                .collect(),
            None => vec![None; items.len()],
        };
        let (lets2, names) = self.args(items, &want);
        let extra: String = names.iter().map(|n| format!(", {n}")).collect();
        format!(
            "{{ {lets} {lets2} hook_{}_{}(this, rt, depth + 1, &{}{extra}){} }}",
            ident(&self.facts.decks[d].name),
            ident(hook),
            id[0],
            self.called_at(e.pos)
        )
    }

    fn method(&mut self, e: &Expr, recv: &Expr, name: &str, args: &[Expr]) -> String {
        let at = self.at(e.pos);
        let rt_ = self.t.expr_ty[recv.id];
        let shape = self.shape(rt_);
        let int = self.int_ty();
        if shape == Shape::Dyn {
            let dt = self.dyn_ty();
            let want: Vec<Option<Ty>> = args.iter().map(|_| Some(dt)).collect();
            let (lets, n) = self.args(args, &want);
            let list = n.iter().map(|x| format!(", {x}")).collect::<String>();
            if is_mutating(name) && recv.is_place() {
                let (plets, p) = self.place_mut(recv);
                return format!(
                    "{{ {lets} {plets} vmethod_mut({p}, {name:?}, vec![{}]){at} }}",
                    n.join(", ")
                );
            }
            let r = self.ref_of(recv);
            let _ = list;
            let res = format!("{{ {lets} vmethod({r}, {name:?}, vec![{}]){at} }}", n.join(", "));
            // The inferred result may be typed (len, contains...).
            let et = self.t.expr_ty[e.id];
            let dt = self.dyn_ty();
            return self.convert(res, dt, et, e.pos);
        }
        match name {
            "len" | "is_empty" => {
                let r = self.ref_of(recv);
                let f = match shape {
                    Shape::Str => format!("str_{name}"),
                    Shape::Rec(_) => format!("rec_{name}"),
                    _ => format!("arr_{name}"),
                };
                format!("{f}({r})")
            }
            "to_string" => {
                let r = self.ref_of(recv);
                format!("to_text({r})")
            }
            "type_of" => format!("Str::lit({:?})", static_type_name(&shape)),
            "sign" => format!("{}.signum()", self.expr(recv)),
            "abs" => format!("neg_abs({}){at}", self.expr(recv)),
            "contains" if shape == Shape::Str => {
                let r = self.ref_of(recv);
                let (lets, n) = self.args(args, &[]);
                format!("{{ {lets} str_contains({r}, &{}) }}", n[0])
            }
            "contains" if matches!(shape, Shape::Rec(_)) => {
                let r = self.ref_of(recv);
                let (lets, n) = self.args(args, &[]);
                format!("{{ {lets} ToValue::to_value({r}).has_key(&{}) }}", n[0])
            }
            "contains" | "index_of" => {
                let el = match shape {
                    Shape::Arr(el) => el,
                    _ => int,
                };
                let (lets, n) = self.args(args, &[Some(el)]);
                let r = self.ref_of(recv);
                if name == "contains" {
                    format!("{{ {lets} ({r}).contains(&{}) }}", n[0])
                } else {
                    format!("{{ {lets} index_of({r}, &{}) }}", n[0])
                }
            }
            _ if is_mutating(name) => {
                let el = match shape {
                    Shape::Arr(el) => el,
                    _ => int,
                };
                let want: Vec<Option<Ty>> = match name {
                    "push" => vec![Some(el)],
                    "insert" => vec![Some(int), Some(el)],
                    _ => vec![Some(int)],
                };
                let (lets, n) = self.args(args, &want);
                let (plets, p, tail) = if recv.is_place() {
                    let (pl, p) = self.place_mut(recv);
                    (pl, p, String::new())
                } else {
                    // A temporary: Rhai mutates a copy.
                    let c = self.expr(recv);
                    let t = self.tmp();
                    (format!("let mut {t} = {c}; "), format!("&mut {t}"), String::new())
                };
                let call = match name {
                    "push" => format!("arr_push({p}, {}){at}", n[0]),
                    "insert" => format!("arr_insert({p}, {}, {}){at}", n[0], n[1]),
                    "clear" => format!("({p}).clear()"),
                    "reverse" => format!("({p}).reverse()"),
                    "sort" => format!("arr_sort({p}){at}"),
                    "truncate" => format!("arr_truncate({p}, {})", n[0]),
                    "shift" => format!("arr_shift({p}){at}"),
                    "pop" => format!("arr_pop({p}){at}"),
                    "remove" => format!("arr_remove({p}, {}){at}", n[0]),
                    _ => unreachable!(),
                };
                format!("{{ {lets} {plets} {call} {tail} }}")
            }
            _ => format!("return Err(Fail::new(\"unsupported method {name}\")){at}"),
        }
    }

    // ----- card hooks and entry points ---------------------------------------

    /// One dispatch function per (deck, hook) the rules call: by card id to
    /// the card's own function, () when the card has none.
    fn hook_dispatch(&mut self) -> String {
        let mut out = String::new();
        let mut used: Vec<(usize, String)> = self.t.hooks_used.iter().cloned().collect();
        used.sort();
        for (d, hook) in used {
            let deck = &self.facts.decks[d];
            let arity = deck.hooks.iter().find(|h| h.0 == hook).map_or(0, |h| h.1);
            // The result type: the join of every card's hook and ().
            let mut res_ty = None;
            let mut cases = Vec::new();
            for (c, (_, _)) in deck.cards.iter().enumerate() {
                let target = self.funcs.iter().position(|f| {
                    f.owner == Owner::Card { deck: d, card: c } && f.name == hook && f.params.len() == arity
                });
                if let Some(t) = target {
                    cases.push((c, t));
                }
            }
            // Parameter types come from the first defining card (all unified).
            let mut params = String::new();
            let mut pnames = Vec::new();
            if let Some(&(_, t)) = cases.first() {
                for (i, &p) in self.funcs[t].params.iter().enumerate() {
                    let pt = self.t.var_ty[t][p];
                    let ty = self.rty(pt);
                    let _ = write!(params, ", a{i}: {ty}");
                    pnames.push(format!("a{i}"));
                }
                // The join type was inferred at the call sites; recompute it
                // here as dynamic unless every hook and () agree.
                let mut all_unit = true;
                for &(_, t) in &cases {
                    let rt = self.t.ret_ty[t];
                    if self.shape(rt) != Shape::Unit {
                        all_unit = false;
                    }
                }
                res_ty = Some(if all_unit { "()" } else { "Value" });
            } else {
                // No card defines the hook: it only checks the card id.
                for i in 0..arity {
                    let _ = write!(params, ", _a{i}: impl Sized");
                    pnames.push(format!("_a{i}"));
                }
            }
            let res = res_ty.unwrap_or("()");
            let _ = writeln!(
                out,
                "pub fn hook_{}_{}(this: &mut This, rt: &mut Rt, depth: u32, id: &Str{params}) -> R<{res}> {{",
                ident(&deck.name),
                ident(&hook)
            );
            let _ = writeln!(out, "    match id.as_str() {{");
            for (c, t) in cases {
                let call_this = if self.t.writes_this[t] { "this" } else { "&*this" };
                let conv = if res == "Value" { ".to_value()" } else { "" };
                let _ = writeln!(
                    out,
                    "        {:?} => Ok(rt.hook_call({:?}, {:?}, |rt| {}({call_this}, rt, depth{}))?{conv}),",
                    deck.cards[c].0,
                    deck.cards[c].0,
                    hook,
                    self.fn_name(t),
                    pnames.iter().map(|p| format!(", {p}.clone()")).collect::<String>()
                );
            }
            let unit = if res == "Value" { "Value::Unit" } else { "()" };
            let _ = writeln!(
                out,
                "        other => {{ rt.check_card({d}, other)?; Ok({unit}) }}\n    }}\n}}\n"
            );
        }
        // card(deck, id) for each deck: a typed record built from the data.
        for (d, deck) in self.facts.decks.iter().enumerate() {
            let ty = self.t.card_ty[d];
            let r = self.rec_info(ty);
            let info_name = self.recs[&r].name.clone();
            let fields = self.recs[&r].fields.clone();
            // Built once per card and kept by the runtime (`Rt::card_record`).
            let _ = writeln!(
                out,
                "pub fn card_{0}(rt: &mut Rt, deck: usize, id: &Str) -> R<{info_name}> {{\n    rt.card_record(deck, id, build_card_{0})\n}}\n\nfn build_card_{0}(c: CardData<'_>) -> R<{info_name}> {{\n    Ok({info_name} {{",
                ident(&deck.name)
            );
            for (key, id, _, always) in fields {
                if always {
                    let _ = writeln!(out, "        {id}: FromValue::from_value(c.field({key:?}))?,");
                } else {
                    let _ = writeln!(out, "        {id}: Some(FromValue::from_value(c.field({key:?}))?),");
                }
            }
            let _ = writeln!(out, "    }})\n}}\n");
        }
        out
    }

    fn entry_points(&mut self) -> String {
        let facts = self.facts;
        let find = |name: &Option<String>, arity: usize| rule_function(self.funcs, name.as_ref()?, arity);
        let find_name = |n: &str, arity: usize| rule_function(self.funcs, n, arity);
        let call = |this: &Self, id: Option<FnId>, args: &str| -> String {
            match id {
                Some(id) => {
                    let t = if this.t.writes_this[id] { "this" } else { "&*this" };
                    format!("{}({t}, rt, 0{args})", this.fn_name(id))
                }
                None => "Ok::<(), Fail>(())".into(),
            }
        };
        let mut out = String::new();
        let _ = writeln!(
            out,
            "#[derive(Default)]\npub struct Generated;\n\nimpl CompiledRules for Generated {{\n    type This = This;"
        );
        let _ = writeln!(out, "    fn fingerprint(&self) -> &'static str {{ FINGERPRINT }}");
        let mut sigs = String::new();
        let mut names = String::new();
        for f in self.funcs {
            match &f.owner {
                Owner::Rules if f.copy_of.is_some() => {
                    let _ = write!(names, "{:?}, ", f.name);
                }
                Owner::Rules => {
                    let _ = write!(sigs, "({:?}, {}), ", f.name, f.params.len());
                    let _ = write!(names, "{:?}, ", f.name);
                }
                Owner::Card { deck, card } => {
                    let n = format!("card {}: {}", facts.decks[*deck].cards[*card].0, f.name);
                    let _ = write!(names, "{n:?}, ");
                }
            }
        }
        let _ = writeln!(
            out,
            "    fn signatures(&self) -> &'static [(&'static str, usize)] {{ &[{sigs}] }}"
        );
        let _ = writeln!(
            out,
            "    fn function_names(&self) -> &'static [&'static str] {{ &[{names}] }}"
        );
        // Unit-returning entry points.
        let simple = [
            ("setup", find(&facts.setup, 0)),
            ("turn_start", find(&facts.turn_start, 0)),
            ("turn_end", find(&facts.turn_end, 0)),
        ];
        for (name, id) in simple {
            let _ = writeln!(
                out,
                "    fn {name}(&self, this: &mut This, rt: &mut Rt) -> R<()> {{ {}.map(drop) }}",
                call(self, id, "")
            );
        }
        // Steps.
        let _ = writeln!(
            out,
            "    fn legal(&self, step: usize, this: &mut This, rt: &mut Rt) -> R<()> {{\n        match step {{"
        );
        for (i, s) in facts.steps.iter().enumerate() {
            let id = find_name(&s.legal, 0);
            let _ = writeln!(out, "            {i} => {}.map(drop),", call(self, id, ""));
        }
        let _ = writeln!(out, "            _ => Ok(()),\n        }}\n    }}");
        let _ = writeln!(
            out,
            "    fn enter(&self, step: usize, this: &mut This, rt: &mut Rt) -> R<()> {{\n        match step {{"
        );
        for (i, s) in facts.steps.iter().enumerate() {
            if let Some(e) = &s.enter {
                let id = find_name(e, 0);
                let _ = writeln!(out, "            {i} => {}.map(drop),", call(self, id, ""));
            }
        }
        let _ = writeln!(out, "            _ => Ok(()),\n        }}\n    }}");
        // Actions.
        let _ = writeln!(
            out,
            "    fn apply(&self, kind: u16, v: &[i32], this: &mut This, rt: &mut Rt) -> R<()> {{\n        match kind {{"
        );
        for (k, a) in facts.actions.iter().enumerate() {
            let id = find_name(&a.apply, a.arity);
            let args: String = (0..a.arity).map(|i| format!(", v[{i}] as i64")).collect();
            let _ = writeln!(out, "            {k} => {}.map(drop),", call(self, id, &args));
        }
        let _ = writeln!(out, "            _ => Ok(()),\n        }}\n    }}");
        // Continuations.
        let _ = writeln!(
            out,
            "    fn resume(&self, then: &str, outcomes: Outcomes, this: &mut This, rt: &mut Rt) -> R<()> {{\n        match then {{"
        );
        let conts: Vec<(String, Scalar)> = self.t.continuations.iter().map(|(k, v)| (k.clone(), *v)).collect();
        for (name, kind) in conts {
            let id = find_name(&name, 1);
            let arg = match kind {
                Scalar::Int => ", outcomes.faces()",
                _ => ", outcomes.cards()",
            };
            let _ = writeln!(out, "            {name:?} => {}.map(drop),", call(self, id, arg));
        }
        let _ = writeln!(
            out,
            "            other => Err(Fail::new(format!(\"no continuation '{{other}}'\"))),\n        }}\n    }}"
        );
        // Queries: their values as dynamic values for the adapter. (entry
        // point, `Query` variant, function, arity)
        let queries = [
            ("summary", "Summary", &facts.summary, 1),
            ("render", "Render", &facts.render, 1),
            ("evaluate", "Evaluate", &facts.evaluate, 1),
            ("labels", "Labels", &facts.labels, 0),
        ];
        for &(name, _, f, arity) in &queries {
            let id = find(f, arity);
            let (params, args) = if arity == 1 {
                (", seat: i64", ", seat")
            } else {
                ("", "")
            };
            let body = match id {
                Some(id) => format!("{}.map(|v| ToValue::to_value(&v))", call(self, Some(id), args)),
                None => "Ok(Value::Unit)".into(),
            };
            let _ = writeln!(
                out,
                "    fn {name}(&self, this: &mut This, rt: &mut Rt{params}) -> R<Value> {{ {body} }}"
            );
        }
        // The same queries on data they only read: no copy of the state.
        let _ = writeln!(
            out,
            "    fn query_ref(&self, q: Query, this: &This, rt: &mut Rt) -> Option<R<Value>> {{\n        match q {{"
        );
        for &(_, variant, f, arity) in &queries {
            let pat = if arity == 1 {
                format!("Query::{variant}(seat)")
            } else {
                format!("Query::{variant}")
            };
            let args = if arity == 1 { ", seat" } else { "" };
            match find(f, arity) {
                Some(id) if !self.t.writes_this[id] => {
                    let _ = writeln!(
                        out,
                        "            {pat} => Some({}(this, rt, 0{args}).map(|v| ToValue::to_value(&v))),",
                        self.fn_name(id)
                    );
                }
                Some(_) => {}
                None => {
                    let _ = writeln!(out, "            {pat} => Some(Ok(Value::Unit)),");
                }
            }
        }
        for (i, inv) in facts.invariants.iter().enumerate() {
            if let Some(id) = find_name(inv, 0).filter(|&id| !self.t.writes_this[id]) {
                let _ = writeln!(
                    out,
                    "            Query::Invariant({i}) => Some({}(this, rt, 0).map(|v| ToValue::to_value(&v))),",
                    self.fn_name(id)
                );
            }
        }
        let _ = writeln!(out, "            _ => None,\n        }}\n    }}");
        let _ = writeln!(
            out,
            "    fn invariant(&self, index: usize, this: &mut This, rt: &mut Rt) -> R<Value> {{\n        match index {{"
        );
        for (i, inv) in facts.invariants.iter().enumerate() {
            let id = find_name(inv, 0);
            let _ = writeln!(
                out,
                "            {i} => {}.map(|v| ToValue::to_value(&v)),",
                call(self, id, "")
            );
        }
        let _ = writeln!(out, "            _ => Ok(Value::Bool(true)),\n        }}\n    }}\n}}");
        out
    }
}

fn static_type_name(s: &Shape) -> &'static str {
    match s {
        Shape::Int | Shape::Unknown => "i64",
        Shape::Bool => "bool",
        Shape::Str => "string",
        Shape::Unit => "()",
        Shape::Arr(_) => "array",
        Shape::Rec(_) => "map",
        Shape::Dyn => "?",
    }
}

/// How many loops enclose each expression of `b` (a loop's condition runs
/// once per turn, so it counts as inside), and each `let`'s variable.
fn loop_depths(b: &Block, d: u32, lets: &mut HashMap<VarId, u32>, out: &mut HashMap<ExprId, u32>) {
    fn expr(e: &Expr, d: u32, lets: &mut HashMap<VarId, u32>, out: &mut HashMap<ExprId, u32>) {
        // Blocks inside an expression may hold loops of their own.
        let mut blocks = Vec::new();
        walk_expr_outside_blocks(
            e,
            &mut |x| {
                out.insert(x.id, d);
            },
            &mut blocks,
        );
        for b in blocks {
            loop_depths(b, d, lets, out);
        }
    }
    for s in &b.stmts {
        match s {
            Stmt::Let(v, e) => {
                lets.insert(*v, d);
                expr(e, d, lets, out);
            }
            Stmt::Expr(e) | Stmt::Return(Some(e), _) => expr(e, d, lets, out),
            Stmt::Assign { place, value, .. } => {
                expr(value, d, lets, out);
                expr(place, d, lets, out);
            }
            Stmt::While(c, body, _) | Stmt::Do(body, c, ..) => {
                expr(c, d + 1, lets, out);
                loop_depths(body, d + 1, lets, out);
            }
            Stmt::For { iter, body, .. } => {
                match iter {
                    Iter::Range { from, to, .. } => {
                        expr(from, d, lets, out);
                        expr(to, d, lets, out);
                    }
                    Iter::Array(a) => expr(a, d, lets, out),
                }
                loop_depths(body, d + 1, lets, out);
            }
            Stmt::Break(_) | Stmt::Continue(_) | Stmt::Return(None, _) => {}
        }
    }
}

/// Is variable `v` written anywhere in `b`: assigned (whole or in part) or
/// changed by a mutating method, at any depth?
fn var_written(b: &Block, v: VarId) -> bool {
    let mut written = false;
    each_written_place(b, &mut |p| {
        written |= match &p.kind {
            Kind::Var(x) => *x == v,
            Kind::Path(root, _) => matches!(root.kind, Kind::Var(x) if x == v),
            _ => false,
        };
    });
    written
}

/// Calls `f` on every place `b` writes, at any depth: each assignment's
/// place and each receiver of a mutating method.
/// Do `a` and `b` lie under two different fields of `this` (`this.locks`
/// and `this.to_react[0]`)? When `this` is a typed record, the emitted
/// code borrows each field on its own ([`field_base`]), so one may be
/// written while the other is borrowed.
fn distinct_fields_of_this(a: &Expr, b: &Expr) -> bool {
    fn first_field(e: &Expr) -> Option<&str> {
        match &e.kind {
            Kind::Path(root, segs) if matches!(root.kind, Kind::This) => segs.first().and_then(Seg::key),
            _ => None,
        }
    }
    matches!((first_field(a), first_field(b)), (Some(x), Some(y)) if x != y)
}

/// The base of a field access on the reference `cur`: `(*this)` for
/// `this` itself, so that the access borrows that one field (Rust
/// borrows `(&*this).f` through a borrow of all of `this`), else `(cur)`.
fn field_base(cur: &str) -> String {
    match cur {
        "&*this" | "&mut *this" => "(*this)".into(),
        _ => format!("({cur})"),
    }
}

fn each_written_place<'b>(b: &'b Block, f: &mut dyn FnMut(&'b Expr)) {
    walk_block(b, &mut |e| {
        if let Kind::Method { recv, name, .. } = &e.kind {
            if is_mutating(name) {
                f(recv);
            }
        }
    });
    let mut stmts = Vec::new();
    every_stmt(b, &mut stmts);
    for s in stmts {
        if let Stmt::Assign { place, .. } = s {
            f(place);
        }
    }
}

/// Every statement in `b`, at any depth: in loop bodies, and in the
/// blocks of `if` and block expressions.
fn every_stmt<'b>(b: &'b Block, out: &mut Vec<&'b Stmt>) {
    for s in &b.stmts {
        out.push(s);
        match s {
            Stmt::While(_, body, _) | Stmt::Do(body, ..) | Stmt::For { body, .. } => every_stmt(body, out),
            _ => {}
        }
        let mut inner: Vec<&'b Block> = Vec::new();
        walk_stmt(s, &mut |e: &'b Expr| match &e.kind {
            Kind::If(_, x, y) => {
                inner.push(x);
                inner.push(y);
            }
            Kind::Block(x) => inner.push(x),
            _ => {}
        });
        for x in inner {
            every_stmt(x, out);
        }
    }
}
