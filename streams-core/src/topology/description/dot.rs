//! [`Dot`]: a description as a Graphviz DOT graph.

use std::fmt;

use super::TopologyDescription;
use super::graph::{Link, Picture, Vertex};

/// A [`TopologyDescription`] drawn as a Graphviz DOT graph; its
/// [`Display`](fmt::Display) is the DOT text. Made by
/// [`TopologyDescription::dot`].
///
/// One cluster per sub-topology (and per global store). Sources are
/// `invhouse`, processors rounded boxes, sinks `house`; topics are boxes
/// of their own outside the clusters (dashed for a pattern, a hexagon for
/// a sink's extractor), so a repartition topic links the sub-topologies it
/// splits; stores are cylinders inside the cluster that uses them, linked
/// to their processors by dashed lines. Vertices are numbered `n0`, `n1`,
/// ... in a stable order, block by block as Kafka prints them.
///
/// ```
/// use streams_core::StreamsBuilder;
///
/// let builder = StreamsBuilder::new();
/// builder.stream::<String, String>("in").to("out");
/// let dot = builder.build()?.describe().dot().to_string();
/// assert!(dot.starts_with("digraph topology {\n"));
/// assert!(dot.contains("subgraph cluster_0 {"));
/// assert!(dot.contains(r##"[label="in", shape=box, style=filled, fillcolor="#eeeeee"]"##));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Dot<'a> {
    description: &'a TopologyDescription,
}

impl<'a> Dot<'a> {
    pub(super) fn new(description: &'a TopologyDescription) -> Self {
        Dot { description }
    }
}

/// A DOT string: quoted, with `"`, `\` and line breaks escaped.
struct Quoted<'a>(&'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for c in self.0.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\r' => {}
                c => write!(f, "{c}")?,
            }
        }
        f.write_str("\"")
    }
}

fn attributes(v: &Vertex<'_>) -> &'static str {
    match v {
        Vertex::Source(_) => "shape=invhouse, style=filled, fillcolor=\"#d5e8d4\"",
        Vertex::Processor(_) => "shape=box, style=\"rounded,filled\", fillcolor=\"#dae8fc\"",
        Vertex::Sink(_) => "shape=house, style=filled, fillcolor=\"#ffe6cc\"",
        Vertex::Topic(_) => "shape=box, style=filled, fillcolor=\"#eeeeee\"",
        Vertex::Pattern(_) => "shape=box, style=\"dashed,filled\", fillcolor=\"#eeeeee\"",
        Vertex::Extractor(_) => "shape=hexagon, style=filled, fillcolor=\"#eeeeee\"",
        Vertex::Store(_) => "shape=cylinder, style=filled, fillcolor=\"#fff2cc\"",
    }
}

impl fmt::Display for Dot<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let picture = Picture::of(self.description);
        let g = &picture.graph;
        let vertex = |f: &mut fmt::Formatter<'_>, indent: &str, i: petgraph::graph::NodeIndex| {
            let v = &g[i];
            writeln!(
                f,
                "{indent}n{} [label={}, {}];",
                i.index(),
                Quoted(v.label()),
                attributes(v)
            )
        };
        writeln!(f, "digraph topology {{")?;
        writeln!(f, "  graph [fontname=\"Helvetica\", fontsize=11];")?;
        writeln!(f, "  node [fontname=\"Helvetica\", fontsize=10];")?;
        writeln!(f, "  edge [fontname=\"Helvetica\", fontsize=9];")?;
        for (k, cluster) in picture.clusters.iter().enumerate() {
            writeln!(f, "  subgraph cluster_{k} {{")?;
            writeln!(f, "    label={};", Quoted(&cluster.title))?;
            writeln!(f, "    style=rounded;")?;
            writeln!(f, "    labeljust=l;")?;
            for &i in &cluster.members {
                vertex(f, "    ", i)?;
            }
            writeln!(f, "  }}")?;
        }
        for &i in &picture.outside {
            vertex(f, "  ", i)?;
        }
        for e in g.edge_indices() {
            let Some((from, to)) = g.edge_endpoints(e) else {
                continue;
            };
            match g[e] {
                Link::Records => writeln!(f, "  n{} -> n{};", from.index(), to.index())?,
                Link::Store => writeln!(
                    f,
                    "  n{} -> n{} [style=dashed, arrowhead=none];",
                    from.index(),
                    to.index()
                )?,
            }
        }
        writeln!(f, "}}")
    }
}
