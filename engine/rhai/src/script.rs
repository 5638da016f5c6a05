//! The interpreter: a sandboxed Rhai engine per game, the native
//! functions it lends to rule scripts, and the mapping of script failures to
//! file, function and line. [`Interpreter`] implements core's [`Rules`].
//!
//! Natives are thin wrappers over core's [`Ctx`] methods, which hold their
//! semantics: they resolve names ([`Names`]), call the method, and turn its
//! message into a Rhai error. While a rule runs, the game lends its `Ctx`
//! (with the state's [`Core`](rulesmith_core::state::Core) moved in); the
//! interpreter swaps it into the record its native closures share, and
//! back out when the call returns. Only `card_hook` re-enters Rhai from
//! inside a native call, to run a card's own script with the same data as
//! `this`; it holds no borrow of the shared record while it does.
//!
//! Rhai keeps the chain of script calls for ordinary errors, but lets a
//! sandbox limit (operations, call depth, data size) pass through every call
//! without it. Keeping a chain on every call would slow every game, so the
//! interpreter only notes that it was lost ([`ScriptError::calls_lost`]);
//! the game then runs the failed step again in diagnostic mode
//! ([`Rules::diagnose`]), on engines that turn the limit into an ordinary
//! error at the first variable the script reads past it (see [`Diagnosis`]).

use rhai::{
    Array, CallFnOptions, Dynamic, Engine, EvalAltResult, FuncArgs, ImmutableString, Map, NativeCallContext, Position,
    Scope, AST, INT,
};
use rulesmith_core::ctx::Place;
use rulesmith_core::ctx::{Ctx, Names};
use rulesmith_core::error::{Diagnostic, Frame, LoadError, ScriptError};
use rulesmith_core::legal;
use rulesmith_core::natives;
use rulesmith_core::rules::{Data, Entry, FunctionProfile, Limits, Reply, Rules};
use rulesmith_core::source::{compile_source, fn_line, sandbox};
use rulesmith_core::state::Outcome;
use rulesmith_core::variant::{Value, Variant};
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;

type NativeResult<T> = Result<T, Box<EvalAltResult>>;

/// A variant's scripts, compiled once and run by Rhai: the reference
/// implementation of [`Rules`].
pub struct Interpreter {
    variant: Arc<Variant>,
    limits: Limits,
    info: Rc<Info>,
    engine: Engine,
    compiled: Compiled,
    /// The record the natives share; holds the game's lent `Ctx` during a call.
    ctx: Rc<RefCell<Ctx>>,
    /// Diagnostic mode's engines, built on first use (see [`Diagnosis`]).
    learner: OnceCell<Engine>,
    tracer: OnceCell<Engine>,
}

impl Interpreter {
    /// Compiles `variant`'s rule and card scripts. With `count_operations`,
    /// Rhai reports its operation count to the profile (a few percent slower).
    pub fn new(variant: Arc<Variant>, limits: Limits, count_operations: bool) -> Result<Interpreter, LoadError> {
        let info = Rc::new(Info::new(variant.clone(), limits));
        let ctx = Rc::new(RefCell::new(Ctx::default()));
        let engine = build_engine(&info, &ctx, None, count_operations);
        let compiled = compile(&engine, &variant);
        let cards = compile_cards(&engine, &variant, compiled.as_ref().ok());
        let (compiled, cards) = match (compiled, cards) {
            (Ok(c), Ok(k)) => (c, k),
            (a, b) => {
                let diagnostics = a.err().into_iter().chain(b.err()).flatten().collect();
                return Err(LoadError::new(diagnostics));
            }
        };
        let _ = info
            .functions
            .set(compiled.signatures.iter().map(|(n, _)| n.clone()).collect());
        let _ = info.card_scripts.set(cards);
        Ok(Interpreter {
            variant,
            limits,
            info,
            engine,
            compiled,
            ctx,
            learner: OnceCell::new(),
            tracer: OnceCell::new(),
        })
    }

    /// The engine that runs the scripts now: the sandbox, or in diagnostic
    /// mode one of the diagnostic engines (see [`Diagnosis`]).
    fn engine(&self) -> &Engine {
        let d = &self.info.diagnosis;
        if !d.on.get() {
            return &self.engine;
        }
        let build = |phase| build_engine(&self.info, &self.ctx, Some(phase), false);
        if d.must_learn() {
            self.learner.get_or_init(|| build(Phase::Learn))
        } else {
            self.tracer.get_or_init(|| build(Phase::Trace))
        }
    }

    /// Calls script function `name` with `this` bound to the data.
    fn run(&self, this: &mut Dynamic, name: &str, args: impl FuncArgs) -> Result<Dynamic, Box<EvalAltResult>> {
        let options = CallFnOptions::new()
            .eval_ast(false)
            .rewind_scope(true)
            .bind_this_ptr(this);
        let engine = self.engine();
        let outer = self.info.diagnosis.start_call();
        let result = self.info.measured(
            || name.to_string(),
            || engine.call_fn_with_options::<Dynamic>(options, &mut Scope::new(), &self.compiled.ast, name, args),
        );
        self.info.diagnosis.end_call(outer);
        result
    }

    /// The script function behind an entry point ("" when the variant
    /// names none; the game calls only those it names).
    fn function<'a>(&'a self, entry: &Entry<'a>) -> &'a str {
        let v = &self.variant;
        let name = |f: &'a Option<rulesmith_core::variant::FnRef>| f.as_ref().map_or("", |f| f.name.as_str());
        match *entry {
            Entry::Setup => name(&v.setup),
            Entry::Legal { step } => &v.steps[step].legal.name,
            Entry::Enter { step } => name(&v.steps[step].enter),
            Entry::Apply { kind, .. } => &v.actions[kind as usize].apply.name,
            Entry::TurnStart => name(&v.on_turn_start),
            Entry::TurnEnd => name(&v.on_turn_end),
            Entry::Resume { then, .. } => then,
            Entry::Summary { .. } => name(&v.summary),
            Entry::Render { .. } => name(&v.render),
            Entry::Evaluate { .. } => name(&v.evaluate),
            Entry::Labels => name(&v.labels),
            Entry::Invariant { index } => &v.invariants[index].check.name,
        }
    }

    /// Runs an entry point's function with its arguments.
    fn dispatch(&self, entry: &Entry<'_>, name: &str, this: &mut Dynamic) -> Result<Dynamic, Box<EvalAltResult>> {
        match *entry {
            Entry::Apply { values, .. } => {
                // Rhai takes arguments by value; the common arities are
                // spelled out so that no argument vector is allocated per
                // decision.
                let v = |i: usize| values[i] as INT;
                match values.len() {
                    0 => self.run(this, name, ()),
                    1 => self.run(this, name, (v(0),)),
                    2 => self.run(this, name, (v(0), v(1))),
                    3 => self.run(this, name, (v(0), v(1), v(2))),
                    4 => self.run(this, name, (v(0), v(1), v(2), v(3))),
                    _ => self.run(
                        this,
                        name,
                        values.iter().map(|&x| Dynamic::from_int(x as INT)).collect::<Vec<_>>(),
                    ),
                }
            }
            Entry::Resume { outcomes, .. } => {
                // Faces as numbers, cards as their ids.
                let values: Array = outcomes
                    .iter()
                    .map(|o| match *o {
                        Outcome::Face(f) => Dynamic::from_int(f as INT),
                        Outcome::Card { deck, card } => {
                            Dynamic::from(self.variant.decks[deck as usize].cards[card as usize].id.clone())
                        }
                    })
                    .collect();
                self.run(this, name, (values,))
            }
            Entry::Summary { viewer } | Entry::Render { viewer } => self.run(this, name, (viewer as INT,)),
            Entry::Evaluate { seat } => self.run(this, name, (seat as INT,)),
            _ => self.run(this, name, ()),
        }
    }
}

