//! `rulesmith play VARIANT`: a game in the terminal, humans against bots or
//! hot-seat. The board is the variant's own picture (its render function);
//! the player picks an action by number or types it in the notation.

use crate::common::{load_game, parse_seat, players, VariantArgs};
use crate::Failure;
use rulesmith_core::record::Record;
use rulesmith_core::rng::{self, GameRng};
use rulesmith_core::state::ChanceSource;
use rulesmith_core::{Game, State, Status, ToMove};
use rulesmith_lab::bot::{self, Bot};
use std::io::{BufRead, Write};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The variant folder (or its variant.toml).
    pub variant: PathBuf,
    /// Number of players (default: the variant's default).
    #[arg(long)]
    pub players: Option<usize>,
    /// A seat played by a human, e.g. --seat 1 or --seat P2; repeatable.
    /// Default: P1. The other seats are bots.
    #[arg(long = "seat", value_name = "SEAT")]
    pub seats: Vec<String>,
    /// Every seat is played by a human at this terminal.
    #[arg(long)]
    pub hotseat: bool,
    /// Bot of each seat, comma-separated, repeating over the seats (human
    /// seats ignore theirs): random, greedy, mcts, mcts:N, mcts:Nms.
    #[arg(long, value_delimiter = ',', default_value = "random")]
    pub bots: Vec<String>,
    /// Seed for dice, cards and bots (default: from the clock, and printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write the game record to this file at the end (and on `save`).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Bot decisions in a row (no human deciding between them) after
    /// which the game counts as one that does not end, and stops.
    #[arg(long, default_value_t = rulesmith_lab::sim::MAX_DECISIONS, value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_decisions: u64,
    #[command(flatten)]
    pub common: VariantArgs,
}

struct Table {
    game: Game,
    state: State,
    humans: Vec<bool>,
    bots: Vec<Option<Box<dyn Bot>>>,
    chance: GameRng,
    record: Record,
    seed: u64,
    out_file: Option<PathBuf>,
    /// The `--set` overrides, written into the record's header.
    sets: Vec<String>,
    /// Bot decisions since a human last decided, and their bound.
    bot_run: u64,
    max_bot_run: u64,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let game = load_game(&args.variant, &args.common)?;
    let n = players(&game, args.players)?;
    let mut humans = vec![false; n];
    if args.hotseat {
        humans.fill(true);
    } else if args.seats.is_empty() {
        humans[0] = true;
    }
    for s in &args.seats {
        humans[parse_seat(s, n)?] = true;
    }
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    if args.bots.is_empty() {
        return Err(Failure::usage("--bots needs at least one bot"));
    }
    let mut bots = Vec::with_capacity(n);
    for (s, human) in humans.iter().enumerate() {
        let bot = if *human {
            None
        } else {
            let spec = &args.bots[s % args.bots.len()];
            Some(bot::from_spec(spec, rng::derive(seed, 1 + s as u64)).map_err(Failure::usage)?)
        };
        bots.push(bot);
    }
    let state = game.new_game(n).map_err(|e| Failure::input(e.to_string()))?;
    let mut table = Table {
        game,
        state,
        humans,
        bots,
        chance: rng::seeded(seed),
        record: Record::default(),
        seed,
        out_file: args.record,
        sets: crate::common::all_sets(&args.common)?,
        bot_run: 0,
        max_bot_run: args.max_decisions,
    };
    crate::outln!("{} - {} players, seed {seed}", table.game.variant().title, n);
    let seats: Vec<String> = (0..n)
        .map(|s| match &table.bots[s] {
            Some(b) => format!("P{}: {} bot", s + 1, b.name()),
            None => format!("P{}: human", s + 1),
        })
        .collect();
    crate::outln!("{}", seats.join(", "));
    crate::outln!("Type the number of an action or its text; 'help' lists commands.\n");
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let result = table.play(&mut input);
    table.finish()?;
    result
}

impl Table {
    fn play(&mut self, input: &mut impl BufRead) -> Result<(), Failure> {
        let mut shown_turn = None;
        loop {
            match self.state.to_move() {
                ToMove::Terminal => return Ok(()),
                ToMove::Chance => self.chance_step()?,
                ToMove::Decision(seat) if !self.humans[seat] => self.bot_step(seat)?,
                ToMove::Decision(seat) => {
                    let view = (self.state.core.turn, self.state.core.step, seat);
                    if shown_turn != Some(view) {
                        self.show(Some(seat));
                        shown_turn = Some(view);
                    }
                    if !self.human_step(seat, input)? {
                        return Ok(());
                    }
                }
            }
        }
    }

    fn fail(e: impl std::fmt::Display) -> Failure {
        Failure::input(e.to_string())
    }

    fn chance_step(&mut self) -> Result<(), Failure> {
        let o = self
            .game
            .sample_outcome(&self.state, &mut self.chance)
            .expect("chance has outcomes");
        let text = self.game.outcome_text(o);
        let secret = match self.state.core.chance.as_ref().map(|p| &p.source) {
            Some(ChanceSource::Deck {
                visible_to: Some(s), ..
            }) => Some(*s),
            _ => None,
        };
        match secret {
            Some(s) if !self.humans[s] || self.humans.iter().filter(|h| **h).count() > 1 => {
                crate::outln!("  chance: a secret card for P{}", s + 1)
            }
            Some(s) => crate::outln!("  chance: your card (P{}) is {text}", s + 1),
            None => crate::outln!("  chance: {text}"),
        }
        self.record.chance(text);
        self.game.apply_outcome(&mut self.state, o).map_err(Self::fail)
    }

