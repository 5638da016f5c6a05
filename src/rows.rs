//! `--rows FILE`: one row per game of `simulate` and `compare`, for
//! analysis in pandas, polars, R or a spreadsheet. JSON Lines or Parquet,
//! chosen by the file's extension (`.jsonl`/`.ndjson` or `.parquet`).
//!
//! Rows are written as games finish, in game order, so a run of a million
//! games never holds them all: JSON Lines line by line, Parquet in row
//! groups of [`ROW_GROUP`] rows. The columns (documented in
//! docs/simulation.md, "Rows") are the same in both formats:
//!
//! | column | type | what |
//! | --- | --- | --- |
//! | `game` | u64 | 1-based number of the game in the run |
//! | `seed` | u64 | the game's seed |
//! | `side` | string or null | `A` or `B` in `compare`, null in `simulate` |
//! | `bots` | list of strings | the bot of each seat, P1 first |
//! | `winner` | string or null | `P1`, `P2`, ...; null for a draw |
//! | `first` | string or null | the seat that played turn 1 |
//! | `turns`, `decisions` | u64 | the game's length |
//! | `counters` | struct of i64 | the variant's declared counters, by name |
//! | `labels` | map string -> string | the variant's labels of the game |
//! | `params` | struct | every parameter's value in force (i64, bool or string) |
//! | `scores` | list of i64 or null | each seat's final score, P1 first, when the variant declares `[scores]` |

use crate::Failure;
use arrow_array::builder::{Int64Builder, ListBuilder, MapBuilder, StringBuilder};
use arrow_array::{ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray, StructArray, UInt64Array};
use arrow_schema::{DataType, Field, Fields, Schema};
use parquet::arrow::ArrowWriter;
use rulesmith_core::variant::Value;
use rulesmith_core::Variant;
use rulesmith_lab::sim::GameResult;
use serde_json::{json, Map};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows per Parquet row group: what is held in memory at most.
pub const ROW_GROUP: usize = 65_536;

/// The names the rows carry, fixed before the first game: the union of
/// the counters and parameters of the variants played (both sides of a
/// comparison), in declaration order.
pub struct Columns {
    counters: Vec<String>,
    params: Vec<(String, ParamType)>,
}

#[derive(Clone, Copy, PartialEq)]
enum ParamType {
    Int,
    Bool,
    Str,
}

fn param_type(v: &Value) -> ParamType {
    match v {
        Value::Int(_) => ParamType::Int,
        Value::Bool(_) => ParamType::Bool,
        Value::Str(_) => ParamType::Str,
    }
}

impl Columns {
    pub fn of(variants: &[&Variant]) -> Columns {
        let mut c = Columns {
            counters: Vec::new(),
            params: Vec::new(),
        };
        for v in variants {
            for (name, _) in &v.stats {
                if !c.counters.contains(name) {
                    c.counters.push(name.clone());
                }
            }
            for p in &v.params {
                if !c.params.iter().any(|(n, _)| *n == p.name) {
                    c.params.push((p.name.clone(), param_type(&p.value)));
                }
            }
        }
        c
    }
}

/// Where rows go.
enum Sink {
    Lines(BufWriter<std::fs::File>),
    Parquet {
        writer: Box<ArrowWriter<std::fs::File>>,
        schema: Arc<Schema>,
        pending: Vec<Row>,
    },
}

/// One game, as it is written.
struct Row {
    game: u64,
    seed: u64,
    side: Option<&'static str>,
    bots: Vec<String>,
    winner: Option<String>,
    first: Option<String>,
    turns: u64,
    decisions: u64,
    /// Each seat's score; none when the variant declares no `[scores]`.
    scores: Option<Vec<i64>>,
    counters: Vec<Option<i64>>,
    labels: Vec<(String, String)>,
    params: Vec<Option<Value>>,
}

/// A rows file being written.
pub struct Rows {
    path: PathBuf,
    columns: Columns,
    sink: Sink,
}

fn seat(s: Option<usize>) -> Option<String> {
    s.map(|s| format!("P{}", s + 1))
}

