//! Bots: automatic players that pick among the legal actions.
//!
//! A bot must not cheat: where a seat cannot see part of the state (a card
//! dealt to another seat, another seat's secret decision), the greedy and
//! MCTS bots decide on states drawn with [`Game::determinize`], which
//! depend only on what that seat knows.

use rulesmith_core::error::GameError;
use rulesmith_core::game::Game;
use rulesmith_core::rng::{self, GameRng};
use rulesmith_core::state::{Action, Seat, State, ToMove};
use std::time::{Duration, Instant};

/// A player that decides by itself.
pub trait Bot {
    /// A short name for reports (`random`, `greedy`, `mcts:400`, ...).
    fn name(&self) -> &str;

    /// Index into `legal` of the chosen action. `legal` is never empty and
    /// holds the legal actions of the seat to move in `state`.
    ///
    /// An error is a failure of the variant's own functions the bot relies
    /// on (its `evaluate`): a bot never hides one by scoring the position 0,
    /// so a broken evaluation stops the game at its first failing call.
    fn choose(&mut self, game: &Game, state: &State, legal: &[Action]) -> Result<usize, GameError>;
}

/// Builds a bot from its name: `random`, `greedy`, `mcts`, `mcts:N` (N
/// playouts per decision) or `mcts:Nms` (a time budget; not reproducible).
pub fn from_spec(spec: &str, seed: u64) -> Result<Box<dyn Bot>, String> {
    let (kind, arg) = spec.split_once(':').unwrap_or((spec, ""));
    match (kind, arg) {
        ("random", "") => Ok(Box::new(RandomBot::new(seed))),
        ("greedy", "") => Ok(Box::new(GreedyBot::new(seed))),
        ("mcts", "") => Ok(Box::new(MctsBot::new(
            seed,
            Budget::Playouts(MctsBot::DEFAULT_PLAYOUTS),
        ))),
        ("mcts", a) => {
            let budget = match a.strip_suffix("ms") {
                Some(ms) => ms
                    .parse()
                    .ok()
                    .filter(|m| *m > 0)
                    .map(|m| Budget::Time(Duration::from_millis(m))),
                None => a.parse().ok().filter(|n| *n > 0).map(Budget::Playouts),
            };
            budget
                .map(|b| Box::new(MctsBot::new(seed, b)) as Box<dyn Bot>)
                .ok_or_else(|| format!("bot '{spec}': expected mcts:N (playouts) or mcts:Nms (milliseconds)"))
        }
        _ => Err(format!(
            "unknown bot '{spec}' (expected random, greedy, mcts, mcts:N or mcts:Nms)"
        )),
    }
}

/// The states a bot may reason about (see [`crate::worlds`]): never the
/// true state while something is hidden from the seat.
fn worlds(game: &Game, state: &State, seat: Seat, rng: &mut GameRng, count: usize) -> Result<Vec<State>, GameError> {
    crate::worlds::worlds(game, state, seat, rng, count)
}

/// Plays out chance events until a decision or the end (false if the
/// rules fail, or keep rolling past the engine's bound). `state` is a
/// throwaway copy: after a failure it is half-changed and must not be scored.
fn resolve_chance(game: &Game, state: &mut State, rng: &mut GameRng) -> bool {
    let mut drawn = 0;
    while state.to_move() == ToMove::Chance {
        drawn += 1;
        if drawn > crate::playout::chance_bound(0) {
            return false;
        }
        let Some(o) = game.sample_outcome(state, rng) else {
            return false;
        };
        if game.apply_outcome_scratch(state, o).is_err() {
            return false;
        }
    }
    true
}

/// Uniform over the legal actions; it looks at nothing else, so it can
/// never peek at hidden information.
pub struct RandomBot {
    rng: GameRng,
}

impl RandomBot {
    pub fn new(seed: u64) -> Self {
        RandomBot { rng: rng::seeded(seed) }
    }
}

impl Bot for RandomBot {
    fn name(&self) -> &str {
        "random"
    }

