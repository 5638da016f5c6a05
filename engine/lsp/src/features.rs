//! The editor features over one variant: what the name under the cursor
//! is ([`resolve`]), then its hover, definitions, references and rename,
//! and the completions at a place. Names link TOML and scripts: an
//! action's `apply` names a script function, a script's `add("fire", ..)`
//! names an action, and so on.

use crate::lex::{self, Kind, Token};
use crate::natives::{self, NameKind, Native};
use crate::text::LineIndex;
use crate::toml_text::{self, FUNCTION_KEYS};
use crate::workspace::Workspace;
use lsp_types::{CompletionItem, CompletionItemKind, Documentation, Location, MarkupContent, MarkupKind};
use rulesmith_core::variant::{clean, FieldType, Variant, Visibility, VARIANT_FILE};
use std::ops::Range;
use std::path::{Path, PathBuf};

/// What a name at the cursor stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A script function.
    Function(String),
    /// `super_NAME`: the definition of NAME that the calling one replaced.
    Super(String),
    Native(String),
    /// A name the TOML declares: an action, a step, a deck...
    Declared(NameKind, String),
    /// A file a TOML string names (a script, a deck, the extended variant).
    File(PathBuf),
}

/// A place in a file: its path and byte range.
pub type Place = (PathBuf, Range<usize>);

/// The table a kind of name is declared in.
fn table_of(kind: NameKind) -> Option<&'static str> {
    Some(match kind {
        NameKind::Action => "actions",
        NameKind::Step => "steps",
        NameKind::Param => "params",
        NameKind::Stat => "stats",
        NameKind::Enum => "notation",
        NameKind::Deck => "decks",
        NameKind::Pile => "piles",
        NameKind::Card | NameKind::Hook | NameKind::Function => return None,
    })
}

/// What a TOML string value under `key` in `table` names.
fn toml_string_kind(table: &[String], key: &str) -> Option<NameKind> {
    let t = table.first().map(String::as_str);
    Some(match (t, key) {
        (_, k) if FUNCTION_KEYS.contains(&k) => NameKind::Function,
        (Some("turn"), "steps") => NameKind::Step,
        (Some("piles"), "deck") => NameKind::Deck,
        (Some("piles"), "refill") => NameKind::Pile,
        (Some("end"), "max_turns") => NameKind::Param,
        (Some("cards"), "id") => NameKind::Card,
        _ => return None,
    })
}

/// The contents of a string token (without its quotes; an unclosed one
/// runs to its end).
fn string_inner(text: &str, t: &Token) -> Range<usize> {
    let quote = text.as_bytes()[t.span.start];
    let closed = t.span.len() >= 2 && text.as_bytes()[t.span.end - 1] == quote;
    t.span.start + 1..if closed { t.span.end - 1 } else { t.span.end }
}

fn is_rhai(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "rhai")
}

/// Every function defined in the root's scripts: name, parameters and
/// place, in load order.
pub fn definitions(ws: &Workspace, root: usize) -> Vec<(String, Vec<String>, Place)> {
    let mut out = Vec::new();
    for path in ws.scripts(root) {
        let Some(text) = ws.text(&path) else { continue };
        for (span, params) in lex::definitions(&text, &lex::tokens(&text)) {
            out.push((text[span.clone()].to_string(), params, (path.clone(), span)));
        }
    }
    out
}

/// Whether a file is a rule script of the root (not a card's script).
fn is_rule_script(ws: &Workspace, root: usize, path: &Path) -> bool {
    match &ws.roots[root].variant {
        Some(v) => v.scripts.iter().any(|&f| v.files[f].path == path),
        None => true,
    }
}

