//! Information-set Monte Carlo tree search.
//!
//! Every iteration plays in one of several worlds drawn from the bot's own
//! view ([`Game::determinize`]), so the search never peeks. The tree is
//! keyed by decisions only ("open loop"): chance is sampled afresh on every
//! iteration by its probabilities, so a node stands for a sequence of
//! decisions and its statistics average over the dice and cards that may
//! come. Because the legal actions after a chance event (or in another
//! world) may differ, a node's edges grow as new actions appear, and an
//! edge counts how often it was available (ISMCTS's availability counts),
//! which is what its exploration term is measured against.
//!
//! One iteration:
//! 1. **Selection.** From the root, at each decision, an available edge
//!    not yet tried is taken first (one at random); otherwise UCB1 on the
//!    deciding seat's mean reward (max^n for more than two players).
//! 2. **Expansion.** The first untried edge ends the descent: it is added
//!    to the tree, one edge per iteration.
//! 3. **Rollout.** Random decisions (chance by its probabilities) until the
//!    game ends, or until `depth` moves were played (a move is a turn, a
//!    round, or in one long turn a change of seat); there the variant's
//!    `evaluate` scores the state. A variant without `evaluate` plays to
//!    the end by default, so the search needs no hand-written evaluation.
//!    Counting moves rather than decisions lets a rollout finish a move
//!    however many decisions it takes.
//! 4. **Backup.** Every edge of the path adds the rewards (one per seat;
//!    a finished game's true result, or `tanh(evaluate / scale)`). A
//!    variant with `[scores]` scores a finished game by each seat's score
//!    scaled from the declared range to -1..=1, so the search maximizes
//!    the expected score, not the chance of winning.
//!
//! After a secret decision (a `secret` step), what the other seats decide
//! next cannot depend on it: every secret action of a node leads to one
//! shared child, so the others' replies are judged against all of them at
//! once, as they would be at the table, and not as if they had seen it.
//!
//! A turn of many decisions is searched as one: when the bot decides
//! again right after its own decision (only chance between), the subtree
//! under the action it chose becomes the new tree (`reuse`), so its
//! statistics carry over (open loop: they already average over the chance
//! that came). `peek=on` is an analysis bot that searches the true state.
//!
//! `trees=K` splits the budget over K independent trees (each with its own
//! worlds and seed) whose root statistics are summed: root parallelism,
//! reproducible because the split does not depend on how many threads run.

use super::workers::Workers;
use super::{resolve_chance, worlds, Bot, Budget};
use rulesmith_core::error::GameError;
use rulesmith_core::game::Game;
use rulesmith_core::rng::{self, GameRng};
use rulesmith_core::state::{Action, Seat, State, Status, Step, ToMove};
use std::time::Instant;

/// How a leaf is played out before it is scored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rollout {
    /// Uniformly random decisions.
    Random,
    /// No rollout: the leaf itself is scored with `evaluate` (depth 0).
    None,
    /// A cheap policy: each decision draws a few legal actions at random
    /// ([`GREEDY_ROLLOUT_DRAWS`]) and takes the one `evaluate` likes best
    /// for the seat deciding, one decision ahead. Replies that punish a
    /// careless move, at a few evaluations per step.
    Greedy,
}

/// Actions a `rollout=greedy` decision compares.
pub const GREEDY_ROLLOUT_DRAWS: usize = 3;

/// How far a rollout goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// The variant's `[output] evaluate_depth` moves (1 unless it says)
    /// when it has an `evaluate`, else to the end.
    Auto,
    /// Until this many moves were played (turns, rounds, or changes of
    /// the deciding seat within one long turn).
    Moves(u32),
    /// To the end of the game.
    End,
}

/// Whether a node with many actions considers them all at once, or only
/// its best few by `evaluate`, more as it is visited more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Widen {
    /// On when the variant has an `evaluate`.
    Auto,
    On,
    Off,
}

/// The search's settings, as a bot spec's options set them.
#[derive(Clone, Debug, PartialEq)]
pub struct MctsConfig {
    pub budget: Budget,
    pub rollout: Rollout,
    pub depth: Depth,
    /// UCB1's exploration constant (rewards lie in -1..=1).
    pub exploration: f64,
    /// Worlds drawn per decision when the seat cannot see everything.
    pub worlds: usize,
    /// Independent trees the budget is split over (root parallelism).
    pub trees: usize,
    /// Threads the trees run on (at most `trees`); the result does not
    /// depend on it.
    pub threads: usize,
    /// Progressive widening on the variant's `evaluate`.
    pub widen: Widen,
    /// Whether a decision that follows the bot's own last one (the same
    /// seat again, after only chance) starts from the subtree the last
    /// search grew under the chosen action.
    pub reuse: bool,
    /// Analysis only, never fair play: the search sees the true state,
    /// hidden cards, dice and commitments included, instead of worlds
    /// drawn from its seat's view. Against the fair search it measures
    /// what hidden information is worth, and it bounds what any fair bot
    /// can score in a game.
    pub peek: bool,
}

impl Default for MctsConfig {
    fn default() -> Self {
        MctsConfig {
            budget: Budget::Playouts(MctsConfig::DEFAULT_PLAYOUTS),
            rollout: Rollout::Random,
            depth: Depth::Auto,
            exploration: 1.0,
            worlds: 8,
            trees: 1,
            threads: 1,
            widen: Widen::Auto,
            reuse: true,
            peek: false,
        }
    }
}

impl MctsConfig {
    /// Iterations of the plain `mcts` spec. 1000 rather than 300: clearly
    /// stronger against greedy in the shipped games with turns of many
    /// decisions, while a decision stays well under 50 ms in the others
    /// (the figures: docs/simulation.md, "How strong, and at what cost").
    pub const DEFAULT_PLAYOUTS: u32 = 1000;
    /// Decisions a rollout plays at most, whatever its depth: a game that
    /// goes on longer is scored where it stands.
    pub const MAX_ROLLOUT: u32 = 5_000;

