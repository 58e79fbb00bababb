//! Where each thing of a [`Model`] is drawn, in two steps: each box
//! (sub-topology) is laid out alone, its sources on top and its sinks at
//! the bottom; then the boxes and the topics between them are laid out as
//! one graph whose vertices are the boxes and topics, the edges meeting a
//! box where the source or sink inside it is. Topics so stay outside the
//! boxes, and no box overlaps another.

pub(crate) mod layered;

use layered::{Edge, Size, Spacing, feedback_edges, longest_path, place};

use crate::model::{Kind, Link, Model};
use crate::text::{FONT_SIZE, LINE_HEIGHT, width, wrap};

/// Room around the vertices inside a box.
const PAD: f64 = 16.0;
/// Room above them, for the box's title.
const TITLE: f64 = 30.0;
/// The title's size.
pub(crate) const TITLE_SIZE: f64 = 12.0;

const INSIDE: Spacing = Spacing {
    layer_gap: 28.0,
    node_gap: 20.0,
    edge_gap: 10.0,
};

const OUTSIDE: Spacing = Spacing {
    layer_gap: 40.0,
    node_gap: 20.0,
    edge_gap: 12.0,
};

/// A vertex as drawn: its label's lines, its centre and its size.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Placed {
    pub(crate) kind: Kind,
    pub(crate) lines: Vec<String>,
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) w: f64,
    pub(crate) h: f64,
}

impl Placed {
    /// The rectangle it takes: left, top, right, bottom.
    pub(crate) fn bounds(&self) -> (f64, f64, f64, f64) {
        (
            self.x - self.w / 2.0,
            self.y - self.h / 2.0,
            self.x + self.w / 2.0,
            self.y + self.h / 2.0,
        )
    }
}

/// A box as drawn, from its top-left corner.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Frame {
    pub(crate) title: String,
    pub(crate) global: bool,
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) w: f64,
    pub(crate) h: f64,
    /// Whether the title is at the top (else at the bottom), and where it
    /// starts, from the box's left side.
    pub(crate) title_at: (bool, f64),
}

/// A model laid out: vertices and edges in the model's order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Drawing {
    pub(crate) vertices: Vec<Placed>,
    /// Each edge's route, as [`layered::Placed::routes`].
    pub(crate) routes: Vec<Vec<(f64, f64)>>,
    pub(crate) frames: Vec<Frame>,
    pub(crate) width: f64,
    pub(crate) height: f64,
}

/// What a crossing with an edge costs: a store's dashed line crossing
/// another matters less than two flows of records crossing.
fn weight(link: Link) -> f64 {
    match link {
        Link::Records => 1.0,
        Link::Store => 0.4,
    }
}

/// The size a vertex of `kind` needs for `lines`.
fn size(kind: Kind, lines: &[String]) -> Size {
    let text_w = lines
        .iter()
        .map(|l| width(l, FONT_SIZE))
        .fold(0.0, f64::max);
    let text_h = lines.len() as f64 * LINE_HEIGHT;
    let (extra_w, extra_h) = match kind {
        Kind::Processor => (24.0, 14.0),
        // The point of the house, and its slanted sides.
        Kind::Source | Kind::Sink => (28.0, 24.0),
        Kind::Topic | Kind::Pattern => (20.0, 12.0),
        Kind::Extractor => (40.0, 12.0),
        // The ellipses at the top and bottom.
        Kind::Store => (24.0, 22.0),
    };
    Size {
        w: (text_w + extra_w).max(56.0).ceil(),
        h: (text_h + extra_h).ceil(),
    }
}

/// Room at a box's right side for each edge that goes round its
/// contents (a sink writing to a topic drawn above the box, or a source
/// reading one drawn below: a feedback loop).
const LANE: f64 = 7.0;