    fn choose(&mut self, _game: &Game, _state: &State, legal: &[Action]) -> Result<usize, GameError> {
        Ok(rng::below(&mut self.rng, legal.len() as u32) as usize)
    }
}

/// One-ply lookahead on the variant's evaluate function: each action is
/// applied, chance after it sampled a few times, and the results averaged.
/// When the seat cannot see everything, each sample is taken in a world of
/// its own, drawn from the seat's view: the action is judged against what
/// the others might hold or have decided, not against one guess.
pub struct GreedyBot {
    rng: GameRng,
    /// Samples of the chance events (and hidden worlds) that follow an action.
    samples: usize,
}

impl GreedyBot {
    pub fn new(seed: u64) -> Self {
        GreedyBot {
            rng: rng::seeded(seed),
            samples: 6,
        }
    }

    fn value(&mut self, game: &Game, worlds: &[State], a: Action, me: Seat) -> Result<f64, GameError> {
        let mut total = 0.0;
        let mut n = 0;
        for k in 0..self.samples {
            let mut s = worlds[k % worlds.len()].clone();
            if game.apply_scratch(&mut s, a).is_err() {
                return Ok(f64::NEG_INFINITY);
            }
            let random = s.to_move() == ToMove::Chance;
            if !resolve_chance(game, &mut s, &mut self.rng) {
                return Ok(f64::NEG_INFINITY);
            }
            total += if s.is_terminal() {
                s.returns()[me] * 1000.0
            } else {
                game.evaluate(&s, me)?
            };
            n += 1;
            if !random && worlds.len() == 1 {
                break; // no chance after this action: one look is exact
            }
        }
        Ok(total / n as f64)
    }
}

impl Bot for GreedyBot {
    fn name(&self) -> &str {
        "greedy"
    }

    fn choose(&mut self, game: &Game, state: &State, legal: &[Action]) -> Result<usize, GameError> {
        let ToMove::Decision(me) = state.to_move() else {
            return Ok(0);
        };
        let worlds = worlds(game, state, me, &mut self.rng, self.samples)?;
        let mut best = Vec::new();
        let mut best_value = f64::NEG_INFINITY;
        for (i, &a) in legal.iter().enumerate() {
            let v = self.value(game, &worlds, a, me)?;
            if v > best_value + 1e-9 {
                best_value = v;
                best.clear();
                best.push(i);
            } else if (v - best_value).abs() <= 1e-9 {
                best.push(i);
            }
        }
        if best.is_empty() {
            return Ok(0);
        }
        Ok(best[rng::below(&mut self.rng, best.len() as u32) as usize])
    }
}

/// How much search an MCTS decision gets.
#[derive(Clone, Copy, Debug)]
pub enum Budget {
    Playouts(u32),
    /// Wall-clock time: stronger on fast machines, and not reproducible.
    Time(Duration),
}

/// Information-set Monte Carlo tree search, open loop: every iteration
/// plays in one of several worlds drawn from the bot's own view; the tree is
/// keyed by decisions only, and chance is sampled afresh each time.
///
/// Leaves are scored with the variant's evaluate function rather than by
/// random playouts (random play misjudges most positions of a tactical
/// game). A node, when first reached, gets a child per action, each scored
/// by one look after it and counted as one visit, and is itself worth its
/// best child: the search refines a two-ply greedy judgment instead of
/// spreading a small budget over every move. Selection is UCB1 on the
/// acting seat's mean reward (max^n for more than two players).
///
/// After a secret decision (a `secret` step), what the other seats decide
/// next cannot depend on it: every secret action of a node leads to one
/// shared child, so the others' replies are judged against all of them at
/// once, as they would be at the table, and not as if they had seen it
/// (each action keeps its own statistics on its edge).
pub struct MctsBot {
    rng: GameRng,
    budget: Budget,
    name: String,
    /// Worlds drawn per decision.
    pub worlds: usize,
    /// Random decisions played after the tree before scoring (0: none).
    pub rollout: usize,
    /// UCB1 exploration constant (rewards lie in -1..=1).
    pub exploration: f64,
    /// The search tree, emptied and refilled every decision: its vectors
    /// are kept so that a decision allocates nothing once warm.
    tree: Tree,
    /// Scratch states the search copies into (`clone_from` reuses their
    /// allocations): one per iteration's walk, one per looked-at action.
    walk: Option<State>,
    look: Option<State>,
}

