//! `file:` URIs and paths. `lsp-types` 0.97 keeps URIs as text; the
//! server deals only in local files, so the two conversions are here.

use lsp_types::Uri;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The path of a `file:` URI (percent-escapes decoded), if it is one.
pub fn to_path(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    // `file:///C:/x` on Windows; `file:///x` elsewhere (an authority,
    // `file://host/x`, is not a local file).
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&rest[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    let text = String::from_utf8(out).ok()?;
    let text = if cfg!(windows) {
        text.trim_start_matches('/').to_string()
    } else {
        text
    };
    Some(PathBuf::from(text))
}

/// The `file:` URI of an absolute path.
pub fn from_path(path: &Path) -> Uri {
    let mut s = String::from("file://");
    let text = path.to_string_lossy().replace('\\', "/");
    if !text.starts_with('/') {
        s.push('/');
    }
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~:".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    Uri::from_str(&s).expect("an escaped file URI parses")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_with_spaces_and_accents_round_trip() {
        let path = Path::new("/tmp/my variants/façade/variant.toml");
        let uri = from_path(path);
        assert_eq!(uri.as_str(), "file:///tmp/my%20variants/fa%C3%A7ade/variant.toml");
        assert_eq!(to_path(&uri).as_deref(), Some(path));
        assert_eq!(to_path(&Uri::from_str("untitled:Untitled-1").unwrap()), None);
    }
}