/// What an entry point's Rhai value means to the engine.
fn reply(entry: &Entry<'_>, v: Dynamic) -> Reply {
    match entry {
        Entry::Summary { .. } => match serde_json::to_value(&v) {
            Ok(json) => Reply::Json(json),
            Err(e) => Reply::Other(e.to_string()),
        },
        Entry::Render { .. } => Reply::Text(v.to_string()),
        Entry::Evaluate { .. } => match (v.as_float(), v.as_int()) {
            (Ok(x), _) => Reply::Float(x),
            (_, Ok(i)) => Reply::Int(i),
            _ => Reply::Other(v.type_name().to_string()),
        },
        Entry::Labels => match v.try_cast::<Map>() {
            Some(map) => Reply::Json(serde_json::Value::Object(
                map.into_iter()
                    .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.to_string())))
                    .collect(),
            )),
            None => Reply::Other("not a map".into()),
        },
        Entry::Invariant { .. } => match v.as_bool() {
            Ok(b) => Reply::Bool(b),
            Err(_) if v.is_string() => Reply::Text(v.to_string()),
            Err(t) => Reply::Other(t.to_string()),
        },
        _ => Reply::Unit,
    }
}

impl Rules for Interpreter {
    fn engine_name(&self) -> &'static str {
        "interpreted"
    }

    fn maker(&self) -> Option<rulesmith_core::rules::RulesMaker> {
        let (variant, limits) = (self.variant.clone(), self.limits);
        Some(Arc::new(move || {
            Interpreter::new(variant.clone(), limits, false)
                .map(|i| Box::new(i) as Box<dyn Rules>)
                .map_err(|e| e.to_string())
        }))
    }

    fn signatures(&self) -> Vec<(String, usize)> {
        self.compiled.signatures.iter().cloned().collect()
    }

    fn new_data(&self) -> Data {
        Data::Script(Dynamic::from_map(Map::new()))
    }

    fn call(&self, entry: Entry<'_>, cx: &mut Ctx, data: &mut Data) -> Result<Reply, ScriptError> {
        let name = self.function(&entry);
        let Data::Script(this) = data else {
            return Err(ScriptError::at(
                "<script>",
                name,
                0,
                0,
                "the interpreter was given compiled rules' data",
            ));
        };
        std::mem::swap(&mut *self.ctx.borrow_mut(), cx);
        let result = self.dispatch(&entry, name, this);
        std::mem::swap(&mut *self.ctx.borrow_mut(), cx);
        match result {
            Ok(v) => Ok(reply(&entry, v)),
            Err(e) => {
                let (err, limit) = script_error(&self.info, &self.compiled.fn_files, name, *e);
                self.info.diagnosis.failed(&err, limit);
                Err(err)
            }
        }
    }

    fn diagnose(&self, on: bool) {
        self.info.diagnosis.turn(on);
    }

    fn data_from_json(&self, v: serde_json::Value) -> Result<Data, String> {
        serde_json::from_value::<Dynamic>(v)
            .map(Data::Script)
            .map_err(|e| e.to_string())
    }

    fn track_calls(&self, on: bool) {
        *self.info.profile.borrow_mut() = on.then(Default::default);
    }

    fn profile(&self) -> BTreeMap<String, FunctionProfile> {
        self.info.profile.borrow().clone().unwrap_or_default()
    }

    fn card_hook_names(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(cards) = self.info.card_scripts.get() {
            for (d, deck) in self.variant.decks.iter().enumerate() {
                for (c, card) in deck.cards.iter().enumerate() {
                    if let Some(script) = &cards[d][c] {
                        for hook in script.own.iter().filter(|h| deck.hooks.contains_key(*h)) {
                            out.push(format!("card {}: {hook}", card.id));
                        }
                    }
                }
            }
        }
        out
    }
}

/// Read-only facts about the variant that natives need, resolved once.
pub(crate) struct Info {
    pub variant: Arc<Variant>,
    names: Names,
    step_names: Vec<ImmutableString>,
    /// Parameter values, by index in `Variant::params`.
    params: Vec<Dynamic>,
    cards: Vec<Vec<Map>>,
    /// Names of every script function, set once the scripts are compiled.
    pub functions: OnceCell<HashSet<String>>,
    /// Compiled card scripts, by deck then card (None: a card without one).
    pub card_scripts: OnceCell<Vec<Vec<Option<CardScript>>>>,
    /// When set, what each script function called by the engine (and each
    /// card hook) cost so far: coverage for the fuzzer, and `profile`.
    pub profile: RefCell<Option<BTreeMap<String, FunctionProfile>>>,
    /// Rhai's operation count of the running call, kept up to date only
    /// when the engine was built to count operations.
    pub operations: std::cell::Cell<u64>,
    /// The sandbox's limits, for messages and the diagnostic engines.
    limits: Limits,
    pub diagnosis: Diagnosis,
}

impl Info {
    /// Runs the script call `f`, and when profiling is on, adds what it
    /// cost to the entry `name()` (named only then: no text on the hot path).
    pub fn measured<T>(&self, name: impl FnOnce() -> String, f: impl FnOnce() -> T) -> T {
        if self.profile.borrow().is_none() {
            return f();
        }
        // A card hook runs inside a rule call: its count starts at zero and
        // the caller's is put back afterwards.
        let outer = self.operations.replace(0);
        let start = std::time::Instant::now();
        let out = f();
        let nanos = start.elapsed().as_nanos() as u64;
        let operations = self.operations.replace(outer);
        if let Some(profile) = self.profile.borrow_mut().as_mut() {
            let entry = profile.entry(name()).or_default();
            entry.calls += 1;
            entry.nanos += nanos;
            entry.operations += operations;
        }
        out
    }
}

/// A card's own script, with the rule scripts' functions beside its own so
/// that it can call them.
pub(crate) struct CardScript {
    pub ast: AST,
    /// Every function it can run (its own and the rules'), by file.
    pub fn_files: HashMap<String, usize>,
    /// The functions the card's script itself defines (its hooks among them).
    pub own: std::collections::BTreeSet<String>,
}

