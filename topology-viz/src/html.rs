//! The HTML page: the built-in SVG picture with pan and zoom, a node's
//! neighbours lit on hover or click, and the lists of topics and stores.
//! One file that loads nothing: the SVG, the script and the style are in
//! it.

use std::fmt::Write as _;

use streams_core::topology::TopologyDescription;

use crate::model::{Kind, Link, Model};
use crate::svg::{DEFS, Part, contents};
use crate::text::{FONT_FAMILY, escape};

const SCRIPT: &str = include_str!("page.js");
const STYLE: &str = include_str!("page.css");

/// The page for one description: a self-contained HTML file (no network:
/// the picture, its script and style are inline) showing the built-in
/// SVG picture with pan (drag) and zoom (wheel, `+`, `-`, `0` to fit), a
/// node's neighbours and edges lit on hover and kept lit on click, a box
/// to find a node, topic or store by name, and the lists of topics (input,
/// output or internal, with who reads and writes each) and stores (with
/// the processors using each).
///
/// The script offers `window.topologyViz`: `select(name)` lights a vertex
/// as a click does and returns the names of its neighbours, `clear()`,
/// `fit()` and `zoom(factor)`.
///
/// ```
/// use topology_viz::{TopologyDescription, html};
///
/// let d = TopologyDescription::parse("Topologies:\n   Sub-topology: 0\n    Source: in-source (topics: [in])\n      --> none\n")?;
/// let page = html(&d);
/// assert!(page.starts_with("<!DOCTYPE html>") && page.contains(r#"data-name="in-source""#));
/// assert!(!page.contains(" src=") && !page.contains("<link"), "it loads nothing");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn html(description: &TopologyDescription) -> String {
    page(&[Part::new(description, None)])
}