/// Lays `model` out.
pub(crate) fn layout(model: &Model) -> Drawing {
    let n = model.vertices.len();
    let lines: Vec<Vec<String>> = model.vertices.iter().map(|v| wrap(&v.name)).collect();
    let sizes: Vec<Size> = model
        .vertices
        .iter()
        .zip(&lines)
        .map(|(v, l)| size(v.kind, l))
        .collect();

    // The outer graph: boxes first, then the vertices outside any box;
    // its edges are those of the model that are not inside one box.
    let clusters_n = model.clusters.len();
    let outside: Vec<usize> = (0..n)
        .filter(|&v| model.vertices[v].cluster.is_none())
        .collect();
    let outer_index: Vec<usize> = (0..n)
        .map(|v| match model.vertices[v].cluster {
            Some(c) => c,
            None => clusters_n + outside.iter().position(|&o| o == v).unwrap_or(0),
        })
        .collect();
    let outer_ids: Vec<usize> = (0..model.edges.len())
        .filter(|&k| {
            let e = model.edges[k];
            model.vertices[e.from].cluster.is_none()
                || model.vertices[e.from].cluster != model.vertices[e.to].cluster
        })
        .collect();
    let pairs: Vec<(usize, usize)> = outer_ids
        .iter()
        .map(|&k| {
            (
                outer_index[model.edges[k].from],
                outer_index[model.edges[k].to],
            )
        })
        .collect();
    let outer_reversed = feedback_edges_from_roots(clusters_n + outside.len(), &pairs);

    // Each box alone.
    let mut inner: Vec<(f64, f64)> = vec![(0.0, 0.0); n];
    let mut inner_routes: Vec<Option<Vec<(f64, f64)>>> = vec![None; model.edges.len()];
    let mut boxes: Vec<Inside> = Vec::with_capacity(clusters_n);
    // For each outer edge going round its box: the lane's x in the box.
    let mut lane_x: Vec<Option<f64>> = vec![None; outer_ids.len()];
    for (c, cluster) in model.clusters.iter().enumerate() {
        let lanes: Vec<usize> = (0..outer_ids.len())
            .filter(|&i| {
                let e = model.edges[outer_ids[i]];
                outer_reversed[i]
                    && (model.vertices[e.from].cluster == Some(c)
                        || model.vertices[e.to].cluster == Some(c))
            })
            .collect();
        // Whether each goes out of a sink (else into a source).
        let out_of: Vec<bool> = lanes
            .iter()
            .map(|&i| model.vertices[model.edges[outer_ids[i]].from].cluster == Some(c))
            .collect();
        let b = inside(model, c, &cluster.title(), &sizes, &out_of);
        for (i, &v) in b.members.iter().enumerate() {
            inner[v] = b.centres[i];
        }
        for (k, route) in &b.routes {
            inner_routes[*k] = Some(route.clone());
        }
        for (j, &i) in lanes.iter().enumerate() {
            lane_x[i] = b.lanes.get(j).copied();
        }
        boxes.push(b);
    }

    let mut outer_sizes: Vec<Size> = boxes.iter().map(|b| Size { w: b.w, h: b.h }).collect();
    outer_sizes.extend(outside.iter().map(|&v| sizes[v]));
    let port = |i: usize, v: usize| match model.vertices[v].cluster {
        Some(c) => lane_x[i].unwrap_or(inner[v].0) - boxes[c].w / 2.0,
        None => 0.0,
    };
    let outer_edges: Vec<Edge> = outer_ids
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            let e = model.edges[k];
            Edge {
                from: outer_index[e.from],
                to: outer_index[e.to],
                from_dx: port(i, e.from),
                to_dx: port(i, e.to),
                weight: weight(e.link),
            }
        })
        .collect();
    let oriented: Vec<(usize, usize)> = pairs
        .iter()
        .zip(&outer_reversed)
        .map(|(&(a, b), &r)| if r { (b, a) } else { (a, b) })
        .collect();
    let mut ranks = longest_path(outer_sizes.len(), &oriented);
    // Pull what only feeds others (input topics) down next to its first
    // reader.
    for v in 0..outer_sizes.len() {
        let has_in = oriented.iter().any(|&(a, b)| b == v && a != v);
        let first_out = oriented
            .iter()
            .filter(|&&(a, b)| a == v && b != v)
            .map(|&(_, b)| ranks[b])
            .min();
        if let (false, Some(r)) = (has_in, first_out) {
            ranks[v] = r.saturating_sub(1);
        }
    }
    let outer = place(&outer_sizes, &outer_edges, &ranks, &outer_reversed, OUTSIDE);

    let mut frames = Vec::with_capacity(clusters_n);
    for (c, cluster) in model.clusters.iter().enumerate() {
        let (cx, cy) = outer.centres[c];
        let b = &boxes[c];
        frames.push(Frame {
            title: cluster.title(),
            global: cluster.global,
            x: cx - b.w / 2.0,
            y: cy - b.h / 2.0,
            w: b.w,
            h: b.h,
            title_at: b.title_at,
        });
    }
    let vertices: Vec<Placed> = (0..n)
        .map(|v| {
            let (x, y) = match model.vertices[v].cluster {
                Some(c) => (frames[c].x + inner[v].0, frames[c].y + inner[v].1),
                None => outer.centres[outer_index[v]],
            };
            Placed {
                kind: model.vertices[v].kind,
                lines: lines[v].clone(),
                x,
                y,
                w: sizes[v].w,
                h: sizes[v].h,
            }
        })
        .collect();
    let mut routes: Vec<Vec<(f64, f64)>> = Vec::with_capacity(model.edges.len());
    for (k, e) in model.edges.iter().enumerate() {
        if let Some(route) = &inner_routes[k] {
            let c = model.vertices[e.from].cluster.unwrap_or(0);
            let (fx, fy) = (frames[c].x, frames[c].y);
            routes.push(route.iter().map(|&(x, y)| (x + fx, y + fy)).collect());
            continue;
        }
        let i = outer_ids.iter().position(|&o| o == k).unwrap_or(0);
        let mut route = outer.routes[i].clone();
        let (Some(&first), Some(&last)) = (route.first(), route.last()) else {
            routes.push(route);
            continue;
        };
        if let (Some(x), Some(c)) = (lane_x[i], model.vertices[e.from].cluster) {
            // Out of a sink at the bottom, round the contents, up to the
            // box's top.
            let f = &frames[c];
            let (sx, sy) = (vertices[e.from].x, vertices[e.from].bounds().3);
            let below = f.y + f.h - 8.0;
            let mut around = vec![(sx, sy), (sx, below), (f.x + x, below), first];
            around.extend_from_slice(&route);
            route = around;
        } else if let (Some(x), Some(c)) = (lane_x[i], model.vertices[e.to].cluster) {
            // Up from the box's bottom, round the contents, down into a
            // source at the top.
            let f = &frames[c];
            let (tx, ty) = (vertices[e.to].x, vertices[e.to].bounds().1);
            let above = f.y + boxes[c].top - 6.0;
            route.extend_from_slice(&[(f.x + x, above), (f.x + x, above), (tx, above), (tx, ty)]);
            let _ = last;
        } else {
            // Inside a box, go on to the vertex itself.
            for (end, v) in [(0, e.from), (route.len() - 1, e.to)] {
                if model.vertices[v].cluster.is_some() {
                    let b = vertices[v].bounds();
                    let p = &mut route[end];
                    p.1 = if (p.1 - b.1).abs() < (p.1 - b.3).abs() {
                        b.1.max(p.1)
                    } else {
                        b.3.min(p.1)
                    };
                }
            }
        }
        routes.push(route);
    }
    Drawing {
        vertices,
        routes,
        frames,
        width: outer.width,
        height: outer.height,
    }
}