impl Info {
    pub fn new(variant: Arc<Variant>, limits: Limits) -> Info {
        let v = &variant;
        let to_dynamic = |value: &Value| match value {
            Value::Int(i) => Dynamic::from_int(*i),
            Value::Bool(b) => Dynamic::from_bool(*b),
            Value::Str(s) => Dynamic::from(s.clone()),
        };
        let cards = v
            .decks
            .iter()
            .map(|d| {
                d.cards
                    .iter()
                    .map(|c| {
                        let mut m = Map::new();
                        m.insert("id".into(), Dynamic::from(c.id.clone()));
                        for f in &d.fields {
                            let val = c.fields.get(&f.name).map(to_dynamic).unwrap_or(Dynamic::UNIT);
                            m.insert(f.name.as_str().into(), val);
                        }
                        m
                    })
                    .collect()
            })
            .collect();
        Info {
            names: Names::new(v),
            step_names: v.steps.iter().map(|s| ImmutableString::from(s.name.as_str())).collect(),
            params: v.params.iter().map(|p| to_dynamic(&p.value)).collect(),
            cards,
            functions: OnceCell::new(),
            card_scripts: OnceCell::new(),
            profile: RefCell::new(None),
            operations: std::cell::Cell::new(0),
            limits,
            diagnosis: Diagnosis::default(),
            variant,
        }
    }

    fn deck(&self, name: &str) -> NativeResult<usize> {
        Ok(self.names.deck(name)?)
    }

    /// The place in the game's decks of deck or pile `name` for `seat`.
    fn place(&self, ctx: &Ctx, name: &str, seat: INT, native: &str) -> NativeResult<usize> {
        let place = self.names.place(name)?;
        Ok(ctx.place_index(place, seat, &self.variant, native)?)
    }

    fn card(&self, deck: usize, id: &str) -> NativeResult<usize> {
        Ok(self.variant.decks[deck].find(id)?)
    }

    fn check_continuation(&self, then: &str) -> NativeResult<()> {
        match self.functions.get() {
            Some(f) if !f.contains(then) => Err(format!(
                "no script function '{then}' to receive the outcomes (it takes one argument, the array of outcomes)"
            )
            .into()),
            _ => Ok(()),
        }
    }
}

/// Builds the sandboxed engine with every native registered: the one games
/// run on, or (`phase`) one of diagnostic mode's.
pub(crate) fn build_engine(
    info: &Rc<Info>,
    ctx: &Rc<RefCell<Ctx>>,
    phase: Option<Phase>,
    count_operations: bool,
) -> Engine {
    let mut engine = match phase {
        None => sandbox(info.limits),
        Some(phase) => diagnostic_sandbox(info, phase),
    };
    if count_operations {
        // Rhai reports its running count after every operation; only
        // profiling pays for listening.
        let i = info.clone();
        engine.on_progress(move |ops| {
            i.operations.set(ops);
            None
        });
    }
    register_queries(&mut engine, info, ctx);
    register_flow(&mut engine, info, ctx);
    register_add(&mut engine, info, ctx);
    register_chance(&mut engine, info, ctx);
    register_cards(&mut engine, info, ctx);
    register_piles(&mut engine, info, ctx);
    register_telling(&mut engine, ctx);
    register_helpers(&mut engine);
    engine
}

/// Telling a watching person what happens: `narrate`, `show_moves`, `mark`.
fn register_telling(engine: &mut Engine, ctx: &Rc<RefCell<Ctx>>) {
    let c = ctx.clone();
    engine.register_fn("narrate", move |text: &str| c.borrow_mut().narrate(text));
    let c = ctx.clone();
    engine.register_fn("show_moves", move || c.borrow().show_moves());
    let c = ctx.clone();
    engine.register_fn("mark", move |label: &str, text: &str| c.borrow_mut().mark(label, text));
}

/// Reading the engine's bookkeeping.
fn register_queries(engine: &mut Engine, info: &Rc<Info>, ctx: &Rc<RefCell<Ctx>>) {
    let c = ctx.clone();
    engine.register_fn("seats", move || c.borrow().seats());
    let c = ctx.clone();
    engine.register_fn("active", move || c.borrow().active());
    let c = ctx.clone();
    engine.register_fn("actor", move || c.borrow().actor());
    let c = ctx.clone();
    engine.register_fn("turn", move || c.borrow().turn());
    let c = ctx.clone();
    engine.register_fn("in_play", move || c.borrow().in_play());
    let c = ctx.clone();
    engine.register_fn("is_out", move |seat: INT| -> NativeResult<bool> {
        Ok(c.borrow().is_out(seat)?)
    });
    let c = ctx.clone();
    engine.register_fn("status", move || -> ImmutableString { c.borrow().status().into() });
    let c = ctx.clone();
    engine.register_fn("winner", move || c.borrow().winner());
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("step", move || {
        c.borrow()
            .step()
            .map_or_else(|| ImmutableString::from("setup"), |s| i.step_names[s].clone())
    });
    let i = info.clone();
    engine.register_fn("param", move |name: &str| -> NativeResult<Dynamic> {
        Ok(i.params[i.names.param(name)?].clone())
    });
    let i = info.clone();
    engine.register_fn("card", move |deck: &str, id: &str| -> NativeResult<Map> {
        let d = i.deck(deck)?;
        i.cards[d]
            .iter()
            .find(|m| {
                m.get("id")
                    .and_then(|v| v.read_lock::<ImmutableString>())
                    .is_some_and(|s| s.as_str() == id)
            })
            .cloned()
            .ok_or_else(|| i.variant.decks[d].no_card(id).into())
    });
    let i = info.clone();
    engine.register_fn("card_ids", move |deck: &str| -> NativeResult<Array> {
        let d = i.deck(deck)?;
        Ok(i.variant.decks[d]
            .cards
            .iter()
            .map(|c| Dynamic::from(c.id.clone()))
            .collect())
    });
    let i = info.clone();
    engine.register_fn("has_deck", move |deck: &str| i.names.has_deck(deck));
    let i = info.clone();
    engine.register_fn("words", move |name: &str| -> NativeResult<Array> {
        Ok(rulesmith_core::ctx::words(&i.variant, name)?
            .iter()
            .map(|w| Dynamic::from(w.clone()))
            .collect())
    });
    let c = ctx.clone();
    engine.register_fn("round_left", move || c.borrow().round_left());
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("deck_left", move |deck: &str| -> NativeResult<INT> {
        let d = i.deck(deck)?;
        Ok(c.borrow().deck_left(d))
    });
}

