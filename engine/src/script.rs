//! The script layer: a sandboxed Rhai engine per [`crate::Game`], the native
//! functions it lends to rule scripts, and the mapping of script failures to
//! file, function and line.
//!
//! Native functions talk to the game through `Ctx`, a small record shared
//! with the engine: while a script function runs, the engine's [`Core`] is
//! moved into it, so natives read and change it directly; requests that need
//! more script calls (entering a step, ending a turn) are queued and carried
//! out by the game once the script returns. Only `card_hook` re-enters
//! Rhai from inside a native call, to run a card's own script with the same
//! data as `this`; it holds no borrow of the shared record while it does.

use crate::error::{Diagnostic, ScriptError};
use crate::grid;
use crate::state::{Action, ChanceSource, Core, PendingChance, Seat, Status};
use crate::variant::{Value, Variant};
use rhai::{
    Array, CallFnOptions, Dynamic, Engine, EvalAltResult, ImmutableString, Map, NativeCallContext, Position, Scope,
    AST, INT,
};
use std::cell::{OnceCell, RefCell};
use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::path::PathBuf;
use std::rc::Rc;

type NativeResult<T> = Result<T, Box<EvalAltResult>>;

/// Limits that keep a runaway script from hanging or crashing the tool.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_operations: u64,
    pub max_call_levels: usize,
    pub max_expr_depth: usize,
    pub max_string_size: usize,
    pub max_array_size: usize,
    pub max_map_size: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_operations: 2_000_000,
            max_call_levels: 48,
            max_expr_depth: 64,
            max_string_size: 1 << 16,
            max_array_size: 1 << 16,
            max_map_size: 1 << 12,
        }
    }
}

/// What a script call may read and change, shared with the natives.
#[derive(Default)]
pub(crate) struct Ctx {
    pub core: Core,
    /// Legal actions collected by `add`.
    pub legal: Vec<Action>,
    /// True while a step's legal function runs: only then may it `add`.
    pub collecting: bool,
    /// Queued: enter this step.
    pub enter: Option<usize>,
    /// Queued: end the current turn.
    pub end_turn: bool,
    /// Queued: start the turn cycle with this seat.
    pub start_turns: Option<Seat>,
}

/// Read-only facts about the variant that natives need, resolved once.
pub(crate) struct Info {
    pub variant: std::sync::Arc<Variant>,
    action_index: HashMap<String, u16>,
    step_index: HashMap<String, usize>,
    pub step_names: Vec<ImmutableString>,
    params: HashMap<String, Dynamic>,
    deck_index: HashMap<String, usize>,
    cards: Vec<Vec<Map>>,
    stat_index: HashMap<String, usize>,
    /// Names of every script function, set once the scripts are compiled.
    pub functions: OnceCell<HashSet<String>>,
    /// Compiled card scripts, by deck then card (None: a card without one).
    pub card_scripts: OnceCell<Vec<Vec<Option<CardScript>>>>,
    /// When set, what each script function called by the engine (and each
    /// card hook) cost so far: coverage for the fuzzer, and `profile`.
    pub profile: RefCell<Option<std::collections::BTreeMap<String, FunctionProfile>>>,
    /// Rhai's operation count of the running call, kept up to date only
    /// when the engine was built to count operations.
    pub operations: std::cell::Cell<u64>,
}

/// What the calls of one script function (or card hook) cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FunctionProfile {
    pub calls: u64,
    /// Wall-clock time inside the calls, card hooks they trigger included.
    pub nanos: u64,
    /// Rhai operations (statements, expressions, calls: Rhai's own count,
    /// the one `max_operations` limits), card hooks they trigger excluded.
    /// Zero unless the game counts operations ([`crate::Game::profiled`]).
    pub operations: u64,
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

/// A card's own script: the hooks it defines.
pub(crate) struct CardScript {
    pub ast: AST,
    pub fn_files: HashMap<String, usize>,
}

