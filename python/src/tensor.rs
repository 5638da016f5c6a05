//! Observation and information-state tensors: numbers of fixed shape per
//! variant and player count, read from a seat's summary.
//!
//! A variant lays a tensor out in its summary (`[output] observation_tensor
//! = { key = "planes", shape = [3, 3, 3] }`): the numbers of that field,
//! nested arrays flattened in order, true as 1 and false as 0, exactly as
//! many as the shape holds. Without a declaration the tensor is every
//! number of the summary, flat, its length fixed by the first state of a
//! game; a state whose summary holds another count is an error that says
//! to declare the layout. The information-state tensor is declared the
//! same way (`information_tensor`); undeclared, it is the observation
//! tensor (exact only when what a seat sees now tells all it has seen).

use rulesmith_core::variant::Tensor;
use rulesmith_core::{Game, Seat, State};
use serde_json::Value;

/// Which of the two tensors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Observation,
    Information,
}

impl Kind {
    fn key(self) -> &'static str {
        match self {
            Kind::Observation => "observation_tensor",
            Kind::Information => "information_tensor",
        }
    }
}

/// One tensor's layout for one player count.
pub struct Layout {
    kind: Kind,
    declared: Option<Tensor>,
    pub shape: Vec<usize>,
}

impl Layout {
    /// The layout of `kind` for games of `players` seats: the declared one,
    /// or the summary's numbers on a new game (seen by P1).
    pub fn new(game: &Game, players: usize, kind: Kind) -> Result<Layout, String> {
        let v = game.variant();
        let declared = match kind {
            Kind::Observation => v.observation_tensor.clone(),
            Kind::Information => v.information_tensor.clone().or_else(|| v.observation_tensor.clone()),
        };
        if let Some(t) = declared {
            return Ok(Layout {
                kind,
                shape: t.shape.clone(),
                declared: Some(t),
            });
        }
        let state = game.new_game(players).map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        flatten(&game.summary(&state, Some(0)).map_err(|e| e.to_string())?, &mut out);
        Ok(Layout {
            kind,
            declared: None,
            shape: vec![out.len()],
        })
    }

    pub fn size(&self) -> usize {
        self.shape.iter().product()
    }

    /// The tensor of `state` as `seat` sees it, flat.
    pub fn numbers(&self, game: &Game, state: &State, seat: Seat) -> Result<Vec<f64>, String> {
        let summary = game.summary(state, Some(seat)).map_err(|e| e.to_string())?;
        let mut out = Vec::with_capacity(self.size());
        match &self.declared {
            Some(t) => {
                let field = summary.get(&t.key).ok_or_else(|| {
                    format!(
                        "[output] {}: the summary P{} sees has no field '{}'",
                        self.declared_key(),
                        seat + 1,
                        t.key
                    )
                })?;
                flatten(field, &mut out);
                if out.len() != self.size() {
                    return Err(format!(
                        "[output] {}: the summary's '{}' holds {} numbers for P{}, but the shape {:?} holds {}",
                        self.declared_key(),
                        t.key,
                        out.len(),
                        seat + 1,
                        t.shape,
                        self.size()
                    ));
                }
            }
            None => {
                flatten(&summary, &mut out);
                if out.len() != self.size() {
                    return Err(format!(
                        "the summary P{} sees holds {} numbers here but {} at the start of a game: a tensor needs a fixed shape; \
                         declare where it lies with [output] {} = {{ key = \"...\", shape = [...] }}",
                        seat + 1,
                        out.len(),
                        self.size(),
                        self.kind.key()
                    ));
                }
            }
        }
        Ok(out)
    }

    /// The key the layout came from (an undeclared information tensor
    /// borrows the observation's).
    fn declared_key(&self) -> &'static str {
        match (self.kind, self.declared.is_some()) {
            (Kind::Information, true) => "information_tensor (or observation_tensor)",
            _ => self.kind.key(),
        }
    }
}

/// Every number of `v` in order: objects' values in key order, arrays in
/// order, true as 1 and false as 0; text and null are skipped.
pub fn flatten(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Number(n) => out.push(n.as_f64().unwrap_or(0.0)),
        Value::Bool(b) => out.push(if *b { 1.0 } else { 0.0 }),
        Value::Array(a) => a.iter().for_each(|x| flatten(x, out)),
        Value::Object(m) => m.values().for_each(|x| flatten(x, out)),
        Value::String(_) | Value::Null => {}
    }
}