/// Steering the game: steps, turns, seats, the end.
fn register_flow(engine: &mut Engine, info: &Rc<Info>, ctx: &Rc<RefCell<Ctx>>) {
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("enter_step", move |step: &str| -> NativeResult<()> {
        let idx = i.names.step(step)?;
        c.borrow_mut().enter_step(idx);
        Ok(())
    });
    let c = ctx.clone();
    engine.register_fn("end_turn", move || -> NativeResult<()> {
        Ok(c.borrow_mut().end_turn()?)
    });
    let c = ctx.clone();
    engine.register_fn("end_turn_to", move |seat: INT| -> NativeResult<()> {
        Ok(c.borrow_mut().end_turn_to(seat)?)
    });
    let c = ctx.clone();
    engine.register_fn("start_turns", move |seat: INT| -> NativeResult<()> {
        Ok(c.borrow_mut().start_turns(seat)?)
    });
    let c = ctx.clone();
    engine.register_fn("set_actor", move |seat: INT| -> NativeResult<()> {
        Ok(c.borrow_mut().set_actor(seat)?)
    });
    let c = ctx.clone();
    engine.register_fn("eliminate", move |seat: INT| -> NativeResult<()> {
        Ok(c.borrow_mut().eliminate(seat)?)
    });
    let c = ctx.clone();
    engine.register_fn("win", move |seat: INT| -> NativeResult<()> {
        Ok(c.borrow_mut().win(seat)?)
    });
    let c = ctx.clone();
    engine.register_fn("draw_game", move || c.borrow_mut().draw_game());
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("stat", move |name: &str, delta: INT| -> NativeResult<()> {
        let idx = i.names.stat(name)?;
        c.borrow_mut().stat(idx, delta);
        Ok(())
    });
    // Scores ([scores]): set_score(seat, n), add_score(seat, n), score(seat).
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("set_score", move |seat: INT, value: INT| -> NativeResult<()> {
        Ok(c.borrow_mut().set_score(seat, value, &i.variant)?)
    });
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("add_score", move |seat: INT, delta: INT| -> NativeResult<()> {
        Ok(c.borrow_mut().add_score(seat, delta, &i.variant)?)
    });
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("score", move |seat: INT| -> NativeResult<INT> {
        Ok(c.borrow().score(seat, &i.variant)?)
    });
}

/// `add(name, values...)`: a legal action, from a step's legal function.
///
/// This is the hottest native of all (a maneuver step may offer a hundred
/// actions), so the action's kind is looked up once per call, values are
/// checked against the template without allocating, and `add_all` builds
/// its combinations in one flat buffer.
fn register_add(engine: &mut Engine, info: &Rc<Info>, ctx: &Rc<RefCell<Ctx>>) {
    fn push(ctx: &RefCell<Ctx>, info: &Info, kind: u16, values: &[INT]) -> NativeResult<()> {
        Ok(ctx.borrow_mut().add(&info.variant, kind, values)?)
    }
    macro_rules! add_arity {
        ($($v:ident),*) => {{
            let (c, i) = (ctx.clone(), info.clone());
            engine.register_fn("add", move |name: &str $(, $v: INT)*| push(&c, &i, i.names.action(name)?, &[$($v),*]));
        }};
    }
    // add_all(name, domains): every combination of the domains, the first
    // varying slowest. A domain is a fixed number, or an array of choices,
    // each a number or an array of numbers (e.g. a grid slot [c, r]) that
    // fills several values at once. The core keeps the combinations in
    // factored form and checks them against the action's template.
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("add_all", move |name: &str, domains: Array| -> NativeResult<()> {
        let kind = i.names.action(name)?;
        let mut cx = c.borrow_mut();
        cx.start_product();
        for d in &domains {
            cx.product_domain();
            if let Ok(x) = d.as_int() {
                cx.product_choice(&[x]);
            } else if let Some(arr) = d.read_lock::<Array>() {
                for alt in arr.iter() {
                    if let Ok(x) = alt.as_int() {
                        cx.product_choice(&[x]);
                    } else if let Some(inner) = alt.read_lock::<Array>() {
                        cx.start_choice();
                        for v in inner.iter() {
                            cx.choice_value(v.as_int().map_err(legal::not_a_number)?);
                        }
                    } else {
                        return Err(legal::not_a_choice(alt.type_name()).into());
                    }
                }
            } else if let Some(r) = d.read_lock::<std::ops::Range<INT>>() {
                // `range(0, n + 1)`, `0..n`: the numbers in it.
                for x in r.clone() {
                    cx.product_choice(&[x]);
                }
            } else if let Some(r) = d.read_lock::<std::ops::RangeInclusive<INT>>() {
                for x in r.clone() {
                    cx.product_choice(&[x]);
                }
            } else {
                return Err(legal::not_a_domain(d.type_name()).into());
            }
        }
        Ok(cx.finish_product(&i.variant, kind)?)
    });
    // recall(key, stamp) / remember(key): groups of legal actions kept
    // between listings within a turn (see Ctx::recall).
    let c = ctx.clone();
    engine.register_fn("recall", move |key: INT, stamp: Array| -> NativeResult<INT> {
        let stamp = stamp
            .iter()
            .map(|v| v.as_int())
            .collect::<Result<Vec<INT>, _>>()
            .map_err(|t| format!("recall: the stamp must be an array of numbers, not of {t}"))?;
        Ok(c.borrow_mut().recall(key, &stamp)?)
    });
    let c = ctx.clone();
    engine.register_fn("remember", move |key: INT| -> NativeResult<()> {
        Ok(c.borrow_mut().remember(key)?)
    });
    add_arity!();
    add_arity!(a);
    add_arity!(a, b);
    add_arity!(a, b, d);
    add_arity!(a, b, d, e);
    add_arity!(a, b, d, e, f);
    add_arity!(a, b, d, e, f, g);
}

/// Chance: dice and card draws go through the engine, never a script RNG.
fn register_chance(engine: &mut Engine, info: &Rc<Info>, ctx: &Rc<RefCell<Ctx>>) {
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("roll", move |count: INT, sides: INT, then: &str| -> NativeResult<()> {
        // The dice are checked first, then the continuation.
        if (1..=1000).contains(&count) && (1..=1_000_000).contains(&sides) {
            i.check_continuation(then)?;
        }
        Ok(c.borrow_mut().roll(count, sides, then.to_string())?)
    });
    // roll_secret(seat, count, sides, then): dice only `seat` sees.
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn(
        "roll_secret",
        move |seat: INT, count: INT, sides: INT, then: &str| -> NativeResult<()> {
            if (1..=1000).contains(&count) && (1..=1_000_000).contains(&sides) {
                i.check_continuation(then)?;
            }
            Ok(c.borrow_mut().roll_seen(count, sides, Some(seat), then.to_string())?)
        },
    );
    // draw(deck, [count,] then) and draw_secret(deck, seat, [count,] then):
    // one event of `count` cards (1 when not given).
    let draw = |secret: bool| {
        let (c, i) = (ctx.clone(), info.clone());
        move |deck: &str, seat: INT, count: INT, then: &str| -> NativeResult<()> {
            let d = i.deck(deck)?;
            i.check_continuation(then)?;
            let visible_to = secret.then_some(seat);
            Ok(c.borrow_mut()
                .draw(d, count, visible_to, then.to_string(), &i.variant)?)
        }
    };
    let secret = draw(true);
    engine.register_fn("draw_secret", move |deck: &str, seat: INT, then: &str| {
        secret(deck, seat, 1, then)
    });
    engine.register_fn("draw_secret", draw(true));
    let public = draw(false);
    engine.register_fn("draw", move |deck: &str, then: &str| public(deck, -1, 1, then));
    let public = draw(false);
    engine.register_fn("draw", move |deck: &str, count: INT, then: &str| {
        public(deck, -1, count, then)
    });
    // deal(deck, count, dealer, [pile,] then): count cards to every seat
    // in play, one at a time from the dealer's left, each seen by its seat
    // only (into the seat's own place of `pile` when given).
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn(
        "deal",
        move |deck: &str, count: INT, dealer: INT, then: &str| -> NativeResult<()> {
            let d = i.place(&c.borrow(), deck, -1, "deal")?;
            i.check_continuation(then)?;
            Ok(c.borrow_mut()
                .deal(d, count, dealer, None, then.to_string(), &i.variant)?)
        },
    );
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn(
        "deal",
        move |deck: &str, count: INT, dealer: INT, pile: &str, then: &str| -> NativeResult<()> {
            let d = i.place(&c.borrow(), deck, -1, "deal")?;
            let Place::Pile(p) = i.names.place(pile)? else {
                return Err(format!("deal(.., '{pile}', ..): '{pile}' is a deck; cards are dealt into a pile").into());
            };
            i.check_continuation(then)?;
            Ok(c.borrow_mut()
                .deal(d, count, dealer, Some(p), then.to_string(), &i.variant)?)
        },
    );
    // shuffle_into(deck, ids): cards go back into the deck's draw pile.
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("shuffle_into", move |deck: &str, ids: Array| -> NativeResult<()> {
        let d = i.deck(deck)?;
        let mut cards = Vec::with_capacity(ids.len());
        for id in &ids {
            let text = id
                .read_lock::<ImmutableString>()
                .ok_or_else(|| format!("shuffle_into: expected an array of card ids, found {}", id.type_name()))?;
            cards.push(i.card(d, text.as_str())? as u16);
        }
        Ok(c.borrow_mut().shuffle_into(d, &cards, &i.variant)?)
    });
}

