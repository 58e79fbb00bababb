//! [`Mermaid`]: a description as a Mermaid flowchart.

use std::fmt;

use super::TopologyDescription;
use super::graph::{Link, Picture, Vertex};

/// A [`TopologyDescription`] drawn as a Mermaid `flowchart`; its
/// [`Display`](fmt::Display) is the Mermaid text, ready for a Markdown
/// code block marked `mermaid`. Made by [`TopologyDescription::mermaid`].
///
/// One `subgraph` per sub-topology (and per global store). Sources are
/// stadiums, processors rounded boxes, sinks subroutine boxes; topics are
/// parallelograms of their own outside the subgraphs (the other way round
/// for a pattern, a hexagon for a sink's extractor); stores are cylinders
/// linked to their processors by dotted lines. Vertices are numbered `n0`,
/// `n1`, ... in a stable order, block by block as Kafka prints them.
///
/// ```
/// use streams_core::StreamsBuilder;
///
/// let builder = StreamsBuilder::new();
/// builder.stream::<String, String>("in").to("out");
/// let mermaid = builder.build()?.describe().mermaid().to_string();
/// assert!(mermaid.starts_with("flowchart TB\n"));
/// assert!(mermaid.contains(r#"n0(["KSTREAM-SOURCE-0000000000"])"#));
/// assert!(mermaid.contains(r#"n2[/"in"/]"#));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Mermaid<'a> {
    description: &'a TopologyDescription,
}

impl<'a> Mermaid<'a> {
    pub(super) fn new(description: &'a TopologyDescription) -> Self {
        Mermaid { description }
    }
}

/// A Mermaid label: quoted, with Mermaid's entity codes for the
/// characters that would end or change it.
struct Label<'a>(&'a str);

impl fmt::Display for Label<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for c in self.0.chars() {
            match c {
                '"' => f.write_str("#quot;")?,
                '#' => f.write_str("#35;")?,
                '<' => f.write_str("#lt;")?,
                '>' => f.write_str("#gt;")?,
                '\n' | '\r' => f.write_str(" ")?,
                c => write!(f, "{c}")?,
            }
        }
        f.write_str("\"")
    }
}

/// The opening and closing brackets of each shape.
fn shape(v: &Vertex<'_>) -> (&'static str, &'static str) {
    match v {
        Vertex::Source(_) => ("([", "])"),
        Vertex::Processor(_) => ("(", ")"),
        Vertex::Sink(_) => ("[[", "]]"),
        Vertex::Topic(_) => ("[/", "/]"),
        Vertex::Pattern(_) => ("[\\", "\\]"),
        Vertex::Extractor(_) => ("{{", "}}"),
        Vertex::Store(_) => ("[(", ")]"),
    }
}

impl fmt::Display for Mermaid<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let picture = Picture::of(self.description);
        let g = &picture.graph;
        let vertex = |f: &mut fmt::Formatter<'_>, indent: &str, i: petgraph::graph::NodeIndex| {
            let v = &g[i];
            let (open, close) = shape(v);
            writeln!(f, "{indent}n{}{open}{}{close}", i.index(), Label(v.label()))
        };
        writeln!(f, "flowchart TB")?;
        for (k, cluster) in picture.clusters.iter().enumerate() {
            writeln!(f, "    subgraph s{k}[{}]", Label(&cluster.title))?;
            for &i in &cluster.members {
                vertex(f, "        ", i)?;
            }
            writeln!(f, "    end")?;
        }
        for &i in &picture.outside {
            vertex(f, "    ", i)?;
        }
        for e in g.edge_indices() {
            let Some((from, to)) = g.edge_endpoints(e) else {
                continue;
            };
            let arrow = match g[e] {
                Link::Records => "-->",
                Link::Store => "-.-",
            };
            writeln!(f, "    n{} {arrow} n{}", from.index(), to.index())?;
        }
        Ok(())
    }
}
