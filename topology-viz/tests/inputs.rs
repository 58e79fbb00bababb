//! The command's input handling never panics: whatever the bytes (not
//! UTF-8, UTF-16, a log around the description, several descriptions,
//! damaged lines), it draws or says why in one line. `streams-core`'s
//! `parse_never_panics_*` tests do the same for the parser alone; these
//! add what the command reads before the parser and draws after it.

use proptest::prelude::*;
use topology_viz::{Format, Renderer, decode, parse_all, render_pasted};

use crate::{JAVA, JOINS, run, scratch, text};

/// Draws `bytes` every way the built-in renderer can; returns how many
/// descriptions were found, if any.
fn draw_all(bytes: &[u8]) -> Option<usize> {
    let found = parse_all(&decode(bytes).ok()?).ok()?;
    for format in Format::ALL {
        let _ = render_pasted(&found, format, Renderer::Builtin);
    }
    Some(found.len())
}

/// A log around descriptions: each line of `texts` kept, dropped,
/// doubled or cut as `edits` say, a prefix on each `Topologies:` line,
/// log lines between them.
fn logged(texts: &[&str], prefix: &str, edits: &[(u8, usize, usize)]) -> String {
    let mut lines: Vec<String> = Vec::new();
    for text in texts {
        lines.push("12:00:00.000 [main] INFO App - starting".to_owned());
        for line in text.lines() {
            if line == "Topologies:" {
                lines.push(format!("{prefix}Topologies:"));
            } else {
                lines.push(line.to_owned());
            }
        }
    }
    for &(kind, at, len) in edits {
        let i = at % lines.len().max(1);
        match kind % 4 {
            0 if !lines.is_empty() => {
                lines.remove(i);
            }
            1 if !lines.is_empty() => {
                let l = lines[i].clone();
                lines.insert(i, l);
            }
            2 if !lines.is_empty() => {
                lines[i] = lines[i].chars().take(len % 40).collect();
            }
            _ => {}
        }
    }
    lines.join("\n")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any bytes: a drawing or an error, never a panic.
    #[test]
    fn any_bytes_draw_or_fail(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let _ = draw_all(&bytes);
        let mut framed = b"Topologies:\n   Sub-topology: 0\n".to_vec();
        framed.extend_from_slice(&bytes);
        let _ = draw_all(&framed);
    }

    /// Logs of one or two descriptions, whole: every description is
    /// found whatever precedes `Topologies:` on its line; damaged: never
    /// a panic, in UTF-8 or UTF-16.
    #[test]
    fn logged_descriptions_are_found(
        prefix in "[ -~]{0,30}[ \\-:|]",
        two in any::<bool>(),
        edits in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 0..5),
    ) {
        let texts: &[&str] = if two { &[JAVA, JOINS] } else { &[JOINS] };
        let whole = logged(texts, &prefix, &[]);
        prop_assert_eq!(draw_all(whole.as_bytes()), Some(texts.len()));
        let damaged = logged(texts, &prefix, &edits);
        let _ = draw_all(damaged.as_bytes());
        let mut utf16 = vec![0xFE, 0xFF];
        utf16.extend(damaged.encode_utf16().flat_map(u16::to_be_bytes));
        prop_assert_eq!(draw_all(&utf16), draw_all(damaged.as_bytes()));
    }
}

proptest! {
    // Each case runs the command: fewer cases.
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The command on damaged logs and any bytes, with any output: it
    /// succeeds quietly or fails with one `error: ` line, never a panic.
    #[test]
    fn the_command_succeeds_or_says_why_in_one_line(
        garbage in any::<bool>(),
        bytes in prop::collection::vec(any::<u8>(), 0..200),
        edits in prop::collection::vec((any::<u8>(), any::<usize>(), any::<usize>()), 0..4),
        output in prop::sample::select(vec!["", "t.dot", "t.svg", "t.html", "t.mmd", "t.jpg", "t", "t.png"]),
        flag in prop::sample::select(vec!["", "--html", "-fsvg", "-fmermaid", "--topology=2"]),
    ) {
        let input = if garbage { bytes } else { logged(&[JAVA, JOINS], "INFO ", &edits).into_bytes() };
        let dir = scratch("inputs").map_err(|e| TestCaseError::fail(e.to_string()))?;
        let mut args: Vec<String> = Vec::new();
        if !flag.is_empty() {
            args.push(flag.to_owned());
        }
        if !output.is_empty() {
            args.push("-o".to_owned());
            args.push(dir.join(output).display().to_string());
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        // No Graphviz: PNG must fail with its one line too.
        let out = run(&args, &input, Some("")).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let err = text(&out.stderr);
        prop_assert!(!err.contains("panicked"), "{}", err);
        match out.status.code() {
            Some(0) => prop_assert_eq!(err, ""),
            Some(1) => {
                prop_assert_eq!(err.lines().count(), 1, "{}", err);
                prop_assert!(err.starts_with("error: "), "{}", err);
            }
            other => prop_assert!(false, "exit {:?}: {}", other, err),
        }
    }
}