    /// The settings of a spec's parts after `mcts`: at most one budget (`N`
    /// or `Nms`), then options `KEY=VALUE`.
    pub fn parse(parts: &[&str]) -> Result<MctsConfig, String> {
        let mut config = MctsConfig::default();
        let mut budget_seen = false;
        for part in parts {
            match part.split_once('=') {
                Some((key, value)) => config.set(key.trim(), value.trim())?,
                None if !budget_seen => {
                    budget_seen = true;
                    config.budget = parse_budget(part)?;
                }
                None => return Err(format!("'{part}': the budget is given once; options are KEY=VALUE")),
            }
        }
        Ok(config)
    }

    /// Sets one option from its text.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let whole = |what: &str| -> Result<u32, String> {
            value
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{key}={value}: expected {what}"))
        };
        match key {
            "rollout" => {
                self.rollout = match value {
                    "random" => Rollout::Random,
                    "none" => Rollout::None,
                    "greedy" => Rollout::Greedy,
                    _ => return Err(format!("rollout={value}: expected random, greedy or none")),
                }
            }
            "depth" => {
                self.depth = match value {
                    "end" => Depth::End,
                    "auto" => Depth::Auto,
                    _ => Depth::Moves(value.parse().map_err(|_| {
                        format!("depth={value}: expected a whole number of moves (0 or more), auto or end")
                    })?),
                }
            }
            "c" => {
                self.exploration = value
                    .parse::<f64>()
                    .ok()
                    .filter(|c| c.is_finite() && *c >= 0.0)
                    .ok_or_else(|| format!("c={value}: expected a number 0 or more (the exploration constant)"))?
            }
            "worlds" => self.worlds = whole("a whole number of worlds, 1 or more")? as usize,
            "trees" => self.trees = whole("a whole number of trees, 1 or more")? as usize,
            "threads" => self.threads = whole("a whole number of threads, 1 or more")? as usize,
            "widen" => {
                self.widen = match value {
                    "auto" => Widen::Auto,
                    "on" => Widen::On,
                    "off" => Widen::Off,
                    _ => return Err(format!("widen={value}: expected auto, on or off")),
                }
            }
            "reuse" | "peek" => {
                let on = match value {
                    "on" => true,
                    "off" => false,
                    _ => return Err(format!("{key}={value}: expected on or off")),
                };
                if key == "reuse" {
                    self.reuse = on
                } else {
                    self.peek = on
                }
            }
            _ => {
                return Err(format!(
                    "unknown option '{key}' (expected rollout, depth, c, worlds, trees, threads, widen, reuse or peek)"
                ))
            }
        }
        Ok(())
    }

    /// Whether the search widens progressively in `game` (it needs an
    /// `evaluate` to rank the actions by).
    fn widens(&self, game: &Game) -> bool {
        let ranked = game.variant().evaluate.is_some();
        match self.widen {
            Widen::Auto | Widen::On => ranked,
            Widen::Off => false,
        }
    }

    /// The rollout's depth for `game`: `Auto` resolved, `rollout=none` as 0.
    fn depth_for(&self, game: &Game) -> Depth {
        match (self.rollout, self.depth) {
            (Rollout::None, _) => Depth::Moves(0),
            (_, Depth::Auto) if game.variant().evaluate.is_some() => Depth::Moves(game.variant().evaluate_depth),
            (_, Depth::Auto) => Depth::End,
            (_, d) => d,
        }
    }
}

fn parse_budget(text: &str) -> Result<Budget, String> {
    let budget = match text.strip_suffix("ms") {
        Some(ms) => ms
            .parse::<u64>()
            .ok()
            .filter(|m| *m > 0)
            .map(|m| Budget::Time(std::time::Duration::from_millis(m))),
        None => text.parse::<u32>().ok().filter(|n| *n > 0).map(Budget::Playouts),
    };
    budget.ok_or_else(|| {
        format!(
            "'{text}': expected a budget N (iterations, at least 1) or Nms (milliseconds, at least 1), \
             e.g. mcts:200 or mcts:50ms, or an option KEY=VALUE"
        )
    })
}

/// The MCTS bot; see the module's documentation.
pub struct MctsBot {
    rng: GameRng,
    config: MctsConfig,
    name: String,
    search: Search,
    /// Threads for `threads=N`, started on first use.
    workers: Option<Workers>,
    /// Decisions searched on loose worlds (see [`Bot::loose_decisions`]).
    loose: u64,
    /// Per legal action of the last decision searched, who wins for
    /// certain after it (seat + 1; 0 when not proven).
    won_by: Vec<u8>,
}

impl MctsBot {
    pub const DEFAULT_PLAYOUTS: u32 = MctsConfig::DEFAULT_PLAYOUTS;

    /// The default search with `budget`.
    pub fn new(seed: u64, budget: Budget) -> Self {
        let name = match budget {
            Budget::Playouts(n) if n == Self::DEFAULT_PLAYOUTS => "mcts".to_string(),
            Budget::Playouts(n) => format!("mcts:{n}"),
            Budget::Time(d) => format!("mcts:{}ms", d.as_millis()),
        };
        let config = MctsConfig {
            budget,
            ..MctsConfig::default()
        };
        MctsBot::with_config(seed, config, name)
    }

    pub fn with_config(seed: u64, config: MctsConfig, name: String) -> Self {
        MctsBot {
            rng: rng::seeded(seed),
            config,
            name,
            search: Search::default(),
            workers: None,
            loose: 0,
            won_by: Vec::new(),
        }
    }

    pub fn config(&self) -> &MctsConfig {
        &self.config
    }

