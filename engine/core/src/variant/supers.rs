//! `super_NAME(..)`: an override calling the definition it replaced.
//!
//! Scripts are merged in load order (a parent's before its child's, then in
//! `scripts = [...]` order), and a later `fn NAME(..)` of the same arity
//! replaces an earlier one. The rule, applied to the source text before any
//! engine sees it (so that the interpreter and compiled rules agree):
//!
//! - Inside a script that defines `fn NAME` with k parameters, a call
//!   `super_NAME(..)` means the definition of NAME with k parameters that
//!   this script's replaced: the last one in an earlier script.
//! - That earlier definition is renamed, in its own text, from `fn NAME(` to
//!   `fn super_NAME(` (same line). When it too calls `super_NAME`, meaning
//!   the one it replaced in turn, the next one down is renamed
//!   `super_super_NAME`, and the calls in the middle script are rewritten to
//!   that name; and so on, so chains of any depth work and each level's
//!   `super_NAME` means the one directly below it. Line numbers never move.
//! - A `super_NAME` call in a script that does not define NAME, or whose
//!   NAME replaced nothing, is a load error at the call.
//!
//! Only whole-line definitions `fn NAME(a, b) {` are seen (the way every
//! Rulesmith script is written); `//` comments are ignored.

use super::SourceFile;
use crate::error::Diagnostic;

/// A function definition found in a script: its name, arity and line (0-based).
struct Def {
    name: String,
    arity: usize,
    line: usize,
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The code of a line, without its `//` comment.
fn code(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}

fn defs(text: &str) -> Vec<Def> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = code(line).trim_start();
        let Some(rest) = t.strip_prefix("private fn ").or_else(|| t.strip_prefix("fn ")) else {
            continue;
        };
        let rest = rest.trim_start();
        let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
        let Some(params) = rest[name.len()..].trim_start().strip_prefix('(') else {
            continue;
        };
        let params = params.split(')').next().unwrap_or("");
        let arity = if params.trim().is_empty() {
            0
        } else {
            params.split(',').count()
        };
        out.push(Def { name, arity, line: i });
    }
    out
}

/// Byte offsets of the calls `NAME(` in `text` (not definitions, not in comments).
fn calls(text: &str, name: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let c = code(line);
        for (i, _) in c.match_indices(name) {
            let before = c[..i].chars().next_back();
            let after = c[i + name.len()..].trim_start();
            let is_def = c[..i].trim_end().ends_with("fn");
            if before.is_none_or(|b| !is_ident(b)) && after.starts_with('(') && !is_def {
                out.push(start + i);
            }
        }
        start += line.len();
    }
    out
}

/// Replaces, on line `line` (0-based) of `text`, the first `from(` by `to(`.
fn rename_on_line(text: &mut String, line: usize, from: &str, to: &str) {
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let mut at = start;
    while let Some(i) = text[at..end].find(from) {
        let i = at + i;
        let before = text[..i].chars().next_back();
        if before.is_none_or(|b| !is_ident(b)) && text[i + from.len()..end].trim_start().starts_with('(') {
            text.replace_range(i..i + from.len(), to);
            return;
        }
        at = i + from.len();
    }
}

/// Replaces every call `from(` in `text` by `to(`.
fn rename_calls(text: &mut String, from: &str, to: &str) {
    for offset in calls(text, from).into_iter().rev() {
        text.replace_range(offset..offset + from.len(), to);
    }
}

