//! `rulesmith profile VARIANT`: how fast random games of a rule set play on
//! one thread, and which script functions the time goes to. The same games
//! are played twice: once plainly, for the speed, and once with the engine
//! counting calls, time and Rhai operations per function, which slows it.

use crate::common::{all_sets, load_variant, players, report_failure, BoundArgs, FailedGame, VariantArgs};
use crate::Failure;
use rulesmith_core::record::Record;
use rulesmith_core::{rng, FunctionProfile, Game, GameError, State};
use rulesmith_lab::playout::{self, Counts};
use rulesmith_lab::sim;
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

#[derive(clap::Args)]
pub struct Args {
    /// The variant folder (or its variant.toml).
    pub variant: PathBuf,
    /// Number of players (default: the variant's).
    #[arg(long)]
    pub players: Option<usize>,
    /// Random games to play.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..))]
    pub games: u64,
    /// Seed of the run: game i is seeded from it and i.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Functions to list, most expensive first (all with --json).
    #[arg(long, default_value_t = 15)]
    pub top: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Also play the games as `simulate --bots random --jobs 1` does (its
    /// game loop, results and statistics) and compare the two speeds: what
    /// simulate adds per game.
    #[arg(long)]
    pub simulate: bool,
    #[command(flatten)]
    pub common: VariantArgs,
    #[command(flatten)]
    pub bounds: BoundArgs,
}

/// What a run of random games did, and how long it took.
struct Run {
    counts: Counts,
    seconds: f64,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let variant = load_variant(&args.variant, &args.common)?;
    let engine = crate::engine::prepare(&[&variant])?;
    let plain = crate::engine::game(variant.clone(), engine).map_err(Failure::input)?;
    let n = players(&plain, args.players)?;
    let speed = play(&plain, &args, n)?;
    let simulated = if args.simulate {
        Some(simulate_loop(&plain, &args, n)?)
    } else {
        None
    };
    let simulate_speed = simulated.map(|seconds| {
        let games_per_second = args.games as f64 / seconds;
        (games_per_second, games_per_second / (args.games as f64 / speed.seconds))
    });
    // The interpreter counts Rhai operations too; compiled rules count calls.
    let profiled = match engine {
        crate::engine::Engine::Interpreted => {
            rulesmith_rhai::interpreted_profiled(variant).map_err(|e| Failure::input(e.to_string()))?
        }
        crate::engine::Engine::Compiled => {
            let g = crate::engine::game(variant, engine).map_err(Failure::input)?;
            g.track_calls(true);
            g
        }
    };
    let measured = play(&profiled, &args, n)?;
    let profile = profiled.profile();
    let operations: u64 = profile.values().map(|p| p.operations).sum();
    let per_decision = operations as f64 / speed.counts.decisions.max(1) as f64;
    // Card hooks run inside rule functions, whose time includes theirs.
    let in_scripts: u64 = profile
        .iter()
        .filter(|(name, _)| !name.starts_with("card "))
        .map(|(_, p)| p.nanos)
        .sum();
    let elapsed = measured.seconds * 1e9;
    let mut rows: Vec<(&String, &FunctionProfile)> = profile.iter().collect();
    // Most time first; compiled rules are not timed per function, so there
    // the most called come first.
    rows.sort_by(|a, b| (b.1.nanos, b.1.calls).cmp(&(a.1.nanos, a.1.calls)).then(a.0.cmp(b.0)));
    let decisions_per_second = speed.counts.decisions as f64 / speed.seconds;
    let games_per_second = args.games as f64 / speed.seconds;
    if args.json {
        let functions: Vec<_> = rows
            .iter()
            .map(|(name, p)| {
                json!({
                    "name": name,
                    "calls": p.calls,
                    "seconds": p.nanos as f64 / 1e9,
                    "share": p.nanos as f64 / elapsed,
                    "operations": p.operations,
                })
            })
            .collect();
        crate::outln!(
            "{}",
            json!({
                "variant": args.variant.display().to_string(),
                "players": n,
                "engine": plain.engine_name(),
                "games": args.games,
                "seed": args.seed,
                "decisions": speed.counts.decisions,
                "chance": speed.counts.chance,
                "seconds": speed.seconds,
                "decisions_per_second": decisions_per_second,
                "games_per_second": games_per_second,
                "legal_mean": speed.counts.legal_mean(),
                "legal_max": speed.counts.legal_max,
                "operations": operations,
                "operations_per_decision": per_decision,
                "engine_share": (1.0 - in_scripts as f64 / elapsed).max(0.0),
                "simulate_games_per_second": simulate_speed.map(|s| s.0),
                "simulate_share_of_speed": simulate_speed.map(|s| s.1),
                "functions": functions,
            })
        );
        return Ok(());
    }
    // The flag belongs to the binary: its interpreter is not profile-guided.
    let guided = engine == crate::engine::Engine::Compiled && crate::engine::profile_guided();
    crate::outln!(
        "profiled {} ({n} players, {} rules): {} games, {} decisions, {} chance outcomes in {:.2}s on one thread",
        args.variant.display(),
        if guided {
            "compiled, profile-guided"
        } else {
            plain.engine_name()
        },
        args.games,
        speed.counts.decisions,
        speed.counts.chance,
        speed.seconds
    );
    if engine == crate::engine::Engine::Compiled {
        // Compiled rules count calls, not Rhai operations.
        crate::outln!("  {decisions_per_second:.0} decisions/s, {games_per_second:.1} games/s");
        if !guided {
            // Pointed to only with what it needs: a hint whose command
            // then fails would send the designer on a detour.
            let needs = if rulesmith_compiler::build::Builder::can_profile() {
                ""
            } else {
                ", once llvm-profdata is installed: rustc's LLVM writes profiles Rulesmith does not read, see docs/compiler.md"
            };
            crate::outln!(
                "  (a profile-guided build, made in seconds, runs about 1.14x faster: rulesmith compile {} --pgo{needs})",
                args.variant.display()
            );
        }
    } else {
        crate::outln!(
            "  {decisions_per_second:.0} decisions/s, {games_per_second:.1} games/s, {per_decision:.0} Rhai operations per decision"
        );
    }
    if let Some((games_per_second, share)) = simulate_speed {
        crate::outln!(
            "  simulate's game loop (random bots, results, statistics): {games_per_second:.1} games/s, {:.0}% of that speed",
            100.0 * share
        );
    }
    crate::outln!(
        "  legal lists: {:.1} actions on average, {} at most\n",
        speed.counts.legal_mean(),
        speed.counts.legal_max
    );
    crate::outln!(
        "{:<32} {:>9} {:>7} {:>9} {:>9}",
        "script function (profiled run)",
        "calls",
        "time",
        "µs/call",
        "ops/call"
    );
    for (name, p) in rows.iter().take(args.top) {
        crate::outln!(
            "{:<32} {:>9} {:>6.1}% {:>9.2} {:>9.1}",
            name,
            p.calls,
            100.0 * p.nanos as f64 / elapsed,
            p.nanos as f64 / 1e3 / p.calls.max(1) as f64,
            p.operations as f64 / p.calls.max(1) as f64
        );
    }
    if rows.len() > args.top {
        crate::outln!("({} more; --top N or --json for all)", rows.len() - args.top);
    }
    crate::outln!(
        "{:<32} {:>9} {:>6.1}%",
        "the engine, outside scripts",
        "",
        100.0 * (1.0 - in_scripts as f64 / elapsed).max(0.0)
    );
    Ok(())
}

/// Plays the run's games as `simulate --bots random --jobs 1` does (the
/// same loop, the same tally and summary), timing them: the seconds taken.
fn simulate_loop(game: &Game, args: &Args, players: usize) -> Result<f64, Failure> {
    let bots = vec!["random".to_string(); players];
    let stats = &game.variant().stats;
    let start = Instant::now();
    let mut tally = sim::Tally::new(players, stats.len());
    let mut scratch = None;
    for i in 0..args.games {
        let seed = rng::derive(args.seed, i);
        let r = sim::play_game_in(
            game,
            &bots,
            i,
            seed,
            false,
            args.bounds.max_decisions_for(game.variant()),
            &mut scratch,
        )
        .map_err(|f| {
            Failure::input(format!(
                "{}: simulated game {} fails: {f}",
                args.variant.display(),
                i + 1
            ))
        })?;
        tally.add(&r);
    }
    std::hint::black_box(sim::Summary::of_tally(&tally, stats));
    Ok(start.elapsed().as_secs_f64().max(1e-9))
}

/// Plays the run's random games on `game`, timing them.
fn play(game: &Game, args: &Args, players: usize) -> Result<Run, Failure> {
    let start = Instant::now();
    let mut counts = Counts::default();
    let mut scratch = None;
    for i in 0..args.games {
        let seed = rng::derive(args.seed, i);
        let c = random_game(
            game,
            players,
            seed,
            None,
            args.bounds.max_decisions_for(game.variant()),
            &mut scratch,
        )
        .map_err(|e| {
            // Played again with a record, to show the game.
            let mut record = Record::default();
            let _ = random_game(
                game,
                players,
                seed,
                Some(&mut record),
                args.bounds.max_decisions_for(game.variant()),
                &mut None,
            );
            let sets = all_sets(&args.common).unwrap_or_default();
            let where_ = report_failure(
                args.bounds.failures.as_deref(),
                &FailedGame {
                    command: "profile",
                    variant_path: &args.variant,
                    variant_name: &game.variant().name,
                    players,
                    seed,
                    sets: &sets,
                    about: vec![format!(
                        "{} - a random game of rulesmith profile, seed {seed}",
                        game.variant().name
                    )],
                    record: &record,
                },
            );
            Failure::input(format!(
                "{}: the random game of seed {seed} fails: {e}\n{where_}",
                args.variant.display()
            ))
        })?;
        counts.add(&c);
    }
    Ok(Run {
        counts,
        seconds: start.elapsed().as_secs_f64().max(1e-9),
    })
}

/// One random game from a fresh state to its end; an error if it is still
/// running after `max` decisions. It is played in `scratch`, whose
/// allocations a previous game's state lends it
/// ([`playout::new_game_in`]).
fn random_game(
    game: &Game,
    players: usize,
    seed: u64,
    record: Option<&mut Record>,
    max: u64,
    scratch: &mut Option<State>,
) -> Result<Counts, GameError> {
    let mut r = rng::seeded(seed);
    let state = playout::new_game_in(game, players, scratch)?;
    if record.is_none() {
        state.forget_history(); // what is timed: a playout keeps no history
    }
    let counts = playout::random_playout(game, state, &mut r, record, max)?;
    if !state.is_terminal() {
        return Err(sim::endless_game(max, state.core.turn));
    }
    Ok(counts)
}
