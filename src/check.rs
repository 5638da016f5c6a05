//! `rulesmith check VARIANT`: load, validate, compile (the compiler's front
//! end, no build) and play a few games, checking invariants and that no
//! secret decision shows before its reveal; report the first problem.

use crate::common::{all_sets, load_game, report_failure, BoundArgs, FailedGame, VariantArgs};
use crate::Failure;
use rulesmith_core::record::Record;
use rulesmith_core::{rng, Game, GameError, State};
use rulesmith_lab::{playout, secrecy, sim};
use std::path::PathBuf;

/// Random games played per player count to smoke out run-time errors.
const SMOKE_GAMES: u64 = 4;

/// Decisions of the first smoke game after which the variant's output
/// functions (evaluate, summary, render) are tried on the state reached.
const PROBE_AT: u64 = 10;

#[derive(clap::Args)]
pub struct Args {
    /// The variant folder (or its variant.toml).
    pub variant: PathBuf,
    #[command(flatten)]
    pub common: VariantArgs,
    #[command(flatten)]
    pub bounds: BoundArgs,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let game = load_game(&args.variant, &args.common)?;
    let sets = all_sets(&args.common)?;
    let v = game.variant();
    // A variant that checks is one the compiler takes: what it refuses
    // (docs/compiler.md, "What the compiler refuses") is refused here too,
    // with the file, the line and why. The front end takes milliseconds.
    let facts = rulesmith_compiler::from_variant::facts(v);
    if let Err(e) = rulesmith_compiler::compile(&facts) {
        return Err(Failure::input(format!(
            "{e}\n(the interpreter runs this, but compiled rules cannot: docs/compiler.md lists what the \
             compiler refuses)"
        )));
    }
    // A variant that loads must also play: a few seeded random games per
    // player count catch script errors past setup (a deck too small for the
    // seats, a misspelt property in a rarely used step, a game that never
    // ends, ...). The first one also tries the functions only bots and
    // reports call: evaluate, labels, summary and render.
    let games = match smoke_games(&game, args.bounds.max_decisions_for(v), &|| false) {
        Ok(games) => games,
        Err(f) => {
            let where_ = report_failure(
                args.bounds.failures.as_deref(),
                &FailedGame {
                    command: "check",
                    variant_path: &args.variant,
                    variant_name: &v.name,
                    players: f.players,
                    seed: f.seed,
                    sets: &sets,
                    about: vec![format!("{} - a smoke game of rulesmith check, seed {}", v.name, f.seed)],
                    record: &f.record,
                },
            );
            return Err(Failure::input(format!(
                "{}: a random {}-player game (seed {}) fails: {}\n{where_}",
                args.variant.display(),
                f.players,
                f.seed,
                f.error
            )));
        }
    };
    for w in v.warnings() {
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "warning: {w}");
    }
    crate::outln!(
        "ok: {} ({}), {} to {} players, {} actions, {} steps, {} parameters, {} invariants; {games} smoke games played",
        v.name,
        v.title,
        v.players.min,
        v.players.max,
        v.actions.len(),
        v.steps.len(),
        v.params.len(),
        v.invariants.len()
    );
    Ok(())
}

/// A smoke game that failed: how many players, its seed, the record of
/// what was played, and the error.
pub struct SmokeFailure {
    pub players: usize,
    pub seed: u64,
    pub record: Record,
    pub error: GameError,
}

/// Plays check's smoke games (`SMOKE_GAMES` seeds per player count, the
/// first one probing the output functions) until one fails, each at most
/// `max` decisions; the number played. `stop` is asked between decisions:
/// the language server's newer edit makes these games pointless, and they
/// end at once (as played, without a failure).
pub fn smoke_games(game: &Game, max: u64, stop: &dyn Fn() -> bool) -> Result<u64, SmokeFailure> {
    let v = game.variant();
    let mut games = 0;
    for players in v.players.min..=v.players.max {
        for seed in 0..SMOKE_GAMES {
            let mut record = Record::default();
            let probe = games == 0;
            if let Err(error) = smoke_game(game, players, seed, &mut record, max, probe, stop) {
                return Err(SmokeFailure {
                    players,
                    seed,
                    record,
                    error,
                });
            }
            if stop() {
                return Ok(games);
            }
            games += 1;
        }
    }
    Ok(games)
}

/// Plays one random game to its end (an error if it has not ended after
/// `max` decisions), checking every invariant after setup and after each
/// decision. With `probe`, calls evaluate (for every seat), summary and
/// render on a state a few decisions in, and labels on the end.
fn smoke_game(
    game: &Game,
    n: usize,
    seed: u64,
    record: &mut Record,
    max: u64,
    probe: bool,
    stop: &dyn Fn() -> bool,
) -> Result<(), GameError> {
    let mut r = rng::seeded(seed);
    let mut state = game.new_game(n)?;
    let mut played = 0;
    let check_invariants = !game.variant().invariants.is_empty();
    if check_invariants {
        invariants_hold(game, &state, played)?;
    }
    // Up to the first decision: then one decision at a time (with the
    // chance after it), the same game as one playout, with the invariants
    // checked in between and every secret decision checked not to show
    // before it is revealed.
    playout::random_playout(game, &mut state, &mut r, Some(&mut *record), 0)?;
    while !state.is_terminal() && played < max {
        if stop() {
            return Ok(());
        }
        if game.decision_is_secret(&state) {
            let legal = game.legal_actions(&state)?;
            if let Some(leak) = secrecy::secret_decision_leak(game, &state, &legal)? {
                return Err(GameError::Rules(format!(
                    "after {played} decision(s) (turn {}): {leak}",
                    state.core.turn
                )));
            }
        }
        played += playout::random_playout(game, &mut state, &mut r, Some(&mut *record), 1)?.decisions;
        if check_invariants {
            invariants_hold(game, &state, played)?;
        }
        if probe && played == PROBE_AT && !state.is_terminal() {
            probe_outputs(game, &state)?;
        }
    }
    if !state.is_terminal() {
        if stop() {
            return Ok(());
        }
        return Err(sim::endless_game(played, state.core.turn));
    }
    if probe {
        game.labels(&state)?;
    }
    Ok(())
}

/// An error naming the first declared invariant that does not hold.
fn invariants_hold(game: &Game, state: &State, decisions: u64) -> Result<(), GameError> {
    match game.broken_invariants(state)?.into_iter().next() {
        None => Ok(()),
        Some((name, message)) => Err(GameError::Rules(format!(
            "invariant '{name}' does not hold after {decisions} decision(s) (turn {}): {message}",
            state.core.turn
        ))),
    }
}

/// Calls the variant's evaluate for every seat, and its summary and render
/// for everyone and every seat, on `state`.
fn probe_outputs(game: &Game, state: &State) -> Result<(), GameError> {
    let seats = state.core.seats;
    for s in 0..seats {
        game.evaluate(state, s)?;
    }
    for viewer in std::iter::once(None).chain((0..seats).map(Some)) {
        game.summary(state, viewer)?;
        game.render(state, viewer)?;
    }
    Ok(())
}
