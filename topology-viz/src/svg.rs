//! Drawing SVG without Graphviz, from the built-in layout.
//!
//! Every vertex is a `<g class="vertex KIND" id=.. data-name=..>` and every
//! edge a `<path class="edge records|store" data-from=.. data-to=..>`, so
//! that the HTML page can find its way around the picture.

use std::fmt::Write as _;

use streams_core::topology::TopologyDescription;

use crate::layout::{Drawing, Frame, Placed, TITLE_SIZE, layout};
use crate::model::{Kind, Link, Model};
use crate::text::{FONT_FAMILY, FONT_SIZE, LINE_HEIGHT, escape, width};

/// Room around the picture.
const MARGIN: f64 = 16.0;
/// Room between two topologies drawn one above the other.
const BETWEEN: f64 = 40.0;
/// A heading's size.
const HEADING_SIZE: f64 = 15.0;

/// The colours of a kind of vertex: fill and stroke.
fn colours(kind: Kind) -> (&'static str, &'static str) {
    match kind {
        Kind::Source => ("#d5e8d4", "#82b366"),
        Kind::Processor => ("#dae8fc", "#6c8ebf"),
        Kind::Sink => ("#ffe6cc", "#d79b00"),
        Kind::Topic | Kind::Pattern | Kind::Extractor => ("#eeeeee", "#666666"),
        Kind::Store => ("#fff2cc", "#b59a3c"),
    }
}

/// One topology to draw: its model, its layout, and a heading when
/// several are drawn.
pub(crate) struct Part {
    pub(crate) heading: Option<String>,
    pub(crate) description: TopologyDescription,
    pub(crate) model: Model,
    pub(crate) drawing: Drawing,
}

impl Part {
    pub(crate) fn new(description: &TopologyDescription, heading: Option<String>) -> Part {
        let model = Model::of(description);
        let drawing = layout(&model);
        Part {
            heading,
            description: description.clone(),
            model,
            drawing,
        }
    }
}

/// Draws the description as SVG with the built-in layout, as Graphviz
/// draws [`TopologyDescription::dot`]: a box per sub-topology (a global
/// store's dashed, and titled so), topics outside the boxes, sources,
/// processors, sinks, topics and stores each in a shape and colour of
/// their own, names wrapped after a `-`, and a legend.
///
/// ```
/// use topology_viz::{TopologyDescription, svg};
///
/// let d = TopologyDescription::parse("Topologies:\n   Sub-topology: 0\n    Source: in-source (topics: [in])\n      --> none\n")?;
/// let svg = svg(&d);
/// assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
/// assert!(svg.contains(">Sub-topology: 0</text>") && svg.contains(r#"data-name="in-source""#));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn svg(description: &TopologyDescription) -> String {
    document(&[Part::new(description, None)])
}

/// The SVG document of several parts, one above the other.
pub(crate) fn document(parts: &[Part]) -> String {
    let (w, h, inside) = contents(parts);
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         viewBox=\"0 0 {w} {h}\" font-family=\"{FONT_FAMILY}\" class=\"topology-viz\">\n\
         {DEFS}\
         <rect class=\"background\" width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n\
         {inside}</svg>\n"
    )
}

/// The arrowheads: plain, and lit for the HTML page.
pub(crate) const DEFS: &str = "<defs>\n\
<marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555555\"/></marker>\n\
<marker id=\"arrow-hl\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#d62728\"/></marker>\n\
</defs>\n";

