//! `rulesmith check VARIANT`: load, validate and compile; list every problem.

use crate::common::{load_game, VariantArgs};
use crate::Failure;
use rulesmith_core::record::Record;
use rulesmith_core::rng;
use rulesmith_lab::playout;

/// Random games played per player count to smoke out run-time errors.
const SMOKE_GAMES: u64 = 4;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The variant folder (or its variant.toml).
    pub variant: PathBuf,
    #[command(flatten)]
    pub common: VariantArgs,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let game = load_game(&args.variant, &args.common)?;
    let v = game.variant();
    // A variant that loads must also play: a few seeded random games per
    // player count catch script errors past setup (a deck too small for the
    // seats, a misspelt property in a rarely used step, ...).
    let mut games = 0;
    for n in v.players.min..=v.players.max {
        for seed in 0..SMOKE_GAMES {
            let mut record = Record::default();
            let mut r = rng::seeded(seed);
            let result = game
                .new_game(n)
                .and_then(|mut s| playout::random_playout(&game, &mut s, &mut r, Some(&mut record), 100_000));
            if let Err(e) = result {
                let text = record.to_text(&[format!("players: {n}")]);
                let lines: Vec<&str> = text.lines().collect();
                let shown = if lines.len() > 32 {
                    format!(
                        "... ({} earlier lines)\n{}",
                        lines.len() - 30,
                        lines[lines.len() - 30..].join("\n")
                    )
                } else {
                    text.clone()
                };
                return Err(Failure::input(format!(
                    "{}: a random {n}-player game (seed {seed}) fails: {e}\nthe game so far:\n{shown}",
                    args.variant.display()
                )));
            }
            games += 1;
        }
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
