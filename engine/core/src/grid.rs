//! An ordinal grid: pieces on cells `(col, row)` where only the order of
//! columns and rows matters, never distances.
//!
//! Coordinates are kept compact (occupied columns are exactly `0..C`).
//! Destinations are written in doubled coordinates: odd `2k+1` means "in line
//! with column k", even `2k` means "a new column just before column k". This
//! lets a piece slide between others, which then move apart. Pieces not in
//! play have column `-1`.
//!
//! These run once per legal listing and per move in playouts, so boards of
//! up to 16 pieces (every shipped variant) take a fast path (`small`):
//! sets of pieces as bitmasks, ranks counted without sorting, nothing
//! allocated. Larger boards take the sorting code (`general`).
//! Both give the same results for every input (a property test checks it).

/// The most pieces a board may have and still take the fast path.
const SMALL: usize = 16;

/// Compacts present pieces' coordinates in place.
pub fn compact(cols: &mut [i64], rows: &mut [i64]) {
    if cols.len() <= SMALL {
        small::compact(cols, rows)
    } else {
        general::compact(cols, rows)
    }
}

/// Every destination slot `(c, r)` for `mover` (or for a new piece when
/// `mover` is `None`): free cells and new lines, minus the mover's own
/// slot, column by column, handed to `each` (no list is built).
pub fn for_each_slot(cols: &[i64], rows: &[i64], mover: Option<usize>, each: impl FnMut(i64, i64)) {
    if cols.len() <= SMALL {
        small::for_each_slot(cols, rows, mover, each)
    } else {
        general::for_each_slot(cols, rows, mover, each)
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
    if cols.len() <= SMALL {
        small::place(cols, rows, mover, c, r)
    } else {
        general::place(cols, rows, mover, c, r)
    }
}

/// The fast path for boards of up to [`SMALL`] pieces. Every function is
/// `#[inline]`: compiled rules build with incremental codegen units, and
/// only inline functions are inlined across them (a call to a two-line
/// helper cost more than the helper).
mod small {
    use super::SMALL;

    /// A set of pieces by index, one bit each.
    type Pieces = u32;

    /// The pieces of a set, lowest index first.
    #[inline]
    fn each_piece(set: Pieces) -> impl Iterator<Item = usize> {
        let mut rest = set;
        std::iter::from_fn(move || {
            (rest != 0).then(|| {
                let i = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                i
            })
        })
    }

    /// The pieces in play (column not negative).
    #[inline]
    fn present(cols: &[i64]) -> Pieces {
        let mut set = 0;
        for (i, &c) in cols.iter().enumerate() {
            if c >= 0 {
                set |= 1 << i;
            }
        }
        set
    }

    /// The compact ranks of one coordinate over a set of pieces. A rank is
    /// the number of distinct smaller values; with a handful of pieces,
    /// counting them beats sorting.
    struct Ranks {
        /// The rank of each piece of the set (by index).
        of: [u8; SMALL],
        /// One piece per distinct value: the first that has it.
        firsts: Pieces,
        /// How many distinct values there are (counted as found: the
        /// target has no population-count instruction).
        count: i64,
    }

    impl Ranks {
        /// Always inlined: left to itself the compiler calls it, and the
        /// call and the copy of the result cost about as much as the work.
        #[inline(always)]
        fn new(values: &[i64], set: Pieces) -> Ranks {
            let (mut firsts, mut count) = (0, 0);
            for i in each_piece(set) {
                if !each_piece(firsts).any(|j| values[j] == values[i]) {
                    firsts |= 1 << i;
                    count += 1;
                }
            }
            let mut of = [0; SMALL];
            for i in each_piece(set) {
                of[i] = Ranks::below(values, firsts, values[i]) as u8;
            }
            Ranks { of, firsts, count }
        }

        /// How many distinct values lie below `x`.
        #[inline]
        fn below(values: &[i64], firsts: Pieces, x: i64) -> usize {
            each_piece(firsts).filter(|&j| values[j] < x).count()
        }

        #[inline]
        fn rank(&self, i: usize) -> i64 {
            self.of[i] as i64
        }

        /// The doubled coordinate that rebuilds `x` among the set: in line
        /// with a value it shares, else a new line before the next one.
        #[inline]
        fn slot_of(&self, values: &[i64], x: i64) -> i64 {
            // One pass over the distinct values for both questions.
            let (mut below, mut shared) = (0, false);
            for j in each_piece(self.firsts) {
                below += (values[j] < x) as i64;
                shared |= values[j] == x;
            }
            2 * below + shared as i64
        }
    }

    /// The compact frame of every present piece but `mover`, and the slot
    /// the mover holds in it (if it is on the board).
    struct Frame {
        others: Pieces,
        cols: Ranks,
        rows: Ranks,
        /// Bit `r` of `taken[c]`: another piece is on compact cell `(c, r)`
        /// (at most 16 others, so at most 16 columns and 16 rows).
        taken: [u16; SMALL],
        current: Option<(i64, i64)>,
    }

    impl Frame {
        #[inline]
        fn new(cols: &[i64], rows: &[i64], mover: Option<usize>) -> Frame {
            // The mover's slot first: its index is checked here, before it
            // is used as a bit.
            let mover_slot = mover.map(|m| (m, cols[m] >= 0));
            let mut others = present(cols);
            if let Some((m, _)) = mover_slot {
                others &= !(1 << m);
            }
            let (cs, rs) = (Ranks::new(cols, others), Ranks::new(rows, others));
            let mut taken = [0; SMALL];
            for i in each_piece(others) {
                taken[cs.of[i] as usize] |= 1 << rs.of[i];
            }
            let current = match mover_slot {
                Some((m, true)) => Some((cs.slot_of(cols, cols[m]), rs.slot_of(rows, rows[m]))),
                _ => None,
            };
            Frame {
                others,
                cols: cs,
                rows: rs,
                taken,
                current,
            }
        }

        /// The largest doubled column and row.
        #[inline]
        fn bounds(&self) -> (i64, i64) {
            (2 * self.cols.count, 2 * self.rows.count)
        }

        /// Whether the mover may go to doubled slot `(c, r)`: inside the
        /// bounds, not another piece's cell, not where it already is.
        #[inline]
        fn is_free(&self, c: i64, r: i64) -> bool {
            let (c_max, r_max) = self.bounds();
            let inside = (0..=c_max).contains(&c) && (0..=r_max).contains(&r);
            inside && self.is_free_inside(c, r)
        }

        /// [`Frame::is_free`] for a slot known to be inside the bounds.
        #[inline]
        fn is_free_inside(&self, c: i64, r: i64) -> bool {
            self.blocked_in(c) & (1 << r) == 0
        }

        /// The slots of doubled column `c` (inside the bounds) the mover may
        /// not take, as bits by doubled row: the other pieces' cells (odd
        /// columns and rows only) and its own slot. One mask per column
        /// keeps the listing's inner loop to a bit test per slot.
        #[inline]
        fn blocked_in(&self, c: i64) -> u64 {
            let mut blocked = 0u64;
            if c % 2 == 1 {
                let mut rows = self.taken[(c / 2) as usize];
                while rows != 0 {
                    blocked |= 2 << (2 * rows.trailing_zeros());
                    rows &= rows - 1;
                }
            }
            match self.current {
                Some((cc, cr)) if cc == c => blocked | 1 << cr,
                _ => blocked,
            }
        }
    }

    #[inline]
    pub fn compact(cols: &mut [i64], rows: &mut [i64]) {
        let set = present(cols);
        let (cs, rs) = (Ranks::new(cols, set), Ranks::new(rows, set));
        for i in each_piece(set) {
            cols[i] = cs.rank(i);
            rows[i] = rs.rank(i);
        }
    }

    #[inline]
    pub fn for_each_slot(cols: &[i64], rows: &[i64], mover: Option<usize>, mut each: impl FnMut(i64, i64)) {
        let f = Frame::new(cols, rows, mover);
        let (c_max, r_max) = f.bounds();
        // Half-open ranges: an inclusive one carries an "exhausted" flag
        // through the loop.
        for c in 0..c_max + 1 {
            let blocked = f.blocked_in(c);
            for r in 0..r_max + 1 {
                if blocked & (1 << r) == 0 {
                    each(c, r);
                }
            }
        }
    }

    /// `mover` is a piece (checked by the caller).
    #[inline]
    pub fn place(cols: &mut [i64], rows: &mut [i64], mover: usize, c: i64, r: i64) -> bool {
        let f = Frame::new(cols, rows, Some(mover));
        if !f.is_free(c, r) {
            return false;
        }
        // The compact result, written directly: the others' lines are all
        // taken, so the mover lands on line `c / 2` whether it joins a line
        // (odd) or opens a new one (even), and a new line pushes the lines
        // from there on one further out.
        let (mover_col, mover_row) = (c / 2, r / 2);
        let (new_col, new_row) = (c % 2 == 0, r % 2 == 0);
        for i in each_piece(f.others) {
            let (col, row) = (f.cols.rank(i), f.rows.rank(i));
            cols[i] = col + (new_col && col >= mover_col) as i64;
            rows[i] = row + (new_row && row >= mover_row) as i64;
        }
        cols[mover] = mover_col;
        rows[mover] = mover_row;
        true
    }
}

/// The code for boards of any size: sorted lists of distinct columns and
/// rows, ranks by binary search. Played only on boards of more than 16
/// pieces; the tests also hold the fast path to it on small ones.
mod general {
    /// Scratch lists of pieces (heap lists: boards that come here do not
    /// fit a small inline buffer).
    type Pieces<T> = Vec<T>;

    /// Fills `cols_out` and `rows_out` with the sorted distinct columns and
    /// rows of the pieces `keep` keeps (by index), in one pass.
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
    pub(super) fn compact(cols: &mut [i64], rows: &mut [i64]) {
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
    pub(super) fn for_each_slot(cols: &[i64], rows: &[i64], mover: Option<usize>, mut each: impl FnMut(i64, i64)) {
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

    /// Moves (or places) `mover` to slot `(c, r)` and compacts everything.
    /// Returns false, changing nothing, if the slot is not one of [`slots`].
    pub(super) fn place(cols: &mut [i64], rows: &mut [i64], mover: usize, c: i64, r: i64) -> bool {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;

    /// A board of up to [`SMALL`] pieces, some out of play (negative
    /// column), with coordinates that need not be compact yet.
    fn board() -> impl Strategy<Value = (Vec<i64>, Vec<i64>)> {
        prop::collection::vec((prop_oneof![1 => -3i64..0, 4 => 0i64..8], -2i64..8), 0..=SMALL)
            .prop_map(|pieces| pieces.into_iter().unzip())
    }

    fn general_slots(cols: &[i64], rows: &[i64], mover: Option<usize>) -> Vec<(i64, i64)> {
        let mut out = Vec::new();
        general::for_each_slot(cols, rows, mover, |c, r| out.push((c, r)));
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// The fast path lists, places and compacts exactly as the general
        /// code: the same slots in the same order, the same arrangement
        /// after a move, the same refusals.
        #[test]
        fn small_boards_match_the_general_code(
            (cols, rows) in board(),
            mover_pick in 0usize..=SMALL,
            slot_pick in any::<prop::sample::Index>(),
            (c, r) in (-2i64..36, -2i64..36),
        ) {
            let mut fast = (cols.clone(), rows.clone());
            let mut slow = (cols.clone(), rows.clone());
            small::compact(&mut fast.0, &mut fast.1);
            general::compact(&mut slow.0, &mut slow.1);
            prop_assert_eq!(&fast, &slow);

            // A pick past the last piece stands for a new piece (`None`).
            let mover = (mover_pick < cols.len()).then_some(mover_pick);
            let listed = slots(&cols, &rows, mover);
            prop_assert_eq!(&listed, &general_slots(&cols, &rows, mover));

            let Some(m) = mover else { return Ok(()) };
            // One listed slot (so that most cases move) and one anywhere.
            let mut targets = vec![(c, r)];
            if !listed.is_empty() {
                targets.push(*slot_pick.get(&listed));
            }
            for (c, r) in targets {
                let mut fast = (cols.clone(), rows.clone());
                let mut slow = (cols.clone(), rows.clone());
                let moved = place(&mut fast.0, &mut fast.1, m, c, r);
                prop_assert_eq!(moved, general::place(&mut slow.0, &mut slow.1, m, c, r));
                prop_assert_eq!(moved, listed.contains(&(c, r)));
                prop_assert_eq!(&fast, &slow);
            }
        }
    }

    #[test]
    fn boards_past_the_fast_path_still_place() {
        // 17 pieces in a row take the general code; piece 0 moves to the
        // end of the row.
        let mut cols: Vec<i64> = (0..=SMALL as i64).collect();
        let mut rows = vec![0; SMALL + 1];
        assert!(place(&mut cols, &mut rows, 0, 2 * SMALL as i64, 1));
        assert_eq!(cols[0], SMALL as i64);
        assert_eq!(cols[1..], (0..SMALL as i64).collect::<Vec<_>>()[..]);
    }

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