    /// Root statistics of one decision: per legal action, its visits and its
    /// summed reward for the seat to move, summed over the trees in tree
    /// order (so the same whether the trees ran on one thread or many).
    /// Public for tests and for callers that want the search's judgment,
    /// not only its choice.
    pub fn root_statistics(
        &mut self,
        game: &Game,
        state: &State,
        legal: &[Action],
    ) -> Result<Vec<(f64, f64)>, GameError> {
        let ToMove::Decision(me) = state.to_move() else {
            return Ok(vec![(0.0, 0.0); legal.len()]);
        };
        let trees = self.config.trees.max(1);
        // Each tree's own generator, drawn from the bot's: the same trees
        // whatever runs them.
        let base = rng::below(&mut self.rng, u32::MAX) as u64;
        let seeds: Vec<u64> = (0..trees).map(|t| rng::derive(base, t as u64)).collect();
        let running = self.config.threads.clamp(1, trees) as u32;
        let settings = TreeSettings {
            budget: match self.config.budget {
                Budget::Playouts(n) => Budget::Playouts((n / trees as u32).max(1)),
                Budget::Time(d) => Budget::Time(d * running / trees as u32),
            },
            depth: self.config.depth_for(game),
            exploration: self.config.exploration,
            worlds: self.config.worlds,
            widen: self.config.widens(game),
            peek: self.config.peek,
            greedy_rollout: self.config.rollout == Rollout::Greedy && game.variant().evaluate.is_some(),
        };
        // One tree on this thread can go on from the last decision's.
        let kept = trees == 1 && running == 1 && self.config.reuse && self.search.continue_from(state, me);
        let parts = match self.workers(game, running as usize) {
            Some(workers) => workers.run(game, state, legal, me, &settings, &seeds)?,
            None => seeds
                .iter()
                .map(|&seed| tree_statistics(&mut self.search, game, state, legal, me, &settings, seed, kept))
                .collect::<Result<Vec<_>, _>>()?,
        };
        let mut stats = vec![(0.0, 0.0); legal.len()];
        self.loose += u64::from(parts.iter().any(|p| p.loose));
        // Proofs are sound in every tree that made one.
        self.won_by = vec![0; legal.len()];
        for part in &parts {
            for (w, &x) in self.won_by.iter_mut().zip(&part.won_by) {
                if *w == 0 {
                    *w = x;
                }
            }
        }
        for part in parts {
            for (sum, x) in stats.iter_mut().zip(part.edges) {
                sum.0 += x.0;
                sum.1 += x.1;
            }
        }
        Ok(stats)
    }

    /// Per legal action of the last decision searched, the seat that wins
    /// for certain after it, when the search proved one (MCTS-Solver, in
    /// games with one world and no scores: see `Search::solve`).
    pub fn proven_winners(&self) -> Vec<Option<Seat>> {
        self.won_by.iter().map(|&w| (w > 0).then(|| w as Seat - 1)).collect()
    }

    /// The iterations the tree of the bot's last decision holds at its
    /// root: its budget, plus what it kept from the decision before when
    /// it went on from it (one tree on one thread; see `reuse`).
    pub fn last_root_visits(&self) -> f64 {
        let tree = &self.search.tree;
        let mut total = 0.0;
        let mut e = tree.nodes.first().map_or(NONE, |n| n.first);
        while e != NONE {
            total += tree.stats[e as usize].visits;
            e = tree.edges[e as usize].next;
        }
        total
    }

    /// The bot's worker threads when `threads` > 1 and the rules can be
    /// rebuilt on them, started on first use.
    fn workers(&mut self, game: &Game, threads: usize) -> Option<&Workers> {
        if threads <= 1 {
            return None;
        }
        if self.workers.is_none() {
            self.workers = Some(Workers::start(game.forker()?, threads));
        }
        self.workers.as_ref()
    }
}

/// One tree's search of a decision: per legal action, its visits and
/// summed reward for `me`. `kept`: the search's tree already stands for
/// this decision (see [`Search::continue_from`]) and grows on; else it
/// starts empty.
#[allow(clippy::too_many_arguments)]
pub(super) fn tree_statistics(
    search: &mut Search,
    game: &Game,
    state: &State,
    legal: &[Action],
    me: Seat,
    settings: &TreeSettings,
    seed: u64,
    kept: bool,
) -> Result<TreeStatistics, GameError> {
    let mut tree_rng = rng::seeded(seed);
    let (worlds, loose) = match settings.peek {
        true => (vec![state.clone()], false),
        false => {
            let drawn = worlds(game, state, me, &mut tree_rng, settings.worlds)?;
            (drawn.states, drawn.loose)
        }
    };
    if !kept {
        search.tree.reset(state.core.seats);
    }
    search.run(game, &worlds, legal, settings, &mut tree_rng)?;
    let tree = &search.tree;
    let root_edges: Vec<Option<usize>> = legal.iter().map(|a| tree.root_edge(a)).collect();
    let edges = root_edges
        .iter()
        .map(|e| e.map_or((0.0, 0.0), |e| (tree.stats[e].visits, tree.totals[e * tree.seats + me])))
        .collect();
    let won_by = root_edges
        .iter()
        .map(|e| e.map_or(0, |e| tree.stats[e].won_by))
        .collect();
    Ok(TreeStatistics { edges, loose, won_by })
}

/// One tree's search of a decision: per legal action, its visits and
/// summed reward for the seat to move; and whether it searched loose
/// worlds (no world fitted what the seat saw).
#[derive(Clone, Debug)]
pub(super) struct TreeStatistics {
    pub edges: Vec<(f64, f64)>,
    pub loose: bool,
    /// Per legal action, who wins for certain after it (seat + 1; 0 when
    /// not proven).
    pub won_by: Vec<u8>,
}

impl Bot for MctsBot {
    fn name(&self) -> &str {
        &self.name
    }

