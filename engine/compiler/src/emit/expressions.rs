//! Expressions: paths along fields and indices, operators, literals, `in`.

use super::*;

impl Emit<'_> {
    /// Hoists the index expressions of a path into temporaries; returns the
    /// `let`s and the codes standing for each index.
    pub(super) fn hoist_indices(&mut self, segs: &[Seg]) -> (String, Vec<Option<(String, Ty)>>) {
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
    pub(super) fn chain(
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

    pub(super) fn root_ref(&mut self, root: &Expr, mutable: bool) -> String {
        match (&root.kind, mutable) {
            (Kind::This, true) => "&mut *this".into(),
            (Kind::This, false) => "&*this".into(),
            (Kind::Var(v), true) => format!("&mut {}", self.var(*v)),
            (Kind::Var(v), false) => format!("&{}", self.var(*v)),
            _ => unreachable!("a place root"),
        }
    }

    /// A `&T` to a place (variable, `this`, path), indices hoisted.
    pub(super) fn place_ref(&mut self, e: &Expr) -> String {
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

    pub(super) fn place_mut(&mut self, e: &Expr) -> (String, String) {
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

    /// An expression whose value is dropped.
    pub(super) fn expr_unused(&mut self, e: &Expr) -> String {
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
    pub(super) fn cond(&mut self, c: &Expr) -> String {
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
            // Read only by the method that calls it (`Emit::callback`).
            Kind::FnPtr(_) => "()".into(),
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
    pub(super) fn operand(&mut self, x: &Expr, name: &str, borrow: bool) -> (String, String) {
        if borrow && x.is_place() {
            (self.place_ref(x), format!("(*{name})"))
        } else {
            (self.expr(x), name.to_string())
        }
    }

    /// `place_ref` for reads, also for paths on non-place roots
    /// (`f(x).a[1]`): the root is evaluated into a temporary first.
    pub(super) fn place_ref_value(&mut self, e: &Expr) -> String {
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

    pub(super) fn map_literal(&mut self, ty: Ty, items: &[(String, Expr)], pos: Pos) -> String {
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

    pub(super) fn binary_ty(&mut self, op: BinOp, a: Ty, b: Ty) -> Ty {
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

    pub(super) fn binary_code(&mut self, op: BinOp, a: String, at: Ty, b: String, bt: Ty, pos: Pos) -> String {
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

    pub(super) fn in_code(&mut self, a: &Expr, b: &Expr, pos: Pos) -> String {
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
    pub(super) fn ref_of(&mut self, e: &Expr) -> String {
        if e.is_place() {
            self.place_ref(e)
        } else {
            format!("&({})", self.expr(e))
        }
    }
}