impl Info {
    pub fn new(variant: std::sync::Arc<Variant>) -> Info {
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
            action_index: v
                .actions
                .iter()
                .enumerate()
                .map(|(i, a)| (a.template.name.clone(), i as u16))
                .collect(),
            step_index: v.steps.iter().enumerate().map(|(i, s)| (s.name.clone(), i)).collect(),
            step_names: v.steps.iter().map(|s| ImmutableString::from(s.name.as_str())).collect(),
            params: v
                .params
                .iter()
                .map(|p| (p.name.clone(), to_dynamic(&p.value)))
                .collect(),
            deck_index: v.decks.iter().enumerate().map(|(i, d)| (d.name.clone(), i)).collect(),
            cards,
            stat_index: v.stats.iter().enumerate().map(|(i, (n, _))| (n.clone(), i)).collect(),
            functions: OnceCell::new(),
            card_scripts: OnceCell::new(),
            profile: RefCell::new(None),
            operations: std::cell::Cell::new(0),
            variant,
        }
    }

    fn deck(&self, name: &str) -> NativeResult<usize> {
        self.deck_index.get(name).copied().ok_or_else(|| {
            let known: Vec<_> = self.variant.decks.iter().map(|d| d.name.as_str()).collect();
            format!("unknown deck '{name}' (declared decks: {})", known.join(", ")).into()
        })
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

fn seat_arg(core: &Core, seat: INT) -> NativeResult<Seat> {
    if seat < 0 || seat as usize >= core.seats {
        return Err(format!("seat {seat} does not exist (seats are 0..{})", core.seats).into());
    }
    Ok(seat as usize)
}

/// Builds the sandboxed engine with every native registered.
pub(crate) fn build_engine(info: &Rc<Info>, ctx: &Rc<RefCell<Ctx>>, limits: Limits, count_operations: bool) -> Engine {
    let mut engine = sandbox(limits);
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
    register_helpers(&mut engine);
    engine
}

/// A Rhai engine with the sandbox settings and none of the natives: what
/// every script is parsed and run under.
pub(crate) fn sandbox(limits: Limits) -> Engine {
    let mut engine = Engine::new();
    // Sandbox: no module loading, no eval, bounded everything.
    engine.set_module_resolver(rhai::module_resolvers::DummyModuleResolver::new());
    engine.disable_symbol("eval");
    engine.set_max_operations(limits.max_operations);
    engine.set_max_call_levels(limits.max_call_levels);
    engine.set_max_expr_depths(limits.max_expr_depth, limits.max_expr_depth);
    engine.set_max_string_size(limits.max_string_size);
    engine.set_max_array_size(limits.max_array_size);
    engine.set_max_map_size(limits.max_map_size);
    engine.set_strict_variables(true);
    engine.set_fail_on_invalid_map_property(true);
    // A script's print goes to standard error, and a closed pipe there
    // (`rulesmith ... 2>&1 | head`) must not abort the game.
    engine.on_print(|s| {
        let _ = writeln!(std::io::stderr(), "{s}");
    });
    engine.on_debug(|s, src, pos| {
        let _ = writeln!(std::io::stderr(), "{}{pos:?}: {s}", src.unwrap_or(""));
    });
    engine
}

/// Compiles one script file; a syntax error becomes a diagnostic at the
/// place a reader would look (a missing `;` is reported at the end of the
/// line that lacks it, not at the next token).
pub(crate) fn compile_source(engine: &Engine, src: &crate::variant::SourceFile, what: &str) -> Result<AST, Diagnostic> {
    engine.compile(&src.text).map_err(|e| {
        let pos = e.position();
        let (mut line, mut column) = (pos.line().unwrap_or(0), pos.position().unwrap_or(0));
        if let rhai::ParseErrorType::MissingToken(token, _) = e.err_type() {
            if token == ";" {
                // Back up to the last line with code before the reported one.
                let lines: Vec<&str> = src.text.lines().collect();
                let mut l = line.saturating_sub(1);
                while l > 0 {
                    let code = lines[l - 1].split("//").next().unwrap_or("").trim_end();
                    if !code.trim().is_empty() {
                        line = l;
                        column = code.chars().count() + 1;
                        break;
                    }
                    l -= 1;
                }
            }
        }
        let mut message = format!("{what}script syntax error: {}", e.err_type());
        if let rhai::ParseErrorType::VariableUndefined(_) = e.err_type() {
            // The line, or one of the three before it for a body written
            // below its parameters.
            let lines: Vec<&str> = src.text.lines().collect();
            let here = line.saturating_sub(1).min(lines.len());
            if lines[here.saturating_sub(3)..(here + 1).min(lines.len())]
                .iter()
                .any(|l| opens_anonymous_function(l))
            {
                // Scripts run without capturing closures (see compile flags in
                // docs/ARCHITECTURE.md): say so where a designer would try one.
                message
                    .push_str(" (an anonymous function |..| cannot see the variables around it: write a loop instead)");
            }
        }
        Diagnostic::new(&src.path, message).at_line(Some(&src.text), line, column)
    })
}

/// True when `line` holds the parameter list of an anonymous function,
/// `|x|` or `|a, b|` (not the `||` operator).
fn opens_anonymous_function(line: &str) -> bool {
    let code: Vec<char> = line.split("//").next().unwrap_or("").chars().collect();
    let mut i = 0;
    while i < code.len() {
        if code[i] == '|' {
            if code.get(i + 1) == Some(&'|') {
                i += 2;
                continue;
            }
            let params = code[i + 1..]
                .iter()
                .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | ',' | ' '))
                .count();
            if params > 0 && code.get(i + 1 + params) == Some(&'|') {
                return true;
            }
        }
        i += 1;
    }
    false
}

