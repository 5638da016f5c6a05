//! The rule set's own data as the engine holds it: one field of every
//! [`crate::State`], opaque to the engine. It sits below the state (and
//! so below the rules protocol that acts on it) so that the state's module
//! needs nothing from the layers that run rules.

/// The rule set's own data, opaque to the engine: a Rhai value for the
/// interpreter, a typed struct for compiled rules.
#[derive(Debug)]
pub enum Data {
    Script(rhai::Dynamic),
    Native(Box<dyn NativeData>),
}

/// Typed script data of compiled rules. Its type is recovered by trait
/// upcasting to `dyn Any` (one virtual call, `type_id`).
pub trait NativeData: std::any::Any + std::fmt::Debug {
    fn clone_box(&self) -> Box<dyn NativeData>;
    /// Copies `self` into `target` when both are of one type, reusing
    /// `target`'s allocations (false, and nothing done, otherwise): search
    /// copies states into scratch states thousands of times a decision.
    fn clone_onto(&self, target: &mut dyn NativeData) -> bool;
    /// Equal to `other` (false for data of another type): what equal JSON
    /// would say, without building it.
    fn same_as(&self, other: &dyn NativeData) -> bool;
    fn to_json(&self) -> serde_json::Value;
}

impl Clone for Data {
    fn clone(&self) -> Self {
        match self {
            Data::Script(d) => Data::Script(d.clone()),
            Data::Native(n) => Data::Native(n.clone_box()),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        if let (Data::Native(to), Data::Native(from)) = (&mut *self, source) {
            if from.clone_onto(&mut **to) {
                return;
            }
        }
        *self = source.clone();
    }
}

impl Data {
    /// Equal data: compared in place for compiled rules' typed data, as
    /// JSON for script data.
    pub fn same_as(&self, other: &Data) -> bool {
        match (self, other) {
            (Data::Native(a), Data::Native(b)) => a.same_as(&**b),
            _ => self.to_json() == other.to_json(),
        }
    }

    /// The data as JSON: how states are saved and compared. (Null for
    /// script data that is not plain data, which scripts cannot build.)
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Data::Script(d) => serde_json::to_value(d).unwrap_or(serde_json::Value::Null),
            Data::Native(n) => n.to_json(),
        }
    }
}
