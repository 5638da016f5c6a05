//! Whole-variant type inference.
//!
//! One pass over every function (rule scripts and card scripts) states
//! what must be equal (unification: a variable and what is assigned to it,
//! a function's parameters and its arguments, an array's elements) and
//! what merely flows into a place where another type may wait (deferred:
//! the branches of an `if`, a function's returns, operands of `+` and
//! comparisons, whose meaning depends on types not known yet). The
//! deferred constraints are then settled to a fixed point. Where two types
//! conflict, the place becomes dynamic (see [`crate::types`]); at a flow,
//! only the receiving side does, and the code generator converts there.

use crate::ir::*;
use crate::lower::is_anonymous;
use crate::types::{Field, Len, Shape, Store, Ty};
use crate::{CompileError, Facts, Scalar};
use rulesmith_core::board::Kind as BoardKind;

/// The signature of board native `name` (core's table), if it is one.
pub fn board_native(name: &str) -> Option<&'static (&'static str, &'static [BoardKind], BoardKind)> {
    rulesmith_core::board::NATIVES.iter().find(|(n, _, _)| *n == name)
}
use std::collections::{BTreeMap, HashMap, HashSet};

/// Every engine native and built-in function the compiler translates by
/// name (besides the script's own functions and `card_hook`). The list is
/// the gate: `docs/compiler.md` lists the same names, and a test keeps the
/// two equal, so the documented subset is the implemented one.
pub const NATIVES: &[&str] = &[
    "active",
    "actor",
    "add",
    "add_all",
    "add_score",
    "at_least",
    "board_cell",
    "board_coords",
    "board_distance",
    "board_footprint",
    "board_line",
    "board_neighbours",
    "board_rays",
    "board_reach",
    "board_reach_block",
    "board_ring",
    "board_seen",
    "board_step",
    "board_targets",
    "card",
    "card_hook",
    "card_ids",
    "debug",
    "deck_left",
    "distinct",
    "draw",
    "draw_game",
    "draw_secret",
    "eliminate",
    "deal",
    "draw_from",
    "end_turn",
    "end_turn_to",
    "enter_step",
    "grid_compact",
    "grid_place",
    "grid_slots",
    "has_deck",
    "in_play",
    "is_out",
    "last_secret",
    "mark",
    "max",
    "min",
    "move_all",
    "move_card",
    "narrate",
    "param",
    "pile",
    "pile_size",
    "print",
    "recall",
    "remember",
    "reveal",
    "reveal_decision",
    "reveal_secrets",
    "roll",
    "roll_secret",
    "round_left",
    "score",
    "seats",
    "set_score",
    "set_actor",
    "show_moves",
    "shuffle_into",
    "start_turns",
    "stat",
    "status",
    "step",
    "to_string",
    "turn",
    "type_of",
    "win",
    "winner",
    "words",
];

/// The built-in methods of arrays, strings, maps and numbers the compiler
/// translates (also callable as functions: `len(a)`); kept equal to
/// `docs/compiler.md` by the same test.
pub const METHODS: &[&str] = &[
    "abs",
    "all",
    "clear",
    "contains",
    "filter",
    "find",
    "index_of",
    "insert",
    "is_empty",
    "len",
    "map",
    "pad",
    "pop",
    "push",
    "reduce",
    "reduce_rev",
    "remove",
    "reverse",
    "shift",
    "sign",
    "some",
    "sort",
    "to_string",
    "truncate",
    "type_of",
];

/// The methods that take a function (`a.filter(|x| x > 0)`), with how
/// many arguments they hand it: the element and its index; `reduce` the
/// accumulated value first; `sort` two elements. A function may leave out
/// the index (the last argument), as in Rhai.
pub const CALLBACK_METHODS: &[&str] = &[
    "all",
    "filter",
    "find",
    "index_of",
    "map",
    "reduce",
    "reduce_rev",
    "some",
    "sort",
];

/// The arities a function passed to callback method `name` may have.
pub fn callback_arities(name: &str) -> &'static [usize] {
    match name {
        "sort" => &[2],
        "reduce" | "reduce_rev" => &[2, 3],
        _ => &[1, 2],
    }
}

/// What a call by name turned out to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Callee {
    Script(FnId),
    /// An engine native or a Rhai built-in, by name (see `emit/natives.rs`).
    Native(String),
}

#[derive(Default)]
pub struct Typed {
    pub store: Store,
    pub expr_ty: Vec<Ty>,
    pub var_ty: Vec<Vec<Ty>>,
    pub ret_ty: Vec<Ty>,
    pub callee: HashMap<ExprId, Callee>,
    /// `if` and block expressions whose value is used.
    pub value_used: HashSet<ExprId>,
    /// Functions that take `this` by `&mut` (they, or what they call, write to it).
    pub writes_this: Vec<bool>,
    /// The record type of `this`.
    pub this_ty: Ty,
    /// Continuations named in roll/draw requests: name -> outcome element type.
    pub continuations: BTreeMap<String, Scalar>,
    /// Card hook calls: (deck, hook) pairs used, for dispatch.
    pub hooks_used: HashSet<(usize, String)>,
    /// The record type of each deck's cards (`card(deck, id)`).
    pub card_ty: Vec<Ty>,
    /// Methods that call a script function (`a.filter(|x| ..)`): the
    /// function each one calls.
    pub callbacks: HashMap<ExprId, FnId>,
}

enum Deferred {
    /// `src` flows into `dst` (if branches, returns).
    Join { dst: Ty, src: Ty, at: String },
    /// Like `Join`, but a dynamic `src` flows as `typed` (a value read
    /// after `type_of` checked its kind).
    Narrow { dst: Ty, src: Ty, typed: Ty, at: String },
    /// `container[index]` where the container was not yet known to be an
    /// array: the index is a number if it still is one once all else is
    /// decided.
    Index { container: Ty, index: Ty },
    /// `res = a + b`.
    Add { res: Ty, a: Ty, b: Ty },
    /// `a <op> b` for a comparison.
    Compare { a: Ty, b: Ty },
}

pub struct Infer<'a> {
    facts: &'a Facts,
    funcs: &'a [Func],
    /// Rule functions by (name, arity); card functions by (deck, card, name, arity).
    rule_fns: &'a HashMap<(String, usize), FnId>,
    card_fns: &'a HashMap<(usize, usize, String, usize), FnId>,
    /// Calls sent to a copy of their function (see `specialize.rs`).
    sites: &'a HashMap<ExprId, FnId>,
    t: Typed,
    deferred: Vec<Deferred>,
}

pub fn infer(
    facts: &Facts,
    funcs: &[Func],
    rule_fns: &HashMap<(String, usize), FnId>,
    card_fns: &HashMap<(usize, usize, String, usize), FnId>,
    sites: &HashMap<ExprId, FnId>,
    expr_count: usize,
) -> Result<Typed, CompileError> {
    let mut store = Store::default();
    let this_ty = store.rec(Some("This".into()), BTreeMap::new());
    let mut t = Typed {
        store,
        this_ty,
        ..Typed::default()
    };
    t.expr_ty = (0..expr_count).map(|_| t.store.fresh()).collect();
    t.var_ty = funcs
        .iter()
        .map(|f| f.vars.iter().map(|_| t.store.fresh()).collect())
        .collect();
    t.ret_ty = funcs.iter().map(|_| t.store.fresh()).collect();
    for d in &facts.decks {
        let mut fields = BTreeMap::new();
        fields.insert(
            "id".to_string(),
            Field {
                ty: t.store.make(Shape::Str),
                always: true,
            },
        );
        for (name, ty, optional) in &d.fields {
            let ft = match ty {
                Scalar::Int => t.store.make(Shape::Int),
                Scalar::Bool => t.store.make(Shape::Bool),
                Scalar::Str => t.store.make(Shape::Str),
                Scalar::Any => t.store.make(Shape::Dyn),
            };
            // An optional field is () on cards without it: a dynamic value.
            let ft = if *optional { t.store.make(Shape::Dyn) } else { ft };
            fields.insert(name.clone(), Field { ty: ft, always: true });
        }
        let ty = t
            .store
            .rec(Some(format!("Card_{}", crate::emit::ident(&d.name))), fields);
        t.card_ty.push(ty);
    }
    let mut inf = Infer {
        facts,
        funcs,
        rule_fns,
        card_fns,
        sites,
        t,
        deferred: Vec::new(),
    };
    inf.entry_points()?;
    for (i, f) in funcs.iter().enumerate() {
        inf.func(i, f)?;
    }
    inf.settle();
    inf.data_arrays_vary();
    inf.t.writes_this = writes_this(funcs, &inf.t.callee, &inf.t.callbacks);
    Ok(inf.t)
}

