//! The entry points the engine calls by name, and the dispatch of card hooks.

use super::*;

impl Emit<'_> {
    /// One dispatch function per (deck, hook) the rules call: by card id to
    /// the card's own function, () when the card has none.
    pub(super) fn hook_dispatch(&mut self) -> String {
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

    pub(super) fn entry_points(&mut self) -> String {
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
            let outcomes = match kind {
                Scalar::Int => "outcomes.faces()",
                _ => "outcomes.cards()",
            };
            // A continuation whose parameter is dynamic (the faces stored
            // into a nested array, say) takes them as a `Value`.
            let dynamic = id.is_some_and(|f| {
                let p = self.funcs[f].params[0];
                let ty = self.t.var_ty[f][p];
                self.shape(ty) == Shape::Dyn
            });
            let arg = if dynamic {
                format!(", ToValue::to_value(&{outcomes})")
            } else {
                format!(", {outcomes}")
            };
            let _ = writeln!(out, "            {name:?} => {}.map(drop),", call(self, id, &arg));
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

pub(super) fn static_type_name(s: &Shape) -> &'static str {
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