/// The tree of one decision, flat: nodes, their edges (a node's edges are
/// contiguous: all are made when it is expanded), and every edge's reward
/// sums, `seats` numbers per edge.
#[derive(Default)]
struct Tree {
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    totals: Vec<f64>,
    seats: usize,
}

struct Node {
    /// Visits through any edge into it (and the priors of those edges).
    visits: f64,
    /// Its edges: `edges[first..first + count]`.
    first: usize,
    count: usize,
    expanded: bool,
}

/// An action out of a node: its statistics, and the node it leads to
/// (shared by the secret actions of a node).
struct Edge {
    action: Action,
    child: usize,
    visits: f64,
}

impl Tree {
    fn reset(&mut self, seats: usize) {
        self.nodes.clear();
        self.edges.clear();
        self.totals.clear();
        self.seats = seats;
        self.add_node();
    }

    fn add_node(&mut self) -> usize {
        self.nodes.push(Node {
            visits: 0.0,
            first: 0,
            count: 0,
            expanded: false,
        });
        self.nodes.len() - 1
    }

    fn edges(&self, node: usize) -> std::ops::Range<usize> {
        let n = &self.nodes[node];
        n.first..n.first + n.count
    }

    /// Reward sums of edge `e`, per seat.
    fn totals(&self, e: usize) -> &[f64] {
        &self.totals[e * self.seats..(e + 1) * self.seats]
    }

    /// Mean reward of edge `e` for seat `p`.
    fn mean(&self, e: usize, p: Seat) -> f64 {
        self.totals[e * self.seats + p] / self.edges[e].visits.max(1.0)
    }
}

/// A scratch state holding a copy of `from`, reusing `slot`'s allocations.
fn copy_into(slot: &mut Option<State>, from: &State) -> State {
    match slot.take() {
        Some(mut s) => {
            s.clone_from(from);
            s
        }
        None => from.clone(),
    }
}

impl MctsBot {
    pub const DEFAULT_PLAYOUTS: u32 = 300;

    pub fn new(seed: u64, budget: Budget) -> Self {
        let name = match budget {
            Budget::Playouts(n) if n == Self::DEFAULT_PLAYOUTS => "mcts".to_string(),
            Budget::Playouts(n) => format!("mcts:{n}"),
            Budget::Time(d) => format!("mcts:{}ms", d.as_millis()),
        };
        MctsBot {
            rng: rng::seeded(seed),
            budget,
            name,
            worlds: 8,
            rollout: 0,
            exploration: 0.5,
            tree: Tree::default(),
            walk: None,
            look: None,
        }
    }

    /// Rewards in -1..=1 for every seat, written into `out`. With two seats
    /// the evaluation is taken as zero-sum (as the game's own returns are):
    /// one script call, unless the variant says its `evaluate` is not
    /// (`[output] evaluate_zero_sum = false`).
    fn rewards(&self, game: &Game, s: &State, out: &mut Vec<f64>) -> Result<(), GameError> {
        out.clear();
        if s.is_terminal() {
            out.extend(s.returns());
            return Ok(());
        }
        // Squashed into -1..=1 at the variant's scale of a clear lead.
        let variant = game.variant();
        let value = |p: Seat| game.evaluate(s, p).map(|v| (v / variant.evaluate_scale).tanh());
        if s.core.seats == 2 && variant.evaluate_zero_sum {
            let v = value(0)?;
            out.extend([v, -v]);
            return Ok(());
        }
        for p in 0..s.core.seats {
            out.push(value(p)?);
        }
        Ok(())
    }

