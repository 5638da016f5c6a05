//! The compiler's own tree: Rhai's AST lowered to the few forms rule
//! scripts use, with variables resolved to numbers and every expression
//! numbered, so that type inference can keep its answers in side tables.
//!
//! Rhai's AST is outside its stability promise (`internals`); keeping our
//! own tree confines that dependency to `lower.rs`.

/// 1-based line and column in the script file, as Rhai reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

pub type VarId = usize;
pub type ExprId = usize;
pub type FnId = usize;

/// Who owns a function: the rule scripts, or one card's own script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    Rules,
    Card { deck: usize, card: usize },
}

#[derive(Clone, Debug)]
pub struct Func {
    pub name: String,
    pub owner: Owner,
    pub params: Vec<VarId>,
    pub body: Block,
    /// Index into the variant's source files.
    pub file: usize,
    pub pos: Pos,
    pub vars: Vec<String>,
    /// A copy of another rule function, made for some of its calls (see
    /// `specialize.rs`); not an entry point, not listed by name.
    pub copy_of: Option<FnId>,
}

#[derive(Clone, Debug, Default)]
pub struct Block {
    pub stmts: Vec<Stmt>,
}

#[derive(Clone, Debug)]
pub enum Stmt {
    Let(VarId, Expr),
    Assign {
        place: Expr,
        op: Option<BinOp>,
        value: Expr,
        pos: Pos,
    },
    Expr(Expr),
    While(Expr, Block, Pos),
    /// `do { } while c` / `do { } until c` (`until` true).
    Do(Block, Expr, bool, Pos),
    For {
        var: VarId,
        counter: Option<VarId>,
        iter: Iter,
        body: Block,
        pos: Pos,
    },
    Break(Pos),
    Continue(Pos),
    Return(Option<Expr>, Pos),
    /// `throw value`: the script fails with the value's text.
    Throw(Expr, Pos),
}

#[derive(Clone, Debug)]
pub enum Iter {
    Range { from: Expr, to: Expr, inclusive: bool },
    Array(Expr),
}

/// The binary operators: the runtime's own enum, so that the operators the
/// compiler reads and those compiled code evaluates (on dynamic values)
/// are one list with one spelling.
pub use rulesmith_runtime::ops::Op as BinOp;

/// One step along a path: `.field` or `[index]`.
#[derive(Clone, Debug)]
pub enum Seg {
    Field(String),
    Index(Expr),
}

impl Seg {
    /// The map key this step reads: `.k`, or `["k"]` with a literal key.
    pub fn key(&self) -> Option<&str> {
        match self {
            Seg::Field(k) => Some(k),
            Seg::Index(Expr { kind: Kind::Str(k), .. }) => Some(k),
            Seg::Index(_) => None,
        }
    }
}

/// The rule scripts' function `name` taking `arity` arguments (the last
/// one defined, as a later script replaces an earlier one), not a copy.
pub fn rule_function(funcs: &[Func], name: &str, arity: usize) -> Option<FnId> {
    funcs
        .iter()
        .rposition(|f| f.owner == Owner::Rules && f.copy_of.is_none() && f.name == name && f.params.len() == arity)
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub id: ExprId,
    pub pos: Pos,
    pub kind: Kind,
}

