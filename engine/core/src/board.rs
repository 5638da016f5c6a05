//! Fixed boards: square grids (4 or 8 directions) and hex grids (axial
//! coordinates), with distances, rings, lines, rays that obstacles stop,
//! reachability around obstacles, and pieces that cover several cells.
//!
//! Scripts describe a board with plain numbers, so that both rule engines
//! pass it without conversions and a board lives in the game data as is:
//!
//! - the **geometry** `[directions, width, height]`: `8` is a square grid
//!   whose pieces step to the 8 cells around them (distance: the larger of
//!   the column and row differences), `4` a square grid of orthogonal steps
//!   (distance: their sum), `6` a hex grid in axial coordinates (`x` is the
//!   axial `q`, `y` is `r`; pointy-top hexes, `y` grows southwards);
//! - a **cell** is one number, `y * width + x`, for `0 <= x < width` and
//!   `0 <= y < height` (a hex board of another outline, a hexagon say, is
//!   this parallelogram with the cells outside it marked by the scripts);
//! - **directions** are numbered clockwise: square-8 `0 = N, 1 = NE, 2 = E,
//!   ..., 7 = NW`, square-4 `0 = N, 1 = E, 2 = S, 3 = W`, hex `0 = NE,
//!   1 = E, 2 = SE, 3 = SW, 4 = W, 5 = NW`. A direction is taken modulo the
//!   number of directions, so `d + 1` turns clockwise, `d - 1` anticlockwise
//!   and `d + directions / 2` turns around;
//! - what stops movement and sight is two arrays: `cells`, one **code** per
//!   cell (whatever the scripts use: terrain, a piece's kind and owner...),
//!   and `rule`, indexed by code: `0` open (a ray or a walk goes in and on),
//!   `1` wall (it cannot go in), `2` stop (it goes in and no further: a
//!   piece to ram or shoot, a hole to fall into). A piece asking for its
//!   moves passes the rule of its own kind and owner, so one `cells` array
//!   serves every piece.
//!
//! Every function checks its arguments and says what is wrong, so a script
//! mistake is a located error, never a panic.

use std::collections::VecDeque;

/// The most cells a board may have (the sandbox's array limit).
pub const MAX_CELLS: i64 = 65_536;

/// A rule value: what a ray or a walk does at a cell.
const OPEN: i64 = 0;
const WALL: i64 = 1;
const STOP: i64 = 2;

/// A board's geometry, read from `[directions, width, height]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geo {
    dirs: i64,
    w: i64,
    h: i64,
}

const SQUARE4: [(i64, i64); 4] = [(0, -1), (1, 0), (0, 1), (-1, 0)];
const SQUARE8: [(i64, i64); 8] = [(0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1)];
const HEX: [(i64, i64); 6] = [(1, -1), (1, 0), (0, 1), (-1, 1), (-1, 0), (0, -1)];

impl Geo {
    pub fn read(geo: &[i64]) -> Result<Geo, String> {
        match *geo {
            [dirs @ (4 | 6 | 8), w, h] if w >= 1 && h >= 1 && w.saturating_mul(h) <= MAX_CELLS => {
                Ok(Geo { dirs, w, h })
            }
            _ => Err(format!(
                "a board's geometry is [directions, width, height]: directions 4 or 8 (square) or 6 (hex), \
                 a width and height of at least 1 and at most {MAX_CELLS} cells; got {geo:?}"
            )),
        }
    }

    pub fn cells(&self) -> i64 {
        self.w * self.h
    }

    fn deltas(&self) -> &'static [(i64, i64)] {
        match self.dirs {
            4 => &SQUARE4,
            6 => &HEX,
            _ => &SQUARE8,
        }
    }

    fn xy(&self, cell: i64) -> (i64, i64) {
        (cell % self.w, cell / self.w)
    }

    fn at(&self, x: i64, y: i64) -> Option<i64> {
        if (0..self.w).contains(&x) && (0..self.h).contains(&y) {
            Some(y * self.w + x)
        } else {
            None
        }
    }

    /// `cell`, checked to be on the board.
    pub fn check(&self, cell: i64, what: &str) -> Result<i64, String> {
        if (0..self.cells()).contains(&cell) {
            Ok(cell)
        } else {
            Err(format!(
                "{what} {cell} is not a cell of the {}x{} board (cells 0..{})",
                self.w,
                self.h,
                self.cells()
            ))
        }
    }

    /// The neighbour of `cell` in direction `dir` (modulo the directions).
    pub fn step(&self, cell: i64, dir: i64) -> Option<i64> {
        let (dx, dy) = self.deltas()[dir.rem_euclid(self.dirs) as usize];
        let (x, y) = self.xy(cell);
        self.at(x + dx, y + dy)
    }

    /// Calls `visit` with the cells along direction `dir` from `from`, near
    /// to far, at most `n` of them, until the board's edge or until
    /// `visit` says stop. Steps in coordinates, without a division per cell.
    fn line_from(&self, from: i64, dir: i64, n: i64, mut visit: impl FnMut(i64) -> bool) {
        let (dx, dy) = self.deltas()[dir.rem_euclid(self.dirs) as usize];
        let (mut x, mut y) = self.xy(from);
        let step = dy * self.w + dx;
        let mut cell = from;
        for _ in 0..n.min(self.w + self.h) {
            x += dx;
            y += dy;
            if x < 0 || y < 0 || x >= self.w || y >= self.h {
                return;
            }
            cell += step;
            if !visit(cell) {
                return;
            }
        }
    }

    pub fn distance(&self, a: i64, b: i64) -> i64 {
        let ((ax, ay), (bx, by)) = (self.xy(a), self.xy(b));
        let (dx, dy) = (bx - ax, by - ay);
        match self.dirs {
            4 => dx.abs() + dy.abs(),
            6 => (dx.abs() + dy.abs() + (dx + dy).abs()) / 2,
            _ => dx.abs().max(dy.abs()),
        }
    }
}

