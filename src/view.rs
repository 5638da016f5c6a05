//! `rulesmith view VARIANT RECORD -o game.html`: a replay viewer. Replays
//! the record step by step with the engine and writes one self-contained
//! HTML page (inline CSS and script, the frames embedded as JSON, nothing
//! fetched) that steps through the game: the board, the line taken, the
//! legal actions, the summary, as the referee or any seat sees them.
//!
//! Every frame is computed here; the page only displays. Text reaches the
//! page only as JSON and is set with `textContent`, never as HTML.

use crate::common::{record_game, VariantArgs};
use crate::Failure;
use rulesmith_core::record::{self, Entry};
use rulesmith_core::state::PendingChance;
use rulesmith_core::{Game, State, ToMove};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// The variant folder (or its variant.toml).
    pub variant: PathBuf,
    /// The game record (one entry per line; `-` reads standard input).
    pub record: PathBuf,
    /// The HTML file to write.
    #[arg(short = 'o', long = "out", value_name = "FILE.html")]
    pub out: PathBuf,
    /// Number of players (default: the record's `# players:` header, else
    /// the variant's default).
    #[arg(long)]
    pub players: Option<usize>,
    #[command(flatten)]
    pub common: VariantArgs,
}

pub fn run(args: Args) -> Result<(), Failure> {
    crate::common::writable_file("--out", &args.out)?;
    let rg = record_game(&args.variant, &args.record, args.players, &args.common)?;
    let frames = frames(&rg.game, rg.players, &rg.text, &args.record)?;
    let variant = rg.game.variant();
    // The record's opening comments (before its first entry), minus the
    // headers shown on their own.
    let notes: Vec<String> = rg
        .text
        .lines()
        .map(str::trim)
        .take_while(|l| l.is_empty() || l.starts_with('#'))
        .filter_map(|l| l.strip_prefix('#').map(str::trim))
        .filter(|l| !l.is_empty() && !l.starts_with("players:") && !l.starts_with("set:"))
        .map(String::from)
        .collect();
    let data = json!({
        "title": variant.title,
        "variant": variant.name,
        "variant_path": args.variant.display().to_string(),
        "record": args.record.display().to_string(),
        "players": rg.players,
        "sets": rg.sets,
        "notes": notes,
        "legend": variant.legend.as_deref().map(str::trim_end),
        "frames": frames,
    });
    let html = page(&data);
    std::fs::write(&args.out, html)
        .map_err(|e| Failure::input(format!("{}: cannot write: {e}", args.out.display())))?;
    let decisions = frames.last().and_then(|f| f["decision"].as_u64()).unwrap_or(0);
    crate::outln!(
        "wrote {} ({} steps, {} decisions)",
        args.out.display(),
        frames.len() - 1,
        decisions
    );
    Ok(())
}

/// Replays the record one line at a time; one frame for the state after
/// setup, then one per record entry. Fails, naming the line, where the
/// record does not fit (as `rulesmith replay` does).
fn frames(game: &Game, players: usize, text: &str, file: &Path) -> Result<Vec<Value>, Failure> {
    let mut state = game
        .new_game(players)
        .map_err(|e| Failure::input(format!("{}:1: cannot start the game: {e}", file.display())))?;
    let located = |line: usize, e: &dyn std::fmt::Display| Failure::input(format!("{}:{line}: {e}", file.display()));
    let mut out = vec![frame(game, &state, 0, 0, None, None, Vec::new()).map_err(|e| located(1, &e))?];
    let mut decisions = 0;
    let mut last_line = 0;
    for (i, raw) in text.lines().enumerate() {
        let Some(line) = record::parse_line(i + 1, raw, file).map_err(|e| Failure::input(e.to_string()))? else {
            continue;
        };
        // Who may see this entry: a card dealt or a die rolled in secret,
        // or a secret decision, is seen by one seat.
        let secret_to = match (&line.entry, &state.core.chance) {
            (Entry::Decision { seat, .. }, None) if game.decision_is_secret(&state) => Some(*seat),
            (Entry::Chance(_), Some(PendingChance { source, .. })) => source.seen_by(),
            _ => None,
        };
        let told = told_while(game, || {
            record::apply_line(game, &mut state, &line, file).map_err(|e| Failure::input(e.to_string()))
        })?;
        let (text, seat) = match &line.entry {
            Entry::Decision { seat, action } => {
                decisions += 1;
                (format!("P{} {action}", seat + 1), Some(*seat))
            }
            Entry::Chance(x) => (format!("chance {x}"), None),
        };
        let f = frame(
            game,
            &state,
            out.len(),
            decisions,
            Some((line.number, text, seat)),
            secret_to,
            told,
        )
        .map_err(|e| located(line.number, &e))?;
        out.push(f);
        last_line = line.number;
    }
    if state.to_move() == ToMove::Chance {
        return Err(located(
            last_line.max(1),
            &format!(
                "the record ends while chance outcomes are still needed: {}",
                game.chance_expectation(&state)
            ),
        ));
    }
    Ok(out)
}