impl Infer<'_> {
    // Fresh nodes every time: two unrelated numbers must never share a
    // class, or one conflict would make every number dynamic.
    fn int(&mut self) -> Ty {
        self.t.store.make(Shape::Int)
    }
    fn bool_(&mut self) -> Ty {
        self.t.store.make(Shape::Bool)
    }
    fn str_(&mut self) -> Ty {
        self.t.store.make(Shape::Str)
    }
    fn unit(&mut self) -> Ty {
        self.t.store.make(Shape::Unit)
    }

    fn unify_with(&mut self, t: Ty, s: Shape, why: &str) {
        let n = self.t.store.make(s);
        self.t.store.unify(t, n, why);
    }

    fn err(&self, f: &Func, pos: Pos, message: impl Into<String>) -> CompileError {
        CompileError {
            file: self.facts.files[f.file].0.clone(),
            pos,
            message: message.into(),
        }
    }

    /// Parameters of the functions the engine calls have known types.
    fn entry_points(&mut self) -> Result<(), CompileError> {
        let facts = self.facts;
        for a in &facts.actions {
            if let Some(&f) = self.rule_fns.get(&(a.apply.clone(), a.arity)) {
                for &p in &self.funcs[f].params {
                    let v = self.t.var_ty[f][p];
                    self.unify_with(v, Shape::Int, "an action's values are numbers");
                }
            }
        }
        let seat_fns = [&facts.summary, &facts.render, &facts.evaluate];
        for f in seat_fns.into_iter().flatten() {
            if let Some(&id) = self.rule_fns.get(&(f.clone(), 1)) {
                let p = self.funcs[id].params[0];
                let v = self.t.var_ty[id][p];
                self.unify_with(v, Shape::Int, "a seat is a number");
            }
        }
        Ok(())
    }

    fn func(&mut self, id: FnId, f: &Func) -> Result<(), CompileError> {
        let ret = self.t.ret_ty[id];
        let tail = self.block(id, f, &f.body, true)?;
        if let Some(tail) = tail {
            self.deferred.push(Deferred::Join {
                dst: ret,
                src: tail,
                at: format!("the end of {}", f.name),
            });
        }
        Ok(())
    }

    /// The type of a block's value (None when it always returns), noting
    /// which values are used.
    fn block(&mut self, id: FnId, f: &Func, b: &Block, used: bool) -> Result<Option<Ty>, CompileError> {
        let mut last = Some(self.unit());
        for (i, s) in b.stmts.iter().enumerate() {
            let is_last = i + 1 == b.stmts.len();
            last = self.stmt(id, f, s, used && is_last)?;
        }
        Ok(last)
    }

    fn stmt(&mut self, id: FnId, f: &Func, s: &Stmt, used: bool) -> Result<Option<Ty>, CompileError> {
        match s {
            Stmt::Let(v, e) => {
                let t = self.expr(id, f, e, true)?;
                let vt = self.t.var_ty[id][*v];
                self.deferred.push(Deferred::Join {
                    dst: vt,
                    src: t,
                    at: format!("{} line {}", f.name, e.pos.line),
                });
            }
            Stmt::Assign { place, op, value, .. } => {
                let vt = self.expr(id, f, value, true)?;
                let pt = self.expr(id, f, place, true)?;
                match op {
                    None => self.deferred.push(Deferred::Join {
                        dst: pt,
                        src: vt,
                        at: format!("{} line {}", f.name, place.pos.line),
                    }),
                    Some(op) => {
                        let res = self.binary(*op, pt, vt);
                        self.t.store.unify(pt, res, "a place holds one type");
                    }
                }
            }
            Stmt::Expr(e) => {
                let t = self.expr(id, f, e, used)?;
                return Ok(Some(t));
            }
            Stmt::While(c, b, _) => {
                let ct = self.expr(id, f, c, true)?;
                self.cond(ct);
                self.block(id, f, b, false)?;
            }
            Stmt::Do(b, c, _, _) => {
                self.block(id, f, b, false)?;
                let ct = self.expr(id, f, c, true)?;
                self.cond(ct);
            }
            Stmt::For {
                var,
                counter,
                iter,
                body,
                ..
            } => {
                let vt = self.t.var_ty[id][*var];
                match iter {
                    Iter::Range { from, to, .. } => {
                        let a = self.expr(id, f, from, true)?;
                        let b = self.expr(id, f, to, true)?;
                        self.unify_with(a, Shape::Int, "a range counts numbers");
                        self.unify_with(b, Shape::Int, "a range counts numbers");
                        self.unify_with(vt, Shape::Int, "a range counts numbers");
                    }
                    Iter::Array(a) => {
                        let at = self.expr(id, f, a, true)?;
                        match self.t.store.shape(at) {
                            Shape::Dyn => self.t.store.make_dyn(vt, "the loop runs over a dynamic value"),
                            Shape::Str => self.unify_with(vt, Shape::Str, "a string's characters"),
                            _ => {
                                let arr = self.t.store.make(Shape::Arr(vt));
                                self.t.store.unify(at, arr, "a loop runs over an array");
                            }
                        }
                    }
                }
                if let Some(c) = counter {
                    let ct = self.t.var_ty[id][*c];
                    self.unify_with(ct, Shape::Int, "a loop counter is a number");
                }
                self.block(id, f, body, false)?;
            }
            Stmt::Break(_) | Stmt::Continue(_) => {}
            Stmt::Throw(e, _) => {
                // Any value: its text is the message.
                self.expr(id, f, e, true)?;
                return Ok(None);
            }
            Stmt::Return(e, _) => {
                let t = match e {
                    Some(e) => self.expr(id, f, e, true)?,
                    None => self.unit(),
                };
                let ret = self.t.ret_ty[id];
                let at = format!("a return in {} (line {})", f.name, s_pos(s));
                self.deferred.push(Deferred::Join { dst: ret, src: t, at });
                return Ok(None);
            }
        }
        Ok(Some(self.unit()))
    }

    fn cond(&mut self, t: Ty) {
        if !self.t.store.is_dyn(t) {
            self.unify_with(t, Shape::Bool, "a condition is true or false");
        }
    }

    fn binary(&mut self, op: BinOp, a: Ty, b: Ty) -> Ty {
        match op {
            BinOp::Add => {
                let res = self.t.store.fresh();
                self.deferred.push(Deferred::Add { res, a, b });
                res
            }
            op if op.is_comparison() => {
                self.deferred.push(Deferred::Compare { a, b });
                self.bool_()
            }
            _ => {
                if self.t.store.is_dyn(a) || self.t.store.is_dyn(b) {
                    return self.t.store.make(Shape::Dyn);
                }
                self.unify_with(a, Shape::Int, "arithmetic is on numbers");
                self.unify_with(b, Shape::Int, "arithmetic is on numbers");
                self.int()
            }
        }
    }

    fn expr(&mut self, id: FnId, f: &Func, e: &Expr, used: bool) -> Result<Ty, CompileError> {
        let t = self.expr_inner(id, f, e, used)?;
        let slot = self.t.expr_ty[e.id];
        self.t.store.unify(slot, t, "an expression has one type");
        Ok(slot)
    }

    fn expr_inner(&mut self, id: FnId, f: &Func, e: &Expr, used: bool) -> Result<Ty, CompileError> {
        Ok(match &e.kind {
            Kind::Int(_) => self.int(),
            Kind::Bool(_) => self.bool_(),
            Kind::Str(_) => self.str_(),
            Kind::Unit => self.unit(),
            Kind::Interp(parts) => {
                for p in parts {
                    self.expr(id, f, p, true)?;
                }
                self.str_()
            }
            Kind::Var(v) => self.t.var_ty[id][*v],
            Kind::This => self.t.this_ty,
            Kind::Array(items) => {
                let el = self.t.store.fresh();
                for x in items {
                    let xt = self.expr(id, f, x, true)?;
                    self.t.store.unify(el, xt, "an array's elements have one type");
                }
                self.t.store.array(el, Len::Fixed(items.len()))
            }
            Kind::Map(items) => {
                let mut fields = BTreeMap::new();
                for (k, x) in items {
                    let xt = self.expr(id, f, x, true)?;
                    // The value flows into the field: a field that also
                    // gets strings elsewhere must not make the array this
                    // number was read from dynamic.
                    let ft = self.t.store.fresh();
                    self.deferred.push(Deferred::Join {
                        dst: ft,
                        src: xt,
                        at: format!("{} line {}: field {k}", f.name, x.pos.line),
                    });
                    fields.insert(k.clone(), Field { ty: ft, always: true });
                }
                self.t.store.rec(None, fields)
            }
            Kind::Path(root, segs) => {
                let mut cur = self.expr(id, f, root, true)?;
                for s in segs {
                    cur = self.segment(id, f, cur, s)?;
                }
                cur
            }
            Kind::Binary(op, a, b) => {
                let at = self.expr(id, f, a, true)?;
                let bt = self.expr(id, f, b, true)?;
                self.binary(*op, at, bt)
            }
            Kind::Not(a) => {
                let at = self.expr(id, f, a, true)?;
                self.cond(at);
                self.bool_()
            }
            Kind::Neg(a) => {
                let at = self.expr(id, f, a, true)?;
                if self.t.store.is_dyn(at) {
                    self.t.store.make(Shape::Dyn)
                } else {
                    self.unify_with(at, Shape::Int, "negation is on numbers");
                    self.int()
                }
            }
            Kind::And(items) | Kind::Or(items) => {
                for x in items {
                    let xt = self.expr(id, f, x, true)?;
                    self.cond(xt);
                }
                self.bool_()
            }
            Kind::In(a, b) => {
                let at = self.expr(id, f, a, true)?;
                let bt = self.expr(id, f, b, true)?;
                if let (Kind::Str(key), Shape::Rec(_)) = (&a.kind, self.t.store.shape(bt)) {
                    // `"key" in map`: the record gains the field, maybe absent.
                    self.t.store.field(bt, key);
                }
                if let Shape::Arr(el) = self.t.store.shape(bt) {
                    self.deferred.push(Deferred::Compare { a: at, b: el });
                }
                self.bool_()
            }
            Kind::If(c, a, b) => {
                let ct = self.expr(id, f, c, true)?;
                self.cond(ct);
                let at = self.block(id, f, a, used)?;
                let bt = self.block(id, f, b, used)?;
                if used {
                    self.t.value_used.insert(e.id);
                    let res = self.t.store.fresh();
                    let here = format!("{} line {}", f.name, e.pos.line);
                    if let (Some(src), Some(shape)) = (at, narrowed_then(c, a)) {
                        // `if type_of(x) == "i64" { x } else { 0 }`: if `x`
                        // is dynamic, the branch is still a number
                        // (converted, and checked, in the generated code).
                        let typed = self.t.store.make(shape);
                        self.deferred.push(Deferred::Narrow {
                            dst: res,
                            src,
                            typed,
                            at: here.clone(),
                        });
                    } else if let Some(src) = at {
                        self.deferred.push(Deferred::Join {
                            dst: res,
                            src,
                            at: here.clone(),
                        });
                    }
                    if let Some(src) = bt {
                        self.deferred.push(Deferred::Join {
                            dst: res,
                            src,
                            at: here,
                        });
                    }
                    res
                } else {
                    self.unit()
                }
            }
            Kind::Block(b) => {
                let bt = self.block(id, f, b, used)?;
                if used {
                    self.t.value_used.insert(e.id);
                    let res = self.t.store.fresh();
                    if let Some(src) = bt {
                        self.deferred.push(Deferred::Join {
                            dst: res,
                            src,
                            at: format!("{} line {}", f.name, e.pos.line),
                        });
                    }
                    res
                } else {
                    self.unit()
                }
            }
            Kind::Call { name, args, with_this } => self.call(id, f, e, name, args, *with_this)?,
            // Only an argument of a method that calls it: typed there.
            Kind::FnPtr(_) => self.unit(),
            Kind::Method { recv, name, args } if CALLBACK_METHODS.contains(&name.as_str()) && is_callback(args) => {
                let rt = self.expr(id, f, recv, true)?;
                self.callback(id, f, e, rt, name, args)?
            }
            Kind::Method { recv, name, args } => {
                let rt = self.expr(id, f, recv, true)?;
                let mut ats = Vec::new();
                for a in args {
                    ats.push(self.expr(id, f, a, true)?);
                }
                self.t.callee.insert(e.id, Callee::Native(name.clone()));
                self.method(f, e.pos, rt, name, &ats)?
            }
        })
    }

    fn segment(&mut self, id: FnId, f: &Func, cur: Ty, s: &Seg) -> Result<Ty, CompileError> {
        Ok(match s {
            Seg::Field(name) => self.field_of(cur, name),
            Seg::Index(i) if matches!(i.kind, Kind::Str(_)) => {
                self.expr(id, f, i, true)?;
                let Kind::Str(name) = &i.kind else { unreachable!() };
                self.field_of(cur, name)
            }
            Seg::Index(i) => {
                let it = self.expr(id, f, i, true)?;
                match self.t.store.shape(cur) {
                    Shape::Dyn => self.t.store.make(Shape::Dyn),
                    Shape::Str => {
                        self.unify_with(it, Shape::Int, "a string is indexed by number");
                        self.str_()
                    }
                    Shape::Rec(_) => {
                        self.t.store.make_dyn(cur, "a map indexed by a computed key");
                        self.t.store.make(Shape::Dyn)
                    }
                    known => {
                        let el = self.t.store.fresh();
                        let arr = self.t.store.make(Shape::Arr(el));
                        self.t.store.unify(cur, arr, "indexing by number needs an array");
                        if matches!(known, Shape::Arr(_)) && !self.t.store.is_dyn(it) {
                            self.unify_with(it, Shape::Int, "an array is indexed by number");
                        } else {
                            // Not known to be an array yet (a variable that
                            // gets a map later is a dictionary): the index is
                            // a number only if it stays an array.
                            self.deferred.push(Deferred::Index {
                                container: cur,
                                index: it,
                            });
                        }
                        if self.t.store.is_dyn(cur) {
                            self.t.store.make(Shape::Dyn)
                        } else {
                            el
                        }
                    }
                }
            }
        })
    }

    fn field_of(&mut self, cur: Ty, name: &str) -> Ty {
        match self.t.store.shape(cur) {
            Shape::Dyn => self.t.store.make(Shape::Dyn),
            Shape::Unknown => {
                let ft = self.t.store.fresh();
                let r = self.t.store.open_rec(name, ft);
                self.t.store.unify(cur, r, "a property needs a map");
                ft
            }
            Shape::Rec(_) => self.t.store.field(cur, name).expect("a record"),
            _ => {
                self.t
                    .store
                    .make_dyn(cur, &format!("property '{name}' of something that is not a map"));
                self.t.store.make(Shape::Dyn)
            }
        }
    }

    fn call(
        &mut self,
        id: FnId,
        f: &Func,
        e: &Expr,
        name: &str,
        args: &[Expr],
        with_this: bool,
    ) -> Result<Ty, CompileError> {
        // Script functions first: a copy made for this call, the card's
        // own, or the rules'.
        let target = match &f.owner {
            _ if self.sites.contains_key(&e.id) => self.sites.get(&e.id).copied(),
            Owner::Rules => self.rule_fns.get(&(name.to_string(), args.len())).copied(),
            // A card's own functions, else the rules' (the loader refuses a
            // card function that shares a rule function's name and arity).
            Owner::Card { deck, card } => self
                .card_fns
                .get(&(*deck, *card, name.to_string(), args.len()))
                .or_else(|| self.rule_fns.get(&(name.to_string(), args.len())))
                .copied(),
        };
        if let Some(target) = target {
            for (a, &p) in args.iter().zip(&self.funcs[target].params) {
                let at = self.expr(id, f, a, true)?;
                let pt = self.t.var_ty[target][p];
                self.deferred.push(Deferred::Join {
                    dst: pt,
                    src: at,
                    at: format!("a call of {name} ({} line {})", f.name, e.pos.line),
                });
            }
            self.t.callee.insert(e.id, Callee::Script(target));
            return Ok(self.t.ret_ty[target]);
        }
        if name == "card_hook" && with_this {
            return self.card_hook(id, f, e, args);
        }
        if CALLBACK_METHODS.contains(&name) && args.len() >= 2 && is_callback(&args[1..]) {
            // `filter(a, |x| ..)`: the method written as a function.
            let rt = self.expr(id, f, &args[0], true)?;
            return self.callback(id, f, e, rt, name, &args[1..]);
        }
        if name == "add_all" && args.len() == 2 {
            // The domains are a tuple: each its own type.
            let nt = self.expr(id, f, &args[0], true)?;
            self.unify_with(nt, Shape::Str, "an action name is a string");
            match &args[1].kind {
                Kind::Array(items) => {
                    for x in items {
                        self.expr(id, f, x, true)?;
                    }
                }
                _ => {
                    self.expr(id, f, &args[1], true)?;
                }
            }
            self.t.callee.insert(e.id, Callee::Native(name.to_string()));
            return Ok(self.unit());
        }
        let mut ats = Vec::new();
        for a in args {
            ats.push(self.expr(id, f, a, true)?);
        }
        self.t.callee.insert(e.id, Callee::Native(name.to_string()));
        let (int, bool_, str_, unit) = (self.int(), self.bool_(), self.str_(), self.unit());
        let want = |inf: &mut Self, i: usize, t: Ty| {
            if !inf.t.store.is_dyn(ats[i]) {
                inf.t.store.unify(ats[i], t, "a native's argument");
            }
        };
        let arity = |n: usize| args.len() == n;
        let facts = self.facts;
        Ok(match name {
            "seats" | "active" | "actor" | "turn" | "in_play" | "winner" | "round_left" | "last_secret" if arity(0) => {
                int
            }
            "status" | "step" if arity(0) => str_,
            "is_out" if arity(1) => {
                want(self, 0, int);
                bool_
            }
            "end_turn" | "draw_game" if arity(0) => unit,
            "start_turns" | "end_turn_to" | "set_actor" | "eliminate" | "win" | "reveal_secrets"
            | "reveal_decision"
                if arity(1) =>
            {
                want(self, 0, int);
                unit
            }
            "enter_step" if arity(1) => {
                want(self, 0, str_);
                unit
            }
            "stat" if arity(2) => {
                want(self, 0, str_);
                want(self, 1, int);
                unit
            }
            "param" if arity(1) => {
                want(self, 0, str_);
                match args[0].str_lit().and_then(|n| facts.params.iter().find(|p| p.0 == n)) {
                    Some((_, Scalar::Int)) => int,
                    Some((_, Scalar::Bool)) => bool_,
                    Some((_, Scalar::Str)) => str_,
                    _ => self.t.store.make(Shape::Dyn),
                }
            }
            "has_deck" if arity(1) => {
                want(self, 0, str_);
                bool_
            }
            "deck_left" if arity(1) => {
                want(self, 0, str_);
                int
            }
            "card_ids" if arity(1) => {
                want(self, 0, str_);
                self.t.store.array(str_, Len::Var)
            }
            "card" if arity(2) => {
                want(self, 0, str_);
                want(self, 1, str_);
                match args[0].str_lit().map(|n| facts.decks.iter().position(|d| d.name == n)) {
                    Some(Some(d)) => self.t.card_ty[d],
                    // An unknown deck fails at run time, as in the interpreter:
                    // the call gives no value, so its type is left open.
                    Some(None) => self.t.store.fresh(),
                    // A deck named at run time: one card type for every deck,
                    // which needs every deck to declare the same fields.
                    None => {
                        let same = facts.decks.windows(2).all(|w| w[0].fields == w[1].fields);
                        if facts.decks.is_empty() || !same {
                            return Err(self.err(
                                f,
                                e.pos,
                                crate::refused::message("card with a computed deck when decks differ"),
                            ));
                        }
                        for d in 1..facts.decks.len() {
                            let (a, b) = (self.t.card_ty[0], self.t.card_ty[d]);
                            self.t.store.unify(a, b, "cards of decks named at run time");
                        }
                        self.t.card_ty[0]
                    }
                }
            }
            "reveal" if arity(2) => {
                want(self, 0, str_);
                want(self, 1, str_);
                unit
            }
            "add" if !args.is_empty() && args.len() <= 7 => {
                want(self, 0, str_);
                for i in 1..args.len() {
                    want(self, i, int);
                }
                unit
            }
            "add_all" if arity(2) => {
                want(self, 0, str_);
                unit
            }
            "roll" if arity(3) => {
                want(self, 0, int);
                want(self, 1, int);
                want(self, 2, str_);
                self.continuation(f, &args[2], Scalar::Int)?;
                unit
            }
            "roll_secret" if arity(4) => {
                want(self, 0, int);
                want(self, 1, int);
                want(self, 2, int);
                want(self, 3, str_);
                self.continuation(f, &args[3], Scalar::Int)?;
                unit
            }
            "set_score" | "add_score" if arity(2) => {
                want(self, 0, int);
                want(self, 1, int);
                unit
            }
            "score" if arity(1) => {
                want(self, 0, int);
                int
            }
            "draw_secret" if arity(3) => {
                want(self, 0, str_);
                want(self, 1, int);
                want(self, 2, str_);
                self.continuation(f, &args[2], Scalar::Str)?;
                unit
            }
            "draw" if arity(2) => {
                want(self, 0, str_);
                want(self, 1, str_);
                self.continuation(f, &args[1], Scalar::Str)?;
                unit
            }
            "draw_secret" if arity(4) => {
                want(self, 0, str_);
                want(self, 1, int);
                want(self, 2, int);
                want(self, 3, str_);
                self.continuation(f, &args[3], Scalar::Str)?;
                unit
            }
            "draw" if arity(3) => {
                want(self, 0, str_);
                want(self, 1, int);
                want(self, 2, str_);
                self.continuation(f, &args[2], Scalar::Str)?;
                unit
            }
            "deal" if arity(4) || arity(5) => {
                want(self, 0, str_);
                want(self, 1, int);
                want(self, 2, int);
                want(self, 3, str_);
                let last = args.len() - 1;
                want(self, last, str_);
                self.continuation(f, &args[last], Scalar::Str)?;
                unit
            }
            "pile" if arity(2) => {
                want(self, 0, str_);
                want(self, 1, int);
                self.t.store.array(str_, Len::Var)
            }
            "pile_size" if arity(2) => {
                want(self, 0, str_);
                want(self, 1, int);
                int
            }
            "move_card" if arity(4) => {
                want(self, 0, str_);
                want(self, 1, str_);
                want(self, 2, str_);
                want(self, 3, int);
                unit
            }
            "move_all" if arity(3) => {
                want(self, 0, str_);
                want(self, 1, str_);
                want(self, 2, int);
                unit
            }
            "draw_from" if arity(4) => {
                want(self, 0, str_);
                want(self, 1, int);
                want(self, 2, int);
                want(self, 3, str_);
                unit
            }
            "shuffle_into" if arity(2) => {
                want(self, 0, str_);
                let ids = self.t.store.make(Shape::Arr(str_));
                want(self, 1, ids);
                unit
            }
            "words" if arity(1) => {
                want(self, 0, str_);
                self.t.store.array(str_, Len::Var)
            }
            "distinct" if arity(1) => {
                let a = self.t.store.make(Shape::Arr(int));
                want(self, 0, a);
                int
            }
            "at_least" if arity(2) => {
                let a = self.t.store.make(Shape::Arr(int));
                want(self, 0, a);
                want(self, 1, int);
                self.t.store.array(int, Len::Var)
            }
            "grid_slots" | "grid_place" | "grid_compact" => {
                let a = self.t.store.make(Shape::Arr(int));
                want(self, 0, a);
                if args.len() > 1 {
                    want(self, 1, a);
                }
                for i in 2..args.len() {
                    want(self, i, int);
                }
                // grid_slots: every slot, each a [column, row] pair;
                // grid_place and grid_compact: [columns, rows], one entry
                // per seat in each.
                if name == "grid_slots" {
                    let pair = self.t.store.array(int, Len::Fixed(2));
                    self.t.store.array(pair, Len::Var)
                } else {
                    let per_seat = self.t.store.array(int, Len::Var);
                    self.t.store.array(per_seat, Len::Fixed(2))
                }
            }
            "recall" if arity(2) => {
                want(self, 0, int);
                let el = self.int();
                let stamp = self.t.store.make(Shape::Arr(el));
                want(self, 1, stamp);
                self.int()
            }
            "remember" if arity(1) => {
                want(self, 0, int);
                unit
            }
            _ if board_native(name).is_some_and(|(_, kinds, _)| kinds.len() == args.len()) => {
                let (_, kinds, ret) = board_native(name).expect("just matched");
                for (i, k) in kinds.iter().enumerate() {
                    let t = match k {
                        BoardKind::Int => self.int(),
                        BoardKind::Ints | BoardKind::Pairs => {
                            let el = self.int();
                            self.t.store.make(Shape::Arr(el))
                        }
                    };
                    want(self, i, t);
                }
                match ret {
                    BoardKind::Int => int,
                    BoardKind::Ints => self.t.store.array(int, Len::Var),
                    BoardKind::Pairs => {
                        let pair = self.t.store.array(int, Len::Fixed(2));
                        self.t.store.array(pair, Len::Var)
                    }
                }
            }
            "narrate" if arity(1) => unit,
            "show_moves" if arity(0) => bool_,
            "mark" if arity(2) => {
                want(self, 0, str_);
                want(self, 1, str_);
                unit
            }
            "type_of" | "to_string" if arity(1) => str_,
            "print" | "debug" if arity(1) => unit,
            "min" | "max" if arity(2) => {
                want(self, 0, int);
                want(self, 1, int);
                int
            }
            _ if !args.is_empty() && !with_this => {
                // Method-style built-ins written as functions: len(a), abs(x)...
                let rt = ats[0];
                let rest = ats[1..].to_vec();
                self.method(f, e.pos, rt, name, &rest)?
            }
            _ => {
                return Err(self.err(
                    f,
                    e.pos,
                    crate::refused::message_for(
                        "other methods and functions",
                        &format!("{name} with {} argument(s)", args.len()),
                    ),
                ))
            }
        })
    }

    /// The script function `name` taking `arity` arguments, as a call from
    /// `f` finds it: a card's own functions first, then the rules'.
    fn script_fn(&self, f: &Func, name: &str, arity: usize) -> Option<FnId> {
        match &f.owner {
            Owner::Rules => self.rule_fns.get(&(name.to_string(), arity)).copied(),
            Owner::Card { deck, card } => self
                .card_fns
                .get(&(*deck, *card, name.to_string(), arity))
                .or_else(|| self.rule_fns.get(&(name.to_string(), arity)))
                .copied(),
        }
    }

    /// `recv.name(function, ..)`: a method that calls a script function for
    /// each element (see [`CALLBACK_METHODS`]). The elements flow into the
    /// function's parameters, its result into the method's.
    fn callback(
        &mut self,
        id: FnId,
        f: &Func,
        e: &Expr,
        rt: Ty,
        name: &str,
        args: &[Expr],
    ) -> Result<Ty, CompileError> {
        let Kind::FnPtr(fn_name) = &args[0].kind else {
            return Err(self.err(f, args[0].pos, crate::refused::message("a function pointer")));
        };
        let extra = match name {
            "reduce" | "reduce_rev" => 1,
            _ => 0,
        };
        if args.len() > 1 + extra {
            return Err(self.err(
                f,
                e.pos,
                crate::refused::message_for(
                    "other methods and functions",
                    &format!("{name} with {} argument(s)", args.len()),
                ),
            ));
        }
        let arities = callback_arities(name);
        let Some(target) = arities.iter().find_map(|&n| self.script_fn(f, fn_name, n)) else {
            let takes: Vec<String> = arities.iter().map(|n| n.to_string()).collect();
            let message = if is_anonymous(fn_name) {
                format!("{name} calls its function with {} argument(s)", takes.join(" or "))
            } else {
                format!(
                    "{name} calls its function with {} argument(s): no script function '{fn_name}' takes that many",
                    takes.join(" or ")
                )
            };
            return Err(self.err(f, args[0].pos, message));
        };
        if uses_this(&self.funcs[target]) {
            let message = crate::refused::message_for("this in a function given to a method", fn_name);
            return Err(self.err(f, args[0].pos, message));
        }
        self.expr(id, f, &args[0], true)?;
        let mut extra_ty = Vec::new();
        for a in &args[1..] {
            extra_ty.push(self.expr(id, f, a, true)?);
        }
        self.t.callee.insert(e.id, Callee::Native(name.to_string()));
        self.t.callbacks.insert(e.id, target);
        let el = if self.t.store.is_dyn(rt) {
            self.t.store.make(Shape::Dyn)
        } else {
            let el = self.t.store.fresh();
            let a = self.t.store.make(Shape::Arr(el));
            self.t
                .store
                .unify(rt, a, "a method that calls a function per element is on arrays");
            match self.t.store.shape(rt) {
                Shape::Arr(el) => el,
                _ => self.t.store.make(Shape::Dyn),
            }
        };
        let params: Vec<Ty> = self.funcs[target]
            .params
            .iter()
            .map(|&p| self.t.var_ty[target][p])
            .collect();
        let ret = self.t.ret_ty[target];
        let at = format!("{} line {}: {name}", f.name, e.pos.line);
        let flow = |inf: &mut Self, dst: Ty, src: Ty| {
            inf.deferred.push(Deferred::Join {
                dst,
                src,
                at: at.clone(),
            })
        };
        let index = self.int();
        Ok(match name {
            "sort" => {
                flow(self, params[0], el);
                flow(self, params[1], el);
                self.unit()
            }
            "reduce" | "reduce_rev" => {
                let acc = self.t.store.fresh();
                let init = match extra_ty.first() {
                    Some(&t) => t,
                    None => self.unit(),
                };
                flow(self, acc, init);
                flow(self, acc, ret);
                flow(self, params[0], acc);
                flow(self, params[1], el);
                if params.len() == 3 {
                    flow(self, params[2], index);
                }
                acc
            }
            _ => {
                flow(self, params[0], el);
                if params.len() == 2 {
                    flow(self, params[1], index);
                }
                match name {
                    "filter" if self.t.store.is_dyn(rt) => self.t.store.make(Shape::Dyn),
                    "filter" => self.t.store.array(el, Len::Var),
                    "map" => {
                        let out = self.t.store.fresh();
                        flow(self, out, ret);
                        self.t.store.array(out, Len::Var)
                    }
                    "some" | "all" => self.bool_(),
                    "index_of" => self.int(),
                    _ => {
                        // find: the element, or () when none matches.
                        let out = self.t.store.fresh();
                        flow(self, out, el);
                        let unit = self.unit();
                        flow(self, out, unit);
                        out
                    }
                }
            }
        })
    }

    fn continuation(&mut self, f: &Func, then: &Expr, outcome: Scalar) -> Result<(), CompileError> {
        let Some(name) = then.str_lit() else {
            return Err(self.err(f, then.pos, crate::refused::message("a computed continuation")));
        };
        let Some(&target) = self.rule_fns.get(&(name.to_string(), 1)) else {
            return Err(self.err(
                f,
                then.pos,
                format!("no script function '{name}' taking 1 argument to receive the outcomes"),
            ));
        };
        let el = match outcome {
            Scalar::Int => self.int(),
            _ => self.str_(),
        };
        let arr = self.t.store.array(el, Len::Var);
        let p = self.t.var_ty[target][self.funcs[target].params[0]];
        self.t.store.unify(p, arr, "the outcomes of a chance event");
        match self.t.continuations.insert(name.to_string(), outcome) {
            Some(old) if old != outcome => Err(self.err(
                f,
                then.pos,
                format!("'{name}' receives both dice and cards: give each its own continuation"),
            )),
            _ => Ok(()),
        }
    }

    /// `this.card_hook(deck, id, hook, [args])`: the argument array is a
    /// tuple, each position typed by the hook's parameters.
    fn card_hook(&mut self, id: FnId, f: &Func, e: &Expr, args: &[Expr]) -> Result<Ty, CompileError> {
        if args.len() != 4 {
            return Err(self.err(
                f,
                e.pos,
                "card_hook takes a deck, a card id, a hook name and an array of arguments",
            ));
        }
        let (Some(deck), Some(hook)) = (args[0].str_lit(), args[2].str_lit()) else {
            return Err(self.err(f, e.pos, crate::refused::message("card_hook with a computed name")));
        };
        let Some(d) = self.facts.decks.iter().position(|x| x.name == deck) else {
            // An unknown deck fails at run time, as in the interpreter.
            for a in &args[..3] {
                self.expr(id, f, a, true)?;
            }
            match &args[3].kind {
                Kind::Array(items) => {
                    for x in items {
                        self.expr(id, f, x, true)?;
                    }
                }
                _ => {
                    self.expr(id, f, &args[3], true)?;
                }
            }
            self.t.callee.insert(e.id, Callee::Native("card_hook".into()));
            return Ok(self.t.store.fresh());
        };
        self.expr(id, f, &args[0], true)?;
        self.expr(id, f, &args[2], true)?;
        let idt = self.expr(id, f, &args[1], true)?;
        if !self.t.store.is_dyn(idt) {
            self.unify_with(idt, Shape::Str, "a card id is a string");
        }
        let Kind::Array(items) = &args[3].kind else {
            return Err(self.err(
                f,
                args[3].pos,
                "card_hook: write the hook's arguments as an array literal [..]",
            ));
        };
        let mut item_ty = Vec::new();
        for x in items {
            item_ty.push(self.expr(id, f, x, true)?);
        }
        self.t.hooks_used.insert((d, hook.to_string()));
        self.t.callee.insert(e.id, Callee::Native("card_hook".into()));
        let res = self.t.store.fresh();
        // A card without the hook gives ().
        let u = self.unit();
        self.deferred.push(Deferred::Join {
            dst: res,
            src: u,
            at: format!("card_hook, line {}", e.pos.line),
        });
        for c in 0..self.facts.decks[d].cards.len() {
            if let Some(&target) = self.card_fns.get(&(d, c, hook.to_string(), items.len())) {
                for (i, &p) in self.funcs[target].params.iter().enumerate() {
                    let pt = self.t.var_ty[target][p];
                    self.deferred.push(Deferred::Join {
                        dst: pt,
                        src: item_ty[i],
                        at: format!("card_hook {hook} ({} line {})", f.name, e.pos.line),
                    });
                }
                let rt = self.t.ret_ty[target];
                self.deferred.push(Deferred::Join {
                    dst: res,
                    src: rt,
                    at: format!("card_hook, line {}", e.pos.line),
                });
            }
        }
        Ok(res)
    }

    /// Built-in methods of arrays, strings, maps and numbers.
    fn method(&mut self, f: &Func, pos: Pos, recv: Ty, name: &str, args: &[Ty]) -> Result<Ty, CompileError> {
        if !METHODS.contains(&name) {
            return Err(CompileError {
                file: self.facts.files[f.file].0.clone(),
                pos,
                message: crate::refused::message_for("other methods and functions", name),
            });
        }
        let (int, bool_, str_, unit) = (self.int(), self.bool_(), self.str_(), self.unit());
        if self.t.store.is_dyn(recv) {
            return Ok(match name {
                "len" => int,
                "is_empty" | "contains" => bool_,
                "to_string" | "type_of" => str_,
                _ => self.t.store.make(Shape::Dyn),
            });
        }
        let shape = self.t.store.shape(recv);
        let arr_el = |inf: &mut Self| -> Ty {
            let el = inf.t.store.fresh();
            let a = inf.t.store.make(Shape::Arr(el));
            inf.t.store.unify(recv, a, "an array method");
            match inf.t.store.shape(recv) {
                Shape::Arr(el) => el,
                _ => inf.t.store.make(Shape::Dyn),
            }
        };
        let n = args.len();
        let result = match (name, &shape) {
            ("len", _) if n == 0 => int,
            ("is_empty", _) if n == 0 => bool_,
            ("to_string", _) | ("type_of", _) if n == 0 => str_,
            ("sign" | "abs", Shape::Int | Shape::Unknown) if n == 0 => {
                self.t.store.unify(recv, int, "a number method");
                int
            }
            ("contains", Shape::Str) if n == 1 => bool_,
            ("contains", Shape::Rec(_)) if n == 1 => bool_,
            ("push", _) if n == 1 => {
                // The value flows into the array (a number pushed into an
                // array that turns out dynamic stays a number).
                let el = arr_el(self);
                self.deferred.push(Deferred::Join {
                    dst: el,
                    src: args[0],
                    at: format!("{} line {}: push", f.name, pos.line),
                });
                unit
            }
            ("contains" | "index_of", _) if n == 1 => {
                let el = arr_el(self);
                if !self.t.store.is_dyn(args[0]) && !self.t.store.is_dyn(el) {
                    self.t.store.unify(el, args[0], "an array's elements have one type");
                }
                match name {
                    "push" => unit,
                    "contains" => bool_,
                    _ => int,
                }
            }
            ("shift" | "pop", _) if n == 0 => arr_el(self),
            ("remove", _) if n == 1 => {
                self.t.store.unify(args[0], int, "remove takes an index");
                arr_el(self)
            }
            ("pad", _) if n == 2 => {
                self.t.store.unify(args[0], int, "pad takes a length");
                let el = arr_el(self);
                self.deferred.push(Deferred::Join {
                    dst: el,
                    src: args[1],
                    at: format!("{} line {}: pad", f.name, pos.line),
                });
                unit
            }
            ("insert", _) if n == 2 => {
                self.t.store.unify(args[0], int, "insert takes an index");
                let el = arr_el(self);
                self.t.store.unify(el, args[1], "an array's elements have one type");
                unit
            }
            ("clear" | "reverse", _) if n == 0 => {
                arr_el(self);
                unit
            }
            ("truncate", _) if n == 1 => {
                self.t.store.unify(args[0], int, "truncate takes a length");
                arr_el(self);
                unit
            }
            ("sort", _) if n == 0 => {
                let el = arr_el(self);
                self.t.store.unify(el, int, "the compiler sorts arrays of numbers");
                unit
            }
            _ => {
                return Err(CompileError {
                    file: self.facts.files[f.file].0.clone(),
                    pos,
                    message: crate::refused::message_for(
                        "other methods and functions",
                        &format!("{name} with {n} argument(s) on {}", self.t.store.describe(recv)),
                    ),
                })
            }
        };
        if resizes(name) && matches!(self.t.store.shape(recv), Shape::Arr(_)) {
            self.t.store.set_len(recv, Len::Var);
        }
        Ok(result)
    }

    /// `src` flows into `dst` (see `Deferred::Join`); whether that changed
    /// a type. `defaults`: the last phase, where open sources take the
    /// place's type.
    fn flow(&mut self, dst: Ty, src: Ty, at: &str, defaults: bool) -> bool {
        // A value flows: scalars copy their kind (no shared
        // class, so a later conflict at `dst` cannot spread
        // back to `src`); arrays and maps are one value and
        // share their element types; a dynamic source is
        // converted (checked) where the place is typed.
        let (sd, ss) = (self.t.store.shape(dst), self.t.store.shape(src));
        match (&sd, &ss) {
            (Shape::Dyn, _) => {}
            (_, Shape::Unknown) => {
                // A source nothing else decides (a value that
                // never exists, such as the result of a call
                // that always fails) takes the place's type.
                if defaults && self.t.store.find(dst) != self.t.store.find(src) {
                    match sd {
                        Shape::Int | Shape::Bool | Shape::Str | Shape::Unit => {
                            let n = self.t.store.make(sd.clone());
                            self.t.store.unify(src, n, "a value flows");
                        }
                        _ => self.t.store.unify(dst, src, "a value flows"),
                    }
                    return true;
                }
            }
            (_, Shape::Dyn) => {
                // Faithful to the interpreter: whatever the
                // dynamic value is, the place can hold it.
                let why = format!("{at}: a dynamic value flows here");
                self.t.store.make_dyn(dst, &why);
                return true;
            }
            (Shape::Unknown, Shape::Int | Shape::Bool | Shape::Str | Shape::Unit) => {
                let n = self.t.store.make(ss.clone());
                self.t.store.unify(dst, n, "a value flows");
                return true;
            }
            (a, b) if a == b && !matches!(a, Shape::Arr(_) | Shape::Rec(_)) => {}
            _ => {
                if self.t.store.compatible(dst, src) {
                    if self.t.store.find(dst) != self.t.store.find(src) {
                        self.t.store.unify(dst, src, "a value flows");
                        return true;
                    }
                } else {
                    let why = format!(
                        "{at}: gets {} and {}",
                        self.t.store.describe(dst),
                        self.t.store.describe(src)
                    );
                    self.t.store.make_dyn(dst, &why);
                    return true;
                }
            }
        }
        false
    }

    /// Arrays that live in the game's data (`this`, cards, and every record
    /// and array inside them) are saved and loaded as JSON, and a loaded
    /// array may have any length: they keep a vector. (Arrays of one type
    /// share a class, so a literal assigned into `this` is a vector too.)
    fn data_arrays_vary(&mut self) {
        let mut todo = vec![self.t.this_ty];
        todo.extend(self.t.card_ty.iter().copied());
        let mut seen = HashSet::new();
        while let Some(t) = todo.pop() {
            if !seen.insert(self.t.store.find(t)) {
                continue;
            }
            match self.t.store.shape(t) {
                Shape::Arr(el) => {
                    self.t.store.set_len(t, Len::Var);
                    todo.push(el);
                }
                Shape::Rec(_) => {
                    let r = self.t.store.rec_id(t).expect("a record");
                    todo.extend(self.t.store.recs[r].fields.values().map(|f| f.ty));
                }
                _ => {}
            }
        }
    }

    /// Settles the deferred constraints to a fixed point, then decides what
    /// is still open: `+` and comparisons of unknowns default to numbers.
    fn settle(&mut self) {
        let mut defaults = false;
        loop {
            let mut changed = false;
            let deferred = std::mem::take(&mut self.deferred);
            for d in &deferred {
                match *d {
                    Deferred::Join { dst, src, ref at } => changed |= self.flow(dst, src, at, defaults),
                    Deferred::Narrow {
                        dst,
                        src,
                        typed,
                        ref at,
                    } => {
                        // A dynamic `x`, or one of another kind (then the
                        // branch never runs): the branch has the tested kind.
                        let (ss, st) = (self.t.store.shape(src), self.t.store.shape(typed));
                        let other = matches!(ss, Shape::Int | Shape::Bool | Shape::Str | Shape::Unit) && ss != st;
                        let src = if ss == Shape::Dyn || other { typed } else { src };
                        changed |= self.flow(dst, src, at, defaults);
                    }
                    Deferred::Add { res, a, b } => {
                        let (sa, sb, sr) = (self.t.store.shape(a), self.t.store.shape(b), self.t.store.shape(res));
                        if let (Shape::Arr(_), Shape::Arr(_)) = (&sa, &sb) {
                            // Concatenation (`a + b`, `a += b`): the sum's
                            // length is the operands' added, and the
                            // runtime joins two vectors.
                            for t in [a, b, res] {
                                self.t.store.set_len(t, Len::Var);
                            }
                        }
                        if sr != Shape::Unknown {
                            continue;
                        }
                        let new = match (&sa, &sb) {
                            (Shape::Dyn, _) | (_, Shape::Dyn) => Some(Shape::Dyn),
                            (Shape::Str, _) | (_, Shape::Str) => Some(Shape::Str),
                            (Shape::Int, Shape::Int) => Some(Shape::Int),
                            (Shape::Arr(_), Shape::Arr(_)) => {
                                self.t.store.unify(a, b, "arrays joined by +");
                                self.t.store.unify(res, a, "arrays joined by +");
                                changed = true;
                                None
                            }
                            (Shape::Unknown, _) | (_, Shape::Unknown) if defaults => {
                                // Numbers, unless one side is known otherwise.
                                if sa == Shape::Unknown {
                                    self.unify_with(a, Shape::Int, "+ on numbers");
                                }
                                if sb == Shape::Unknown {
                                    self.unify_with(b, Shape::Int, "+ on numbers");
                                }
                                changed = true;
                                None
                            }
                            (Shape::Unknown, _) | (_, Shape::Unknown) => None,
                            _ => Some(Shape::Dyn),
                        };
                        if let Some(s) = new {
                            let t = match s {
                                Shape::Dyn => {
                                    let t = self.t.store.make(Shape::Dyn);
                                    self.t.store.why_dyn.insert(t, "+ of values of different kinds".into());
                                    t
                                }
                                s => self.t.store.make(s),
                            };
                            self.t.store.unify(res, t, "the result of +");
                            changed = true;
                        }
                    }
                    Deferred::Index { container, index } => {
                        let arr = matches!(self.t.store.shape(container), Shape::Arr(_));
                        if defaults && arr && self.t.store.shape(index) == Shape::Unknown {
                            self.unify_with(index, Shape::Int, "an array is indexed by number");
                            changed = true;
                        }
                    }
                    Deferred::Compare { a, b } => {
                        let (sa, sb) = (self.t.store.shape(a), self.t.store.shape(b));
                        // Only once nothing else decides: comparing is weak
                        // evidence that two values have one type.
                        let open = sa == Shape::Unknown || sb == Shape::Unknown;
                        let neither_dyn = sa != Shape::Dyn && sb != Shape::Dyn;
                        if defaults && open && neither_dyn && self.t.store.find(a) != self.t.store.find(b) {
                            self.t.store.unify(a, b, "values compared");
                            changed = true;
                        }
                    }
                }
            }
            self.deferred = deferred;
            if !changed {
                if defaults {
                    break;
                }
                defaults = true;
            }
        }
    }
}

