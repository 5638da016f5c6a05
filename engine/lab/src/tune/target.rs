//! Targets: what a designer wants of a figure of `simulate --json`
//! (`first_player_advantage = 0`, `turns.mean in 10..16`,
//! `draws.rate < 0.05 @2`), and how far a measured figure is from it.
//!
//! A figure is named by its path in the `summary` object that `simulate
//! --json` prints (the same [`Summary`] serialized, so the two cannot
//! drift), or as `label:NAME=VALUE`, the share of games whose label NAME
//! had VALUE.

use super::TuneError;
use crate::sim::Summary;
use serde_json::Value;

/// What a target asks of its figure.
#[derive(Clone, Debug, PartialEq)]
pub enum Goal {
    /// Equal to the value: met when the figure's interval contains it.
    Equal(f64),
    /// Within `low..high` (inclusive).
    Within(f64, f64),
    Below(f64),
    Above(f64),
}

/// A figure: a path in the summary's JSON, or a label's share.
#[derive(Clone, Debug, PartialEq)]
pub enum Path {
    /// Keys (and array indices) from the summary object down.
    Json(Vec<String>),
    /// The share of games whose label `name` had `value`.
    LabelShare { name: String, value: String },
}

/// One `--target`.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// As the designer wrote it (trimmed).
    pub text: String,
    /// The figure's path as written (`turns.mean`).
    pub figure: String,
    pub path: Path,
    pub goal: Goal,
    /// How much a unit of distance from the goal weighs in the loss (1
    /// unless `@W` is given).
    pub weight: f64,
}

const SYNTAX: &str = "PATH = V, PATH in LO..HI, PATH < V or PATH > V, optionally followed by @WEIGHT, \
                      where PATH is a figure of simulate --json's summary or label:NAME=VALUE \
                      (e.g. \"first_player_advantage = 0\", \"turns.mean in 10..16 @0.05\")";

fn number(text: &str, whole: &str, what: &str) -> Result<f64, TuneError> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| TuneError::Target {
            text: whole.to_string(),
            expected: format!("{what} to be a number, not '{}'", text.trim()),
        })
}

impl Target {
    /// Parses `--target` text (see [`SYNTAX`]).
    pub fn parse(text: &str) -> Result<Target, TuneError> {
        let whole = text.trim();
        let bad = |expected: String| TuneError::Target {
            text: whole.to_string(),
            expected,
        };
        let (body, weight) = match whole.rsplit_once('@') {
            Some((b, w)) => {
                let w = number(w, whole, "the weight after @")?;
                if w <= 0.0 {
                    return Err(bad("the weight after @ to be above 0".into()));
                }
                (b.trim(), w)
            }
            None => (whole, 1.0),
        };
        // The operator: the first of `<`, `>`, `=` or the word `in` outside
        // a label's `NAME=VALUE` (which comes before any spaces).
        let (figure, goal) = if let Some((f, range)) = split_word(body, " in ") {
            let (lo, hi) = range
                .split_once("..")
                .ok_or_else(|| bad(format!("LO..HI after 'in' (e.g. 10..16), not '{}'", range.trim())))?;
            let (lo, hi) = (number(lo, whole, "LO")?, number(hi, whole, "HI")?);
            if lo > hi {
                return Err(bad(format!("LO <= HI in 'in {lo}..{hi}'")));
            }
            (f, Goal::Within(lo, hi))
        } else {
            let at = operator_at(body).ok_or_else(|| bad(SYNTAX.into()))?;
            let (f, rest) = body.split_at(at);
            let op = rest.chars().next().expect("an operator");
            let v = rest[1..].trim_start_matches('=');
            let v = number(v, whole, "the value")?;
            let goal = match op {
                '<' => Goal::Below(v),
                '>' => Goal::Above(v),
                _ => Goal::Equal(v),
            };
            (f, goal)
        };
        let figure = figure.trim();
        if figure.is_empty() {
            return Err(bad(format!("a figure's path before the operator: {SYNTAX}")));
        }
        Ok(Target {
            text: whole.to_string(),
            figure: figure.to_string(),
            path: Path::parse(figure),
            goal,
            weight,
        })
    }

