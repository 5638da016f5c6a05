//! `rulesmith`: check, replay, play, fuzz and simulate rule sets from the
//! command line. A library, so that a binary with compiled rule sets built
//! in is the same command (`main_with`, see `engine.rs`).
//!
//! Exit codes: 0 success; 1 a problem in the user's input (a variant, deck,
//! script or record); 2 bad command-line usage.

/// `println!` that never panics: a closed pipe (`rulesmith ... | head`) ends
/// output quietly instead of aborting.
#[macro_export]
macro_rules! outln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($t)*);
    }};
}

/// `print!` that never panics (see `outln!`).
#[macro_export]
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($t)*);
    }};
}

/// The memory allocator of every `rulesmith` binary (the plain one and
/// those with compiled rules): game states and scripts allocate many small
/// short-lived values, which mimalloc serves about twice as fast as the
/// system allocator. Each binary declares it with
/// `#[global_allocator] static A: rulesmith::Allocator = rulesmith::Allocator;`.
pub use mimalloc::MiMalloc as Allocator;

mod check;
mod common;
mod compile;
pub mod engine;
mod fuzz;
mod ladder;
mod lsp;
mod merge;
mod play;
mod profile;
mod replay;
mod report;
mod rows;
mod schema;
mod simulate;
mod test_cmd;
mod tune;
mod view;

use clap::{Parser, Subcommand};
use std::io::Write as _;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "rulesmith", version, about = "Prototype, play and test tabletop rule sets")]
struct Cli {
    /// Which engine runs the rules: `compiled` (rules translated to Rust,
    /// built on first use; the default of simulate, compare, fuzz and
    /// profile when a Rust toolchain is present) or `interpreted` (the
    /// reference; the default of the other commands).
    #[arg(long, value_enum, global = true)]
    engine: Option<engine::EngineChoice>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Load and validate a variant; report every problem found.
    Check(check::Args),
    /// Compile a variant's scripts to Rust and build them (cached); with
    /// --explain, list what stays dynamic and why.
    Compile(compile::Args),
    /// Replay a game record and print the state reached as JSON.
    Replay(replay::Args),
    /// Play in the terminal against bots, or hot-seat.
    Play(play::Args),
    /// Fuzz a rule set: random playouts checking every invariant; a break
    /// is shrunk to a short record.
    Fuzz(fuzz::Args),
    /// Replay a variant's regression cases (its tests/ folder of records)
    /// and check what each expects.
    Test(test_cmd::Args),
    /// Play many games between bots and report win rates, balance, game
    /// length and the variant's statistics.
    Simulate(simulate::SimulateArgs),
    /// Play the same games under two rule sets and say which differences
    /// are significant.
    Compare(simulate::CompareArgs),
    /// A round robin between bots: ratings (Elo, with 95% intervals) and
    /// the game's skill depth.
    Ladder(ladder::Args),
    /// Add up the shards of a simulate, compare or ladder run (`--shard i/n`) and
    /// print what the whole run prints.
    Merge(merge::Args),
    /// Print a JSON Schema for one variant's deck or parameter files.
    Schema(schema::Args),
    /// Time random games on one thread and show which script functions
    /// the time goes to.
    Profile(profile::Args),
    /// Write a replay viewer: one self-contained HTML page that steps
    /// through a game record.
    View(view::Args),
    /// Search parameters for the values that meet targets (first-player
    /// advantage 0, game length 10..16 turns...), racing candidates on
    /// shared seeds.
    Tune(tune::Args),
    /// A language server for editors, over standard input and output:
    /// check's problems as you type, hovers, completion, definitions,
    /// references and renames (docs/editor.md).
    Lsp(lsp::Args),
}

/// The command line, with negative numbers taken as option values
/// (`--seed -5` is then refused by the option's own check, with a clear
/// reason, instead of clap's "use -- -5" tip, which does not work for an
/// option's value).
fn parse_cli() -> Cli {
    use clap::{CommandFactory, FromArgMatches};
    let command = Cli::command().mut_subcommands(|c| {
        c.mut_args(|a| {
            if a.get_action().takes_values() {
                a.allow_negative_numbers(true)
            } else {
                a
            }
        })
    });
    Cli::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit())
}

/// Failure of a command: the message is for the user, already formatted.
pub struct Failure {
    pub message: String,
    pub code: u8,
}

impl Failure {
    /// A problem in the user's input (exit 1).
    pub fn input(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 1,
        }
    }

    /// Bad command-line usage (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            code: 2,
        }
    }
}

pub use engine::built_profile_guided;

/// Runs the command line with `compiled` rule sets built in (none in the
/// plain `rulesmith` binary).
pub fn main_with(compiled: Vec<rulesmith_runtime::Registration>) -> ExitCode {
    engine::register(compiled);
    let cli = parse_cli();
    let preference = match cli.command {
        Command::Simulate(_)
        | Command::Compare(_)
        | Command::Ladder(_)
        | Command::Fuzz(_)
        | Command::Profile(_)
        | Command::Tune(_) => engine::Preference::Compiled,
        Command::Play(_) => engine::Preference::CompiledIfCached,
        _ => engine::Preference::Interpreted,
    };
    engine::choose(cli.engine, preference);
    let result = match cli.command {
        Command::Check(a) => check::run(a),
        Command::Compile(a) => compile::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Play(a) => play::run(a),
        Command::Fuzz(a) => fuzz::run(a),
        Command::Test(a) => test_cmd::run(a),
        Command::Simulate(a) => simulate::simulate(a),
        Command::Compare(a) => simulate::compare(a),
        Command::Ladder(a) => ladder::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Schema(a) => schema::run(a),
        Command::Profile(a) => profile::run(a),
        Command::View(a) => view::run(a),
        Command::Tune(a) => tune::run(a),
        Command::Lsp(a) => lsp::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            if !f.message.is_empty() {
                let _ = writeln!(std::io::stderr(), "{}", f.message);
            }
            ExitCode::from(f.code)
        }
    }
}

/// Checks one scenario record against the expectation files beside it
/// (`.json`, `.legal`, `.error`, `.holds`), with the interpreter, exactly
/// as `rulesmith test` does: what was checked, or why it failed.
pub fn check_scenario(variant: &std::path::Path, record: &std::path::Path) -> Result<String, String> {
    test_cmd::check_case(variant, record, &common::VariantArgs::default())
}