    /// Gives `node` an edge per action, each scored by one look after it.
    /// (Progressive widening of wide nodes was tried: cheaper, but it hid the
    /// opponent's best replies and lost to the greedy bot.) Secret actions
    /// after which another seat decides share one child.
    fn expand(&mut self, game: &Game, node: usize, s: &State, legal: &[Action]) -> Result<(), GameError> {
        let seats = s.core.seats;
        let secret = game.decision_is_secret(s);
        let mover = s.to_move();
        let mut shared: Option<usize> = None;
        let mut reward = Vec::with_capacity(seats);
        self.tree.nodes[node].first = self.tree.edges.len();
        self.tree.nodes[node].count = legal.len();
        for &a in legal {
            let mut t = copy_into(&mut self.look, s);
            let ok = game.apply_scratch(&mut t, a).is_ok() && resolve_chance(game, &mut t, &mut self.rng);
            let visits = if ok { 1.0 } else { 0.0 };
            let scored = if ok {
                self.rewards(game, &t, &mut reward)
            } else {
                Ok(())
            };
            let others_next = ok && matches!(t.to_move(), ToMove::Decision(_)) && t.to_move() != mover;
            self.look = Some(t);
            scored?;
            let tree = &mut self.tree;
            if ok {
                tree.totals.extend_from_slice(&reward);
            } else {
                tree.totals.extend(std::iter::repeat_n(0.0, seats));
            }
            let child = match (secret && others_next, shared) {
                (true, Some(c)) => c,
                (share, _) => {
                    let c = tree.add_node();
                    if share {
                        shared = Some(c);
                    }
                    c
                }
            };
            tree.nodes[child].visits += visits;
            tree.edges.push(Edge {
                action: a,
                child,
                visits,
            });
        }
        self.tree.nodes[node].expanded = true;
        Ok(())
    }
}

impl Bot for MctsBot {
    fn name(&self) -> &str {
        &self.name
    }

    fn choose(&mut self, game: &Game, state: &State, legal: &[Action]) -> Result<usize, GameError> {
        let ToMove::Decision(me) = state.to_move() else {
            return Ok(0);
        };
        if legal.len() == 1 {
            return Ok(0);
        }
        let worlds = worlds(game, state, me, &mut self.rng, self.worlds)?;
        self.tree.reset(state.core.seats);
        let mut buf: Vec<Action> = Vec::new();
        let mut reward: Vec<f64> = Vec::with_capacity(state.core.seats);
        // The edges taken: (node, edge).
        let mut path: Vec<(usize, usize)> = Vec::new();
        let start = Instant::now();
        let mut iteration: u32 = 0;
        loop {
            match self.budget {
                Budget::Playouts(n) if iteration >= n => break,
                Budget::Time(d) if iteration > 0 && start.elapsed() >= d => break,
                _ => {}
            }
            let mut s = copy_into(&mut self.walk, &worlds[iteration as usize % worlds.len()]);
            s.forget_history();
            iteration += 1;
            let outcome = self.iterate(game, &mut s, legal, &mut buf, &mut path, &mut reward);
            self.walk = Some(s);
            let Some(node) = outcome? else { continue };
            let tree = &mut self.tree;
            tree.nodes[0].visits += 1.0;
            for &(_, e) in &path {
                tree.edges[e].visits += 1.0;
                let seats = tree.seats;
                for (t, v) in tree.totals[e * seats..(e + 1) * seats].iter_mut().zip(&reward) {
                    *t += v;
                }
                let child = tree.edges[e].child;
                tree.nodes[child].visits += 1.0;
            }
            let _ = node;
        }
        // The most visited action at the root (ties: the better mean).
        let tree = &self.tree;
        let best = tree
            .edges(0)
            .max_by(|&x, &y| {
                tree.edges[x]
                    .visits
                    .total_cmp(&tree.edges[y].visits)
                    .then(tree.mean(x, me).total_cmp(&tree.mean(y, me)))
            })
            .map(|e| tree.edges[e].action);
        Ok(best.and_then(|a| legal.iter().position(|l| *l == a)).unwrap_or(0))
    }
}

