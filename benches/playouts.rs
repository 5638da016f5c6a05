//! Random playouts, single thread: decisions per second and games per
//! second for each shipped variant, and for `benches/floor`, a rule set
//! that does nothing but offer one action per decision: the ceiling of the
//! engine and Rhai together. `cargo bench --bench playouts`.
//!
//! `simulate-games` plays as many games through `simulate`'s game loop
//! (random bots, results, the tally): beside `games`, it shows what a
//! simulation adds to the engine's own speed (docs/simulation.md).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rulesmith_core::{Game, Variant};
use rulesmith_lab::{playout, sim};
use std::path::Path;

const GAMES: u64 = 20;

fn bench(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (variant, players) in [
        ("variants/sirius-basic", 2),
        ("variants/sirius-lifeboats", 2),
        ("variants/sirius-multiplayer", 4),
        ("benches/floor", 2),
    ] {
        let path = root.join(variant);
        let game = rulesmith_rhai::interpreted(Variant::load(&path).expect("variant loads")).expect("variant compiles");
        // Count the decisions of the benchmarked games once, for throughput.
        let run = |game: &Game| {
            playout::random_games(game, players, 0..GAMES, u64::MAX)
                .expect("playouts")
                .decisions
        };
        let decisions = run(&game);
        let name = Path::new(variant).file_name().expect("a folder").to_string_lossy();
        let mut group = c.benchmark_group(format!("{name}-{players}p"));
        group.sample_size(10);
        group.throughput(Throughput::Elements(decisions));
        group.bench_function("decisions", |b| b.iter(|| run(&game)));
        group.throughput(Throughput::Elements(GAMES));
        group.bench_function("games", |b| b.iter(|| run(&game)));
        let bots = vec!["random".to_string(); players];
        group.bench_function("simulate-games", |b| {
            b.iter(|| {
                let mut tally = sim::Tally::new(players, game.variant().stats.len());
                let mut scratch = None;
                for i in 0..GAMES {
                    let r = sim::play_game_in(&game, &bots, i, i, false, u64::MAX, &mut scratch).expect("a game");
                    tally.add(&r);
                }
                tally
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