/// The page for several parts.
pub(crate) fn page(parts: &[Part]) -> String {
    let (w, h, inside) = contents(parts);
    let mut counts = [0usize; 4];
    for part in parts {
        counts[0] += part.model.clusters.len();
        for v in &part.model.vertices {
            match v.kind {
                k if k.is_node() => counts[1] += 1,
                k if k.is_topic() => counts[2] += 1,
                _ => counts[3] += 1,
            }
        }
    }
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let summary = [
        plural(counts[0], "sub-topology", "sub-topologies"),
        plural(counts[1], "node", "nodes"),
        plural(counts[2], "topic", "topics"),
        plural(counts[3], "store", "stores"),
    ]
    .join(" · ");
    let mut side = String::new();
    for (t, part) in parts.iter().enumerate() {
        if let Some(heading) = &part.heading {
            let _ = writeln!(side, "<h2 class=\"part\">{}</h2>", escape(heading));
        }
        lists(&mut side, &format!("t{t}-"), &part.model);
        let _ = writeln!(
            side,
            "<details><summary>describe() text</summary><pre>{}</pre></details>",
            escape(&describe_text(part))
        );
    }
    let mut names: Vec<&str> = parts
        .iter()
        .flat_map(|p| p.model.vertices.iter().map(|v| v.name.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    let options: String = names
        .iter()
        .map(|n| format!("<option value=\"{}\"></option>", escape(n)))
        .collect();
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>Kafka Streams topology</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <header>\n<h1>Kafka Streams topology</h1>\n<span class=\"summary\">{summary}</span>\n\
         <span class=\"tools\"><input id=\"find\" type=\"search\" list=\"names\" placeholder=\"find a node, topic or store\" aria-label=\"find\">\
         <datalist id=\"names\">{options}</datalist>\
         <button id=\"zoom-in\" title=\"zoom in (+)\">+</button><button id=\"zoom-out\" title=\"zoom out (-)\">\u{2212}</button>\
         <button id=\"fit\" title=\"fit the picture (0)\">fit</button></span>\n</header>\n\
         <main>\n<section id=\"picture\">\n\
         <svg xmlns=\"http://www.w3.org/2000/svg\" id=\"canvas\" data-width=\"{w}\" data-height=\"{h}\" font-family=\"{FONT_FAMILY}\" class=\"topology-viz\">\n\
         {DEFS}<g id=\"view\">\n{inside}</g>\n</svg>\n\
         <p class=\"hint\">drag to pan · wheel or +/\u{2212} to zoom · hover or click a node · Esc clears</p>\n</section>\n\
         <aside id=\"side\">\n<div id=\"selection\" hidden></div>\n{side}</aside>\n</main>\n\
         <script>\n{SCRIPT}</script>\n</body>\n</html>\n"
    )
}

/// Kafka's text of the part.
fn describe_text(part: &Part) -> String {
    part.description.to_string()
}

/// The side lists of one part: topics, stores, sub-topologies.
fn lists(out: &mut String, prefix: &str, model: &Model) {
    let names = |ids: &[usize]| -> String {
        ids.iter()
            .map(|&v| format!("<code>{}</code>", escape(&model.vertices[v].name)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let records = |pick: &dyn Fn(usize, usize) -> Option<usize>| -> Vec<usize> {
        model
            .edges
            .iter()
            .filter(|e| e.link == Link::Records)
            .filter_map(|e| pick(e.from, e.to))
            .collect()
    };
    out.push_str("<h2>Topics</h2>\n<ul class=\"list topics\">\n");
    for (v, vertex) in model.vertices.iter().enumerate() {
        if !vertex.kind.is_topic() {
            continue;
        }
        let readers = records(&|a, b| (a == v).then_some(b));
        let writers = records(&|a, b| (b == v).then_some(a));
        let role = match (vertex.kind, readers.is_empty(), writers.is_empty()) {
            (Kind::Pattern, ..) => "pattern",
            (Kind::Extractor, ..) => "chosen per record",
            (_, false, false) => "internal",
            (_, false, true) => "input",
            _ => "output",
        };
        let _ = write!(
            out,
            "<li data-target=\"{prefix}v{v}\"><span class=\"name\">{}</span> <span class=\"badge {}\">{role}</span>",
            escape(&vertex.name),
            role.split(' ').next().unwrap_or(role)
        );
        if !writers.is_empty() {
            let _ = write!(out, "<div>written by {}</div>", names(&writers));
        }
        if !readers.is_empty() {
            let _ = write!(out, "<div>read by {}</div>", names(&readers));
        }
        out.push_str("</li>\n");
    }
    out.push_str("</ul>\n<h2>Stores</h2>\n<ul class=\"list stores\">\n");
    let mut any = false;
    for (v, vertex) in model.vertices.iter().enumerate() {
        if vertex.kind != Kind::Store {
            continue;
        }
        any = true;
        let users: Vec<usize> = model
            .edges
            .iter()
            .filter(|e| e.link == Link::Store && e.to == v)
            .map(|e| e.from)
            .collect();
        let global = vertex
            .cluster
            .is_some_and(|c| model.clusters.get(c).is_some_and(|c| c.global));
        let _ = writeln!(
            out,
            "<li data-target=\"{prefix}v{v}\"><span class=\"name\">{}</span>{}<div>used by {}</div></li>",
            escape(&vertex.name),
            if global {
                " <span class=\"badge global\">global</span>"
            } else {
                ""
            },
            names(&users)
        );
    }
    if !any {
        out.push_str("<li class=\"none\">none</li>\n");
    }
    out.push_str("</ul>\n<h2>Sub-topologies</h2>\n<ul class=\"list subtopologies\">\n");
    for (c, cluster) in model.clusters.iter().enumerate() {
        let members = model.members(c);
        let nodes = members
            .iter()
            .filter(|&&v| model.vertices[v].kind.is_node())
            .count();
        let first = members
            .first()
            .map(|v| format!("{prefix}v{v}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<li data-target=\"{first}\"><span class=\"name\">{}</span> <span class=\"count\">{nodes} node{}</span></li>",
            escape(&cluster.title()),
            if nodes == 1 { "" } else { "s" }
        );
    }
    out.push_str("</ul>\n");
}
