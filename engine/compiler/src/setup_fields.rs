//! Fields of `this` that setup always assigns before anything reads them.
//!
//! `this` starts empty and gains its fields as scripts assign them, so a
//! field of `this` is an `Option` in the generated struct, checked on
//! every read (reading a field never assigned is an error, as in Rhai).
//! Most rule sets assign nearly every field in `setup`, unconditionally,
//! before any read; every other function runs after setup. Such fields are
//! stored plainly: no check on the hot path, and no error can be lost,
//! since nothing can read them before they exist.
//!
//! The walk is deliberately simple and conservative. Setup's statements
//! are followed in order, and so are the bodies of script functions it
//! calls as statements (`this.turn_start();`). A field counts when a
//! statement at the top of one of those bodies assigns it whole
//! (`this.f = ..`) before anything could have read it. A read is any
//! path through `this.f`, anything that reads all of `this` (`this` as a
//! value, a computed key, a card hook), and whatever a called function
//! reads, through every call it may make. After a statement that may
//! return early, a body's later assignments no longer count.
//!
//! A saved state loaded from JSON must then have these fields (an error
//! names the missing one); the rule set's own saves always do.

use crate::infer::{Callee, Typed};
use crate::ir::{walk_block, walk_expr, walk_stmt, Block, Expr, FnId, Func, Kind, Seg, Stmt};
use crate::types::Shape;
use std::collections::{BTreeSet, HashSet};

/// What may be read of `this`: some fields, or all of it.
#[derive(Clone, Debug, Default, PartialEq)]
struct Reads {
    all: bool,
    fields: BTreeSet<String>,
}

impl Reads {
    fn add(&mut self, other: &Reads) -> bool {
        let before = (self.all, self.fields.len());
        self.all |= other.all;
        self.fields.extend(other.fields.iter().cloned());
        before != (self.all, self.fields.len())
    }

    fn may_read(&self, field: &str) -> bool {
        self.all || self.fields.contains(field)
    }
}

/// Marks the fields of `this` that `setup` (the function `setup`, if any)
/// always assigns before anything reads them as always present.
pub fn mark(funcs: &[Func], setup: Option<FnId>, t: &mut Typed) {
    let Some(setup) = setup else { return };
    if !matches!(t.store.shape(t.this_ty), Shape::Rec(_)) || this_built_whole(funcs, t) {
        return;
    }
    let reads = transitive_reads(funcs, t);
    let mut walk = Walk {
        funcs,
        t,
        reads: &reads,
        read: Reads::default(),
        assigned: BTreeSet::new(),
        stack: Vec::new(),
    };
    walk.body(setup);
    let assigned = walk.assigned;
    let Some(r) = t.store.rec_id(t.this_ty) else { return };
    for (name, field) in t.store.recs[r].fields.iter_mut() {
        if assigned.contains(name) {
            field.always = true;
        }
    }
}

/// Does a map literal (or anything built whole) have the type of `this`?
/// Then its fields' presence is the literal's business: left alone.
fn this_built_whole(funcs: &[Func], t: &mut Typed) -> bool {
    let this = t.store.find(t.this_ty);
    let mut literals = Vec::new();
    for f in funcs {
        walk_block(&f.body, &mut |e| {
            if matches!(e.kind, Kind::Map(_)) {
                literals.push(e.id);
            }
        });
    }
    literals.into_iter().any(|id| t.store.find(t.expr_ty[id]) == this)
}

/// What each function may read of `this`, through every call it makes.
fn transitive_reads(funcs: &[Func], t: &Typed) -> Vec<Reads> {
    let mut reads: Vec<Reads> = Vec::with_capacity(funcs.len());
    let mut calls: Vec<HashSet<FnId>> = Vec::with_capacity(funcs.len());
    for f in funcs {
        let (r, c) = direct_reads_of_block(&f.body, t);
        reads.push(r);
        calls.push(c);
    }
    loop {
        let mut changed = false;
        for f in 0..funcs.len() {
            for &g in &calls[f] {
                if g != f {
                    let theirs = reads[g].clone();
                    changed |= reads[f].add(&theirs);
                }
            }
        }
        if !changed {
            return reads;
        }
    }
}

/// The reads of `this` written in `b` (calls not followed), and the
/// script functions it calls.
fn direct_reads_of_block(b: &Block, t: &Typed) -> (Reads, HashSet<FnId>) {
    let mut out = (Reads::default(), HashSet::new());
    for s in &b.stmts {
        stmt_reads(s, t, &mut out);
    }
    out
}

fn stmt_reads(s: &Stmt, t: &Typed, out: &mut (Reads, HashSet<FnId>)) {
    // A plain assignment to a field of `this` writes it; it reads nothing
    // of `this` but its value.
    if let Stmt::Assign {
        place, op: None, value, ..
    } = s
    {
        if whole_field(place).is_some() {
            return reads_below(&|f| walk_expr(value, f), t, out);
        }
    }
    reads_below(&|f| walk_stmt(s, f), t, out)
}