    fn loose_decisions(&self) -> u64 {
        self.loose
    }

    fn choose(&mut self, game: &Game, state: &State, legal: &[Action]) -> Result<usize, GameError> {
        if legal.len() == 1 || !matches!(state.to_move(), ToMove::Decision(_)) {
            return Ok(0);
        }
        let stats = self.root_statistics(game, state, legal)?;
        // A proven win if there is one; else no proven loss while another
        // action is left (see `Search::solve`).
        let mover = match state.to_move() {
            ToMove::Decision(me) => me as u8 + 1,
            _ => 0,
        };
        let proven = |x: usize| match self.won_by.get(x) {
            Some(&w) if w == mover => 1,
            Some(&w) if w != 0 => -1,
            _ => 0,
        };
        // Where every action is lost against best play, the search's
        // statistics still tell which one asks most of the opponent.
        let all_lost = (0..legal.len()).all(|x| proven(x) == -1);
        let rank = |x: usize| if all_lost { 0 } else { proven(x) };
        // The most visited action (ties: the better mean, then the first).
        let mean = |(n, t): (f64, f64)| if n > 0.0 { t / n } else { f64::NEG_INFINITY };
        let best = (0..legal.len())
            .max_by(|&x, &y| {
                rank(x).cmp(&rank(y)).then(
                    stats[x]
                        .0
                        .total_cmp(&stats[y].0)
                        .then(mean(stats[x]).total_cmp(&mean(stats[y])))
                        .then(y.cmp(&x)),
                )
            })
            .unwrap_or(0);
        if let ToMove::Decision(me) = state.to_move() {
            self.search.last = Some(LastDecision {
                history: state.history.clone(),
                seat: me,
                action: legal[best],
            });
        }
        Ok(best)
    }
}

/// One tree's settings for one decision.
#[derive(Clone, Debug)]
pub(super) struct TreeSettings {
    pub budget: Budget,
    pub depth: Depth,
    pub exploration: f64,
    pub worlds: usize,
    pub widen: bool,
    pub peek: bool,
    /// Rollout decisions by `evaluate` among a few drawn actions.
    pub greedy_rollout: bool,
}

const NONE: u32 = u32::MAX;

/// Progressive widening: a node with more than this many actions ranks
/// them by `evaluate` one decision ahead and considers only the best
/// `widened(visits)` of them.
const WIDEN_ABOVE: usize = 6;

/// How many of a widening node's actions are considered after `visits`
/// visits: 2, then growing with the square root of the visits, so the
/// search looks deep at the few moves a one-decision lookahead likes best
/// (reaching the opponent's reply in a turn of many decisions) and still
/// tries the others as the budget allows.
fn widened(visits: f64) -> usize {
    2 + visits.sqrt() as usize
}

/// The tree of one decision, flat: nodes, and edges kept as a list per
/// node (`first`, then `next`), with every edge's reward sums, `seats`
/// numbers per edge. Emptied and refilled every decision; its vectors are
/// kept, so a warm search allocates little.
#[derive(Default)]
struct Tree {
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    /// Per edge, what a selection reads (beside `totals`), kept apart from
    /// the rest so that scoring a node's edges reads little memory.
    stats: Vec<EdgeStats>,
    totals: Vec<f64>,
    seats: usize,
}

struct Node {
    first: u32,
    last: u32,
    /// The child every secret action of this node leads to, once made.
    shared: u32,
    /// Iterations that passed through this node (for widening).
    visits: f64,
    /// When not 0: the node's edges are exactly its legal actions, in the
    /// rules' order, whenever it is reached on a fixed path (see
    /// [`Search::iterate`]), and they are this many edges numbered on from
    /// `first`. Such visits take them from the tree instead of asking the
    /// rules.
    listed: u32,
    /// The seat deciding at this node, plus one (0 before its first visit).
    mover: u8,
    /// Who wins for certain from this node, plus one (0 while unknown).
    won_by: u8,
}

struct Edge {
    action: Action,
    /// The node after this action, made the second time the edge is taken.
    child: u32,
    next: u32,
    /// `evaluate` one decision after this action, for the deciding seat
    /// (widening nodes only; NaN until computed).
    prior: f64,
}

#[derive(Clone, Copy, Default)]
struct EdgeStats {
    visits: f64,
    /// `1 / visits` and `1 / sqrt(visits)`, kept up to date by the
    /// backup: UCB1 reads every sibling's at every selection, and the
    /// divisions and roots were a tenth of a search's time.
    inverse: f64,
    inverse_root: f64,
    /// How often this edge was among the legal actions when its node was
    /// visited: the exploration term's count (ISMCTS).
    available: f64,
    /// Who wins for certain after this action (seat + 1; 0 while unknown):
    /// see [`Search::solve`].
    won_by: u8,
}

impl Tree {
    fn reset(&mut self, seats: usize) {
        self.nodes.clear();
        self.edges.clear();
        self.stats.clear();
        self.totals.clear();
        self.seats = seats;
        self.add_node();
    }

    fn add_node(&mut self) -> u32 {
        self.nodes.push(Node {
            first: NONE,
            last: NONE,
            shared: NONE,
            visits: 0.0,
            listed: 0,
            mover: 0,
            won_by: 0,
        });
        (self.nodes.len() - 1) as u32
    }

    fn add_edge(&mut self, node: u32, action: Action) -> u32 {
        let e = self.edges.len() as u32;
        self.edges.push(Edge {
            action,
            child: NONE,
            next: NONE,
            prior: f64::NAN,
        });
        self.stats.push(EdgeStats::default());
        self.totals.extend(std::iter::repeat_n(0.0, self.seats));
        let n = &mut self.nodes[node as usize];
        if n.last == NONE {
            n.first = e;
        } else {
            self.edges[n.last as usize].next = e;
        }
        self.nodes[node as usize].last = e;
        e
    }

