fn main() {
    let path = std::env::args().nth(1).unwrap();
    let v = rulesmith_engine::Variant::load(&path).unwrap();
    let facts = rulesmith_compiler::from_variant::facts(&v);
    match rulesmith_compiler::compile(&facts) {
        Ok(out) => {
            std::fs::write("/tmp/gen.rs", &out.rust).unwrap();
            for f in out.fallbacks { eprintln!("{}:{} {}: {} — {}", f.file.display(), f.line, f.function, f.what, f.why); }
            eprintln!("{} functions, {} bytes", out.functions, out.rust.len());
        }
        Err(e) => eprintln!("{e}"),
    }
}
