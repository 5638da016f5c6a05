//! Copies of a rule function for the different kinds of calls it gets.
//!
//! Inference gives each function one type. A small helper such as
//! `filled(n, v)` (an array of `n` copies of `v`), called with a number in
//! one place and an empty array in another, would make its parameter
//! dynamic, and with it every array it fills, and everything those arrays
//! reach: one helper could leave half a rule set dynamic. So, after a first
//! inference, a rule function with a dynamic parameter gets a copy per call
//! site; inference runs again; the calls whose copies came out with one
//! typed signature share one copy. A round is kept only if fewer values end
//! dynamic, and rounds repeat (a copy may expose the next helper) up to a
//! small bound.
//!
//! Copies change no behaviour: same body, same file, line and name in error
//! messages and profiles; only the Rust types differ.

use crate::infer::{infer, Callee, Typed};
use crate::ir::{renumber_block, walk_block, ExprId, FnId, Func, Owner};
use crate::{CompileError, Facts};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// At most this many call sites per function are copied (a function
/// called from everywhere is not a small helper).
const MAX_SITES: usize = 24;
/// At most this many rounds of copying.
const MAX_ROUNDS: usize = 3;

/// A variant's functions, the calls sent to copies, and their types.
pub struct Program {
    pub funcs: Vec<Func>,
    pub sites: HashMap<ExprId, FnId>,
    pub next_expr: ExprId,
    pub typed: Typed,
}

pub fn specialize(
    facts: &Facts,
    funcs: Vec<Func>,
    rule_fns: &HashMap<(String, usize), FnId>,
    card_fns: &HashMap<(usize, usize, String, usize), FnId>,
    next_expr: ExprId,
) -> Result<Program, CompileError> {
    let sites = HashMap::new();
    let typed = infer(facts, &funcs, rule_fns, card_fns, &sites, next_expr)?;
    let mut best = Program {
        funcs,
        sites,
        next_expr,
        typed,
    };
    for _ in 0..MAX_ROUNDS {
        let before = slow_values(&best.funcs, &mut best.typed);
        let candidates = candidates(&mut best);
        if candidates.is_empty() {
            break;
        }
        // One copy per call site...
        let mut per_site = copy_sites(&best, &candidates, |_, site| site);
        per_site.typed = infer(
            facts,
            &per_site.funcs,
            rule_fns,
            card_fns,
            &per_site.sites,
            per_site.next_expr,
        )?;
        // ...then one per signature the copies came out with.
        let mut key_of: HashMap<ExprId, String> = HashMap::new();
        for (root, calls) in &candidates {
            for &site in calls {
                let f = per_site.sites.get(&site).copied().unwrap_or(*root);
                key_of.insert(site, signature(&per_site.funcs[f], f, &mut per_site.typed));
            }
        }
        let mut grouped = copy_sites(&best, &candidates, |calls, site| {
            // The first site with the same signature stands for its group.
            let key = &key_of[&site];
            calls.iter().copied().find(|s| &key_of[s] == key).unwrap_or(site)
        });
        grouped.typed = infer(
            facts,
            &grouped.funcs,
            rule_fns,
            card_fns,
            &grouped.sites,
            grouped.next_expr,
        )?;
        let g = slow_values(&grouped.funcs, &mut grouped.typed);
        let p = slow_values(&per_site.funcs, &mut per_site.typed);
        let (round, after) = if g <= p { (grouped, g) } else { (per_site, p) };
        if after >= before {
            break;
        }
        best = round;
    }
    Ok(best)
}

/// Rule functions with a dynamic parameter, and the calls they get
/// (2..=MAX_SITES, none from the function itself).
fn candidates(p: &mut Program) -> BTreeMap<FnId, Vec<ExprId>> {
    let mut calls: BTreeMap<FnId, Vec<ExprId>> = BTreeMap::new();
    let mut recursive = BTreeSet::new();
    for (caller, f) in p.funcs.iter().enumerate() {
        walk_block(&f.body, &mut |e| {
            if let Some(Callee::Script(target)) = p.typed.callee.get(&e.id) {
                calls.entry(*target).or_default().push(e.id);
                if *target == caller {
                    recursive.insert(caller);
                }
            }
        });
    }
    calls
        .into_iter()
        .filter(|(f, sites)| {
            let func = &p.funcs[*f];
            func.owner == Owner::Rules
                && !recursive.contains(f)
                && (2..=MAX_SITES).contains(&sites.len())
                && func.params.iter().any(|&v| p.typed.store.is_dyn(p.typed.var_ty[*f][v]))
        })
        .collect()
}

/// The program with the calls of each candidate sent to copies: `leader`
/// names, for each call, the call whose copy it shares; the first group
/// keeps the original function.
fn copy_sites(
    p: &Program,
    candidates: &BTreeMap<FnId, Vec<ExprId>>,
    leader: impl Fn(&[ExprId], ExprId) -> ExprId,
) -> Program {
    let mut funcs = p.funcs.clone();
    let mut sites = p.sites.clone();
    let mut next_expr = p.next_expr;
    for (&f, calls) in candidates {
        let first = leader(calls, calls[0]);
        let mut copy_for: HashMap<ExprId, FnId> = HashMap::new();
        for &site in calls {
            let lead = leader(calls, site);
            if lead == first {
                sites.remove(&site);
                continue;
            }
            let target = *copy_for.entry(lead).or_insert_with(|| {
                let mut copy = p.funcs[f].clone();
                renumber_block(&mut copy.body, &mut next_expr);
                copy.copy_of = Some(p.funcs[f].copy_of.unwrap_or(f));
                funcs.push(copy);
                funcs.len() - 1
            });
            sites.insert(site, target);
        }
    }
    Program {
        funcs,
        sites,
        next_expr,
        typed: Typed::default(),
    }
}

/// A function's parameter and return types, in full.
fn signature(f: &Func, id: FnId, t: &mut Typed) -> String {
    let mut parts: Vec<String> = f
        .params
        .iter()
        .map(|&v| t.store.signature(t.var_ty[id][v], 4))
        .collect();
    parts.push(t.store.signature(t.ret_ty[id], 4));
    parts.join(" ")
}

/// How many values stay dynamic: variables and return values (counted once
/// for a function and all its copies) and fields of `this`.
pub fn slow_values(funcs: &[Func], t: &mut Typed) -> usize {
    let mut slow: BTreeSet<(FnId, Option<usize>)> = BTreeSet::new();
    for (i, f) in funcs.iter().enumerate() {
        let root = f.copy_of.unwrap_or(i);
        for v in 0..f.vars.len() {
            if t.store.is_dyn(t.var_ty[i][v]) {
                slow.insert((root, Some(v)));
            }
        }
        if t.store.is_dyn(t.ret_ty[i]) {
            slow.insert((root, None));
        }
    }
    let this = t.this_ty;
    let fields = match t.store.rec_id(this) {
        Some(r) => t.store.recs[r].fields.values().map(|f| f.ty).collect(),
        None => Vec::new(),
    };
    slow.len() + fields.into_iter().filter(|&ty| t.store.is_dyn(ty)).count()
}