/// The type a branch's value is known to have when its condition is
/// `type_of(x) == "T"` and the branch is just `x` (an optional value read
/// after its test).
fn narrowed_then(cond: &Expr, then: &Block) -> Option<Shape> {
    let Kind::Binary(BinOp::Eq, l, r) = &cond.kind else {
        return None;
    };
    let (call, name) = match (&l.kind, &r.kind) {
        (Kind::Call { .. }, Kind::Str(n)) => (l, n),
        (Kind::Str(n), Kind::Call { .. }) => (r, n),
        _ => return None,
    };
    let Kind::Call {
        name: f,
        args,
        with_this: false,
    } = &call.kind
    else {
        return None;
    };
    let shape = match name.as_str() {
        "i64" => Shape::Int,
        "bool" => Shape::Bool,
        "string" => Shape::Str,
        _ => return None,
    };
    match (f.as_str(), args.as_slice(), then.stmts.as_slice()) {
        ("type_of", [tested], [Stmt::Expr(x)]) if same_place(tested, x) => Some(shape),
        _ => None,
    }
}

/// Two expressions that read the same place: a variable, or a path of
/// fields and literal or variable indices from the same root.
fn same_place(a: &Expr, b: &Expr) -> bool {
    match (&a.kind, &b.kind) {
        (Kind::Var(x), Kind::Var(y)) => x == y,
        (Kind::This, Kind::This) => true,
        (Kind::Int(x), Kind::Int(y)) => x == y,
        (Kind::Str(x), Kind::Str(y)) => x == y,
        (Kind::Path(ra, sa), Kind::Path(rb, sb)) => {
            same_place(ra, rb)
                && sa.len() == sb.len()
                && sa.iter().zip(sb).all(|(x, y)| match (x, y) {
                    (Seg::Field(m), Seg::Field(n)) => m == n,
                    (Seg::Index(i), Seg::Index(j)) => same_place(i, j),
                    _ => false,
                })
        }
        _ => false,
    }
}

