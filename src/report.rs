//! The HTML report of `rulesmith simulate --report`: one self-contained
//! file (inline CSS and SVG, no script, nothing fetched), readable offline
//! and easy to attach to a design discussion.
//!
//! The charts are a few rectangles and lines each, written directly as SVG:
//! a plotting crate would bring fonts and features this does not need.

use rulesmith_lab::sim::{Distribution, Rate, Summary};
use std::collections::BTreeMap;
use std::fmt::Write as _;

pub struct ReportInput<'a> {
    pub title: &'a str,
    pub variant: &'a str,
    pub command: &'a str,
    /// The parameter overrides in force (`KEY=VALUE`).
    pub sets: &'a [String],
    pub summary: &'a Summary,
    /// The game records written beside the report (`simulate --records`).
    pub records: Option<&'a RecordLinks>,
}

/// Per label, per value, the first games that ended with it: their numbers
/// (1-based) and their records' file names.
pub type LabelExamples = BTreeMap<String, BTreeMap<String, Vec<(u64, String)>>>;

/// What the report links to in a folder of game records.
pub struct RecordLinks {
    /// The folder, as a link from the report's own folder.
    pub href: String,
    pub examples: LabelExamples,
}

/// Games linked per label value.
pub const EXAMPLES: usize = 3;

/// A link to a file in a records folder.
fn record_link(links: &RecordLinks, game: u64, file: &str) -> String {
    format!("<a href=\"{}/{}\">game {game}</a>", esc(&links.href), esc(file))
}

/// Links to the first games that gave `label` each of its values.
fn label_examples(body: &mut String, links: &RecordLinks, label: &str) {
    let Some(values) = links.examples.get(label) else {
        return;
    };
    body.push_str("<p class=\"games\">Game records: ");
    let parts: Vec<String> = values
        .iter()
        .map(|(value, games)| {
            let games: Vec<String> = games.iter().map(|(n, f)| record_link(links, *n, f)).collect();
            format!("<em>{}</em>: {}", esc(value), games.join(", "))
        })
        .collect();
    body.push_str(&parts.join("; "));
    body.push_str("</p>");
}

/// Escapes text for HTML.
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The key table's row for decisions a bot took on loose worlds (none
/// when every decision found a world that fits what its seat saw).
fn loose_row(s: &Summary) -> String {
    crate::simulate::loose_worlds_text(s).map_or(String::new(), |text| {
        format!("<tr><th>no world</th><td>{}</td></tr>", esc(&text))
    })
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

const WIDTH: f64 = 640.0;
const LABEL: f64 = 150.0;
const ROW: f64 = 26.0;
/// Width of one character of a 12px label, generously.
const CHAR: f64 = 7.0;

/// The width of a chart's label column: room for its longest label, and
/// at least [`LABEL`].
fn label_width<'a>(names: impl Iterator<Item = &'a str>) -> f64 {
    names
        .map(|n| n.chars().count() as f64 * CHAR + 14.0)
        .fold(LABEL, f64::max)
}

/// Horizontal bars of rates (0..1) with their 95% intervals as whiskers,
/// and a dashed line at `reference` (e.g. the fair share).
fn rate_chart(rows: &[(String, Rate)], reference: Option<f64>) -> String {
    let h = ROW * rows.len() as f64 + 30.0;
    let lw = label_width(rows.iter().map(|r| r.0.as_str()));
    let width = WIDTH.max(lw + 300.0);
    let plot = width - lw - 70.0;
    let x = |v: f64| lw + v.clamp(0.0, 1.0) * plot;
    let mut s = format!(r#"<svg viewBox="0 0 {width} {h}" width="{width}" height="{h}" role="img">"#);
    for (i, (name, r)) in rows.iter().enumerate() {
        let y = 10.0 + i as f64 * ROW;
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text><rect x="{lw}" y="{}" width="{:.1}" height="14" class="bar"/><line x1="{:.1}" x2="{:.1}" y1="{}" y2="{}" class="ci"/><line x1="{:.1}" x2="{:.1}" y1="{}" y2="{}" class="ci"/><line x1="{:.1}" x2="{:.1}" y1="{}" y2="{}" class="ci"/><text x="{:.1}" y="{}">{}</text>"#,
            lw - 8.0,
            y + 12.0,
            esc(name),
            y,
            x(r.rate) - lw,
            x(r.low),
            x(r.high),
            y + 7.0,
            y + 7.0,
            x(r.low),
            x(r.low),
            y + 2.0,
            y + 12.0,
            x(r.high),
            x(r.high),
            y + 2.0,
            y + 12.0,
            x(1.0) + 6.0,
            y + 12.0,
            pct(r.rate)
        );
    }
    if let Some(v) = reference {
        let _ = write!(
            s,
            r#"<line x1="{0:.1}" x2="{0:.1}" y1="4" y2="{1}" class="ref"/>"#,
            x(v),
            h - 22.0
        );
    }
    for t in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{}" text-anchor="middle" class="axis">{}</text>"#,
            x(t),
            h - 6.0,
            pct(t)
        );
    }
    s.push_str("</svg>");
    s
}