    /// Keeps only the subtree under `root`, which becomes node 0 (built in
    /// `spare`, then swapped in; `renumber` maps old nodes to new). Nodes
    /// keep their order of discovery, edges their order per node.
    fn reroot(&mut self, root: u32, spare: &mut Tree, renumber: &mut Vec<u32>) {
        spare.nodes.clear();
        spare.edges.clear();
        spare.stats.clear();
        spare.totals.clear();
        spare.seats = self.seats;
        renumber.clear();
        renumber.resize(self.nodes.len(), NONE);
        renumber[root as usize] = spare.add_node();
        let mut queue = std::collections::VecDeque::from([root]);
        // The new number of `old`, adding it to the queue when first met.
        let mut place = |old: u32, spare: &mut Tree, queue: &mut std::collections::VecDeque<u32>| {
            if renumber[old as usize] == NONE {
                renumber[old as usize] = spare.add_node();
                queue.push_back(old);
            }
            renumber[old as usize]
        };
        while let Some(old) = queue.pop_front() {
            let new = place(old, spare, &mut queue);
            spare.nodes[new as usize].visits = self.nodes[old as usize].visits;
            if self.nodes[old as usize].shared != NONE {
                let shared = place(self.nodes[old as usize].shared, spare, &mut queue);
                spare.nodes[new as usize].shared = shared;
            }
            let mut e = self.nodes[old as usize].first;
            while e != NONE {
                let edge = &self.edges[e as usize];
                let f = spare.add_edge(new, edge.action);
                spare.edges[f as usize].prior = edge.prior;
                // Proofs hold for the state the old root stood for; the
                // new one may have come after other chance.
                spare.stats[f as usize] = EdgeStats {
                    won_by: 0,
                    ..self.stats[e as usize]
                };
                let seats = self.seats;
                spare.totals[f as usize * seats..(f as usize + 1) * seats]
                    .copy_from_slice(&self.totals[e as usize * seats..(e as usize + 1) * seats]);
                if edge.child != NONE {
                    let child = place(edge.child, spare, &mut queue);
                    spare.edges[f as usize].child = child;
                }
                e = self.edges[e as usize].next;
            }
        }
        std::mem::swap(self, spare);
    }

    fn root_edge(&self, action: &Action) -> Option<usize> {
        let mut e = self.nodes[0].first;
        while e != NONE {
            if self.edges[e as usize].action == *action {
                return Some(e as usize);
            }
            e = self.edges[e as usize].next;
        }
        None
    }

    /// A listed node's edges (see [`Node::listed`]) in `available`.
    fn listed_edges(&self, node: u32, available: &mut Vec<u32>) {
        let n = &self.nodes[node as usize];
        available.clear();
        available.extend(n.first..n.first + n.listed);
    }

    /// Marks `node` listed when `available`, its edges for the legal
    /// actions just listed, are all its edges and numbered one after
    /// another (as the first visit adds them).
    fn mark_listed(&mut self, node: u32, available: &[u32]) {
        let n = &self.nodes[node as usize];
        let consecutive = available.iter().enumerate().all(|(i, &e)| e == n.first + i as u32);
        if consecutive && available.last() == Some(&n.last) {
            self.nodes[node as usize].listed = available.len() as u32;
        }
    }

    /// The node's edges for the actions in `legal`, in `available` (new
    /// edges added for actions not seen there before).
    fn available(&mut self, node: u32, legal: &[Action], available: &mut Vec<u32>) {
        available.clear();
        // Usually this visit offers exactly the actions of the last, in
        // order: walk the list alongside.
        let mut e = self.nodes[node as usize].first;
        let mut i = 0;
        while i < legal.len() && e != NONE && self.edges[e as usize].action == legal[i] {
            available.push(e);
            e = self.edges[e as usize].next;
            i += 1;
        }
        for a in &legal[i..] {
            let mut f = self.nodes[node as usize].first;
            while f != NONE && self.edges[f as usize].action != *a {
                f = self.edges[f as usize].next;
            }
            if f == NONE {
                f = self.add_edge(node, *a);
            }
            available.push(f);
        }
    }
}

/// The search's working memory, kept between decisions.
#[derive(Default)]
pub(super) struct Search {
    tree: Tree,
    /// The iteration's copy of its world (`clone_from` reuses allocations).
    walk: Option<State>,
    legal: Vec<Action>,
    available: Vec<u32>,
    /// A scratch copy for ranking actions one decision ahead.
    probe: Option<State>,
    /// The best of `rollout=greedy`'s drawn actions so far.
    best: Option<State>,
    path: Vec<u32>,
    reward: Vec<f64>,
    /// The decision the tree was last grown for, and what was chosen.
    last: Option<LastDecision>,
    /// Where [`Tree::reroot`] builds the kept subtree.
    spare: Tree,
    renumber: Vec<u32>,
    /// Per count n = 0, 1, ...: `sqrt(ln(n))`, `1 / n` and `1 / sqrt(n)`.
    /// UCB1 reads them for every edge at every selection and the backup
    /// writes them for every edge of the path: computed, the logarithm
    /// alone was a twentieth of a cheap game's search.
    counts: CountTable,
    /// Whether this decision's iterations all start from one world (no
    /// hidden information to redraw): then a path of decisions with no
    /// chance on it always leads to the same state.
    one_world: bool,
    /// Whether wins are proven (see [`Search::solve`]): one world, and
    /// games won or lost rather than scored.
    solving: bool,
    /// The node each edge of `path` leaves from.
    path_nodes: Vec<u32>,
}

/// Functions of a count, looked up rather than computed (see
/// [`Search::counts`]); grown as counts grow, and the same numbers as
/// computing them each time.
#[derive(Default)]
struct CountTable {
    sqrt_ln: Vec<f64>,
    inverse: Vec<f64>,
    inverse_root: Vec<f64>,
}

