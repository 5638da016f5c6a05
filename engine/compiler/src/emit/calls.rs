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
        if let Some(&target) = self.t.callbacks.get(&e.id) {
            return self.callback(e, recv, name, &args[1..], target);
        }
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
                    "insert" | "pad" => vec![Some(int), Some(el)],
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
                    "pad" => format!("arr_pad({p}, {}, {}){at}", n[0], n[1]),
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

    /// `recv.name(function, extra..)` (see `infer::CALLBACK_METHODS`): a
    /// loop over a copy of the array that calls the script function
    /// `target` per element, as Rhai's array methods do (the element, then
    /// its index if the function takes one; `reduce` the value so far
    /// first).
    fn callback(&mut self, e: &Expr, recv: &Expr, name: &str, extra: &[Expr], target: FnId) -> String {
        let pos = e.pos;
        let rt_ = self.t.expr_ty[recv.id];
        let int = self.int_ty();
        // The elements: a typed array as it is, a dynamic value as its items.
        let (src, el) = match self.shape(rt_) {
            Shape::Arr(el) => (self.expr(recv), el),
            _ => {
                let c = self.expr(recv);
                let dt = self.dyn_ty();
                let c = self.convert(c, rt_, dt, pos);
                (format!("viter({c}){}", self.at(pos)), dt)
            }
        };
        let params: Vec<Ty> = self.funcs[target]
            .params
            .iter()
            .map(|&p| self.t.var_ty[target][p])
            .collect();
        let ret = self.t.ret_ty[target];
        let this = if self.t.writes_this[target] {
            "&mut *this"
        } else {
            "&*this"
        };
        let fname = self.fn_name(target);
        // A call with the given arguments (Rust code of the types `from`).
        let call = |me: &mut Self, given: &[(&str, Ty)]| -> String {
            let mut list = String::new();
            for ((code, from), &to) in given.iter().zip(&params) {
                let c = me.convert(code.to_string(), *from, to, pos);
                let _ = write!(list, ", {c}");
            }
            format!("{fname}({this}, rt, depth + 1{list})")
        };
        let truth = |me: &mut Self, r: &str| -> String {
            match me.shape(ret) {
                Shape::Bool => r.to_string(),
                Shape::Dyn => format!("callback_true(&{r})"),
                // Rhai keeps nothing for a function that never answers true or false.
                _ => format!("{{ let _ = {r}; false }}"),
            }
        };
        let with_index = params.len() == 2;
        let item_args = |x: &str| -> Vec<(String, Ty)> {
            let mut v = vec![(format!("{x}.clone()"), el)];
            if with_index {
                v.push(("(__i as i64)".to_string(), int));
            }
            v
        };
        let called = self.called_at(pos);
        let res_ty = self.t.expr_ty[e.id];
        // filter and map: the new array's elements (dynamic values when
        // the result is one).
        let out_el = match self.shape(res_ty) {
            Shape::Arr(x) => x,
            _ => self.dyn_ty(),
        };
        match name {
            "filter" | "map" | "some" | "all" | "index_of" | "find" => {
                let args = item_args("__x");
                let refs: Vec<(&str, Ty)> = args.iter().map(|(c, t)| (c.as_str(), *t)).collect();
                let c = call(self, &refs);
                let answer = format!("let __r = {c}{called};");
                let yes = truth(self, "__r");
                let body = match name {
                    "filter" => {
                        let item = self.convert("__x.clone()".into(), el, out_el, pos);
                        format!("if {yes} {{ __out.push({item}); }}")
                    }
                    "map" => {
                        let item = self.convert("__r".into(), ret, out_el, pos);
                        format!("__out.push({item});")
                    }
                    "some" => format!("if {yes} {{ __out = true; break; }}"),
                    "all" => format!("if !({yes}) {{ __out = false; break; }}"),
                    "index_of" => format!("if {yes} {{ __out = __i as i64; break; }}"),
                    _ => {
                        let item = self.convert("__x.clone()".into(), el, res_ty, pos);
                        format!("if {yes} {{ __out = {item}; break; }}")
                    }
                };
                let start = match name {
                    "filter" | "map" => {
                        let t = self.rty(out_el);
                        format!("let mut __out: Vec<{t}> = Vec::new();")
                    }
                    "some" => "let mut __out = false;".into(),
                    "all" => "let mut __out = true;".into(),
                    "index_of" => "let mut __out: i64 = -1;".into(),
                    _ => {
                        let unit = self.t.store.make(Shape::Unit);
                        let none = self.convert("()".into(), unit, res_ty, pos);
                        let t = self.rty(res_ty);
                        format!("let mut __out: {t} = {none};")
                    }
                };
                let out = match (name, self.shape(res_ty)) {
                    // A dynamic result: the array as one value.
                    ("filter" | "map", Shape::Dyn) => "Value::Arr(__out)",
                    _ => "__out",
                };
                format!(
                    "{{ let __src = {src}; {start} for (__i, __x) in __src.iter().enumerate() {{ let _ = __i; {answer} {body} }} {out} }}"
                )
            }
            "reduce" | "reduce_rev" => {
                let acc = res_ty;
                let init = match extra.first() {
                    Some(x) => {
                        let c = self.expr(x);
                        let t = self.t.expr_ty[x.id];
                        self.convert(c, t, acc, x.pos)
                    }
                    None => {
                        let unit = self.t.store.make(Shape::Unit);
                        self.convert("()".into(), unit, acc, pos)
                    }
                };
                let mut args = vec![("__acc.clone()".to_string(), acc), ("__x.clone()".to_string(), el)];
                if params.len() == 3 {
                    args.push(("(__i as i64)".to_string(), int));
                }
                let refs: Vec<(&str, Ty)> = args.iter().map(|(c, t)| (c.as_str(), *t)).collect();
                let c = call(self, &refs);
                let next = self.convert("__r".into(), ret, acc, pos);
                let order = if name == "reduce_rev" {
                    "__src.iter().enumerate().rev()"
                } else {
                    "__src.iter().enumerate()"
                };
                let t = self.rty(acc);
                format!(
                    "{{ let __src = {src}; let mut __acc: {t} = {init}; for (__i, __x) in {order} {{ let _ = __i; let __r = {c}{called}; __acc = {next}; }} __acc }}"
                )
            }
            _ => {
                // sort: the comparison's failures and odd answers keep the
                // order, as in Rhai; the array is written back when it is a
                // place (Rhai sorts a temporary copy and drops it).
                let refs = [("__a.clone()", el), ("__b.clone()", el)];
                let c = call(self, &refs);
                let dt = self.dyn_ty();
                let answer = self.convert("__r".into(), ret, dt, pos);
                let sorted = format!(
                    "let mut __v = {src}; sort_by_script(&mut __v[..], &mut |__a, __b| callback_order(match {c} {{ Ok(__r) => Some({answer}), Err(_) => None }}));"
                );
                // Written as a function (`sort(a, f)`), Rhai sorts a copy.
                let method_style = matches!(e.kind, Kind::Method { .. });
                if !method_style || !recv.is_place() {
                    format!("{{ {sorted} }}")
                } else if self.shape(rt_) != Shape::Dyn {
                    let (plets, p) = self.place_mut(recv);
                    format!("{{ {sorted} {plets} *({p}) = __v; }}")
                } else {
                    let (plets, p) = self.place_mut(recv);
                    format!("{{ {sorted} {plets} *({p}) = Value::Arr(__v); }}")
                }
            }
        }
    }

    // ----- card hooks and entry points ---------------------------------------
}
