//! A small scanner of Rhai text: identifiers, string literals and
//! punctuation, with their byte ranges, comments skipped. The editor
//! features need the exact range of every name and string, in scripts
//! that are often mid-edit and do not parse; Rhai's syntax tree has only
//! the start of each expression, and only for a script that parses.

use std::ops::Range;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Ident,
    /// A string literal; the token's range includes the quotes.
    Str,
    Number,
    Punct(char),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub span: Range<usize>,
}

impl Token {
    /// A string's contents (without the quotes), as a byte range.
    pub fn inner(&self) -> Range<usize> {
        match self.kind {
            Kind::Str => self.span.start + 1..(self.span.end - 1).max(self.span.start + 1),
            _ => self.span.clone(),
        }
    }
}

/// The tokens of `text`, in order. An unclosed string runs to the end of
/// its line (what a reader sees while typing it).
pub fn tokens(text: &str) -> Vec<Token> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(bytes.len(), |n| i + 2 + n + 2);
            }
            b'"' | b'`' | b'\'' => {
                let start = i;
                i += 1;
                let mut escaped = false;
                while i < bytes.len() {
                    let d = bytes[i];
                    if escaped {
                        escaped = false;
                    } else if d == b'\\' && c != b'`' {
                        escaped = true;
                    } else if d == c {
                        i += 1;
                        break;
                    } else if d == b'\n' && c != b'`' {
                        break;
                    }
                    i += 1;
                }
                let kind = if c == b'\'' { Kind::Number } else { Kind::Str };
                out.push(Token { kind, span: start..i });
            }
            _ if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                let start = i;
                let end = text[i..]
                    .find(|ch: char| !crate::text::is_word(ch))
                    .map_or(bytes.len(), |n| i + n);
                // A non-word character of several bytes: step over it.
                i = if end == start {
                    start + text[start..].chars().next().map_or(1, char::len_utf8)
                } else {
                    end
                };
                if end > start {
                    out.push(Token {
                        kind: Kind::Ident,
                        span: start..end,
                    });
                }
            }
            _ if c.is_ascii_digit() => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                out.push(Token {
                    kind: Kind::Number,
                    span: start..i,
                });
            }
            _ if c.is_ascii_whitespace() => i += 1,
            _ => {
                out.push(Token {
                    kind: Kind::Punct(c as char),
                    span: i..i + 1,
                });
                i += 1;
            }
        }
    }
    out
}

/// For the string token at `index`: the function whose call it is an
/// argument of, and which argument (0-based), if it is one.
pub fn call_argument(tokens: &[Token], text: &str, index: usize) -> Option<(String, usize)> {
    let mut depth = 0usize;
    let mut arg = 0;
    for j in (0..index).rev() {
        match tokens[j].kind {
            Kind::Punct(')' | ']' | '}') => depth += 1,
            Kind::Punct('(') if depth == 0 => {
                let name = tokens.get(j.checked_sub(1)?)?;
                return (name.kind == Kind::Ident).then(|| (text[name.span.clone()].to_string(), arg));
            }
            Kind::Punct('[' | '{') if depth == 0 => return None,
            Kind::Punct('(' | '[' | '{') => depth -= 1,
            Kind::Punct(',') if depth == 0 => arg += 1,
            Kind::Punct(';') => return None,
            _ => {}
        }
    }
    None
}

/// Every function defined in `text`: its name's token range and its
/// parameters' names.
pub fn definitions(text: &str, tokens: &[Token]) -> Vec<(Range<usize>, Vec<String>)> {
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if t.kind == Kind::Ident && &text[t.span.clone()] == "fn" {
            let Some(name) = tokens.get(i + 1).filter(|n| n.kind == Kind::Ident) else {
                continue;
            };
            let mut params = Vec::new();
            if tokens.get(i + 2).is_some_and(|p| p.kind == Kind::Punct('(')) {
                for p in &tokens[i + 3..] {
                    match p.kind {
                        Kind::Ident => params.push(text[p.span.clone()].to_string()),
                        Kind::Punct(',') => {}
                        _ => break,
                    }
                }
            }
            out.push((name.span.clone(), params));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        tokens(text).iter().map(|t| text[t.span.clone()].to_string()).collect()
    }

    #[test]
    fn comments_are_skipped_and_strings_kept_whole() {
        let text = "fn a(x) { // add(\"no\")\n add(\"s\\\"t\", x); /* b() */ }";
        assert_eq!(
            words(text),
            [
                "fn",
                "a",
                "(",
                "x",
                ")",
                "{",
                "add",
                "(",
                "\"s\\\"t\"",
                ",",
                "x",
                ")",
                ";",
                "}"
            ]
        );
        // An unclosed string stops at its line's end.
        assert_eq!(words("add(\"sta\nx"), ["add", "(", "\"sta", "x"]);
    }

    #[test]
    fn a_string_knows_its_call_and_argument() {
        let text = "roll(2, param(\"die\"), \"after\"); [\"x\"]";
        let t = tokens(text);
        let at = |s: &str| t.iter().position(|k| &text[k.span.clone()] == s).unwrap();
        assert_eq!(call_argument(&t, text, at("\"die\"")), Some(("param".into(), 0)));
        assert_eq!(call_argument(&t, text, at("\"after\"")), Some(("roll".into(), 2)));
        assert_eq!(call_argument(&t, text, at("\"x\"")), None);
        assert_eq!(t[at("\"after\"")].inner(), 23..28);
    }

    #[test]
    fn definitions_with_their_parameters() {
        let text = "fn do_fire(side, n) {}\nprivate fn helper() {}";
        let d = definitions(text, &tokens(text));
        assert_eq!(d.len(), 2);
        assert_eq!(&text[d[0].0.clone()], "do_fire");
        assert_eq!(d[0].1, ["side", "n"]);
        assert_eq!(&text[d[1].0.clone()], "helper");
    }
}
