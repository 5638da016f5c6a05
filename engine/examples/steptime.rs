use rulesmith_engine::{rng, Action, Game, ToMove, Variant};
use std::collections::BTreeMap;
use std::time::Instant;
fn main() {
    let game = Game::new(Variant::load("variants/sirius-basic").unwrap()).unwrap();
    let mut t: BTreeMap<String, (u64, f64, f64, usize)> = BTreeMap::new();
    let mut chance_t = 0.0;
    let mut chance_n = 0;
    let mut legal: Vec<Action> = Vec::new();
    for g in 0..300u64 {
        let mut r = rng::seeded(g);
        let mut s = game.new_game(2).unwrap();
        loop {
            match s.to_move() {
                ToMove::Terminal => break,
                ToMove::Chance => {
                    let o = game.sample_outcome(&s, &mut r).unwrap();
                    let a = Instant::now();
                    game.apply_outcome(&mut s, o).unwrap();
                    chance_t += a.elapsed().as_secs_f64();
                    chance_n += 1;
                }
                ToMove::Decision(_) => {
                    let name = game.step_name(&s).to_string();
                    let a = Instant::now();
                    game.legal_actions_into(&mut s, &mut legal).unwrap();
                    let l = a.elapsed().as_secs_f64();
                    let act = legal[rng::below(&mut r, legal.len() as u32) as usize];
                    let b = Instant::now();
                    game.apply_trusted(&mut s, act).unwrap();
                    let ap = b.elapsed().as_secs_f64();
                    let e = t.entry(name).or_default();
                    e.0 += 1;
                    e.1 += l;
                    e.2 += ap;
                    e.3 += legal.len();
                }
            }
        }
    }
    for (k, (n, l, a, cnt)) in t {
        println!(
            "{k:10} n={n:6} legal {:7.2}us apply {:7.2}us  avg legal count {:.1}",
            l / n as f64 * 1e6,
            a / n as f64 * 1e6,
            cnt as f64 / n as f64
        );
    }
    let s = {
        let mut r = rng::seeded(1);
        let mut s = game.new_game(2).unwrap();
        for _ in 0..30 {
            match s.to_move() {
                ToMove::Chance => {
                    let o = game.sample_outcome(&s, &mut r).unwrap();
                    game.apply_outcome(&mut s, o).unwrap();
                }
                ToMove::Decision(_) => {
                    game.legal_actions_into(&mut s, &mut legal).unwrap();
                    let a = legal[0];
                    game.apply_trusted(&mut s, a).unwrap();
                }
                _ => break,
            }
        }
        s
    };
    let t0 = Instant::now();
    let mut k = 0;
    for _ in 0..100000 {
        let c = s.clone();
        k += c.core.seats;
    }
    println!("state clone {:.3}us ({k})", t0.elapsed().as_secs_f64() / 100000.0 * 1e6);
    println!("chance n={chance_n} {:.2}us", chance_t / chance_n as f64 * 1e6);
}
#[allow(dead_code)]
fn clone_cost() {}