/// The rule of every code in `cells`. The rule's values are checked once
/// per call; a cell's code when the cell is read (a call looks at a few
/// dozen of a board's cells, not all of them).
struct Rules<'a> {
    cells: &'a [i64],
    rule: &'a [i64],
}

impl<'a> Rules<'a> {
    fn read(geo: &Geo, cells: &'a [i64], rule: &'a [i64]) -> Result<Rules<'a>, String> {
        check_cells(geo, cells)?;
        if let Some((code, r)) = rule.iter().enumerate().find(|(_, r)| !(OPEN..=STOP).contains(*r)) {
            return Err(format!("rule[{code}] is {r}: a rule is 0 (open), 1 (wall) or 2 (stop)"));
        }
        Ok(Rules { cells, rule })
    }

    fn of(&self, cell: i64) -> Result<i64, String> {
        let code = self.cells[cell as usize];
        match usize::try_from(code).ok().and_then(|c| self.rule.get(c)) {
            Some(&r) => Ok(r),
            None => Err(format!(
                "cell {cell} holds code {code}, which rule does not cover (it has {} entries, for codes 0..{})",
                self.rule.len(),
                self.rule.len()
            )),
        }
    }
}

fn check_cells(geo: &Geo, cells: &[i64]) -> Result<(), String> {
    if cells.len() as i64 != geo.cells() {
        return Err(format!(
            "cells has {} entries, but the {}x{} board has {} cells",
            cells.len(),
            geo.w,
            geo.h,
            geo.cells()
        ));
    }
    Ok(())
}

/// Prefixes a native's name to its message, as every engine reports it.
fn named<T>(name: &str, r: Result<T, String>) -> Result<T, String> {
    r.map_err(|e| format!("{name}: {e}"))
}

/// `board_step`: the neighbour in a direction, or -1 off the board.
pub fn step(geo: &[i64], cell: i64, dir: i64) -> Result<i64, String> {
    named("board_step", step_(geo, cell, dir))
}

fn step_(geo: &[i64], cell: i64, dir: i64) -> Result<i64, String> {
    let g = Geo::read(geo)?;
    g.check(cell, "cell")?;
    Ok(g.step(cell, dir).unwrap_or(-1))
}

/// `board_neighbours`: the cells next to `cell`, by direction.
pub fn neighbours(geo: &[i64], cell: i64) -> Result<Vec<i64>, String> {
    named("board_neighbours", neighbours_(geo, cell))
}

fn neighbours_(geo: &[i64], cell: i64) -> Result<Vec<i64>, String> {
    let g = Geo::read(geo)?;
    g.check(cell, "cell")?;
    Ok((0..g.dirs).filter_map(|d| g.step(cell, d)).collect())
}

/// `board_distance`: the number of steps between two cells on an empty board.
pub fn distance(geo: &[i64], a: i64, b: i64) -> Result<i64, String> {
    named("board_distance", distance_(geo, a, b))
}

fn distance_(geo: &[i64], a: i64, b: i64) -> Result<i64, String> {
    let g = Geo::read(geo)?;
    Ok(g.distance(g.check(a, "cell")?, g.check(b, "cell")?))
}

/// `board_ring`: the cells at exactly `n` steps from `cell`, in cell order
/// (`[cell]` for 0, none for a negative `n`).
pub fn ring(geo: &[i64], cell: i64, n: i64) -> Result<Vec<i64>, String> {
    named("board_ring", ring_(geo, cell, n))
}