impl Rows {
    /// Creates `path` (JSON Lines or Parquet by its extension).
    pub fn create(path: &Path, columns: Columns) -> Result<Rows, Failure> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("")
            .to_ascii_lowercase();
        let parquet = match ext.as_str() {
            "jsonl" | "ndjson" => false,
            "parquet" => true,
            _ => {
                return Err(Failure::usage(format!(
                    "--rows {}: the file's extension says its format: .jsonl (or .ndjson) for JSON Lines, .parquet for Parquet",
                    path.display()
                )))
            }
        };
        let file = std::fs::File::create(path)
            .map_err(|e| Failure::input(format!("{}: cannot create: {e}", path.display())))?;
        let sink = if parquet {
            let schema = Arc::new(schema(&columns));
            let props = parquet::file::properties::WriterProperties::builder()
                .set_compression(parquet::basic::Compression::SNAPPY)
                .build();
            let writer = ArrowWriter::try_new(file, schema.clone(), Some(props))
                .map_err(|e| Failure::input(format!("{}: {e}", path.display())))?;
            Sink::Parquet {
                writer: Box::new(writer),
                schema,
                pending: Vec::new(),
            }
        } else {
            Sink::Lines(BufWriter::new(file))
        };
        Ok(Rows {
            path: path.to_path_buf(),
            columns,
            sink,
        })
    }

    fn fail(&self, e: impl std::fmt::Display) -> Failure {
        Failure::input(format!("{}: cannot write rows: {e}", self.path.display()))
    }

    /// Writes the row of one game, played on `variant` (`side` in compare).
    pub fn write(&mut self, r: &GameResult, variant: &Variant, side: Option<&'static str>) -> Result<(), Failure> {
        let row = Row {
            game: r.index + 1,
            seed: r.seed,
            side,
            bots: r.bots.clone(),
            winner: seat(r.winner),
            first: seat(r.first),
            turns: r.turns as u64,
            decisions: r.decisions,
            scores: variant.scores.is_some().then(|| r.scores.clone()),
            counters: self
                .columns
                .counters
                .iter()
                .map(|c| r.stats.iter().find(|(n, _)| n == c).map(|(_, v)| *v))
                .collect(),
            labels: r.labels.clone(),
            params: self
                .columns
                .params
                .iter()
                .map(|(n, _)| variant.param(n).map(|p| p.value.clone()))
                .collect(),
        };
        match &mut self.sink {
            Sink::Lines(out) => {
                let line = self.columns.json(&row);
                writeln!(out, "{line}").map_err(|e| Failure::input(format!("{}: {e}", self.path.display())))
            }
            Sink::Parquet { pending, .. } => {
                pending.push(row);
                if pending.len() >= ROW_GROUP {
                    self.flush()?;
                }
                Ok(())
            }
        }
    }

    /// Writes what is pending as one row group.
    fn flush(&mut self) -> Result<(), Failure> {
        let Sink::Parquet {
            writer,
            schema,
            pending,
        } = &mut self.sink
        else {
            return Ok(());
        };
        if pending.is_empty() {
            return Ok(());
        }
        let rows = std::mem::take(pending);
        let batch = self.columns.batch(schema.clone(), &rows);
        let r = batch.and_then(|b| {
            writer.write(&b)?;
            writer.flush()
        });
        r.map_err(|e| self.fail(e))
    }

    /// Writes what is left and closes the file.
    pub fn finish(mut self) -> Result<(), Failure> {
        self.flush()?;
        match self.sink {
            Sink::Lines(mut out) => out
                .flush()
                .map_err(|e| Failure::input(format!("{}: {e}", self.path.display()))),
            Sink::Parquet { writer, .. } => writer
                .close()
                .map(drop)
                .map_err(|e| Failure::input(format!("{}: cannot write rows: {e}", self.path.display()))),
        }
    }
}

fn value_json(v: &Option<Value>) -> serde_json::Value {
    match v {
        None => serde_json::Value::Null,
        Some(Value::Int(i)) => json!(i),
        Some(Value::Bool(b)) => json!(b),
        Some(Value::Str(s)) => json!(s),
    }
}

fn struct_type(fields: Vec<Field>) -> DataType {
    DataType::Struct(Fields::from(fields))
}

/// The Parquet (Arrow) schema of the rows.
fn schema(c: &Columns) -> Schema {
    let counters = c
        .counters
        .iter()
        .map(|n| Field::new(n, DataType::Int64, true))
        .collect();
    let params = c
        .params
        .iter()
        .map(|(n, t)| {
            let ty = match t {
                ParamType::Int => DataType::Int64,
                ParamType::Bool => DataType::Boolean,
                ParamType::Str => DataType::Utf8,
            };
            Field::new(n, ty, true)
        })
        .collect();
    Schema::new(vec![
        Field::new("game", DataType::UInt64, false),
        Field::new("seed", DataType::UInt64, false),
        Field::new("side", DataType::Utf8, true),
        Field::new(
            "bots",
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            false,
        ),
        Field::new("winner", DataType::Utf8, true),
        Field::new("first", DataType::Utf8, true),
        Field::new("turns", DataType::UInt64, false),
        Field::new("decisions", DataType::UInt64, false),
        Field::new("counters", struct_type(counters), false),
        Field::new("labels", labels_type(), false),
        Field::new("params", struct_type(params), false),
        Field::new(
            "scores",
            DataType::List(Arc::new(Field::new("item", DataType::Int64, true))),
            true,
        ),
    ])
}