/// The parts drawn one above the other with the legend below: the width,
/// the height, and the SVG elements.
pub(crate) fn contents(parts: &[Part]) -> (f64, f64, String) {
    let legend = Legend::new();
    let mut width: f64 = parts
        .iter()
        .map(|p| {
            let heading = p.heading.as_deref().map_or(0.0, |h| width(h, HEADING_SIZE));
            p.drawing.width.max(heading)
        })
        .fold(0.0, f64::max);
    let legend_rows = legend.rows(width.max(420.0));
    width = width.max(legend_rows.iter().map(|r| r.0).fold(0.0, f64::max));
    let mut body = String::new();
    let mut y = MARGIN;
    for (t, part) in parts.iter().enumerate() {
        if t > 0 {
            y += BETWEEN;
        }
        if let Some(h) = &part.heading {
            let _ = writeln!(
                body,
                r##"<text class="heading" x="{MARGIN}" y="{:.1}" font-size="{HEADING_SIZE}" font-weight="bold" fill="#333333">{}</text>"##,
                y + HEADING_SIZE,
                escape(h)
            );
            y += HEADING_SIZE + 14.0;
        }
        let _ = writeln!(
            body,
            r#"<g class="topology" id="t{t}" transform="translate({MARGIN} {y:.1})">"#
        );
        draw(&mut body, &format!("t{t}-"), part);
        body.push_str("</g>\n");
        y += part.drawing.height;
    }
    y += 28.0;
    body.push_str(&legend.draw(&legend_rows, MARGIN, y));
    y += legend_rows.len() as f64 * Legend::ROW;
    let total_w = (width + 2.0 * MARGIN).ceil();
    let total_h = (y + MARGIN).ceil();
    (total_w, total_h, body)
}

/// Draws one part: boxes, then edges, then vertices on top.
fn draw(out: &mut String, prefix: &str, part: &Part) {
    let d = &part.drawing;
    for frame in &d.frames {
        draw_frame(out, frame);
    }
    for (k, (edge, route)) in part.model.edges.iter().zip(&d.routes).enumerate() {
        let class = match edge.link {
            Link::Records => "records",
            Link::Store => "store",
        };
        let style = match edge.link {
            Link::Records => r##"stroke="#555555" stroke-width="1.3" marker-end="url(#arrow)""##,
            Link::Store => r##"stroke="#999999" stroke-width="1.3" stroke-dasharray="5 3""##,
        };
        let _ = writeln!(
            out,
            r#"<path class="edge {class}" id="{prefix}e{k}" data-from="{prefix}v{}" data-to="{prefix}v{}" d="{}" fill="none" {style}/>"#,
            edge.from,
            edge.to,
            path(route)
        );
    }
    for (v, (vertex, placed)) in part.model.vertices.iter().zip(&d.vertices).enumerate() {
        let _ = writeln!(
            out,
            r#"<g class="vertex {}" id="{prefix}v{v}" data-name="{}"><title>{}: {}</title>"#,
            vertex.kind.word(),
            escape(&vertex.name),
            vertex.kind.word(),
            escape(&vertex.name)
        );
        shape(out, placed);
        label(out, placed);
        out.push_str("</g>\n");
    }
}