/// Which functions may write to `this`: those that assign to it or call a
/// mutating method on it, and, to a fixed point, those that call them or
/// run card hooks (whose scripts may write).
fn writes_this(funcs: &[Func], callee: &HashMap<ExprId, Callee>, callbacks: &HashMap<ExprId, FnId>) -> Vec<bool> {
    let mut writes: Vec<bool> = funcs
        .iter()
        .map(|f| {
            let mut w = false;
            let mut visit = |e: &Expr| {
                if let Kind::Method { recv, name, .. } = &e.kind {
                    if is_mutating(name) && rooted_at_this(recv) {
                        w = true;
                    }
                }
                if let Kind::Call { name, .. } = &e.kind {
                    if name == "card_hook" {
                        w = true;
                    }
                }
            };
            walk_block(&f.body, &mut visit);
            w || assigns_this(&f.body)
        })
        .collect();
    loop {
        let mut changed = false;
        for (i, f) in funcs.iter().enumerate() {
            if writes[i] {
                continue;
            }
            let mut w = false;
            walk_block(&f.body, &mut |e: &Expr| {
                if let Some(Callee::Script(t)) = callee.get(&e.id) {
                    if writes[*t] {
                        w = true;
                    }
                }
                if let Some(t) = callbacks.get(&e.id) {
                    if writes[*t] {
                        w = true;
                    }
                }
            });
            if w {
                writes[i] = true;
                changed = true;
            }
        }
        if !changed {
            return writes;
        }
    }
}