#[derive(Clone, Debug)]
pub enum Kind {
    Int(i64),
    Bool(bool),
    Str(String),
    Unit,
    Var(VarId),
    This,
    Array(Vec<Expr>),
    /// A map literal; keys in the order written.
    Map(Vec<(String, Expr)>),
    /// `root.a[i].b`: reading (or, as a place, writing) along a path.
    Path(Box<Expr>, Vec<Seg>),
    /// A call by name: a script function, a native, or a built-in. `this`
    /// is passed when written `this.f(..)`.
    Call {
        name: String,
        args: Vec<Expr>,
        with_this: bool,
    },
    /// `recv.name(args)` where recv is not `this` calling a script function:
    /// built-in methods of arrays, strings and numbers.
    Method {
        recv: Box<Expr>,
        name: String,
        args: Vec<Expr>,
    },
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    /// `a in b`: a key of a map, an element of an array, a substring.
    In(Box<Expr>, Box<Expr>),
    If(Box<Expr>, Block, Block),
    Block(Block),
    /// An interpolated string: the parts' texts joined.
    Interp(Vec<Expr>),
    /// A script function named as a value: `|x| ..` (an anonymous
    /// function, which captures nothing: Rhai's `no_closure`) or
    /// `Fn("name")`. Only an argument of a method that calls it
    /// (`crate::infer::CALLBACK_METHODS`).
    FnPtr(String),
}

impl Expr {
    /// The text of a string literal (names of actions, decks, hooks...).
    pub fn str_lit(&self) -> Option<&str> {
        match &self.kind {
            Kind::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The place an assignment or a mutating method writes to: a variable,
    /// `this`, or a path rooted at one.
    pub fn is_place(&self) -> bool {
        match &self.kind {
            Kind::Var(_) | Kind::This => true,
            Kind::Path(root, _) => matches!(root.kind, Kind::Var(_) | Kind::This),
            _ => false,
        }
    }
}

/// Calls `f` on every expression below `e`, `e` included, in evaluation order.
pub fn walk_expr<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr)) {
    walk_expr_in(e, f, None);
}

/// [`walk_expr`], except that the blocks of `if` and block expressions
/// are not entered but handed back in `blocks` (for walks that must know
/// which statements hold an expression).
pub fn walk_expr_outside_blocks<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr), blocks: &mut Vec<&'a Block>) {
    walk_expr_in(e, f, Some(blocks));
}

fn walk_expr_in<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr), mut blocks: Option<&mut Vec<&'a Block>>) {
    f(e);
    let sub = |x: &'a Expr, f: &mut dyn FnMut(&'a Expr), blocks: &mut Option<&mut Vec<&'a Block>>| {
        walk_expr_in(x, f, blocks.as_deref_mut())
    };
    let mut inner: [Option<&'a Block>; 2] = [None, None];
    match &e.kind {
        Kind::Int(_) | Kind::Bool(_) | Kind::Str(_) | Kind::Unit | Kind::Var(_) | Kind::This | Kind::FnPtr(_) => {}
        Kind::Array(items) | Kind::And(items) | Kind::Or(items) | Kind::Interp(items) => {
            items.iter().for_each(|x| sub(x, f, &mut blocks))
        }
        Kind::Map(items) => items.iter().for_each(|(_, x)| sub(x, f, &mut blocks)),
        Kind::Path(root, segs) => {
            sub(root, f, &mut blocks);
            for s in segs {
                if let Seg::Index(i) = s {
                    sub(i, f, &mut blocks);
                }
            }
        }
        Kind::Call { args, .. } => args.iter().for_each(|x| sub(x, f, &mut blocks)),
        Kind::Method { recv, args, .. } => {
            sub(recv, f, &mut blocks);
            args.iter().for_each(|x| sub(x, f, &mut blocks));
        }
        Kind::Binary(_, a, b) | Kind::In(a, b) => {
            sub(a, f, &mut blocks);
            sub(b, f, &mut blocks);
        }
        Kind::Not(a) | Kind::Neg(a) => sub(a, f, &mut blocks),
        Kind::If(c, a, b) => {
            sub(c, f, &mut blocks);
            inner = [Some(a), Some(b)];
        }
        Kind::Block(b) => inner[0] = Some(b),
    }
    for b in inner.into_iter().flatten() {
        match blocks.as_deref_mut() {
            Some(out) => out.push(b),
            None => walk_block(b, f),
        }
    }
}

pub fn walk_block<'a>(b: &'a Block, f: &mut dyn FnMut(&'a Expr)) {
    for s in &b.stmts {
        walk_stmt(s, f);
    }
}

