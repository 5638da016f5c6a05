//! A script function as a Rust function: its signature, its body's value,
//! and the analyses that decide what it may borrow or move.

use super::*;

impl Emit<'_> {
    /// Functions whose every result is a list of a few items written out
    /// (`return [[a, b]];`, `[[a, b], [c, d]]` at the end), up to
    /// `rulesmith_runtime::FEW`, and whose every caller loops over it
    /// (`for p in this.firing_pairs(a, b)`): they return a `Few`, kept
    /// inline, instead of a vector allocated per call. Nothing else sees
    /// the list, so nothing can tell. Entry points and continuations,
    /// whose results the engine reads, never qualify.
    pub(super) fn few_returns(&mut self) -> HashSet<FnId> {
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
    pub(super) fn few_literal(&mut self, e: &Expr) -> String {
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

    /// The reads of a function that can move an element out of a local
    /// array instead of copying it: `let m = grid_place(..); this.col =
    /// m[0]; this.row = m[1];` takes each vector once, where copying
    /// would allocate. A read `v[c]` qualifies when `v` is a fixed-size
    /// array of vectors or strings, declared by `let` and never written,
    /// and every use of `v` is such a read with a constant index, each
    /// index read once, in the same loop as the `let` (so that no read
    /// runs twice for one value of `v`).
    pub(super) fn consumed_reads(&mut self, body: &Block) -> HashMap<ExprId, usize> {
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
    pub(super) fn borrows(&mut self, v: VarId, e: &Expr, body: &Block) -> bool {
        let et = self.t.expr_ty[e.id];
        let vt = self.t.var_ty[self.cur][v];
        !self.t.writes_this[self.cur]
            && matches!(&e.kind, Kind::Path(root, _) if matches!(root.kind, Kind::This))
            && self.shape(et) != Shape::Dyn
            && !self.is_copy(et)
            && self.rty(et) == self.rty(vt)
            && !var_written(body, v)
    }

    pub(super) fn function(&mut self, id: FnId) -> String {
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
    pub(super) fn block_value(&mut self, b: &Block, want: Option<Ty>, pos: Pos) -> String {
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
        let ends_in_return = matches!(b.stmts.last(), Some(Stmt::Return(..) | Stmt::Throw(..)));
        if ends_in_return {
            out.push_str("#[allow(unreachable_code)]\n");
        }
        let _ = write!(out, "{tail}\n}}");
        out
    }
}