/// Does `f` read or call through `this` itself?
fn uses_this(f: &Func) -> bool {
    let mut found = false;
    walk_block(&f.body, &mut |e| {
        found |= matches!(e.kind, Kind::This | Kind::Call { with_this: true, .. });
    });
    found
}

/// Is the first of `args` a function (`|x| ..`, `Fn("name")`)?
fn is_callback(args: &[Expr]) -> bool {
    matches!(
        args.first(),
        Some(Expr {
            kind: Kind::FnPtr(_),
            ..
        })
    )
}

fn s_pos(s: &Stmt) -> u32 {
    match s {
        Stmt::Return(_, p) => p.line,
        _ => 0,
    }
}

pub fn is_mutating(name: &str) -> bool {
    matches!(
        name,
        "push" | "shift" | "pop" | "remove" | "insert" | "clear" | "truncate" | "reverse" | "sort" | "pad"
    )
}

/// The methods that change an array's length: an array type any of them
/// is called on has no fixed length.
pub fn resizes(name: &str) -> bool {
    matches!(
        name,
        "push" | "shift" | "pop" | "remove" | "insert" | "clear" | "truncate" | "pad"
    )
}

pub fn rooted_at_this(e: &Expr) -> bool {
    match &e.kind {
        Kind::This => true,
        Kind::Path(root, _) => matches!(root.kind, Kind::This),
        _ => false,
    }
}