fn ring_(geo: &[i64], cell: i64, n: i64) -> Result<Vec<i64>, String> {
    let g = Geo::read(geo)?;
    g.check(cell, "cell")?;
    if n < 0 {
        return Ok(Vec::new());
    }
    let (x, y) = g.xy(cell);
    let n = n.min(g.w + g.h);
    let mut out = Vec::new();
    for cy in (y - n).max(0)..=(y + n).min(g.h - 1) {
        for cx in (x - n).max(0)..=(x + n).min(g.w - 1) {
            let c = cy * g.w + cx;
            if g.distance(cell, c) == n {
                out.push(c);
            }
        }
    }
    Ok(out)
}

/// `board_line`: the cells of the straight line from `a` to `b`, without
/// `a`, ending with `b`. Square boards draw it with Bresenham's algorithm;
/// hex boards take the hex nearest to each of the evenly spaced points,
/// nudged by a fixed tiny offset so that a line along the edge between two
/// hexes always takes the same side.
pub fn line(geo: &[i64], a: i64, b: i64) -> Result<Vec<i64>, String> {
    named("board_line", line_(geo, a, b))
}

fn line_(geo: &[i64], a: i64, b: i64) -> Result<Vec<i64>, String> {
    let g = Geo::read(geo)?;
    g.check(a, "cell")?;
    g.check(b, "cell")?;
    let ((ax, ay), (bx, by)) = (g.xy(a), g.xy(b));
    let mut out = Vec::new();
    if g.dirs == 6 {
        let n = g.distance(a, b);
        for i in 1..=n {
            let (q, r) = hex_lerp_round((ax, ay), (bx, by), i, n);
            out.push(r * g.w + q);
        }
        return Ok(out);
    }
    let (dx, dy) = ((bx - ax).abs(), -(by - ay).abs());
    let (sx, sy) = ((bx - ax).signum(), (by - ay).signum());
    let (mut x, mut y, mut err) = (ax, ay, dx + dy);
    while (x, y) != (bx, by) {
        let e2 = 2 * err;
        if e2 >= dy {
            err += dy;
            x += sx;
        }
        if e2 <= dx {
            err += dx;
            y += sy;
        }
        out.push(y * g.w + x);
    }
    Ok(out)
}

/// The hex nearest to the point `i/n` of the way from `a` to `b` (axial),
/// in exact integer arithmetic. The cube coordinates are scaled by
/// `n * SCALE` and nudged by (1, 2, -3) units, which no rounding boundary
/// can meet, so there are no ties to break.
fn hex_lerp_round(a: (i64, i64), b: (i64, i64), i: i64, n: i64) -> (i64, i64) {
    const SCALE: i64 = 1_000_000;
    let cube = |(q, r): (i64, i64)| [q, -q - r, r];
    let (ca, cb) = (cube(a), cube(b));
    let den = n * SCALE;
    let nudge = [1, 2, -3];
    let num: Vec<i64> = (0..3)
        .map(|k| (ca[k] * (n - i) + cb[k] * i) * SCALE + nudge[k])
        .collect();
    // Round half away from zero never happens (no ties); floor(x + 1/2).
    let round = |v: i64| (2 * v + den).div_euclid(2 * den);
    let mut rc: Vec<i64> = num.iter().map(|&v| round(v)).collect();
    let diff: Vec<i64> = (0..3).map(|k| (rc[k] * den - num[k]).abs()).collect();
    if diff[0] > diff[1] && diff[0] > diff[2] {
        rc[0] = -rc[1] - rc[2];
    } else if diff[1] > diff[2] {
        rc[1] = -rc[0] - rc[2];
    } else {
        rc[2] = -rc[0] - rc[1];
    }
    (rc[0], rc[2])
}

/// `board_rays`: the cells a piece at `from` can go to along straight
/// lines of at most `n` steps, every direction in turn and each line from
/// near to far: a line goes through open cells, ends before a wall or the
/// edge, and ends on a stop cell.
pub fn rays(geo: &[i64], cells: &[i64], rule: &[i64], from: i64, n: i64) -> Result<Vec<i64>, String> {
    named("board_rays", rays_(geo, cells, rule, from, n))
}

fn rays_(geo: &[i64], cells: &[i64], rule: &[i64], from: i64, n: i64) -> Result<Vec<i64>, String> {
    let mut out = Vec::new();
    walk_rays(geo, cells, rule, from, n, |cell, r| {
        out.push(cell);
        r == OPEN
    })?;
    Ok(out)
}

/// `board_targets`: the stop cells that the lines of [`rays`] end on, one
/// per direction at most: what a piece at `from` can shoot at `n` steps,
/// when open cells let fire through and walls block it.
pub fn targets(geo: &[i64], cells: &[i64], rule: &[i64], from: i64, n: i64) -> Result<Vec<i64>, String> {
    named("board_targets", targets_(geo, cells, rule, from, n))
}