/// A box laid out alone: its size, its title's place, and its members'
/// centres and inner edges' routes from its top-left corner.
struct Inside {
    w: f64,
    h: f64,
    title_at: (bool, f64),
    /// Where the contents start below the box's top.
    top: f64,
    /// The x of each lane.
    lanes: Vec<f64>,
    members: Vec<usize>,
    centres: Vec<(f64, f64)>,
    /// Model edge index and route.
    routes: Vec<(usize, Vec<(f64, f64)>)>,
}

/// Lays out the box of cluster `c`, with room on the right for edges
/// going round its contents: for each, whether it goes out of a sink (up
/// to a topic above) or into a source (from a topic below).
fn inside(model: &Model, c: usize, title: &str, sizes: &[Size], lanes: &[bool]) -> Inside {
    let members = model.members(c);
    let local = |v: usize| members.iter().position(|&m| m == v);
    let edge_ids: Vec<usize> = (0..model.edges.len())
        .filter(|&k| local(model.edges[k].from).is_some() && local(model.edges[k].to).is_some())
        .collect();
    let edges: Vec<Edge> = edge_ids
        .iter()
        .filter_map(|&k| {
            Some(Edge {
                from: local(model.edges[k].from)?,
                to: local(model.edges[k].to)?,
                from_dx: 0.0,
                to_dx: 0.0,
                weight: weight(model.edges[k].link),
            })
        })
        .collect();
    let ranks = inner_ranks(model, &members, &edges);
    let reversed = feedback_edges(
        members.len(),
        &edges.iter().map(|e| (e.from, e.to)).collect::<Vec<_>>(),
    );
    let local_sizes: Vec<Size> = members.iter().map(|&v| sizes[v]).collect();
    let placed = place(&local_sizes, &edges, &ranks, &reversed, INSIDE);
    let title_w = width(title, TITLE_SIZE);
    let lane_room = if lanes.is_empty() {
        0.0
    } else {
        8.0 + LANE * lanes.len() as f64
    };
    let content_w = placed.width + lane_room;
    // Where edges meet the box: above the sources, below the sinks, and
    // along the lanes; each (x from the contents' left, whether on top).
    let mut meets: Vec<(f64, f64, bool)> = members
        .iter()
        .enumerate()
        .filter_map(|(i, &v)| {
            // The edges from or to outside the box, spread as the layout
            // spreads them.
            let k = model
                .edges
                .iter()
                .filter(|e| {
                    (e.to == v && local(e.from).is_none()) || (e.from == v && local(e.to).is_none())
                })
                .count() as f64;
            let half = if k > 1.0 {
                (local_sizes[i].w * 0.7 / (k - 1.0)).min(12.0) * (k - 1.0) / 2.0
            } else {
                0.0
            };
            let x = placed.centres[i].0;
            match model.vertices[v].kind {
                Kind::Source => Some((x - half, x + half, true)),
                Kind::Sink => Some((x - half, x + half, false)),
                _ => None,
            }
        })
        .collect();
    // A lane runs along the right, and across the bottom (out of a sink)
    // or the top (into a source).
    for &out_of_sink in lanes {
        meets.push((placed.width, content_w, true));
        meets.push((placed.width, content_w, false));
        meets.push((0.0, content_w, !out_of_sink));
    }
    let mut w = (content_w + 2.0 * PAD).max(title_w + 2.0 * PAD).ceil();
    let mut shift = PAD + (w - 2.0 * PAD - content_w) / 2.0;
    // The title goes where no edge meets the box: top left, top right,
    // bottom left, bottom right; else top left, the contents moved right.
    let free = |top: bool, x0: f64, x1: f64, shift: f64| {
        !meets
            .iter()
            .any(|&(a, b, t)| t == top && a + shift <= x1 + 8.0 && b + shift >= x0 - 8.0)
    };
    let (left, right) = (PAD, w - PAD - title_w);
    let title_at = match [(true, left), (true, right), (false, left), (false, right)]
        .into_iter()
        .find(|&(top, x)| free(top, x, x + title_w, shift))
    {
        Some(at) => at,
        None => {
            let first = meets
                .iter()
                .filter(|m| m.2)
                .map(|m| m.0)
                .fold(f64::INFINITY, f64::min);
            let more = (PAD + title_w + 8.0 - (first + shift)).max(0.0);
            w = (w + more).ceil();
            shift += more;
            (true, left)
        }
    };
    let down = if title_at.0 { TITLE } else { PAD };
    let h = (TITLE + placed.height + PAD).ceil();
    let lane_start = shift + content_w - lane_room + 8.0;
    Inside {
        w,
        h,
        title_at,
        top: down,
        lanes: (0..lanes.len())
            .map(|j| lane_start + LANE * (j as f64 + 0.5))
            .collect(),
        centres: placed
            .centres
            .iter()
            .map(|&(x, y)| (x + shift, y + down))
            .collect(),
        routes: edge_ids
            .iter()
            .zip(&placed.routes)
            .map(|(&k, r)| (k, r.iter().map(|&(x, y)| (x + shift, y + down)).collect()))
            .collect(),
        members,
    }
}

