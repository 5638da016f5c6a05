//! The space a tune run searches: the values of each `--param`, from the
//! variant's declaration (whole numbers between `min` and `max`, booleans)
//! or narrowed on the command line (`NAME=LO..HI`, or a list `NAME=a,b,c`).

use super::TuneError;
use rulesmith_core::variant::{Value, Variant};

/// One parameter searched, and the values it may take, as `--set` text.
#[derive(Clone, Debug, PartialEq)]
pub struct Dimension {
    pub name: String,
    pub values: Vec<String>,
}

/// The parameters searched. A candidate is one value index per dimension.
#[derive(Clone, Debug, PartialEq)]
pub struct Space {
    pub dims: Vec<Dimension>,
}

/// A point of the space: the index of its value in each dimension.
pub type Candidate = Vec<usize>;

/// Whole-number ranges larger than this are refused: a tune run's answer
/// is one of the values, and a million of them is a typo more often than
/// a plan.
pub const MAX_VALUES: i64 = 100_000;

const PARAM_SYNTAX: &str = "NAME, NAME=LO..HI or NAME=V1,V2,...";

impl Space {
    /// The space of `specs` (`--param` texts) on `variant`.
    pub fn new(variant: &Variant, specs: &[String]) -> Result<Space, TuneError> {
        if specs.is_empty() {
            return Err(TuneError::Param {
                text: String::new(),
                expected: format!("at least one --param ({PARAM_SYNTAX})"),
            });
        }
        let mut dims: Vec<Dimension> = Vec::new();
        for spec in specs {
            let d = dimension(variant, spec)?;
            if dims.iter().any(|x| x.name == d.name) {
                return Err(TuneError::Param {
                    text: spec.clone(),
                    expected: format!("each parameter once; '{}' is given twice", d.name),
                });
            }
            dims.push(d);
        }
        Ok(Space { dims })
    }

    /// Number of candidates (saturating).
    pub fn size(&self) -> u64 {
        self.dims
            .iter()
            .fold(1u64, |n, d| n.saturating_mul(d.values.len() as u64))
    }

    /// Candidate number `i` of all of them (the last dimension varies
    /// fastest).
    pub fn nth(&self, mut i: u64) -> Candidate {
        let mut c = vec![0; self.dims.len()];
        for (k, d) in self.dims.iter().enumerate().rev() {
            let n = d.values.len() as u64;
            c[k] = (i % n) as usize;
            i /= n;
        }
        c
    }

    /// The `--set NAME=VALUE` texts of a candidate.
    pub fn sets(&self, c: &Candidate) -> Vec<String> {
        self.dims
            .iter()
            .zip(c)
            .map(|(d, &i)| format!("{}={}", d.name, d.values[i]))
            .collect()
    }
}

fn dimension(variant: &Variant, spec: &str) -> Result<Dimension, TuneError> {
    let bad = |expected: String| TuneError::Param {
        text: spec.to_string(),
        expected,
    };
    let (name, narrow) = match spec.split_once('=') {
        Some((n, r)) => (n.trim(), Some(r.trim())),
        None => (spec.trim(), None),
    };
    if name.is_empty() {
        return Err(bad(PARAM_SYNTAX.into()));
    }
    let p = variant.param(name).ok_or_else(|| {
        let known: Vec<&str> = variant.params.iter().map(|p| p.name.as_str()).collect();
        bad(format!("a parameter of {}: {}", variant.name, known.join(", ")))
    })?;
    let values: Vec<String> = match (narrow, &p.value) {
        (Some(r), Value::Int(_)) if r.contains("..") => {
            let (lo, hi) = r.split_once("..").expect("contains ..");
            let whole = |t: &str| {
                t.trim()
                    .parse::<i64>()
                    .map_err(|_| bad(format!("whole numbers in LO..HI, not '{}'", t.trim())))
            };
            let (lo, hi) = (whole(lo)?, whole(hi)?);
            let (min, max) = (p.min.unwrap_or(i64::MIN), p.max.unwrap_or(i64::MAX));
            if lo > hi || lo < min || hi > max {
                return Err(bad(format!(
                    "LO <= HI within the declared {}..{}",
                    p.min.map_or("-".into(), |m| m.to_string()),
                    p.max.map_or("-".into(), |m| m.to_string())
                )));
            }
            range(lo, hi).map_err(bad)?
        }
        (Some(list), _) => {
            let values: Vec<String> = list.split(',').map(|v| v.trim().to_string()).collect();
            if values.iter().any(|v| v.is_empty()) {
                return Err(bad(format!("{PARAM_SYNTAX}, with no empty value")));
            }
            // Each value must be one `--set` takes.
            for v in &values {
                variant.clone().set(name, v).map_err(&bad)?;
            }
            values
        }
        (None, Value::Bool(_)) => vec!["false".into(), "true".into()],
        (None, Value::Int(_)) => match (p.min, p.max) {
            (Some(lo), Some(hi)) => range(lo, hi).map_err(bad)?,
            _ => {
                return Err(bad(format!(
                    "{name}=LO..HI: '{name}' declares no min and max to search between"
                )))
            }
        },
        (None, Value::Str(_)) => {
            return Err(bad(format!(
                "{name}=V1,V2,...: '{name}' is text, so the values to try must be listed"
            )))
        }
    };
    Ok(Dimension {
        name: name.to_string(),
        values,
    })
}

fn range(lo: i64, hi: i64) -> Result<Vec<String>, String> {
    if hi.saturating_sub(lo) >= MAX_VALUES {
        return Err(format!("at most {MAX_VALUES} values; narrow it with NAME=LO..HI"));
    }
    Ok((lo..=hi).map(|v| v.to_string()).collect())
}