fn labels_type() -> DataType {
    let entries = Field::new(
        "entries",
        struct_type(vec![
            Field::new("key", DataType::Utf8, false),
            Field::new("value", DataType::Utf8, true),
        ]),
        false,
    );
    DataType::Map(Arc::new(entries), false)
}

impl Columns {
    fn json(&self, r: &Row) -> serde_json::Value {
        let counters: Map<String, serde_json::Value> = self
            .counters
            .iter()
            .zip(&r.counters)
            .map(|(n, v)| (n.clone(), json!(v)))
            .collect();
        let labels: Map<String, serde_json::Value> = r.labels.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        let params: Map<String, serde_json::Value> = self
            .params
            .iter()
            .zip(&r.params)
            .map(|((n, _), v)| (n.clone(), value_json(v)))
            .collect();
        json!({
            "game": r.game,
            "seed": r.seed,
            "side": r.side,
            "bots": r.bots,
            "winner": r.winner,
            "first": r.first,
            "turns": r.turns,
            "decisions": r.decisions,
            "counters": counters,
            "labels": labels,
            "params": params,
            "scores": r.scores,
        })
    }

    fn batch(&self, schema: Arc<Schema>, rows: &[Row]) -> Result<RecordBatch, parquet::errors::ParquetError> {
        let u64s = |f: &dyn Fn(&Row) -> u64| Arc::new(UInt64Array::from_iter_values(rows.iter().map(f))) as ArrayRef;
        let strs = |f: &dyn Fn(&Row) -> Option<&str>| Arc::new(rows.iter().map(f).collect::<StringArray>()) as ArrayRef;
        let mut bots = ListBuilder::new(StringBuilder::new());
        for r in rows {
            for b in &r.bots {
                bots.values().append_value(b);
            }
            bots.append(true);
        }
        let mut scores = ListBuilder::new(Int64Builder::new());
        for r in rows {
            match &r.scores {
                Some(seats) => {
                    scores.values().append_slice(seats);
                    scores.append(true);
                }
                None => scores.append(false),
            }
        }
        let mut labels = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
        for r in rows {
            for (k, v) in &r.labels {
                labels.keys().append_value(k);
                labels.values().append_value(v);
            }
            labels.append(true)?;
        }
        let Some(DataType::Struct(counter_fields)) = schema.field_with_name("counters").ok().map(|f| f.data_type())
        else {
            unreachable!("the schema has a counters struct")
        };
        let counters: Vec<ArrayRef> = (0..self.counters.len())
            .map(|i| Arc::new(rows.iter().map(|r| r.counters[i]).collect::<Int64Array>()) as ArrayRef)
            .collect();
        let Some(DataType::Struct(param_fields)) = schema.field_with_name("params").ok().map(|f| f.data_type()) else {
            unreachable!("the schema has a params struct")
        };
        let params: Vec<ArrayRef> = self
            .params
            .iter()
            .enumerate()
            .map(|(i, (_, t))| match t {
                ParamType::Int => Arc::new(
                    rows.iter()
                        .map(|r| match &r.params[i] {
                            Some(Value::Int(v)) => Some(*v),
                            _ => None,
                        })
                        .collect::<Int64Array>(),
                ) as ArrayRef,
                ParamType::Bool => Arc::new(
                    rows.iter()
                        .map(|r| match &r.params[i] {
                            Some(Value::Bool(v)) => Some(*v),
                            _ => None,
                        })
                        .collect::<BooleanArray>(),
                ) as ArrayRef,
                ParamType::Str => Arc::new(
                    rows.iter()
                        .map(|r| match &r.params[i] {
                            Some(Value::Str(v)) => Some(v.as_str()),
                            _ => None,
                        })
                        .collect::<StringArray>(),
                ) as ArrayRef,
            })
            .collect();
        let structure = |fields: &Fields, arrays: Vec<ArrayRef>| -> Result<ArrayRef, parquet::errors::ParquetError> {
            let a = if arrays.is_empty() {
                StructArray::new_empty_fields(rows.len(), None)
            } else {
                StructArray::try_new(fields.clone(), arrays, None)?
            };
            Ok(Arc::new(a))
        };
        let columns = vec![
            u64s(&|r| r.game),
            u64s(&|r| r.seed),
            strs(&|r| r.side),
            Arc::new(bots.finish()) as ArrayRef,
            strs(&|r| r.winner.as_deref()),
            strs(&|r| r.first.as_deref()),
            u64s(&|r| r.turns),
            u64s(&|r| r.decisions),
            structure(counter_fields, counters)?,
            Arc::new(labels.finish()) as ArrayRef,
            structure(param_fields, params)?,
            Arc::new(scores.finish()) as ArrayRef,
        ];
        Ok(RecordBatch::try_new(schema, columns)?)
    }
}