/// Piles: where cards lie, per seat or on the table, and moving them.
fn register_piles(engine: &mut Engine, info: &Rc<Info>, ctx: &Rc<RefCell<Ctx>>) {
    // pile(name, seat): the card ids there, in the order they came.
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("pile", move |name: &str, seat: INT| -> NativeResult<Array> {
        let c = c.borrow();
        let at = i.place(&c, name, seat, "pile")?;
        let deck = &i.variant.decks[at];
        Ok(c.pile_cards(at)
            .iter()
            .map(|&k| Dynamic::from(deck.cards[k as usize].id.clone()))
            .collect())
    });
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("pile_size", move |name: &str, seat: INT| -> NativeResult<INT> {
        let c = c.borrow();
        let at = i.place(&c, name, seat, "pile_size")?;
        Ok(c.pile_cards(at).len() as INT)
    });
    // move_card(id, from, to, seat) and move_all(from, to, seat): a pile
    // per seat is `seat`'s own; a pile on the table or a deck ignores it.
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn(
        "move_card",
        move |id: &str, from: &str, to: &str, seat: INT| -> NativeResult<()> {
            let mut c = c.borrow_mut();
            let f = i.place(&c, from, seat, "move_card")?;
            let t = i.place(&c, to, seat, "move_card")?;
            let card = i.card(i.variant.deck_of_place(f), id)? as u16;
            Ok(c.move_card(card, f, t, &i.variant)?)
        },
    );
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("move_all", move |from: &str, to: &str, seat: INT| -> NativeResult<()> {
        let mut c = c.borrow_mut();
        let f = i.place(&c, from, seat, "move_all")?;
        let t = i.place(&c, to, seat, "move_all")?;
        Ok(c.move_all(f, t, &i.variant)?)
    });
    // draw_from(from, seat, count, to): cards drawn at random into a pile.
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn(
        "draw_from",
        move |from: &str, seat: INT, count: INT, to: &str| -> NativeResult<()> {
            let mut c = c.borrow_mut();
            let f = i.place(&c, from, seat, "draw_from")?;
            let t = i.place(&c, to, seat, "draw_from")?;
            Ok(c.draw_from(f, seat, count, t, &i.variant)?)
        },
    );
}

/// Cards: revealing secrets, and running a card's own script.
fn register_cards(engine: &mut Engine, info: &Rc<Info>, ctx: &Rc<RefCell<Ctx>>) {
    // reveal(deck, id): a card dealt in secret becomes known to all.
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("reveal", move |deck: &str, id: &str| -> NativeResult<()> {
        let d = i.deck(deck)?;
        let card = i.card(d, id)? as u16;
        c.borrow_mut().reveal(d, card);
        Ok(())
    });
    // reveal_secrets(seat): everything seat kept secret becomes public.
    let c = ctx.clone();
    engine.register_fn("reveal_secrets", move |seat: INT| -> NativeResult<()> {
        Ok(c.borrow_mut().reveal_secrets(seat)?)
    });
    // last_secret(): the id of the secret decision being applied;
    // reveal_decision(id): that decision alone becomes public.
    let c = ctx.clone();
    engine.register_fn("last_secret", move || c.borrow().last_secret());
    let c = ctx.clone();
    engine.register_fn("reveal_decision", move |id: INT| -> NativeResult<()> {
        Ok(c.borrow_mut().reveal_decision(id)?)
    });
    // this.card_hook(deck, id, hook, args): runs the card's hook with the
    // game data as `this`; () when the card has no such hook.
    let i = info.clone();
    engine.register_fn(
        "card_hook",
        move |nc: NativeCallContext,
              data: &mut Map,
              deck: &str,
              id: &str,
              hook: &str,
              args: Array|
              -> NativeResult<Dynamic> {
            let d = i.deck(deck)?;
            let dk = &i.variant.decks[d];
            let card = dk.find(id)?;
            match dk.hooks.get(hook) {
                Some(&n) if n == args.len() => {}
                Some(&n) => {
                    return Err(format!(
                        "hook '{hook}' of deck '{deck}' takes {n} argument(s), not {}",
                        args.len()
                    )
                    .into())
                }
                None => {
                    let known: Vec<String> = dk.hooks.iter().map(|(h, n)| format!("{h}/{n}")).collect();
                    return Err(format!(
                        "deck '{deck}' declares no hook '{hook}' (declared: {})",
                        known.join(", ")
                    )
                    .into());
                }
            }
            let Some(script) = i.card_scripts.get().and_then(|v| v[d][card].as_ref()) else {
                return Ok(Dynamic::UNIT);
            };
            if !script.own.contains(hook) {
                return Ok(Dynamic::UNIT);
            }
            // Lend the data to the card's script as `this` (a move, not a copy).
            let mut this = Dynamic::from_map(std::mem::take(data));
            let options = CallFnOptions::new()
                .eval_ast(false)
                .rewind_scope(true)
                .bind_this_ptr(&mut this);
            let outer = i.diagnosis.start_call();
            let result = i.measured(
                || format!("card {id}: {hook}"),
                || {
                    nc.engine()
                        .call_fn_with_options::<Dynamic>(options, &mut Scope::new(), &script.ast, hook, args)
                },
            );
            i.diagnosis.end_call(outer);
            match this.try_cast::<Map>() {
                Some(m) => *data = m,
                None => {
                    return Err(format!("card '{id}': hook '{hook}' replaced the game data with something else").into())
                }
            }
            result.map_err(|e| {
                // Passed on whole: the rule function that ran the hook
                // continues the card's chain of calls (see `script_error`).
                let (mut err, limit) = script_error(&i, &script.fn_files, hook, *e);
                err.message = format!("card '{id}': {}", err.message);
                Box::new(EvalAltResult::ErrorRuntime(
                    Dynamic::from(CardFailure(err, limit)),
                    Position::NONE,
                ))
            })
        },
    );
}