/// Runs `apply` on a watched game and returns what the rules narrated (the
/// dice and what they did, as `rulesmith play` tells them). The game is
/// unwatched again before the frame is drawn, so that boards stay the plain
/// picture (a watched render may label the mover's slots for `play`).
fn told_while(game: &Game, apply: impl FnOnce() -> Result<(), Failure>) -> Result<Vec<String>, Failure> {
    game.set_watched(true);
    let applied = apply();
    let told = game.take_narration();
    game.set_watched(false);
    applied.map(|()| told)
}

/// One frame: the state reached after `entry` (line number, text, seat),
/// with what the rules narrated on the way (`told`).
fn frame(
    game: &Game,
    state: &State,
    step: usize,
    decision: usize,
    entry: Option<(usize, String, Option<usize>)>,
    secret_to: Option<usize>,
    told: Vec<String>,
) -> Result<Value, rulesmith_core::GameError> {
    let (legal, mover) = match state.to_move() {
        ToMove::Decision(s) => (game.texts(&game.legal_actions(state)?), Some(s)),
        _ => (Vec::new(), None),
    };
    let mut views = Vec::new();
    for viewer in std::iter::once(None).chain((0..state.core.seats).map(Some)) {
        views.push(json!({
            "summary": game.summary(state, viewer)?,
            "render": game.render(state, viewer)?,
        }));
    }
    let (line, action, seat) = match entry {
        Some((l, t, s)) => (Some(l), Some(t), s),
        None => (None, None, None),
    };
    Ok(json!({
        "step": step,
        "decision": decision,
        "line": line,
        "action": action,
        "seat": seat.map(|s| format!("P{}", s + 1)),
        "secret_to": secret_to,
        "told": told,
        "turn": state.core.turn,
        "phase": game.step_name(state),
        "to_move": game.decision_expectation(state),
        "mover": mover,
        "legal": legal,
        "views": views,
    }))
}

