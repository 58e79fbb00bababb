//! `topology-viz` draws a Kafka Streams topology from the text of its
//! `describe()`, as Java's `topology.describe().toString()` or Rust's
//! `streams_core::Topology::describe()` print it: DOT, Mermaid, SVG, PNG,
//! or an HTML page to explore it in a browser.
//!
//! ```text
//! topology-viz topology.txt -o topology.svg              # SVG, no Graphviz needed
//! topology-viz topology.txt --html -o topology.html      # a page: pan, zoom, click a node
//! topology-viz topology.txt --format mermaid             # Mermaid, for a Markdown page
//! topology-viz topology.txt --format dot | dot -Tpdf > t.pdf
//! topology-viz topology.txt -o t.png --renderer graphviz # PNG (or SVG) drawn by Graphviz
//! pbpaste | topology-viz -o topology.svg                 # from standard input
//! ```
//!
//! # The input
//! Whatever holds the text: a file, a terminal's scrollback, a log. Each
//! description starts at a line that ends in `Topologies:` (text before
//! it on that line, a log line's time stamp and logger, is skipped) and
//! runs while the lines are indented or are lines of a description; other
//! lines before and after are skipped. A text may hold several (an
//! application that builds two, a log of two runs): [`parse_all`] reads
//! them all, each a [`Pasted`] with the line it starts at. UTF-8 text is
//! read, and UTF-16 with a byte order mark (what Windows PowerShell's `>`
//! writes); see [`decode`]. Errors count lines from the input's start.
//!
//! # The pictures
//! [`svg`] lays a topology out with no program to install: a box per
//! sub-topology (a global store's dashed, and titled so), topics outside
//! the boxes so that a repartition topic joins the two it splits, stores
//! as cylinders, names wrapped after a `-`, and a legend. [`html`] puts
//! that picture in a page with no outside resources: pan and zoom, a
//! node's neighbours lit on hover or click, and the lists of topics and
//! stores. DOT and Mermaid come from `streams-core`'s
//! [`TopologyDescription::dot`] and [`TopologyDescription::mermaid`];
//! [`graphviz`] runs Graphviz's `dot` on the DOT text for PNG, or for SVG
//! drawn by Graphviz. [`render`] does all of it from pasted text, as the
//! command does.
//!
//! ```
//! use topology_viz::{Format, Renderer, parse_all, render};
//!
//! let log = "12:00:01 INFO App - Topologies:\n   Sub-topology: 0\n    Source: KSTREAM-SOURCE-0000000000 (topics: [in])\n      --> KSTREAM-SINK-0000000001\n    Sink: KSTREAM-SINK-0000000001 (topic: out)\n      <-- KSTREAM-SOURCE-0000000000\n12:00:02 INFO App - started\n";
//! let found = parse_all(log)?;
//! assert_eq!((found.len(), found[0].line()), (1, 1));
//! assert_eq!(found[0].description().subtopologies()[0].nodes().len(), 2);
//!
//! let mermaid = String::from_utf8(render(log, Format::Mermaid, Renderer::Builtin)?)?;
//! assert!(mermaid.contains(r#"n0(["KSTREAM-SOURCE-0000000000"])"#));
//! let svg = String::from_utf8(render(log, Format::Svg, Renderer::Builtin)?)?;
//! assert!(svg.contains(">Sub-topology: 0</text>") && svg.contains(">KSTREAM-SINK-</tspan>"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Why a crate of its own
//! A Java team with a topology to look at should need neither the rest of
//! this workspace nor a JVM tool: `cargo install --path topology-viz`
//! builds this one binary with `streams-core` (for
//! [`TopologyDescription`]'s parser, DOT and Mermaid) and the argument
//! parser, and nothing else: the layout is this crate's own (a layered
//! layout; topologies are small graphs). It also keeps the argument parser
//! out of `streams-core`'s dependencies, which every user of the library
//! compiles.
#![deny(missing_docs)]
#![doc(test(attr(deny(warnings))))]

mod graphviz;
mod html;
mod layout;
mod model;
mod svg;
mod text;