/// Generic helpers that keep heavy lifting out of the interpreter.
fn register_helpers(engine: &mut Engine) {
    fn ints(a: &Array) -> NativeResult<Vec<INT>> {
        a.iter()
            .map(|v| {
                v.as_int()
                    .map_err(|t| format!("expected an array of numbers, found {t}").into())
            })
            .collect()
    }
    fn to_array(v: &[INT]) -> Array {
        v.iter().map(|&x| Dynamic::from_int(x)).collect()
    }
    // Number of distinct values: e.g. repair points from a roll.
    engine.register_fn("distinct", |a: Array| -> NativeResult<INT> {
        Ok(natives::distinct(&ints(&a)?))
    });
    // Indices whose value is at least `min`: e.g. what can pay a cost.
    engine.register_fn("at_least", |a: Array, min: INT| -> NativeResult<Array> {
        let values = a
            .iter()
            .map(|v| v.as_int())
            .collect::<Result<Vec<INT>, _>>()
            .map_err(|t| format!("at_least: expected an array of numbers, found {t}"))?;
        Ok(to_array(&natives::at_least(&values, min)))
    });
    // Ordinal grid (see grid.rs): slots for a mover, moving, compacting.
    let pair = |(c, r): (Vec<INT>, Vec<INT>)| -> Array { vec![to_array(&c).into(), to_array(&r).into()] };
    engine.register_fn(
        "grid_slots",
        |cols: Array, rows: Array, mover: INT| -> NativeResult<Array> {
            Ok(natives::grid_slots(&ints(&cols)?, &ints(&rows)?, mover)?
                .into_iter()
                .map(|(x, y)| Dynamic::from_array(vec![x.into(), y.into()]))
                .collect())
        },
    );
    engine.register_fn(
        "grid_place",
        move |cols: Array, rows: Array, mover: INT, col: INT, row: INT| -> NativeResult<Array> {
            Ok(pair(natives::grid_place(
                &ints(&cols)?,
                &ints(&rows)?,
                mover,
                col,
                row,
            )?))
        },
    );
    engine.register_fn("grid_compact", move |cols: Array, rows: Array| -> NativeResult<Array> {
        Ok(pair(natives::grid_compact(&ints(&cols)?, &ints(&rows)?)?))
    });
    register_board(engine);
}

/// The board natives, from core's table (`rulesmith_core::board`): each
/// argument a number or an array of numbers, read in place.
fn register_board(engine: &mut Engine) {
    use rulesmith_core::board::{self, Arg, Kind, Out};
    use std::any::TypeId;
    for &(name, kinds, _) in board::NATIVES {
        let types: Vec<TypeId> = kinds
            .iter()
            .map(|k| match k {
                Kind::Int => TypeId::of::<INT>(),
                Kind::Ints | Kind::Pairs => TypeId::of::<Array>(),
            })
            .collect();
        engine.register_raw_fn(name, types, move |_, args| -> NativeResult<Dynamic> {
            let mut arrays: Vec<Vec<INT>> = Vec::with_capacity(args.len());
            for (i, k) in kinds.iter().enumerate() {
                if *k != Kind::Int {
                    let a = args[i].read_lock::<Array>().expect("registered as an array");
                    let numbers = a
                        .iter()
                        .map(|v| v.as_int())
                        .collect::<Result<Vec<INT>, _>>()
                        .map_err(|t| format!("{name}: argument {} must be an array of numbers, not of {t}", i + 1))?;
                    arrays.push(numbers);
                }
            }
            let mut next_array = arrays.iter();
            let call_args: Vec<Arg> = kinds
                .iter()
                .enumerate()
                .map(|(i, k)| match k {
                    Kind::Int => Arg::Int(args[i].as_int().expect("registered as a number")),
                    Kind::Ints | Kind::Pairs => Arg::Ints(next_array.next().expect("read above")),
                })
                .collect();
            Ok(match board::call(name, &call_args)? {
                Out::Int(x) => Dynamic::from_int(x),
                Out::Ints(v) => Dynamic::from_array(v.into_iter().map(Dynamic::from_int).collect()),
                Out::Pairs(v) => Dynamic::from_array(
                    v.into_iter()
                        .map(|p| Dynamic::from_array(p.into_iter().map(Dynamic::from_int).collect()))
                        .collect(),
                ),
            })
        });
    }
}

/// The compiled scripts of a variant, with where each function came from.
struct Compiled {
    pub ast: AST,
    /// Script function name -> index into `Variant::files`.
    pub fn_files: HashMap<String, usize>,
    /// (name, arity) of every script function.
    pub signatures: HashSet<(String, usize)>,
}

/// Compiles every script of the variant; all syntax errors are reported.
fn compile(engine: &Engine, variant: &Variant) -> Result<Compiled, Vec<Diagnostic>> {
    let mut ast = AST::empty();
    let mut fn_files = HashMap::new();
    let mut signatures = HashSet::new();
    let mut diags = Vec::new();
    for &file in &variant.scripts {
        let src = &variant.files[file];
        match compile_source(engine, src, "") {
            Ok(mut file_ast) => {
                // Top-level code never runs: only functions are rules.
                file_ast.clear_statements();
                for f in file_ast.iter_functions() {
                    fn_files.insert(f.name.to_string(), file);
                    signatures.insert((f.name.to_string(), f.params.len()));
                }
                ast = ast.merge(&file_ast);
            }
            Err(d) => diags.push(d),
        }
    }
    if diags.is_empty() {
        Ok(Compiled {
            ast,
            fn_files,
            signatures,
        })
    } else {
        Err(diags)
    }
}

