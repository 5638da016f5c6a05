//! How long `Game::determinize` takes on the last position of a record,
//! on the interpreter, for a run of generator seeds:
//!
//! ```text
//! cargo run --release -p rulesmith-rhai --example determinize_cost -- \
//!     VARIANT RECORD P1 16
//! ```
//!
//! (a variant folder, a record of it, the viewer, the number of seeds;
//! the variant's game doc names the positions worth measuring). Each
//! seed's time and whether a world was found, then the mean and the
//! slowest.

use rulesmith_core::{rng, Variant};
use std::path::Path;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [variant, record, viewer, seeds] = &args[..] else {
        eprintln!("usage: determinize_cost VARIANT RECORD P<n> SEEDS");
        std::process::exit(2);
    };
    let viewer: usize = viewer
        .trim_start_matches('P')
        .parse::<usize>()
        .expect("a seat such as P1")
        - 1;
    let seeds: u64 = seeds.parse().expect("a number of seeds");
    let variant = Variant::load(variant).unwrap_or_else(|e| panic!("{e}"));
    let default_players = variant.players.default;
    let game = rulesmith_rhai::interpreted(variant).unwrap_or_else(|e| panic!("{e}"));
    let text = std::fs::read_to_string(record).expect("the record");
    let players = text
        .lines()
        .find_map(|l| l.strip_prefix("# players:"))
        .map_or(default_players, |n| n.trim().parse().expect("a number of players"));
    let state =
        rulesmith_core::record::replay(&game, players, &text, Path::new(record)).unwrap_or_else(|e| panic!("{e}"));
    let (mut total, mut slowest, mut failed) = (0.0, 0.0f64, 0);
    for seed in 0..seeds {
        let started = Instant::now();
        let found = game.determinize(&state, Some(viewer), &mut rng::seeded(seed));
        let took = started.elapsed().as_secs_f64();
        println!(
            "seed {seed}: {} in {took:.3} s",
            if found.is_ok() { "a world" } else { "no world" }
        );
        total += took;
        slowest = slowest.max(took);
        failed += usize::from(found.is_err());
    }
    println!(
        "{seeds} calls: mean {:.3} s, slowest {slowest:.3} s, {failed} without a world",
        total / seeds as f64
    );
}
