//! Writes the Rust generated for a variant: `cargo run --example gen -- VARIANT OUT.rs`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let v = rulesmith_core::Variant::load(&args[1]).unwrap_or_else(|e| panic!("{e}"));
    let facts = rulesmith_compiler::from_variant::facts(&v);
    let out = rulesmith_compiler::compile(&facts).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&args[2], out.rust).unwrap();
    for f in out.fallbacks {
        eprintln!("{}:{} {}: {} ({})", f.file.display(), f.line, f.function, f.what, f.why);
    }
}