/// Round tick values from 0 to at least `max`: 1, 2 or 5 times a power of
/// ten apart, about five of them.
fn ticks(max: f64) -> Vec<f64> {
    let max = max.max(1.0);
    let raw = max / 5.0;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * power)
        .max(1.0);
    let mut out = vec![0.0];
    while *out.last().expect("not empty") < max {
        out.push(out.len() as f64 * step);
    }
    out
}

/// A histogram of a distribution's bins, with a y axis of games.
fn histogram(d: &Distribution, unit: &str) -> String {
    let h = 220.0;
    let (top, bottom, left) = (10.0, 40.0, 50.0);
    let plot_h = h - top - bottom;
    let tallest = d.histogram.iter().map(|b| b.2).max().unwrap_or(1).max(1) as f64;
    let ticks = ticks(tallest);
    let max = *ticks.last().expect("ticks start at 0");
    let n = d.histogram.len().max(1) as f64;
    let bw = (WIDTH - left - 20.0) / n;
    let y = |v: f64| top + plot_h - plot_h * v / max;
    let mut s = format!(r#"<svg viewBox="0 0 {WIDTH} {h}" width="{WIDTH}" height="{h}" role="img">"#);
    let _ = write!(
        s,
        r#"<line x1="{left}" x2="{left}" y1="{top}" y2="{:.1}" class="yaxis"/>"#,
        top + plot_h
    );
    for t in &ticks {
        let _ = write!(
            s,
            r#"<line x1="{:.1}" x2="{left}" y1="{y:.1}" y2="{y:.1}" class="yaxis"/><line x1="{left}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" class="grid"/><text x="{:.1}" y="{:.1}" text-anchor="end" class="axis">{t:.0}</text>"#,
            left - 4.0,
            WIDTH - 20.0,
            left - 6.0,
            y(*t) + 4.0,
            y = y(*t)
        );
    }
    let _ = write!(
        s,
        r#"<text x="12" y="{:.1}" transform="rotate(-90 12 {:.1})" text-anchor="middle" class="axis">games</text>"#,
        top + plot_h / 2.0,
        top + plot_h / 2.0
    );
    for (i, (lo, hi, count)) in d.histogram.iter().enumerate() {
        let bh = plot_h * *count as f64 / max;
        let x = left + i as f64 * bw;
        let _ = write!(
            s,
            r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" class="bar"><title>{lo:.0}-{hi:.0} {unit}: {count} games</title></rect>"#,
            x + 1.0,
            top + plot_h - bh,
            (bw - 2.0).max(1.0),
            bh
        );
        if i % 2 == 0 {
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{}" text-anchor="middle" class="axis">{lo:.0}</text>"#,
                x,
                h - bottom + 16.0
            );
        }
    }
    let _ = write!(
        s,
        r#"<text x="{left}" y="{}" class="axis">{unit} (x) against games (y); mean {:.1}, median {:.0}</text></svg>"#,
        h - 6.0,
        d.mean,
        d.median
    );
    s
}

