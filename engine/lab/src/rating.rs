//! Ratings from a round robin: the Bradley-Terry model, on the Elo scale.
//!
//! Each bot `i` has a strength `θ_i`; in a game between `i` and `j`, `i`
//! scores `1 / (1 + e^(θ_j - θ_i))` in expectation (a draw scores a half).
//! The ratings are the strengths that make the games played most likely
//! (maximum likelihood, by Hunter's MM iteration), written in Elo points
//! (`400 / ln 10` per unit of `θ`) with the first bot at 0. Their 95%
//! intervals come from the curvature of the likelihood (the inverse of
//! the Fisher information, the first bot held fixed), as BayesElo and Ordo
//! report them.
//!
//! A bot that won every game would have an infinite rating: every pair is
//! given one virtual draw (a weak prior, BayesElo's habit), so ratings stay
//! finite and the intervals say how little a clean sweep of few games
//! proves.

use serde::{Deserialize, Serialize};

/// Elo points per unit of the model's natural strength.
pub const ELO_PER_UNIT: f64 = 400.0 / std::f64::consts::LN_10;

/// Elo points of one "skill step": a player 200 points stronger scores
/// about 76% against the weaker one.
pub const STEP: f64 = 200.0;

/// The games between every pair: `score[i][j]` is what `i` scored against
/// `j` (a win 1, a draw 1/2), `games[i][j]` how many they played.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Results {
    pub names: Vec<String>,
    pub score: Vec<Vec<f64>>,
    pub games: Vec<Vec<f64>>,
}

impl Results {
    pub fn new(names: Vec<String>) -> Results {
        let n = names.len();
        Results {
            names,
            score: vec![vec![0.0; n]; n],
            games: vec![vec![0.0; n]; n],
        }
    }

    /// One game between `a` and `b`: `a_scored` is 1, 1/2 or 0.
    pub fn add(&mut self, a: usize, b: usize, a_scored: f64) {
        self.score[a][b] += a_scored;
        self.score[b][a] += 1.0 - a_scored;
        self.games[a][b] += 1.0;
        self.games[b][a] += 1.0;
    }

    pub fn merge(&mut self, other: &Results) {
        for i in 0..self.names.len() {
            for j in 0..self.names.len() {
                self.score[i][j] += other.score[i][j];
                self.games[i][j] += other.games[i][j];
            }
        }
    }
}

/// One bot's fitted rating.
#[derive(Clone, Debug, Serialize)]
pub struct Rating {
    pub name: String,
    /// Elo points above the first bot.
    pub elo: f64,
    /// The 95% interval's half-width (0 for the first bot, the anchor).
    pub margin: f64,
    /// Its score over all its games (wins + draws/2) / games.
    pub score: f64,
    pub games: f64,
}

/// What a designer reads off a ladder: how much skill matters.
#[derive(Clone, Debug, Serialize)]
pub struct SkillDepth {
    /// The strongest bot, and its Elo above the anchor (the first bot,
    /// normally `random`), with the 95% margin.
    pub strongest: String,
    pub spread: f64,
    pub margin: f64,
    /// `spread` in steps of [`STEP`] Elo.
    pub steps: f64,
    /// Bots told apart: how many of the bots, ordered by rating, stand
    /// above the one before by more than both intervals allow (plus one
    /// for the lowest): distinct levels of play the game rewards.
    pub levels: usize,
}

/// The ratings of a round robin, in the order of `results.names`.
pub fn fit(results: &Results) -> Vec<Rating> {
    let n = results.names.len();
    // The games with the prior: one virtual draw per pair that met.
    let mut score = results.score.clone();
    let mut games = results.games.clone();
    for i in 0..n {
        for j in 0..n {
            if i != j {
                score[i][j] += 0.5;
                games[i][j] += 1.0;
            }
        }
    }
    // Hunter's MM: gamma_i = W_i / sum_j n_ij / (gamma_i + gamma_j).
    let mut gamma = vec![1.0; n];
    for _ in 0..10_000 {
        let mut next = gamma.clone();
        let mut change: f64 = 0.0;
        for i in 0..n {
            let won: f64 = score[i].iter().sum();
            let denom: f64 = (0..n)
                .filter(|&j| j != i)
                .map(|j| games[i][j] / (gamma[i] + gamma[j]))
                .sum();
            if denom > 0.0 {
                next[i] = (won / denom).max(1e-12);
            }
        }
        let anchor = next[0];
        for g in next.iter_mut() {
            *g /= anchor;
        }
        for i in 0..n {
            change = change.max((next[i].ln() - gamma[i].ln()).abs());
        }
        gamma = next;
        if change < 1e-10 {
            break;
        }
    }
    let theta: Vec<f64> = gamma.iter().map(|g| g.ln()).collect();
    let variance = variances(&theta, &games);
    (0..n)
        .map(|i| {
            let played: f64 = results.games[i].iter().sum();
            let scored: f64 = results.score[i].iter().sum();
            Rating {
                name: results.names[i].clone(),
                elo: theta[i] * ELO_PER_UNIT,
                margin: 1.96 * variance[i].sqrt() * ELO_PER_UNIT,
                score: if played > 0.0 { scored / played } else { 0.0 },
                games: played,
            }
        })
        .collect()
}

