//! Rulesmith's compiler: a variant's Rhai scripts (rule scripts and card
//! scripts, after `extends` and overrides are resolved) translated to typed
//! Rust for the compiled engine. The interpreter stays the reference; the
//! compiled code must play exactly the same games.
//!
//! Pipeline: [`lower`] (Rhai's AST to our tree) -> [`infer`] (whole-variant
//! types, dynamic where they conflict) -> [`emit`] (Rust source against the
//! `rulesmith-runtime` crate). [`explain`] lists what fell back to dynamic
//! values, and why.
//!
//! The compiler knows no game and no engine type: what it needs of a
//! variant comes in as [`Facts`].

pub mod build;
pub mod emit;
pub mod from_variant;
pub mod infer;
pub mod ir;
pub mod lower;
pub mod profdata;
pub mod refused;
pub mod setup_fields;
pub mod specialize;
pub mod types;

use ir::{FnId, Func, Owner};
use std::collections::HashMap;
use std::path::PathBuf;

/// The type of a parameter or card field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    Int,
    Bool,
    Str,
    /// Declared with a type the loader did not understand.
    Any,
}

#[derive(Clone, Debug, Hash)]
pub struct ActionFacts {
    pub name: String,
    pub apply: String,
    pub arity: usize,
}

#[derive(Clone, Debug, Hash)]
pub struct StepFacts {
    pub name: String,
    pub legal: String,
    pub enter: Option<String>,
}

#[derive(Clone, Debug, Hash)]
pub struct DeckFacts {
    pub name: String,
    /// (name, type, optional)
    pub fields: Vec<(String, Scalar, bool)>,
    /// (hook, arity)
    pub hooks: Vec<(String, usize)>,
    /// (card id, index of its script file)
    pub cards: Vec<(String, Option<usize>)>,
}

/// What the compiler needs to know of a variant: its files, the names its
/// scripts may use, and the functions the engine calls. Parameter values
/// and card data are not here: they stay run-time data.
#[derive(Clone, Debug, Default, Hash)]
pub struct Facts {
    /// Every source file: (path, text).
    pub files: Vec<(PathBuf, String)>,
    /// The rule scripts, in order (a later definition replaces an earlier
    /// one of the same name and arity).
    pub scripts: Vec<usize>,
    pub actions: Vec<ActionFacts>,
    pub steps: Vec<StepFacts>,
    pub params: Vec<(String, Scalar)>,
    pub decks: Vec<DeckFacts>,
    pub stats: Vec<String>,
    pub setup: Option<String>,
    pub turn_start: Option<String>,
    pub turn_end: Option<String>,
    pub summary: Option<String>,
    pub render: Option<String>,
    pub evaluate: Option<String>,
    pub labels: Option<String>,
    pub invariants: Vec<String>,
}

impl Facts {
    /// A key for everything that shapes the generated code (not parameter
    /// values or card data), with the compiler's version: the build cache
    /// is keyed by it.
    pub fn fingerprint(&self) -> String {
        use std::hash::Hash;
        let mut h = Fnv::default();
        env!("CARGO_PKG_VERSION").hash(&mut h);
        COMPILER_REVISION.hash(&mut h);
        // Paths are not part of the key: the same scripts elsewhere are the
        // same program.
        for (_, text) in &self.files {
            text.hash(&mut h);
        }
        self.scripts.hash(&mut h);
        self.actions.hash(&mut h);
        self.steps.hash(&mut h);
        self.params.hash(&mut h);
        self.decks.hash(&mut h);
        self.stats.hash(&mut h);
        (&self.setup, &self.turn_start, &self.turn_end).hash(&mut h);
        (&self.summary, &self.render, &self.evaluate, &self.labels).hash(&mut h);
        self.invariants.hash(&mut h);
        format!("{:016x}", std::hash::Hasher::finish(&h))
    }
}

/// FNV-1a: the cache keys' hash. Ours, so that a key is the same on every
/// machine and Rust version (std promises no algorithm for its hasher).
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= *b as u64;
            self.0 = self.0.wrapping_mul(0x100_0000_01b3);
        }
    }
}

/// Bumped whenever generated code changes for the same input.
pub const COMPILER_REVISION: u32 = 9;