    /// How far `x` is from the goal, in the figure's unit (0 when met by
    /// the value itself), times the weight.
    pub fn loss(&self, x: f64) -> f64 {
        let d = match self.goal {
            Goal::Equal(v) => (x - v).abs(),
            Goal::Within(lo, hi) => (lo - x).max(x - hi).max(0.0),
            Goal::Below(v) => (x - v).max(0.0),
            Goal::Above(v) => (v - x).max(0.0),
        };
        self.weight * d
    }

    /// Where the loss bends: the goal's ends.
    pub fn kinks(&self) -> Vec<f64> {
        match self.goal {
            Goal::Equal(v) | Goal::Below(v) | Goal::Above(v) => vec![v],
            Goal::Within(lo, hi) => vec![lo, hi],
        }
    }

    /// The least `loss(a) - loss(b)` for figures `b` in `b_range`, `a` in
    /// `a_range` and `a - b` in `d_range` (the paired difference's
    /// interval): above 0, `a` is surely further from the goal than `b`.
    /// The loss is piecewise linear and the region a polygon, so the least
    /// value is at one of its corners or where it crosses a kink; every
    /// such point has a `b` among the few tried here.
    pub fn least_loss_gain(&self, b_range: (f64, f64), a_range: (f64, f64), d_range: (f64, f64)) -> f64 {
        let kinks = self.kinks();
        let mut bs = vec![b_range.0, b_range.1];
        for x in kinks.iter().chain(&[a_range.0, a_range.1]) {
            bs.extend([*x, x - d_range.0, x - d_range.1]);
        }
        let mut least = f64::INFINITY;
        for &b in bs.iter().filter(|&&b| b_range.0 <= b && b <= b_range.1) {
            let (lo, hi) = (a_range.0.max(b + d_range.0), a_range.1.min(b + d_range.1));
            if lo > hi {
                continue;
            }
            let mut r#as = vec![lo, hi];
            r#as.extend(kinks.iter().filter(|&&k| lo <= k && k <= hi));
            for a in r#as {
                least = least.min(self.loss(a) - self.loss(b));
            }
        }
        least
    }

    /// Whether a figure with this interval meets the goal: `= V` when V is
    /// inside the interval, the others when the estimate itself does.
    pub fn met(&self, x: f64, low: f64, high: f64) -> bool {
        match self.goal {
            Goal::Equal(v) => low <= v && v <= high,
            _ => self.loss(x) == 0.0,
        }
    }

    /// The figure's value in a summary; an error names what was expected.
    pub fn value(&self, s: &Summary) -> Result<f64, TuneError> {
        self.path
            .value(&serde_json::to_value(s).expect("a summary serializes"), s.games)
            .map_err(|expected| TuneError::Figure {
                path: self.figure.clone(),
                expected,
            })
    }
}

/// `body` split at the first `word` (with spaces around it).
fn split_word<'a>(body: &'a str, word: &str) -> Option<(&'a str, &'a str)> {
    let at = body.find(word)?;
    Some((&body[..at], &body[at + word.len()..]))
}

/// Where the comparison operator is: the first `<`, `>` or `=` after the
/// path (a `label:NAME=VALUE` path has its own `=` before any space).
fn operator_at(body: &str) -> Option<usize> {
    let skip = if body.trim_start().starts_with("label:") {
        let start = body.find("label:").expect("starts with it");
        let eq = body[start..].find('=')? + start;
        eq + 1
    } else {
        0
    };
    body[skip..].find(['<', '>', '=']).map(|i| i + skip)
}

impl Path {
    fn parse(figure: &str) -> Path {
        if let Some(rest) = figure.strip_prefix("label:") {
            let (name, value) = rest.split_once('=').unwrap_or((rest, ""));
            return Path::LabelShare {
                name: name.trim().to_string(),
                value: value.trim().to_string(),
            };
        }
        let figure = figure.strip_prefix("summary.").unwrap_or(figure);
        Path::Json(figure.split('.').map(|k| k.trim().to_string()).collect())
    }

