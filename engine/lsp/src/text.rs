//! Positions in a text: the loader's byte offsets and 1-based lines and
//! columns (counted in characters), and the protocol's 0-based lines and
//! UTF-16 columns. A designer's notes may hold accents and symbols, where
//! the three counts differ.

use lsp_types::{Position, Range};

/// Where each line of a text starts, to turn byte offsets into positions
/// and back without rescanning the text.
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, starts }
    }

    /// The text of line `line` (0-based), without its line break.
    pub fn line(&self, line: usize) -> &'a str {
        let Some(&start) = self.starts.get(line) else {
            return "";
        };
        let end = self.starts.get(line + 1).map_or(self.text.len(), |&e| e - 1);
        self.text[start..end].trim_end_matches('\r')
    }

    /// The protocol position of byte `offset` (clamped to the text, and
    /// back to the start of a character it falls inside).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let character = self.text[self.starts[line]..offset].encode_utf16().count();
        Position::new(line as u32, character as u32)
    }

    /// The byte offset of a protocol position (a column past the line's end
    /// is its end, a line past the text is the text's end).
    pub fn offset(&self, pos: Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return self.text.len();
        };
        let line = self.line(pos.line as usize);
        let mut units = 0;
        for (i, c) in line.char_indices() {
            if units >= pos.character as usize {
                return start + i;
            }
            units += c.len_utf16();
        }
        start + line.len()
    }

    pub fn range(&self, span: std::ops::Range<usize>) -> Range {
        Range::new(self.position(span.start), self.position(span.end))
    }

    /// The range a loader diagnostic points at, from its 1-based line and
    /// column (in characters): the word or string there, else the rest of
    /// the line; the whole first line for a diagnostic about the file.
    pub fn diagnostic_range(&self, line: usize, column: usize) -> Range {
        if line == 0 {
            return Range::new(
                Position::new(0, 0),
                Position::new(0, self.line(0).encode_utf16().count() as u32),
            );
        }
        let text = self.line(line - 1);
        let start = text
            .char_indices()
            .nth(column.saturating_sub(1))
            .map_or(text.len(), |(i, _)| i);
        let len = token_len(&text[start..]);
        let base = self.starts.get(line - 1).copied().unwrap_or(self.text.len());
        let (a, b) = (base + start, base + start + len);
        if a == b {
            // Past the line's end (a missing `;`): one column wide.
            let p = self.position(a);
            return Range::new(p, Position::new(p.line, p.character + 1));
        }
        self.range(a..b)
    }
}

/// The length in bytes of the token `rest` starts with: a word, a quoted
/// string, or one character; the rest of the line for a TOML table header.
fn token_len(rest: &str) -> usize {
    let mut chars = rest.char_indices();
    match chars.next() {
        None => 0,
        Some((_, c)) if is_word(c) => rest.find(|c: char| !is_word(c)).unwrap_or(rest.len()),
        Some((_, q @ ('"' | '\''))) => {
            let mut escaped = false;
            for (i, c) in chars {
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    _ if c == q => return i + 1,
                    _ => {}
                }
            }
            rest.len()
        }
        Some((_, '[')) => rest.find(']').map_or(rest.len(), |i| i + 1),
        Some((_, c)) => c.len_utf8(),
    }
}

pub fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The word (letters, digits, `_`) around byte `offset`, as a byte range.
pub fn word_at(text: &str, offset: usize) -> Option<std::ops::Range<usize>> {
    let offset = offset.min(text.len());
    let start = text[..offset]
        .rfind(|c: char| !is_word(c))
        .map_or(0, |i| i + text[i..].chars().next().map_or(1, char::len_utf8));
    let end = text[offset..]
        .find(|c: char| !is_word(c))
        .map_or(text.len(), |i| offset + i);
    (start < end).then_some(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_positions_round_trip_past_wide_characters() {
        // "é" is 2 bytes and 1 UTF-16 unit; "𝄞" is 4 bytes and 2 units.
        let text = "let a = 1;\n// é𝄞 x\r\nfn f() {}";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(index.position(x), Position::new(1, 7));
        assert_eq!(index.offset(Position::new(1, 7)), x);
        let f = text.find("fn").unwrap();
        assert_eq!(index.position(f), Position::new(2, 0));
        assert_eq!(index.offset(Position::new(2, 3)), f + 3);
        // Clamped: past a line's end, past the text.
        assert_eq!(index.offset(Position::new(0, 99)), 10);
        assert_eq!(index.offset(Position::new(9, 0)), text.len());
        assert_eq!(index.line(1), "// é𝄞 x");
        // Inside a character: its start.
        assert_eq!(index.position(text.find('é').unwrap() + 1), Position::new(1, 3));
    }

    #[test]
    fn a_diagnostic_covers_the_word_or_string_at_its_column() {
        let text = "[actions.stay]\napply = \"do_sty\"\nx = 1\n  enter_stp(\"a\");";
        let index = LineIndex::new(text);
        // Column 9 of line 2 (1-based) is the opening quote.
        assert_eq!(
            index.diagnostic_range(2, 9),
            Range::new(Position::new(1, 8), Position::new(1, 16))
        );
        assert_eq!(
            index.diagnostic_range(4, 3),
            Range::new(Position::new(3, 2), Position::new(3, 11))
        );
        assert_eq!(
            index.diagnostic_range(1, 1),
            Range::new(Position::new(0, 0), Position::new(0, 14))
        );
        // Past the end of a line: one column.
        assert_eq!(
            index.diagnostic_range(3, 6),
            Range::new(Position::new(2, 5), Position::new(2, 6))
        );
        // The file as a whole: its first line.
        assert_eq!(
            index.diagnostic_range(0, 0),
            Range::new(Position::new(0, 0), Position::new(0, 14))
        );
    }

    #[test]
    fn the_word_around_an_offset() {
        let text = "a.do_fire(x)";
        assert_eq!(word_at(text, 5), Some(2..9));
        assert_eq!(word_at(text, 2), Some(2..9));
        assert_eq!(word_at(text, 9), Some(2..9));
        assert_eq!(word_at(text, 1), Some(0..1));
        assert_eq!(word_at("()", 1), None);
    }
}
