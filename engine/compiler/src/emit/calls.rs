//! Calls of the scripts' own functions, and methods of arrays, strings,
//! maps and numbers.

use super::*;

impl Emit<'_> {
    /// A call of a script function: a failure in it gets the call (this
    /// place) added to its chain.
    pub(super) fn script_call(&mut self, target: FnId, args: &[Expr], pos: Pos) -> String {
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
    pub(super) fn args(&mut self, args: &[Expr], want: &[Option<Ty>]) -> (String, Vec<String>) {
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

    pub(super) fn method(&mut self, e: &Expr, recv: &Expr, name: &str, args: &[Expr]) -> String {
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
}
