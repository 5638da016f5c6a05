//! `rulesmith schema VARIANT`: JSON Schemas that know one variant: its
//! deck's fields, or its parameters with their ranges, so that an editor
//! completes and checks them. The generic schemas are in `schemas/`.

use crate::common::{load_game, VariantArgs};
use crate::Failure;
use rulesmith_core::variant::{FieldType, Value};
use serde_json::{json, Map, Value as Json};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The variant folder (or its variant.toml).
    pub variant: PathBuf,
    /// The schema of this deck's files.
    #[arg(long, value_name = "NAME", conflicts_with = "params")]
    pub deck: Option<String>,
    /// The schema of parameter files (--params FILE) for this variant.
    #[arg(long)]
    pub params: bool,
}

pub fn run(args: Args) -> Result<(), Failure> {
    let game = load_game(&args.variant, &VariantArgs::default())?;
    let v = game.variant();
    let schema = if let Some(name) = &args.deck {
        // A pile's places hold the cards of its deck: only decks are named.
        let deck = v
            .decks
            .iter()
            .find(|d| d.pile.is_none() && &d.name == name)
            .ok_or_else(|| {
                let known: Vec<_> = v
                    .decks
                    .iter()
                    .filter(|d| d.pile.is_none())
                    .map(|d| d.name.as_str())
                    .collect();
                Failure::usage(format!("--deck {name}: this variant's decks are: {}", known.join(", ")))
            })?;
        let mut props = Map::new();
        props.insert(
            "id".into(),
            json!({"type": "string", "pattern": "^\\S+$", "description": "Unique card id."}),
        );
        props.insert(
            "script".into(),
            json!({"type": "string", "description": format!(
            "A Rhai file defining some of these hooks: {}",
            deck.hooks.iter().map(|(h, n)| format!("{h}/{n}")).collect::<Vec<_>>().join(", "))}),
        );
        props.insert(
            "count".into(),
            json!({"type": "integer", "minimum": 1, "maximum": 1000, "description": "How many copies of this card the deck holds (default 1)."}),
        );
        let mut required = vec![json!("id")];
        for f in &deck.fields {
            let mut p = match f.ty {
                FieldType::Int { min, max } => {
                    let mut p = json!({"type": "integer"});
                    if let Some(m) = min {
                        p["minimum"] = json!(m);
                    }
                    if let Some(m) = max {
                        p["maximum"] = json!(m);
                    }
                    p
                }
                FieldType::Bool => json!({"type": "boolean"}),
                FieldType::Str => json!({"type": "string"}),
                FieldType::Unchecked => json!({}),
            };
            if !f.doc.is_empty() {
                p["description"] = json!(f.doc);
            }
            if !f.optional {
                required.push(json!(f.name));
            }
            props.insert(f.name.clone(), p);
        }
        json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "title": format!("Deck '{name}' of variant {}", v.name),
            "type": "object", "additionalProperties": false, "required": ["cards"],
            "properties": {"cards": {"type": "array", "minItems": 1, "items": {
                "type": "object", "additionalProperties": false, "required": required, "properties": props}}}
        })
    } else if args.params {
        let mut props = Map::new();
        for p in &v.params {
            let mut s = match &p.value {
                Value::Int(_) => json!({"type": "integer"}),
                Value::Bool(_) => json!({"type": "boolean"}),
                Value::Str(_) => json!({"type": "string"}),
            };
            if let Some(m) = p.min {
                s["minimum"] = json!(m);
            }
            if let Some(m) = p.max {
                s["maximum"] = json!(m);
            }
            s["description"] = json!(format!("{} (default {})", p.doc, p.value));
            props.insert(p.name.clone(), s);
        }
        json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "title": format!("Parameters of variant {}", v.name),
            "type": "object", "additionalProperties": false, "properties": Json::Object(props)
        })
    } else {
        return Err(Failure::usage(
            "say which schema: --deck NAME or --params (the variant file's own schema is schemas/variant.schema.json)",
        ));
    };
    crate::outln!(
        "{}",
        serde_json::to_string_pretty(&schema).expect("JSON values serialize")
    );
    Ok(())
}
