//! Drawing with Graphviz's `dot` program.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::Error;

/// Runs Graphviz's `dot -T<format>` on `dot_text` and returns what it
/// writes: `format` is any output format of Graphviz (`svg`, `png`, `pdf`, ...).
///
/// # Errors
/// [`Error::GraphvizMissing`] when `dot` is not on `PATH`,
/// [`Error::Graphviz`] when it fails, [`Error::Io`] when talking to it fails.
pub fn graphviz(dot_text: &str, format: &str) -> Result<Vec<u8>, Error> {
    let mut child = Command::new("dot")
        .arg(format!("-T{format}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::GraphvizMissing,
            _ => Error::Io(e),
        })?;
    // Write on a thread: `dot` may fill its output pipe before it has
    // read all of its input.
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| Error::Io(std::io::Error::other("no standard input for `dot`")))?;
    let input = dot_text.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().map_err(Error::Io)?;
    let written = writer
        .join()
        .map_err(|_| Error::Io(std::io::Error::other("writing to `dot` panicked")))?;
    if !output.status.success() {
        return Err(Error::Graphviz {
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        });
    }
    written.map_err(Error::Io)?;
    Ok(output.stdout)
}