/// Bars of plain numbers (the counters per game).
fn value_chart(rows: &[(String, f64)]) -> String {
    let h = ROW * rows.len() as f64 + 10.0;
    let lw = label_width(rows.iter().map(|r| r.0.as_str()));
    let width = WIDTH.max(lw + 300.0);
    let plot = width - lw - 80.0;
    let max = rows.iter().map(|r| r.1).fold(0.0, f64::max).max(1e-9);
    let mut s = format!(r#"<svg viewBox="0 0 {width} {h}" width="{width}" height="{h}" role="img">"#);
    for (i, (name, v)) in rows.iter().enumerate() {
        let y = 6.0 + i as f64 * ROW;
        let _ = write!(
            s,
            r#"<text x="{}" y="{}" text-anchor="end">{}</text><rect x="{lw}" y="{y}" width="{:.1}" height="14" class="bar"/><text x="{:.1}" y="{}">{v:.2}</text>"#,
            lw - 8.0,
            y + 12.0,
            esc(name),
            plot * v / max,
            lw + plot * v / max + 6.0,
            y + 12.0
        );
    }
    s.push_str("</svg>");
    s
}

/// For a label whose values name cards: per card, the games it was dealt
/// in, how many of them the label named it (won, for the winner's card),
/// and that rate with its 95% interval.
fn card_table(body: &mut String, s: &Summary, label: &str) {
    let rows: Vec<_> = s.card_labels.iter().filter(|c| c.label == label).collect();
    if rows.is_empty() {
        return;
    }
    let _ = write!(
        body,
        "<p>Per card: the games it was dealt in, how many of them had it as <em>{}</em>, and that rate with its 95% interval.</p>\
         <table class=\"cards\"><tr><th>card</th><th>games</th><th>wins</th><th>win rate</th><th>95% interval</th></tr>",
        esc(label)
    );
    for c in rows {
        let _ = write!(
            body,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} - {}</td></tr>",
            esc(&c.card),
            c.wins.of,
            c.wins.count,
            pct(c.wins.rate),
            pct(c.wins.low),
            pct(c.wins.high)
        );
    }
    body.push_str("</table>");
}

/// What a label's bars are a share of: the games that gave the label a
/// value (one value per game), out of all the games.
fn label_share_text(total: u64, games: u64) -> String {
    let of = if total == games {
        format!("all {games} games")
    } else {
        format!("the {total} games that gave this label a value ({games} games in all)")
    };
    format!("Bars: the share of {of} that ended with each value; whiskers: 95% confidence interval.")
}

