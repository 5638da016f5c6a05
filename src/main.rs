//! `rulesmith`: check, replay, play, fuzz and simulate rule sets.
//!
//! The command lives in the library (`rulesmith::main_with`), so that a
//! binary built with compiled rule sets is the same command (see
//! `src/engine.rs`).

#[global_allocator]
static ALLOCATOR: rulesmith::Allocator = rulesmith::Allocator;

fn main() -> std::process::ExitCode {
    rulesmith::main_with(Vec::new())
}