/// What the name or string at byte `offset` of `path` stands for, with its
/// range.
pub fn resolve(ws: &Workspace, root: usize, path: &Path, offset: usize) -> Option<(Target, Range<usize>)> {
    let text = ws.text(path)?;
    if is_rhai(path) {
        let tokens = lex::tokens(&text);
        let i = tokens
            .iter()
            .position(|t| t.span.start <= offset && offset <= t.span.end && t.kind != Kind::Punct(')'))?;
        let t = &tokens[i];
        match t.kind {
            Kind::Ident => {
                let name = &text[t.span.clone()];
                let defs = definitions(ws, root);
                if let Some(base) = name.strip_prefix("super_") {
                    if defs.iter().any(|d| d.0 == base) {
                        return Some((Target::Super(base.to_string()), t.span.clone()));
                    }
                }
                if defs.iter().any(|d| d.0 == name) {
                    return Some((Target::Function(name.to_string()), t.span.clone()));
                }
                natives::natives()
                    .iter()
                    .any(|n| n.name == name)
                    .then(|| (Target::Native(name.to_string()), t.span.clone()))
            }
            Kind::Str => {
                let (native, arg) = lex::call_argument(&tokens, &text, i)?;
                let inner = string_inner(&text, t);
                let value = text[inner.clone()].to_string();
                let kinds = natives::argument_names(&native, arg);
                let v = ws.roots[root].variant.as_deref();
                let kind = kinds
                    .iter()
                    .copied()
                    .find(|&k| v.is_some_and(|v| names(v, k, ws, root).contains(&value)))
                    .or(kinds.first().copied())?;
                Some((target_of(kind, value), inner))
            }
            _ => None,
        }
    } else {
        let scan = toml_text::scan(&text);
        if let Some((h, part)) = scan.header_part_at(offset) {
            let kind = match h.path.first().map(String::as_str) {
                Some("actions") => NameKind::Action,
                Some("steps") => NameKind::Step,
                Some("params") => NameKind::Param,
                Some("decks") => NameKind::Deck,
                Some("piles") => NameKind::Pile,
                _ => return None,
            };
            return (part == 1).then(|| (Target::Declared(kind, h.path[1].clone()), h.spans[1].clone()));
        }
        if let Some(s) = scan.string_at(offset) {
            let dir = path.parent().unwrap_or(Path::new("."));
            if matches!(s.key.as_str(), "scripts" | "extends" | "file" | "script") {
                let mut p = clean(&dir.join(&s.value));
                if p.is_dir() {
                    p = p.join(VARIANT_FILE);
                }
                return Some((Target::File(p), s.inner.clone()));
            }
            let kind = toml_string_kind(&s.table, &s.key)?;
            return Some((target_of(kind, s.value.clone()), s.inner.clone()));
        }
        let k = scan
            .keys
            .iter()
            .find(|k| k.span.start <= offset && offset <= k.span.end)?;
        match k.table.as_slice() {
            [t] if t == "stats" => Some((Target::Declared(NameKind::Stat, k.name.clone()), k.span.clone())),
            [t] if t == "notation" => Some((Target::Declared(NameKind::Enum, k.name.clone()), k.span.clone())),
            _ => None,
        }
    }
}

fn target_of(kind: NameKind, name: String) -> Target {
    match kind {
        NameKind::Function => Target::Function(name),
        k => Target::Declared(k, name),
    }
}

/// The names of one kind the variant declares.
pub fn names(v: &Variant, kind: NameKind, ws: &Workspace, root: usize) -> Vec<String> {
    match kind {
        NameKind::Action => v.actions.iter().map(|a| a.template.name.clone()).collect(),
        NameKind::Step => v.steps.iter().map(|s| s.name.clone()).collect(),
        NameKind::Param => v.params.iter().map(|p| p.name.clone()).collect(),
        NameKind::Stat => v.stats.iter().map(|s| s.0.clone()).collect(),
        NameKind::Enum => v.enums.keys().cloned().collect(),
        NameKind::Deck => v
            .decks
            .iter()
            .filter(|d| d.pile.is_none())
            .map(|d| d.name.clone())
            .collect(),
        NameKind::Pile => v.piles.iter().map(|p| p.name.clone()).collect(),
        NameKind::Card => {
            let mut ids: Vec<String> = v
                .decks
                .iter()
                .flat_map(|d| d.cards.iter().map(|c| c.id.clone()))
                .collect();
            ids.dedup();
            ids
        }
        NameKind::Hook => {
            let mut hooks: Vec<String> = v.decks.iter().flat_map(|d| d.hooks.keys().cloned()).collect();
            hooks.sort();
            hooks.dedup();
            hooks
        }
        NameKind::Function => {
            let mut fns: Vec<String> = definitions(ws, root)
                .into_iter()
                .filter(|d| is_rule_script(ws, root, &d.2 .0))
                .map(|d| d.0)
                .collect();
            fns.sort();
            fns.dedup();
            fns
        }
    }
}

