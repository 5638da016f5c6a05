//! The generic helper natives' arithmetic, shared by both rule engines
//! (the grid helpers are in [`crate::grid`]), and `add_all`'s reading of
//! its domains, so that both engines check and word it alike.

use crate::state::MAX_ARGS;

/// The number of distinct values: e.g. repair points from a roll.
pub fn distinct(values: &[i64]) -> i64 {
    let mut v = values.to_vec();
    v.sort_unstable();
    v.dedup();
    v.len() as i64
}

/// The indices whose value is at least `min`: e.g. what can pay a cost.
pub fn at_least(values: &[i64], min: i64) -> Vec<i64> {
    values
        .iter()
        .enumerate()
        .filter(|(_, &x)| x >= min)
        .map(|(i, _)| i as i64)
        .collect()
}

/// `grid_slots`: the slots piece `mover` (or a new piece, when negative)
/// may take on the ordinal grid ([`crate::grid`]), arguments checked.
pub fn grid_slots(cols: &[i64], rows: &[i64], mover: i64) -> Result<Vec<(i64, i64)>, String> {
    if cols.len() != rows.len() || mover >= cols.len() as i64 {
        return Err("grid_slots: cols and rows must have one entry per piece, and mover must be a piece".into());
    }
    Ok(crate::grid::slots(cols, rows, (mover >= 0).then_some(mover as usize)))
}

/// `grid_place`: the columns and rows after piece `mover` moves to a slot.
pub fn grid_place(cols: &[i64], rows: &[i64], mover: i64, col: i64, row: i64) -> Result<(Vec<i64>, Vec<i64>), String> {
    let (mut c, mut r) = (cols.to_vec(), rows.to_vec());
    if c.len() != r.len() || mover < 0 || mover >= c.len() as i64 {
        return Err("grid_place: cols and rows must have one entry per piece, and mover must be a piece".into());
    }
    if !crate::grid::place(&mut c, &mut r, mover as usize, col, row) {
        return Err(format!("grid_place: {col},{row} is not a free slot for piece {mover}"));
    }
    Ok((c, r))
}

/// `grid_compact`: the columns and rows with the gaps closed.
pub fn grid_compact(cols: &[i64], rows: &[i64]) -> Result<(Vec<i64>, Vec<i64>), String> {
    let (mut c, mut r) = (cols.to_vec(), rows.to_vec());
    if c.len() != r.len() {
        return Err("grid_compact: cols and rows must have one entry per piece".into());
    }
    crate::grid::compact(&mut c, &mut r);
    Ok((c, r))
}

// ----- add_all --------------------------------------------------------------

/// A script value as `add_all` reads its domains: each rule engine's
/// dynamic value (Rhai's `Dynamic`, the compiled runtime's `Value`).
pub trait ScriptValue: Sized {
    fn int(&self) -> Option<i64>;
    /// `f` on the items, when the value is an array.
    fn items<R>(&self, f: impl FnOnce(&[Self]) -> R) -> Option<R>;
    /// The script's name of the value's type, for messages.
    fn type_name(&self) -> &'static str;
}

impl ScriptValue for rhai::Dynamic {
    fn int(&self) -> Option<i64> {
        self.as_int().ok()
    }

    fn items<R>(&self, f: impl FnOnce(&[Self]) -> R) -> Option<R> {
        self.read_lock::<rhai::Array>().map(|a| f(&a))
    }

    fn type_name(&self) -> &'static str {
        rhai::Dynamic::type_name(self)
    }
}

/// One domain of `add_all`: its choices, each giving one number or several
/// (e.g. a grid slot `[c, r]`).
pub trait Domain {
    /// How many choices it has; an error when it is no domain.
    fn choices(&self) -> Result<usize, String>;
    /// Appends choice `k`'s numbers to `out`.
    fn push(&self, k: usize, out: &mut Values) -> Result<(), String>;
}

/// A domain given as a script value: a number (its one choice), or an
/// array of choices, each a number or an array of numbers.
pub struct Dyn<'a, V>(pub &'a V);

impl<V: ScriptValue> Domain for Dyn<'_, V> {
    fn choices(&self) -> Result<usize, String> {
        if self.0.int().is_some() {
            return Ok(1);
        }
        self.0.items(<[V]>::len).ok_or_else(|| {
            format!(
                "add_all: a domain must be a number or an array, found {}",
                self.0.type_name()
            )
        })
    }

    fn push(&self, k: usize, out: &mut Values) -> Result<(), String> {
        if let Some(x) = self.0.int() {
            out.push(x);
            return Ok(());
        }
        let pushed = self.0.items(|choices| {
            let choice = &choices[k];
            if let Some(x) = choice.int() {
                out.push(x);
                return Ok(());
            }
            choice
                .items(|numbers| {
                    numbers.iter().try_for_each(|n| match n.int() {
                        Some(x) => {
                            out.push(x);
                            Ok(())
                        }
                        None => Err(format!("add_all: expected numbers, found {}", n.type_name())),
                    })
                })
                .unwrap_or_else(|| {
                    Err(format!(
                        "add_all: a choice must be a number or an array of numbers, found {}",
                        choice.type_name()
                    ))
                })
        });
        pushed.unwrap_or_else(|| self.choices().map(drop))
    }
}

