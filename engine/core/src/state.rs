//! The game state: the engine's own bookkeeping ([`Core`]) beside the rule
//! set's data (opaque to the engine, owned by the rules).
//!
//! The split matters: everything the engine must reason about generically
//! (whose decision it is, which chance event is pending, who is out, how the
//! game ended) is typed Rust, while everything the rule set invents (vessels,
//! powers, locks, ...) stays opaque script data.

use crate::data::Data;
use serde::{Deserialize, Serialize};

/// A seat index, 0-based. Seat `k` is written `P{k+1}` in records.
pub type Seat = usize;

/// Most values an action template may carry.
pub const MAX_ARGS: usize = 6;

/// One decision, in compact form: which action template, and its values.
///
/// Values are integers whatever the template's notation: an index into an
/// enumeration, a plain number, or a seat. Texts are produced and parsed only
/// at the edges (records, the terminal), never on the hot path.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Action {
    pub kind: u16,
    pub len: u8,
    pub args: [i32; MAX_ARGS],
}

impl Action {
    pub fn new(kind: u16, values: &[i32]) -> Self {
        let mut args = [0; MAX_ARGS];
        args[..values.len()].copy_from_slice(values);
        Action {
            kind,
            len: values.len() as u8,
            args,
        }
    }

    pub fn values(&self) -> &[i32] {
        &self.args[..self.len as usize]
    }
}

/// One chance outcome: a die face, or a card (its index in its deck file).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum Outcome {
    Face(u32),
    Card { deck: u16, card: u16 },
}

/// Where the outcomes of a pending chance event come from.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum ChanceSource {
    /// Fair dice with faces `1..=sides`; only `visible_to` (if any)
    /// learns the faces (a secret roll, behind a screen).
    Dice {
        sides: u32,
        #[serde(default)]
        visible_to: Option<Seat>,
    },
    /// Cards drawn without replacement from deck `deck`; only `visible_to`
    /// (if any) learns which card it was.
    Deck { deck: usize, visible_to: Option<Seat> },
}

impl ChanceSource {
    /// The one seat that sees this event's outcomes (a secret draw or
    /// roll); none when everyone does.
    pub fn seen_by(&self) -> Option<Seat> {
        match self {
            ChanceSource::Dice { visible_to, .. } | ChanceSource::Deck { visible_to, .. } => *visible_to,
        }
    }
}

/// A chance event the rules asked for and that is not complete yet.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct PendingChance {
    pub source: ChanceSource,
    /// How many outcomes the event needs in all.
    pub needed: u32,
    /// The outcomes received so far, in order (inline: most events need a
    /// few dice, and one allocation per event showed in playouts).
    pub got: smallvec::SmallVec<[Outcome; 4]>,
    /// The script function that receives the outcomes once complete
    /// (borrowed when the rules name it with a `'static` string, as
    /// compiled rules do: no allocation per chance event).
    pub then: std::borrow::Cow<'static, str>,
    /// A deal round the table (`deal`): the seat dealt the first card.
    /// Each card is seen only by the seat it goes to (the source's
    /// `visible_to`, which moves on to the next seat in play after every
    /// card), and the continuation gets the cards seat by seat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deal: Option<Seat>,
    /// Where the cards go as they come (`draw_from`, a deal into a pile):
    /// a place in `Core::decks`, for a deal the first seat's place of the
    /// pile (seat `s`'s is `into + s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub into: Option<u32>,
    /// A draw from a pile that declares `refill`: the place whose cards
    /// are shuffled into the source once it runs out mid-event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refill: Option<u32>,
}

impl PendingChance {
    /// The outcomes as the continuation receives them: in the order they
    /// came, or for a deal seat by seat (every card of the first seat in
    /// play in seat order, then the next seat's, ...), each seat's in the
    /// order dealt.
    pub fn outcomes_for_continuation(&self, out: &[bool]) -> std::borrow::Cow<'_, [Outcome]> {
        let Some(first) = self.deal else {
            return std::borrow::Cow::Borrowed(&self.got);
        };
        // The seats in the order they were dealt to, starting at `first`.
        let n = out.len();
        let order: Vec<Seat> = (0..n).map(|k| (first + k) % n).filter(|&s| !out[s]).collect();
        let mut by_seat: Vec<(Seat, usize, Outcome)> = self
            .got
            .iter()
            .enumerate()
            .map(|(k, &o)| (order[k % order.len()], k, o))
            .collect();
        by_seat.sort_by_key(|&(seat, k, _)| (seat, k));
        std::borrow::Cow::Owned(by_seat.into_iter().map(|(_, _, o)| o).collect())
    }
}

