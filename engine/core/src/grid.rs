//! An ordinal grid: pieces on cells `(col, row)` where only the order of
//! columns and rows matters, never distances.
//!
//! Coordinates are kept compact (occupied columns are exactly `0..C`).
//! Destinations are written in doubled coordinates: odd `2k+1` means "in line
//! with column k", even `2k` means "a new column just before column k". This
//! lets a piece slide between others, which then move apart. Pieces not in
//! play have column `-1`.

use smallvec::SmallVec;

/// Scratch lists of pieces: on the stack for boards of up to 16 pieces,
/// so that listing and placing allocate nothing in the common case
/// (these run once per legal listing and per move in playouts).
type Pieces<T> = SmallVec<[T; 16]>;

/// Fills `cols_out` and `rows_out` with the sorted distinct columns and
/// rows of the pieces `keep` keeps (by index), in one pass. Scratch lists are filled in place
/// rather than returned: a returned `SmallVec` is copied whole (its inline
/// buffer), which cost more than the sorting.
fn fill_ranks(
    cols_out: &mut Pieces<i64>,
    rows_out: &mut Pieces<i64>,
    cols: &[i64],
    rows: &[i64],
    keep: impl Fn(usize) -> bool,
) {
    cols_out.clear();
    rows_out.clear();
    for (i, (&c, &r)) in cols.iter().zip(rows).enumerate() {
        if keep(i) {
            cols_out.push(c);
            rows_out.push(r);
        }
    }
    sort_distinct(cols_out);
    sort_distinct(rows_out);
}

fn sort_distinct(v: &mut Pieces<i64>) {
    // Boards of two pieces leave one: the sort's call costs more than it.
    if v.len() > 1 {
        v.sort_unstable();
        v.dedup();
    }
}

fn rank_of(sorted: &[i64], x: i64) -> i64 {
    sorted.partition_point(|&v| v < x) as i64
}

/// Compacts present pieces' coordinates in place.
pub fn compact(cols: &mut [i64], rows: &mut [i64]) {
    let (mut cs, mut rs) = (Pieces::new(), Pieces::new());
    fill_ranks(&mut cs, &mut rs, cols, rows, |i| cols[i] >= 0);
    for i in 0..cols.len() {
        if cols[i] >= 0 {
            cols[i] = rank_of(&cs, cols[i]);
            rows[i] = rank_of(&rs, rows[i]);
        }
    }
}

/// The compact frame of every present piece but `mover`, and the slot the
/// mover holds in it (if it is on the board).
#[derive(Default)]
struct Frame {
    cols: Pieces<i64>,
    rows: Pieces<i64>,
    cells: Pieces<(i64, i64)>,
    current: Option<(i64, i64)>,
}

impl Frame {
    /// Fills an empty frame (made by the caller, so that it is built where
    /// it is used: see [`fill_ranks`]).
    fn fill(&mut self, cols: &[i64], rows: &[i64], mover: Option<usize>) {
        let other = |i: usize| cols[i] >= 0 && Some(i) != mover;
        fill_ranks(&mut self.cols, &mut self.rows, cols, rows, other);
        let (cs, rs) = (&self.cols, &self.rows);
        self.cells.clear();
        for i in (0..cols.len()).filter(|&i| other(i)) {
            self.cells.push((rank_of(cs, cols[i]), rank_of(rs, rows[i])));
        }
        self.current = mover
            .filter(|&m| cols[m] >= 0)
            .map(|m| (Frame::slot_of(cs, cols[m]), Frame::slot_of(rs, rows[m])));
    }

    /// The doubled coordinate that rebuilds `x` among `sorted` others.
    fn slot_of(sorted: &[i64], x: i64) -> i64 {
        match sorted.binary_search(&x) {
            Ok(k) => 2 * k as i64 + 1,
            Err(k) => 2 * k as i64,
        }
    }

    /// The largest doubled column and row.
    fn bounds(&self) -> (i64, i64) {
        (2 * self.cols.len() as i64, 2 * self.rows.len() as i64)
    }

    /// Whether the mover may go to doubled slot `(c, r)`: inside the
    /// bounds, not another piece's cell, not where it already is.
    fn is_free(&self, c: i64, r: i64) -> bool {
        let (c_max, r_max) = self.bounds();
        let inside = (0..=c_max).contains(&c) && (0..=r_max).contains(&r);
        inside && self.is_free_inside(c, r)
    }

