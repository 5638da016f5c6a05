//! Secret and simultaneous decisions: the bookkeeping [`Game`] does around
//! a decision when its step says so.
//!
//! - A step declared `secret = true` hides its decisions from the other
//!   seats: each one is noted in `Core::secret_decisions` until the rules
//!   reveal it (`reveal_secrets`). Views are the scripts' business; bots
//!   decide on worlds where such a decision is drawn afresh
//!   (`Game::determinize`), and `play` does not print it.
//! - A step declared `actor = "every"` is a round: every seat in play
//!   decides once, in seat order, with no active seat needed. Entering the
//!   step starts the round (`Core::round`); after each decision the engine
//!   hands the next one to the next seat still to decide. When none is
//!   left, the rules must move on (`round_left()` tells them).
//!
//! Together they make simultaneous decisions: a secret round, revealed
//! when the last seat has decided, is what every seat choosing at once and
//! revealing together looks like to each of them.

use crate::game::Game;
use crate::state::{SecretDecision, State};
use crate::variant::Actor;

impl Game {
    /// Notes the decision about to be applied: a secret one is recorded
    /// (at the history position it will take), and in a round its seat has
    /// now decided.
    pub(crate) fn note_decision(&self, state: &mut State) {
        let (Some(step), Some(seat)) = (state.core.step, state.core.actor) else {
            return;
        };
        let def = &self.variant.steps[step];
        if def.secret {
            state.core.secret_decisions.push(SecretDecision {
                seat,
                at: state.history.len() as u32,
                revealed: false,
            });
        }
        if def.actor == Actor::Every {
            state.core.round &= !(1u64 << seat);
        }
    }

    /// Whether the decision due is secret: its step is declared `secret`,
    /// so the other seats must not learn it (`rulesmith play` does not
    /// print a bot's choice there).
    pub fn decision_is_secret(&self, state: &State) -> bool {
        matches!(state.to_move(), crate::state::ToMove::Decision(_))
            && state.core.step.is_some_and(|s| self.variant.steps[s].secret)
    }

    /// Entering an `actor = "every"` step: every seat in play is to decide.
    pub(crate) fn begin_round(&self, state: &mut State) {
        state.core.round = (0..state.core.seats)
            .filter(|&s| !state.core.out[s])
            .fold(0u64, |m, s| m | (1u64 << s));
        state.core.actor = state.core.next_in_round();
    }

    /// Once settled inside a round, the next seat still to decide has the
    /// decision (none when every seat has decided: the rules must then have
    /// moved on).
    pub(crate) fn round_actor(&self, state: &mut State) {
        let Some(step) = state.core.step else { return };
        if self.variant.steps[step].actor == Actor::Every && state.core.chance.is_none() {
            state.core.round &= (0..state.core.seats)
                .filter(|&s| !state.core.out[s])
                .fold(0u64, |m, s| m | (1u64 << s));
            state.core.actor = state.core.next_in_round();
        }
    }

    /// Why nobody is to move in a finished round, for the error.
    pub(crate) fn round_over_hint(&self, state: &State) -> Option<String> {
        let step = &self.variant.steps[state.core.step?];
        (step.actor == Actor::Every).then(|| {
            format!(
                "every seat has decided in step '{}' (actor = \"every\") and the scripts did not move on \
                 (check round_left() == 0 in the apply function)",
                step.name
            )
        })
    }
}