pub fn walk_stmt<'a>(s: &'a Stmt, f: &mut dyn FnMut(&'a Expr)) {
    match s {
        Stmt::Let(_, e) | Stmt::Expr(e) | Stmt::Throw(e, _) => walk_expr(e, f),
        Stmt::Assign { place, value, .. } => {
            walk_expr(value, f);
            walk_expr(place, f);
        }
        Stmt::While(c, b, _) => {
            walk_expr(c, f);
            walk_block(b, f);
        }
        Stmt::Do(b, c, _, _) => {
            walk_block(b, f);
            walk_expr(c, f);
        }
        Stmt::For { iter, body, .. } => {
            match iter {
                Iter::Range { from, to, .. } => {
                    walk_expr(from, f);
                    walk_expr(to, f);
                }
                Iter::Array(a) => walk_expr(a, f),
            }
            walk_block(body, f);
        }
        Stmt::Return(Some(e), _) => walk_expr(e, f),
        Stmt::Break(_) | Stmt::Continue(_) | Stmt::Return(None, _) => {}
    }
}

/// Gives every expression in `b` a new number from `next`: a copy of a
/// function must not share its original's side tables.
pub fn renumber_block(b: &mut Block, next: &mut ExprId) {
    for s in &mut b.stmts {
        renumber_stmt(s, next);
    }
}

fn renumber_stmt(s: &mut Stmt, next: &mut ExprId) {
    match s {
        Stmt::Let(_, e) | Stmt::Expr(e) | Stmt::Throw(e, _) => renumber_expr(e, next),
        Stmt::Assign { place, value, .. } => {
            renumber_expr(value, next);
            renumber_expr(place, next);
        }
        Stmt::While(c, b, _) | Stmt::Do(b, c, _, _) => {
            renumber_expr(c, next);
            renumber_block(b, next);
        }
        Stmt::For { iter, body, .. } => {
            match iter {
                Iter::Range { from, to, .. } => {
                    renumber_expr(from, next);
                    renumber_expr(to, next);
                }
                Iter::Array(a) => renumber_expr(a, next),
            }
            renumber_block(body, next);
        }
        Stmt::Return(Some(e), _) => renumber_expr(e, next),
        Stmt::Break(_) | Stmt::Continue(_) | Stmt::Return(None, _) => {}
    }
}

fn renumber_expr(e: &mut Expr, next: &mut ExprId) {
    e.id = *next;
    *next += 1;
    match &mut e.kind {
        Kind::Int(_) | Kind::Bool(_) | Kind::Str(_) | Kind::Unit | Kind::Var(_) | Kind::This | Kind::FnPtr(_) => {}
        Kind::Array(items) | Kind::And(items) | Kind::Or(items) | Kind::Interp(items) => {
            items.iter_mut().for_each(|x| renumber_expr(x, next))
        }
        Kind::Map(items) => items.iter_mut().for_each(|(_, x)| renumber_expr(x, next)),
        Kind::Path(root, segs) => {
            renumber_expr(root, next);
            for s in segs {
                if let Seg::Index(i) = s {
                    renumber_expr(i, next);
                }
            }
        }
        Kind::Call { args, .. } => args.iter_mut().for_each(|x| renumber_expr(x, next)),
        Kind::Method { recv, args, .. } => {
            renumber_expr(recv, next);
            args.iter_mut().for_each(|x| renumber_expr(x, next));
        }
        Kind::Binary(_, a, b) | Kind::In(a, b) => {
            renumber_expr(a, next);
            renumber_expr(b, next);
        }
        Kind::Not(a) | Kind::Neg(a) => renumber_expr(a, next),
        Kind::If(c, a, b) => {
            renumber_expr(c, next);
            renumber_block(a, next);
            renumber_block(b, next);
        }
        Kind::Block(b) => renumber_block(b, next),
    }
}
