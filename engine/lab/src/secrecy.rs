//! Whether a secret decision shows before the rules reveal it.
//!
//! A step declared `secret` (with `actor = "every"`: a round of
//! simultaneous decisions) hides each seat's choice from the others until
//! `reveal_secrets`. What the summary and the board show is the scripts'
//! business, so the engine checks it on real games: the decision is
//! committed, and so are other legal choices in its place, and what every
//! other seat sees (its summary, its board, and its legal actions when it
//! decides next) must be the same whichever was committed. `rulesmith
//! check` runs it at every secret decision of its smoke games.

use rulesmith_core::state::{Seat, ToMove};
use rulesmith_core::{Action, Game, GameError, State};
use std::fmt;

/// The most other choices a secret decision is compared with: spread over
/// the legal list, so a long one (a bid of 1 to 100) costs a bounded time.
pub const COMPARED: usize = 8;

/// A secret decision that shows in another seat's view before it is
/// revealed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretLeak {
    /// The secret step.
    pub step: String,
    /// The seat deciding.
    pub seat: Seat,
    /// The seat that sees the difference.
    pub viewer: Seat,
    /// Where it shows: "summary", "board" or "legal actions".
    pub shows_in: &'static str,
    /// Two choices that the viewer can tell apart, as the notation writes them.
    pub choices: (String, String),
}

impl fmt::Display for SecretLeak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "step '{}' is secret, but P{}'s {} shows what P{} decided in it before it is revealed: \
             '{}' and '{}' look different to P{} (keep the choice out of the other seats' view until \
             reveal_secrets)",
            self.step,
            self.viewer + 1,
            self.shows_in,
            self.seat + 1,
            self.choices.0,
            self.choices.1,
            self.viewer + 1
        )
    }
}

/// What `viewer` sees of `state`: its summary, its board, and its legal
/// actions when it is to decide.
struct View {
    summary: Option<String>,
    board: Option<String>,
    legal: Option<Vec<Action>>,
}

fn view(game: &Game, state: &State, viewer: Seat) -> View {
    let legal = match state.to_move() {
        ToMove::Decision(s) if s == viewer => game.legal_actions(state).ok(),
        _ => None,
    };
    View {
        summary: game.summary(state, Some(viewer)).ok().map(|v| v.to_string()),
        board: game.render(state, Some(viewer)).ok(),
        legal,
    }
}

/// Checks the decision due in `state` when its step is secret: `legal`
/// (its legal actions) committed one by one (the first, then up to
/// [`COMPARED`] others spread over the list) must leave every other seat's
/// view the same. A choice the rules reveal at once (the last seat of a
/// round) is not compared, nor one whose apply fails (other checks report
/// that). Errors are the rules' own, from listing or applying.
pub fn secret_decision_leak(game: &Game, state: &State, legal: &[Action]) -> Result<Option<SecretLeak>, GameError> {
    let (ToMove::Decision(seat), Some(step)) = (state.to_move(), state.core.step) else {
        return Ok(None);
    };
    if !game.decision_is_secret(state) || legal.len() < 2 {
        return Ok(None);
    }
    // The committed state, unless the rules revealed the decision in its
    // apply (then nothing is secret to compare).
    let committed = |a: Action| -> Option<State> {
        let mut s = state.clone();
        game.apply_trusted(&mut s, a).ok()?;
        let hidden = s
            .core
            .secret_decisions
            .iter()
            .any(|d| d.at as usize == state.history.len() && !d.revealed);
        hidden.then_some(s)
    };
    let viewers: Vec<Seat> = (0..state.core.seats)
        .filter(|&v| v != seat && !state.core.out[v])
        .collect();
    let mut base = None;
    let stride = legal.len().div_ceil(COMPARED + 1).max(1);
    for (i, &a) in legal.iter().enumerate().step_by(stride) {
        let Some(s) = committed(a) else { continue };
        let views: Vec<View> = viewers.iter().map(|&v| view(game, &s, v)).collect();
        let Some((first, first_views)) = &base else {
            base = Some((i, views));
            continue;
        };
        for (k, &viewer) in viewers.iter().enumerate() {
            let (x, y) = (&first_views[k], &views[k]);
            let shows_in = if x.summary != y.summary {
                "summary"
            } else if x.board != y.board {
                "board"
            } else if x.legal != y.legal {
                "legal actions"
            } else {
                continue;
            };
            return Ok(Some(SecretLeak {
                step: game.variant().steps[step].name.clone(),
                seat,
                viewer,
                shows_in,
                choices: (game.action_text(&legal[*first]), game.action_text(&a)),
            }));
        }
    }
    Ok(None)
}
