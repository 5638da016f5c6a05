//! The generic helper natives' arithmetic, shared by both rule engines
//! (the grid helpers are in [`crate::grid`]).

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
    }
}
