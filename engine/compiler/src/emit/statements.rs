//! Statements: `let`, assignments (in place where it is safe), loops, and
//! the walks that find what a block writes.

use super::*;

impl Emit<'_> {
    /// `let m = grid_place(a, b, piece, c, r); a = m[0]; b = m[1];`, the
    /// way scripts move a piece, as one update of `a` and `b` in place:
    /// copying both vectors into new ones and dropping the old would
    /// allocate twice a move. Only where nothing can tell: `m` is used
    /// nowhere else, `a` and `b` are two different variables or fields of
    /// `this` (no index to evaluate twice), and the update changes nothing
    /// when the move fails. Returns the code for the three statements.
    pub(super) fn placed_in_place(&mut self, stmts: &[Stmt]) -> Option<String> {
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

    pub(super) fn stmt(&mut self, s: &Stmt) -> String {
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
            Stmt::Throw(e, pos) => {
                // The interpreter's message: the thrown value's text.
                let code = self.expr(e);
                format!(
                    "{{ let __thrown = to_text(&({code})); return Err(Fail::new(__thrown.as_str())){}; }}",
                    self.at(*pos)
                )
            }
        }
    }

    pub(super) fn for_loop(
        &mut self,
        var: VarId,
        counter: Option<VarId>,
        iter: &Iter,
        body: &Block,
        pos: Pos,
    ) -> String {
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
    pub(super) fn element_borrowed(&mut self, var: VarId, a: &Expr, body: &Block) -> bool {
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
    pub(super) fn block_writes(&mut self, body: &Block, a: &Expr) -> bool {
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

    pub(super) fn assign(&mut self, place: &Expr, op: Option<BinOp>, value: &Expr, pos: Pos) -> String {
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
}

/// How many loops enclose each expression of `b` (a loop's condition runs
/// once per turn, so it counts as inside), and each `let`'s variable.
pub(super) fn loop_depths(b: &Block, d: u32, lets: &mut HashMap<VarId, u32>, out: &mut HashMap<ExprId, u32>) {
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
            Stmt::Expr(e) | Stmt::Return(Some(e), _) | Stmt::Throw(e, _) => expr(e, d, lets, out),
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
pub(super) fn var_written(b: &Block, v: VarId) -> bool {
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
pub(super) fn distinct_fields_of_this(a: &Expr, b: &Expr) -> bool {
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
pub(super) fn field_base(cur: &str) -> String {
    match cur {
        "&*this" | "&mut *this" => "(*this)".into(),
        _ => format!("({cur})"),
    }
}

pub(super) fn each_written_place<'b>(b: &'b Block, f: &mut dyn FnMut(&'b Expr)) {
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
pub(super) fn every_stmt<'b>(b: &'b Block, out: &mut Vec<&'b Stmt>) {
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