pub fn html(input: &ReportInput) -> String {
    let s = input.summary;
    let mut body = String::new();
    let first_player = if s.first_player.of == 0 {
        format!("- ({})", esc(crate::simulate::no_first_player_figure(s)))
    } else {
        format!(
            "{} [{}, {}] of {} decided games (fair share {}, advantage {:+.1} points)",
            pct(s.first_player.rate),
            pct(s.first_player.low),
            pct(s.first_player.high),
            s.first_player.of,
            pct(1.0 / s.players as f64),
            100.0 * s.first_player_advantage
        )
    };
    let _ = write!(
        body,
        "<h1>{}</h1><p class=\"meta\">{} games, {} players &middot; <code>{}</code></p><p class=\"meta\">parameters: {}</p>",
        esc(input.title),
        s.games,
        s.players,
        esc(input.command),
        esc(&crate::simulate::sets_text(input.sets))
    );
    if let Some(links) = input.records {
        let _ = write!(
            body,
            "<p class=\"meta\">game records: <a href=\"{0}/\">{0}/</a> (open one with <code>rulesmith view</code>); each label below links its first games of every value</p>",
            esc(&links.href)
        );
    }
    let _ = write!(
        body,
        "<table class=\"key\"><tr><th>draws</th><td>{} [{}, {}]</td></tr><tr><th>decisiveness</th><td>{}</td></tr>\
         <tr><th>first player wins</th><td>{}</td></tr>\
         <tr><th>balance</th><td>{:.2} (1 = every seat wins equally often)</td></tr>\
         <tr><th>turns</th><td>mean {:.1}, median {:.0}, 10%-90% {:.0}-{:.0}</td></tr>\
         <tr><th>decisions</th><td>mean {:.1}, median {:.0}, 10%-90% {:.0}-{:.0}</td></tr>{}</table>",
        pct(s.draws.rate),
        pct(s.draws.low),
        pct(s.draws.high),
        pct(s.decisiveness),
        first_player,
        s.balance,
        s.turns.mean,
        s.turns.median,
        s.turns.p10,
        s.turns.p90,
        s.decisions.mean,
        s.decisions.median,
        s.decisions.p10,
        s.decisions.p90,
        loose_row(s)
    );
    let seats: Vec<(String, Rate)> = s.seats.iter().map(|x| (x.seat.clone(), x.wins)).collect();
    let bots: Vec<(String, Rate)> = s.bots.iter().map(|b| (b.bot.clone(), b.wins)).collect();
    let fair = Some(1.0 / s.players as f64);
    let _ = write!(
        body,
        "<h2>Win rate per seat</h2><p>Bars: win rate; whiskers: 95% confidence interval; dashed: fair share.</p>{}",
        rate_chart(&seats, fair)
    );
    let _ = write!(body, "<h2>Win rate per bot</h2>{}", rate_chart(&bots, fair));
    let bot_seats: Vec<(String, Rate)> = s.bot_seats.iter().map(|b| (b.bot.clone(), b.wins)).collect();
    let _ = write!(
        body,
        "<h2>Win rate per bot and seat</h2><p>Each bot at each seat it played: the games it played there and the share it won, so that a seat's advantage and a bot's strength are not mixed up.</p>{}",
        rate_chart(&bot_seats, fair)
    );
    if !s.scores.is_empty() {
        body.push_str("<h2>Scores</h2><p>The variant's declared scores: mean per seat and per bot, with the 95% confidence interval of the mean.</p><table><tr><th></th><th>games</th><th>mean</th><th>95% CI</th><th>sd</th><th>range</th></tr>");
        for x in s.scores.iter().chain(&s.bot_scores) {
            let _ = write!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{:+.2}</td><td>{:+.2} to {:+.2}</td><td>{:.2}</td><td>{} to {}</td></tr>",
                esc(&x.who),
                x.games,
                x.mean,
                x.low,
                x.high,
                x.stdev,
                x.min,
                x.max
            );
        }
        body.push_str("</table>");
        if let Some(m) = &s.margins {
            let _ = write!(
                body,
                "<h3>Margin of victory</h3><p>The best score minus the second best, per game.</p>{}",
                histogram(m, "points")
            );
        }
    }
    let _ = write!(
        body,
        "<h2>Game length</h2><h3>Turns</h3>{}",
        histogram(&s.turns, "turns")
    );
    let _ = write!(body, "<h3>Decisions</h3>{}", histogram(&s.decisions, "decisions"));
    if !s.counters.is_empty() {
        let rows: Vec<(String, f64)> = s.counters.iter().map(|c| (c.name.clone(), c.per_game)).collect();
        let _ = write!(body, "<h2>Declared statistics (per game)</h2>{}<table><tr><th>counter</th><th>total</th><th>per game</th><th>games with it</th><th>meaning</th></tr>", value_chart(&rows));
        for c in &s.counters {
            let _ = write!(
                body,
                "<tr><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td></tr>",
                esc(&c.name),
                c.total,
                c.per_game,
                pct(c.games as f64 / s.games.max(1) as f64),
                esc(&c.doc)
            );
        }
        body.push_str("</table>");
    }
    for (label, values) in &s.labels {
        let total: u64 = values.values().sum();
        let rows: Vec<(String, Rate)> = values.iter().map(|(v, n)| (v.clone(), Rate::new(*n, total))).collect();
        let _ = write!(
            body,
            "<h2>{}</h2><p>{}</p>{}",
            esc(label),
            label_share_text(total, s.games),
            rate_chart(&rows, None)
        );
        if let Some(links) = input.records {
            label_examples(&mut body, links, label);
        }
        card_table(&mut body, s, label);
    }
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{} - Rulesmith report</title><style>{CSS}</style></head><body>{body}<p class=\"meta\">Variant {} &middot; made by rulesmith {}</p></body></html>\n",
        esc(input.title),
        esc(input.variant),
        env!("CARGO_PKG_VERSION")
    )
}

pub(crate) const CSS: &str = "body{font-family:system-ui,sans-serif;max-width:720px;margin:2em auto;color:#222}\
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em}\
svg{font-size:12px;display:block;margin:.5em 0;max-width:100%;height:auto}.bar{fill:#4a78b5}.ci{stroke:#111;stroke-width:1.5}\
.ref{stroke:#c33;stroke-dasharray:4 3}.axis{fill:#666;font-size:11px}\
.yaxis{stroke:#666}.grid{stroke:#ddd;stroke-width:.5}\
table{border-collapse:collapse;margin:.5em 0}td,th{padding:.2em .6em;border-bottom:1px solid #ddd;text-align:left}\
.meta{color:#666;font-size:.9em}code{font-size:.85em}";