use std::fmt;
use std::str::FromStr;

pub use graphviz::graphviz;
pub use html::html;
pub use streams_core::topology::{ParseError, TopologyDescription};
pub use svg::svg;

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// Graphviz DOT text.
    Dot,
    /// A Mermaid flowchart.
    Mermaid,
    /// An SVG picture.
    Svg,
    /// A PNG picture (Graphviz only).
    Png,
    /// An HTML page showing the SVG picture, with pan, zoom and lists.
    Html,
}

impl Format {
    /// Every format, in the order `--help` lists them.
    pub const ALL: [Format; 5] = [
        Format::Dot,
        Format::Mermaid,
        Format::Svg,
        Format::Png,
        Format::Html,
    ];

    /// The format a file name's extension asks for (`.dot`/`.gv`, `.mmd`/
    /// `.mermaid`, `.svg`, `.png`, `.html`/`.htm`), in any case.
    pub fn from_extension(path: &std::path::Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "dot" | "gv" => Some(Format::Dot),
            "mmd" | "mermaid" => Some(Format::Mermaid),
            "svg" => Some(Format::Svg),
            "png" => Some(Format::Png),
            "html" | "htm" => Some(Format::Html),
            _ => None,
        }
    }

    /// Whether it is bytes that a terminal should not be sent.
    pub fn is_binary(self) -> bool {
        self == Format::Png
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Dot => "dot",
            Format::Mermaid => "mermaid",
            Format::Svg => "svg",
            Format::Png => "png",
            Format::Html => "html",
        })
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Format::ALL
            .into_iter()
            .find(|f| f.to_string() == s)
            .ok_or_else(|| format!("unknown format `{s}`: expected dot, mermaid, svg, png or html"))
    }
}

/// Who draws SVG and PNG pictures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Renderer {
    /// The built-in layout: SVG and HTML, nothing to install.
    Builtin,
    /// Graphviz's `dot` program, which must be on `PATH`: SVG or PNG.
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
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A description's text is broken.
    #[error(
        "not a topology description: line {}: {}",
        error.line() + skipped_lines,
        why(error)
    )]
    Parse {
        /// Why, with line numbers counted from the `Topologies:` line.
        #[source]
        error: ParseError,
        /// How many lines of the input came before the `Topologies:` line.
        skipped_lines: usize,
    },
    /// No line of the text ends in `Topologies:`.
    #[error(
        "not a topology description: no line ends in `Topologies:` (paste the whole text that describe() prints)"
    )]
    NoDescription,
    /// The bytes are neither UTF-8 nor UTF-16 with a byte order mark.
    #[error(
        "not UTF-8 text (byte {offset} is not): save the description as UTF-8, for example with `iconv -t UTF-8`"
    )]
    NotUtf8 {
        /// Where the first byte that is not UTF-8 is, counted from 0.
        offset: usize,
    },
    /// Several descriptions, for a format that draws one.
    #[error(
        "the input holds {count} topologies and {format} draws one at a time: choose one (`--topology N`), or write svg, html or dot, which show them all"
    )]
    OneAtATime {
        /// The format asked for.
        format: Format,
        /// How many descriptions there are.
        count: usize,
    },
    /// Several descriptions where one was expected ([`parse`]).
    #[error(
        "the input holds {count} topologies, not one: read them all with `parse_all`, or choose one (`--topology N`)"
    )]
    Several {
        /// How many descriptions there are.
        count: usize,
    },
    /// A description asked for by number that is not there.
    #[error("there is no topology {asked}: the input holds {count}, numbered from 1")]
    NoSuchTopology {
        /// The number asked for.
        asked: usize,
        /// How many there are.
        count: usize,
    },
    /// Graphviz was asked for and `dot` is not on `PATH`.
    #[error(
        "the graphviz renderer needs Graphviz's `dot` program, which is not on PATH: install Graphviz (for example `apt-get install graphviz` or `brew install graphviz`), or draw SVG with the built-in renderer (`--renderer builtin`)"
    )]
    GraphvizMissing,
    /// Graphviz ran and failed.
    #[error("graphviz `dot` failed ({status}): {}", stderr.trim())]
    Graphviz {
        /// Its exit status.
        status: String,
        /// What it wrote to standard error.
        stderr: String,
    },
    /// Writing to or reading from Graphviz failed.
    #[error("running graphviz `dot`: {0}")]
    Io(#[source] std::io::Error),
    /// PNG was asked for from the built-in renderer.
    #[error(
        "PNG needs Graphviz (`--renderer graphviz`); the built-in renderer writes SVG and HTML"
    )]
    PngNeedsGraphviz,
    /// HTML was asked for from Graphviz.
    #[error("the HTML page is drawn by the built-in renderer: leave out `--renderer graphviz`")]
    HtmlNeedsBuiltin,
}