/// How the game stands.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum Status {
    Ongoing,
    Won(Seat),
    Draw,
}

/// The engine's generic bookkeeping, identical for every rule set.
#[derive(PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct Core {
    /// Number of seats in this game.
    pub seats: usize,
    /// Seats eliminated from play.
    pub out: Vec<bool>,
    /// The seat whose turn it is (none during setup).
    pub active: Option<Seat>,
    /// The seat whose decision is next (none at chance or at the end).
    pub actor: Option<Seat>,
    /// Index of the current step in the variant's step table; none during
    /// setup until the scripts enter one.
    pub step: Option<usize>,
    /// 1-based number of the current turn; 0 during setup.
    pub turn: u32,
    pub status: StatusCell,
    pub chance: Option<PendingChance>,
    /// Remaining cards of every deck (indices into the deck's card list).
    pub decks: Vec<Vec<u16>>,
    /// Counters the rule set declares as statistics, by declaration order.
    pub stats: Vec<i64>,
    /// Every card dealt in secret, in draw order: what hidden information
    /// exists, who knows it, and whether it has since been revealed.
    pub secrets: Vec<SecretDraw>,
    /// Every decision taken in a secret step, in order: hidden from the
    /// other seats until the rules reveal it.
    #[serde(default)]
    pub secret_decisions: Vec<SecretDecision>,
    /// The seats that still have to decide in the current round of an
    /// `actor = "every"` step, one bit per seat (at most 64 seats).
    #[serde(default)]
    pub round: u64,
    /// Every die rolled in secret (`roll_secret`), in order: only its seat
    /// saw the face, until the rules reveal it.
    #[serde(default)]
    pub secret_rolls: Vec<SecretRoll>,
    /// Each seat's score when the variant declares `[scores]` (empty
    /// otherwise): what `returns` gives at the end of the game.
    #[serde(default)]
    pub scores: Vec<i64>,
    /// Legal actions the rules listed earlier this turn and asked to keep
    /// (`remember`), for reuse by a later listing (`recall`). Derived
    /// data, not part of the game: equal states may hold different memos,
    /// and it is neither saved nor compared.
    #[serde(skip)]
    pub memo: Memo,
}

/// Written out (not derived) for `clone_from`, which copies field by field
/// into the vectors a scratch state already has: search and the engine's
/// rollback copy states constantly. The destructuring is exhaustive, so a
/// new field cannot be forgotten here.
impl Clone for Core {
    fn clone(&self) -> Self {
        let mut copy = Core::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        let Core {
            seats,
            out,
            active,
            actor,
            step,
            turn,
            status,
            chance,
            decks,
            stats,
            secrets,
            secret_decisions,
            round,
            secret_rolls,
            scores,
            memo,
        } = source;
        self.seats = *seats;
        self.out.clone_from(out);
        self.active = *active;
        self.actor = *actor;
        self.step = *step;
        self.turn = *turn;
        self.status = *status;
        self.chance.clone_from(chance);
        self.decks.clone_from(decks);
        self.stats.clone_from(stats);
        self.secrets.clone_from(secrets);
        self.secret_decisions.clone_from(secret_decisions);
        self.round = *round;
        self.secret_rolls.clone_from(secret_rolls);
        self.scores.clone_from(scores);
        self.memo.clone_from(memo);
    }
}

/// Groups of legal actions kept between listings within a turn: per step
/// and key, the stamp they were listed under and the actions. Cloning a
/// state shares the groups (they are only replaced, never changed).
#[derive(Clone, Default)]
pub struct Memo(std::sync::Arc<std::collections::BTreeMap<(usize, i64), MemoGroup>>);

