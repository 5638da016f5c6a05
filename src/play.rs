//! `rulesmith play VARIANT`: a game in the terminal, humans against bots or
//! hot-seat. The board is the variant's own picture (its render function),
//! explained by the variant's legend. Long lists of actions are grouped by
//! kind, so that the board and the choices fit on a terminal: the player
//! picks a kind then an action by number, types a label the board shows
//! (a letter on a slot), or types the action's text or a unique prefix of
//! it. What the rules narrate is printed and kept in the record as comments.

use crate::common::{load_game, parse_seat, players, VariantArgs};
use crate::Failure;
use rulesmith_core::record::Record;
use rulesmith_core::rng::{self, GameRng};
use rulesmith_core::state::Action;
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
    /// Chance outcomes not yet told (the rules narrate none so far).
    untold: Vec<String>,
    /// Bot decisions since a human last decided, and their bound.
    bot_run: u64,
    max_bot_run: u64,
    /// The seat of the last decision, and of the last human one (hot-seat
    /// hand-overs, redrawing after the others moved).
    last_decider: Option<usize>,
    last_human: Option<usize>,
}

/// Up to this many actions are listed one per line; more are grouped by kind.
const LIST_ALL: usize = 12;
/// Actions shown per page of a list.
const PAGE: usize = 12;

/// One numbered choice: an action, or a kind of action with its actions.
#[derive(Clone)]
enum Pick {
    Act(Action),
    Kind(u16, Vec<Action>),
}