/// A script the compiler cannot translate, at its place.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}:{}:{}: {message}", file.display(), pos.line, pos.col)]
pub struct CompileError {
    pub file: PathBuf,
    pub pos: ir::Pos,
    pub message: String,
}

/// One place the compiled code uses dynamic values, for `--explain`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fallback {
    pub file: PathBuf,
    pub function: String,
    pub line: u32,
    pub what: String,
    pub why: String,
}

/// The compiler's output: Rust source and what fell back.
pub struct Output {
    pub rust: String,
    pub fallbacks: Vec<Fallback>,
    pub fingerprint: String,
    /// Functions translated, rule and card.
    pub functions: usize,
}

/// Translates a variant's scripts to Rust.
pub fn compile(facts: &Facts) -> Result<Output, CompileError> {
    let mut next_expr = 0;
    let mut funcs: Vec<Func> = Vec::new();
    let mut rule_fns: HashMap<(String, usize), FnId> = HashMap::new();
    for &file in &facts.scripts {
        let (path, text) = &facts.files[file];
        for f in lower::lower_file(path, text, file, Owner::Rules, &mut next_expr)? {
            let key = (f.name.clone(), f.params.len());
            rule_fns.insert(key, funcs.len());
            funcs.push(f);
        }
    }
    // Functions replaced by a later script are dropped: keep only the last.
    let live: std::collections::HashSet<FnId> = rule_fns.values().copied().collect();
    let mut keep: Vec<Func> = Vec::new();
    let mut renumber = HashMap::new();
    for (i, f) in funcs.into_iter().enumerate() {
        if live.contains(&i) {
            renumber.insert(i, keep.len());
            keep.push(f);
        }
    }
    for v in rule_fns.values_mut() {
        *v = renumber[v];
    }
    let mut funcs = keep;
    let mut card_fns: HashMap<(usize, usize, String, usize), FnId> = HashMap::new();
    for (d, deck) in facts.decks.iter().enumerate() {
        for (c, (_, script)) in deck.cards.iter().enumerate() {
            let Some(file) = script else { continue };
            let (path, text) = &facts.files[*file];
            for f in lower::lower_file(path, text, *file, Owner::Card { deck: d, card: c }, &mut next_expr)? {
                card_fns.insert((d, c, f.name.clone(), f.params.len()), funcs.len());
                funcs.push(f);
            }
        }
    }
    let specialize::Program { funcs, mut typed, .. } =
        specialize::specialize(facts, funcs, &rule_fns, &card_fns, next_expr)?;
    setup_fields::mark(
        &funcs,
        facts.setup.as_deref().and_then(|n| ir::rule_function(&funcs, n, 0)),
        &mut typed,
    );
    let fallbacks = explain(facts, &funcs, &mut typed);
    let fingerprint = facts.fingerprint();
    let rust = emit::Emit::new(facts, &funcs, &mut typed).program(&fingerprint);
    Ok(Output {
        rust,
        fallbacks,
        fingerprint,
        functions: funcs.iter().filter(|f| f.copy_of.is_none()).count(),
    })
}

/// Every variable, parameter and return value left dynamic, with the first
/// reason the inference recorded.
fn explain(facts: &Facts, funcs: &[Func], t: &mut infer::Typed) -> Vec<Fallback> {
    let mut out = Vec::new();
    for (i, f) in funcs.iter().enumerate() {
        let file = facts.files[f.file].0.clone();
        let mut add = |t: &mut infer::Typed, ty: types::Ty, what: String| {
            if t.store.is_dyn(ty) {
                let root = t.store.find(ty);
                let why = t
                    .store
                    .why_dyn
                    .get(&root)
                    .or_else(|| t.store.why_dyn.get(&ty))
                    .cloned()
                    .unwrap_or_else(|| "it holds values of different kinds".into());
                out.push(Fallback {
                    file: file.clone(),
                    function: f.name.clone(),
                    line: f.pos.line,
                    what,
                    why,
                });
            }
        };
        for (v, name) in f.vars.iter().enumerate() {
            let ty = t.var_ty[i][v];
            let what = if f.params.contains(&v) {
                format!("parameter '{name}'")
            } else {
                format!("variable '{name}'")
            };
            add(t, ty, what);
        }
        let ret = t.ret_ty[i];
        add(t, ret, "the return value".into());
    }
    // Fields of `this` and other records.
    let this = t.this_ty;
    if let Some(r) = t.store.rec_id(this) {
        let fields: Vec<(String, types::Ty)> = t.store.recs[r].fields.iter().map(|(k, f)| (k.clone(), f.ty)).collect();
        for (k, ty) in fields {
            if t.store.is_dyn(ty) {
                let root = t.store.find(ty);
                out.push(Fallback {
                    file: PathBuf::from("this"),
                    function: String::new(),
                    line: 0,
                    what: format!("this.{k}"),
                    why: t.store.why_dyn.get(&root).cloned().unwrap_or_default(),
                });
            }
        }
    }
    // A function and its copies (see `specialize.rs`) report once.
    let mut seen = std::collections::HashSet::new();
    out.retain(|f| {
        seen.insert((
            f.file.clone(),
            f.function.clone(),
            f.line,
            f.what.clone(),
            f.why.clone(),
        ))
    });
    out
}