/// One remembered group of legal actions, with the stamp it was listed
/// under: the numbers its listing depended on.
#[derive(Clone)]
pub struct MemoGroup {
    pub stamp: Vec<i64>,
    pub actions: std::sync::Arc<[Action]>,
}

impl Memo {
    pub fn get(&self, step: usize, key: i64) -> Option<&MemoGroup> {
        self.0.get(&(step, key))
    }

    pub fn put(&mut self, step: usize, key: i64, group: MemoGroup) {
        std::sync::Arc::make_mut(&mut self.0).insert((step, key), group);
    }

    pub fn clear(&mut self) {
        if !self.0.is_empty() {
            *self = Memo::default();
        }
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A memo is derived data: it never makes two states differ.
impl PartialEq for Memo {
    fn eq(&self, _: &Memo) -> bool {
        true
    }
}

impl Eq for Memo {}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Memo({} groups)", self.0.len())
    }
}

/// A card dealt so that only one seat saw it.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct SecretDraw {
    pub deck: u16,
    pub card: u16,
    pub seen_by: Seat,
    /// Set when the rules reveal the card to everyone.
    pub revealed: bool,
    /// Where in the history the card was dealt (the index of its chance step).
    #[serde(default)]
    pub at: u32,
}

/// A die rolled so that only one seat saw it (`roll_secret`): its face is
/// the history's step `at`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct SecretRoll {
    pub seen_by: Seat,
    pub at: u32,
    /// Set when the rules reveal it to everyone (`reveal_secrets`).
    pub revealed: bool,
}

/// A decision only its seat knows until the rules reveal it (a step
/// declared `secret = true`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct SecretDecision {
    pub seat: Seat,
    /// The index of the decision in the history.
    pub at: u32,
    /// Set when the rules reveal it (`reveal_secrets`).
    pub revealed: bool,
}

/// One step of a game's history.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum Step {
    Decision(Action),
    Chance(Outcome),
}

/// The steps that led to a state: a persistent list, so that cloning a
/// state (as search does constantly) costs nothing for the history.
///
/// The list is made of chunks of up to [`CHUNK`] steps. A step goes into
/// the newest chunk when this history alone holds it (a chunk another
/// history shares is never changed), else into a new chunk: a game played
/// on one state allocates once per [`CHUNK`] steps, not once per step.
#[derive(Clone, Debug, Default)]
pub struct History {
    head: Option<std::rc::Rc<HistoryNode>>,
    len: usize,
    /// Set by [`State::forget_history`]: steps are counted, not kept.
    forgotten: bool,
}

/// Steps per chunk of a [`History`].
const CHUNK: usize = 8;

#[derive(Debug)]
struct HistoryNode {
    /// Oldest first.
    steps: smallvec::SmallVec<[Step; CHUNK]>,
    prev: Option<std::rc::Rc<HistoryNode>>,
}

impl History {
    /// Counts a step, and keeps it unless the history is forgotten (the
    /// count alone inlines into playouts, which forget theirs).
    #[inline]
    pub fn push(&mut self, step: Step) {
        self.len += 1;
        if !self.forgotten {
            self.keep(step);
        }
    }

    // Out of line: playouts forget their history, and `push` inlines into
    // every step of theirs.
    #[inline(never)]
    fn keep(&mut self, step: Step) {
        if let Some(node) = self.head.as_mut().and_then(std::rc::Rc::get_mut) {
            if node.steps.len() < CHUNK {
                node.steps.push(step);
                return;
            }
        }
        let prev = self.head.take();
        let mut steps = smallvec::SmallVec::new();
        steps.push(step);
        self.head = Some(std::rc::Rc::new(HistoryNode { steps, prev }));
    }