impl MctsBot {
    /// One iteration on `s`, a copy of one world: selection (expanding the
    /// first node reached that has no children), an optional random
    /// rollout, and the rewards to back up, left in `reward` along `path`.
    /// `None` when the walk broke (a failing step leaves `s` half-changed,
    /// so it is not scored).
    #[allow(clippy::too_many_arguments)]
    fn iterate(
        &mut self,
        game: &Game,
        s: &mut State,
        legal: &[Action],
        buf: &mut Vec<Action>,
        path: &mut Vec<(usize, usize)>,
        reward: &mut Vec<f64>,
    ) -> Result<Option<usize>, GameError> {
        path.clear();
        let mut node = 0usize;
        loop {
            if !resolve_chance(game, s, &mut self.rng) {
                return Ok(None);
            }
            let ToMove::Decision(p) = s.to_move() else { break };
            if node == 0 {
                buf.clear();
                buf.extend_from_slice(legal);
            } else if game.legal_actions_into(s, buf).is_err() {
                break;
            }
            if !self.tree.nodes[node].expanded {
                self.expand(game, node, s, buf)?;
                if node != 0 {
                    break; // scored by its best child below: a two-ply look
                }
            }
            let tree = &self.tree;
            let log_n = tree.nodes[node].visits.max(1.0).ln();
            let mut best = None;
            let mut best_score = f64::NEG_INFINITY;
            // Usually this world offers exactly the node's actions, in
            // order; checking each edge against the list is the slow path
            // for worlds that differ.
            let edges = tree.edges(node);
            let same =
                edges.len() == buf.len() && edges.clone().zip(buf.iter()).all(|(e, b)| tree.edges[e].action == *b);
            for e in edges {
                let edge = &tree.edges[e];
                if !same && !buf.contains(&edge.action) {
                    continue; // not available in this world
                }
                let v = edge.visits.max(1.0);
                let score = tree.totals[e * tree.seats + p] / v + self.exploration * (log_n / v).sqrt();
                if score > best_score {
                    best_score = score;
                    best = Some(e);
                }
            }
            let Some(e) = best else { break };
            // `s` is this iteration's own copy: no backup is needed.
            if game.apply_scratch(s, tree.edges[e].action).is_err() {
                return Ok(None);
            }
            path.push((node, e));
            node = tree.edges[e].child;
        }
        // Optional short random playout, then score.
        let mut depth = 0;
        while depth < self.rollout && resolve_chance(game, s, &mut self.rng) {
            if s.is_terminal() {
                break;
            }
            let rng = &mut self.rng;
            let mut picked = false;
            let stepped = game.pick_and_apply_scratch(s, |n| rng::below(rng, n as u32) as usize, |_, _| picked = true);
            match (stepped, picked) {
                (Ok(()), _) => depth += 1,
                // No legal action to pick: score the state as it is.
                (Err(_), false) => break,
                (Err(_), true) => return Ok(None),
            }
        }
        resolve_chance(game, s, &mut self.rng);
        // A node just expanded is worth its best child, for the seat to move there.
        let tree = &self.tree;
        let best = match (s.to_move(), tree.nodes[node].expanded && node != 0) {
            (ToMove::Decision(p), true) => tree
                .edges(node)
                .filter(|&e| tree.edges[e].visits > 0.0)
                .max_by(|&x, &y| tree.mean(x, p).total_cmp(&tree.mean(y, p))),
            _ => None,
        };
        match best {
            Some(b) => {
                let v = tree.edges[b].visits;
                reward.clear();
                reward.extend(tree.totals(b).iter().map(|t| t / v));
            }
            None => self.rewards(game, s, reward)?,
        }
        Ok(Some(node))
    }
}
