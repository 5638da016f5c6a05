//! [`Facts`] from a loaded variant.

use crate::{ActionFacts, DeckFacts, Facts, Scalar, StepFacts};
use rulesmith_core::variant::{FieldType, Value, Variant};

pub fn facts(v: &Variant) -> Facts {
    let name = |f: &Option<rulesmith_core::variant::FnRef>| f.as_ref().map(|f| f.name.clone());
    Facts {
        files: v.files.iter().map(|f| (f.path.clone(), f.text.clone())).collect(),
        scripts: v.scripts.clone(),
        actions: v
            .actions
            .iter()
            .map(|a| ActionFacts {
                name: a.template.name.clone(),
                apply: a.apply.name.clone(),
                arity: a.template.arity(),
            })
            .collect(),
        steps: v
            .steps
            .iter()
            .map(|s| StepFacts {
                name: s.name.clone(),
                legal: s.legal.name.clone(),
                enter: s.enter.as_ref().map(|e| e.name.clone()),
            })
            .collect(),
        params: v
            .params
            .iter()
            .map(|p| {
                let t = match p.value {
                    Value::Int(_) => Scalar::Int,
                    Value::Bool(_) => Scalar::Bool,
                    Value::Str(_) => Scalar::Str,
                };
                (p.name.clone(), t)
            })
            .collect(),
        // The decks scripts name: the places of piles come after them, and
        // compiled code reaches those by the pile's name at run time.
        decks: v
            .decks
            .iter()
            .filter(|d| d.pile.is_none())
            .map(|d| DeckFacts {
                name: d.name.clone(),
                fields: d
                    .fields
                    .iter()
                    .map(|f| {
                        let t = match f.ty {
                            FieldType::Int { .. } => Scalar::Int,
                            FieldType::Bool => Scalar::Bool,
                            FieldType::Str => Scalar::Str,
                            FieldType::Unchecked => Scalar::Any,
                        };
                        (f.name.clone(), t, f.optional)
                    })
                    .collect(),
                hooks: d.hooks.iter().map(|(h, n)| (h.clone(), *n)).collect(),
                cards: d.cards.iter().map(|c| (c.id.clone(), c.script)).collect(),
            })
            .collect(),
        stats: v.stats.iter().map(|(n, _)| n.clone()).collect(),
        setup: name(&v.setup),
        turn_start: name(&v.on_turn_start),
        turn_end: name(&v.on_turn_end),
        summary: name(&v.summary),
        render: name(&v.render),
        evaluate: name(&v.evaluate),
        labels: name(&v.labels),
        invariants: v.invariants.iter().map(|i| i.check.name.clone()).collect(),
    }
}
