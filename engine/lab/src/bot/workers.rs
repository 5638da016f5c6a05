//! Threads that search an MCTS bot's trees in parallel (`threads=N`).
//!
//! A [`Game`] and its states stay on the thread that made them (the
//! interpreter's values are not thread-safe), so each worker builds its
//! own game from the bot's [`GameForker`] and receives the position as
//! saved JSON. A tree's search depends only on the position and its seed,
//! never on which worker ran it, and the bot adds the trees up in tree
//! order: the decision is the same with one thread or many.

use super::mcts::{tree_statistics, Search, TreeSettings, TreeStatistics};
use rulesmith_core::error::GameError;
use rulesmith_core::game::{Game, GameForker};
use rulesmith_core::state::{Action, Seat, State};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// One tree to search.
struct Job {
    tree: usize,
    seed: u64,
    position: Arc<Position>,
}

/// What every tree of one decision shares.
struct Position {
    state: String,
    legal: Vec<Action>,
    me: Seat,
    settings: TreeSettings,
}

type Statistics = Result<TreeStatistics, String>;

pub(super) struct Workers {
    jobs: Option<Sender<Job>>,
    done: Receiver<(usize, Statistics)>,
    threads: Vec<JoinHandle<()>>,
}

impl Workers {
    pub(super) fn start(forker: GameForker, count: usize) -> Workers {
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (report, done) = mpsc::channel();
        let inbox = Arc::new(Mutex::new(inbox));
        let threads = (0..count)
            .map(|_| {
                let (inbox, report, forker) = (inbox.clone(), report.clone(), forker.clone());
                std::thread::spawn(move || work(&forker, &inbox, &report))
            })
            .collect();
        Workers {
            jobs: Some(jobs),
            done,
            threads,
        }
    }

    /// Searches one tree per seed on the workers; the statistics in tree
    /// order.
    pub(super) fn run(
        &self,
        game: &Game,
        state: &State,
        legal: &[Action],
        me: Seat,
        settings: &TreeSettings,
        seeds: &[u64],
    ) -> Result<Vec<TreeStatistics>, GameError> {
        let position = Arc::new(Position {
            state: game.save_state(state)?,
            legal: legal.to_vec(),
            me,
            settings: settings.clone(),
        });
        let jobs = self.jobs.as_ref().expect("open until dropped");
        for (tree, &seed) in seeds.iter().enumerate() {
            let job = Job {
                tree,
                seed,
                position: position.clone(),
            };
            jobs.send(job)
                .map_err(|_| GameError::Rules("the search's worker threads stopped".into()))?;
        }
        let mut parts: Vec<Option<TreeStatistics>> = vec![None; seeds.len()];
        for _ in seeds {
            let (tree, stats) = self
                .done
                .recv()
                .map_err(|_| GameError::Rules("the search's worker threads stopped".into()))?;
            parts[tree] = Some(stats.map_err(GameError::Rules)?);
        }
        Ok(parts.into_iter().map(|p| p.expect("every tree reported")).collect())
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.jobs = None; // the workers' inbox closes: they return
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// A worker: its own game, built on first use, then one tree per job
/// until the bot is dropped.
fn work(forker: &GameForker, inbox: &Mutex<Receiver<Job>>, report: &Sender<(usize, Statistics)>) {
    let mut game: Option<Result<Game, String>> = None;
    let mut search = Search::default();
    loop {
        let job = match inbox.lock() {
            Ok(rx) => match rx.recv() {
                Ok(job) => job,
                Err(_) => return,
            },
            Err(_) => return,
        };
        let g = game.get_or_insert_with(|| forker.game());
        let stats = match g {
            Ok(g) => search_one(g, &mut search, &job),
            Err(e) => Err(format!("a search thread could not build the rules: {e}")),
        };
        if report.send((job.tree, stats)).is_err() {
            return;
        }
    }
}

fn search_one(game: &Game, search: &mut Search, job: &Job) -> Statistics {
    let p = &job.position;
    let state = game.load_state(&p.state).map_err(|e| e.to_string())?;
    tree_statistics(search, game, &state, &p.legal, p.me, &p.settings, job.seed, false).map_err(|e| e.to_string())
}