/// The line (1-based) where `fn NAME(` is defined in `text`, if found.
pub(crate) fn fn_line(text: &str, name: &str) -> usize {
    text.lines()
        .position(|l| {
            let t = l.trim_start();
            t.strip_prefix("fn ")
                .or_else(|| t.strip_prefix("private fn "))
                .is_some_and(|r| {
                    r.trim_start()
                        .strip_prefix(name)
                        .is_some_and(|r| r.trim_start().starts_with('('))
                })
        })
        .map_or(0, |i| i + 1)
}

/// Reading the engine's bookkeeping.
fn register_queries(engine: &mut Engine, info: &Rc<Info>, ctx: &Rc<RefCell<Ctx>>) {
    let c = ctx.clone();
    engine.register_fn("seats", move || c.borrow().core.seats as INT);
    let c = ctx.clone();
    engine.register_fn("active", move || c.borrow().core.active.map_or(-1, |s| s as INT));
    let c = ctx.clone();
    engine.register_fn("actor", move || c.borrow().core.actor.map_or(-1, |s| s as INT));
    let c = ctx.clone();
    engine.register_fn("turn", move || c.borrow().core.turn as INT);
    let c = ctx.clone();
    engine.register_fn("in_play", move || c.borrow().core.in_play() as INT);
    let c = ctx.clone();
    engine.register_fn("is_out", move |seat: INT| -> NativeResult<bool> {
        let ctx = c.borrow();
        Ok(ctx.core.out[seat_arg(&ctx.core, seat)?])
    });
    let c = ctx.clone();
    engine.register_fn("status", move || -> ImmutableString {
        match c.borrow().core.status() {
            Status::Ongoing => "ongoing".into(),
            Status::Won(_) => "won".into(),
            Status::Draw => "draw".into(),
        }
    });
    let c = ctx.clone();
    engine.register_fn("winner", move || match c.borrow().core.status() {
        Status::Won(s) => s as INT,
        _ => -1,
    });
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("step", move || {
        c.borrow()
            .core
            .step
            .map_or_else(|| ImmutableString::from("setup"), |s| i.step_names[s].clone())
    });
    let i = info.clone();
    engine.register_fn("param", move |name: &str| -> NativeResult<Dynamic> {
        i.params.get(name).cloned().ok_or_else(|| {
            let known: Vec<_> = i.variant.params.iter().map(|p| p.name.as_str()).collect();
            format!("unknown parameter '{name}' (declared: {})", known.join(", ")).into()
        })
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
            .ok_or_else(|| format!("deck '{deck}' has no card '{id}'").into())
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
    engine.register_fn("has_deck", move |deck: &str| i.deck_index.contains_key(deck));
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("deck_left", move |deck: &str| -> NativeResult<INT> {
        let d = i.deck(deck)?;
        Ok(c.borrow().core.decks[d].len() as INT)
    });
}

/// Steering the game: steps, turns, seats, the end.
fn register_flow(engine: &mut Engine, info: &Rc<Info>, ctx: &Rc<RefCell<Ctx>>) {
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("enter_step", move |step: &str| -> NativeResult<()> {
        let idx = *i.step_index.get(step).ok_or_else(|| {
            let known: Vec<_> = i.variant.steps.iter().map(|s| s.name.as_str()).collect();
            format!("unknown step '{step}' (declared: {})", known.join(", "))
        })?;
        c.borrow_mut().enter = Some(idx);
        Ok(())
    });
    let c = ctx.clone();
    engine.register_fn("end_turn", move || -> NativeResult<()> {
        let mut ctx = c.borrow_mut();
        if ctx.core.active.is_none() {
            return Err("end_turn() before start_turns(): there is no turn to end".into());
        }
        ctx.end_turn = true;
        Ok(())
    });
    let c = ctx.clone();
    engine.register_fn("start_turns", move |seat: INT| -> NativeResult<()> {
        let mut ctx = c.borrow_mut();
        let s = seat_arg(&ctx.core, seat)?;
        if ctx.core.active.is_some() {
            return Err("start_turns() was already called".into());
        }
        ctx.start_turns = Some(s);
        Ok(())
    });
    let c = ctx.clone();
    engine.register_fn("set_actor", move |seat: INT| -> NativeResult<()> {
        let mut ctx = c.borrow_mut();
        let s = seat_arg(&ctx.core, seat)?;
        ctx.core.actor = Some(s);
        Ok(())
    });
    let c = ctx.clone();
    engine.register_fn("eliminate", move |seat: INT| -> NativeResult<()> {
        let mut ctx = c.borrow_mut();
        let s = seat_arg(&ctx.core, seat)?;
        ctx.core.out[s] = true;
        Ok(())
    });
    let c = ctx.clone();
    engine.register_fn("win", move |seat: INT| -> NativeResult<()> {
        let mut ctx = c.borrow_mut();
        let s = seat_arg(&ctx.core, seat)?;
        ctx.core.status.0 = Status::Won(s);
        Ok(())
    });
    let c = ctx.clone();
    engine.register_fn("draw_game", move || c.borrow_mut().core.status.0 = Status::Draw);
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("stat", move |name: &str, delta: INT| -> NativeResult<()> {
        let idx = *i.stat_index.get(name).ok_or_else(|| {
            let known: Vec<_> = i.variant.stats.iter().map(|(n, _)| n.as_str()).collect();
            format!("unknown statistic '{name}' (declared in [stats]: {})", known.join(", "))
        })?;
        c.borrow_mut().core.stats[idx] += delta;
        Ok(())
    });
}

/// `add(name, values...)`: a legal action, from a step's legal function.
///
/// This is the hottest native of all (a maneuver step may offer a hundred
/// actions), so the action's kind is looked up once per call, values are
/// checked against the template without allocating, and `add_all` builds
/// its combinations in one flat buffer.
fn register_add(engine: &mut Engine, info: &Rc<Info>, ctx: &Rc<RefCell<Ctx>>) {
    fn kind_of(info: &Info, name: &str) -> NativeResult<u16> {
        info.action_index.get(name).copied().ok_or_else(|| {
            let known: Vec<_> = info.variant.actions.iter().map(|a| a.template.name.as_str()).collect();
            format!("unknown action '{name}' (declared: {})", known.join(", ")).into()
        })
    }
    fn push(ctx: &RefCell<Ctx>, info: &Info, kind: u16, values: &[INT]) -> NativeResult<()> {
        info.variant.actions[kind as usize].template.check_values(values)?;
        let mut c = ctx.borrow_mut();
        if !c.collecting {
            return Err("add() may only be called from a step's legal function".into());
        }
        let mut args = [0i32; crate::state::MAX_ARGS];
        for (a, v) in args.iter_mut().zip(values) {
            *a = *v as i32;
        }
        c.legal.push(Action {
            kind,
            len: values.len() as u8,
            args,
        });
        Ok(())
    }
    macro_rules! add_arity {
        ($($v:ident),*) => {{
            let (c, i) = (ctx.clone(), info.clone());
            engine.register_fn("add", move |name: &str $(, $v: INT)*| push(&c, &i, kind_of(&i, name)?, &[$($v),*]));
        }};
    }
    // add_all(name, domains): every combination of the domains, the first
    // varying slowest. A domain is a fixed number, or an array of choices,
    // each a number or an array of numbers (e.g. a grid slot [c, r]) that
    // fills several values at once.
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("add_all", move |name: &str, domains: Array| -> NativeResult<()> {
        let kind = kind_of(&i, name)?;
        // `push` checks each combination against the action's template.
        Domains::read(&domains)?.each(|values| push(&c, &i, kind, values))
    });
    add_arity!();
    add_arity!(a);
    add_arity!(a, b);
    add_arity!(a, b, d);
    add_arity!(a, b, d, e);
    add_arity!(a, b, d, e, f);
    add_arity!(a, b, d, e, f, g);
}

/// The domains of an `add_all`, flattened: every choice's numbers in one
/// buffer, so building the combinations allocates nothing per choice.
#[derive(Debug)]
struct Domains {
    /// The numbers of every choice of every domain, in order.
    values: Vec<INT>,
    /// Per choice: where its numbers start in `values` (one extra at the end).
    starts: Vec<usize>,
    /// Per domain: where its choices start in `starts` (one extra at the end).
    domains: Vec<usize>,
}

impl Domains {
    fn read(domains: &Array) -> NativeResult<Domains> {
        let mut flat = Domains {
            values: Vec::with_capacity(64),
            starts: Vec::with_capacity(32),
            domains: Vec::with_capacity(domains.len() + 1),
        };
        for d in domains {
            flat.domains.push(flat.starts.len());
            if let Ok(x) = d.as_int() {
                flat.choice(&[x]);
            } else if let Some(arr) = d.read_lock::<Array>() {
                for alt in arr.iter() {
                    if let Ok(x) = alt.as_int() {
                        flat.choice(&[x]);
                    } else if let Some(inner) = alt.read_lock::<Array>() {
                        flat.starts.push(flat.values.len());
                        for v in inner.iter() {
                            let x = v
                                .as_int()
                                .map_err(|t| format!("add_all: expected numbers, found {t}"))?;
                            flat.values.push(x);
                        }
                    } else {
                        return Err(format!(
                            "add_all: a choice must be a number or an array of numbers, found {}",
                            alt.type_name()
                        )
                        .into());
                    }
                }
            } else {
                return Err(format!(
                    "add_all: a domain must be a number or an array, found {}",
                    d.type_name()
                )
                .into());
            }
        }
        flat.domains.push(flat.starts.len());
        flat.starts.push(flat.values.len());
        Ok(flat)
    }

    fn choice(&mut self, numbers: &[INT]) {
        self.starts.push(self.values.len());
        self.values.extend_from_slice(numbers);
    }

    fn count(&self) -> usize {
        self.domains.len() - 1
    }

    fn choices(&self, domain: usize) -> usize {
        self.domains[domain + 1] - self.domains[domain]
    }

    /// Numbers in choice `c` (counting every domain's choices in order).
    fn width(&self, c: usize) -> usize {
        self.starts[c + 1] - self.starts[c]
    }

    /// True when some domain has no choice: there is no combination.
    fn is_empty(&self) -> bool {
        (0..self.count()).any(|d| self.choices(d) == 0)
    }

    /// The most numbers a combination can have.
    fn widest(&self) -> usize {
        (0..self.count())
            .map(|d| {
                (self.domains[d]..self.domains[d + 1])
                    .map(|c| self.width(c))
                    .max()
                    .unwrap_or(0)
            })
            .sum()
    }

    /// Calls `f` with every combination, the first domain varying slowest.
    fn each(&self, mut f: impl FnMut(&[INT]) -> NativeResult<()>) -> NativeResult<()> {
        if self.is_empty() {
            return Ok(());
        }
        let mut index = vec![0usize; self.count()];
        let mut values = vec![0 as INT; self.widest()];
        loop {
            let len = self.fill(&index, &mut values);
            f(&values[..len])?;
            // Odometer: advance the last domain first.
            let mut pos = index.len();
            loop {
                if pos == 0 {
                    return Ok(());
                }
                pos -= 1;
                index[pos] += 1;
                if index[pos] < self.choices(pos) {
                    break;
                }
                index[pos] = 0;
            }
        }
    }

    /// Writes the combination `index` into `out` and returns how many
    /// numbers it has (at most [`Domains::widest`]).
    fn fill(&self, index: &[usize], out: &mut [INT]) -> usize {
        let mut len = 0;
        for (d, &k) in index.iter().enumerate() {
            let c = self.domains[d] + k;
            let numbers = &self.values[self.starts[c]..self.starts[c + 1]];
            out[len..len + numbers.len()].copy_from_slice(numbers);
            len += numbers.len();
        }
        len
    }
}

/// Chance: dice and card draws go through the engine, never a script RNG.
fn register_chance(engine: &mut Engine, info: &Rc<Info>, ctx: &Rc<RefCell<Ctx>>) {
    fn request(ctx: &RefCell<Ctx>, p: PendingChance) -> NativeResult<()> {
        let mut c = ctx.borrow_mut();
        if c.core.chance.is_some() {
            return Err("a chance event is already pending: request the next one from its continuation".into());
        }
        c.core.chance = Some(p);
        Ok(())
    }
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("roll", move |count: INT, sides: INT, then: &str| -> NativeResult<()> {
        if !(1..=1000).contains(&count) || !(1..=1_000_000).contains(&sides) {
            return Err(format!("roll({count}, {sides}, ..): need 1..=1000 dice of 1..=1000000 faces").into());
        }
        i.check_continuation(then)?;
        let p = PendingChance {
            source: ChanceSource::Dice { sides: sides as u32 },
            needed: count as u32,
            got: Vec::new(),
            then: then.into(),
        };
        request(&c, p)
    });
    let draw = |secret: bool| {
        let (c, i) = (ctx.clone(), info.clone());
        move |deck: &str, seat: INT, then: &str| -> NativeResult<()> {
            let d = i.deck(deck)?;
            i.check_continuation(then)?;
            let visible_to = if secret {
                Some(seat_arg(&c.borrow().core, seat)?)
            } else {
                None
            };
            if c.borrow().core.decks[d].is_empty() {
                return Err(format!("deck '{deck}' is empty").into());
            }
            let p = PendingChance {
                source: ChanceSource::Deck { deck: d, visible_to },
                needed: 1,
                got: Vec::new(),
                then: then.into(),
            };
            request(&c, p)
        }
    };
    engine.register_fn("draw_secret", draw(true));
    let public = draw(false);
    engine.register_fn("draw", move |deck: &str, then: &str| public(deck, -1, then));
}

/// Cards: revealing secrets, and running a card's own script.
fn register_cards(engine: &mut Engine, info: &Rc<Info>, ctx: &Rc<RefCell<Ctx>>) {
    // reveal(deck, id): a card dealt in secret becomes known to all.
    let (c, i) = (ctx.clone(), info.clone());
    engine.register_fn("reveal", move |deck: &str, id: &str| -> NativeResult<()> {
        let d = i.deck(deck)?;
        let card = i.variant.decks[d]
            .card_index(id)
            .ok_or_else(|| format!("deck '{deck}' has no card '{id}'"))? as u16;
        for s in c.borrow_mut().core.secrets.iter_mut() {
            if s.deck as usize == d && s.card == card {
                s.revealed = true;
            }
        }
        Ok(())
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
            let card = dk
                .card_index(id)
                .ok_or_else(|| format!("deck '{deck}' has no card '{id}'"))?;
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
            if !script.fn_files.contains_key(hook) {
                return Ok(Dynamic::UNIT);
            }
            // Lend the data to the card's script as `this` (a move, not a copy).
            let mut this = Dynamic::from_map(std::mem::take(data));
            let options = CallFnOptions::new()
                .eval_ast(false)
                .rewind_scope(true)
                .bind_this_ptr(&mut this);
            let result = i.measured(
                || format!("card {id}: {hook}"),
                || {
                    nc.engine()
                        .call_fn_with_options::<Dynamic>(options, &mut Scope::new(), &script.ast, hook, args)
                },
            );
            match this.try_cast::<Map>() {
                Some(m) => *data = m,
                None => {
                    return Err(format!("card '{id}': hook '{hook}' replaced the game data with something else").into())
                }
            }
            result.map_err(|e| {
                let err = script_error(&i.variant, &script.fn_files, hook, *e);
                format!("card '{id}': {err}").into()
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
        let mut v = ints(&a)?;
        v.sort_unstable();
        v.dedup();
        Ok(v.len() as INT)
    });
    // Indices whose value is at least `min`: e.g. what can pay a cost.
    engine.register_fn("at_least", |a: Array, min: INT| -> NativeResult<Array> {
        let mut out = Array::new();
        for (i, v) in a.iter().enumerate() {
            let x = v
                .as_int()
                .map_err(|t| format!("at_least: expected an array of numbers, found {t}"))?;
            if x >= min {
                out.push(Dynamic::from_int(i as INT));
            }
        }
        Ok(out)
    });
    // Ordinal grid (see grid.rs): slots for a mover, moving, compacting.
    engine.register_fn(
        "grid_slots",
        |cols: Array, rows: Array, mover: INT| -> NativeResult<Array> {
            let (c, r) = (ints(&cols)?, ints(&rows)?);
            if c.len() != r.len() || mover >= c.len() as INT {
                return Err(
                    "grid_slots: cols and rows must have one entry per piece, and mover must be a piece".into(),
                );
            }
            let m = (mover >= 0).then_some(mover as usize);
            Ok(grid::slots(&c, &r, m)
                .into_iter()
                .map(|(x, y)| Dynamic::from_array(vec![x.into(), y.into()]))
                .collect())
        },
    );
    engine.register_fn(
        "grid_place",
        |cols: Array, rows: Array, mover: INT, col: INT, row: INT| -> NativeResult<Array> {
            let (mut c, mut r) = (ints(&cols)?, ints(&rows)?);
            if c.len() != r.len() || mover < 0 || mover >= c.len() as INT {
                return Err(
                    "grid_place: cols and rows must have one entry per piece, and mover must be a piece".into(),
                );
            }
            if !grid::place(&mut c, &mut r, mover as usize, col, row) {
                return Err(format!("grid_place: {col},{row} is not a free slot for piece {mover}").into());
            }
            Ok(vec![to_array(&c).into(), to_array(&r).into()])
        },
    );
    engine.register_fn("grid_compact", |cols: Array, rows: Array| -> NativeResult<Array> {
        let (mut c, mut r) = (ints(&cols)?, ints(&rows)?);
        if c.len() != r.len() {
            return Err("grid_compact: cols and rows must have one entry per piece".into());
        }
        grid::compact(&mut c, &mut r);
        Ok(vec![to_array(&c).into(), to_array(&r).into()])
    });
}

/// The compiled scripts of a variant, with where each function came from.
pub(crate) struct Compiled {
    pub ast: AST,
    /// Script function name -> index into `Variant::files`.
    pub fn_files: HashMap<String, usize>,
    /// (name, arity) of every script function.
    pub signatures: HashSet<(String, usize)>,
}

/// Compiles every script of the variant; all syntax errors are reported.
pub(crate) fn compile(engine: &Engine, variant: &Variant) -> Result<Compiled, Vec<Diagnostic>> {
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

/// Compiles every card script; each may define only its deck's hooks.
pub(crate) fn compile_cards(
    engine: &Engine,
    variant: &Variant,
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
                    for f in ast.iter_functions() {
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
                    cards.push(Some(CardScript { ast, fn_files }));
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

/// Turns a Rhai failure into a [`ScriptError`] naming file, function, line.
pub(crate) fn script_error(
    variant: &Variant,
    fn_files: &HashMap<String, usize>,
    called: &str,
    err: EvalAltResult,
) -> ScriptError {
    // Walk nested calls to the innermost script function.
    let mut function = called.to_string();
    let mut err = &err;
    let mut pos = err.position();
    while let EvalAltResult::ErrorInFunctionCall(name, _src, inner, p) = err {
        if fn_files.contains_key(name.as_str()) {
            function = name.clone();
        }
        pos = if inner.position().is_none() {
            *p
        } else {
            inner.position()
        };
        err = inner;
    }
    if pos == Position::NONE {
        pos = err.position();
    }
    let message = match err {
        EvalAltResult::ErrorTooManyOperations(_) => {
            "the script ran too long (operation limit reached): an endless loop or runaway recursion?".to_string()
        }
        EvalAltResult::ErrorStackOverflow(_) => "too many nested calls: runaway recursion?".to_string(),
        EvalAltResult::ErrorFunctionNotFound(sig, _) => format!("no such function: {sig}"),
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
    let file_index = fn_files.get(&function).copied();
    if pos == Position::NONE {
        // A limit hit in the function first called has no position of its
        // own: point at the function's definition.
        if let Some(f) = file_index {
            pos = Position::new(fn_line(&variant.files[f].text, &function).max(1) as u16, 1);
        }
    }
    let file = fn_files
        .get(&function)
        .map(|&f| variant.files[f].path.clone())
        .unwrap_or_else(|| PathBuf::from("<script>"));
    ScriptError {
        file,
        function,
        line: pos.line().unwrap_or(0),
        column: pos.position().unwrap_or(0),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn array(items: Vec<Dynamic>) -> Dynamic {
        Dynamic::from_array(items)
    }

    fn int(x: INT) -> Dynamic {
        Dynamic::from_int(x)
    }

    /// Every combination `add_all` would add, in order.
    fn combinations(flat: &Domains) -> Vec<Vec<INT>> {
        let mut out = Vec::new();
        flat.each(|v| {
            out.push(v.to_vec());
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn domains_give_every_combination_first_domain_slowest() {
        // [0, 1] x a slot [c, r] from two x a fixed 7.
        let slots = array(vec![array(vec![int(2), int(3)]), array(vec![int(4), int(5)])]);
        let d = Domains::read(&vec![array(vec![int(0), int(1)]), slots, int(7)]).unwrap();
        assert_eq!(d.widest(), 4);
        assert_eq!(
            combinations(&d),
            vec![vec![0, 2, 3, 7], vec![0, 4, 5, 7], vec![1, 2, 3, 7], vec![1, 4, 5, 7]]
        );
    }

    #[test]
    fn an_empty_domain_gives_nothing_and_bad_domains_are_errors() {
        let d = Domains::read(&vec![array(vec![int(1)]), array(vec![])]).unwrap();
        assert!(d.is_empty());
        assert!(combinations(&d).is_empty());
        // Choices of different widths: the widest combination counts.
        let d = Domains::read(&vec![array(vec![array(vec![]), array(vec![int(1), int(2)])])]).unwrap();
        assert_eq!(d.widest(), 2);
        assert_eq!(combinations(&d), vec![vec![], vec![1, 2]]);
        let e = Domains::read(&vec![Dynamic::from("x")]).unwrap_err();
        assert!(e.to_string().contains("a domain must be a number or an array"), "{e}");
        let e = Domains::read(&vec![array(vec![Dynamic::TRUE])]).unwrap_err();
        assert!(e.to_string().contains("a choice must be a number or an array"), "{e}");
        let e = Domains::read(&vec![array(vec![array(vec![Dynamic::TRUE])])]).unwrap_err();
        assert!(e.to_string().contains("expected numbers"), "{e}");
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

    #[test]
    fn only_a_parameter_list_counts_as_an_anonymous_function() {
        assert!(opens_anonymous_function("let ok = [1, 2].filter(|n| n < goal);"));
        assert!(opens_anonymous_function("list.reduce(|sum, x| sum + x, 0)"));
        assert!(!opens_anonymous_function("if goal > 2 || gaol > 5 {"));
        assert!(!opens_anonymous_function("let x = 1; // |not| code"));
        assert!(!opens_anonymous_function("let flags = a | 4;"));
    }
}