/// The reads of every expression `walk` visits: paths through `this`,
/// calls, and `this` itself as a value (not as a path's root), which may
/// read any of it.
/// A walk over expressions: it calls the visitor on each.
type Walker<'w, 'a> = &'w dyn Fn(&mut dyn FnMut(&'a Expr));

fn reads_below<'a>(walk: Walker<'_, 'a>, t: &Typed, out: &mut (Reads, HashSet<FnId>)) {
    let mut roots = HashSet::new();
    walk(&mut |e| {
        if let Kind::Path(root, _) = &e.kind {
            roots.insert(root.id);
        }
    });
    walk(&mut |e| {
        if matches!(e.kind, Kind::This) && !roots.contains(&e.id) {
            out.0.all = true;
        }
        expr_read(e, t, out)
    });
}

/// The reads one expression makes itself (not those below it).
fn expr_read(e: &Expr, t: &Typed, out: &mut (Reads, HashSet<FnId>)) {
    match &e.kind {
        Kind::Path(root, segs) if matches!(root.kind, Kind::This) => match segs.first().and_then(Seg::key) {
            Some(k) => {
                out.0.fields.insert(k.to_string());
            }
            None => out.0.all = true,
        },
        Kind::Call { .. } => match t.callee.get(&e.id) {
            Some(Callee::Script(g)) => {
                out.1.insert(*g);
            }
            // A card's hook runs with `this` (and may read any of it).
            Some(Callee::Native(n)) if n == "card_hook" => out.0.all = true,
            _ => {}
        },
        _ => {}
    }
}

/// `this.f` exactly: the field a plain assignment writes whole.
fn whole_field(place: &Expr) -> Option<&str> {
    match &place.kind {
        Kind::Path(root, segs) if matches!(root.kind, Kind::This) && segs.len() == 1 => segs[0].key(),
        _ => None,
    }
}

/// Does `s` hold a `return` (which would leave the function early)?
fn may_return(s: &Stmt) -> bool {
    let mut found = matches!(s, Stmt::Return(..) | Stmt::Throw(..));
    let check = |b: &Block| b.stmts.iter().any(may_return);
    match s {
        Stmt::While(_, b, _) | Stmt::Do(b, ..) | Stmt::For { body: b, .. } => found |= check(b),
        _ => {}
    }
    walk_stmt(s, &mut |e| match &e.kind {
        Kind::If(_, a, b) => found |= a.stmts.iter().any(may_return) || b.stmts.iter().any(may_return),
        Kind::Block(b) => found |= b.stmts.iter().any(may_return),
        _ => {}
    });
    found
}

/// Setup's statements in the order they run.
struct Walk<'a> {
    funcs: &'a [Func],
    t: &'a Typed,
    reads: &'a [Reads],
    /// What may have been read so far.
    read: Reads,
    /// Fields assigned before any read of them.
    assigned: BTreeSet<String>,
    /// The functions being walked (a recursive call is not followed).
    stack: Vec<FnId>,
}

impl Walk<'_> {
    fn body(&mut self, f: FnId) {
        self.stack.push(f);
        let mut sure = true;
        for s in &self.funcs[f].body.stmts {
            self.stmt(s, sure);
            sure &= !may_return(s);
        }
        self.stack.pop();
    }

    /// One statement; `sure`: it runs whenever its function does.
    fn stmt(&mut self, s: &Stmt, sure: bool) {
        if let Stmt::Assign {
            place, op: None, value, ..
        } = s
        {
            if let Some(k) = whole_field(place) {
                self.note_reads_of_expr(value);
                if sure && !self.read.may_read(k) {
                    self.assigned.insert(k.to_string());
                }
                return;
            }
        }
        // A call as a statement: its arguments, then its body in order.
        if let (true, Stmt::Expr(e)) = (sure, s) {
            if let (Kind::Call { args, .. }, Some(Callee::Script(g))) = (&e.kind, self.t.callee.get(&e.id)) {
                if !self.stack.contains(g) {
                    let g = *g;
                    for a in args {
                        self.note_reads_of_expr(a);
                    }
                    self.body(g);
                    return;
                }
            }
        }
        let mut mine = (Reads::default(), HashSet::new());
        stmt_reads(s, self.t, &mut mine);
        self.note(&mine);
    }

    fn note_reads_of_expr(&mut self, e: &Expr) {
        let mut mine = (Reads::default(), HashSet::new());
        reads_below(&|f| walk_expr(e, f), self.t, &mut mine);
        self.note(&mine);
    }

    fn note(&mut self, (reads, calls): &(Reads, HashSet<FnId>)) {
        self.read.add(reads);
        let called: Vec<Reads> = calls.iter().map(|&g| self.reads[g].clone()).collect();
        for r in &called {
            self.read.add(r);
        }
    }
}
