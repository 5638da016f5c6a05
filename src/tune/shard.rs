//! `tune --shard I/N --shard-dir DIR`: the shards of one tune run meet in
//! a shared folder. Every time the search plays games (a round of the
//! race, a probe of the bisection), each shard plays its block of those
//! games (by game index, as `simulate --shard` splits a run), writes its
//! results to the folder, and reads the others'. With every shard holding
//! every result, each takes the same decision, so all of them print the
//! answer the unsharded run prints.
//!
//! A file is written whole (to a temporary name, then renamed), and named
//! by the run (a hash of the flags that decide its games), the call's
//! number and the shard, so runs sharing a folder do not mix. A shard
//! that finds its own file from an earlier attempt of the same run reads
//! it instead of playing again: restarting the shards after one died
//! replays nothing already written.
//!
//! When its search is over, a shard leaves a mark in the folder; the
//! shard that finds every shard's mark there (the last to finish, by
//! then every file has been read by all) removes the run's files. A run
//! that stopped early (a shard died, a shard timed out) keeps them, for
//! the restart.

use crate::simulate::Shard;
use rulesmith_core::Variant;
use rulesmith_lab::sim::GameResult;
use rulesmith_lab::tune::TuneError;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How often a waiting shard looks for the others' files.
const POLL: Duration = Duration::from_millis(20);

/// One shard's place in a sharded run.
pub struct Meeting {
    shard: Shard,
    dir: PathBuf,
    /// The run's name in the folder.
    key: String,
    timeout: Duration,
    /// Calls of the search's `play` so far.
    calls: u64,
}

/// What one shard wrote for one call.
#[derive(serde::Serialize, serde::Deserialize)]
struct Part {
    key: String,
    call: u64,
    shard: Shard,
    candidates: Vec<Vec<String>>,
    games: Range<u64>,
    results: Vec<Vec<GameResult>>,
}

impl Meeting {
    /// `identity` is every flag that decides the run's games and choices.
    pub fn new(shard: Shard, dir: &Path, timeout: u64, identity: &str) -> Result<Meeting, crate::Failure> {
        if !dir.is_dir() {
            return Err(crate::Failure::usage(format!(
                "--shard-dir {}: expected an existing folder that every shard can reach (create it first)",
                dir.display()
            )));
        }
        Ok(Meeting {
            shard,
            dir: dir.to_path_buf(),
            key: format!(
                "{:016x}",
                fnv1a(format!("{identity} shards {}", shard.count).as_bytes())
            ),
            timeout: Duration::from_secs(timeout),
            calls: 0,
        })
    }

    /// Starts the next call of `play`: its number.
    pub fn next_call(&mut self) -> u64 {
        self.calls += 1;
        self.calls
    }

    /// The games of `games` this shard plays.
    pub fn mine(&self, games: &Range<u64>) -> Range<u64> {
        block(self.shard, games)
    }

    fn file(&self, call: u64, index: u64) -> PathBuf {
        self.dir.join(format!(
            "tune-{}-{call:06}-shard{index}of{}.json",
            self.key, self.shard.count
        ))
    }

