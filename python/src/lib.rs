//! `rulesmith._native`: the Rulesmith engine as a Python extension module
//! (pyo3, built by maturin). It wraps the engine crates, not the command
//! line: `Game`/`State` (game.rs) over core's `Game`, `Batch` (batch.rs)
//! stepping many games per call, simulations over the
//! lab's bots and tallies (sim.rs), and the build of compiled rules as a
//! module of their own (compiled.rs). The pure-Python package around it
//! (`python/python/rulesmith`) adds `load_game`, OpenSpiel, PettingZoo and
//! Ray.

mod batch;
mod compiled;
mod encoding;
mod game;
mod sim;
mod tensor;

use pyo3::prelude::*;
use rulesmith_core::{Game, Limits, Variant};
use rulesmith_runtime::Registration;
use std::sync::{Arc, OnceLock};

pyo3::create_exception!(
    rulesmith,
    RulesmithError,
    pyo3::exceptions::PyValueError,
    "A problem in a variant, a script, an action or a record: the message names the file, line and what was expected."
);

/// The Python exception of a Rulesmith error message.
pub(crate) fn error(message: impl Into<String>) -> PyErr {
    RulesmithError::new_err(message.into())
}

/// A value handed to [`Python::detach`], which asks for `Send` so that
/// nothing tied to the interpreter crosses threads while the GIL is
/// released. `detach` runs its closure on the calling thread, so values
/// that are not `Send` (a `Game` holds the Rhai interpreter) never leave
/// it; and every class holding one is `unsendable`, so no other Python
/// thread can reach it meanwhile.
pub(crate) struct Unsent<T>(pub T);

// SAFETY: see above: the wrapped value is used only on the thread that
// created the wrapper, inside `Python::detach` on that same thread.
unsafe impl<T> Send for Unsent<T> {}

/// The compiled rule sets linked into this module (none in
/// `rulesmith._native`; one in a variant's compiled module).
static COMPILED: OnceLock<Vec<Registration>> = OnceLock::new();

/// A game of `variant` on `engine` (`interpreted`, or `compiled` in a
/// compiled-rules module).
pub(crate) fn engine_game(variant: Arc<Variant>, engine: &str) -> PyResult<Game> {
    match engine {
        "interpreted" => rulesmith_rhai::interpreted(variant).map_err(|e| error(e.to_string())),
        "compiled" => {
            let fp = rulesmith_compiler::from_variant::facts(&variant).fingerprint();
            let reg = COMPILED
                .get()
                .and_then(|c| c.iter().find(|r| r.fingerprint == fp))
                .ok_or_else(|| {
                    error("this module holds no compiled rules for this variant: use rulesmith.load_game(..., engine=\"compiled\"), which builds them")
                })?;
            let rules = (reg.make)(variant.clone(), Limits::default());
            Game::from_rules_boxed(variant, rules).map_err(|e| error(e.to_string()))
        }
        other => Err(error(format!(
            "engine {other:?}: expected \"interpreted\" or \"compiled\""
        ))),
    }
}

/// Fills a module with the classes and functions, and registers the
/// compiled rule sets it links. `rulesmith._native` calls it with none;
/// the module built for a variant's compiled rules with its own.
pub fn init(m: &Bound<'_, PyModule>, compiled: Vec<Registration>) -> PyResult<()> {
    let _ = COMPILED.set(compiled);
    m.add_class::<game::PyGame>()?;
    m.add_class::<game::PyState>()?;
    m.add_class::<batch::PyBatch>()?;
    m.add("RulesmithError", m.py().get_type::<RulesmithError>())?;
    m.add_function(wrap_pyfunction!(sim::simulate_shard, m)?)?;
    m.add_function(wrap_pyfunction!(sim::merge, m)?)?;
    m.add_function(wrap_pyfunction!(compiled::build_compiled, m)?)?;
    m.add_function(wrap_pyfunction!(compiled_fingerprints, m)?)?;
    Ok(())
}

/// The fingerprints of the compiled rule sets this module holds.
#[pyfunction]
fn compiled_fingerprints() -> Vec<String> {
    COMPILED
        .get()
        .map(|c| c.iter().map(|r| r.fingerprint.to_string()).collect())
        .unwrap_or_default()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    init(m, Vec::new())
}