pub fn run(args: Args) -> Result<(), Failure> {
    if let Some(path) = &args.record {
        crate::common::writable_file("--record", path)?;
    }
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
    game.set_watched(true);
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
        untold: Vec::new(),
        bot_run: 0,
        max_bot_run: args.max_decisions,
        last_decider: None,
        last_human: None,
    };
    crate::outln!("{} - {} players, seed {seed}", table.game.variant().title, n);
    let seats: Vec<String> = (0..n)
        .map(|s| match &table.bots[s] {
            Some(b) => format!("P{}: {} bot", s + 1, b.name()),
            None => format!("P{}: human", s + 1),
        })
        .collect();
    crate::outln!("{}", seats.join(", "));
    if let Some(legend) = &table.game.variant().legend {
        crate::outln!("{}", legend.trim_end());
    }
    crate::outln!(
        "Type the number of a choice, a letter shown on the board, or an action's text; 'help' lists commands.\n"
    );
    table.tell();
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
            if self.state.to_move() != ToMove::Chance {
                self.tell_untold();
            }
            match self.state.to_move() {
                ToMove::Terminal => {
                    if let Some(text) = self.game.scores_text(&self.state) {
                        self.record.note(text);
                    }
                    return Ok(());
                }
                ToMove::Chance => self.chance_step()?,
                ToMove::Decision(seat) if !self.humans[seat] => self.bot_step(seat)?,
                ToMove::Decision(seat) => {
                    if self.hands_over_to(seat) {
                        if !self.hand_over(seat, input)? {
                            return Ok(());
                        }
                        shown_turn = None;
                    }
                    let view = (self.state.core.turn, self.state.core.step, seat);
                    if shown_turn != Some(view) || self.others_decided_since(seat) {
                        self.show(Some(seat));
                        shown_turn = Some(view);
                    }
                    if !self.human_step(seat, input)? {
                        return Ok(());
                    }
                    self.last_human = Some(seat);
                }
            }
        }
    }

    /// Several humans share this terminal and another one decided last:
    /// the screen must be handed over before `seat` sees its own board.
    fn hands_over_to(&self, seat: usize) -> bool {
        self.humans.iter().filter(|h| **h).count() > 1 && self.last_human.is_some_and(|h| h != seat)
    }

    /// Clears the screen (what the last seat saw, its secrets included)
    /// and waits for the next seat's player to press Enter; false when the
    /// input ends or the player quits.
    fn hand_over(&self, seat: usize, input: &mut impl BufRead) -> Result<bool, Failure> {
        // ANSI: clear the screen and the scrollback, cursor home.
        crate::out!("\x1b[2J\x1b[3J\x1b[H");
        crate::out!(
            "P{} to play: pass the terminal to P{}, then press Enter ",
            seat + 1,
            seat + 1
        );
        let _ = std::io::stdout().flush();
        let mut line = String::new();
        if input.read_line(&mut line).map_err(Self::fail)? == 0 {
            crate::outln!();
            return Ok(false);
        }
        crate::outln!();
        Ok(!matches!(line.trim(), "quit" | "exit"))
    }

    /// Another seat decided since `seat`'s last decision, so the board it
    /// last saw is out of date (a setup where seats alternate on one step,
    /// a bot's reply).
    fn others_decided_since(&self, seat: usize) -> bool {
        self.last_decider.is_some_and(|d| d != seat)
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
        let source = self.state.core.chance.as_ref().map(|p| &p.source);
        let secret = source.and_then(ChanceSource::seen_by);
        let what = match source {
            Some(ChanceSource::Dice { .. }) => ("roll", "die"),
            _ => ("card", "card"),
        };
        match secret {
            Some(s) if !self.humans[s] || self.humans.iter().filter(|h| **h).count() > 1 => {
                crate::outln!("  chance: a secret {} for P{}", what.0, s + 1)
            }
            Some(s) => crate::outln!("  chance: your {} (P{}) is {text}", what.1, s + 1),
            None => self.untold.push(text.clone()),
        }
        self.record.chance(text);
        self.game.apply_outcome(&mut self.state, o).map_err(Self::fail)?;
        self.tell();
        Ok(())
    }

    /// Prints what the rules narrated since the last apply, and keeps it in
    /// the record as comments. Narrated chance needs no bare outcome line.
    fn tell(&mut self) {
        let lines = self.game.take_narration();
        if !lines.is_empty() {
            self.untold.clear();
        }
        for l in lines {
            crate::outln!("  {l}");
            self.record.note(l);
        }
    }

    /// Chance outcomes the rules did not narrate, as before: `chance: 5, 2`.
    fn tell_untold(&mut self) {
        if !self.untold.is_empty() {
            crate::outln!("  chance: {}", self.untold.join(", "));
            self.untold.clear();
        }
    }

    /// Applies a decision taken from the legal actions, tells what it did.
    fn decide(&mut self, seat: usize, a: Action) -> Result<(), Failure> {
        self.tell_untold();
        let text = self.game.action_text(&a);
        self.record.decision(seat, text);
        self.last_decider = Some(seat);
        // A bot's look-ahead narrates too: only this apply is told.
        self.game.take_narration();
        self.game.apply_trusted(&mut self.state, a).map_err(Self::fail)?;
        self.tell();
        Ok(())
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
        if self.game.decision_is_secret(&self.state) {
            // Hidden from the humans at the table until the rules reveal it
            // (the record, the referee's view, keeps it).
            crate::outln!("P{} ({}) decides in secret", seat + 1, bot.name());
        } else {
            let text = self.game.action_text(&a);
            crate::outln!("P{} ({}): {text}", seat + 1, bot.name());
        }
        self.decide(seat, a)
    }

    /// One human decision; false when the player quits or input ends.
    fn human_step(&mut self, seat: usize, input: &mut impl BufRead) -> Result<bool, Failure> {
        let legal = self.game.legal_actions(&self.state).map_err(Self::fail)?;
        let marks = match self.game.render_marked(&self.state, self.viewer(Some(seat))) {
            Ok((_, marks)) => marks,
            Err(_) => Vec::new(),
        };
        let top = self.menu_of(&legal);
        let mut menu = top.clone();
        let mut page = 0;
        crate::outln!("P{} to decide ({}):", seat + 1, self.game.step_name(&self.state));
        self.show_menu(&menu, page);
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
                "" => {
                    if (page + 1) * PAGE < menu.len() && menu.iter().all(|p| matches!(p, Pick::Act(_))) {
                        page += 1;
                        self.show_menu(&menu, page);
                    }
                    continue;
                }
                "quit" | "exit" => return Ok(false),
                "help" => {
                    if let Some(legend) = &self.game.variant().legend {
                        crate::outln!("{}", legend.trim_end());
                    }
                    crate::outln!("  a number: that choice (a kind of action lists its actions)");
                    if !marks.is_empty() {
                        crate::outln!("  a letter shown on the board: move there");
                    }
                    crate::outln!("  an action's text, or the start of it: play it");
                    crate::outln!("  Enter: next page   back: all choices   list: every legal action");
                    crate::outln!("  board: show the board   record: show the record so far");
                    crate::outln!("  save: write the record (--record FILE)   quit: stop");
                    continue;
                }
                "back" => {
                    menu = top.clone();
                    page = 0;
                    self.show_menu(&menu, page);
                    continue;
                }
                "list" => {
                    menu = legal.iter().map(|a| Pick::Act(*a)).collect();
                    page = 0;
                    self.show_menu(&menu, page);
                    continue;
                }
                "board" => {
                    self.show(Some(seat));
                    self.show_menu(&menu, page);
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
                _ => {
                    let found = match line.parse::<usize>() {
                        Ok(k) if (1..=menu.len()).contains(&k) => match &menu[k - 1] {
                            Pick::Act(a) => Ok(*a),
                            Pick::Kind(_, actions) => Err(actions.clone()),
                        },
                        Ok(_) => {
                            crate::outln!("  choose 1..{}", menu.len());
                            continue;
                        }
                        Err(_) => match self.find(line, &legal, &marks) {
                            Some(found) => found,
                            None => continue,
                        },
                    };
                    match found {
                        Ok(a) => a,
                        Err(actions) => {
                            menu = actions.into_iter().map(Pick::Act).collect();
                            page = 0;
                            self.show_menu(&menu, page);
                            continue;
                        }
                    }
                }
            };
            self.bot_run = 0;
            self.decide(seat, chosen)?;
            return Ok(true);
        }
    }

    /// What typed text means: one action (Ok), several to choose from (Err),
    /// or nothing (None, after saying why). A label from the board stands
    /// for the legal actions whose text holds the label's words; otherwise
    /// the text is an action, or the start of exactly one legal action.
    fn find(&self, line: &str, legal: &[Action], marks: &[(String, String)]) -> Option<Result<Action, Vec<Action>>> {
        let several = |v: Vec<Action>| match v.as_slice() {
            [one] => Ok(*one),
            _ => Err(v),
        };
        if let Some((_, text)) = marks.iter().find(|(label, _)| label == line) {
            let words: Vec<&str> = text.split_whitespace().collect();
            let fit: Vec<Action> = legal
                .iter()
                .filter(|a| {
                    let t = self.game.action_text(a);
                    let tw: Vec<&str> = t.split_whitespace().collect();
                    tw.windows(words.len()).any(|w| w == words.as_slice())
                })
                .copied()
                .collect();
            if fit.is_empty() {
                crate::outln!("  '{line}' ({text}) is not legal now");
                return None;
            }
            if fit.len() > 1 {
                crate::outln!("  {} ways to reach {line} ({text}): choose one", fit.len());
            }
            return Some(several(fit));
        }
        match self.game.parse_action(line) {
            Some(a) if legal.contains(&a) => return Some(Ok(a)),
            Some(a) => {
                crate::outln!("  '{}' is not legal now", self.game.action_text(&a));
                self.tell_nearest_legal(&a, legal);
                return None;
            }
            None => {}
        }
        let starting: Vec<Action> = legal
            .iter()
            .filter(|a| self.game.action_text(a).starts_with(line))
            .copied()
            .collect();
        if starting.is_empty() {
            crate::outln!("  '{line}' is not an action of this game; type a number from the list, or 'help'");
            return None;
        }
        if starting.len() > 1 {
            crate::outln!("  {} actions start with '{line}': choose one", starting.len());
        }
        Some(several(starting))
    }

    /// Why an action of the game is refused, as far as the legal list can
    /// say: the legal actions of its kind that share the most leading words
    /// with it (a fighter's legal moves when one of its moves is refused),
    /// or that no action of its kind is legal now.
    fn tell_nearest_legal(&self, refused: &Action, legal: &[Action]) {
        const SHOWN: usize = 8;
        let text = self.game.action_text(refused);
        let words: Vec<&str> = text.split_whitespace().collect();
        let same_kind: Vec<String> = legal
            .iter()
            .filter(|a| a.kind == refused.kind)
            .map(|a| self.game.action_text(a))
            .collect();
        if same_kind.is_empty() {
            crate::outln!("  (no '{}' action is legal now)", words.first().copied().unwrap_or(""));
            return;
        }
        let shared = |t: &String| t.split_whitespace().zip(&words).take_while(|(a, b)| a == *b).count();
        let best = same_kind.iter().map(shared).max().unwrap_or(0);
        let nearest: Vec<&String> = same_kind.iter().filter(|t| shared(t) == best).collect();
        let more = nearest.len().saturating_sub(SHOWN);
        let shown: Vec<&str> = nearest.iter().take(SHOWN).map(|t| t.as_str()).collect();
        crate::outln!(
            "  legal now instead: {}{}",
            shown.join(" | "),
            if more > 0 {
                format!(" (and {more} more)")
            } else {
                String::new()
            }
        );
    }

    /// The first choices: every action when there are few, else the kinds.
    fn menu_of(&self, legal: &[Action]) -> Vec<Pick> {
        if legal.len() <= LIST_ALL {
            return legal.iter().map(|a| Pick::Act(*a)).collect();
        }
        let mut kinds: Vec<(u16, Vec<Action>)> = Vec::new();
        for a in legal {
            match kinds.iter_mut().find(|(k, _)| *k == a.kind) {
                Some((_, v)) => v.push(*a),
                None => kinds.push((a.kind, vec![*a])),
            }
        }
        kinds
            .into_iter()
            .map(|(k, v)| match v.as_slice() {
                [one] => Pick::Act(*one),
                _ => Pick::Kind(k, v),
            })
            .collect()
    }

    /// Kinds on a few lines; actions one per line, a page at a time.
    fn show_menu(&self, menu: &[Pick], page: usize) {
        if menu.iter().any(|p| matches!(p, Pick::Kind(..))) {
            let mut line = String::new();
            for (i, p) in menu.iter().enumerate() {
                let item = match p {
                    Pick::Act(a) => format!("  {}) {}", i + 1, self.game.action_text(a)),
                    Pick::Kind(k, v) => format!(
                        "  {}) {} ({})",
                        i + 1,
                        self.game.variant().actions[*k as usize].template.name.replace('_', " "),
                        v.len()
                    ),
                };
                if line.len() + item.len() > 78 && !line.is_empty() {
                    crate::outln!("{line}");
                    line.clear();
                }
                line += &item;
            }
            crate::outln!("{line}");
            return;
        }
        let width = menu.len().to_string().len();
        let from = page * PAGE;
        for (i, p) in menu.iter().enumerate().skip(from).take(PAGE) {
            if let Pick::Act(a) = p {
                crate::outln!("  {:>width$}) {}", i + 1, self.game.action_text(a));
            }
        }
        let rest = menu.len().saturating_sub(from + PAGE);
        if rest > 0 {
            crate::outln!("  ... {rest} more: Enter for the next page");
        }
    }

    /// Whose view the board shows: the seat deciding in hot-seat play, the
    /// human's otherwise.
    fn viewer(&self, seat: Option<usize>) -> Option<usize> {
        if self.humans.iter().filter(|h| **h).count() > 1 {
            seat
        } else {
            self.humans.iter().position(|h| *h)
        }
    }

    fn show(&self, viewer: Option<usize>) {
        let viewer = self.viewer(viewer);
        let core = &self.state.core;
        let title = match (core.active, core.actor) {
            (Some(a), _) => format!("Turn {} - P{} active", core.turn, a + 1),
            // Rounds: turns with no active seat.
            (None, Some(s)) if core.turn > 0 => {
                format!(
                    "Round {} - P{} to {}",
                    core.turn,
                    s + 1,
                    self.game.step_name(&self.state)
                )
            }
            (None, Some(s)) => format!("Setup - P{} to {}", s + 1, self.game.step_name(&self.state)),
            (None, None) => "Setup".to_string(),
        };
        match self.game.render(&self.state, viewer) {
            Ok(board) => crate::outln!("\n{title}\n{board}"),
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
            if let Some(text) = self.game.scores_text(&self.state) {
                crate::outln!("Final {text}.");
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