fn targets_(geo: &[i64], cells: &[i64], rule: &[i64], from: i64, n: i64) -> Result<Vec<i64>, String> {
    let mut out = Vec::new();
    walk_rays(geo, cells, rule, from, n, |cell, r| {
        if r == STOP {
            out.push(cell);
        }
        r == OPEN
    })?;
    Ok(out)
}

/// `board_seen`: the codes of the cells on the straight lines from `from`,
/// up to `n` steps each (fewer at the board's edge), direction by
/// direction, near to far. What [`rays`] and [`targets`] from `from` of at
/// most `n` steps depend on, whatever the rule: a stamp for `recall`.
pub fn seen(geo: &[i64], cells: &[i64], from: i64, n: i64) -> Result<Vec<i64>, String> {
    named("board_seen", seen_(geo, cells, from, n))
}

fn seen_(geo: &[i64], cells: &[i64], from: i64, n: i64) -> Result<Vec<i64>, String> {
    let g = Geo::read(geo)?;
    check_cells(&g, cells)?;
    g.check(from, "from")?;
    let mut out = Vec::with_capacity((g.dirs * n.clamp(0, 16)) as usize);
    for d in 0..g.dirs {
        g.line_from(from, d, n, |next| {
            out.push(cells[next as usize]);
            true
        });
    }
    Ok(out)
}

