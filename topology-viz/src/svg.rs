//! Drawing SVG without Graphviz, with the `layout-rs` crate.

use std::collections::HashMap;

use layout::backends::svg::SVGWriter;
use layout::core::base::Orientation;
use layout::core::color::Color;
use layout::core::style::{LineStyleKind, StyleAttr};
use layout::std_shapes::render::get_shape_size;
use layout::std_shapes::shapes::{Arrow, Element, LineEndKind, ShapeKind};
use layout::topo::layout::VisualGraph;
use streams_core::Topics;
use streams_core::topology::{Destination, NodeType, TopologyDescription};

use crate::Error;

const FONT_SIZE: usize = 14;

/// The kinds of box drawn, each its own colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Source,
    Processor,
    Sink,
    Topic,
    Store,
}

impl Kind {
    fn style(self) -> StyleAttr {
        let (fill, rounded) = match self {
            Kind::Source => ("#d5e8d4", 0),
            Kind::Processor => ("#dae8fc", 12),
            Kind::Sink => ("#ffe6cc", 0),
            Kind::Topic => ("#eeeeee", 0),
            Kind::Store => ("#fff2cc", 24),
        };
        StyleAttr::new(
            Color::fast("black"),
            1,
            Some(Color::fast(fill)),
            rounded,
            FONT_SIZE,
        )
    }
}

/// The graph being laid out, each vertex added once.
struct Drawing {
    graph: VisualGraph,
    vertices: HashMap<(Kind, String), layout::adt::dag::NodeHandle>,
}

impl Drawing {
    fn vertex(&mut self, kind: Kind, label: &str) -> layout::adt::dag::NodeHandle {
        if let Some(&h) = self.vertices.get(&(kind, label.to_owned())) {
            return h;
        }
        let shape = ShapeKind::Box(label.to_owned());
        // Shapes are sized for the flipped orientation, as layout-rs's own
        // DOT front end does.
        let dir = Orientation::TopToBottom.flip();
        let size = get_shape_size(dir, &shape, FONT_SIZE, false);
        let h = self
            .graph
            .add_node(Element::create(shape, kind.style(), dir, size));
        self.vertices.insert((kind, label.to_owned()), h);
        h
    }

    fn link(&mut self, from: layout::adt::dag::NodeHandle, to: layout::adt::dag::NodeHandle) {
        self.graph.add_edge(Arrow::simple(""), from, to);
    }

    fn store_link(&mut self, from: layout::adt::dag::NodeHandle, to: layout::adt::dag::NodeHandle) {
        let arrow = Arrow::new(
            LineEndKind::None,
            LineEndKind::None,
            LineStyleKind::Dashed,
            "",
            &StyleAttr::simple(),
            &None,
            &None,
        );
        self.graph.add_edge(arrow, from, to);
    }
}

/// Draws the description as SVG with the built-in layout: sources green,
/// processors blue (rounded), sinks orange, topics grey, stores yellow
/// (round), store links dashed. There are no boxes around sub-topologies
/// (the layout cannot draw them); Graphviz draws them.
///
/// # Errors
/// [`Error::Layout`] if the layout engine fails on the graph.
pub fn svg(description: &TopologyDescription) -> Result<String, Error> {
    if description.is_empty() {
        return Ok(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"0\" height=\"0\"></svg>\n"
                .to_owned(),
        );
    }
    let mut d = Drawing {
        graph: VisualGraph::new(Orientation::TopToBottom),
        vertices: HashMap::new(),
    };
    for sub in description.subtopologies() {
        for node in sub.nodes() {
            let me = match node.kind() {
                NodeType::Source { topics } => {
                    let me = d.vertex(Kind::Source, node.name());
                    let read: Vec<String> = match topics {
                        Topics::Names(names) => names.clone(),
                        Topics::Pattern(p) => vec![format!("pattern: {p}")],
                    };
                    for topic in read {
                        let t = d.vertex(Kind::Topic, &topic);
                        d.link(t, me);
                    }
                    me
                }
                NodeType::Processor { stores } => {
                    let me = d.vertex(Kind::Processor, node.name());
                    for store in stores {
                        let s = d.vertex(Kind::Store, store);
                        d.store_link(me, s);
                    }
                    me
                }
                NodeType::Sink { destination } => {
                    let me = d.vertex(Kind::Sink, node.name());
                    let topic = match destination {
                        Destination::Topic(t) => t.clone(),
                        Destination::Extractor(e) => format!("chosen by: {e}"),
                    };
                    let t = d.vertex(Kind::Topic, &topic);
                    d.link(me, t);
                    me
                }
            };
            for succ in node.successors() {
                let kind = match sub.node(succ).map(|n| n.kind()) {
                    Some(NodeType::Source { .. }) => Kind::Source,
                    Some(NodeType::Sink { .. }) => Kind::Sink,
                    _ => Kind::Processor,
                };
                let to = d.vertex(kind, succ);
                d.link(me, to);
            }
        }
    }
    for global in description.global_stores() {
        let topic = d.vertex(Kind::Topic, global.topic());
        let source = d.vertex(Kind::Source, global.source());
        let processor = d.vertex(Kind::Processor, global.processor());
        let store = d.vertex(Kind::Store, global.store());
        d.link(topic, source);
        d.link(source, processor);
        d.store_link(processor, store);
    }
    // layout-rs panics on some graphs it cannot place; report that as an
    // error rather than abort.
    let mut graph = d.graph;
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let mut writer = SVGWriter::new();
        graph.do_it(false, false, false, &mut writer);
        writer.finalize()
    }))
    .map_err(|panic| {
        Error::Layout(
            panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "the layout engine panicked".to_owned()),
        )
    })
}