/// The variance of each strength, the first held at 0: the diagonal of
/// the inverse of the Fisher information without the first row and column.
fn variances(theta: &[f64], games: &[Vec<f64>]) -> Vec<f64> {
    let n = theta.len();
    if n < 2 {
        return vec![0.0; n];
    }
    let m = n - 1;
    let mut info = vec![vec![0.0; m]; m];
    for i in 1..n {
        for j in 0..n {
            if i == j {
                continue;
            }
            let p = 1.0 / (1.0 + (theta[j] - theta[i]).exp());
            let w = games[i][j] * p * (1.0 - p);
            info[i - 1][i - 1] += w;
            if j > 0 {
                info[i - 1][j - 1] -= w;
            }
        }
    }
    let inverse = invert(info);
    let mut out = vec![0.0];
    out.extend((0..m).map(|i| inverse.as_ref().map_or(f64::INFINITY, |inv| inv[i][i].max(0.0))));
    out
}

/// Gauss-Jordan inversion with partial pivoting; `None` when singular.
fn invert(mut a: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let m = a.len();
    let mut inv: Vec<Vec<f64>> = (0..m).map(|i| (0..m).map(|j| f64::from(i == j)).collect()).collect();
    for col in 0..m {
        let pivot = (col..m).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        inv.swap(col, pivot);
        let d = a[col][col];
        for k in 0..m {
            a[col][k] /= d;
            inv[col][k] /= d;
        }
        for r in 0..m {
            if r != col {
                let f = a[r][col];
                if f != 0.0 {
                    for k in 0..m {
                        a[r][k] -= f * a[col][k];
                        inv[r][k] -= f * inv[col][k];
                    }
                }
            }
        }
    }
    Some(inv)
}

/// The skill depth of fitted ratings (the anchor is the first bot).
pub fn skill_depth(ratings: &[Rating]) -> SkillDepth {
    let strongest = ratings
        .iter()
        .max_by(|a, b| a.elo.total_cmp(&b.elo))
        .expect("a ladder has bots");
    let mut sorted: Vec<&Rating> = ratings.iter().collect();
    sorted.sort_by(|a, b| a.elo.total_cmp(&b.elo));
    let levels = 1 + sorted
        .windows(2)
        .filter(|w| w[1].elo - w[0].elo > (w[0].margin.powi(2) + w[1].margin.powi(2)).sqrt())
        .count();
    SkillDepth {
        strongest: strongest.name.clone(),
        spread: strongest.elo - ratings[0].elo,
        margin: strongest.margin,
        steps: (strongest.elo - ratings[0].elo) / STEP,
        levels,
    }
}

/// The expected score of a player `elo` points above its opponent.
pub fn expected_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A round robin whose pairs score as the model says for the given
    /// Elo ratings, `games` games a pair.
    fn ideal(elos: &[f64], games: f64) -> Results {
        let mut r = Results::new((0..elos.len()).map(|i| format!("b{i}")).collect());
        for i in 0..elos.len() {
            for j in 0..elos.len() {
                if i != j {
                    r.score[i][j] = games * expected_score(elos[i] - elos[j]);
                    r.games[i][j] = games;
                }
            }
        }
        r
    }

    #[test]
    fn the_fit_recovers_the_ratings_that_made_the_scores() {
        let elos = [0.0, 150.0, 420.0, 700.0];
        let ratings = fit(&ideal(&elos, 4000.0));
        for (r, want) in ratings.iter().zip(elos) {
            // The prior's one draw per pair pulls a little toward the middle.
            assert!((r.elo - want).abs() < 5.0, "{} at {} for {want}", r.name, r.elo);
        }
        assert_eq!(ratings[0].margin, 0.0);
        assert!(
            ratings[3].margin > 0.0 && ratings[3].margin < 30.0,
            "{}",
            ratings[3].margin
        );
    }

    #[test]
    fn intervals_narrow_as_games_grow() {
        let few = fit(&ideal(&[0.0, 200.0], 20.0));
        let many = fit(&ideal(&[0.0, 200.0], 2000.0));
        assert!(
            few[1].margin > 5.0 * many[1].margin,
            "{} vs {}",
            few[1].margin,
            many[1].margin
        );
        // 95%: about 1.96 standard errors; with p = 0.76 over n games the
        // error of the log-odds is 1 / sqrt(n p (1 - p)).
        let p = expected_score(200.0);
        let want = 1.96 * ELO_PER_UNIT / (2000.0 * p * (1.0 - p)).sqrt();
        assert!(
            (many[1].margin - want).abs() / want < 0.05,
            "{} vs {want}",
            many[1].margin
        );
    }

    #[test]
    fn a_clean_sweep_stays_finite_and_uncertain() {
        let mut r = Results::new(vec!["random".into(), "strong".into()]);
        for _ in 0..10 {
            r.add(1, 0, 1.0);
        }
        let ratings = fit(&r);
        assert!(
            ratings[1].elo.is_finite() && ratings[1].elo > 200.0,
            "{}",
            ratings[1].elo
        );
        assert!(ratings[1].margin > 100.0, "{}", ratings[1].margin);
        assert_eq!(ratings[1].score, 1.0);
    }

    #[test]
    fn skill_depth_counts_steps_and_levels_told_apart() {
        let ratings = fit(&ideal(&[0.0, 10.0, 400.0, 800.0], 3000.0));
        let d = skill_depth(&ratings);
        assert_eq!(d.strongest, "b3");
        assert!((d.steps - 4.0).abs() < 0.1, "{}", d.steps);
        // b0 and b1 are 10 points apart: not told apart at this size.
        assert_eq!(d.levels, 3);
    }
}
