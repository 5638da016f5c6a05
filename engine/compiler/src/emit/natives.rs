//! Calls of the engine's natives (`add`, `roll`, `stat`, the grid and
//! board helpers, decks, `card_hook`), names resolved when compiling.

use super::*;

impl Emit<'_> {
    /// An engine native or built-in function.
    pub(super) fn native(&mut self, e: &Expr, name: &str, args: &[Expr]) -> String {
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
            "is_out" | "start_turns" | "end_turn_to" | "set_actor" | "eliminate" | "win" | "reveal_secrets"
            | "reveal_decision" => {
                let (lets, n) = self.args(args, &ints);
                format!("{{ {lets} rt.{name}({}){at} }}", n[0])
            }
            "enter_step" | "stat" | "param" if args[0].str_lit().is_none() => self.named_at_run_time(e, name, args),
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
            "add" | "add_all" if args[0].str_lit().is_none() => self.named_at_run_time(e, name, args),
            "add" => {
                let actions = facts.actions.iter().map(|a| a.name.clone()).collect();
                let k = idx_or_fail!("action", actions, &args[0]);
                let (lets, n) = self.args(&args[1..], &ints);
                format!("{{ {lets} rt.add({k}, &[{}]){at} }}", n.join(", "))
            }
            "add_all" => {
                let actions = facts.actions.iter().map(|a| a.name.clone()).collect();
                let k = idx_or_fail!("action", actions, &args[0]);
                self.add_all(&k.to_string(), &args[1], e.pos)
            }
            "roll" => {
                let (lets, n) = self.args(&args[..2], &[Some(int), Some(int)]);
                let then = args[2].str_lit().unwrap_or_default();
                format!("{{ {lets} rt.roll({}, {}, {then:?}){at} }}", n[0], n[1])
            }
            "roll_secret" => {
                let (lets, n) = self.args(&args[..3], &[Some(int), Some(int), Some(int)]);
                let then = args[3].str_lit().unwrap_or_default();
                format!(
                    "{{ {lets} rt.roll_secret({}, {}, {}, {then:?}){at} }}",
                    n[0], n[1], n[2]
                )
            }
            "set_score" | "add_score" => {
                let (lets, n) = self.args(args, &ints);
                format!("{{ {lets} rt.{name}({}, {}){at} }}", n[0], n[1])
            }
            "score" => {
                let (lets, n) = self.args(args, &ints);
                format!("{{ {lets} rt.score({}){at} }}", n[0])
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
            "deal" => {
                // deal(deck, count, dealer, [pile,] then): names resolved at
                // run time (a deck or a pile on the table).
                let last = args.len() - 1;
                let mut want = vec![Some(str_), Some(int), Some(int)];
                if last == 4 {
                    want.push(Some(str_));
                }
                let (lets, n) = self.args(&args[..last], &want);
                let pile = n.get(3).map_or("None".to_string(), |p| format!("Some(&{p})"));
                let then = args[last].str_lit().unwrap_or_default();
                format!(
                    "{{ {lets} rt.deal(&{}, {}, {}, {pile}, {then:?}){at} }}",
                    n[0], n[1], n[2]
                )
            }
            "pile" | "pile_size" => {
                let (lets, n) = self.args(args, &[Some(str_), Some(int)]);
                format!("{{ {lets} rt.{name}(&{}, {}){at} }}", n[0], n[1])
            }
            "move_card" => {
                let (lets, n) = self.args(args, &[Some(str_), Some(str_), Some(str_), Some(int)]);
                format!(
                    "{{ {lets} rt.move_card(&{}, &{}, &{}, {}){at} }}",
                    n[0], n[1], n[2], n[3]
                )
            }
            "move_all" => {
                let (lets, n) = self.args(args, &[Some(str_), Some(str_), Some(int)]);
                format!("{{ {lets} rt.move_all(&{}, &{}, {}){at} }}", n[0], n[1], n[2])
            }
            "draw_from" => {
                let (lets, n) = self.args(args, &[Some(str_), Some(int), Some(int), Some(str_)]);
                format!(
                    "{{ {lets} rt.draw_from(&{}, {}, {}, &{}){at} }}",
                    n[0], n[1], n[2], n[3]
                )
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
    pub(super) fn board(&mut self, e: &Expr, name: &str, args: &[Expr]) -> String {
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
    pub(super) fn native_result(&mut self, code: String, natural: Ty, e: &Expr) -> String {
        let ty = self.t.expr_ty[e.id];
        if self.shape(ty) == Shape::Dyn {
            return code;
        }
        self.convert(code, natural, ty, e.pos)
    }

    /// What to convert an array argument to for a native that reads it as
    /// a slice: a typed array is passed as it is (fixed-size or not).
    pub(super) fn slice_want(&mut self, a: &Expr, want: Ty) -> Option<Ty> {
        let t = self.t.expr_ty[a.id];
        match (self.shape(t), self.shape(want)) {
            (Shape::Arr(x), Shape::Arr(y)) if self.rty(x) == self.rty(y) => None,
            _ => Some(want),
        }
    }

    /// `add_all(kind, [d1, d2, ..])`: every combination, the first domain
    /// slowest; a domain is a number, or an array of numbers or of arrays
    /// of numbers (several values at once).
    /// `add`, `add_all`, `enter_step`, `stat` or `param` with the name held
    /// in a value: resolved at run time through the interpreter's name
    /// tables (`Names`), with the interpreter's message for an unknown one.
    fn named_at_run_time(&mut self, e: &Expr, name: &str, args: &[Expr]) -> String {
        let at = self.at(e.pos);
        let (int, str_) = (self.int_ty(), self.t.store.make(Shape::Str));
        let (lets, n) = self.args(&args[..1], &[Some(str_)]);
        let lookup = |what: &str| format!("{lets} let __k = rt.{what}_index(&{}){at};", n[0]);
        match name {
            "param" => {
                let code = format!("{{ {lets} rt.param_named(&{}){at} }}", n[0]);
                let dt = self.dyn_ty();
                self.native_result(code, dt, e)
            }
            "enter_step" => format!("{{ {} rt.enter_step(__k) }}", lookup("step")),
            "stat" => {
                let (more, m) = self.args(&args[1..], &[Some(int)]);
                format!("{{ {more} {} rt.stat(__k, {}) }}", lookup("stat"), m[0])
            }
            "add" => {
                let (more, m) = self.args(&args[1..], &vec![Some(int); args.len() - 1]);
                format!("{{ {more} {} rt.add(__k, &[{}]){at} }}", lookup("action"), m.join(", "))
            }
            _ => {
                // add_all: the domains are read after the name, as with a
                // name written out (resolved when compiling).
                let code = self.add_all("__k", &args[1], e.pos);
                format!("{{ {} {code} }}", lookup("action"))
            }
        }
    }

    pub(super) fn add_all(&mut self, kind: &str, domains: &Expr, pos: Pos) -> String {
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

    pub(super) fn card_hook(&mut self, e: &Expr, args: &[Expr]) -> String {
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
}