/// Compiles every card script. Each must define some of its deck's hooks
/// (with their arities), may define helpers of its own, and may call the
/// rule scripts' functions (`rules`, when they compiled), but not define
/// one of the same name and arity: the rules would then run the card's.
fn compile_cards(
    engine: &Engine,
    variant: &Variant,
    rules: Option<&Compiled>,
) -> Result<Vec<Vec<Option<CardScript>>>, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let mut out = Vec::new();
    for deck in &variant.decks {
        let mut cards = Vec::new();
        for card in &deck.cards {
            let Some(file) = card.script else {
                cards.push(None);
                continue;
            };
            let src = &variant.files[file];
            match compile_source(engine, src, &format!("card '{}': ", card.id)) {
                Ok(mut ast) => {
                    ast.clear_statements();
                    let mut fn_files = HashMap::new();
                    let mut own = std::collections::BTreeSet::new();
                    for f in ast.iter_functions() {
                        own.insert(f.name.to_string());
                        if rules.is_some_and(|r| r.signatures.contains(&(f.name.to_string(), f.params.len()))) {
                            let message = format!(
                                "card '{}': fn {}/{} has the name of a rule script function; rename it \
                                 (a card script may call the rules' functions, not replace them)",
                                card.id,
                                f.name,
                                f.params.len()
                            );
                            let line = fn_line(&src.text, f.name);
                            diags.push(Diagnostic::new(&src.path, message).at_line(Some(&src.text), line, 1));
                        }
                        let ok = deck.hooks.get(f.name) == Some(&f.params.len());
                        if !ok && deck.hooks.contains_key(f.name) {
                            let message = format!(
                                "card '{}': hook '{}' takes {} argument(s), not {}",
                                card.id,
                                f.name,
                                deck.hooks[f.name],
                                f.params.len()
                            );
                            let line = fn_line(&src.text, f.name);
                            diags.push(Diagnostic::new(&src.path, message).at_line(Some(&src.text), line, 1));
                        }
                        fn_files.insert(f.name.to_string(), file);
                    }
                    if !fn_files.keys().any(|f| deck.hooks.contains_key(f)) {
                        let known: Vec<String> = deck.hooks.iter().map(|(h, n)| format!("{h}/{n}")).collect();
                        diags.push(Diagnostic::new(
                            &src.path,
                            format!(
                                "card '{}': the script defines none of deck '{}''s hooks ({})",
                                card.id,
                                deck.name,
                                known.join(", ")
                            ),
                        ));
                    }
                    // The rules' functions beside the card's own, so that
                    // the card can call them.
                    let ast = match rules {
                        Some(r) => {
                            for (name, &f) in &r.fn_files {
                                fn_files.entry(name.clone()).or_insert(f);
                            }
                            r.ast.merge(&ast)
                        }
                        None => ast,
                    };
                    cards.push(Some(CardScript { ast, fn_files, own }));
                }
                Err(d) => {
                    diags.push(d);
                    cards.push(None);
                }
            }
        }
        out.push(cards);
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

/// A sandbox limit that stopped a script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    Operations,
    Calls,
    String,
    Array,
    Map,
}

impl Limit {
    /// The limit behind a Rhai error, if it is one.
    fn of(err: &EvalAltResult) -> Option<Limit> {
        match err {
            EvalAltResult::ErrorTooManyOperations(_) => Some(Limit::Operations),
            EvalAltResult::ErrorStackOverflow(_) => Some(Limit::Calls),
            // Rhai names the kind of value in words ("Length of string",
            // "Size of array/BLOB", "Size of object map").
            EvalAltResult::ErrorDataTooLarge(what, _) if what.contains("string") => Some(Limit::String),
            EvalAltResult::ErrorDataTooLarge(what, _) if what.contains("array") => Some(Limit::Array),
            EvalAltResult::ErrorDataTooLarge(..) => Some(Limit::Map),
            _ => None,
        }
    }

    fn is_data(self) -> bool {
        matches!(self, Limit::String | Limit::Array | Limit::Map)
    }

    fn message(self, limits: &Limits) -> String {
        match self {
            Limit::Operations => {
                "the script ran too long (operation limit reached): an endless loop or runaway recursion?".into()
            }
            Limit::Calls => "too many nested calls: runaway recursion?".into(),
            Limit::String => format!("a string grew past the limit of {} bytes", limits.max_string_size),
            Limit::Array => format!("an array grew past the limit of {} items", limits.max_array_size),
            Limit::Map => format!("a map grew past the limit of {} keys", limits.max_map_size),
        }
    }
}

/// The error a diagnostic engine raises in place of a limit's (an ordinary
/// error, so that every script call on the way out adds itself to it).
#[derive(Clone)]
struct Stopped(Limit);

/// A card hook's failure (and the limit that stopped it, if one did),
/// passed whole to the rule function that ran it.
#[derive(Clone)]
struct CardFailure(ScriptError, Option<Limit>);

/// Diagnostic mode (see [`Rules::diagnose`]): a failed step runs again on
/// engines that turn a sandbox limit into an ordinary error raised at the
/// first variable the script reads past the limit. That error takes the
/// chain of calls with it, and the variable's place stands for where the
/// script was.
///
/// The operation and call-depth limits are known in advance, so one run on
/// the *tracing* engine finds them: its own limits are looser, and it stops
/// the script itself once past the real ones. A data limit is hit at an
/// operation no one can predict: a first run on the *learning* engine (the
/// sandbox's limits, counting operations) notes which Rhai call (entry
/// point or card hook, numbered in the order they start) it stopped in and
/// after how many operations; the tracing run stops there.
#[derive(Default)]
pub(crate) struct Diagnosis {
    on: Cell<bool>,
    /// The limit that stopped the last failed call without its chain.
    lost: Cell<Option<Limit>>,
    /// Rhai calls started in this run, and the number of the running one.
    started: Cell<u64>,
    running: Cell<u64>,
    /// (running call, operations) as last counted by the learning engine.
    progress: Cell<(u64, u64)>,
    /// Where the learning run stopped: the tracing run stops there.
    stop: Cell<Option<(u64, u64)>>,
}

/// Which diagnostic engine (see [`Diagnosis`]).
#[derive(Clone, Copy)]
pub(crate) enum Phase {
    Learn,
    Trace,
}

/// How far past the sandbox's limits the tracing engine lets a script go
/// before its own check stops it (it needs to read a variable to do so):
/// extra operations, extra nested calls, and a factor on the data sizes.
const TRACE_SLACK_OPERATIONS: u64 = 1_000_000;
const TRACE_SLACK_CALLS: usize = 8;
const TRACE_SLACK_DATA: usize = 4;

impl Diagnosis {
    fn turn(&self, on: bool) {
        self.on.set(on);
        self.started.set(0);
        self.running.set(0);
        if !on {
            self.lost.set(None);
            self.stop.set(None);
        }
    }

    /// A data limit was lost and no learning run has said where yet.
    fn must_learn(&self) -> bool {
        self.stop.get().is_none() && self.lost.get().is_some_and(Limit::is_data)
    }

    /// A Rhai call starts: numbers it, and returns the number of the call
    /// that was running (for [`Diagnosis::end_call`]).
    fn start_call(&self) -> u64 {
        let n = self.started.get() + 1;
        self.started.set(n);
        self.running.replace(n)
    }

    fn end_call(&self, outer: u64) {
        self.running.set(outer);
    }

    /// A call failed: when its chain was lost, remember the limit (outside
    /// diagnostic mode) or where the learning run stopped (in it).
    fn failed(&self, err: &ScriptError, limit: Option<Limit>) {
        if !err.calls_lost {
            return;
        }
        if !self.on.get() {
            self.lost.set(limit);
        } else if self.must_learn() {
            self.stop.set(Some(self.progress.get()));
        }
    }
}

