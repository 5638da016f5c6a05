//! Rhai's AST to the compiler's tree ([`crate::ir`]).
//!
//! Rhai 1.27 exports its AST under `internals` but not the type that holds
//! a function's body, so the bodies are collected with `AST::walk` (which
//! visits each body's statements) and assigned to functions by position.
//! The parse uses no optimisation, so the tree is the script as written.

use crate::ir::*;
use crate::CompileError;
use rhai::{ASTFlags, ASTNode, Expr as RExpr, FnCallExpr, Position, Stmt as RStmt, SwitchCasesCollection};
use std::collections::HashMap;
use std::path::Path;

/// Parses one script file into functions.
pub fn lower_file(
    path: &Path,
    text: &str,
    file: usize,
    owner: Owner,
    next_expr: &mut ExprId,
) -> Result<Vec<Func>, CompileError> {
    let mut engine = rhai::Engine::new();
    engine.set_optimization_level(rhai::OptimizationLevel::None);
    engine.set_max_expr_depths(0, 0);
    let at = |pos: Position| Pos {
        line: pos.line().unwrap_or(0) as u32,
        col: pos.position().unwrap_or(0) as u32,
    };
    let mut ast = engine.compile(text).map_err(|e| CompileError {
        file: path.to_path_buf(),
        pos: at(e.position()),
        message: format!("syntax error: {}", e.err_type()),
    })?;
    ast.clear_statements();
    // Every function with its body's statements: each function is walked
    // in an AST holding only it (anonymous functions' bodies lie inside
    // their parent's span, so positions cannot tell them apart).
    struct Def {
        name: String,
        params: Vec<String>,
        start: (usize, usize),
        pos: Pos,
        stmts: Vec<RStmt>,
    }
    let key = |p: Position| (p.line().unwrap_or(0), p.position().unwrap_or(0));
    let mut defs: Vec<Def> = ast
        .iter_fn_def()
        .map(|f| Def {
            name: f.name.to_string(),
            params: f.params.iter().map(|p| p.to_string()).collect(),
            start: key(f.body.start_position()),
            pos: at(f.body.start_position()),
            stmts: Vec::new(),
        })
        .collect();
    defs.sort_by_key(|d| d.start);
    for d in &mut defs {
        let mut only = ast.clone();
        only.retain_functions(|_, _, name, arity| name == d.name && arity == d.params.len());
        only.walk(&mut |path: &[ASTNode]| {
            if let [ASTNode::Stmt(s)] = path {
                d.stmts.push((*s).clone());
            }
            true
        });
    }
    let mut out = Vec::new();
    for d in defs {
        let mut l = Lower {
            path,
            text,
            case_values: None,
            scopes: vec![HashMap::new()],
            vars: Vec::new(),
            next_expr,
            anonymous: is_anonymous(&d.name),
        };
        let params = d.params.iter().map(|p| l.declare(p)).collect();
        let body = l.block(&d.stmts)?;
        l.check_fn_pointers(&body)?;
        // The definition's line: the body starts on it or below; report the
        // `fn` line when it can be found above.
        let line = crate::fn_line(text, &d.name).unwrap_or(d.pos.line as usize) as u32;
        out.push(Func {
            name: d.name,
            owner: owner.clone(),
            params,
            body,
            file,
            pos: Pos { line, col: 1 },
            vars: l.vars,
            copy_of: None,
        });
    }
    Ok(out)
}

struct Lower<'a> {
    path: &'a Path,
    text: &'a str,
    /// The values `switch` cases may match, by Rhai's hash of each (see
    /// `Lower::switch`); made on the first switch of the file.
    case_values: Option<HashMap<u64, Kind>>,
    scopes: Vec<HashMap<String, VarId>>,
    vars: Vec<String>,
    next_expr: &'a mut ExprId,
    /// Lowering an anonymous function (`|x| ..`): Rhai binds `this` in it
    /// to the array element a method hands it, which compiled code does
    /// not model.
    anonymous: bool,
}

/// Rhai's name for an anonymous function (`|x| ..`), which it defines as a
/// script function of its own.
pub fn is_anonymous(name: &str) -> bool {
    name.starts_with("anon$")
}