    /// The number at this path of `summary` (the JSON of a summary of
    /// `games` games), or what was expected instead.
    fn value(&self, summary: &Value, games: u64) -> Result<f64, String> {
        match self {
            Path::LabelShare { name, value } => {
                if value.is_empty() {
                    return Err("label:NAME=VALUE, the share of games whose label NAME was VALUE".into());
                }
                let count = summary["labels"][name.as_str()][value.as_str()].as_u64().unwrap_or(0);
                Ok(if games == 0 { 0.0 } else { count as f64 / games as f64 })
            }
            Path::Json(keys) => {
                let mut at = summary;
                for (depth, k) in keys.iter().enumerate() {
                    let next = match at {
                        Value::Object(m) => m.get(k.as_str()),
                        Value::Array(a) => k.parse::<usize>().ok().and_then(|i| a.get(i)),
                        _ => None,
                    };
                    at = next.ok_or_else(|| {
                        let here = keys[..depth].join(".");
                        format!("one of {}", children(&here, at))
                    })?;
                }
                at.as_f64().ok_or_else(|| {
                    format!(
                        "a number, but it is {}; numbers under it: {}",
                        kind(at),
                        children(&keys.join("."), at)
                    )
                })
            }
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "empty",
        Value::Bool(_) => "true/false",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The numeric paths one or two levels under `v` (at `prefix`): what a
/// designer could have meant.
fn children(prefix: &str, v: &Value) -> String {
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    let mut out = Vec::new();
    let entries: Vec<(String, &Value)> = match v {
        Value::Object(m) => m.iter().map(|(k, x)| (k.clone(), x)).collect(),
        Value::Array(a) => a.iter().enumerate().take(3).map(|(i, x)| (i.to_string(), x)).collect(),
        _ => vec![],
    };
    for (k, x) in entries {
        match x {
            Value::Number(_) => out.push(join(&k)),
            Value::Object(m) => out.extend(
                m.iter()
                    .filter(|(_, y)| y.is_number())
                    .map(|(j, _)| format!("{}.{j}", join(&k))),
            ),
            Value::Array(_) => out.push(format!("{}.N...", join(&k))),
            _ => {}
        }
    }
    if out.is_empty() {
        "(none)".into()
    } else {
        out.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Tally;

    #[test]
    fn every_form_parses() {
        let t = Target::parse(" first_player_advantage = 0 ").unwrap();
        assert_eq!(t.goal, Goal::Equal(0.0));
        assert_eq!(t.path, Path::Json(vec!["first_player_advantage".into()]));
        assert_eq!(t.weight, 1.0);
        let t = Target::parse("turns.mean in 10..16 @0.05").unwrap();
        assert_eq!(t.goal, Goal::Within(10.0, 16.0));
        assert_eq!(t.path, Path::Json(vec!["turns".into(), "mean".into()]));
        assert_eq!(t.weight, 0.05);
        assert_eq!(Target::parse("draws.rate < 0.05").unwrap().goal, Goal::Below(0.05));
        assert_eq!(Target::parse("summary.draws.rate>=0.1").unwrap().goal, Goal::Above(0.1));
        let t = Target::parse("label:winner's ship=Corvette < 0.3").unwrap();
        assert_eq!(
            t.path,
            Path::LabelShare {
                name: "winner's ship".into(),
                value: "Corvette".into()
            }
        );
        assert_eq!(t.goal, Goal::Below(0.3));
    }

    #[test]
    fn bad_syntax_says_what_was_expected() {
        for (text, says) in [
            ("first_player_advantage", "PATH = V"),
            ("turns.mean in 10-16", "LO..HI"),
            ("turns.mean in 16..10", "LO <= HI"),
            ("draws.rate < lots", "the value to be a number"),
            ("draws.rate < 0.1 @0", "above 0"),
            ("draws.rate < 0.1 @x", "weight after @ to be a number"),
            ("= 3", "a figure's path"),
            ("label:end = 3", "label:NAME=VALUE"),
        ] {
            let e = Target::parse(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
            assert!(e.contains(text.trim()), "{text}: names the target: {e}");
        }
    }

    #[test]
    fn the_loss_is_the_distance_to_the_goal_times_the_weight() {
        let eq = Target::parse("x = 0.1 @2").unwrap();
        assert!((eq.loss(0.4) - 0.6).abs() < 1e-12);
        assert!(eq.met(0.2, 0.05, 0.3) && !eq.met(0.2, 0.15, 0.3));
        let within = Target::parse("x in 10..16").unwrap();
        assert_eq!(within.loss(12.0), 0.0);
        assert_eq!(within.loss(8.0), 2.0);
        assert_eq!(within.loss(17.5), 1.5);
        assert_eq!(Target::parse("x < 3").unwrap().loss(2.0), 0.0);
        assert_eq!(Target::parse("x > 3").unwrap().loss(2.0), 1.0);
    }

    #[test]
    fn a_candidate_is_surely_worse_only_when_the_leader_is_surely_on_its_side_of_the_goal() {
        let t = Target::parse("x = 0").unwrap();
        // The other figure is 0.034..0.054 above the leader's, but the
        // leader may be anywhere in -0.05..0.05: the other may be closer
        // to 0 (leader at -0.05, other at +0.004).
        assert!(t.least_loss_gain((-0.05, 0.05), (-0.02, 0.11), (0.034, 0.054)) < 0.0);
        // The leader is surely above 0: the other, above it, is surely
        // further, by at least the difference's low end.
        let g = t.least_loss_gain((0.01, 0.02), (0.04, 0.07), (0.03, 0.05));
        assert!((g - 0.03).abs() < 1e-12, "{g}");
        // A band: the leader inside 10..16, the other surely 3 to 5
        // turns longer and the leader at 14 or more: at least 1 turn out.
        let band = Target::parse("turns in 10..16").unwrap();
        assert!((band.least_loss_gain((14.0, 15.0), (17.0, 20.0), (3.0, 5.0)) - 1.0).abs() < 1e-12);
        assert!(band.least_loss_gain((10.0, 15.0), (13.0, 20.0), (3.0, 5.0)) <= 0.0);
        // The other figure known exactly (-0.5: every game alike) and the
        // leader's anywhere in -0.38..0.26: surely worse by 0.12, though
        // the difference alone (-0.76..-0.12) would allow it to be closer.
        let g = t.least_loss_gain((-0.38, 0.26), (-0.5, -0.5), (-0.76, -0.12));
        assert!((g - 0.12).abs() < 1e-12, "{g}");
    }

    #[test]
    fn figures_are_read_from_the_summary_json_and_bad_paths_say_what_exists() {
        let mut t = Tally::new(2, 0);
        t.games = 4;
        t.draws = 1;
        t.turns.insert(10, 4);
        t.labels
            .insert("end".into(), [("ko".to_string(), 3u64)].into_iter().collect());
        let s = Summary::of_tally(&t, &[]);
        assert_eq!(Target::parse("draws.rate < 1").unwrap().value(&s).unwrap(), 0.25);
        assert_eq!(Target::parse("turns.mean = 1").unwrap().value(&s).unwrap(), 10.0);
        assert_eq!(Target::parse("seats.1.wins.rate = 1").unwrap().value(&s).unwrap(), 0.0);
        assert_eq!(Target::parse("label:end=ko = 1").unwrap().value(&s).unwrap(), 0.75);
        assert_eq!(Target::parse("label:end=draw = 1").unwrap().value(&s).unwrap(), 0.0);
        let e = Target::parse("turns.average = 3")
            .unwrap()
            .value(&s)
            .unwrap_err()
            .to_string();
        assert!(e.contains("turns.average") && e.contains("turns.mean"), "{e}");
        let e = Target::parse("turns = 3").unwrap().value(&s).unwrap_err().to_string();
        assert!(
            e.contains("a number, but it is an object") && e.contains("turns.median"),
            "{e}"
        );
        let e = Target::parse("seats.0.seat = 3")
            .unwrap()
            .value(&s)
            .unwrap_err()
            .to_string();
        assert!(e.contains("it is text"), "{e}");
    }
}