impl CountTable {
    /// Makes the table reach `count`.
    #[inline]
    fn cover(&mut self, count: f64) {
        let count = count as usize;
        while self.sqrt_ln.len() <= count {
            let n = self.sqrt_ln.len() as f64;
            let inverse = 1.0 / n;
            self.sqrt_ln.push(n.ln().sqrt());
            self.inverse.push(inverse);
            self.inverse_root.push(inverse.sqrt());
        }
    }
}

/// A decision the bot took: enough to know whether the next one follows
/// from it.
struct LastDecision {
    /// The state's history when it decided (shared, not copied).
    history: rulesmith_core::state::History,
    seat: Seat,
    action: Action,
}

/// Where an iteration's descent took it.
enum Reached {
    /// Scored: `reward` holds every seat's reward, `path` the edges taken.
    Scored,
    /// A step failed in this world (a half-changed copy): nothing to learn.
    Broken,
}

impl Search {
    /// Whether the decision at `state` for `me` follows the last one this
    /// search was grown for: the same game played on, `me` decided then
    /// too, and since then only the chosen action and chance happened (a
    /// turn made of many decisions). If so the subtree under the chosen
    /// action becomes the tree, its statistics a head start for this
    /// decision (chance is open loop: the node averaged over the outcomes
    /// that came, and the ones that did not). True when it did.
    pub(super) fn continue_from(&mut self, state: &State, me: Seat) -> bool {
        let Some(last) = self.last.take() else { return false };
        if last.seat != me || self.tree.nodes.is_empty() {
            return false;
        }
        let Some(steps) = state.history.since(&last.history) else {
            return false;
        };
        let follows = match steps.split_first() {
            Some((Step::Decision(a), rest)) => *a == last.action && rest.iter().all(|s| matches!(s, Step::Chance(_))),
            _ => false,
        };
        if !follows {
            return false;
        }
        let Some(e) = self.tree.root_edge(&last.action) else {
            return false;
        };
        let child = self.tree.edges[e].child;
        if child == NONE {
            return false;
        }
        self.tree.reroot(child, &mut self.spare, &mut self.renumber);
        true
    }

    fn run(
        &mut self,
        game: &Game,
        worlds: &[State],
        root_legal: &[Action],
        settings: &TreeSettings,
        rng: &mut GameRng,
    ) -> Result<(), GameError> {
        let started = Instant::now();
        let mut iteration: u32 = 0;
        self.one_world = worlds.len() == 1;
        self.solving = self.one_world && game.variant().scores.is_none();
        loop {
            match settings.budget {
                Budget::Playouts(n) if iteration >= n => break,
                Budget::Time(d) if iteration > 0 && started.elapsed() >= d => break,
                _ => {}
            }
            let world = &worlds[iteration as usize % worlds.len()];
            let mut s = match self.walk.take() {
                Some(mut s) => {
                    s.clone_from(world);
                    s
                }
                None => world.clone(),
            };
            s.forget_history();
            iteration += 1;
            let reached = self.iterate(game, &mut s, root_legal, settings, rng);
            self.walk = Some(s);
            if let Reached::Scored = reached? {
                self.back_up();
                if self.solving {
                    self.solve();
                }
            }
        }
        Ok(())
    }

    fn back_up(&mut self) {
        let seats = self.tree.seats;
        for &e in &self.path {
            let e = e as usize;
            let edge = &mut self.tree.stats[e];
            edge.visits += 1.0;
            self.counts.cover(edge.visits);
            let n = edge.visits as usize;
            edge.inverse = self.counts.inverse[n];
            edge.inverse_root = self.counts.inverse_root[n];
            for (t, r) in self.tree.totals[e * seats..(e + 1) * seats]
                .iter_mut()
                .zip(&self.reward)
            {
                *t += r;
            }
        }
    }

    /// Proves what the last iteration's path allows (MCTS-Solver): an edge
    /// whose child node is proven takes its winner; a node where the
    /// seat deciding has a proven winning action is won by that seat, and
    /// one where every action is proven won by one other seat is won by
    /// that seat. Only nodes on a fixed path whose actions the tree holds
    /// all ([`Node::listed`]) are proven; the root is not (its choice
    /// reads its edges). Each proof goes up the path as far as it
    /// changes something. A proven win is then always taken, a proven
    /// loss avoided (see [`Search::select`]): tic-tac-toe's short forced
    /// wins and losses are played exactly instead of estimated.
    fn solve(&mut self) {
        let tree = &mut self.tree;
        for (&e, &n) in self.path.iter().zip(&self.path_nodes).rev() {
            let child = tree.edges[e as usize].child;
            if child != NONE && tree.nodes[child as usize].won_by != 0 {
                tree.stats[e as usize].won_by = tree.nodes[child as usize].won_by;
            }
            let node = &tree.nodes[n as usize];
            if n == 0 || node.listed == 0 || node.won_by != 0 {
                return;
            }
            let edges = &tree.stats[node.first as usize..(node.first + node.listed) as usize];
            let won_by = if edges.iter().any(|x| x.won_by == node.mover) {
                node.mover
            } else {
                match edges[0].won_by {
                    w if w != 0 && edges.iter().all(|x| x.won_by == w) => w,
                    _ => return,
                }
            };
            tree.nodes[n as usize].won_by = won_by;
        }
    }