/// Resolves every `super_NAME` call of the scripts (`scripts`: indices
/// into `files`, in load order), rewriting the texts; returns the problems.
pub(crate) fn resolve(files: &mut [SourceFile], scripts: &[usize]) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let all: Vec<Vec<Def>> = scripts.iter().map(|&f| defs(&files[f].text)).collect();
    // Per script (by position in `scripts`): (NAME, arity, position of the
    // script whose definition it replaced).
    let mut links: Vec<(usize, String, usize, usize)> = Vec::new();
    for (j, &f) in scripts.iter().enumerate() {
        let text = files[f].text.clone();
        let mut names: Vec<String> = Vec::new();
        for (i, _) in text.match_indices("super_") {
            let rest: String = text[i + 6..].chars().take_while(|&c| is_ident(c)).collect();
            if !rest.is_empty() && !names.contains(&rest) && !calls(&text, &format!("super_{rest}")).is_empty() {
                names.push(rest);
            }
        }
        for name in names {
            let first_call = calls(&text, &format!("super_{name}"))[0];
            let own: Vec<usize> = all[j].iter().filter(|d| d.name == name).map(|d| d.arity).collect();
            let fail = |message: String| Diagnostic::new(&files[f].path, message).at_offset(&text, first_call);
            if own.is_empty() {
                diags.push(fail(format!(
                    "super_{name}() calls the definition of '{name}' that this script replaces, but this script defines no fn {name}"
                )));
                continue;
            }
            let mut found = false;
            for arity in own {
                if let Some(k) = (0..j)
                    .rev()
                    .find(|&k| all[k].iter().any(|d| d.name == name && d.arity == arity))
                {
                    links.push((j, name.clone(), arity, k));
                    found = true;
                }
            }
            if !found {
                diags.push(fail(format!(
                    "super_{name}(): this script's fn {name} replaces no earlier definition (no script before it defines '{name}' with the same number of arguments)"
                )));
            }
        }
    }
    // Follow each chain from its last (active) link down, renaming level by
    // level: the definition replaced by the active one is `super_NAME`, the
    // one below it `super_super_NAME`, ...
    let mut done: Vec<(usize, String, usize)> = Vec::new();
    for &(top, ref name, arity, _) in links.iter().rev() {
        if done.contains(&(top, name.clone(), arity)) {
            continue;
        }
        // Only start from a script that is not itself renamed (the active
        // definition, or one whose overrider does not call super).
        let renamed_by_later = links.iter().any(|(_, n, a, k)| n == name && *a == arity && *k == top);
        if renamed_by_later {
            continue;
        }
        let mut level = 1;
        let mut at = top;
        while let Some(&(_, _, _, below)) = links.iter().find(|(j, n, a, _)| *j == at && n == name && *a == arity) {
            done.push((at, name.clone(), arity));
            let calls_name = format!("super_{name}");
            let target = format!("{}{name}", "super_".repeat(level));
            // The calls in the overriding script name the level below.
            if level > 1 {
                rename_calls(&mut files[scripts[at]].text, &calls_name, &target);
            }
            let line = all[below]
                .iter()
                .rev()
                .find(|d| d.name == *name && d.arity == arity)
                .map(|d| d.line)
                .expect("linked to a script defining it");
            rename_on_line(&mut files[scripts[below]].text, line, name, &target);
            level += 1;
            at = below;
        }
    }
    diags
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, text: &str) -> SourceFile {
        SourceFile {
            path: name.into(),
            text: text.into(),
        }
    }

    #[test]
    fn three_levels_each_call_the_one_below() {
        let mut files = vec![
            file("a", "fn turn_start() {\n  a();\n}\n"),
            file("b", "fn turn_start() {\n  super_turn_start();\n  b();\n}\n"),
            file(
                "c",
                "fn turn_start() {\n  super_turn_start(); // then more\n  c();\n}\n",
            ),
        ];
        let diags = resolve(&mut files, &[0, 1, 2]);
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(files[0].text, "fn super_super_turn_start() {\n  a();\n}\n");
        assert_eq!(
            files[1].text,
            "fn super_turn_start() {\n  super_super_turn_start();\n  b();\n}\n"
        );
        assert_eq!(
            files[2].text,
            "fn turn_start() {\n  super_turn_start(); // then more\n  c();\n}\n"
        );
    }

    #[test]
    fn a_super_call_that_replaced_nothing_is_an_error_at_the_call() {
        let mut files = vec![
            file("a", "fn other(x) {}\n"),
            file("b", "fn turn_start() {\n  super_turn_start();\n}\n"),
            file("c", "fn f() {\n  super_g(1);\n}\n"),
        ];
        let diags = resolve(&mut files, &[0, 1, 2]);
        assert_eq!(diags.len(), 2, "{diags:?}");
        assert_eq!((diags[0].line, diags[0].column), (2, 3));
        assert!(diags[0].message.contains("replaces no earlier definition"));
        assert!(diags[1].message.contains("defines no fn g"));
    }

    #[test]
    fn arity_must_match() {
        let mut files = vec![
            file("a", "fn score(seat) {\n  1\n}\nfn score() {\n  2\n}\n"),
            file("b", "fn score(seat) {\n  super_score(seat) + 1\n}\n"),
        ];
        assert!(resolve(&mut files, &[0, 1]).is_empty());
        assert_eq!(files[0].text, "fn super_score(seat) {\n  1\n}\nfn score() {\n  2\n}\n");
    }
}