/// Where a target is defined. For a function: the definition in force
/// (the last one loaded; a card script's own, from inside it), or, asked
/// on a definition itself, the ones it overrides.
pub fn definition(ws: &Workspace, root: usize, from: &Path, target: &Target, at: &Range<usize>) -> Vec<Place> {
    match target {
        Target::Function(name) => {
            let defs: Vec<Place> = definitions(ws, root)
                .into_iter()
                .filter(|d| &d.0 == name)
                .map(|d| d.2)
                .collect();
            if let Some(here) = defs.iter().position(|(p, r)| p == from && r == at) {
                // On a definition: what it overrides, nearest first.
                let older: Vec<Place> = defs[..here].iter().rev().cloned().collect();
                return if older.is_empty() {
                    vec![defs[here].clone()]
                } else {
                    older
                };
            }
            if let Some(own) = defs.iter().find(|(p, _)| p == from && !is_rule_script(ws, root, from)) {
                return vec![own.clone()];
            }
            let rule: Vec<&Place> = defs.iter().filter(|(p, _)| is_rule_script(ws, root, p)).collect();
            rule.last().map(|p| vec![(*p).clone()]).unwrap_or(defs)
        }
        Target::Super(name) => {
            // The definition before the one whose body calls super_NAME.
            let defs: Vec<Place> = definitions(ws, root)
                .into_iter()
                .filter(|d| &d.0 == name)
                .map(|d| d.2)
                .collect();
            let caller = defs.iter().rposition(|(p, r)| p == from && r.start < at.start);
            match caller {
                Some(c) if c > 0 => vec![defs[c - 1].clone()],
                _ => defs
                    .len()
                    .checked_sub(2)
                    .map(|i| vec![defs[i].clone()])
                    .unwrap_or_default(),
            }
        }
        Target::Native(_) => Vec::new(),
        Target::File(p) => vec![(p.clone(), 0..0)],
        Target::Declared(NameKind::Card, id) => declarations_of_card(ws, root, id),
        Target::Declared(kind, name) => {
            let Some(table) = table_of(*kind) else {
                return Vec::new();
            };
            // The extending variant's first: the declaration in force.
            ws.tomls(root)
                .into_iter()
                .filter_map(|f| {
                    let text = ws.text(&f)?;
                    toml_text::scan(&text).declaration(table, name).map(|r| (f, r))
                })
                .take(1)
                .collect()
        }
    }
}

fn declarations_of_card(ws: &Workspace, root: usize, id: &str) -> Vec<Place> {
    ws.tomls(root)
        .into_iter()
        .filter_map(|f| {
            let text = ws.text(&f)?;
            let s = toml_text::scan(&text)
                .strings
                .into_iter()
                .find(|s| s.key == "id" && s.value == id && s.table.first().is_some_and(|t| t == "cards"))?;
            Some((f, s.inner))
        })
        .collect()
}