    /// One iteration on `s`, a copy of one world.
    fn iterate(
        &mut self,
        game: &Game,
        s: &mut State,
        root_legal: &[Action],
        settings: &TreeSettings,
        rng: &mut GameRng,
    ) -> Result<Reached, GameError> {
        self.path.clear();
        self.path_nodes.clear();
        let mut node = 0u32;
        // A fixed path: one world, and since the root neither chance nor a
        // node shared by secret actions. Every visit to a node on it finds
        // the same state, so the legal actions listed on the first visit
        // hold for all of them (in tic-tac-toe, listing them again through
        // the rules was a fifth of the search).
        let mut fixed = self.one_world;
        // The edge just taken and, if its action was secret, who took it:
        // its child is made once the next decider is known.
        let mut pending: Option<(u32, Option<Seat>)> = None;
        loop {
            fixed &= s.to_move() != ToMove::Chance;
            if !resolve_chance(game, s, rng) {
                return Ok(Reached::Broken);
            }
            let ToMove::Decision(p) = s.to_move() else { break };
            if let Some((e, secret_mover)) = pending.take() {
                let shared = secret_mover.is_some_and(|m| m != p);
                fixed &= !shared;
                node = self.child(node, e, shared);
            }
            if fixed && self.tree.nodes[node as usize].listed > 0 {
                self.tree.listed_edges(node, &mut self.available);
            } else {
                if node == 0 {
                    self.legal.clear();
                    self.legal.extend_from_slice(root_legal);
                } else if game.legal_actions_into(s, &mut self.legal).is_err() {
                    break; // no legal action here: scored as it stands
                }
                self.tree.available(node, &self.legal, &mut self.available);
                if fixed && node != 0 {
                    self.tree.mark_listed(node, &self.available);
                }
            }
            let secret = game.decision_is_secret(s);
            let ranked = settings.widen && self.available.len() > WIDEN_ABOVE;
            if ranked {
                self.widen(game, s, p, node, rng)?;
            }
            self.tree.nodes[node as usize].visits += 1.0;
            self.tree.nodes[node as usize].mover = p as u8 + 1;
            // Availability never exceeds the node's visits.
            self.counts.cover(self.tree.nodes[node as usize].visits);
            let (e, fresh) = self.select(p, settings.exploration, ranked, rng);
            if game.apply_scratch(s, self.tree.edges[e as usize].action).is_err() {
                return Ok(Reached::Broken);
            }
            self.path.push(e);
            self.path_nodes.push(node);
            if let (true, Status::Won(w)) = (fixed && self.solving, s.status()) {
                // This very action ends the game, whichever iteration
                // takes it: proven.
                self.tree.stats[e as usize].won_by = w as u8 + 1;
            }
            if fresh {
                break;
            }
            pending = Some((e, secret.then_some(p)));
        }
        if !self.rollout(game, s, settings, rng) {
            return Ok(Reached::Broken);
        }
        rewards(game, s, &mut self.reward)?;
        Ok(Reached::Scored)
    }

    /// The child node of edge `e` out of `node`, made if need be; secret
    /// actions followed by another seat's decision share one.
    fn child(&mut self, node: u32, e: u32, shared: bool) -> u32 {
        let existing = self.tree.edges[e as usize].child;
        if existing != NONE {
            return existing;
        }
        let child = if shared {
            match self.tree.nodes[node as usize].shared {
                NONE => {
                    let c = self.tree.add_node();
                    self.tree.nodes[node as usize].shared = c;
                    c
                }
                c => c,
            }
        } else {
            self.tree.add_node()
        };
        self.tree.edges[e as usize].child = child;
        child
    }

    /// Progressive widening at `node`, where `p` decides in `s`: ranks the
    /// available edges by their prior (computed for those that have none
    /// yet: `evaluate` for `p` after the action and one draw of any chance
    /// it causes) and keeps the best `widened(visits)` in `available`,
    /// best first.
    fn widen(&mut self, game: &Game, s: &State, p: Seat, node: u32, rng: &mut GameRng) -> Result<(), GameError> {
        for &e in &self.available {
            if !self.tree.edges[e as usize].prior.is_nan() {
                continue;
            }
            let mut t = match self.probe.take() {
                Some(mut t) => {
                    t.clone_from(s);
                    t
                }
                None => s.clone(),
            };
            let action = self.tree.edges[e as usize].action;
            let prior = if game.apply_scratch(&mut t, action).is_err() || !resolve_chance(game, &mut t, rng) {
                f64::NEG_INFINITY
            } else if t.is_terminal() {
                t.returns()[p] * 1e9
            } else {
                game.evaluate(&t, p)?
            };
            self.probe = Some(t);
            self.tree.edges[e as usize].prior = prior;
        }
        let edges = &self.tree.edges;
        // Stable: equal priors keep the rules' order.
        self.available
            .sort_by(|&x, &y| edges[y as usize].prior.total_cmp(&edges[x as usize].prior));
        self.available.truncate(widened(self.tree.nodes[node as usize].visits));
        Ok(())
    }

