//! Random playouts of a variant, one thread, timed roughly (the benchmark
//! proper is `cargo bench --bench playouts`):
//! `cargo run --release --example playouts -- VARIANT [GAMES] [PLAYERS]`.

use rulesmith_engine::{playout, record::Record, rng, Game, Status, Variant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).map(String::as_str).unwrap_or("variants/sirius-basic");
    let games: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let variant = Variant::load(path).unwrap_or_else(|e| panic!("{e}"));
    let players: usize = args
        .get(3)
        .and_then(|s| s.parse().ok())
        .unwrap_or(variant.players.default);
    let game = Game::new(variant).unwrap_or_else(|e| panic!("{e}"));
    let start = std::time::Instant::now();
    let (mut decisions, mut chance, mut wins, mut draws) = (0, 0, 0, 0);
    for g in 0..games {
        let mut r = rng::seeded(g);
        let mut state = game.new_game(players).expect("setup");
        let mut rec = Record::default();
        match playout::random_playout(&game, &mut state, &mut r, Some(&mut rec), 1_000_000) {
            Ok(c) => {
                decisions += c.decisions;
                chance += c.chance;
                match state.status() {
                    Status::Won(_) => wins += 1,
                    Status::Draw => draws += 1,
                    Status::Ongoing => {}
                }
            }
            Err(e) => {
                eprintln!("game {g}: {e}\n{}", rec.to_text(&[]));
                std::process::exit(1);
            }
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{games} games, {decisions} decisions, {chance} chance outcomes in {secs:.2}s: {:.0} decisions/s, {:.1} games/s; {wins} won, {draws} drawn",
        decisions as f64 / secs,
        games as f64 / secs
    );
}