fn pos_of(p: Position) -> Pos {
    Pos {
        line: p.line().unwrap_or(0) as u32,
        col: p.position().unwrap_or(0) as u32,
    }
}

impl Lower<'_> {
    fn err(&self, pos: Position, message: impl Into<String>) -> CompileError {
        CompileError {
            file: self.path.to_path_buf(),
            pos: pos_of(pos),
            message: message.into(),
        }
    }

    /// A construct the compiler refuses (see [`crate::refused`]).
    fn refuse(&self, pos: Position, construct: &str) -> CompileError {
        self.err(pos, crate::refused::message(construct))
    }

    /// Every function pointer in `body` must be an argument of a method
    /// that calls it (`a.filter(|x| ..)`): stored or passed anywhere else,
    /// which function runs is known only at run time.
    fn check_fn_pointers(&self, body: &Block) -> Result<(), CompileError> {
        let mut allowed = std::collections::HashSet::new();
        let mut bad: Option<Pos> = None;
        walk_block(body, &mut |e| match &e.kind {
            Kind::Method { name, args, .. } | Kind::Call { name, args, .. }
                if crate::infer::CALLBACK_METHODS.contains(&name.as_str()) =>
            {
                for a in args {
                    allowed.insert(a.id);
                }
            }
            Kind::FnPtr(_) if !allowed.contains(&e.id) => {
                bad.get_or_insert(e.pos);
            }
            _ => {}
        });
        match bad {
            Some(pos) => Err(CompileError {
                file: self.path.to_path_buf(),
                pos,
                message: crate::refused::message("a function pointer"),
            }),
            None => Ok(()),
        }
    }

    /// A variable of the compiler's own, for a value lowering names
    /// (`a ?? b` keeps `a` in one).
    fn temporary(&mut self) -> VarId {
        let name = format!("$tmp{}", self.vars.len());
        self.declare(&name)
    }

    fn declare(&mut self, name: &str) -> VarId {
        let id = self.vars.len();
        self.vars.push(name.to_string());
        self.scopes.last_mut().expect("a scope").insert(name.to_string(), id);
        id
    }

    fn lookup(&self, name: &str) -> Option<VarId> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn mk(&mut self, pos: Position, kind: Kind) -> Expr {
        let id = *self.next_expr;
        *self.next_expr += 1;
        Expr {
            id,
            pos: pos_of(pos),
            kind,
        }
    }

    fn block(&mut self, stmts: &[RStmt]) -> Result<Block, CompileError> {
        self.scopes.push(HashMap::new());
        let mut out = Vec::new();
        for s in stmts {
            if let Some(s) = self.stmt(s)? {
                out.push(s);
            }
        }
        self.scopes.pop();
        Ok(Block { stmts: out })
    }

    fn stmt(&mut self, s: &RStmt) -> Result<Option<Stmt>, CompileError> {
        Ok(Some(match s {
            RStmt::Noop(_) => return Ok(None),
            RStmt::Var(x, _, _) => {
                let value = self.expr(&x.1)?;
                let v = self.declare(&x.0.name);
                Stmt::Let(v, value)
            }
            RStmt::Assignment(x) => {
                let (op, bin) = &**x;
                let value = self.expr(&bin.rhs)?;
                let place = self.expr(&bin.lhs)?;
                if !place.is_place() {
                    return Err(self.err(
                        op.position(),
                        "the left side of an assignment must be a variable or a path",
                    ));
                }
                let op_kind = match op.get_op_assignment_info() {
                    None => None,
                    Some(info) => Some(
                        BinOp::from_syntax(info.5)
                            .ok_or_else(|| self.err(op.position(), format!("unsupported operator {}", info.5)))?,
                    ),
                };
                Stmt::Assign {
                    place,
                    op: op_kind,
                    value,
                    pos: pos_of(op.position()),
                }
            }
            RStmt::If(..) | RStmt::Block(..) => Stmt::Expr(self.stmt_expr(s)?),
            RStmt::FnCall(fc, pos) => Stmt::Expr(self.call(fc, *pos, false)?),
            RStmt::Expr(e) => Stmt::Expr(self.expr(e)?),
            RStmt::While(fc, pos) => {
                let mut cond = self.expr(&fc.expr)?;
                // Rhai writes `loop { .. }` as a while without a condition.
                if matches!(cond.kind, Kind::Unit) {
                    cond.kind = Kind::Bool(true);
                }
                let body = self.block(fc.body.statements())?;
                Stmt::While(cond, body, pos_of(*pos))
            }
            RStmt::Do(fc, flags, pos) => {
                let body = self.block(fc.body.statements())?;
                let cond = self.expr(&fc.expr)?;
                Stmt::Do(body, cond, flags.intersects(ASTFlags::NEGATED), pos_of(*pos))
            }
            RStmt::For(x, pos) => {
                let (var, counter, fc) = &**x;
                let iter = match &fc.expr {
                    RExpr::FnCall(call, _) if call.args.len() == 2 && (call.name == ".." || call.name == "..=") => {
                        Iter::Range {
                            from: self.expr(&call.args[0])?,
                            to: self.expr(&call.args[1])?,
                            inclusive: call.name == "..=",
                        }
                    }
                    other => Iter::Array(self.expr(other)?),
                };
                self.scopes.push(HashMap::new());
                let v = self.declare(&var.name);
                let c = counter.as_ref().map(|c| self.declare(&c.name));
                let body = self.block(fc.body.statements())?;
                self.scopes.pop();
                Stmt::For {
                    var: v,
                    counter: c,
                    iter,
                    body,
                    pos: pos_of(*pos),
                }
            }
            RStmt::BreakLoop(value, flags, pos) => {
                if value.is_some() {
                    return Err(self.refuse(*pos, "break with a value"));
                }
                if flags.intersects(ASTFlags::BREAK) {
                    Stmt::Break(pos_of(*pos))
                } else {
                    Stmt::Continue(pos_of(*pos))
                }
            }
            RStmt::Return(value, flags, pos) => {
                if flags.intersects(ASTFlags::BREAK) {
                    // `throw`: the value's text is the failure's message.
                    let v = match value {
                        Some(e) => self.expr(e)?,
                        None => self.mk(*pos, Kind::Unit),
                    };
                    return Ok(Some(Stmt::Throw(v, pos_of(*pos))));
                }
                let v = match value {
                    Some(e) => Some(self.expr(e)?),
                    None => None,
                };
                Stmt::Return(v, pos_of(*pos))
            }
            RStmt::Switch(x, pos) => Stmt::Expr(self.switch(x, *pos)?),
            RStmt::TryCatch(_, pos) => return Err(self.refuse(*pos, "try/catch")),
            RStmt::Import(_, pos) | RStmt::Export(_, pos) => return Err(self.refuse(*pos, "modules")),
            other => return Err(self.refuse(other.position(), "other statements")),
        }))
    }

    /// An `if` statement or a block used as an expression.
    fn stmt_expr(&mut self, s: &RStmt) -> Result<Expr, CompileError> {
        match s {
            RStmt::If(fc, pos) => {
                let cond = self.expr(&fc.expr)?;
                let then = self.block(fc.body.statements())?;
                let other = self.block(fc.branch.statements())?;
                Ok(self.mk(*pos, Kind::If(Box::new(cond), then, other)))
            }
            RStmt::Block(b) => {
                let block = self.block(b.statements())?;
                Ok(self.mk(b.position(), Kind::Block(block)))
            }
            other => {
                let st = self.stmt(other)?;
                let pos = other.position();
                let block = Block {
                    stmts: st.into_iter().collect(),
                };
                Ok(self.mk(pos, Kind::Block(block)))
            }
        }
    }

    fn exprs(&mut self, items: &[RExpr]) -> Result<Vec<Expr>, CompileError> {
        items.iter().map(|e| self.expr(e)).collect()
    }

    fn expr(&mut self, e: &RExpr) -> Result<Expr, CompileError> {
        let pos = e.position();
        Ok(match e {
            RExpr::IntegerConstant(i, _) => self.mk(pos, Kind::Int(*i)),
            RExpr::BoolConstant(b, _) => self.mk(pos, Kind::Bool(*b)),
            RExpr::StringConstant(s, _) => self.mk(pos, Kind::Str(s.to_string())),
            RExpr::CharConstant(c, _) => self.mk(pos, Kind::Str(c.to_string())),
            RExpr::Unit(_) => self.mk(pos, Kind::Unit),
            RExpr::DynamicConstant(d, _) => {
                if let Ok(i) = d.as_int() {
                    self.mk(pos, Kind::Int(i))
                } else if let Ok(b) = d.as_bool() {
                    self.mk(pos, Kind::Bool(b))
                } else if d.is_string() {
                    self.mk(pos, Kind::Str(d.to_string()))
                } else if d.is_fnptr() {
                    let name = d.clone().cast::<rhai::FnPtr>().fn_name().to_string();
                    self.mk(pos, Kind::FnPtr(name))
                } else if d.is_array() {
                    let items: Vec<RExpr> = d
                        .clone()
                        .into_array()
                        .unwrap_or_default()
                        .into_iter()
                        .map(|v| RExpr::from_dynamic(v, pos))
                        .collect();
                    let items = self.exprs(&items)?;
                    self.mk(pos, Kind::Array(items))
                } else {
                    return Err(self.refuse(pos, "other constants"));
                }
            }
            RExpr::InterpolatedString(parts, _) => {
                let parts = self.exprs(parts)?;
                self.mk(pos, Kind::Interp(parts))
            }
            RExpr::Array(items, _) => {
                let items = self.exprs(items)?;
                self.mk(pos, Kind::Array(items))
            }
            RExpr::Map(x, _) => {
                let mut items = Vec::new();
                for (k, v) in x.0.iter() {
                    items.push((k.name.to_string(), self.expr(v)?));
                }
                // x.1 is Rhai's template of the keys (all set to ()), not
                // more entries.
                self.mk(pos, Kind::Map(items))
            }
            RExpr::Variable(x, _, _) => {
                let name = x.1.as_str();
                let Some(v) = self.lookup(name) else {
                    return Err(self.err(pos, format!("variable '{name}' is not defined here")));
                };
                self.mk(pos, Kind::Var(v))
            }
            RExpr::ThisPtr(_) if self.anonymous => return Err(self.refuse(pos, "this in a function given to a method")),
            RExpr::ThisPtr(_) => self.mk(pos, Kind::This),
            RExpr::Stmt(block) => {
                let stmts = block.statements();
                if let [only @ RStmt::If(..)] = stmts {
                    self.stmt_expr(only)?
                } else {
                    let b = self.block(stmts)?;
                    self.mk(pos, Kind::Block(b))
                }
            }
            RExpr::FnCall(fc, p) => self.call(fc, *p, false)?,
            RExpr::And(items, _) => {
                let items = self.exprs(items)?;
                self.mk(pos, Kind::And(items))
            }
            RExpr::Or(items, _) => {
                let items = self.exprs(items)?;
                self.mk(pos, Kind::Or(items))
            }
            RExpr::Dot(..) | RExpr::Index(..) => self.chain(e)?,
            RExpr::Coalesce(items, _) => self.coalesce(items, pos)?,
            RExpr::FloatConstant(..) => return Err(self.refuse(pos, "floats")),
            other => return Err(self.refuse(other.position(), "other expressions")),
        })
    }

    /// `switch v { 1 => a, 2 | 3 => b, 4..=6 if c => d, _ => e }` as a chain
    /// of `if`s on a variable holding `v`, in the order Rhai tries the
    /// cases: those matching a value (each in the order written), then the
    /// ranges, then `_`.
    ///
    /// Rhai keeps only a hash of each case's value in the parsed script.
    /// The values are found again by hashing every literal of the file
    /// with Rhai's own hash (`Dynamic`'s `Hash`, through the hasher Rhai's
    /// parser used in this same process); a case whose value is not found
    /// so is refused.
    fn switch(&mut self, x: &(RExpr, SwitchCasesCollection), pos: Position) -> Result<Expr, CompileError> {
        let (scrutinee, cases) = x;
        let value = self.expr(scrutinee)?;
        self.scopes.push(HashMap::new());
        let t = self.temporary();
        let known = self.case_values.get_or_insert_with(|| case_values(self.text)).clone();
        // (index of the case, what its value must be)
        let mut by_value: Vec<(usize, Kind)> = Vec::new();
        // Rhai hashes a range case's value too (an entry no value matches).
        let ranges: std::collections::HashSet<usize> = cases.ranges.iter().map(|r| r.index()).collect();
        for (hash, list) in cases.cases.iter() {
            let Some(v) = known.get(hash) else {
                if list.blocks.iter().all(|i| ranges.contains(i)) {
                    continue;
                }
                return Err(self.refuse(pos, "switch cases of other kinds"));
            };
            by_value.extend(list.blocks.iter().map(|&i| (i, v.clone())));
        }
        by_value.sort_by_key(|(i, _)| *i);
        let mut arms: Vec<(Expr, Expr)> = Vec::new();
        for (i, v) in by_value {
            let read = self.mk(pos, Kind::Var(t));
            let lit = self.mk(pos, v);
            let mut test = self.mk(pos, Kind::Binary(BinOp::Eq, Box::new(read), Box::new(lit)));
            test = self.guarded(test, &cases.expressions[i].lhs, pos)?;
            arms.push((test, self.expr(&cases.expressions[i].rhs)?));
        }
        for r in cases.ranges.iter() {
            let (start, end, inclusive) = match r {
                rhai::RangeCase::ExclusiveInt(r, _) => (r.start, r.end, false),
                rhai::RangeCase::InclusiveInt(r, _) => (*r.start(), *r.end(), true),
            };
            let read = self.mk(pos, Kind::Var(t));
            let kind = self.mk(
                pos,
                Kind::Call {
                    name: "type_of".into(),
                    args: vec![read],
                    with_this: false,
                },
            );
            let i64_ = self.mk(pos, Kind::Str("i64".into()));
            let is_int = self.mk(pos, Kind::Binary(BinOp::Eq, Box::new(kind), Box::new(i64_)));
            let (read, low) = (self.mk(pos, Kind::Var(t)), self.mk(pos, Kind::Int(start)));
            let above = self.mk(pos, Kind::Binary(BinOp::Ge, Box::new(read), Box::new(low)));
            let (read, high) = (self.mk(pos, Kind::Var(t)), self.mk(pos, Kind::Int(end)));
            let op = if inclusive { BinOp::Le } else { BinOp::Lt };
            let below = self.mk(pos, Kind::Binary(op, Box::new(read), Box::new(high)));
            let test = self.mk(pos, Kind::And(vec![is_int, above, below]));
            let test = self.guarded(test, &cases.expressions[r.index()].lhs, pos)?;
            arms.push((test, self.expr(&cases.expressions[r.index()].rhs)?));
        }
        let mut chain = match cases.def_case {
            Some(i) => self.expr(&cases.expressions[i].rhs)?,
            None => self.mk(pos, Kind::Unit),
        };
        for (test, body) in arms.into_iter().rev() {
            chain = self.mk(
                pos,
                Kind::If(
                    Box::new(test),
                    Block {
                        stmts: vec![Stmt::Expr(body)],
                    },
                    Block {
                        stmts: vec![Stmt::Expr(chain)],
                    },
                ),
            );
        }
        self.scopes.pop();
        Ok(self.mk(
            pos,
            Kind::Block(Block {
                stmts: vec![Stmt::Let(t, value), Stmt::Expr(chain)],
            }),
        ))
    }

    /// `test && guard`, for a case written `value if guard => ..`.
    fn guarded(&mut self, test: Expr, guard: &RExpr, pos: Position) -> Result<Expr, CompileError> {
        if matches!(guard, RExpr::BoolConstant(true, _)) {
            return Ok(test);
        }
        let g = self.expr(guard)?;
        Ok(self.mk(pos, Kind::And(vec![test, g])))
    }

    /// `a ?? b ?? ..`: the first that is not `()`, later ones evaluated
    /// only when needed: `{ let t = a; if type_of(t) == "()" { b ?? .. } else { t } }`.
    fn coalesce(&mut self, items: &[RExpr], pos: Position) -> Result<Expr, CompileError> {
        let [first, rest @ ..] = items else {
            return Ok(self.mk(pos, Kind::Unit));
        };
        if rest.is_empty() {
            return self.expr(first);
        }
        let value = self.expr(first)?;
        self.scopes.push(HashMap::new());
        let t = self.temporary();
        let read = self.mk(pos, Kind::Var(t));
        let read_again = self.mk(pos, Kind::Var(t));
        let kind = self.mk(
            pos,
            Kind::Call {
                name: "type_of".into(),
                args: vec![read],
                with_this: false,
            },
        );
        let unit = self.mk(pos, Kind::Str("()".into()));
        let test = self.mk(pos, Kind::Binary(BinOp::Eq, Box::new(kind), Box::new(unit)));
        let other = self.coalesce(rest, pos)?;
        self.scopes.pop();
        let pick = self.mk(
            pos,
            Kind::If(
                Box::new(test),
                Block {
                    stmts: vec![Stmt::Expr(other)],
                },
                Block {
                    stmts: vec![Stmt::Expr(read_again)],
                },
            ),
        );
        Ok(self.mk(
            pos,
            Kind::Block(Block {
                stmts: vec![Stmt::Let(t, value), Stmt::Expr(pick)],
            }),
        ))
    }

    /// A call or an operator.
    fn call(&mut self, fc: &FnCallExpr, pos: Position, with_this: bool) -> Result<Expr, CompileError> {
        let name = fc.name.as_str();
        if fc.is_qualified() {
            return Err(self.refuse(pos, "modules"));
        }
        if with_this && self.anonymous {
            return Err(self.refuse(pos, "this in a function given to a method"));
        }
        // `Fn("name")`: a pointer to a script function named by a literal.
        if name == "Fn" && fc.args.len() == 1 {
            if let RExpr::StringConstant(target, _) = &fc.args[0] {
                return Ok(self.mk(pos, Kind::FnPtr(target.to_string())));
            }
            return Err(self.refuse(pos, "a function pointer"));
        }
        if fc.op_token.is_some() || (fc.args.len() <= 2 && !with_this && is_operator_name(name)) {
            let args = self.exprs(&fc.args)?;
            let mut it = args.into_iter();
            return Ok(match (name, it.next(), it.next()) {
                ("!", Some(a), None) => self.mk(pos, Kind::Not(Box::new(a))),
                ("-", Some(a), None) => self.mk(pos, Kind::Neg(Box::new(a))),
                ("+", Some(a), None) => a,
                ("in", Some(a), Some(b)) => self.mk(pos, Kind::In(Box::new(a), Box::new(b))),
                (op, Some(a), Some(b)) => match BinOp::from_syntax(op) {
                    Some(op) => self.mk(pos, Kind::Binary(op, Box::new(a), Box::new(b))),
                    None => return Err(self.err(pos, crate::refused::message_for("other operators", op))),
                },
                (op, ..) => return Err(self.err(pos, crate::refused::message_for("other operators", op))),
            });
        }
        let args = self.exprs(&fc.args)?;
        Ok(self.mk(
            pos,
            Kind::Call {
                name: name.to_string(),
                args,
                with_this,
            },
        ))
    }

    /// `a.b[c].d(..)`: Rhai nests chains to the right; flatten them.
    fn chain(&mut self, e: &RExpr) -> Result<Expr, CompileError> {
        let (RExpr::Dot(x, flags, pos) | RExpr::Index(x, flags, pos)) = e else {
            unreachable!("chain() takes a Dot or an Index")
        };
        let root = self.expr(&x.lhs)?;
        let mut current = root;
        let mut segs: Vec<Seg> = Vec::new();
        let mut is_index = matches!(e, RExpr::Index(..));
        let mut parent_flags = *flags;
        let mut rhs = &x.rhs;
        let _ = pos;
        loop {
            if is_index {
                match rhs {
                    RExpr::Dot(y, f, _) | RExpr::Index(y, f, _) if !parent_flags.intersects(ASTFlags::BREAK) => {
                        segs.push(Seg::Index(self.expr(&y.lhs)?));
                        is_index = matches!(rhs, RExpr::Index(..));
                        parent_flags = *f;
                        rhs = &y.rhs;
                    }
                    other => {
                        segs.push(Seg::Index(self.expr(other)?));
                        break;
                    }
                }
            } else {
                let (first, next) = match rhs {
                    RExpr::Dot(y, f, _) | RExpr::Index(y, f, _) => {
                        (&y.lhs, Some((y, *f, matches!(rhs, RExpr::Index(..)))))
                    }
                    other => (other, None),
                };
                match first {
                    RExpr::Property(p, _) => segs.push(Seg::Field(p.2.to_string())),
                    RExpr::MethodCall(fc, mpos) => {
                        current = self.method(current, std::mem::take(&mut segs), fc, *mpos)?;
                    }
                    other => return Err(self.err(other.position(), "unsupported property access")),
                }
                match next {
                    Some((y, f, idx)) => {
                        is_index = idx;
                        parent_flags = f;
                        rhs = &y.rhs;
                    }
                    None => break,
                }
            }
        }
        Ok(if segs.is_empty() {
            current
        } else {
            let p = current.pos;
            let mut path = self.mk(Position::NONE, Kind::Path(Box::new(current), segs));
            path.pos = p;
            path
        })
    }

    /// `recv.name(args)` after the segments read so far.
    fn method(&mut self, root: Expr, segs: Vec<Seg>, fc: &FnCallExpr, pos: Position) -> Result<Expr, CompileError> {
        let recv = if segs.is_empty() {
            root
        } else {
            let p = root.pos;
            let mut e = self.mk(Position::NONE, Kind::Path(Box::new(root), segs));
            e.pos = p;
            e
        };
        if matches!(recv.kind, Kind::This) {
            let mut call = self.call(fc, pos, true)?;
            if let Kind::Call { with_this, .. } = &mut call.kind {
                *with_this = true;
            }
            return Ok(call);
        }
        let args = self.exprs(&fc.args)?;
        Ok(self.mk(
            pos,
            Kind::Method {
                recv: Box::new(recv),
                name: fc.name.to_string(),
                args,
            },
        ))
    }
}