/// A parse error's text without its `line N: `, which [`Error`] counts
/// again from the input's start.
fn why(error: &ParseError) -> String {
    let text = error.to_string();
    match text.split_once(": ") {
        Some((_, why)) => why.to_owned(),
        None => text,
    }
}

/// One description found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pasted {
    line: usize,
    description: TopologyDescription,
}

impl Pasted {
    /// The line of the text (counted from 1) that ends in `Topologies:`.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The description.
    pub fn description(&self) -> &TopologyDescription {
        &self.description
    }

    /// The description, taken out.
    pub fn into_description(self) -> TopologyDescription {
        self.description
    }
}

/// The text in `bytes`: UTF-8 (a byte order mark dropped), or UTF-16
/// with a byte order mark, as Windows PowerShell's `>` writes.
///
/// ```
/// assert_eq!(topology_viz::decode(b"\xEF\xBB\xBFTopologies:")?, "Topologies:");
/// assert_eq!(topology_viz::decode(b"\xFF\xFEo\0k\0")?, "ok");
/// assert_eq!(
///     topology_viz::decode(b"ok\xFF").unwrap_err().to_string(),
///     "not UTF-8 text (byte 2 is not): save the description as UTF-8, for example with `iconv -t UTF-8`"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
/// [`Error::NotUtf8`], naming the first byte that is not.
pub fn decode(bytes: &[u8]) -> Result<String, Error> {
    let utf16 = |big: bool, body: &[u8]| -> Result<String, Error> {
        let units = body.chunks(2).map(|pair| match (pair, big) {
            ([a, b], true) => u16::from_be_bytes([*a, *b]),
            ([a, b], false) => u16::from_le_bytes([*a, *b]),
            _ => 0xFFFF,
        });
        let mut text = String::with_capacity(body.len() / 2);
        for (i, c) in char::decode_utf16(units).enumerate() {
            match c {
                Ok('\u{FFFF}') | Err(_) => return Err(Error::NotUtf8 { offset: 2 + 2 * i }),
                Ok(c) => text.push(c),
            }
        }
        Ok(text)
    };
    match bytes {
        [0xFF, 0xFE, body @ ..] => utf16(false, body),
        [0xFE, 0xFF, body @ ..] => utf16(true, body),
        [0xEF, 0xBB, 0xBF, body @ ..] => {
            std::str::from_utf8(body)
                .map(str::to_owned)
                .map_err(|e| Error::NotUtf8 {
                    offset: 3 + e.valid_up_to(),
                })
        }
        _ => std::str::from_utf8(bytes)
            .map(str::to_owned)
            .map_err(|e| Error::NotUtf8 {
                offset: e.valid_up_to(),
            }),
    }
}

/// Whether a line (trimmed) can be a line of a description after its
/// `Topologies:` line.
fn belongs(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.is_empty()
        || line.starts_with([' ', '\t'])
        || [
            "Sub-topology: ",
            "Source: ",
            "Processor: ",
            "Sink: ",
            "-->",
            "<--",
        ]
        .iter()
        .any(|k| trimmed.starts_with(k))
}