    /// [`Frame::is_free`] for a slot known to be inside the bounds (the
    /// listing's loop runs over exactly those).
    #[inline]
    fn is_free_inside(&self, c: i64, r: i64) -> bool {
        let taken = c % 2 == 1 && r % 2 == 1 && self.cells.contains(&((c - 1) / 2, (r - 1) / 2));
        !taken && self.current != Some((c, r))
    }
}

/// Every destination slot `(c, r)` for `mover` (or for a new piece when
/// `mover` is `None`): free cells and new lines, minus the mover's own
/// slot, column by column, handed to `each` (no list is built).
pub fn for_each_slot(cols: &[i64], rows: &[i64], mover: Option<usize>, mut each: impl FnMut(i64, i64)) {
    let mut f = Frame::default();
    f.fill(cols, rows, mover);
    let (c_max, r_max) = f.bounds();
    for c in 0..=c_max {
        for r in 0..=r_max {
            if f.is_free_inside(c, r) {
                each(c, r);
            }
        }
    }
}

/// [`for_each_slot`] as a list.
pub fn slots(cols: &[i64], rows: &[i64], mover: Option<usize>) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    for_each_slot(cols, rows, mover, |c, r| out.push((c, r)));
    out
}

/// Moves (or places) `mover` to slot `(c, r)` and compacts everything.
/// Returns false, changing nothing, if the slot is not one of [`slots`].
pub fn place(cols: &mut [i64], rows: &mut [i64], mover: usize, c: i64, r: i64) -> bool {
    if mover >= cols.len() {
        return false;
    }
    let mut f = Frame::default();
    f.fill(cols, rows, Some(mover));
    if !f.is_free(c, r) {
        return false;
    }
    // Others go to odd doubled coordinates, the mover to its slot; compacting
    // the doubled coordinates gives the new arrangement.
    for i in 0..cols.len() {
        if i != mover && cols[i] >= 0 {
            cols[i] = 2 * rank_of(&f.cols, cols[i]) + 1;
            rows[i] = 2 * rank_of(&f.rows, rows[i]) + 1;
        }
    }
    cols[mover] = c;
    rows[mover] = r;
    compact(cols, rows);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_pieces_have_eight_slots_around_the_other() {
        let (cols, rows) = ([0, 1], [0, 0]);
        let s = slots(&cols, &rows, Some(0));
        // Other at 1,1; 9 cells of a 3x3 doubled grid minus the other's cell
        // and the mover's own slot (0,1: a new column west, same row).
        assert_eq!(s.len(), 7);
        assert!(!s.contains(&(1, 1)));
        assert!(!s.contains(&(0, 1)));
        assert!(s.contains(&(2, 1)));
    }

    #[test]
    fn placing_between_slides_others_apart() {
        // Three in a row at columns 0,1,2; piece 0 moves between 1 and 2.
        let mut cols = [0, 1, 2];
        let mut rows = [0, 0, 0];
        // Others (1,2) compact to columns 0,1; "between" is even c = 2.
        assert!(place(&mut cols, &mut rows, 0, 2, 1));
        assert_eq!(cols, [1, 0, 2]);
        assert_eq!(rows, [0, 0, 0]);
    }

    #[test]
    fn placing_in_line_shares_a_column() {
        let mut cols = [0, 1];
        let mut rows = [0, 0];
        // Move piece 0 south of piece 1: c = 1 (in line), r = 2 (new row south).
        assert!(place(&mut cols, &mut rows, 0, 1, 2));
        assert_eq!((cols, rows), ([0, 0], [1, 0]));
    }

    #[test]
    fn forbidden_slots_change_nothing() {
        let mut cols = [0, 1];
        let mut rows = [0, 0];
        assert!(!place(&mut cols, &mut rows, 0, 1, 1)); // occupied
        assert!(!place(&mut cols, &mut rows, 0, 0, 1)); // where it already is
        assert_eq!((cols, rows), ([0, 1], [0, 0]));
    }

    #[test]
    fn compact_skips_absent_pieces() {
        let mut cols = [3, -1, 7];
        let mut rows = [5, -1, 5];
        compact(&mut cols, &mut rows);
        assert_eq!((cols, rows), ([0, -1, 1], [0, -1, 0]));
    }

    #[test]
    fn new_piece_may_take_any_free_slot() {
        let (cols, rows) = ([0, -1], [0, -1]);
        let s = slots(&cols, &rows, None);
        assert_eq!(s.len(), 8);
        let mut c = cols;
        let mut r = rows;
        assert!(place(&mut c, &mut r, 1, 2, 1));
        assert_eq!((c, r), ([0, 1], [0, 0]));
    }
}