/// The numbers of one combination. An action takes at most
/// [`MAX_ARGS`] values; one more is kept, so that a combination too long
/// is a slice the action's template rejects, and nothing is allocated.
#[derive(Default)]
pub struct Values {
    buf: [i64; MAX_ARGS + 1],
    len: usize,
}

impl Values {
    pub fn push(&mut self, x: i64) {
        if self.len < self.buf.len() {
            self.buf[self.len] = x;
        }
        self.len += 1;
    }

    pub fn as_slice(&self) -> &[i64] {
        &self.buf[..self.len.min(self.buf.len())]
    }
}

/// `add_all`: calls `add` with every combination of `domains`, the first
/// domain varying slowest. Every domain must be one (checked before any
/// combination); a domain without choices gives no combination; a choice
/// is checked when a combination takes it.
pub fn add_all<D: Domain>(domains: &[D], mut add: impl FnMut(&[i64]) -> Result<(), String>) -> Result<(), String> {
    if domains.len() > MAX_ARGS {
        return Err(format!("add_all: at most {MAX_ARGS} domains, got {}", domains.len()));
    }
    let mut choices = [0usize; MAX_ARGS];
    for (n, d) in choices.iter_mut().zip(domains) {
        *n = d.choices()?;
    }
    let choices = &choices[..domains.len()];
    if choices.contains(&0) {
        return Ok(());
    }
    let mut index = [0usize; MAX_ARGS];
    let mut values = Values::default();
    loop {
        values.len = 0;
        for (d, &k) in domains.iter().zip(&index) {
            d.push(k, &mut values)?;
        }
        add(values.as_slice())?;
        // Odometer: advance the last domain first.
        let mut pos = domains.len();
        loop {
            if pos == 0 {
                return Ok(());
            }
            pos -= 1;
            index[pos] += 1;
            if index[pos] < choices[pos] {
                break;
            }
            index[pos] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhai::Dynamic;

    fn array(items: Vec<Dynamic>) -> Dynamic {
        Dynamic::from_array(items)
    }

    fn int(x: i64) -> Dynamic {
        Dynamic::from_int(x)
    }

    /// Every combination `add_all` adds, in order, or its error.
    fn combinations(domains: &[Dynamic]) -> Result<Vec<Vec<i64>>, String> {
        let domains: Vec<Dyn<Dynamic>> = domains.iter().map(Dyn).collect();
        let mut out = Vec::new();
        add_all(&domains, |v| {
            out.push(v.to_vec());
            Ok(())
        })?;
        Ok(out)
    }

    #[test]
    fn add_all_gives_every_combination_first_domain_slowest() {
        // [0, 1] x a slot [c, r] from two x a fixed 7.
        let slots = array(vec![array(vec![int(2), int(3)]), array(vec![int(4), int(5)])]);
        assert_eq!(
            combinations(&[array(vec![int(0), int(1)]), slots, int(7)]).unwrap(),
            vec![vec![0, 2, 3, 7], vec![0, 4, 5, 7], vec![1, 2, 3, 7], vec![1, 4, 5, 7]]
        );
        // Choices of different widths.
        let d = array(vec![array(vec![]), array(vec![int(1), int(2)])]);
        assert_eq!(combinations(&[d]).unwrap(), vec![vec![], vec![1, 2]]);
        // Too many values: one more than an action takes, for its template
        // to reject.
        let long = array((0..9).map(int).collect());
        assert_eq!(combinations(&[array(vec![long])]).unwrap()[0].len(), MAX_ARGS + 1);
    }

    #[test]
    fn add_all_checks_every_domain_and_each_choice_it_takes() {
        assert!(combinations(&[array(vec![int(1)]), array(vec![])]).unwrap().is_empty());
        // A bad domain is an error even beside an empty one.
        let e = combinations(&[array(vec![]), Dynamic::from("x")]).unwrap_err();
        assert!(e.contains("a domain must be a number or an array, found string"), "{e}");
        let e = combinations(&[array(vec![Dynamic::TRUE])]).unwrap_err();
        assert!(
            e.contains("a choice must be a number or an array of numbers, found bool"),
            "{e}"
        );
        let e = combinations(&[array(vec![array(vec![Dynamic::TRUE])])]).unwrap_err();
        assert!(e.contains("expected numbers, found bool"), "{e}");
        let e = combinations(&vec![int(1); MAX_ARGS + 1]).unwrap_err();
        assert!(e.contains("at most 6 domains, got 7"), "{e}");
    }

    #[test]
    fn distinct_counts_values_and_at_least_lists_indices() {
        assert_eq!(distinct(&[3, 1, 3, 6]), 3);
        assert_eq!(distinct(&[]), 0);
        assert_eq!(at_least(&[0, 3, 1, 0], 1), vec![1, 2]);
        assert_eq!(at_least(&[0, 3, 1, 0], 2), vec![1]);
        assert!(at_least(&[], 0).is_empty());
    }
}