/// A sandbox for diagnostic mode (see [`Diagnosis`]).
fn diagnostic_sandbox(info: &Rc<Info>, phase: Phase) -> Engine {
    let limits = info.limits;
    match phase {
        Phase::Learn => {
            let mut engine = sandbox(limits);
            let i = info.clone();
            engine.on_progress(move |ops| {
                let d = &i.diagnosis;
                d.progress.set((d.running.get(), ops));
                None
            });
            engine
        }
        Phase::Trace => {
            let mut engine = sandbox(Limits {
                max_operations: limits.max_operations + TRACE_SLACK_OPERATIONS,
                max_call_levels: limits.max_call_levels + TRACE_SLACK_CALLS,
                max_string_size: limits.max_string_size * TRACE_SLACK_DATA,
                max_array_size: limits.max_array_size * TRACE_SLACK_DATA,
                max_map_size: limits.max_map_size * TRACE_SLACK_DATA,
                ..limits
            });
            let i = info.clone();
            #[allow(deprecated)] // "volatile", not deprecated
            engine.on_var(move |_, _, cx| {
                let d = &i.diagnosis;
                let ops = cx.global_runtime_state().num_operations();
                let past = if ops > i.limits.max_operations {
                    Some(Limit::Operations)
                } else if cx.call_level() > i.limits.max_call_levels {
                    Some(Limit::Calls)
                } else {
                    match (d.stop.get(), d.lost.get()) {
                        (Some((call, at)), Some(limit)) if d.running.get() == call && ops >= at => Some(limit),
                        _ => None,
                    }
                };
                match past {
                    Some(limit) => {
                        Err(EvalAltResult::ErrorRuntime(Dynamic::from(Stopped(limit)), Position::NONE).into())
                    }
                    None => Ok(None),
                }
            });
            engine
        }
    }
}

/// Turns a Rhai failure into a [`ScriptError`] naming the innermost script
/// function, its file and line, with the calls that led there (a card
/// hook's failure continues into the calls of the rule function that ran
/// it); and the sandbox limit that stopped the script, if one did.
pub(crate) fn script_error(
    info: &Info,
    fn_files: &HashMap<String, usize>,
    called: &str,
    err: EvalAltResult,
) -> (ScriptError, Option<Limit>) {
    let variant = &info.variant;
    // Rhai nests an `ErrorInFunctionCall` per script call, holding where
    // the call was written in its caller (the entry point's own is taken
    // off by `call_fn`). Chain: (function, position of the call to it in
    // the function before), outermost first.
    let mut chain: Vec<(&str, Position)> = vec![(called, Position::NONE)];
    let mut err = &err;
    while let EvalAltResult::ErrorInFunctionCall(name, _src, inner, p) = err {
        if fn_files.contains_key(name.as_str()) {
            chain.push((name, *p));
        }
        err = inner;
    }
    let file_of = |f: &str| {
        fn_files
            .get(f)
            .map(|&i| variant.files[i].path.clone())
            .unwrap_or_else(|| PathBuf::from("<script>"))
    };
    let frame = |function: &str, at: Position| Frame {
        function: function.to_string(),
        file: file_of(function),
        line: at.line().unwrap_or(0),
        column: at.position().unwrap_or(0),
    };
    let limit = match err {
        EvalAltResult::ErrorRuntime(v, _) => v.read_lock::<Stopped>().map(|s| s.0),
        other => Limit::of(other),
    };
    let mut pos = err.position();
    let calls_lost = pos.is_none() && limit.is_some();
    if limit == Some(Limit::Calls) {
        // The innermost function is the one that could not be entered: it
        // is shown at its definition (where the compiled engine stops it).
        pos = Position::NONE;
    }
    // Innermost first: each function, and where in it things went on.
    let mut frames: Vec<Frame> = Vec::with_capacity(chain.len());
    for i in (0..chain.len()).rev() {
        let at = if i + 1 == chain.len() { pos } else { chain[i + 1].1 };
        frames.push(frame(chain[i].0, at));
    }
    let message = match err {
        // A card hook's failure: its own place and calls come first.
        EvalAltResult::ErrorRuntime(v, _) if v.is::<CardFailure>() => {
            let CardFailure(card, limit) = v.clone_cast::<CardFailure>();
            let calls = card.calls.into_vec().into_iter().chain(frames).collect();
            return (ScriptError { calls, ..card }, limit);
        }
        _ if limit.is_some() => limit.map(|l| l.message(&info.limits)).unwrap_or_default(),
        EvalAltResult::ErrorFunctionNotFound(sig, _) => function_not_found(sig),
        EvalAltResult::ErrorRuntime(value, _) => value.to_string(),
        other => {
            let s = other.to_string();
            // Rhai appends " (line L, position P)"; the location is ours to print.
            match s.rfind(" (line ") {
                Some(i) => s[..i].to_string(),
                None => s,
            }
        }
    };
    if pos.is_none() {
        // A limit hit has no position of its own (Rhai moves it to each call
        // site on the way out, and the first call has none): point at the
        // innermost known function's definition.
        let function = &frames[0].function;
        if let Some(&f) = fn_files.get(function) {
            pos = Position::new(fn_line(&variant.files[f].text, function).max(1) as u16, 1);
        }
    }
    let mut frames = frames.into_iter();
    let here = frames.next().expect("the chain holds the entry point");
    let error = ScriptError {
        file: here.file,
        function: here.function,
        line: pos.line().unwrap_or(0),
        column: pos.position().unwrap_or(0),
        message,
        calls: frames.collect(),
        calls_lost,
    };
    (error, limit)
}

/// Rhai's "function not found" in a designer's words. An operator or a
/// function given `()` (nothing) is nearly always a field never assigned
/// (`this.at_rsik += d`, a misspelt `at_risk`) or a function that returned
/// nothing: say so, rather than "no such function: + ((), i64)".
fn function_not_found(sig: &str) -> String {
    let (name, args) = sig.split_once(" (").unwrap_or((sig, ""));
    let nothing = args.starts_with("()") || args.contains(", ()");
    let operator = !name.is_empty() && !name.chars().any(|c| c.is_alphanumeric() || c == '_');
    match (operator, nothing) {
        (true, true) => format!(
            "'{name}' was given () (nothing): a field that was never assigned (a misspelt this.NAME?) \
             or a function that returned nothing ({sig})"
        ),
        (false, true) => format!(
            "no such function: {sig}; an argument is () (nothing): a field that was never assigned \
             (a misspelt this.NAME?) or a function that returned nothing"
        ),
        (true, false) => format!("'{name}' cannot combine these values ({sig})"),
        (false, false) => format!("no such function: {sig}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operator_given_nothing_names_the_likely_cause() {
        let m = function_not_found("+ ((), i64)");
        assert!(m.starts_with("'+' was given () (nothing)"), "{m}");
        assert!(m.contains("misspelt this.NAME"), "{m}");
        assert_eq!(function_not_found("foo (i64)"), "no such function: foo (i64)");
        assert!(function_not_found("foo (i64, ())").contains("an argument is ()"));
    }

    #[test]
    fn at_least_lists_the_indices_that_reach_the_minimum() {
        let mut engine = Engine::new();
        register_helpers(&mut engine);
        let ints = |src: &str| -> Vec<INT> {
            let a: Array = engine.eval(src).unwrap();
            a.into_iter().map(|v| v.as_int().unwrap()).collect()
        };
        assert_eq!(ints("at_least([0, 3, 1, 0], 1)"), vec![1, 2]);
        assert_eq!(ints("at_least([0, 3, 1, 0], 2)"), vec![1]);
        assert_eq!(ints("at_least([], 0)"), Vec::<INT>::new());
        let e = engine.eval::<Array>("at_least([1, \"x\"], 0)").unwrap_err();
        assert!(e.to_string().contains("expected an array of numbers"), "{e}");
    }
}
