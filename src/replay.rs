//! `rulesmith replay VARIANT RECORD`: replay a game record; print the state
//! reached as JSON, or the legal actions of the next decision, or a world
//! drawn for one seat (`--determinize`, which reproduces a bot's failure).

use crate::common::{load_game, parse_seat, players, VariantArgs};
use crate::Failure;
use rulesmith_core::error::clip;
use rulesmith_core::{record, ToMove};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The variant folder (or its variant.toml).
    pub variant: PathBuf,
    /// The game record (one entry per line; `-` reads standard input).
    pub record: PathBuf,
    /// Number of players (default: the variant's default).
    #[arg(long)]
    pub players: Option<usize>,
    /// Print the legal actions of the next decision instead, one per line.
    #[arg(long)]
    pub legal: bool,
    /// Also check the variant's invariants on the state reached; exit 1 if
    /// one does not hold (shows a `rulesmith fuzz` finding).
    #[arg(long, conflicts_with = "legal")]
    pub check: bool,
    /// Print the summary as this seat sees it (e.g. P2).
    #[arg(long, value_name = "SEAT")]
    pub view: Option<String>,
    /// Draw a world for this seat (e.g. P2) from the state reached, as its
    /// bot would: print the world's summary as the seat sees it, or, when
    /// no world fits what it has seen, the step of the history where the
    /// worlds tried stopped fitting and why (exit 1).
    #[arg(long, value_name = "SEAT", conflicts_with_all = ["legal", "check", "view"])]
    pub determinize: Option<String>,
    /// The generator's seed for --determinize.
    #[arg(long, default_value_t = 0, requires = "determinize")]
    pub seed: u64,
    #[command(flatten)]
    pub common: VariantArgs,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let text = if args.record.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())
            .map_err(|e| Failure::input(format!("cannot read standard input: {e}")))?
    } else {
        std::fs::read_to_string(&args.record)
            .map_err(|e| Failure::input(format!("{}: cannot read record: {e}", args.record.display())))?
    };
    let text = crate::common::without_bom(text);
    // The record's own `# set:` and `# players:` lines, then the command line.
    let common = crate::common::record_overrides(&text, &args.record, &args.common);
    let game = load_game(&args.variant, &common)?;
    // A bad `# players:` line is the record's fault (exit 1, at its line);
    // the command line's `--players` wins over it.
    if args.players.is_none() {
        if let Some((line, p)) = header_line(&text, "players") {
            let range = game.variant().players;
            let at = format!("{}:{line}: '# players: {}'", args.record.display(), clip(p));
            match p.parse::<usize>() {
                Ok(n) if (range.min..=range.max).contains(&n) => {}
                Ok(_) => {
                    return Err(Failure::input(format!(
                        "{at}: variant '{}' takes {} to {} players",
                        game.variant().name,
                        range.min,
                        range.max
                    )))
                }
                Err(_) => return Err(Failure::input(format!("{at}: expected a number of players"))),
            }
        }
    }
    let from_header = header_line(&text, "players").and_then(|(_, p)| p.parse::<usize>().ok());
    let n = players(&game, args.players.or(from_header))?;
    let viewer = args.view.as_deref().map(|v| parse_seat(v, n)).transpose()?;
    let state = record::replay(&game, n, &text, &args.record).map_err(|e| Failure::input(e.to_string()))?;
    if let Some(seat) = args.determinize.as_deref() {
        let seat = parse_seat(seat, n)?;
        let mut rng = rulesmith_core::rng::seeded(args.seed);
        let world = game.determinize(&state, Some(seat), &mut rng).map_err(|e| {
            Failure::input(format!(
                "{}: no world fits what P{} has seen (seed {}): {e}",
                args.record.display(),
                seat + 1,
                args.seed
            ))
        })?;
        let summary = game
            .summary(&world, Some(seat))
            .map_err(|e| Failure::input(e.to_string()))?;
        crate::outln!(
            "{}",
            serde_json::to_string_pretty(&summary).expect("JSON values always serialize")
        );
        crate::outln!("a world fits what P{} has seen (seed {})", seat + 1, args.seed);
        return Ok(());
    }
    if args.legal {
        if let ToMove::Decision(_) = state.to_move() {
            let legal = game.legal_actions(&state).map_err(|e| Failure::input(e.to_string()))?;
            for a in &legal {
                crate::outln!("{}", game.action_text(a));
            }
        }
        return Ok(());
    }
    let summary = game
        .summary(&state, viewer)
        .map_err(|e| Failure::input(e.to_string()))?;
    crate::outln!(
        "{}",
        serde_json::to_string_pretty(&summary).expect("JSON values always serialize")
    );
    if args.check {
        let broken = game
            .broken_invariants(&state)
            .map_err(|e| Failure::input(e.to_string()))?;
        if !broken.is_empty() {
            let lines: Vec<String> = broken
                .iter()
                .map(|(name, msg)| format!("invariant '{name}' does not hold: {msg}"))
                .collect();
            return Err(Failure::input(lines.join("\n")));
        }
        crate::outln!("every invariant holds");
    }
    Ok(())
}

/// The first `# KEY: VALUE` header line of a record: its number (1-based)
/// and value.
fn header_line<'a>(text: &'a str, key: &str) -> Option<(usize, &'a str)> {
    text.lines().enumerate().find_map(|(i, l)| {
        let v = record::header_values(l, key).into_iter().next()?;
        Some((i + 1, v))
    })
}