    /// Reads shard `index`'s part of `call`, if written, checking it is
    /// for these candidates and games.
    fn read(
        &self,
        call: u64,
        index: u64,
        candidates: &[Vec<String>],
        games: &Range<u64>,
    ) -> Result<Option<Part>, TuneError> {
        let path = self.file(call, index);
        let text = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(TuneError::Play(format!("{}: cannot read: {e}", path.display()))),
        };
        let part: Part = serde_json::from_slice(&text).map_err(|e| {
            TuneError::Play(format!(
                "{}: expected a tune shard's games, but {e} (delete the file and start the shards again)",
                path.display()
            ))
        })?;
        let expected = block(
            Shard {
                index,
                count: self.shard.count,
            },
            games,
        );
        if part.key != self.key
            || part.call != call
            || part.candidates != candidates
            || part.games != *games
            || part
                .results
                .iter()
                .any(|r| r.len() as u64 != expected.end - expected.start)
        {
            return Err(TuneError::Play(format!(
                "{}: expected shard {index}/{}'s games {}..{} of {}, but the file holds other games: \
                 were all shards started with the same flags and variant?",
                path.display(),
                self.shard.count,
                games.start + 1,
                games.end,
                candidates.iter().map(|c| c.join(" ")).collect::<Vec<_>>().join(", ")
            )));
        }
        Ok(Some(part))
    }

    /// This shard's results of `call` from an earlier attempt, if any.
    pub fn played_before(
        &self,
        call: u64,
        candidates: &[Vec<String>],
        games: &Range<u64>,
    ) -> Result<Option<Vec<Vec<GameResult>>>, TuneError> {
        Ok(self.read(call, self.shard.index, candidates, games)?.map(|p| p.results))
    }

    /// Writes this shard's results of `call`, whole or not at all.
    pub fn write(
        &self,
        call: u64,
        candidates: &[Vec<String>],
        games: &Range<u64>,
        results: &[Vec<GameResult>],
    ) -> Result<(), TuneError> {
        let part = Part {
            key: self.key.clone(),
            call,
            shard: self.shard,
            candidates: candidates.to_vec(),
            games: games.clone(),
            results: results.to_vec(),
        };
        let path = self.file(call, self.shard.index);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let text = serde_json::to_vec(&part).expect("results serialize");
        std::fs::write(&tmp, text)
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(|e| TuneError::Play(format!("{}: cannot write this shard's games: {e}", path.display())))
    }

    /// This run's files in the folder (the calls' games, the marks of the
    /// shards done, a temporary file a dead shard left).
    fn run_files(&self) -> Vec<PathBuf> {
        let prefix = format!("tune-{}-", self.key);
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
            .map(|e| e.path())
            .collect()
    }

    fn done_mark(&self, index: u64) -> PathBuf {
        self.dir
            .join(format!("tune-{}-done-shard{index}of{}", self.key, self.shard.count))
    }

    /// After this shard's search ended with its answer: marks it done
    /// and, when every shard is, removes the run's files (every shard has
    /// read every file by then). Returns how many files it removed (0
    /// while another shard is still at work), or what went wrong: the
    /// answer stands either way, so the caller only reports it.
    pub fn finish(&self) -> Result<usize, String> {
        let mark = self.done_mark(self.shard.index);
        std::fs::write(&mark, b"").map_err(|e| format!("{}: cannot mark this shard done: {e}", mark.display()))?;
        if !(1..=self.shard.count).all(|i| self.done_mark(i).is_file()) {
            return Ok(0);
        }
        let mut removed = 0;
        for path in self.run_files() {
            match std::fs::remove_file(&path) {
                Ok(()) => removed += 1,
                // Another shard finishing at the same time removed it.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("{}: cannot remove this run's file: {e}", path.display())),
            }
        }
        Ok(removed)
    }

    /// Every shard's results of `call` (this one's are `own`), each
    /// candidate's in game order; waits for the others' files.
    pub fn gather(
        &self,
        call: u64,
        candidates: &[Vec<String>],
        games: &Range<u64>,
        own: Vec<Vec<GameResult>>,
    ) -> Result<Vec<Vec<GameResult>>, TuneError> {
        let mut out: Vec<Vec<GameResult>> = vec![Vec::new(); candidates.len()];
        let mut own = Some(own);
        let start = Instant::now();
        for index in 1..=self.shard.count {
            let part = if index == self.shard.index {
                own.take().expect("once")
            } else {
                loop {
                    if let Some(p) = self.read(call, index, candidates, games)? {
                        break p.results;
                    }
                    if start.elapsed() > self.timeout {
                        return Err(TuneError::Play(format!(
                            "--shard {}/{n}: waited {} s for shard {index}/{n}'s games ({}); is it running, with the \
                             same flags and --shard-dir? (start it again: it replays nothing already written)",
                            self.shard.index,
                            self.timeout.as_secs(),
                            self.file(call, index).display(),
                            n = self.shard.count
                        )));
                    }
                    std::thread::sleep(POLL);
                }
            };
            for (o, r) in out.iter_mut().zip(part) {
                o.extend(r);
            }
        }
        Ok(out)
    }
}

/// What names a run in the folder: `flags` (every flag that decides its
/// games and choices), the text of every file of the variant (a script
/// edited between two runs with the same flags makes another run, whose
/// shards must not read the first one's games as their own), and this
/// program's version (whose bots may play differently).
pub fn identity(variant: &Variant, flags: &str) -> String {
    let mut texts = Vec::new();
    for f in &variant.files {
        texts.extend_from_slice(f.text.as_bytes());
        texts.push(0);
    }
    format!(
        "{flags} files {:016x} rulesmith {}",
        fnv1a(&texts),
        env!("CARGO_PKG_VERSION")
    )
}

/// Shard `shard`'s block of `games`.
fn block(shard: Shard, games: &Range<u64>) -> Range<u64> {
    let r = shard.range(games.end - games.start);
    games.start + r.start..games.start + r.end
}

/// FNV-1a: a hash that is the same on every machine and build.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}
