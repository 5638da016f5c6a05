//! A line scanner of TOML text: table headers, keys and string values,
//! each with its byte range and the table it sits in. It reads a file
//! that is mid-edit and does not parse (the `toml` crate's spans need a
//! file that does), which is what an editor mostly has.

use std::ops::Range;

/// A table header, `[actions.stay]`: its dotted path and each part's range.
#[derive(Clone, Debug)]
pub struct Header {
    pub path: Vec<String>,
    pub spans: Vec<Range<usize>>,
    /// The whole line.
    pub line: Range<usize>,
}

/// A key, `apply = ...`, in the table `table`.
#[derive(Clone, Debug)]
pub struct Key {
    pub table: Vec<String>,
    pub name: String,
    pub span: Range<usize>,
}

/// A string value, in table `table` under key `key` (the nearest key
/// before it: in an inline table, the inner one).
#[derive(Clone, Debug)]
pub struct Str {
    pub table: Vec<String>,
    pub key: String,
    pub value: String,
    /// The contents, without the quotes.
    pub inner: Range<usize>,
}

#[derive(Default, Debug)]
pub struct Scan {
    pub headers: Vec<Header>,
    pub keys: Vec<Key>,
    pub strings: Vec<Str>,
}

impl Scan {
    /// The table that byte `offset` sits in.
    pub fn table_at(&self, offset: usize) -> Vec<String> {
        self.headers
            .iter()
            .rev()
            .find(|h| h.line.start <= offset)
            .map(|h| h.path.clone())
            .unwrap_or_default()
    }

    pub fn string_at(&self, offset: usize) -> Option<&Str> {
        self.strings
            .iter()
            .find(|s| s.inner.start <= offset && offset <= s.inner.end)
    }

    /// The header part at `offset`: its header and which part.
    pub fn header_part_at(&self, offset: usize) -> Option<(&Header, usize)> {
        self.headers.iter().find_map(|h| {
            h.spans
                .iter()
                .position(|s| s.start <= offset && offset <= s.end)
                .map(|i| (h, i))
        })
    }

    /// Where `name` is declared in table `table`: the header
    /// `[table.name]` (its last part), or the key `name` in `[table]`.
    pub fn declaration(&self, table: &str, name: &str) -> Option<Range<usize>> {
        self.headers
            .iter()
            .find(|h| h.path.len() == 2 && h.path[0] == table && h.path[1] == name)
            .map(|h| h.spans[1].clone())
            .or_else(|| {
                self.keys
                    .iter()
                    .find(|k| k.table.len() == 1 && k.table[0] == table && k.name == name)
                    .map(|k| k.span.clone())
            })
    }
}

/// The byte ranges of the quoted strings of `line` (contents only), and
/// where a comment starts.
fn quoted(line: &str) -> (Vec<Range<usize>>, usize) {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'#' => return (out, i),
            q @ (b'"' | b'\'') => {
                let start = i + 1;
                i += 1;
                while i < b.len() && b[i] != q {
                    if b[i] == b'\\' && q == b'"' {
                        i += 1;
                    }
                    i += 1;
                }
                out.push(start..i.min(b.len()));
                i += 1;
            }
            _ => i += 1,
        }
    }
    (out, b.len())
}

fn unquote(s: &str) -> String {
    s.trim().trim_matches('"').trim_matches('\'').to_string()
}

