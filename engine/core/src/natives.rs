//! The generic helper natives' arithmetic, shared by both rule engines
//! (the grid helpers are in [`crate::grid`]).

/// The number of distinct values: e.g. repair points from a roll.
pub fn distinct(values: &[i64]) -> i64 {
    // A few values (a roll's dice): each counted unless seen before, with
    // no copy to sort.
    if values.len() <= 16 {
        return (0..values.len()).filter(|&i| !values[..i].contains(&values[i])).count() as i64;
    }
    let mut v = values.to_vec();
    v.sort_unstable();
    v.dedup();
    v.len() as i64
}

/// The indices whose value is at least `min`: e.g. what can pay a cost.
pub fn at_least(values: &[i64], min: i64) -> Vec<i64> {
    // Sized once, filled by a plain loop: a filtered `collect` cost more
    // than the handful of values it reads (this runs in legal listings).
    let mut out = Vec::with_capacity(values.len());
    for (i, &x) in values.iter().enumerate() {
        if x >= min {
            out.push(i as i64);
        }
    }
    out
}

/// `grid_slots`: the slots piece `mover` (or a new piece, when negative)
/// may take on the ordinal grid ([`crate::grid`]), arguments checked,
/// handed to `each` in order.
pub fn for_each_grid_slot(cols: &[i64], rows: &[i64], mover: i64, each: impl FnMut(i64, i64)) -> Result<(), String> {
    if cols.len() != rows.len() || mover >= cols.len() as i64 {
        return Err("grid_slots: cols and rows must have one entry per piece, and mover must be a piece".into());
    }
    crate::grid::for_each_slot(cols, rows, (mover >= 0).then_some(mover as usize), each);
    Ok(())
}

/// [`for_each_grid_slot`] as a list.
pub fn grid_slots(cols: &[i64], rows: &[i64], mover: i64) -> Result<Vec<(i64, i64)>, String> {
    let mut out = Vec::new();
    for_each_grid_slot(cols, rows, mover, |c, r| out.push((c, r)))?;
    Ok(out)
}

/// `grid_place`: the columns and rows after piece `mover` moves to a slot.
pub fn grid_place(cols: &[i64], rows: &[i64], mover: i64, col: i64, row: i64) -> Result<(Vec<i64>, Vec<i64>), String> {
    let (mut c, mut r) = (cols.to_vec(), rows.to_vec());
    grid_place_in(&mut c, &mut r, mover, col, row)?;
    Ok((c, r))
}

/// [`grid_place`] on the columns and rows themselves; on error they are
/// left as they were.
pub fn grid_place_in(cols: &mut [i64], rows: &mut [i64], mover: i64, col: i64, row: i64) -> Result<(), String> {
    if cols.len() != rows.len() || mover < 0 || mover >= cols.len() as i64 {
        return Err("grid_place: cols and rows must have one entry per piece, and mover must be a piece".into());
    }
    if !crate::grid::place(cols, rows, mover as usize, col, row) {
        return Err(format!("grid_place: {col},{row} is not a free slot for piece {mover}"));
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_counts_values_and_at_least_lists_indices() {
        assert_eq!(distinct(&[3, 1, 3, 6]), 3);
        assert_eq!(distinct(&[]), 0);
        assert_eq!(at_least(&[0, 3, 1, 0], 1), vec![1, 2]);
        assert_eq!(at_least(&[0, 3, 1, 0], 2), vec![1]);
        assert!(at_least(&[], 0).is_empty());
        // Past the few values counted without sorting.
        let many: Vec<i64> = (0..40).map(|i| i % 7).collect();
        assert_eq!(distinct(&many), 7);
        assert_eq!(distinct(&many[..16]), 7);
        assert_eq!(distinct(&many[..5]), 5);
    }

    #[test]
    fn grid_place_in_place_moves_as_grid_place_and_keeps_a_failed_move() {
        let (cols, rows) = (vec![0i64, 1], vec![0i64, 0]);
        let slots = grid_slots(&cols, &rows, 0).unwrap();
        let &(sc, sr) = slots.last().expect("a free slot");
        let (c, r) = grid_place(&cols, &rows, 0, sc, sr).unwrap();
        let (mut c2, mut r2) = (cols.clone(), rows.clone());
        grid_place_in(&mut c2, &mut r2, 0, sc, sr).unwrap();
        assert_eq!((c2, r2), (c, r));
        let (mut c3, mut r3) = (cols.clone(), rows.clone());
        let e = grid_place_in(&mut c3, &mut r3, 0, 99, 99).unwrap_err();
        assert_eq!(e, grid_place(&cols, &rows, 0, 99, 99).unwrap_err());
        assert_eq!((c3, r3), (cols.clone(), rows.clone()));
        assert!(grid_place_in(&mut [0], &mut [0, 1], 0, 1, 1).is_err());
    }
}