fn draw_frame(out: &mut String, f: &Frame) {
    let (fill, stroke, dash) = if f.global {
        ("#f6f0fb", "#9673a6", r#" stroke-dasharray="6 3""#)
    } else {
        ("#f8f9fa", "#9aa0a6", "")
    };
    let _ = writeln!(
        out,
        r##"<g class="cluster{}"><rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" rx="10" fill="{fill}" stroke="{stroke}" stroke-width="1.2"{dash}/><text x="{:.1}" y="{:.1}" font-size="{TITLE_SIZE}" font-weight="bold" fill="#444444">{}</text></g>"##,
        if f.global { " global" } else { "" },
        f.x,
        f.y,
        f.w,
        f.h,
        f.x + f.title_at.1,
        if f.title_at.0 {
            f.y + 19.0
        } else {
            f.y + f.h - 10.0
        },
        escape(&f.title)
    );
}

/// An SVG path along a route: lines inside layers, curves between them.
/// Lines of no length are left out, so that an arrowhead at the end takes
/// its direction from the curve before.
pub(crate) fn path(route: &[(f64, f64)]) -> String {
    let mut d = String::new();
    for (i, &(x, y)) in route.iter().enumerate() {
        if i == 0 {
            let _ = write!(d, "M{x:.1},{y:.1}");
        } else if i % 2 == 1 {
            let (px, py) = route[i - 1];
            if (px - x).abs() > 0.05 || (py - y).abs() > 0.05 {
                let _ = write!(d, " L{x:.1},{y:.1}");
            }
        } else {
            let (px, py) = route[i - 1];
            let mid = (py + y) / 2.0;
            let _ = write!(d, " C{px:.1},{mid:.1} {x:.1},{mid:.1} {x:.1},{y:.1}");
        }
    }
    d
}

/// The vertex's outline.
fn shape(out: &mut String, p: &Placed) {
    let (fill, stroke) = colours(p.kind);
    let (l, t, r, b) = p.bounds();
    let paint = format!(r#"class="shape" fill="{fill}" stroke="{stroke}" stroke-width="1.2""#);
    let _ = match p.kind {
        Kind::Processor => writeln!(
            out,
            r#"<rect x="{l:.1}" y="{t:.1}" width="{:.1}" height="{:.1}" rx="8" {paint}/>"#,
            p.w, p.h
        ),
        Kind::Topic | Kind::Pattern => writeln!(
            out,
            r#"<rect x="{l:.1}" y="{t:.1}" width="{:.1}" height="{:.1}" rx="2" {paint}{}/>"#,
            p.w,
            p.h,
            if p.kind == Kind::Pattern {
                r#" stroke-dasharray="4 3""#
            } else {
                ""
            }
        ),
        // Graphviz's invhouse: the point below.
        Kind::Source => writeln!(
            out,
            r#"<polygon points="{l:.1},{t:.1} {r:.1},{t:.1} {r:.1},{:.1} {:.1},{b:.1} {l:.1},{:.1}" {paint}/>"#,
            b - 10.0,
            p.x,
            b - 10.0
        ),
        // Graphviz's house: the point above.
        Kind::Sink => writeln!(
            out,
            r#"<polygon points="{:.1},{t:.1} {r:.1},{:.1} {r:.1},{b:.1} {l:.1},{b:.1} {l:.1},{:.1}" {paint}/>"#,
            p.x,
            t + 10.0,
            t + 10.0
        ),
        Kind::Extractor => writeln!(
            out,
            r#"<polygon points="{:.1},{t:.1} {:.1},{t:.1} {r:.1},{:.1} {:.1},{b:.1} {:.1},{b:.1} {l:.1},{:.1}" {paint}/>"#,
            l + 12.0,
            r - 12.0,
            p.y,
            r - 12.0,
            l + 12.0,
            p.y
        ),
        // A cylinder: the body with its lower rim, then the top.
        Kind::Store => {
            let (rx, ry) = (p.w / 2.0, 6.0);
            writeln!(
                out,
                r#"<path d="M{l:.1},{:.1} V{:.1} A{rx:.1},{ry} 0 0 0 {r:.1},{:.1} V{:.1} A{rx:.1},{ry} 0 0 0 {l:.1},{:.1} Z" {paint}/><ellipse cx="{:.1}" cy="{:.1}" rx="{rx:.1}" ry="{ry}" {paint}/>"#,
                t + ry,
                b - ry,
                b - ry,
                t + ry,
                t + ry,
                p.x,
                t + ry
            )
        }
    };
}

/// The vertex's name, centred in the part of the shape meant for it.
fn label(out: &mut String, p: &Placed) {
    let (_, t, _, b) = p.bounds();
    let (top, bottom) = match p.kind {
        Kind::Source => (t, b - 10.0),
        Kind::Sink => (t + 10.0, b),
        Kind::Store => (t + 12.0, b),
        _ => (t, b),
    };
    let centre = (top + bottom) / 2.0;
    let first = centre - (p.lines.len() as f64 - 1.0) * LINE_HEIGHT / 2.0 + FONT_SIZE * 0.35;
    let _ = write!(
        out,
        r##"<text x="{:.1}" y="{first:.1}" text-anchor="middle" font-size="{FONT_SIZE}" fill="#111111">"##,
        p.x
    );
    for (i, line) in p.lines.iter().enumerate() {
        let dy = if i == 0 { 0.0 } else { LINE_HEIGHT };
        let _ = write!(
            out,
            r#"<tspan x="{:.1}" dy="{dy}">{}</tspan>"#,
            p.x,
            escape(line)
        );
    }
    out.push_str("</text>\n");
}

/// The legend: a sample of each shape, with its meaning.
struct Legend {
    items: Vec<(LegendItem, &'static str)>,
}

#[derive(Clone, Copy)]
enum LegendItem {
    Vertex(Kind),
    Records,
    StoreLink,
    Frame { global: bool },
}

impl Legend {
    const ROW: f64 = 30.0;
    const SAMPLE_W: f64 = 34.0;

    fn new() -> Legend {
        Legend {
            items: vec![
                (LegendItem::Vertex(Kind::Source), "source"),
                (LegendItem::Vertex(Kind::Processor), "processor"),
                (LegendItem::Vertex(Kind::Sink), "sink"),
                (LegendItem::Vertex(Kind::Topic), "topic"),
                (LegendItem::Vertex(Kind::Store), "state store"),
                (LegendItem::Records, "records"),
                (LegendItem::StoreLink, "uses store"),
                (LegendItem::Frame { global: false }, "sub-topology"),
                (LegendItem::Frame { global: true }, "global store"),
            ],
        }
    }

    fn item_width(label: &str) -> f64 {
        Self::SAMPLE_W + 6.0 + width(label, 11.0) + 18.0
    }

    /// The items in rows no wider than `max`: each row's width and items.
    fn rows(&self, max: f64) -> Vec<(f64, Vec<usize>)> {
        let mut rows: Vec<(f64, Vec<usize>)> = vec![(0.0, Vec::new())];
        for (i, (_, label)) in self.items.iter().enumerate() {
            let w = Self::item_width(label);
            let last = rows.len() - 1;
            if !rows[last].1.is_empty() && rows[last].0 + w > max {
                rows.push((0.0, Vec::new()));
            }
            let last = rows.len() - 1;
            rows[last].0 += w;
            rows[last].1.push(i);
        }
        rows
    }

    fn draw(&self, rows: &[(f64, Vec<usize>)], x0: f64, y0: f64) -> String {
        let mut out =
            format!(r#"<g class="legend" transform="translate({x0} {y0:.1})" font-size="11">"#);
        out.push('\n');
        for (r, (_, items)) in rows.iter().enumerate() {
            let y = r as f64 * Self::ROW;
            let mut x = 0.0;
            for &i in items {
                let (item, label) = self.items[i];
                let (sx, cy) = (x, y + 11.0);
                match item {
                    LegendItem::Vertex(kind) => {
                        let mut sample = String::new();
                        shape(
                            &mut sample,
                            &Placed {
                                kind,
                                lines: Vec::new(),
                                x: sx + Self::SAMPLE_W / 2.0,
                                y: cy,
                                w: Self::SAMPLE_W,
                                h: if matches!(kind, Kind::Source | Kind::Sink | Kind::Store) {
                                    22.0
                                } else {
                                    16.0
                                },
                            },
                        );
                        out.push_str(&sample);
                    }
                    LegendItem::Records => {
                        let _ = writeln!(
                            out,
                            r##"<path d="M{sx:.1},{cy:.1} H{:.1}" stroke="#555555" stroke-width="1.3" marker-end="url(#arrow)"/>"##,
                            sx + Self::SAMPLE_W
                        );
                    }
                    LegendItem::StoreLink => {
                        let _ = writeln!(
                            out,
                            r##"<path d="M{sx:.1},{cy:.1} H{:.1}" stroke="#999999" stroke-width="1.3" stroke-dasharray="5 3"/>"##,
                            sx + Self::SAMPLE_W
                        );
                    }
                    LegendItem::Frame { global } => {
                        let (fill, stroke, dash) = if global {
                            ("#f6f0fb", "#9673a6", r#" stroke-dasharray="6 3""#)
                        } else {
                            ("#f8f9fa", "#9aa0a6", "")
                        };
                        let _ = writeln!(
                            out,
                            r#"<rect x="{sx:.1}" y="{:.1}" width="{}" height="20" rx="5" fill="{fill}" stroke="{stroke}" stroke-width="1.2"{dash}/>"#,
                            cy - 10.0,
                            Self::SAMPLE_W
                        );
                    }
                }
                let _ = writeln!(
                    out,
                    r##"<text x="{:.1}" y="{:.1}" fill="#333333">{label}</text>"##,
                    sx + Self::SAMPLE_W + 6.0,
                    cy + 4.0
                );
                x += Self::item_width(label);
            }
        }
        out.push_str("</g>\n");
        out
    }
}