/// Every literal of `text` a `switch` case may be (numbers, either sign;
/// strings; characters; true and false), by the hash Rhai's parser gave
/// it (`calc_switch_value_hash`, not exported: the same hasher, seeded as
/// Rhai seeds it, over `Dynamic`'s `Hash`).
fn case_values(text: &str) -> HashMap<u64, Kind> {
    use rhai::{Dynamic, ImmutableString, Token};
    use std::hash::{BuildHasher, Hash, Hasher};
    let hash = |d: &Dynamic| {
        let mut h = match rhai::config::hashing::get_hashing_seed() {
            Some([a, b, c, d]) if (a | b | c | d) != 0 => ahash::RandomState::with_seeds(*a, *b, *c, *d).build_hasher(),
            _ => ahash::AHasher::default(),
        };
        d.hash(&mut h);
        h.finish()
    };
    let engine = rhai::Engine::new();
    let mut out = HashMap::new();
    for (token, _) in engine.lex(&[text]).0 {
        if matches!(token, Token::EOF) {
            break;
        }
        let found: Vec<(Dynamic, Kind)> = match token {
            Token::IntegerConstant(i) => vec![
                (Dynamic::from(i), Kind::Int(i)),
                (Dynamic::from(i.wrapping_neg()), Kind::Int(i.wrapping_neg())),
            ],
            Token::StringConstant(s) => vec![(
                Dynamic::from(ImmutableString::from(s.as_str())),
                Kind::Str(s.to_string()),
            )],
            Token::True => vec![(Dynamic::from(true), Kind::Bool(true))],
            Token::False => vec![(Dynamic::from(false), Kind::Bool(false))],
            _ => Vec::new(),
        };
        for (d, k) in found {
            out.insert(hash(&d), k);
        }
    }
    out
}

fn is_operator_name(name: &str) -> bool {
    BinOp::from_syntax(name).is_some() || matches!(name, "!" | "in")
}