/// Ranks inside a box: by longest path from the sources; every sink on
/// the bottom rank of the nodes (its topic is below the box); each store
/// one rank below the lowest node using it.
fn inner_ranks(model: &Model, members: &[usize], edges: &[Edge]) -> Vec<usize> {
    let is_store = |i: usize| model.vertices[members[i]].kind == Kind::Store;
    let flow: Vec<(usize, usize)> = edges
        .iter()
        .filter(|e| !is_store(e.from) && !is_store(e.to))
        .map(|e| (e.from, e.to))
        .collect();
    let reversed = feedback_edges(members.len(), &flow);
    let oriented: Vec<(usize, usize)> = flow
        .iter()
        .zip(&reversed)
        .map(|(&(a, b), &r)| if r { (b, a) } else { (a, b) })
        .collect();
    let mut ranks = longest_path(members.len(), &oriented);
    let bottom = (0..members.len())
        .filter(|&i| !is_store(i))
        .map(|i| ranks[i])
        .max()
        .unwrap_or(0);
    for (i, &v) in members.iter().enumerate() {
        if model.vertices[v].kind == Kind::Sink {
            ranks[i] = bottom;
        }
    }
    for i in 0..members.len() {
        if is_store(i) {
            ranks[i] = edges
                .iter()
                .filter(|e| e.to == i && !is_store(e.from))
                .map(|e| ranks[e.from] + 1)
                .max()
                .unwrap_or(0);
        }
    }
    ranks
}

/// [`feedback_edges`], searching first from the vertices nothing comes
/// into (the input topics), so that the edges turned are those that feed
/// back.
fn feedback_edges_from_roots(n: usize, edges: &[(usize, usize)]) -> Vec<bool> {
    let mut has_in = vec![false; n];
    for &(a, b) in edges {
        if a != b && b < n {
            has_in[b] = true;
        }
    }
    // Renumber: roots first, then the others, each in order.
    let order: Vec<usize> = (0..n)
        .filter(|&v| !has_in[v])
        .chain((0..n).filter(|&v| has_in[v]))
        .collect();
    let mut new_id = vec![0; n];
    for (i, &v) in order.iter().enumerate() {
        new_id[v] = i;
    }
    let renamed: Vec<(usize, usize)> = edges
        .iter()
        .map(|&(a, b)| {
            (
                new_id.get(a).copied().unwrap_or(a),
                new_id.get(b).copied().unwrap_or(b),
            )
        })
        .collect();
    feedback_edges(n, &renamed)
}

#[cfg(test)]
mod tests;
