//! What Rhai costs on this machine: a bare call, a loop iteration, an index,
//! a native call, a script call, a method call. These figures set the floor
//! for rule scripts on the hot path (docs/ARCHITECTURE.md, Performance):
//! `cargo run --release --example rhai_call_cost`.

use rhai::{CallFnOptions, Dynamic, Engine, Map, Scope, AST};
use std::time::Instant;
fn main() {
    let mut engine = Engine::new();
    if std::env::args().nth(1).is_none() {
        engine.set_max_operations(20_000_000);
    }
    engine.register_fn("nat", |x: i64| x + 1);
    let src = r#"
fn noop() { 1 }
fn loop1k() { let x = 0; for i in 0..1000 { x += i; } x }
fn idx1k() { let x = 0; for i in 0..1000 { x += this.a[1]; } x }
fn nat1k() { let x = 0; for i in 0..1000 { x += nat(i); } x }
fn helper(i) { i + 1 }
fn fn1k() { let x = 0; for i in 0..1000 { x += helper(i); } x }
fn meth1k() { let x = 0; for i in 0..1000 { x += this.mh(i); } x }
fn mh(i) { this.a[0] + i }
fn cold() { helper(1) + helper(2) + nat(3) + this.mh(4) }
"#;
    let ast: AST = engine.compile(src).unwrap();
    let mut m = Map::new();
    m.insert("a".into(), Dynamic::from_array(vec![1.into(), 2.into()]));
    let mut data = Dynamic::from_map(m);
    for (f, n) in [
        ("noop", 100_000),
        ("loop1k", 1000),
        ("idx1k", 1000),
        ("nat1k", 1000),
        ("fn1k", 1000),
        ("meth1k", 1000),
        ("cold", 100_000),
    ] {
        let t = Instant::now();
        for _ in 0..n {
            let o = CallFnOptions::new()
                .eval_ast(false)
                .rewind_scope(true)
                .bind_this_ptr(&mut data);
            let _: Dynamic = engine.call_fn_with_options(o, &mut Scope::new(), &ast, f, ()).unwrap();
        }
        println!("{f}: {:.3}us per call", t.elapsed().as_secs_f64() / n as f64 * 1e6);
    }
}