    /// False for the history of a state that forgot it
    /// ([`State::forget_history`]): it knows how many steps led here, not
    /// which.
    pub fn is_kept(&self) -> bool {
        !self.forgotten
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The steps taken since `earlier`, oldest first, when this history
    /// continues that very one (a state played on from a clone of it:
    /// they share its newest chunk); none otherwise, or when either was
    /// forgotten. Equal steps in another game do not count as the same:
    /// only the shared list does, so a search does not mistake another
    /// game for the one it searched.
    pub fn since(&self, earlier: &History) -> Option<Vec<Step>> {
        if self.forgotten || earlier.forgotten || self.len < earlier.len {
            return None;
        }
        let mut need = self.len - earlier.len;
        let mut out = Vec::with_capacity(need);
        let mut node = self.head.as_ref();
        while need > 0 {
            let n = node?;
            // A shared chunk is never added to, so a continuation holds
            // `earlier`'s newest chunk whole: ending inside a chunk means
            // another list.
            if n.steps.len() > need {
                return None;
            }
            out.extend(n.steps.iter().rev());
            need -= n.steps.len();
            node = n.prev.as_ref();
        }
        // Every game continues an empty history (its first decision came
        // before any step): the caller knows what it asked about then.
        let same = match (node, earlier.head.as_ref()) {
            (Some(a), Some(b)) => std::rc::Rc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        out.reverse();
        same.then_some(out)
    }

    /// The steps, oldest first (none if the history was forgotten).
    pub fn to_vec(&self) -> Vec<Step> {
        let mut out = Vec::with_capacity(self.len);
        let mut node = self.head.as_deref();
        while let Some(n) = node {
            out.extend(n.steps.iter().rev());
            node = n.prev.as_deref();
        }
        out.reverse();
        out
    }
}

impl Drop for History {
    // Unlink iteratively: a long game's list must not overflow the stack.
    fn drop(&mut self) {
        let mut node = self.head.take();
        while let Some(rc) = node {
            match std::rc::Rc::try_unwrap(rc) {
                Ok(mut n) => node = n.prev.take(),
                Err(_) => break,
            }
        }
    }
}

/// A place in a [`History`], walking from the newest step to the oldest:
/// a chunk and how many of its steps are still ahead.
#[derive(Clone, Copy)]
struct Cursor<'a> {
    node: Option<&'a std::rc::Rc<HistoryNode>>,
    left: usize,
}

impl<'a> Cursor<'a> {
    fn at_newest(h: &'a History) -> Cursor<'a> {
        let node = h.head.as_ref();
        Cursor {
            node,
            left: node.map_or(0, |n| n.steps.len()),
        }
    }

    /// The next older step, moving past it.
    fn next(&mut self) -> Option<Step> {
        while self.left == 0 {
            let n = self.node?.prev.as_ref();
            self.node = n;
            self.left = n?.steps.len();
        }
        self.left -= 1;
        Some(self.node?.steps[self.left])
    }
}

impl PartialEq for History {
    /// Step by step from the newest, without copying either list; two
    /// histories that reach a shared chunk (a clone and its original) at
    /// the same place are equal from there on.
    fn eq(&self, other: &Self) -> bool {
        if self.len != other.len || self.forgotten != other.forgotten {
            return false;
        }
        let (mut a, mut b) = (Cursor::at_newest(self), Cursor::at_newest(other));
        loop {
            if let (Some(x), Some(y)) = (a.node, b.node) {
                if std::rc::Rc::ptr_eq(x, y) && a.left == b.left {
                    return true;
                }
            }
            match (a.next(), b.next()) {
                (None, None) => return true,
                (Some(x), Some(y)) if x == y => {}
                _ => return false,
            }
        }
    }
}

impl Serialize for History {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_vec().serialize(s)
    }
}

impl<'de> Deserialize<'de> for History {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let steps = Vec::<Step>::deserialize(d)?;
        let mut h = History::default();
        for s in steps {
            h.push(s);
        }
        Ok(h)
    }
}

/// [`Status`] with a default, so that [`Core`] can derive `Default`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct StatusCell(pub Status);

impl Default for StatusCell {
    fn default() -> Self {
        StatusCell(Status::Ongoing)
    }
}

impl Core {
    pub fn status(&self) -> Status {
        self.status.0
    }

    #[inline]
    pub fn is_terminal(&self) -> bool {
        self.status.0 != Status::Ongoing
    }

    #[inline]
    pub fn in_play(&self) -> usize {
        self.out.iter().filter(|o| !**o).count()
    }