/// Every description in `text`, in order; see [the crate docs](crate)
/// for what is read and what is skipped.
///
/// # Errors
/// [`Error::NoDescription`] when no line ends in `Topologies:`,
/// [`Error::Parse`] for the first description that does not parse, its
/// line counted from the start of `text`.
pub fn parse_all(text: &str) -> Result<Vec<Pasted>, Error> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let header = |l: &str| {
        l.trim_end()
            .strip_suffix("Topologies:")
            .is_some_and(|before| {
                before.is_empty() || !before.ends_with(|c: char| c.is_alphanumeric())
            })
    };
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !header(lines[i]) {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        while i < lines.len() && !header(lines[i]) && belongs(lines[i]) {
            i += 1;
        }
        let mut body = String::from("Topologies:\n");
        for line in &lines[start + 1..i] {
            body.push_str(line);
            body.push('\n');
        }
        let description = TopologyDescription::parse(&body).map_err(|error| Error::Parse {
            error,
            skipped_lines: start,
        })?;
        found.push(Pasted {
            line: start + 1,
            description,
        });
    }
    if found.is_empty() {
        return Err(Error::NoDescription);
    }
    Ok(found)
}

/// The one description in `text` (see [`parse_all`]).
///
/// # Errors
/// As [`parse_all`]; [`Error::Several`] when there are several.
pub fn parse(text: &str) -> Result<TopologyDescription, Error> {
    let mut found = parse_all(text)?;
    match found.len() {
        1 => Ok(found.remove(0).into_description()),
        count => Err(Error::Several { count }),
    }
}

/// Draws every description in `text` as `format`; `renderer` decides who
/// draws SVG and PNG (DOT, Mermaid and HTML are always ours).
///
/// # Errors
/// As [`parse_all`] and [`render_pasted`].
pub fn render(text: &str, format: Format, renderer: Renderer) -> Result<Vec<u8>, Error> {
    render_pasted(&parse_all(text)?, format, renderer)
}

/// Draws descriptions already found: DOT writes a graph for each, the
/// built-in SVG draws them one above the other under a heading each, the
/// HTML page shows them all; Mermaid and Graphviz take one.
///
/// # Errors
/// [`Error::OneAtATime`], [`Error::PngNeedsGraphviz`],
/// [`Error::HtmlNeedsBuiltin`], and Graphviz's errors (see [`graphviz`]).
pub fn render_pasted(
    found: &[Pasted],
    format: Format,
    renderer: Renderer,
) -> Result<Vec<u8>, Error> {
    let one = || match found {
        [only] => Ok(only.description()),
        _ => Err(Error::OneAtATime {
            format,
            count: found.len(),
        }),
    };
    match (format, renderer) {
        (Format::Dot, _) => Ok(found
            .iter()
            .map(|p| p.description().dot().to_string())
            .collect::<Vec<_>>()
            .join("\n")
            .into_bytes()),
        (Format::Mermaid, _) => Ok(one()?.mermaid().to_string().into_bytes()),
        (Format::Svg, Renderer::Builtin) => Ok(svg::document(&parts(found)).into_bytes()),
        (Format::Html, Renderer::Builtin) => Ok(html::page(&parts(found)).into_bytes()),
        (Format::Html, Renderer::Graphviz) => Err(Error::HtmlNeedsBuiltin),
        (Format::Png, Renderer::Builtin) => Err(Error::PngNeedsGraphviz),
        (Format::Svg | Format::Png, Renderer::Graphviz) => {
            graphviz(&one()?.dot().to_string(), &format.to_string())
        }
    }
}

/// The parts to draw, with a heading each when there are several.
fn parts(found: &[Pasted]) -> Vec<svg::Part> {
    found
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let heading = (found.len() > 1).then(|| {
                format!(
                    "Topology {} of {}, from line {}",
                    i + 1,
                    found.len(),
                    p.line()
                )
            });
            svg::Part::new(p.description(), heading)
        })
        .collect()
}

/// `Debug` shows the message (as `Display` does), so that a test or
/// `main` returning `Result<(), Box<dyn Error>>` prints what went wrong and
/// what to do; match on the variants for the structure.
impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}