/// Walks every direction from `from`, up to `n` steps; `visit` sees each
/// cell that is not a wall and says whether to go on.
fn walk_rays(
    geo: &[i64],
    cells: &[i64],
    rule: &[i64],
    from: i64,
    n: i64,
    mut visit: impl FnMut(i64, i64) -> bool,
) -> Result<(), String> {
    let g = Geo::read(geo)?;
    let rules = Rules::read(&g, cells, rule)?;
    g.check(from, "from")?;
    let mut failed = None;
    for d in 0..g.dirs {
        g.line_from(from, d, n, |next| match rules.of(next) {
            Ok(WALL) => false,
            Ok(r) => visit(next, r),
            Err(e) => {
                failed = Some(e);
                false
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
    }
    Ok(())
}

/// `board_reach`: the cells a piece at `from` can reach in at most `n`
/// steps, turning as it likes: through open cells, never into a wall,
/// and into a stop cell only to end there. Nearest first, then by cell.
pub fn reach(geo: &[i64], cells: &[i64], rule: &[i64], from: i64, n: i64) -> Result<Vec<i64>, String> {
    named("board_reach", reach_(geo, cells, rule, from, n))
}

fn reach_(geo: &[i64], cells: &[i64], rule: &[i64], from: i64, n: i64) -> Result<Vec<i64>, String> {
    let g = Geo::read(geo)?;
    g.check(from, "from")?;
    reach_block_(geo, cells, rule, &[from], n)
}

/// `board_footprint`: the cells of a straight piece `len` cells long whose
/// first cell is `cell` and which extends in direction `dir`; empty when
/// it does not fit on the board.
pub fn footprint(geo: &[i64], cell: i64, dir: i64, len: i64) -> Result<Vec<i64>, String> {
    named("board_footprint", footprint_(geo, cell, dir, len))
}

fn footprint_(geo: &[i64], cell: i64, dir: i64, len: i64) -> Result<Vec<i64>, String> {
    let g = Geo::read(geo)?;
    g.check(cell, "cell")?;
    if !(1..=g.cells()).contains(&len) {
        return Err(format!("a piece is 1 to {} cells long, not {len}", g.cells()));
    }
    let mut out = vec![cell];
    for _ in 1..len {
        match g.step(*out.last().expect("not empty"), dir) {
            Some(c) => out.push(c),
            None => return Ok(Vec::new()),
        }
    }
    Ok(out)
}

/// `board_reach_block`: where a piece covering the cells `piece` (its
/// first cell is its anchor) can shift to as a block in at most `n` steps,
/// each step moving every cell one cell in the same direction: as
/// [`reach`], where a position is open when all its cells are, walled when
/// one is a wall or off the board, and a stop when one is a stop. The
/// piece's own cells count as open. Gives the anchor's cells, nearest
/// first, then by cell.
pub fn reach_block(geo: &[i64], cells: &[i64], rule: &[i64], piece: &[i64], n: i64) -> Result<Vec<i64>, String> {
    named("board_reach_block", reach_block_(geo, cells, rule, piece, n))
}

fn reach_block_(geo: &[i64], cells: &[i64], rule: &[i64], piece: &[i64], n: i64) -> Result<Vec<i64>, String> {
    let g = Geo::read(geo)?;
    let rules = Rules::read(&g, cells, rule)?;
    let Some(&anchor) = piece.first() else {
        return Err("the piece covers no cell".into());
    };
    for &c in piece {
        g.check(c, "a piece's cell")?;
    }
    let (ax, ay) = g.xy(anchor);
    let offsets: Vec<(i64, i64)> = piece
        .iter()
        .map(|&c| {
            let (x, y) = g.xy(c);
            (x - ax, y - ay)
        })
        .collect();
    // What the piece meets with its anchor at `cell`: None off the board
    // or on a wall, else whether it must stop there. A code no rule covers
    // is kept in `failed` and reported.
    let failed: std::cell::RefCell<Option<String>> = std::cell::RefCell::new(None);
    let meets = |cell: i64| -> Option<bool> {
        let (x, y) = g.xy(cell);
        let mut stop = false;
        for &(dx, dy) in &offsets {
            let c = g.at(x + dx, y + dy)?;
            if piece.contains(&c) {
                continue;
            }
            match rules.of(c) {
                Ok(WALL) => return None,
                Ok(STOP) => stop = true,
                Ok(_) => {}
                Err(e) => {
                    failed.replace(Some(e));
                    return None;
                }
            }
        }
        Some(stop)
    };
    let mut dist = vec![-1i64; g.cells() as usize];
    dist[anchor as usize] = 0;
    let mut queue = VecDeque::from([anchor]);
    let mut found: Vec<(i64, i64)> = Vec::new();
    while let Some(cur) = queue.pop_front() {
        let d = dist[cur as usize];
        if d >= n {
            continue;
        }
        for dir in 0..g.dirs {
            let Some(next) = g.step(cur, dir) else { continue };
            if dist[next as usize] >= 0 {
                continue;
            }
            let Some(stop) = meets(next) else { continue };
            dist[next as usize] = d + 1;
            found.push((d + 1, next));
            if !stop {
                queue.push_back(next);
            }
        }
    }
    if let Some(e) = failed.into_inner() {
        return Err(e);
    }
    found.sort_unstable();
    Ok(found.into_iter().map(|(_, c)| c).collect())
}

/// `board_cell`: the cell at `(x, y)` counted from the cell `origin` (the
/// cell written `0,0`: cell 0 for plain coordinates, a hex board's centre
/// for coordinates that may be negative), or -1 off the board.
pub fn cell(geo: &[i64], x: i64, y: i64, origin: i64) -> Result<i64, String> {
    named("board_cell", cell_(geo, x, y, origin))
}

fn cell_(geo: &[i64], x: i64, y: i64, origin: i64) -> Result<i64, String> {
    let g = Geo::read(geo)?;
    let (ox, oy) = g.xy(g.check(origin, "origin")?);
    Ok(x.checked_add(ox)
        .zip(y.checked_add(oy))
        .and_then(|(x, y)| g.at(x, y))
        .unwrap_or(-1))
}

/// `board_coords`: the `[x, y]` of each of `cells`, counted from the cell
/// `origin` (see [`cell`]): what action texts show.
pub fn coords(geo: &[i64], cells: &[i64], origin: i64) -> Result<Vec<Vec<i64>>, String> {
    named("board_coords", coords_(geo, cells, origin))
}

fn coords_(geo: &[i64], cells: &[i64], origin: i64) -> Result<Vec<Vec<i64>>, String> {
    let g = Geo::read(geo)?;
    let (ox, oy) = g.xy(g.check(origin, "origin")?);
    cells
        .iter()
        .map(|&c| {
            let (x, y) = g.xy(g.check(c, "cell")?);
            Ok(vec![x - ox, y - oy])
        })
        .collect()
}

/// The signature of a board native, for the engines that register it:
/// each argument is a number or an array of numbers; the result is one of
/// those or an array of `[x, y]` pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    Ints,
    Pairs,
}

/// Every board native: name, arguments, result. The interpreter, the
/// compiler and the documentation follow this table.
pub const NATIVES: &[(&str, &[Kind], Kind)] = {
    use Kind::{Int, Ints, Pairs};
    &[
        ("board_cell", &[Ints, Int, Int, Int], Int),
        ("board_coords", &[Ints, Ints, Int], Pairs),
        ("board_step", &[Ints, Int, Int], Int),
        ("board_neighbours", &[Ints, Int], Ints),
        ("board_distance", &[Ints, Int, Int], Int),
        ("board_ring", &[Ints, Int, Int], Ints),
        ("board_line", &[Ints, Int, Int], Ints),
        ("board_rays", &[Ints, Ints, Ints, Int, Int], Ints),
        ("board_seen", &[Ints, Ints, Int, Int], Ints),
        ("board_targets", &[Ints, Ints, Ints, Int, Int], Ints),
        ("board_reach", &[Ints, Ints, Ints, Int, Int], Ints),
        ("board_footprint", &[Ints, Int, Int, Int], Ints),
        ("board_reach_block", &[Ints, Ints, Ints, Ints, Int], Ints),
    ]
};

/// An argument of a board native: a number or an array of numbers.
pub enum Arg<'a> {
    Int(i64),
    Ints(&'a [i64]),
}

/// What a board native returns.
#[derive(Debug, PartialEq, Eq)]
pub enum Out {
    Int(i64),
    Ints(Vec<i64>),
    Pairs(Vec<Vec<i64>>),
}

/// Calls board native `name` (one of [`NATIVES`]) with arguments of the
/// kinds its signature lists (the interpreter registers every native
/// through this; compiled rules call the functions directly).
pub fn call(name: &str, args: &[Arg<'_>]) -> Result<Out, String> {
    let int = |i: usize| match args.get(i) {
        Some(Arg::Int(x)) => *x,
        _ => 0,
    };
    let ints = |i: usize| match args.get(i) {
        Some(Arg::Ints(x)) => *x,
        _ => &[][..],
    };
    Ok(match name {
        "board_cell" => Out::Int(cell(ints(0), int(1), int(2), int(3))?),
        "board_coords" => Out::Pairs(coords(ints(0), ints(1), int(2))?),
        "board_step" => Out::Int(step(ints(0), int(1), int(2))?),
        "board_neighbours" => Out::Ints(neighbours(ints(0), int(1))?),
        "board_distance" => Out::Int(distance(ints(0), int(1), int(2))?),
        "board_ring" => Out::Ints(ring(ints(0), int(1), int(2))?),
        "board_line" => Out::Ints(line(ints(0), int(1), int(2))?),
        "board_rays" => Out::Ints(rays(ints(0), ints(1), ints(2), int(3), int(4))?),
        "board_seen" => Out::Ints(seen(ints(0), ints(1), int(2), int(3))?),
        "board_targets" => Out::Ints(targets(ints(0), ints(1), ints(2), int(3), int(4))?),
        "board_reach" => Out::Ints(reach(ints(0), ints(1), ints(2), int(3), int(4))?),
        "board_footprint" => Out::Ints(footprint(ints(0), int(1), int(2), int(3))?),
        "board_reach_block" => Out::Ints(reach_block(ints(0), ints(1), ints(2), ints(3), int(4))?),
        other => return Err(format!("no board native '{other}'")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SQ8: [i64; 3] = [8, 5, 4];
    const SQ4: [i64; 3] = [4, 5, 4];
    /// A 7x7 axial parallelogram: the hexagon of radius 3 has its centre at (3, 3).
    const HEX7: [i64; 3] = [6, 7, 7];

    fn c(g: &[i64], x: i64, y: i64) -> i64 {
        y * g[1] + x
    }

    /// The cells at these `(x, y)`.
    fn cs(g: &[i64], xy: &[(i64, i64)]) -> Vec<i64> {
        xy.iter().map(|&(x, y)| c(g, x, y)).collect()
    }

    #[test]
    fn geometry_is_checked() {
        assert!(Geo::read(&[8, 5, 4]).is_ok());
        for bad in [&[5, 5, 4][..], &[8, 0, 4], &[8, 5], &[6, 300, 300]] {
            let e = Geo::read(bad).unwrap_err();
            assert!(e.contains("[directions, width, height]"), "{e}");
        }
        assert!(step(&SQ8, 20, 0).unwrap_err().contains("not a cell of the 5x4 board"));
    }

    #[test]
    fn steps_follow_the_numbered_directions_and_stop_at_the_edge() {
        let mid = c(&SQ8, 2, 1);
        let around: Vec<i64> = (0..8).map(|d| step(&SQ8, mid, d).unwrap()).collect();
        let want = [(2, 0), (3, 0), (3, 1), (3, 2), (2, 2), (1, 2), (1, 1), (1, 0)];
        assert_eq!(around, cs(&SQ8, &want));
        // Directions wrap: -1 is north-west, 9 north-east.
        assert_eq!(step(&SQ8, mid, -1).unwrap(), c(&SQ8, 1, 0));
        assert_eq!(step(&SQ8, mid, 9).unwrap(), c(&SQ8, 3, 0));
        assert_eq!(step(&SQ8, 0, 0).unwrap(), -1);
        assert_eq!(neighbours(&SQ8, 0).unwrap(), vec![1, 6, 5]);
        assert_eq!(neighbours(&SQ4, 0).unwrap(), vec![1, 5]);
        // Hex: six neighbours in the middle, (q+1, r-1) first.
        let h = c(&HEX7, 3, 3);
        let want = [(4, 2), (4, 3), (3, 4), (2, 4), (2, 3), (3, 2)];
        assert_eq!(neighbours(&HEX7, h).unwrap(), cs(&HEX7, &want));
    }

    #[test]
    fn distances_of_each_geometry() {
        let (a, b) = (c(&SQ8, 0, 0), c(&SQ8, 3, 2));
        assert_eq!(distance(&SQ8, a, b).unwrap(), 3);
        assert_eq!(distance(&SQ4, a, b).unwrap(), 5);
        // Hex: (1,3) to (4,0) is 3 steps north-east; (0,0) to (3,3) 6 steps.
        assert_eq!(distance(&HEX7, c(&HEX7, 1, 3), c(&HEX7, 4, 0)).unwrap(), 3);
        assert_eq!(distance(&HEX7, c(&HEX7, 0, 0), c(&HEX7, 3, 3)).unwrap(), 6);
    }

    #[test]
    fn rings_hold_the_cells_at_that_distance() {
        let h = c(&HEX7, 3, 3);
        for n in 0..=3 {
            let r = ring(&HEX7, h, n).unwrap();
            assert_eq!(r.len() as i64, if n == 0 { 1 } else { 6 * n }, "ring {n}");
            assert!(r.iter().all(|&x| distance(&HEX7, h, x).unwrap() == n));
        }
        assert_eq!(ring(&SQ8, c(&SQ8, 2, 1), 1).unwrap().len(), 8);
        // Clipped by the board's edge.
        assert_eq!(ring(&SQ8, 0, 1).unwrap(), vec![1, 5, 6]);
        assert!(ring(&SQ8, 0, -1).unwrap().is_empty());
    }

    #[test]
    fn lines_end_at_the_target_and_are_connected() {
        let g = [8, 10, 10];
        let l = line(&g, c(&g, 0, 0), c(&g, 6, 3)).unwrap();
        assert_eq!(l.len(), 6);
        assert_eq!(*l.last().unwrap(), c(&g, 6, 3));
        let mut prev = c(&g, 0, 0);
        for &x in &l {
            assert_eq!(distance(&g, prev, x).unwrap(), 1);
            prev = x;
        }
        assert!(line(&g, 5, 5).unwrap().is_empty());
        // Hex: one hex per step, each next to the last.
        let a = c(&HEX7, 0, 3);
        let b = c(&HEX7, 5, 1);
        let l = line(&HEX7, a, b).unwrap();
        assert_eq!(l.len() as i64, distance(&HEX7, a, b).unwrap());
        let mut prev = a;
        for &x in &l {
            assert_eq!(distance(&HEX7, prev, x).unwrap(), 1);
            prev = x;
        }
        assert_eq!(prev, b);
        // Along an edge between hexes the nudge always picks the same side.
        assert_eq!(
            line(&HEX7, c(&HEX7, 3, 3), c(&HEX7, 4, 5)).unwrap(),
            line(&HEX7, c(&HEX7, 3, 3), c(&HEX7, 4, 5)).unwrap()
        );
    }

    /// A 5x4 square-8 board: code 1 a rock (wall), 2 an enemy (stop).
    fn board() -> Vec<i64> {
        let mut cells = vec![0; 20];
        cells[c(&SQ8, 3, 1) as usize] = 1;
        cells[c(&SQ8, 1, 3) as usize] = 2;
        cells[c(&SQ8, 1, 1) as usize] = 2;
        cells
    }

    #[test]
    fn rays_go_through_open_cells_and_end_before_walls_and_on_stops() {
        let cells = board();
        let rule = [0, 1, 2];
        let from = c(&SQ8, 1, 2);
        let r = rays(&SQ8, &cells, &rule, from, 2).unwrap();
        // N: (1,1) is an enemy: the line ends on it.
        // NE: (2,1), (3,0). E: (2,2), (3,2). SE: (2,3). S: (1,3) enemy.
        // SW: (0,3). W: (0,2). NW: (0,1).
        let want = [
            (1, 1),
            (2, 1),
            (3, 0),
            (2, 2),
            (3, 2),
            (2, 3),
            (1, 3),
            (0, 3),
            (0, 2),
            (0, 1),
        ];
        assert_eq!(r, cs(&SQ8, &want));
        assert_eq!(
            targets(&SQ8, &cells, &rule, from, 4).unwrap(),
            vec![c(&SQ8, 1, 1), c(&SQ8, 1, 3)]
        );
        // What those lines see: 2 cells N, 2 NE, 2 E, 1 SE, 1 S, 1 SW, 1 W, 1 NW, codes as they are.
        let s = seen(&SQ8, &cells, from, 2).unwrap();
        assert_eq!(s, vec![2, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0]);
        // The rock blocks fire from the east along row 1.
        assert!(targets(&SQ8, &cells, &rule, c(&SQ8, 4, 1), 4).unwrap().is_empty());
        // Another rule for the same cells: enemies are walls now.
        assert!(!rays(&SQ8, &cells, &[0, 1, 1], from, 2)
            .unwrap()
            .contains(&c(&SQ8, 1, 1)));
    }

    #[test]
    fn reach_walks_around_walls_and_stops_on_stop_cells() {
        // A wall across column 2, but for its bottom cell.
        let g = [4, 5, 4];
        let mut cells = vec![0; 20];
        for y in 0..3 {
            cells[c(&g, 2, y) as usize] = 1;
        }
        cells[c(&g, 0, 3) as usize] = 2;
        let from = c(&g, 0, 0);
        let r = reach(&g, &cells, &[0, 1, 2], from, 5).unwrap();
        assert!(!r.contains(&c(&g, 2, 0)));
        // Around the wall: (1,3), (2,3), (3,3) at 4, 5... (2,3) is 5 steps away.
        assert!(r.contains(&c(&g, 2, 3)));
        assert!(!r.contains(&c(&g, 3, 3)));
        // The stop cell is reached but not gone through.
        assert!(r.contains(&c(&g, 0, 3)));
        let d: Vec<i64> = r.iter().map(|&x| distance(&g, from, x).unwrap()).collect();
        assert!(d.windows(2).all(|w| w[0] <= w[1]), "nearest first: {d:?}");
    }

    #[test]
    fn blocks_shift_as_one_piece() {
        // A 2-cell piece lying east-west at (0,0)-(1,0) on an empty 4x3 square-4 board.
        let g = [4, 4, 3];
        let piece = footprint(&g, 0, 1, 2).unwrap();
        assert_eq!(piece, vec![0, 1]);
        assert!(footprint(&g, 3, 1, 2).unwrap().is_empty());
        let cells = vec![0; 12];
        let r = reach_block(&g, &cells, &[0, 1], &piece, 1).unwrap();
        // One step east (anchor at 1) or south (anchor at 4); not west (off the board).
        assert_eq!(r, vec![1, 4]);
        // A wall at (3,0) stops the eastward shift but not the southward one.
        let mut walled = cells.clone();
        walled[3] = 1;
        assert_eq!(reach_block(&g, &walled, &[0, 1], &piece, 2).unwrap(), vec![1, 4, 5, 8]);
    }

    #[test]
    fn coordinates_count_from_an_origin_cell() {
        let centre = c(&HEX7, 3, 3);
        assert_eq!(cell(&HEX7, -3, 2, centre).unwrap(), c(&HEX7, 0, 5));
        assert_eq!(cell(&HEX7, -4, 0, centre).unwrap(), -1);
        assert_eq!(cell(&SQ8, 4, 3, 0).unwrap(), 19);
        assert_eq!(cell(&SQ8, 5, 0, 0).unwrap(), -1);
        assert_eq!(cell(&SQ8, i64::MAX, 0, 1).unwrap(), -1);
        assert_eq!(
            coords(&HEX7, &[c(&HEX7, 0, 5), centre], centre).unwrap(),
            vec![vec![-3, 2], vec![0, 0]]
        );
        assert!(coords(&SQ8, &[20], 0).unwrap_err().contains("board_coords: cell 20"));
    }

    #[test]
    fn bad_cells_and_rules_are_reported() {
        let e = rays(&SQ8, &[0; 3], &[0], 0, 1).unwrap_err();
        assert!(e.contains("cells has 3 entries"), "{e}");
        let e = rays(&SQ8, &board(), &[0, 1], 0, 1).unwrap_err();
        assert!(e.contains("holds code 2, which rule does not cover"), "{e}");
        let e = rays(&SQ8, &board(), &[0, 1, 3], 0, 1).unwrap_err();
        assert!(e.contains("rule[2] is 3"), "{e}");
        assert!(footprint(&SQ8, 0, 0, 0).unwrap_err().contains("1 to 20 cells long"));
        assert!(reach_block(&SQ8, &board(), &[0, 1, 2], &[], 1)
            .unwrap_err()
            .contains("covers no cell"));
    }

    #[test]
    fn every_native_is_callable_through_the_table() {
        let cells = board();
        let rule = [0, 1, 2];
        for (name, kinds, ret) in NATIVES {
            let args: Vec<Arg> = kinds
                .iter()
                .enumerate()
                .map(|(i, k)| match (k, i) {
                    (Kind::Ints, 0) => Arg::Ints(&SQ8),
                    (Kind::Ints, 1) => Arg::Ints(&cells),
                    (Kind::Ints, 2) => Arg::Ints(&rule),
                    (Kind::Ints | Kind::Pairs, _) => Arg::Ints(&[6, 7]),
                    (Kind::Int, _) => Arg::Int(1),
                })
                .collect();
            let r = call(name, &args).unwrap_or_else(|e| panic!("{name}: {e}"));
            let kind = match r {
                Out::Int(_) => Kind::Int,
                Out::Ints(_) => Kind::Ints,
                Out::Pairs(_) => Kind::Pairs,
            };
            assert_eq!(kind, *ret, "{name}");
        }
    }
}