    /// Whether anything is hidden from `viewer` (None: a spectator): a card
    /// dealt in secret to another seat, or another seat's secret decision,
    /// that has not been revealed.
    pub fn hides_from(&self, viewer: Option<Seat>) -> bool {
        self.secrets.iter().any(|s| !s.revealed && Some(s.seen_by) != viewer)
            || self
                .secret_rolls
                .iter()
                .any(|r| !r.revealed && Some(r.seen_by) != viewer)
            || self
                .secret_decisions
                .iter()
                .any(|d| !d.revealed && Some(d.seat) != viewer)
    }

    /// The lowest seat still to decide in the current round, if any.
    pub fn next_in_round(&self) -> Option<Seat> {
        (self.round != 0).then(|| self.round.trailing_zeros() as Seat)
    }
}

/// The seat after `from` that is still in play, going round the table
/// (`from` itself last); none when every seat is out.
pub(crate) fn next_in_play(out: &[bool], from: usize) -> Option<usize> {
    let n = out.len();
    let mut seat = if from < n { from } else { from % n.max(1) };
    for _ in 0..n {
        seat += 1;
        if seat == n {
            seat = 0;
        }
        if !out[seat] {
            return Some(seat);
        }
    }
    None
}

/// Who must act next.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ToMove {
    Decision(Seat),
    Chance,
    Terminal,
}

/// A complete game state: clone it freely to explore; save and load it
/// with `Game::save_state` and `Game::load_state`. `clone_from` into a
/// scratch state reuses its allocations.
#[derive(Debug)]
pub struct State {
    pub core: Box<Core>,
    /// The rule set's own data, owned by its scripts.
    pub data: Data,
    /// Every decision and chance outcome since setup began.
    pub history: History,
}

