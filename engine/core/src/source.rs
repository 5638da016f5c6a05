//! What core reads of the Rhai source language: the sandboxed parser that
//! every script is compiled under, and the mapping of syntax errors to
//! diagnostics. Core parses scripts (the loader reports syntax errors with
//! the data's, and a compiler reads the same source) but runs none: the
//! interpreter's natives live in `rulesmith-rhai`.

use crate::error::Diagnostic;
use crate::rules::Limits;
use crate::variant::SourceFile;
use rhai::{Engine, AST};
use std::io::Write as _;

/// A Rhai engine with the sandbox settings and none of the natives: what
/// every script is parsed and run under.
pub fn sandbox(limits: Limits) -> Engine {
    let mut engine = Engine::new();
    // Sandbox: no module loading, no eval, bounded everything.
    engine.set_module_resolver(rhai::module_resolvers::DummyModuleResolver::new());
    engine.disable_symbol("eval");
    engine.set_max_operations(limits.max_operations);
    engine.set_max_call_levels(limits.max_call_levels);
    engine.set_max_expr_depths(limits.max_expr_depth, limits.max_expr_depth);
    engine.set_max_string_size(limits.max_string_size);
    engine.set_max_array_size(limits.max_array_size);
    engine.set_max_map_size(limits.max_map_size);
    engine.set_strict_variables(true);
    engine.set_fail_on_invalid_map_property(true);
    // A script's print goes to standard error, and a closed pipe there
    // (`rulesmith ... 2>&1 | head`) must not abort the game.
    engine.on_print(|s| {
        let _ = writeln!(std::io::stderr(), "{s}");
    });
    engine.on_debug(|s, src, pos| {
        let _ = writeln!(std::io::stderr(), "{}{pos:?}: {s}", src.unwrap_or(""));
    });
    engine
}

/// Compiles one script file; a syntax error becomes a diagnostic at the
/// place a reader would look (a missing `;` is reported at the end of the
/// line that lacks it, not at the next token).
pub fn compile_source(engine: &Engine, src: &SourceFile, what: &str) -> Result<AST, Diagnostic> {
    engine.compile(&src.text).map_err(|e| {
        let pos = e.position();
        let (mut line, mut column) = (pos.line().unwrap_or(0), pos.position().unwrap_or(0));
        if let rhai::ParseErrorType::MissingToken(token, _) = e.err_type() {
            if token == ";" {
                // Back up to the last line with code before the reported one.
                let lines: Vec<&str> = src.text.lines().collect();
                let mut l = line.saturating_sub(1);
                while l > 0 {
                    let code = lines[l - 1].split("//").next().unwrap_or("").trim_end();
                    if !code.trim().is_empty() {
                        line = l;
                        column = code.chars().count() + 1;
                        break;
                    }
                    l -= 1;
                }
            }
        }
        let mut message = format!("{what}script syntax error: {}", e.err_type());
        let unclosed = match e.err_type() {
            rhai::ParseErrorType::WrongFnDefinition => true,
            rhai::ParseErrorType::MissingToken(token, _) => token == "}",
            _ => false,
        };
        if let Some((open_line, name)) = unclosed.then(|| unclosed_function(&src.text, line)).flatten() {
            // A missing '}' shows where the parser gives up (the next
            // function, the end of the file), far from the mistake: point
            // at the function left open.
            message = format!(
                "{what}script syntax error: a '}}' is missing in function '{name}': its body is still open at line {line}{}",
                if matches!(e.err_type(), rhai::ParseErrorType::WrongFnDefinition) {
                    ", where the next function starts"
                } else {
                    ", the end of the file"
                }
            );
            line = open_line;
            column = 1;
        }
        if let rhai::ParseErrorType::VariableUndefined(_) = e.err_type() {
            // The line, or one of the three before it for a body written
            // below its parameters.
            let lines: Vec<&str> = src.text.lines().collect();
            let here = line.saturating_sub(1).min(lines.len());
            if lines[here.saturating_sub(3)..(here + 1).min(lines.len())]
                .iter()
                .any(|l| opens_anonymous_function(l))
            {
                // Scripts run without capturing closures (see compile flags in
                // docs/ARCHITECTURE.md): say so where a designer would try one.
                message
                    .push_str(" (an anonymous function |..| cannot see the variables around it: write a loop instead)");
            }
        }
        Diagnostic::new(&src.path, message).at_line(Some(&src.text), line, column)
    })
}

/// The function whose body is still open at `line` (1-based): its first
/// line and name, counting braces outside comments and strings.
fn unclosed_function(text: &str, line: usize) -> Option<(usize, String)> {
    let mut depth = 0usize;
    let mut open: Option<(usize, String)> = None;
    for (i, l) in text.lines().enumerate().take(line.saturating_sub(1)) {
        let code = l.split("//").next().unwrap_or("");
        if depth == 0 {
            if let Some(rest) = code.trim_start().strip_prefix("fn ") {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                open = Some((i + 1, name));
            }
        }
        let mut in_string = false;
        let mut escaped = false;
        for c in code.chars() {
            match c {
                _ if escaped => escaped = false,
                '\\' if in_string => escaped = true,
                '"' => in_string = !in_string,
                '{' if !in_string => depth += 1,
                '}' if !in_string => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
    }
    (depth > 0).then_some(open).flatten()
}

/// True when `line` holds the parameter list of an anonymous function,
/// `|x|` or `|a, b|` (not the `||` operator).
fn opens_anonymous_function(line: &str) -> bool {
    let code: Vec<char> = line.split("//").next().unwrap_or("").chars().collect();
    let mut i = 0;
    while i < code.len() {
        if code[i] == '|' {
            if code.get(i + 1) == Some(&'|') {
                i += 2;
                continue;
            }
            let params = code[i + 1..]
                .iter()
                .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | ',' | ' '))
                .count();
            if params > 0 && code.get(i + 1 + params) == Some(&'|') {
                return true;
            }
        }
        i += 1;
    }
    false
}

/// The line (1-based) where `fn NAME(` is defined in `text`, if found.
pub fn fn_line(text: &str, name: &str) -> usize {
    text.lines()
        .position(|l| {
            let t = l.trim_start();
            t.strip_prefix("fn ")
                .or_else(|| t.strip_prefix("private fn "))
                .is_some_and(|r| {
                    r.trim_start()
                        .strip_prefix(name)
                        .is_some_and(|r| r.trim_start().starts_with('('))
                })
        })
        .map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_parameter_list_counts_as_an_anonymous_function() {
        assert!(opens_anonymous_function("let ok = [1, 2].filter(|n| n < goal);"));
        assert!(opens_anonymous_function("list.reduce(|sum, x| sum + x, 0)"));
        assert!(!opens_anonymous_function("if goal > 2 || gaol > 5 {"));
        assert!(!opens_anonymous_function("let x = 1; // |not| code"));
        assert!(!opens_anonymous_function("let flags = a | 4;"));
    }
}