fn assigns_this(b: &Block) -> bool {
    b.stmts.iter().any(|s| match s {
        Stmt::Assign { place, .. } => rooted_at_this(place) || assigns_in_exprs(place),
        Stmt::Let(_, e) | Stmt::Expr(e) | Stmt::Return(Some(e), _) | Stmt::Throw(e, _) => assigns_in_exprs(e),
        Stmt::While(c, b, _) | Stmt::Do(b, c, _, _) => assigns_in_exprs(c) || assigns_this(b),
        Stmt::For { iter, body, .. } => {
            let i = match iter {
                Iter::Range { from, to, .. } => assigns_in_exprs(from) || assigns_in_exprs(to),
                Iter::Array(a) => assigns_in_exprs(a),
            };
            i || assigns_this(body)
        }
        _ => false,
    })
}

/// Blocks nested inside expressions (if-expressions) may assign too.
fn assigns_in_exprs(e: &Expr) -> bool {
    let mut found = false;
    walk_expr(e, &mut |x: &Expr| match &x.kind {
        Kind::If(_, a, b) => found |= assigns_this(a) || assigns_this(b),
        Kind::Block(b) => found |= assigns_this(b),
        _ => {}
    });
    found
}

#[cfg(test)]
mod tests {
    use super::{METHODS, NATIVES};

    /// The names `docs/compiler.md` lists in its tables of natives and
    /// methods, in backticks, as the table rows write them.
    fn documented(section: &str) -> Vec<String> {
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/compiler.md"))
            .expect("docs/compiler.md");
        let start = doc
            .find(section)
            .unwrap_or_else(|| panic!("docs/compiler.md has no '{section}'"));
        let rest = &doc[start + section.len()..];
        let end = rest.find("\n## ").unwrap_or(rest.len());
        let mut names: Vec<String> = rest[..end]
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
            .map(str::to_string)
            .collect();
        names.sort();
        names.dedup();
        names
    }

    #[test]
    fn the_documented_subset_is_the_translated_one() {
        let mut natives: Vec<String> = NATIVES.iter().map(|s| s.to_string()).collect();
        natives.sort();
        assert_eq!(documented("## Natives the compiler translates"), natives);
        let mut methods: Vec<String> = METHODS.iter().map(|s| s.to_string()).collect();
        methods.sort();
        assert_eq!(documented("## Methods the compiler translates"), methods);
    }
}