impl Clone for State {
    fn clone(&self) -> Self {
        State {
            core: self.core.clone(),
            data: self.data.clone(),
            history: self.history.clone(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        self.core.clone_from(&source.core);
        self.data.clone_from(&source.data);
        self.history.clone_from(&source.history);
    }
}

impl State {
    #[inline]
    pub fn to_move(&self) -> ToMove {
        if self.core.is_terminal() {
            ToMove::Terminal
        } else if self.core.chance.is_some() {
            ToMove::Chance
        } else {
            match self.core.actor {
                Some(seat) => ToMove::Decision(seat),
                None => ToMove::Terminal,
            }
        }
    }

    #[inline]
    pub fn is_terminal(&self) -> bool {
        self.core.is_terminal()
    }

    /// Stops keeping the steps that lead to this state (they are still
    /// counted): for throwaway states, such as a random playout's or a
    /// search's rollout, that will never be saved, recorded or
    /// determinized. Keeping a step costs an allocation.
    pub fn forget_history(&mut self) {
        self.history = History {
            head: None,
            len: self.history.len,
            forgotten: true,
        };
    }

    pub fn status(&self) -> Status {
        self.core.status()
    }

    /// Final payoff per seat: the seats' scores when the variant declares
    /// `[scores]`, else 1 to the winner and -1 to the others, 0 for a draw;
    /// 0 for everyone in an unfinished game.
    pub fn returns(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.core.seats);
        self.returns_into(&mut out);
        out
    }

    /// [`State::returns`] appended to `out`, allocating nothing: the search
    /// scores every iteration with it.
    pub fn returns_into(&self, out: &mut Vec<f64>) {
        let seats = self.core.seats;
        match self.core.status() {
            Status::Ongoing => out.extend(std::iter::repeat_n(0.0, seats)),
            _ if !self.core.scores.is_empty() => out.extend(self.core.scores.iter().map(|&s| s as f64)),
            Status::Won(w) => out.extend((0..seats).map(|s| if s == w { 1.0 } else { -1.0 })),
            Status::Draw => out.extend(std::iter::repeat_n(0.0, seats)),
        }
    }

    /// Structural equality of two states, script data included.
    ///
    /// Script data has no `PartialEq`, so it is compared through its JSON
    /// form; this is for tests and checks, not the hot path.
    pub fn same_as(&self, other: &State) -> bool {
        self.core == other.core && self.history == other.history && self.data.same_as(&other.data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(steps: &[Step]) -> History {
        let mut h = History::default();
        for s in steps {
            h.push(*s);
        }
        h
    }

    #[test]
    fn histories_are_equal_step_by_step_whether_or_not_they_share_nodes() {
        let steps = [
            Step::Chance(Outcome::Face(3)),
            Step::Decision(Action::new(1, &[2, 5])),
            Step::Chance(Outcome::Card { deck: 0, card: 4 }),
        ];
        let a = history(&steps);
        // Built apart (as a loaded state's history is): no shared node.
        assert_eq!(a, history(&steps));
        // A clone shares every node; one step more shares all but one.
        let mut b = a.clone();
        assert_eq!(a, b);
        b.push(Step::Chance(Outcome::Face(1)));
        assert_ne!(a, b);
        let mut c = a.clone();
        c.push(Step::Chance(Outcome::Face(2)));
        assert_ne!(b, c, "same length and a shared tail, different last step");
        // A difference at the oldest step, below equal newer ones.
        let mut other = steps;
        other[0] = Step::Chance(Outcome::Face(4));
        assert_ne!(a, history(&other));
        // A forgotten history of the same length is not the same history.
        let mut f = history(&[]);
        f.forgotten = true;
        for s in &steps {
            f.push(*s);
        }
        assert_ne!(a, f);
        assert_eq!(f, f.clone());
    }

    /// Chunks: a clone taken mid-chunk keeps its steps while the original
    /// and the clone both go on, across chunk boundaries.
    #[test]
    fn a_shared_chunk_is_never_added_to() {
        let step = |k: u32| Step::Chance(Outcome::Face(k));
        let steps: Vec<Step> = (0..(CHUNK as u32 + 3)).map(step).collect();
        let mut a = history(&steps);
        assert_eq!(a.to_vec(), steps);
        let kept = a.clone();
        let mut b = a.clone();
        for k in 100..(100 + 2 * CHUNK as u32) {
            a.push(step(k));
            b.push(step(k + 1000));
        }
        assert_eq!(kept.to_vec(), steps, "the clone's steps did not change");
        assert_eq!(&a.to_vec()[..steps.len()], &steps[..]);
        assert_eq!(a.to_vec().len(), steps.len() + 2 * CHUNK);
        let since_a = a.since(&kept).expect("a continues the clone");
        assert_eq!(since_a, (100..(100 + 2 * CHUNK as u32)).map(step).collect::<Vec<_>>());
        assert_eq!(b.since(&kept).map(|s| s[0]), Some(step(1100)));
        assert_eq!(a.since(&b), None);
        assert_ne!(a, b);
        // Equal to the same steps built apart, chunked differently.
        let mut apart = history(&steps[..3]);
        let _hold = apart.clone(); // the next steps start a new chunk
        for s in a.to_vec().into_iter().skip(3) {
            apart.push(s);
        }
        assert_eq!(a, apart);
        assert_eq!(apart.to_vec(), a.to_vec());
        assert_eq!(kept, history(&steps));
    }

    #[test]
    fn a_history_knows_the_steps_since_the_one_it_continues() {
        let steps = [Step::Chance(Outcome::Face(3)), Step::Decision(Action::new(1, &[2, 5]))];
        let a = history(&steps);
        let mut b = a.clone();
        assert_eq!(b.since(&a), Some(vec![]));
        b.push(Step::Decision(Action::new(0, &[1])));
        b.push(Step::Chance(Outcome::Face(6)));
        assert_eq!(
            b.since(&a),
            Some(vec![
                Step::Decision(Action::new(0, &[1])),
                Step::Chance(Outcome::Face(6))
            ])
        );
        // Equal steps built apart are another game's, not a continuation.
        assert_eq!(history(&steps).since(&a), None);
        // Nor is a shorter history, or a forgotten one; every history
        // continues the empty one.
        assert_eq!(a.since(&b), None);
        assert_eq!(b.since(&History::default()).map(|s| s.len()), Some(4));
        let mut f = b.clone();
        f.forgotten = true;
        assert_eq!(f.since(&a), None);
    }
}