    fn bot_step(&mut self, seat: usize) -> Result<(), Failure> {
        let legal = self.game.legal_actions(&self.state).map_err(Self::fail)?;
        if self.bot_run >= self.max_bot_run {
            return Err(Failure::input(format!(
                "{} (bots only since the last human decision; the record so far follows)",
                rulesmith_lab::sim::endless_game(self.max_bot_run, self.state.core.turn)
            )));
        }
        self.bot_run += 1;
        let bot = self.bots[seat].as_mut().expect("a non-human seat has a bot");
        let a = legal[bot.choose(&self.game, &self.state, &legal).map_err(Self::fail)?];
        let text = self.game.action_text(&a);
        crate::outln!("P{} ({}): {text}", seat + 1, bot.name());
        self.record.decision(seat, text);
        self.game.apply_trusted(&mut self.state, a).map_err(Self::fail)
    }

    /// One human decision; false when the player quits or input ends.
    fn human_step(&mut self, seat: usize, input: &mut impl BufRead) -> Result<bool, Failure> {
        let legal = self.game.legal_actions(&self.state).map_err(Self::fail)?;
        crate::outln!("P{} to decide ({}):", seat + 1, self.game.step_name(&self.state));
        let width = legal.len().to_string().len();
        for (i, a) in legal.iter().enumerate() {
            crate::outln!("  {:>width$}) {}", i + 1, self.game.action_text(a));
        }
        loop {
            crate::out!("P{}> ", seat + 1);
            let _ = std::io::stdout().flush();
            let mut line = String::new();
            if input.read_line(&mut line).map_err(Self::fail)? == 0 {
                crate::outln!();
                return Ok(false);
            }
            let line = line.trim();
            let chosen = match line {
                "" => continue,
                "quit" | "exit" => return Ok(false),
                "help" => {
                    crate::outln!("  a number or an action's text: play it");
                    crate::outln!("  board: show the board   record: show the record so far");
                    crate::outln!("  save: write the record (--record FILE)   quit: stop");
                    continue;
                }
                "board" => {
                    self.show(Some(seat));
                    continue;
                }
                "record" => {
                    crate::out!("{}", self.record.to_text(&[]));
                    continue;
                }
                "save" => {
                    self.save()?;
                    continue;
                }
                _ => match line.parse::<usize>() {
                    Ok(k) if (1..=legal.len()).contains(&k) => legal[k - 1],
                    Ok(_) => {
                        crate::outln!("  choose 1..{}", legal.len());
                        continue;
                    }
                    Err(_) => match self.game.parse_action(line) {
                        Some(a) if legal.contains(&a) => a,
                        Some(a) => {
                            crate::outln!("  '{}' is not legal now", self.game.action_text(&a));
                            continue;
                        }
                        None => {
                            crate::outln!("  '{line}' is not an action of this game; type a number from the list");
                            continue;
                        }
                    },
                },
            };
            let text = self.game.action_text(&chosen);
            self.bot_run = 0;
            self.record.decision(seat, text);
            self.game.apply_trusted(&mut self.state, chosen).map_err(Self::fail)?;
            return Ok(true);
        }
    }

    fn show(&self, viewer: Option<usize>) {
        let viewer = if self.humans.iter().filter(|h| **h).count() > 1 {
            viewer
        } else {
            self.humans.iter().position(|h| *h)
        };
        match self.game.render(&self.state, viewer) {
            Ok(board) => crate::outln!(
                "\nTurn {} - P{} active\n{board}",
                self.state.core.turn,
                self.state.core.active.map_or(0, |a| a + 1)
            ),
            Err(e) => crate::outln!("(the board cannot be drawn: {e})"),
        }
    }

    /// Comment lines that let `rulesmith replay` set the game up again.
    fn header(&self) -> Vec<String> {
        let mut header = vec![
            format!("{} - seed {}", self.game.variant().name, self.seed),
            format!("players: {}", self.state.core.seats),
        ];
        header.extend(self.sets.iter().map(|s| format!("set: {s}")));
        header
    }

    fn save(&self) -> Result<(), Failure> {
        let Some(path) = &self.out_file else {
            crate::outln!("  no --record FILE was given; 'record' shows the record");
            return Ok(());
        };
        std::fs::write(path, self.record.to_text(&self.header()))
            .map_err(|e| Failure::input(format!("{}: cannot write record: {e}", path.display())))?;
        crate::outln!("  record written to {}", path.display());
        Ok(())
    }

    fn finish(&self) -> Result<(), Failure> {
        if self.state.is_terminal() {
            self.show(None);
            match self.state.status() {
                Status::Won(s) => crate::outln!("P{} wins after {} turns.", s + 1, self.state.core.turn),
                Status::Draw => crate::outln!("Draw after {} turns.", self.state.core.turn),
                Status::Ongoing => {}
            }
        }
        if self.out_file.is_some() {
            self.save()
        } else {
            crate::outln!("\nGame record:\n{}", self.record.to_text(&self.header()));
            Ok(())
        }
    }
}