pub fn scan(text: &str) -> Scan {
    let mut out = Scan::default();
    let mut table: Vec<String> = Vec::new();
    let mut last_key = String::new();
    let mut start = 0;
    for raw in text.split_inclusive('\n') {
        let line = raw.trim_end_matches(['\n', '\r']);
        let (strings, comment) = quoted(line);
        let code = &line[..comment];
        let trimmed = code.trim_start();
        let indent = code.len() - trimmed.len();
        if trimmed.starts_with('[') && !trimmed.contains('=') {
            let open = trimmed.chars().take_while(|&c| c == '[').count();
            let body_start = indent + open;
            let body_end = code.find(']').unwrap_or(code.len()).max(body_start);
            let mut path = Vec::new();
            let mut spans = Vec::new();
            let mut at = body_start;
            for part in code[body_start..body_end].split('.') {
                let lead = part.len() - part.trim_start().len();
                let name = part.trim();
                let s = start + at + lead;
                spans.push(s..s + name.len());
                path.push(unquote(name));
                at += part.len() + 1;
            }
            out.headers.push(Header {
                path: path.clone(),
                spans,
                line: start..start + line.len(),
            });
            table = path;
            last_key.clear();
        } else {
            // Every `key =` of the line (several in an inline table).
            let mut keys_here: Vec<(usize, String)> = Vec::new();
            let mut segment_start = 0;
            for (i, c) in code.char_indices() {
                let in_string = strings.iter().any(|s| s.start <= i && i < s.end);
                if in_string {
                    continue;
                }
                match c {
                    '{' | ',' => segment_start = i + 1,
                    '=' => {
                        let k = &code[segment_start..i];
                        let name = unquote(k);
                        if !name.is_empty() && !k.contains('[') {
                            let lead = k.len() - k.trim_start().len();
                            let s = start + segment_start + lead;
                            out.keys.push(Key {
                                table: table.clone(),
                                name: name.clone(),
                                span: s..s + k.trim().len(),
                            });
                            keys_here.push((i, name));
                        }
                    }
                    _ => {}
                }
            }
            for s in &strings {
                if s.start > comment {
                    break;
                }
                let key = keys_here
                    .iter()
                    .rev()
                    .find(|(at, _)| *at < s.start)
                    .map(|(_, k)| k.clone())
                    .unwrap_or_else(|| last_key.clone());
                out.strings.push(Str {
                    table: table.clone(),
                    key,
                    value: line[s.clone()].to_string(),
                    inner: start + s.start..start + s.end,
                });
            }
            if let Some((_, k)) = keys_here.first() {
                last_key = k.clone();
            }
        }
        start += raw.len();
    }
    out
}

/// Keys whose string value names a script function.
pub const FUNCTION_KEYS: &[&str] = &[
    "apply", "legal", "enter", "run", "check", "on_start", "on_end", "summary", "render", "evaluate", "labels",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_keys_and_strings_with_their_tables() {
        let text = "[variant]\nscripts = [\n  \"a.rhai\", # x \"no\"\n]\n[actions.stay]\ntext = \"stay\" # c\napply = \"do_stay\"\n[decks.cards]\nfields = { hull = { type = \"int\" } }\n";
        let s = scan(text);
        assert_eq!(s.headers.len(), 3);
        assert_eq!(&text[s.headers[1].spans[1].clone()], "stay");
        let values: Vec<(&str, &str)> = s.strings.iter().map(|x| (x.key.as_str(), x.value.as_str())).collect();
        assert_eq!(
            values,
            [
                ("scripts", "a.rhai"),
                ("text", "stay"),
                ("apply", "do_stay"),
                ("type", "int")
            ]
        );
        let apply = &s.strings[2];
        assert_eq!(apply.table, ["actions", "stay"]);
        assert_eq!(&text[apply.inner.clone()], "do_stay");
        assert_eq!(s.declaration("actions", "stay"), Some(s.headers[1].spans[1].clone()));
        assert_eq!(s.table_at(apply.inner.start), ["actions", "stay"]);
        assert!(s.string_at(apply.inner.start + 2).is_some_and(|x| x.value == "do_stay"));
        let keys: Vec<&str> = s.keys.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(keys, ["scripts", "text", "apply", "fields", "hull", "type"]);
    }

    #[test]
    fn a_key_of_a_plain_table_is_a_declaration() {
        let text = "[stats]\nrepairs = \"Repair points\"\n";
        let s = scan(text);
        assert_eq!(s.declaration("stats", "repairs"), Some(8..15));
    }
}