/// Every place that names the target, its declarations included: in
/// every script and TOML file of the root's `extends` chain.
pub fn references(ws: &Workspace, root: usize, target: &Target) -> Vec<Place> {
    let mut out = Vec::new();
    let (kind, name) = match target {
        Target::Function(n) | Target::Super(n) => (NameKind::Function, n.as_str()),
        Target::Declared(k, n) => (*k, n.as_str()),
        _ => return out,
    };
    for path in ws.scripts(root) {
        let Some(text) = ws.text(&path) else { continue };
        let tokens = lex::tokens(&text);
        for (i, t) in tokens.iter().enumerate() {
            match t.kind {
                Kind::Ident if kind == NameKind::Function => {
                    let word = &text[t.span.clone()];
                    let called = tokens.get(i + 1).is_some_and(|n| n.kind == Kind::Punct('('));
                    let defined = i > 0 && &text[tokens[i - 1].span.clone()] == "fn";
                    if word == name && (called || defined) {
                        out.push((path.clone(), t.span.clone()));
                    } else if word.strip_prefix("super_") == Some(name) && called {
                        out.push((path.clone(), t.span.start + "super_".len()..t.span.end));
                    }
                }
                Kind::Str => {
                    let inner = string_inner(&text, t);
                    if &text[inner.clone()] != name {
                        continue;
                    }
                    if let Some((native, arg)) = lex::call_argument(&tokens, &text, i) {
                        if natives::argument_names(&native, arg).contains(&kind) {
                            out.push((path.clone(), inner));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    for path in ws.tomls(root) {
        let Some(text) = ws.text(&path) else { continue };
        let scan = toml_text::scan(&text);
        if let Some(table) = table_of(kind) {
            if let Some(r) = scan.declaration(table, name) {
                out.push((path.clone(), r));
            }
        }
        for s in &scan.strings {
            if s.value == name && toml_string_kind(&s.table, &s.key) == Some(kind) {
                out.push((path.clone(), s.inner.clone()));
            }
        }
    }
    out
}

fn code_block(code: &str) -> String {
    format!("```rhai\n{code}\n```")
}

/// The comment lines right above byte `at` of `text` (a function's doc).
fn comment_above(text: &str, at: usize) -> String {
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let mut lines: Vec<&str> = Vec::new();
    for l in text[..line_start].lines().rev() {
        let t = l.trim();
        match t.strip_prefix("///").or_else(|| t.strip_prefix("//")) {
            Some(c) => lines.push(c.trim()),
            None => break,
        }
    }
    lines.reverse();
    lines.join("\n")
}

fn line_of(ws: &Workspace, place: &Place) -> usize {
    ws.text(&place.0)
        .map_or(0, |t| LineIndex::new(&t).position(place.1.start).line as usize + 1)
}

fn shown(ws: &Workspace, root: usize, path: &Path) -> String {
    let dir = ws.roots[root].file.parent().unwrap_or(Path::new("/"));
    let name = path.strip_prefix(dir).unwrap_or(path);
    name.display().to_string()
}

fn native_doc(n: &Native) -> String {
    format!("{}\n\n{}", code_block(&n.signatures.join("\n")), n.doc)
}

fn type_name(t: &FieldType) -> String {
    match t {
        FieldType::Int { min, max } => match (min, max) {
            (None, None) => "int".into(),
            _ => format!(
                "int {}..{}",
                min.map_or(String::new(), |m| m.to_string()),
                max.map_or(String::new(), |m| m.to_string())
            ),
        },
        FieldType::Bool => "bool".into(),
        FieldType::Str => "string".into(),
        FieldType::Unchecked => "?".into(),
    }
}

/// The hover text of a target, in Markdown.
pub fn hover(ws: &Workspace, root: usize, from: &Path, target: &Target, at: &Range<usize>) -> Option<String> {
    let v = ws.roots[root].variant.as_deref();
    Some(match target {
        Target::Native(name) => native_doc(natives::natives().iter().find(|n| &n.name == name)?),
        Target::Function(name) | Target::Super(name) => {
            let defs = definition(ws, root, from, target, at);
            let all: Vec<_> = definitions(ws, root).into_iter().filter(|d| &d.0 == name).collect();
            let place = match target {
                Target::Super(_) => defs.first()?.clone(),
                _ => all
                    .iter()
                    .rev()
                    .find(|d| d.2 .0 == from && d.2 .1 == *at)
                    .or(all.iter().rev().find(|d| is_rule_script(ws, root, &d.2 .0)))
                    .or(all.last())?
                    .2
                    .clone(),
            };
            let (_, params, _) = all.iter().find(|d| d.2 == place)?;
            let text = ws.text(&place.0)?;
            let doc = comment_above(&text, place.1.start);
            let mut out = code_block(&format!("fn {name}({})", params.join(", ")));
            if !doc.is_empty() {
                out.push_str(&format!("\n\n{doc}"));
            }
            out.push_str(&format!(
                "\n\ndefined in `{}:{}`",
                shown(ws, root, &place.0),
                line_of(ws, &place)
            ));
            if all.len() > 1 {
                let others: Vec<String> = all
                    .iter()
                    .filter(|d| d.2 != place)
                    .map(|d| format!("`{}:{}`", shown(ws, root, &d.2 .0), line_of(ws, &d.2)))
                    .collect();
                out.push_str(&format!("; also defined in {}", others.join(", ")));
            }
            out
        }
        Target::File(p) => format!("`{}`", p.display()),
        Target::Declared(kind, name) => {
            let v = v?;
            match kind {
                NameKind::Action => {
                    let a = v.actions.iter().find(|a| &a.template.name == name)?;
                    let mut out = format!(
                        "action `{name}`: written `{}`, applied by `{}`",
                        a.template.text, a.apply.name
                    );
                    if let Some((_, params, p)) = definitions(ws, root).into_iter().rev().find(|d| d.0 == a.apply.name)
                    {
                        out.push_str(&format!(
                            "\n\n{}\n\nin `{}:{}`",
                            code_block(&format!("fn {}({})", a.apply.name, params.join(", "))),
                            shown(ws, root, &p.0),
                            line_of(ws, &p)
                        ));
                    }
                    if !a.doc.is_empty() {
                        out.push_str(&format!("\n\n{}", a.doc));
                    }
                    out
                }
                NameKind::Param => {
                    let p = v.param(name)?;
                    let ty = match p.value {
                        rulesmith_core::variant::Value::Int(_) => "int",
                        rulesmith_core::variant::Value::Bool(_) => "bool",
                        rulesmith_core::variant::Value::Str(_) => "string",
                    };
                    let range = match (p.min, p.max) {
                        (None, None) => String::new(),
                        (lo, hi) => format!(
                            ", range {}..={}",
                            lo.map_or(String::new(), |m| m.to_string()),
                            hi.map_or(String::new(), |m| m.to_string())
                        ),
                    };
                    format!("parameter `{name}` = `{}` ({ty}{range})\n\n{}", p.value, p.doc)
                }
                NameKind::Step => {
                    let s = v.steps.iter().find(|s| &s.name == name)?;
                    let mut out = format!("step `{name}`: legal actions from `{}`", s.legal.name);
                    if let Some(e) = &s.enter {
                        out.push_str(&format!(", entered with `{}`", e.name));
                    }
                    if s.secret {
                        out.push_str(", secret");
                    }
                    format!("{out}\n\n{}", s.doc)
                }
                NameKind::Deck => {
                    let d = v.decks.iter().find(|d| &d.name == name && d.pile.is_none())?;
                    let fields: Vec<String> = d
                        .fields
                        .iter()
                        .map(|f| {
                            format!(
                                "- `{}`: {}{}",
                                f.name,
                                type_name(&f.ty),
                                if f.optional { " (optional)" } else { "" }
                            )
                        })
                        .collect();
                    format!(
                        "deck `{name}`: {} cards from `{}`\n\nfields:\n{}",
                        d.cards.len(),
                        shown(ws, root, &d.file),
                        fields.join("\n")
                    )
                }
                NameKind::Card => {
                    let (deck, card) = v
                        .decks
                        .iter()
                        .filter(|d| d.pile.is_none())
                        .find_map(|d| d.cards.iter().find(|c| &c.id == name).map(|c| (d, c)))?;
                    let fields: Vec<String> = card
                        .fields
                        .iter()
                        .map(|(k, val)| format!("- `{k}` = `{val}`"))
                        .collect();
                    format!(
                        "card `{name}` of deck `{}` (x{})\n\n{}",
                        deck.name,
                        card.count,
                        fields.join("\n")
                    )
                }
                NameKind::Stat => {
                    let (_, desc) = v.stats.iter().find(|s| &s.0 == name)?;
                    format!("counter `{name}`: {desc}")
                }
                NameKind::Enum => format!("enumeration `{name}`: {}", v.enums.get(name)?.join(", ")),
                NameKind::Pile => {
                    let p = v.piles.iter().find(|p| &p.name == name)?;
                    let seen = match p.visible {
                        Visibility::Owner => "its owner",
                        Visibility::Everyone => "everyone",
                        Visibility::Nobody => "nobody",
                    };
                    format!(
                        "pile `{name}` of deck `{}`{}, seen by {seen}\n\n{}",
                        v.decks[p.deck].name,
                        if p.per_seat { ", one per seat" } else { "" },
                        p.doc
                    )
                }
                NameKind::Hook => format!("card hook `{name}`"),
                NameKind::Function => return None,
            }
        }
    })
}

fn item(label: String, kind: CompletionItemKind, detail: Option<String>, doc: Option<String>) -> CompletionItem {
    CompletionItem {
        label,
        kind: Some(kind),
        detail,
        documentation: doc.map(|d| {
            Documentation::MarkupContent(MarkupContent {
                kind: MarkupKind::Markdown,
                value: d,
            })
        }),
        ..Default::default()
    }
}

fn name_items(ws: &Workspace, root: usize, kinds: &[NameKind]) -> Vec<CompletionItem> {
    let Some(v) = ws.roots[root].variant.as_deref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for &k in kinds {
        let ck = match k {
            NameKind::Function => CompletionItemKind::FUNCTION,
            NameKind::Param | NameKind::Stat => CompletionItemKind::VARIABLE,
            NameKind::Enum => CompletionItemKind::ENUM,
            _ => CompletionItemKind::VALUE,
        };
        for n in names(v, k, ws, root) {
            let detail = format!("{k:?}").to_lowercase();
            out.push(item(n, ck, Some(detail), None));
        }
    }
    out
}

/// The completions at byte `offset` of `path`.
pub fn completion(ws: &Workspace, root: usize, path: &Path, offset: usize) -> Vec<CompletionItem> {
    let Some(text) = ws.text(path) else { return Vec::new() };
    if is_rhai(path) {
        let tokens = lex::tokens(&text);
        if let Some(i) = tokens
            .iter()
            .position(|t| t.kind == Kind::Str && t.span.start < offset && offset <= string_inner(&text, t).end)
        {
            return match lex::call_argument(&tokens, &text, i) {
                Some((native, arg)) => name_items(ws, root, natives::argument_names(&native, arg)),
                None => Vec::new(),
            };
        }
        let mut out: Vec<CompletionItem> = natives::natives()
            .iter()
            .map(|n| {
                item(
                    n.name.clone(),
                    CompletionItemKind::FUNCTION,
                    Some(n.signatures.join("  ")),
                    Some(n.doc.clone()),
                )
            })
            .collect();
        let mut seen = std::collections::BTreeSet::new();
        for (name, params, _) in definitions(ws, root).into_iter().rev() {
            if seen.insert(name.clone()) {
                let sig = format!("fn {name}({})", params.join(", "));
                out.push(item(name, CompletionItemKind::FUNCTION, Some(sig), None));
            }
        }
        return out;
    }
    let scan = toml_text::scan(&text);
    if let Some(s) = scan.string_at(offset) {
        return match toml_string_kind(&s.table, &s.key) {
            Some(k) => name_items(ws, root, &[k]),
            None => Vec::new(),
        };
    }
    // A key: those the schema allows in this table.
    let line_start = text[..offset.min(text.len())].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[line_start..offset.min(text.len())];
    if before.contains('=') || before.trim_start().starts_with('[') {
        return Vec::new();
    }
    let table = scan.table_at(offset);
    if table.first().is_some_and(|t| t == "cards") {
        // A deck file: the fields of the decks read from it.
        let Some(v) = ws.roots[root].variant.as_deref() else {
            return Vec::new();
        };
        let mut out = vec![
            item("id".into(), CompletionItemKind::FIELD, Some("string".into()), None),
            item("count".into(), CompletionItemKind::FIELD, Some("int".into()), None),
            item("script".into(), CompletionItemKind::FIELD, Some("string".into()), None),
        ];
        for d in v.decks.iter().filter(|d| d.file == path && d.pile.is_none()) {
            for f in &d.fields {
                out.push(item(
                    f.name.clone(),
                    CompletionItemKind::FIELD,
                    Some(type_name(&f.ty)),
                    (!f.doc.is_empty()).then(|| f.doc.clone()),
                ));
            }
        }
        return out;
    }
    schema_keys(&table)
        .into_iter()
        .map(|(k, doc)| item(k, CompletionItemKind::PROPERTY, None, doc))
        .collect()
}

const VARIANT_SCHEMA: &str = include_str!("../../../schemas/variant.schema.json");

/// The keys `schemas/variant.schema.json` allows in a table, with their
/// descriptions.
pub fn schema_keys(table: &[String]) -> Vec<(String, Option<String>)> {
    let schema: serde_json::Value = serde_json::from_str(VARIANT_SCHEMA).unwrap_or_default();
    let mut node = &schema;
    for part in table {
        node = match node.get("properties").and_then(|p| p.get(part)) {
            Some(n) => n,
            None => match node.get("additionalProperties") {
                Some(n) if n.is_object() => n,
                _ => return Vec::new(),
            },
        };
    }
    let props = node
        .get("properties")
        .or_else(|| node.get("additionalProperties").and_then(|a| a.get("properties")));
    let Some(serde_json::Value::Object(props)) = props else {
        return Vec::new();
    };
    props
        .iter()
        .map(|(k, p)| {
            (
                k.clone(),
                p.get("description").and_then(|d| d.as_str()).map(str::to_string),
            )
        })
        .collect()
}

/// The word at `offset` of a script, for a rename's check.
pub fn is_identifier(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') && name.chars().all(crate::text::is_word)
}

/// Places as protocol locations.
pub fn locations(ws: &Workspace, places: Vec<Place>) -> Vec<Location> {
    places
        .into_iter()
        .filter_map(|(p, r)| {
            let text = ws.text(&p)?;
            Some(Location::new(crate::uri::from_path(&p), LineIndex::new(&text).range(r)))
        })
        .collect()
}
