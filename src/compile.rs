//! `rulesmith compile VARIANT`: translate the scripts to Rust, build them
//! (cached), and say what stays dynamic.

use crate::common::{load_variant, VariantArgs};
use crate::{engine, outln, Failure};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The variant folder.
    pub variant: PathBuf,
    /// List every value the compiler left dynamic (slower), and why.
    #[arg(long)]
    pub explain: bool,
    /// Write the generated Rust to this file.
    #[arg(long, value_name = "FILE")]
    pub emit: Option<PathBuf>,
    /// Translate only: do not build.
    #[arg(long)]
    pub no_build: bool,
    #[command(flatten)]
    pub common: VariantArgs,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let variant = load_variant(&args.variant, &args.common)?;
    let out = engine::compile(&variant)?;
    outln!(
        "{}: {} functions translated, {} value(s) left dynamic{}",
        variant.name,
        out.functions,
        out.fallbacks.len(),
        if args.explain || out.fallbacks.is_empty() { "" } else { " (--explain lists them)" }
    );
    if args.explain {
        for f in &out.fallbacks {
            let place = if f.line > 0 {
                format!("{}:{} {}", f.file.display(), f.line, f.function)
            } else {
                f.file.display().to_string()
            };
            outln!("  {place}: {} is dynamic: {}", f.what, f.why);
        }
    }
    if let Some(path) = &args.emit {
        std::fs::write(path, &out.rust)
            .map_err(|e| Failure::input(format!("{}: cannot write: {e}", path.display())))?;
        outln!("Rust written to {}", path.display());
    }
    if args.no_build {
        return Ok(());
    }
    let b = engine::builder();
    let start = std::time::Instant::now();
    let cached = b.cached(&[&out.fingerprint]).is_some();
    let unit = rulesmith_compiler::build::Unit {
        fingerprint: &out.fingerprint,
        rust: &out.rust,
    };
    let bin = b
        .binary(&[unit], &mut |line| eprintln!("rulesmith: {line}"))
        .map_err(|e| Failure::input(e.to_string()))?;
    if cached {
        outln!("already built: {}", bin.display());
    } else {
        outln!("built in {:.1} s: {}", start.elapsed().as_secs_f64(), bin.display());
    }
    Ok(())
}
