//! `topology-viz`: draws a Kafka Streams topology from the text of its
//! `describe()`, as Java's `topology.describe().toString()` or Rust's
//! `streams_core::Topology::describe()` print it.
//!
//! ```text
//! topology-viz topology.txt -o topology.svg              # SVG, no Graphviz needed
//! topology-viz topology.txt --format mermaid             # Mermaid, for a Markdown page
//! topology-viz topology.txt --format dot | dot -Tpdf > t.pdf
//! topology-viz topology.txt -o t.png --renderer graphviz # PNG (or SVG) drawn by Graphviz
//! pbpaste | topology-viz --format svg > topology.svg     # from standard input
//! ```
//!
//! # Why a crate of its own
//! A Java team with a topology to look at should need neither the rest of
//! this workspace nor a JVM tool: `cargo install --path topology-viz` (or
//! `cargo install --git <repository> topology-viz`) builds this one binary
//! with `streams-core` (for [`TopologyDescription`]'s parser and
//! renderers) and a pure-Rust layout engine, and nothing else of ours: no
//! test driver, no examples, no test harness. It also keeps the argument
//! parser and the layout engine out of `streams-core`'s dependencies,
//! which every user of the library compiles.
//!
//! # As a library
//! [`render`] does what the command does, on text in memory.
//!
//! ```
//! use topology_viz::{Format, Renderer, render};
//!
//! let java = "Topologies:\n   Sub-topology: 0\n    Source: KSTREAM-SOURCE-0000000000 (topics: [in])\n      --> KSTREAM-SINK-0000000001\n    Sink: KSTREAM-SINK-0000000001 (topic: out)\n      <-- KSTREAM-SOURCE-0000000000\n\n";
//! let mermaid = String::from_utf8(render(java, Format::Mermaid, Renderer::Builtin)?)?;
//! assert!(mermaid.contains(r#"n0(["KSTREAM-SOURCE-0000000000"])"#));
//! let svg = String::from_utf8(render(java, Format::Svg, Renderer::Builtin)?)?;
//! assert!(svg.contains("<svg") && svg.contains("KSTREAM-SINK-0000000001"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
#![doc(test(attr(deny(warnings))))]

mod graphviz;
mod svg;

use std::fmt;
use std::str::FromStr;

pub use graphviz::graphviz;
pub use streams_core::topology::{ParseError, TopologyDescription};
pub use svg::svg;

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Graphviz DOT text.
    Dot,
    /// A Mermaid flowchart.
    Mermaid,
    /// An SVG picture.
    Svg,
    /// A PNG picture (Graphviz only).
    Png,
}

impl Format {
    /// The format a file name's extension asks for (`.dot`/`.gv`, `.mmd`/
    /// `.mermaid`, `.svg`, `.png`).
    pub fn from_extension(path: &std::path::Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "dot" | "gv" => Some(Format::Dot),
            "mmd" | "mermaid" => Some(Format::Mermaid),
            "svg" => Some(Format::Svg),
            "png" => Some(Format::Png),
            _ => None,
        }
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "dot" => Ok(Format::Dot),
            "mermaid" => Ok(Format::Mermaid),
            "svg" => Ok(Format::Svg),
            "png" => Ok(Format::Png),
            other => Err(format!(
                "unknown format `{other}`: expected dot, mermaid, svg or png"
            )),
        }
    }
}

/// Who draws SVG and PNG pictures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Renderer {
    /// The built-in layout (the `layout-rs` crate): SVG only, no clusters
    /// around sub-topologies, nothing to install.
    Builtin,
    /// Graphviz's `dot` program, which must be on `PATH`: SVG or PNG,
    /// with a box around each sub-topology.
    Graphviz,
}

impl FromStr for Renderer {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "builtin" => Ok(Renderer::Builtin),
            "graphviz" => Ok(Renderer::Graphviz),
            other => Err(format!(
                "unknown renderer `{other}`: expected builtin or graphviz"
            )),
        }
    }
}

/// Why nothing could be drawn.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The text is not a topology description.
    Parse {
        /// Why, with line numbers counted from the `Topologies:` line.
        error: ParseError,
        /// How many lines of the input came before the `Topologies:` line.
        skipped_lines: usize,
    },
    /// No line of the text is `Topologies:`.
    NoDescription,
    /// Graphviz was asked for and `dot` is not on `PATH`.
    GraphvizMissing,
    /// Graphviz ran and failed.
    Graphviz {
        /// Its exit status.
        status: String,
        /// What it wrote to standard error.
        stderr: String,
    },
    /// Writing to or reading from Graphviz failed.
    Io(std::io::Error),
    /// PNG was asked for from the built-in renderer.
    PngNeedsGraphviz,
    /// The built-in layout failed on this graph.
    Layout(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Parse {
                error,
                skipped_lines,
            } => {
                // The error's text starts `line N: `; count from the input's start.
                let text = error.to_string();
                let why = text.split_once(": ").map_or(text.as_str(), |(_, why)| why);
                write!(
                    f,
                    "not a topology description: line {}: {why}",
                    error.line() + skipped_lines
                )
            }
            Error::NoDescription => f.write_str(
                "not a topology description: no line is `Topologies:` (paste the whole text of describe())",
            ),
            Error::GraphvizMissing => f.write_str(
                "the graphviz renderer needs Graphviz's `dot` program, which is not on PATH: \
                 install Graphviz (for example `apt-get install graphviz` or `brew install graphviz`), \
                 or draw SVG with the built-in renderer (`--renderer builtin`)",
            ),
            Error::Graphviz { status, stderr } => {
                write!(f, "graphviz `dot` failed ({status}): {}", stderr.trim())
            }
            Error::Io(e) => write!(f, "running graphviz `dot`: {e}"),
            Error::PngNeedsGraphviz => f.write_str(
                "PNG needs Graphviz (`--renderer graphviz`); the built-in renderer writes SVG only",
            ),
            Error::Layout(why) => write!(f, "the built-in layout failed: {why}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Parse { error, .. } => Some(error),
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// Reads a pasted description: the text from its `Topologies:` line on,
/// so that log lines or other output before it do not matter.
///
/// # Errors
/// [`Error::NoDescription`] or [`Error::Parse`].
pub fn parse(text: &str) -> Result<TopologyDescription, Error> {
    let at = text
        .match_indices("Topologies:")
        .map(|(at, _)| at)
        .find(|&at| {
            text[..at]
                .rsplit('\n')
                .next()
                .is_some_and(|l| l.trim().is_empty())
        })
        .ok_or(Error::NoDescription)?;
    let skipped_lines = text[..at].matches('\n').count();
    TopologyDescription::parse(&text[at..]).map_err(|error| Error::Parse {
        error,
        skipped_lines,
    })
}

/// Draws the description in `text` as `format`; `renderer` decides who
/// draws SVG and PNG (DOT and Mermaid are always ours).
///
/// # Errors
/// See [`Error`].
pub fn render(text: &str, format: Format, renderer: Renderer) -> Result<Vec<u8>, Error> {
    let description = parse(text)?;
    match (format, renderer) {
        (Format::Dot, _) => Ok(description.dot().to_string().into_bytes()),
        (Format::Mermaid, _) => Ok(description.mermaid().to_string().into_bytes()),
        (Format::Svg, Renderer::Builtin) => Ok(svg(&description)?.into_bytes()),
        (Format::Png, Renderer::Builtin) => Err(Error::PngNeedsGraphviz),
        (Format::Svg, Renderer::Graphviz) => graphviz(&description.dot().to_string(), "svg"),
        (Format::Png, Renderer::Graphviz) => graphviz(&description.dot().to_string(), "png"),
    }
}