    /// The edge to take among `self.available`, for seat `p`, counting
    /// each one available once more: an untried one first (the first
    /// when `ranked`, the best by prior; else one at random), else the
    /// best by UCB1. True when untried. One pass over the edges does the
    /// counting and the scoring (each edge is read from memory once: in a
    /// cheap game that is what a selection costs).
    fn select(&mut self, p: Seat, exploration: f64, ranked: bool, rng: &mut GameRng) -> (u32, bool) {
        let tree = &mut self.tree;
        let seats = tree.seats;
        let (mut untried, mut first_untried) = (0u32, NONE);
        let mut best = self.available[0];
        let mut best_score = f64::NEG_INFINITY;
        // c * sqrt(ln(available)), the same for siblings available equally
        // often (all of them where nothing is hidden and chance does not
        // change the actions): one look-up per selection, not per edge.
        let (mut counted, mut reach) = (f64::NAN, 0.0);
        let mover = p as u8 + 1;
        let mut winning = NONE;
        // The best proven loss, taken only when every edge is one (then
        // the statistics still choose the one that asks most of the
        // opponent).
        let (mut lost, mut lost_score) = (NONE, f64::NEG_INFINITY);
        for &e in &self.available {
            let edge = &mut tree.stats[e as usize];
            edge.available += 1.0;
            let losing = edge.won_by != 0 && edge.won_by != mover;
            if edge.won_by == mover {
                winning = e;
            }
            if edge.visits == 0.0 {
                if untried == 0 {
                    first_untried = e;
                }
                untried += 1;
                continue;
            }
            if untried > 0 {
                continue; // an untried edge will be taken: only count
            }
            if edge.available != counted {
                counted = edge.available;
                reach = exploration * self.counts.sqrt_ln[counted as usize];
            }
            let mean = tree.totals[e as usize * seats + p] * edge.inverse;
            let score = mean + reach * edge.inverse_root;
            if losing {
                if score > lost_score {
                    lost_score = score;
                    lost = e;
                }
            } else if score > best_score {
                best_score = score;
                best = e;
            }
        }
        if best_score == f64::NEG_INFINITY && lost != NONE {
            best = lost;
        }
        if winning != NONE {
            return (winning, false);
        }
        if untried == 0 {
            return (best, false);
        }
        if ranked {
            return (first_untried, true);
        }
        let k = rng::below(rng, untried) as usize;
        let e = self
            .available
            .iter()
            .copied()
            .filter(|&e| tree.stats[e as usize].visits == 0.0)
            .nth(k)
            .expect("k counts the untried edges");
        (e, true)
    }

    /// Random decisions (or `rollout=greedy`'s) from `s` until the end,
    /// or until `depth` moves were played. False when a step failed.
    ///
    /// A move is a turn (the turn number went up), or, where the rules keep
    /// one long turn, a change of the deciding seat. The seats deciding one
    /// after another in a round (a step every seat answers, such as a
    /// secret commitment) make one move together: a depth of 1 after a
    /// commitment sees the round resolved.
    fn rollout(&mut self, game: &Game, s: &mut State, settings: &TreeSettings, rng: &mut GameRng) -> bool {
        let limit = match settings.depth {
            Depth::Moves(m) => m,
            Depth::End | Depth::Auto => u32::MAX,
        };
        let mut last: Option<Seat> = None;
        let mut turn = s.core.turn;
        let mut moves = 0;
        let mut decisions = 0;
        loop {
            if !resolve_chance(game, s, rng) {
                return false;
            }
            let ToMove::Decision(p) = s.to_move() else {
                return true;
            };
            if s.core.turn != turn {
                moves += 1;
                turn = s.core.turn;
            } else if last.is_some_and(|l| l != p) && s.core.round == 0 {
                moves += 1;
            }
            last = Some(p);
            if moves >= limit || decisions >= MctsConfig::MAX_ROLLOUT {
                return true;
            }
            decisions += 1;
            if settings.greedy_rollout {
                match self.greedy_step(game, s, p, rng) {
                    Some(true) => continue,
                    Some(false) => return false,
                    None => return true, // no legal action: scored as it stands
                }
            }
            let mut picked = false;
            let stepped = game.pick_and_apply_scratch(s, |n| rng::below(rng, n as u32) as usize, |_, _| picked = true);
            match (stepped, picked) {
                (Ok(()), _) => {}
                // No legal action to pick: scored as it stands.
                (Err(_), false) => return true,
                (Err(_), true) => return false,
            }
        }
    }
}

impl Search {
    /// One `rollout=greedy` decision for `p` in `s`: of a few legal
    /// actions drawn at random, the one `evaluate` (for `p`, after the
    /// chance it causes) likes best is applied; the state it led to is
    /// kept, not recomputed. None when there is no legal action, false
    /// when no drawn action could be applied.
    fn greedy_step(&mut self, game: &Game, s: &mut State, p: Seat, rng: &mut GameRng) -> Option<bool> {
        if game.legal_actions_into(s, &mut self.legal).is_err() || self.legal.is_empty() {
            return None;
        }
        let mut best_value = f64::NEG_INFINITY;
        let mut found = false;
        for _ in 0..GREEDY_ROLLOUT_DRAWS.min(self.legal.len()) {
            let a = self.legal[rng::below(rng, self.legal.len() as u32) as usize];
            let mut t = match self.probe.take() {
                Some(mut t) => {
                    t.clone_from(s);
                    t
                }
                None => s.clone(),
            };
            let value = if game.apply_scratch(&mut t, a).is_err() || !resolve_chance(game, &mut t, rng) {
                None
            } else if t.is_terminal() {
                Some(game.unit_returns(&t)[p] * 1e9)
            } else {
                game.evaluate(&t, p).ok()
            };
            match value {
                Some(v) if !found || v > best_value => {
                    best_value = v;
                    found = true;
                    // The better state is kept in `best`, the one it beat
                    // becomes the next probe.
                    self.probe = self.best.replace(t);
                }
                _ => self.probe = Some(t),
            }
        }
        if !found {
            return Some(false);
        }
        if let Some(best) = self.best.as_mut() {
            std::mem::swap(s, best);
        }
        Some(true)
    }
}

/// Every seat's reward for `s`, in -1..=1, written into `out`: a finished
/// game's result (its scores scaled from the declared `[scores]` range,
/// so the search maximizes the expected score), else the variant's
/// `evaluate` squashed with
/// `tanh(value / evaluate_scale)` (0 without one). With two seats the
/// evaluation is taken as zero-sum (one script call) unless the variant
/// says its `evaluate` is not (`[output] evaluate_zero_sum = false`).
fn rewards(game: &Game, s: &State, out: &mut Vec<f64>) -> Result<(), GameError> {
    out.clear();
    if s.is_terminal() {
        game.unit_returns_into(s, out);
        return Ok(());
    }
    let variant = game.variant();
    if variant.evaluate.is_none() {
        out.extend(std::iter::repeat_n(0.0, s.core.seats));
        return Ok(());
    }
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