/// The line (1-based) where `fn NAME(` is defined in `text`.
pub fn fn_line(text: &str, name: &str) -> Option<usize> {
    match rulesmith_core::source::fn_line(text, name) {
        0 => None,
        n => Some(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The facts of a variant with one rule script and a `setup`.
    fn facts(script: &str) -> Facts {
        Facts {
            files: vec![(PathBuf::from("rules.rhai"), script.to_string())],
            scripts: vec![0],
            setup: Some("setup".into()),
            ..Facts::default()
        }
    }

    fn dynamic(out: &Output) -> Vec<String> {
        out.fallbacks
            .iter()
            .map(|f| format!("{} {}: {}", f.function, f.what, f.why))
            .collect()
    }

    #[test]
    fn a_helper_called_with_different_kinds_gets_a_copy_per_kind() {
        let out = compile(&facts(
            r#"
            fn filled(n, v) { let out = []; for i in 0..n { out.push(v); } out }
            fn setup() {
                this.numbers = filled(3, 0);
                this.more = filled(2, 7);
                this.lists = filled(2, []);
                this.names = filled(2, "x");
            }
            "#,
        ))
        .expect("compiles");
        assert!(out.fallbacks.is_empty(), "{:?}", dynamic(&out));
        // Copies are not functions of their own for the designer...
        assert_eq!(out.functions, 2);
        // ...but the Rust has one per kind of call (numbers twice: one copy).
        assert_eq!(out.rust.matches("/// `filled`").count(), 3, "{}", out.rust);
        assert!(out.rust.contains("f_numbers: Vec<i64>,"), "{}", out.rust);
        assert!(out.rust.contains("f_names: Vec<Str>,"), "{}", out.rust);
    }

    #[test]
    fn anonymous_functions_compile_typed_as_functions_of_their_own() {
        let out = compile(&facts(
            r#"
            fn setup() {
                let a = [3, 1, 2];
                this.small = a.filter(|x| x <= 2);
                this.names = a.map(|x, i| `${x}@${i}`);
                this.total = a.reduce(|s, x| s + x, 0);
                a.sort(|p, q| q - p);
                this.sorted = a;
                this.any = a.some(|x| x > 2) && a.all(|x| x > 0);
                this.first = a.index_of(|x| x == 2);
            }
            "#,
        ))
        .expect("compiles");
        assert!(out.fallbacks.is_empty(), "{:?}", dynamic(&out));
        // One function each, besides setup; not counted twice for one body.
        assert_eq!(out.functions, 8, "{}", out.rust);
        assert!(out.rust.contains("f_small: Vec<i64>,"), "{}", out.rust);
        assert!(out.rust.contains("f_names: Vec<Str>,"), "{}", out.rust);
        assert!(out.rust.contains("f_total: i64,"), "{}", out.rust);
        assert!(out.rust.contains("sort_by_script("), "{}", out.rust);
    }

    #[test]
    fn a_function_pointer_outside_a_method_call_is_refused_at_its_line() {
        let e = compile(&facts(
            "fn setup() {\n    let f = |x| x + 1;\n    this.a = [1].map(f);\n}\n",
        ))
        .err();
        let e = e.expect("refused");
        assert_eq!((e.pos.line, e.file.clone()), (2, PathBuf::from("rules.rhai")), "{e}");
        assert!(e.message.contains("a function pointer"), "{e}");
        let e = compile(&facts("fn setup() {\n    this.a = [1].map(|x| this.b);\n}\n")).err();
        assert!(e
            .expect("refused")
            .message
            .contains("this in a function given to a method"));
    }

    #[test]
    fn names_held_in_variables_are_looked_up_when_the_call_runs() {
        let mut f = facts(
            r#"
            fn setup() {
                let s = "play";
                enter_step(s);
                let k = "sh" + "out";
                this.p = param(k);
                let c = ["calls"][0];
                stat(c, 1);
            }
            fn play_legal() { let n = "go"; add(n); add_all(n, []); }
            "#,
        );
        f.steps = vec![StepFacts {
            name: "play".into(),
            legal: "play_legal".into(),
            enter: None,
        }];
        f.params = vec![("shout".into(), Scalar::Bool)];
        f.stats = vec!["calls".into()];
        f.actions = vec![ActionFacts {
            name: "go".into(),
            apply: "do_go".into(),
            arity: 0,
        }];
        let out = compile(&f).expect("compiles");
        for lookup in [
            "rt.step_index(",
            "rt.param_named(",
            "rt.stat_index(",
            "rt.action_index(",
        ] {
            assert!(out.rust.contains(lookup), "{lookup}: {}", out.rust);
        }
        assert!(!out.rust.contains("needs the"), "{}", out.rust);
    }

    #[test]
    fn a_switch_finds_its_case_values_again_and_refuses_a_character() {
        let out = compile(&facts(
            r#"
            fn setup() {
                let n = turn();
                this.band = switch n { 0 | 1 => "low", -3 => "odd", 2..=9 => "mid", 10..20 if n > 12 => "late", _ => "high" };
                this.flag = switch "b" + "" { "a" => 1, "b" => 2, _ => 3 };
            }
            "#,
        ))
        .expect("compiles");
        assert!(out.fallbacks.is_empty(), "{:?}", dynamic(&out));
        // Every value written in a case is in the generated tests.
        for v in ["Str::lit(\"a\")", "Str::lit(\"b\")", "-3"] {
            assert!(out.rust.contains(v), "{v}: {}", out.rust);
        }
        let e = compile(&facts("fn setup() {\n    switch 'x' { 'x' => 1, _ => 2 };\n}\n")).err();
        let e = e.expect("refused");
        assert_eq!(e.pos.line, 2, "{e}");
        assert!(e.message.contains("switch cases of other kinds"), "{e}");
    }

    #[test]
    fn throw_and_coalesce_compile() {
        let out = compile(&facts(
            r#"
            fn setup() {
                let m = #{};
                this.n = m["x"] ?? 3;
                if turn() > 1000 { throw "too late: " + turn(); }
            }
            "#,
        ))
        .expect("compiles");
        assert!(out.rust.contains("__thrown"), "{}", out.rust);
    }

    #[test]
    fn a_value_tested_with_type_of_is_typed_in_its_branch() {
        let out = compile(&facts(
            r#"
            fn setup() {
                let v = if turn() > 100 { "none" } else { 1 };
                this.n = if type_of(v) == "i64" { v } else { 0 };
            }
            "#,
        ))
        .expect("compiles");
        let slow = dynamic(&out);
        assert!(slow.iter().any(|s| s.contains("variable 'v'")), "{slow:?}");
        assert!(!slow.iter().any(|s| s.contains("this.n")), "{slow:?}");
    }

    #[test]
    fn a_map_field_of_several_kinds_leaves_the_values_it_copies_typed() {
        let out = compile(&facts(
            r#"
            fn setup() {
                this.hull = [3, 2];
                let m = #{ hull: this.hull[0] };
                if turn() > 100 { m = #{ hull: "destroyed" }; }
                this.shown = m;
            }
            "#,
        ))
        .expect("compiles");
        let slow = dynamic(&out);
        assert!(!slow.iter().any(|s| s.contains("this.hull")), "{slow:?}");
        assert!(out.rust.contains("f_hull: Vec<i64>,"), "{}", out.rust);
    }

    #[test]
    fn a_string_compared_with_a_literal_or_a_variable_is_read_in_place() {
        let out = compile(&facts(
            r#"
            fn setup() {
                this.kind = ["open", "shut"];
                let k = "shut";
                this.opened = if this.kind[0] == "open" { 1 } else { 0 };
                this.same = if this.kind[1] == k { 1 } else { 0 };
                this.both = if this.kind[0] < this.kind[1] { 1 } else { 0 };
            }
            "#,
        ))
        .expect("compiles");
        let rust = &out.rust;
        // Against a literal or a variable: both sides borrowed (the literal
        // is a value), compared in place.
        assert!(
            rust.contains(r#"let __t7 = Str::lit("open"); ((*__t6) == __t7)"#),
            "{rust}"
        );
        assert!(rust.contains("let __t12 = &v0_k; ((*__t11) == (*__t12))"), "{rust}");
        // Two places: the left is a copy (evaluating the right might change
        // it), the right is read in place.
        assert!(rust.contains("}).clone(); let __t"), "{rust}");
        assert!(!rust.contains("v0_k.clone()"), "{rust}");
    }

    #[test]
    fn a_copy_of_this_never_written_in_a_reading_function_is_a_borrow() {
        let out = compile(&facts(
            r#"
            fn setup() { this.counts = [[1, 2], [3, 4, 5]]; this.low = this.lowest(0) + this.bumped(1); }
            fn lowest(s) {
                let p = this.counts[s];
                let low = p[0];
                for x in p { if x < low { low = x; } }
                low
            }
            fn bumped(s) {
                let q = this.counts[s];
                q[0] += 1;
                q[0]
            }
            fn summary(viewer) { let p = this.counts[0]; this.counts[0] = p; p.len() }
            "#,
        ))
        .expect("compiles");
        let rust = &out.rust;
        // Read-only function, never written: the array is read in place.
        assert!(rust.contains("let v1_p: &Vec<i64> = "), "{rust}");
        assert!(rust.contains("get(&(*v1_p), "), "{rust}");
        // Written afterwards, or in a function that writes `this`: a copy.
        assert!(rust.contains("let mut v1_q: Vec<i64> = "), "{rust}");
        assert_eq!(rust.matches(": &Vec<i64> = ").count(), 1, "{rust}");
    }

    /// The Rust signature of script function `name` (its first copy).
    fn signature_of<'a>(rust: &'a str, name: &str) -> &'a str {
        let doc = format!("/// `{name}`");
        let at = rust
            .find(&doc)
            .unwrap_or_else(|| panic!("no function {name} in {rust}"));
        let line = &rust[at..];
        let start = line.find("pub fn").expect("a function");
        let end = line[start..].find('{').expect("a body") + start;
        &line[start..end]
    }

    #[test]
    fn a_pair_never_resized_is_a_rust_array() {
        let out = compile(&facts(
            r#"
            fn pair(a) { [a, a + 1] }
            fn setup() {
                let p = pair(turn());
                p[0] = p[-1] * 2;
                this.total = p[0] + p[1] + p.len();
                for x in p { this.total += x; }
            }
            "#,
        ))
        .expect("compiles");
        assert!(
            signature_of(&out.rust, "pair").ends_with("-> R<[i64; 2]> "),
            "{}",
            out.rust
        );
        assert!(out.rust.contains("let __a: [i64; 2] = ["), "{}", out.rust);
    }

    #[test]
    fn an_array_pushed_to_or_made_with_two_lengths_is_a_vector() {
        let out = compile(&facts(
            r#"
            fn grown(a) { let p = [a, a]; p.push(3); p }
            fn either(a) { if a > 0 { [1, 2] } else { [1, 2, 3] } }
            fn joined(a) { [a] + [a] }
            fn summed(a) { let out = []; out += [a]; out }
            fn setup() {
                this.n = grown(1).len() + either(turn()).len() + joined(2).len() + summed(3).len();
            }
            "#,
        ))
        .expect("compiles");
        for f in ["grown", "either", "joined", "summed"] {
            assert!(
                signature_of(&out.rust, f).ends_with("-> R<Vec<i64>> "),
                "{f}: {}",
                out.rust
            );
        }
    }

    #[test]
    fn pairs_returned_in_lists_of_several_lengths_are_a_vector_of_arrays() {
        let out = compile(&facts(
            r#"
            fn pairs(a) {
                if a > 0 { return [[a, 1]]; }
                [[a, 2], [a, 3]]
            }
            fn setup() {
                this.n = 0;
                for p in pairs(turn()) { this.n += p[0] + p[1]; }
                // Kept, not only looped over: a vector (not a `Few`).
                let kept = pairs(1);
                this.n += kept.len();
                let slots = grid_slots([0, 1], [0, 0], 0);
                this.n += slots[0][1];
            }
            "#,
        ))
        .expect("compiles");
        assert!(
            signature_of(&out.rust, "pairs").ends_with("-> R<Vec<[i64; 2]>> "),
            "{}",
            out.rust
        );
        assert!(out.rust.contains("v2_slots: Vec<[i64; 2]>"), "{}", out.rust);
    }

    #[test]
    fn arrays_stored_in_the_game_data_stay_vectors() {
        let out = compile(&facts(
            r#"
            fn setup() {
                let p = [1, 2];
                this.pairs = [p, [3, 4]];
                let kept = [5, 6];
                this.first = kept[0];
            }
            "#,
        ))
        .expect("compiles");
        assert!(out.rust.contains("f_pairs: Vec<Vec<i64>>,"), "{}", out.rust);
        assert!(out.rust.contains(": Vec<i64> = "), "{}", out.rust);
        assert!(out.rust.contains(": [i64; 2] = "), "{}", out.rust);
    }

    #[test]
    fn fields_setup_always_assigns_before_any_read_are_stored_without_option() {
        let out = compile(&facts(
            r#"
            fn start_turn() {
                this.turn = 1;
                if this.sure { return; }
                this.late = 2;
            }
            fn peek() { this.peeked }
            fn setup() {
                this.sure = true;
                this.list = [];
                this.list.push(1);
                let x = this.read_first;
                this.read_first = 1;
                if x == () { this.maybe = 1; }
                let y = peek();
                this.peeked = 3;
                this.start_turn();
                this.after_call = 4;
                if this.sure { return; }
                this.after_return = 5;
            }
            fn later() { this.maybe = 2; this.read_first += 1; this.late = 3; this.after_return = 6; }
            "#,
        ))
        .expect("compiles");
        let rust = &out.rust;
        for plain in ["f_sure: bool", "f_list: Vec<i64>", "f_turn: i64", "f_after_call: i64"] {
            assert!(rust.contains(&format!("pub {plain},")), "{plain}: {rust}");
        }
        // Read before it is assigned (here, or in a function called
        // first), assigned only sometimes, or after a possible return.
        for optional in ["f_read_first", "f_maybe", "f_peeked", "f_late", "f_after_return"] {
            assert!(rust.contains(&format!("pub {optional}: Option<")), "{optional}: {rust}");
        }
    }

    #[test]
    fn a_field_read_through_a_parameter_is_present_when_every_literal_has_it() {
        let out = compile(&facts(
            r#"
            fn target_of(l) { l.target }
            fn part_of(l) { l.part }
            fn setup() {
                this.locks = [#{ target: 1, part: 2 }];
                this.locks.push(#{ target: 3, part: 4 });
                this.t = target_of(this.locks[0]);
                let other = #{ part: 5 };
                if turn() > 100 { other = #{ part: 6, extra: 7 }; }
                this.p = part_of(other);
            }
            "#,
        ))
        .expect("compiles");
        let rust = &out.rust;
        // Read first through a parameter, built whole by every literal.
        assert!(rust.contains("pub f_target: i64,"), "{rust}");
        // One literal lacks `extra`: optional there.
        assert!(rust.contains("pub f_extra: Option<i64>,"), "{rust}");
    }

    #[test]
    fn a_few_items_returned_for_a_loop_are_kept_inline() {
        let out = compile(&facts(
            r#"
            fn pairs(a) {
                if a > 1 { return [[a, 1], [a, 2]]; }
                [[a, 0]]
            }
            fn kept(a) { [[a, 0]] }
            fn many(a) { [a, 1, 2, 3, 4] }
            fn setup() {
                this.n = 0;
                for p in pairs(2) { this.n += p[1]; }
                for p in kept(1) { this.n += p[0]; }
                let k = kept(3);
                for x in many(1) { this.n += x; }
            }
            "#,
        ))
        .expect("compiles");
        let rust = &out.rust;
        assert!(rust.contains("-> R<Few<[i64; 2]>>"), "{rust}");
        assert!(rust.contains("Few::of([__t"), "{rust}");
        // Kept in a variable by one caller, or more than a few: a vector.
        assert_eq!(rust.matches("-> R<Few<").count(), 1, "{rust}");
    }

    #[test]
    fn this_passed_as_a_value_in_an_assignment_may_read_any_field() {
        let out = compile(&facts(
            r#"
            fn peek(m) { m.b }
            fn look() { this.seen = peek(this); 0 }
            fn setup() {
                this.a = 1;
                let x = look();
                this.b = 2;
            }
            "#,
        ))
        .expect("compiles");
        assert!(out.rust.contains("pub f_a: i64,"), "{}", out.rust);
        // `look` gives `peek` all of `this`, which reads `b` before it is set.
        assert!(out.rust.contains("pub f_b: Option<i64>,"), "{}", out.rust);
    }

    #[test]
    fn fields_of_a_this_built_from_a_map_literal_keep_their_presence() {
        let out = compile(&facts(
            r#"
            fn setup() {
                this.a = 1;
                this = #{ b: 2 };
                this.c = 3;
            }
            "#,
        ))
        .expect("compiles");
        assert!(out.rust.contains("pub f_a: Option<i64>,"), "{}", out.rust);
        assert!(out.rust.contains("pub f_c: Option<i64>,"), "{}", out.rust);
    }

    #[test]
    fn a_placement_written_back_to_its_own_columns_and_rows_is_made_in_place() {
        let out = compile(&facts(
            r#"
            fn setup() {
                this.col = [0, 1];
                this.row = [0, 0];
                let moved = grid_place(this.col, this.row, 0, 2, 1);
                this.col = moved[0];
                this.row = moved[1];
                let cols = this.col;
                let rows = this.row;
                let local = grid_place(cols, rows, 1, 0, 1);
                cols = local[0];
                rows = local[1];
                let swapped = grid_place(this.col, this.row, 1, 2, 1);
                this.row = swapped[0];
                this.col = swapped[1];
                let kept = grid_place(this.col, this.row, 0, 0, 1);
                this.col = kept[0];
                this.row = kept[1];
                this.n = kept.len() + cols.len() + rows.len();
            }
            "#,
        ))
        .expect("compiles");
        let rust = &out.rust;
        assert!(
            rust.contains("grid_place_in((&mut (*this).f_col), (&mut (*this).f_row), "),
            "{rust}"
        );
        assert!(rust.contains("grid_place_in(&mut v1_cols, &mut v2_rows"), "{rust}");
        // Written back crosswise, or the placement read again: a new one.
        assert_eq!(rust.matches("grid_place_in(").count(), 2, "{rust}");
        assert_eq!(rust.matches(" grid_place(").count(), 2, "{rust}");
    }

    #[test]
    fn elements_read_once_from_a_local_array_are_moved_not_copied() {
        let out = compile(&facts(
            r#"
            fn setup() {
                this.col = [0, 1];
                this.row = [0, 0];
                let moved = grid_place(this.col, this.row, 0, 2, 1);
                this.col = moved[0];
                this.row = moved[-1];
                let twice = grid_compact(this.col, this.row);
                this.a = twice[0];
                this.b = twice[0];
                let looped = grid_compact(this.col, this.row);
                for i in 0..2 { this.c = looped[1]; }
            }
            "#,
        ))
        .expect("compiles");
        let rust = &out.rust;
        assert!(rust.contains("std::mem::take(&mut v0_moved[0])"), "{rust}");
        // A negative index counts from the end.
        assert!(rust.contains("std::mem::take(&mut v0_moved[1])"), "{rust}");
        // Read twice, or once per turn of a loop: copied.
        assert!(!rust.contains("take(&mut v1_twice"), "{rust}");
        assert!(!rust.contains("take(&mut v2_looped"), "{rust}");
    }

    #[test]
    fn a_vector_assigned_an_empty_literal_is_emptied_in_place() {
        let out = compile(&facts(
            r#"
            fn setup() {
                this.kept = [1];
                this.kept = [];
                this.refilled = [1, 2];
                this.refilled = [this.refilled[1], 3, 4];
                if turn() > 100 { return; }
                this.sometimes = [1];
                this.sometimes = [2, 3];
                this.seen = [1];
                this.seen = [];
                this.seen.push(2);
                let m = #{ list: [3] };
                m.list = [];
                this.n = m.list.len();
                let pair = [4, 5];
                this.pairs = [pair];
                this.pairs[0] = [];
            }
            "#,
        ))
        .expect("compiles");
        let rust = &out.rust;
        // A field setup may not assign is optional; one it always does is not.
        assert!(rust.contains("f_seen { Some(__v) => __v.clear()"), "{rust}");
        assert!(rust.contains("(*this).f_kept.clear();"), "{rust}");
        // A literal of items refills the vector in place, its items (which
        // may read the vector) taken first.
        let refill = rust
            .rfind("let __v = &mut (*this).f_refilled; __v.clear(); __v.extend([")
            .expect("refilled in place");
        let read = rust.find("(&(*this).f_refilled), __t").expect("the old vector read");
        assert!(read < refill, "{rust}");
        assert!(
            rust.contains("match &mut (*this).f_sometimes { Some(__v) => { __v.clear(); __v.extend(["),
            "{rust}"
        );
        // A record built with the field: always present, emptied as is.
        assert!(rust.contains("{ (&mut v0_m).f_list.clear(); }"), "{rust}");
        // An element of an array is replaced, not emptied.
        assert!(!rust.contains("f_pairs { Some(__v) => __v.clear()"), "{rust}");
        assert!(rust.contains("vec![] }"), "{rust}");
    }

    #[test]
    fn a_loop_borrows_elements_that_a_copy_would_allocate() {
        let out = compile(&facts(
            r#"
            fn count(names) {
                let n = 0;
                for name in names { if name == "x" { n += 1; } }
                for name in names { name += "!"; n += name.len(); }
                n
            }
            fn total() {
                let n = 0;
                for l in this.lists { n += l.len(); }
                n
            }
            fn setup() {
                this.names = ["x", "y"];
                this.lists = [[1], [2, 3]];
                this.n = count(this.names) + total();
                for l in this.lists { this.n += l.len(); }
                for m in this.lists { this.lists.push(m); }
            }
            "#,
        ))
        .expect("compiles");
        let rust = &out.rust;
        // Read only: borrowed.
        assert!(rust.contains("for (__k, v2_name) in"), "{rust}");
        assert!(rust.contains("for (__k, v1_l) in"), "{rust}");
        // Another field of `this` written: borrowed, each field on its own.
        assert!(
            rust.contains("for (__k, v0_l) in ((&(*this).f_lists)).iter()"),
            "{rust}"
        );
        assert!(rust.contains("(*this).f_n = __t"), "{rust}");
        // Written in the loop, or the field iterated written: copied.
        assert!(!rust.contains("for (__k, v3_name) in"), "{rust}");
        assert!(!rust.contains("for (__k, v1_m) in"), "{rust}");
        assert!(rust.contains("let mut v1_m = __x;"), "{rust}");
    }

    #[test]
    fn at_least_as_the_last_domain_of_add_all_builds_no_list() {
        let mut f = facts(
            r#"
            fn setup() { this.power = [0, 2, 1]; }
            fn pick_legal() {
                add_all("pay", [at_least(this.power, 1)]);
                add_all("two", [at_least(this.power, 1), [0, 1]]);
            }
            "#,
        );
        f.actions = [("pay", 1), ("two", 2)]
            .map(|(name, arity)| ActionFacts {
                name: name.into(),
                apply: format!("do_{name}"),
                arity,
            })
            .to_vec();
        let out = compile(&f).expect("compiles");
        let rust = &out.rust;
        assert!(rust.contains("Domain::AtLeast("), "{rust}");
        // Not last: listed first, as before.
        assert_eq!(rust.matches("Domain::AtLeast(").count(), 1, "{rust}");
        assert!(rust.contains("at_least("), "{rust}");
    }
}
