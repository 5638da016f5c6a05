//! `rulesmith check VARIANT`: load, validate and compile; list every problem.

use crate::common::{load_game, VariantArgs};
use crate::Failure;
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
    // A variant that loads must also set up a game: run setup once per
    // player count to catch script errors there too.
    for n in v.players.min..=v.players.max {
        game.new_game(n).map_err(|e| {
            Failure::input(format!(
                "{}: setting up a {n}-player game fails: {e}",
                args.variant.display()
            ))
        })?;
    }
    crate::outln!(
        "ok: {} ({}), {} to {} players, {} actions, {} steps, {} parameters, {} invariants",
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