/// JSON safe inside `<script type="application/json">`: no `<` (so no
/// `</script>` and no `<!--`), `>` or `&` appears literally. Those
/// characters occur only inside JSON strings, where `\u003c` means `<`.
fn embed(data: &Value) -> String {
    serde_json::to_string(data)
        .expect("JSON values always serialize")
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

fn page(data: &Value) -> String {
    format!(
        "{HEAD}<script type=\"application/json\" id=\"data\">{}</script>\n{BODY}",
        embed(data)
    )
}

const HEAD: &str = r##"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>Rulesmith replay</title>
<script>
// Collected from the first moment, for the #selftest report.
window.viewerErrors = [];
window.addEventListener("error", function (e) {
  window.viewerErrors.push(String(e.message || e.type) + (e.lineno ? " (line " + e.lineno + ")" : ""));
});
</script>
<style>
body { font-family: system-ui, sans-serif; margin: 1em 2em; color: #222; background: #fafafa; }
h1 { font-size: 1.3em; margin: 0 0 .3em 0; }
h2 { font-size: 1em; margin: .8em 0 .3em 0; }
#headers { display: grid; grid-template-columns: max-content auto; gap: .1em 1em; margin: 0 0 .8em 0; font-size: .9em; }
#headers dt { font-weight: bold; }
#headers dd { margin: 0; }
#controls { display: flex; flex-wrap: wrap; gap: .4em; align-items: center; padding: .5em; background: #eef; border-radius: 4px; }
#controls button { min-width: 3em; }
#position { margin-left: 1em; }
#jump { width: 5em; }
#jump-error { color: #a00; }
/* The board's column is as wide as the board needs, up to what the summary's
   column leaves; only a board wider than that scrolls. */
#main { display: grid; grid-template-columns: fit-content(calc(100% - 18em)) minmax(16em, 1fr); gap: 1em; margin-top: .8em; }
#legend { font-size: .85em; }
#told { font-family: ui-monospace, monospace; font-size: .9em; margin: .3em 0; padding-left: 1.5em; }
pre { background: #fff; border: 1px solid #ccc; padding: .5em; overflow: auto; margin: 0; }
#board { font-size: 1.05em; line-height: 1.2; }
#summary { max-height: 30em; font-size: .85em; }
#action { font-family: ui-monospace, monospace; font-weight: bold; font-size: 1.1em; }
#legal { font-family: ui-monospace, monospace; font-size: .85em; max-height: 22em; overflow: auto; margin: 0; padding-left: 2.5em; }
.muted { color: #666; }
#selftest:empty { display: none; }
</style>
</head>
<body>
"##;

const BODY: &str = r##"<h1 id="title">Rulesmith replay</h1>
<dl id="headers"></dl>
<div id="controls">
  <button id="first" title="first (Home)">&laquo; first</button>
  <button id="back" title="back (Left)">&lsaquo; back</button>
  <button id="forward" title="forward (Right)">forward &rsaquo;</button>
  <button id="last" title="last (End)">last &raquo;</button>
  <span id="position">step <span id="step">0</span> of <span id="total">0</span>, decision <span id="decision">0</span> of <span id="decisions">0</span></span>
  <label>decision <input id="jump" type="number" min="0" value="0"></label>
  <button id="go">go</button>
  <span id="jump-error"></span>
  <label>view as <select id="viewer"></select></label>
</div>
<div id="main">
  <div>
    <h2>Taken</h2>
    <div><span id="action"></span> <span id="action-note" class="muted"></span></div>
    <ul id="told"></ul>
    <div id="to-move" class="muted"></div>
    <h2>Board</h2>
    <pre id="board"></pre>
    <h2 id="legal-title">Legal actions</h2>
    <ol id="legal" start="1"></ol>
  </div>
  <div>
    <details id="legend-box" open><summary>Legend: how to read the board</summary>
    <pre id="legend"></pre></details>
    <h2>Summary</h2>
    <pre id="summary"></pre>
  </div>
</div>
<p class="muted">Keys: Home, Left, Right, End. Written by rulesmith view.</p>
<pre id="selftest"></pre>
<script>
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("data").textContent);
  var frames = data.frames;
  var last = frames.length - 1;
  var current = 0;
  var viewer = 0; // 0 = referee, k = seat Pk
  function el(id) { return document.getElementById(id); }
  function text(id, t) { el(id).textContent = t; }

  document.title = data.variant + " - " + data.record + " - Rulesmith replay";
  text("title", data.title + " (" + data.variant + ")");
  var headers = [
    ["variant", data.variant + " (" + data.variant_path + ")"],
    ["record", data.record],
    ["players", String(data.players)],
    ["set", data.sets.length ? data.sets.join(", ") : "(none)"]
  ];
  data.notes.forEach(function (n) { headers.push(["note", n]); });
  headers.forEach(function (h) {
    var dt = document.createElement("dt"); dt.textContent = h[0];
    var dd = document.createElement("dd"); dd.textContent = h[1];
    el("headers").appendChild(dt); el("headers").appendChild(dd);
  });
  var select = el("viewer");
  for (var k = 0; k <= data.players; k++) {
    var o = document.createElement("option");
    o.value = String(k);
    o.textContent = k === 0 ? "referee" : "P" + k;
    select.appendChild(o);
  }
  if (data.legend) {
    text("legend", data.legend);
  } else {
    text("legend", "(this variant has no legend)");
  }
  text("total", String(last));
  text("decisions", String(frames[last].decision));
  el("jump").max = String(frames[last].decision);

  function show() {
    var f = frames[current];
    var v = f.views[viewer];
    text("step", String(f.step));
    text("decision", String(f.decision));
    // A card dealt in secret, or a secret decision: only its seat (and the
    // referee) see which.
    var hidden = f.secret_to !== null && viewer !== 0 && viewer !== f.secret_to + 1;
    if (f.action === null) {
      text("action", "");
      text("action-note", "start of the game: the state after setup");
    } else if (hidden && f.seat) {
      text("action", f.seat + " ?");
      text("action-note", "a secret decision of " + f.seat + " (record line " + f.line + ")");
    } else if (hidden) {
      text("action", "chance ?");
      text("action-note", "a secret chance outcome (a card dealt or a die rolled) for P" + (f.secret_to + 1) + " (record line " + f.line + ")");
    } else {
      text("action", f.action);
      text("action-note", "record line " + f.line + (f.seat ? ", " + f.seat + "'s decision" : ", a chance outcome"));
    }
    // What the rules told of this step (dice, hits, ...); a secret step's
    // words are its seat's.
    var told = el("told");
    while (told.firstChild) { told.removeChild(told.firstChild); }
    (hidden ? (f.told.length ? ["(what happened is hidden from P" + viewer + ")"] : []) : f.told).forEach(function (t) {
      var li = document.createElement("li");
      li.textContent = t;
      told.appendChild(li);
    });
    el("jump").value = String(f.decision);
    text("to-move", "turn " + f.turn + ", step " + f.phase + ": " + f.to_move);
    text("board", v.render);
    text("summary", JSON.stringify(v.summary, null, 2));
    var list = el("legal");
    while (list.firstChild) { list.removeChild(list.firstChild); }
    if (f.mover === null) {
      text("legal-title", "Legal actions (none: no decision is due)");
    } else if (viewer !== 0 && viewer !== f.mover + 1) {
      text("legal-title", "Legal actions (P" + (f.mover + 1) + "'s choices, hidden from P" + viewer + ")");
    } else {
      text("legal-title", "Legal actions of P" + (f.mover + 1) + " (" + f.legal.length + ")");
      f.legal.forEach(function (a) {
        var li = document.createElement("li");
        li.textContent = a;
        list.appendChild(li);
      });
    }
    el("first").disabled = el("back").disabled = current === 0;
    el("forward").disabled = el("last").disabled = current === last;
  }
  function go(i) { current = Math.max(0, Math.min(last, i)); text("jump-error", ""); show(); }
  var nav = {
    first: function () { go(0); },
    back: function () { go(current - 1); },
    forward: function () { go(current + 1); },
    last: function () { go(last); }
  };
  // Decision n: the step at which the n-th decision was taken (0: the start).
  function jump() {
    var n = Number(el("jump").value);
    if (!Number.isInteger(n) || n < 0 || n > frames[last].decision) {
      text("jump-error", "no decision " + el("jump").value + " (0.." + frames[last].decision + ")");
      return;
    }
    for (var i = 0; i <= last; i++) {
      if (frames[i].decision === n) { go(i); return; }
    }
  }
  Object.keys(nav).forEach(function (id) { el(id).addEventListener("click", nav[id]); });
  el("go").addEventListener("click", jump);
  el("jump").addEventListener("keydown", function (e) { if (e.key === "Enter") { jump(); } });
  select.addEventListener("change", function () { viewer = Number(select.value); show(); });
  document.addEventListener("keydown", function (e) {
    if (e.target && (e.target.tagName === "INPUT" || e.target.tagName === "SELECT")) { return; }
    var keys = { Home: nav.first, ArrowLeft: nav.back, ArrowRight: nav.forward, End: nav.last };
    if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
  });
  // #step=N opens the page at step N.
  var m = /^#step=(\d+)$/.exec(location.hash);
  go(m ? Number(m[1]) : 0);
  window.rulesmithViewer = {
    nav: nav,
    go: go,
    shown: function () {
      var board = el("board");
      return {
        step: Number(el("step").textContent),
        action: el("action").textContent,
        decision_box: el("jump").value,
        told: Array.prototype.map.call(el("told").children, function (li) { return li.textContent; }),
        legend: el("legend").textContent,
        board_fits: board.scrollWidth <= board.clientWidth,
        board_text: board.textContent
      };
    },
    // The first step whose entry the rules told of (dice, say); 0 if none.
    firstTold: (function () {
      for (var i = 0; i <= last; i++) { if (frames[i].told.length) { return i; } }
      return 0;
    })(),
    steps: last
  };
})();
</script>
<script>
// #selftest: drive the page like a user and report what it showed, with
// every error collected since the page began to load. A separate script,
// so that it reports even when the viewer's own script failed.
if (location.hash === "#selftest") {
  window.addEventListener("load", function () {
    var seen = [];
    var v = window.rulesmithViewer;
    function act(after, f) {
      try {
        if (f) { f(); }
        var shown = v.shown();
        seen.push({ after: after, step: shown.step, action: shown.action, decision_box: shown.decision_box,
                    told: shown.told, legend: shown.legend, board_fits: shown.board_fits,
                    board_text: shown.board_text });
      } catch (e) {
        window.viewerErrors.push(after + ": " + e);
      }
    }
    if (v) {
      act("load");
      act("forward", v.nav.forward);
      act("forward", v.nav.forward);
      act("forward", v.nav.forward);
      act("back", v.nav.back);
      act("last", v.nav.last);
      act("first", v.nav.first);
      act("told", function () { v.go(v.firstTold); });
    } else {
      window.viewerErrors.push("the viewer did not start");
    }
    document.getElementById("selftest").textContent =
      JSON.stringify({ steps: v ? v.steps : null, seen: seen, errors: window.viewerErrors });
  });
}
</script>
</body>
</html>
"##;
