//! A layered (Sugiyama) layout of a directed graph of boxes, top to
//! bottom: the caller ranks the nodes; this module breaks long edges into
//! chains of dummy nodes, orders each layer to cut crossings (barycentres,
//! then swaps of neighbours), places the nodes along each layer as close
//! to their neighbours as the layer's order allows (isotonic regression),
//! and routes each edge down through its dummies, so that it never cuts
//! through a box.
//!
//! Topologies are small DAGs, so the steps are the plain textbook ones,
//! with bounds that keep a large graph from taking long.

/// A box to place: its size, in pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Size {
    pub(crate) w: f64,
    pub(crate) h: f64,
}

/// An edge between two boxes; where it meets each box, as an offset from
/// the box's centre along the layer (0: the layout spreads the edges
/// meeting a box side by side); how much a crossing with it costs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Edge {
    pub(crate) from: usize,
    pub(crate) to: usize,
    pub(crate) from_dx: f64,
    pub(crate) to_dx: f64,
    pub(crate) weight: f64,
}

/// The distances kept.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Spacing {
    /// Between two layers.
    pub(crate) layer_gap: f64,
    /// Between two boxes of a layer.
    pub(crate) node_gap: f64,
    /// Between an edge passing through a layer and anything beside it.
    pub(crate) edge_gap: f64,
}

/// Where everything went.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Placed {
    /// Each box's centre.
    pub(crate) centres: Vec<(f64, f64)>,
    /// Each edge's route, from its `from` box to its `to` box: a line
    /// from the first point to the second, a curve leaving and arriving
    /// vertically from the second to the third, a line to the fourth, and
    /// so on, ending with a line. Lines run inside a layer, curves between
    /// two layers.
    pub(crate) routes: Vec<Vec<(f64, f64)>>,
    /// The extent of the drawing; everything lies in `0..=width`,
    /// `0..=height`.
    pub(crate) width: f64,
    pub(crate) height: f64,
}

/// Graphs bigger than this get fewer ordering passes.
const LARGE: usize = 400;

/// Which edges to turn round so that none goes round in a circle:
/// the edges that close a cycle in a depth-first search from each
/// vertex in order (self-loops are turned too, and then ignored).
pub(crate) fn feedback_edges(n: usize, edges: &[(usize, usize)]) -> Vec<bool> {
    let mut out: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for (k, &(a, b)) in edges.iter().enumerate() {
        if a < n && b < n {
            out[a].push((b, k));
        }
    }
    let mut reversed = vec![false; edges.len()];
    // 0: unseen, 1: on the stack, 2: done.
    let mut state = vec![0u8; n];
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = 1;
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if let Some(&(w, k)) = out[v].get(*next) {
                *next += 1;
                match state[w] {
                    0 => {
                        state[w] = 1;
                        stack.push((w, 0));
                    }
                    1 => reversed[k] = true,
                    _ => {}
                }
            } else {
                state[v] = 2;
                stack.pop();
            }
        }
    }
    reversed
}

/// Each vertex's rank in an acyclic graph: 0 for those with no edge
/// coming in, else one more than the highest rank of those it comes from.
pub(crate) fn longest_path(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let mut indegree = vec![0usize; n];
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        if a < n && b < n && a != b {
            out[a].push(b);
            indegree[b] += 1;
        }
    }
    let mut rank = vec![0usize; n];
    let mut ready: Vec<usize> = (0..n).filter(|&v| indegree[v] == 0).rev().collect();
    while let Some(v) = ready.pop() {
        for &w in &out[v] {
            rank[w] = rank[w].max(rank[v] + 1);
            indegree[w] -= 1;
            if indegree[w] == 0 {
                ready.push(w);
            }
        }
    }
    rank
}

/// A node of the layered graph: a box, or a dummy on a long edge.
#[derive(Debug, Clone, Copy)]
struct Item {
    layer: usize,
    w: f64,
    h: f64,
    dummy: bool,
}

/// A piece of an edge between two neighbouring layers, from the upper
/// item to the lower one, with its ports.
#[derive(Debug, Clone, Copy)]
struct Segment {
    upper: usize,
    lower: usize,
    upper_dx: f64,
    lower_dx: f64,
    weight: f64,
}

/// Lays the boxes out with the ranks given: an edge must go from a lower
/// rank to a higher one, or the other way round when `reversed` says so
/// (it is then routed upwards); an edge within one rank is drawn straight.
pub(crate) fn place(
    sizes: &[Size],
    edges: &[Edge],
    ranks: &[usize],
    reversed: &[bool],
    spacing: Spacing,
) -> Placed {
    let n = sizes.len();
    if n == 0 {
        return Placed {
            centres: Vec::new(),
            routes: vec![vec![(0.0, 0.0); 4]; edges.len()],
            width: 0.0,
            height: 0.0,
        };
    }
    let rank = |v: usize| ranks.get(v).copied().unwrap_or(0);
    let layers_n = (0..n).map(rank).max().map_or(0, |r| r + 1);
    let mut items: Vec<Item> = (0..n)
        .map(|v| Item {
            layer: rank(v),
            w: sizes[v].w,
            h: sizes[v].h,
            dummy: false,
        })
        .collect();
    // Each edge as a chain of items from its upper end to its lower end.
    let mut chains: Vec<Option<Vec<usize>>> = Vec::with_capacity(edges.len());
    let mut segments: Vec<Segment> = Vec::new();
    for (k, e) in edges.iter().enumerate() {
        let flip = reversed.get(k).copied().unwrap_or(false);
        let (top, bottom, top_dx, bottom_dx) = if flip {
            (e.to, e.from, e.to_dx, e.from_dx)
        } else {
            (e.from, e.to, e.from_dx, e.to_dx)
        };
        if top >= n || bottom >= n || rank(top) >= rank(bottom) {
            chains.push(None);
            continue;
        }
        let mut chain = vec![top];
        for layer in rank(top) + 1..rank(bottom) {
            chain.push(items.len());
            items.push(Item {
                layer,
                w: 0.0,
                h: 0.0,
                dummy: true,
            });
        }
        chain.push(bottom);
        for (i, pair) in chain.windows(2).enumerate() {
            segments.push(Segment {
                upper: pair[0],
                lower: pair[1],
                upper_dx: if i == 0 { top_dx } else { 0.0 },
                lower_dx: if i + 2 == chain.len() { bottom_dx } else { 0.0 },
                weight: e.weight,
            });
        }
        chains.push(Some(chain));
    }
    let mut layers: Vec<Vec<usize>> = vec![Vec::new(); layers_n];
    for (i, item) in items.iter().enumerate() {
        layers[item.layer].push(i);
    }
    let order = order_layers(&items, &segments, layers);
    let mut x = assign_x(&items, &segments, &order, spacing);
    straighten(&items, &segments, &order, spacing, &mut x);
    let spread = spread_ports(&items, edges, reversed, &chains, &x);

    // Layers top to bottom.
    let mut tops = Vec::with_capacity(order.len());
    let mut heights = Vec::with_capacity(order.len());
    let mut y = 0.0;
    for layer in &order {
        let h = layer.iter().map(|&i| items[i].h).fold(0.0, f64::max);
        tops.push(y);
        heights.push(h);
        y += h + spacing.layer_gap;
    }
    let height = (y - spacing.layer_gap).max(0.0);
    let centre_y = |i: usize| tops[items[i].layer] + heights[items[i].layer] / 2.0;

    let mut routes = Vec::with_capacity(edges.len());
    for (k, chain) in chains.iter().enumerate() {
        let e = edges[k];
        let Some(chain) = chain else {
            let a = (x[e.from.min(n - 1)], centre_y(e.from.min(n - 1)));
            let b = (x[e.to.min(n - 1)], centre_y(e.to.min(n - 1)));
            routes.push(vec![a, a, b, b]);
            continue;
        };
        let (top_dx, bottom_dx) = ends(&e, reversed.get(k).copied().unwrap_or(false));
        let (top_dx, bottom_dx) = (top_dx + spread[k].0, bottom_dx + spread[k].1);
        let flip = reversed.get(k).copied().unwrap_or(false);
        let last = chain.len() - 1;
        let mut points = Vec::with_capacity(chain.len() * 2);
        for (i, &item) in chain.iter().enumerate() {
            let layer = items[item].layer;
            let (top, bottom) = (tops[layer], tops[layer] + heights[layer]);
            if i == 0 {
                let px = x[item] + top_dx;
                points.push((px, centre_y(item) + items[item].h / 2.0));
                points.push((px, bottom));
            } else if i == last {
                let px = x[item] + bottom_dx;
                points.push((px, top));
                points.push((px, centre_y(item) - items[item].h / 2.0));
            } else {
                points.push((x[item], top));
                points.push((x[item], bottom));
            }
        }
        if flip {
            points.reverse();
        }
        routes.push(points);
    }

    // Move everything right so that the leftmost thing is at 0.
    let left = (0..items.len())
        .map(|i| x[i] - items[i].w / 2.0)
        .chain(
            routes
                .iter()
                .flat_map(|r| r.iter().map(|p| p.0))
                .collect::<Vec<_>>(),
        )
        .fold(f64::INFINITY, f64::min);
    let left = if left.is_finite() { left } else { 0.0 };
    let right = (0..items.len())
        .map(|i| x[i] + items[i].w / 2.0)
        .chain(
            routes
                .iter()
                .flat_map(|r| r.iter().map(|p| p.0))
                .collect::<Vec<_>>(),
        )
        .fold(f64::NEG_INFINITY, f64::max);
    let width = if right.is_finite() { right - left } else { 0.0 };
    for route in &mut routes {
        for p in route.iter_mut() {
            p.0 -= left;
        }
    }
    Placed {
        centres: (0..n).map(|v| (x[v] - left, centre_y(v))).collect(),
        routes,
        width,
        height,
    }
}

/// An edge's ports at its upper and lower end.
fn ends(e: &Edge, flip: bool) -> (f64, f64) {
    if flip {
        (e.to_dx, e.from_dx)
    } else {
        (e.from_dx, e.to_dx)
    }
}

/// Where edges meeting a box on the same side, with no port given, meet
/// it: side by side in the order of their other ends, up to 12 pixels
/// apart and within the middle 70% of the box. For each edge, the offset
/// added at its upper and at its lower end.
fn spread_ports(
    items: &[Item],
    edges: &[Edge],
    reversed: &[bool],
    chains: &[Option<Vec<usize>>],
    x: &[f64],
) -> Vec<(f64, f64)> {
    let mut spread = vec![(0.0, 0.0); edges.len()];
    // For each box and side (lower or not): the other ends' x and edges.
    let mut meeting: std::collections::BTreeMap<(usize, bool), Vec<(f64, usize)>> =
        std::collections::BTreeMap::new();
    for (k, chain) in chains.iter().enumerate() {
        let Some(chain) = chain else { continue };
        let (top_dx, bottom_dx) = ends(&edges[k], reversed.get(k).copied().unwrap_or(false));
        let last = chain.len() - 1;
        if top_dx == 0.0 {
            let other = x[chain[1]] + if last == 1 { bottom_dx } else { 0.0 };
            meeting
                .entry((chain[0], true))
                .or_default()
                .push((other, k));
        }
        if bottom_dx == 0.0 {
            let other = x[chain[last - 1]] + if last == 1 { top_dx } else { 0.0 };
            meeting
                .entry((chain[last], false))
                .or_default()
                .push((other, k));
        }
    }
    for ((item, below), mut list) in meeting {
        if list.len() < 2 {
            continue;
        }
        list.sort_by(|a, b| a.0.total_cmp(&b.0));
        let n = list.len() as f64;
        let step = (items[item].w * 0.7 / (n - 1.0)).min(12.0);
        for (i, &(_, k)) in list.iter().enumerate() {
            let dx = (i as f64 - (n - 1.0) / 2.0) * step;
            if below {
                spread[k].0 = dx;
            } else {
                spread[k].1 = dx;
            }
        }
    }
    spread
}

/// For each item, the segments that end at it (above or below).
fn touching(n: usize, segments: &[Segment]) -> Vec<Vec<usize>> {
    let mut touching = vec![Vec::new(); n];
    for (k, s) in segments.iter().enumerate() {
        touching[s.upper].push(k);
        touching[s.lower].push(k);
    }
    touching
}

/// Where a segment's end sits along its layer, for ordering: the item's
/// index, moved by the port's share of the item's width.
fn slot(position: &[f64], items: &[Item], item: usize, dx: f64) -> f64 {
    let w = items[item].w;
    let share = if w > 0.0 {
        (dx / w).clamp(-0.5, 0.5)
    } else {
        0.0
    };
    position[item] + share * 0.8
}

/// How many pairs of segments between `upper` layer and the next cross.
fn crossings(position: &[f64], items: &[Item], segments: &[&Segment]) -> f64 {
    let ends: Vec<(f64, f64, f64)> = segments
        .iter()
        .map(|s| {
            (
                slot(position, items, s.upper, s.upper_dx),
                slot(position, items, s.lower, s.lower_dx),
                s.weight,
            )
        })
        .collect();
    let mut count = 0.0;
    for (i, a) in ends.iter().enumerate() {
        for b in &ends[i + 1..] {
            if (a.0 - b.0) * (a.1 - b.1) < 0.0 {
                count += a.2 * b.2;
            }
        }
    }
    count
}

/// Orders each layer to cut crossings: sweeps down and up sorting by the
/// barycentre of the neighbours in the layer before, each followed by
/// swaps of neighbours that lower the crossings; keeps the best order met.
fn order_layers(
    items: &[Item],
    segments: &[Segment],
    mut layers: Vec<Vec<usize>>,
) -> Vec<Vec<usize>> {
    let mut position = vec![0.0; items.len()];
    let renumber = |layers: &[Vec<usize>], position: &mut [f64]| {
        for layer in layers {
            for (i, &item) in layer.iter().enumerate() {
                position[item] = i as f64;
            }
        }
    };
    let touching = touching(items.len(), segments);
    // Segments by the layer of their upper end.
    let mut between: Vec<Vec<&Segment>> = vec![Vec::new(); layers.len()];
    for s in segments {
        between[items[s.upper].layer].push(s);
    }
    let total = |position: &[f64]| -> f64 {
        between
            .iter()
            .map(|segs| crossings(position, items, segs))
            .sum()
    };
    renumber(&layers, &mut position);
    let large = items.len() > LARGE;
    let passes = if large { 4 } else { 24 };
    let mut best = layers.clone();
    let mut best_count = total(&position);
    for pass in 0..passes {
        if best_count == 0.0 {
            break;
        }
        let down = pass % 2 == 0;
        let range: Vec<usize> = if down {
            (1..layers.len()).collect()
        } else {
            (0..layers.len().saturating_sub(1)).rev().collect()
        };
        for l in range {
            let mut keyed: Vec<(f64, usize)> = layers[l]
                .iter()
                .map(|&item| {
                    let (sum, count) = touching[item]
                        .iter()
                        .map(|&k| &segments[k])
                        .filter_map(|s| {
                            if down && s.lower == item {
                                Some(slot(&position, items, s.upper, s.upper_dx))
                            } else if !down && s.upper == item {
                                Some(slot(&position, items, s.lower, s.lower_dx))
                            } else {
                                None
                            }
                        })
                        .fold((0.0, 0usize), |(s, c), p| (s + p, c + 1));
                    let key = if count == 0 {
                        position[item]
                    } else {
                        sum / count as f64
                    };
                    (key, item)
                })
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
            layers[l] = keyed.into_iter().map(|(_, item)| item).collect();
            for (i, &item) in layers[l].iter().enumerate() {
                position[item] = i as f64;
            }
        }
        if !large {
            transpose(items, &between, &mut layers, &mut position);
        }
        let count = total(&position);
        if count < best_count {
            best_count = count;
            best = layers.clone();
        }
    }
    best
}

/// Swaps neighbours in a layer while that lowers the crossings with the
/// layers above and below.
fn transpose(
    items: &[Item],
    between: &[Vec<&Segment>],
    layers: &mut [Vec<usize>],
    position: &mut [f64],
) {
    for _ in 0..4 {
        let mut improved = false;
        for l in 0..layers.len() {
            let above: &[&Segment] = if l > 0 { &between[l - 1] } else { &[] };
            let below: &[&Segment] = &between[l];
            for i in 0..layers[l].len().saturating_sub(1) {
                let (u, v) = (layers[l][i], layers[l][i + 1]);
                let touching: Vec<&Segment> = above
                    .iter()
                    .filter(|s| s.lower == u || s.lower == v)
                    .chain(below.iter().filter(|s| s.upper == u || s.upper == v))
                    .copied()
                    .collect();
                let before = local_crossings(position, items, &touching);
                position.swap(u, v);
                let after = local_crossings(position, items, &touching);
                if after < before {
                    layers[l].swap(i, i + 1);
                    improved = true;
                } else {
                    position.swap(u, v);
                }
            }
        }
        if !improved {
            break;
        }
    }
}

/// Crossings among segments, each pair counted when both run between the
/// same two layers.
fn local_crossings(position: &[f64], items: &[Item], segments: &[&Segment]) -> f64 {
    let mut count = 0.0;
    for (i, a) in segments.iter().enumerate() {
        for b in &segments[i + 1..] {
            if items[a.upper].layer != items[b.upper].layer {
                continue;
            }
            let a0 = slot(position, items, a.upper, a.upper_dx);
            let a1 = slot(position, items, a.lower, a.lower_dx);
            let b0 = slot(position, items, b.upper, b.upper_dx);
            let b1 = slot(position, items, b.lower, b.lower_dx);
            if (a0 - b0) * (a1 - b1) < 0.0 {
                count += a.weight * b.weight;
            }
        }
    }
    count
}

/// The x of each item's centre: each layer packed in its order, then moved
/// towards its neighbours' ports, down and up in turn, each layer by an
/// isotonic regression that keeps the order and the gaps.
fn assign_x(
    items: &[Item],
    segments: &[Segment],
    order: &[Vec<usize>],
    spacing: Spacing,
) -> Vec<f64> {
    let mut x = vec![0.0; items.len()];
    let touching = touching(items.len(), segments);
    // The least distance between the centres of neighbours in a layer.
    let gap = |a: usize, b: usize| {
        let g = if items[a].dummy || items[b].dummy {
            spacing.edge_gap
        } else {
            spacing.node_gap
        };
        items[a].w / 2.0 + g + items[b].w / 2.0
    };
    for layer in order {
        let mut at = 0.0;
        for (i, &item) in layer.iter().enumerate() {
            if i > 0 {
                at += gap(layer[i - 1], item);
            }
            x[item] = at;
        }
    }
    let passes = if items.len() > LARGE { 4 } else { 12 };
    for pass in 0..passes + 3 {
        // Down, up, ..., then two passes looking both ways, then one down
        // so that a lone child sits straight under its parent.
        let (down, up) = if pass < passes {
            (pass % 2 == 0, pass % 2 == 1)
        } else if pass < passes + 2 {
            (true, true)
        } else {
            (true, false)
        };
        let range: Vec<usize> = if down && !up {
            (0..order.len()).collect()
        } else if up && !down {
            (0..order.len()).rev().collect()
        } else if pass % 2 == 0 {
            (0..order.len()).collect()
        } else {
            (0..order.len()).rev().collect()
        };
        for l in range {
            let layer = &order[l];
            if layer.is_empty() {
                continue;
            }
            let mut wanted = Vec::with_capacity(layer.len());
            let mut weights = Vec::with_capacity(layer.len());
            for &item in layer {
                let mut sum = 0.0;
                let mut count = 0.0;
                for s in touching[item].iter().map(|&k| &segments[k]) {
                    if down && s.lower == item {
                        sum += x[s.upper] + s.upper_dx - s.lower_dx;
                        count += 1.0;
                    }
                    if up && s.upper == item {
                        sum += x[s.lower] + s.lower_dx - s.upper_dx;
                        count += 1.0;
                    }
                }
                if count > 0.0 {
                    wanted.push(sum / count);
                    weights.push(if items[item].dummy {
                        2.0 * count
                    } else {
                        count
                    });
                } else {
                    wanted.push(x[item]);
                    weights.push(0.05);
                }
            }
            let mut offsets = Vec::with_capacity(layer.len());
            let mut c = 0.0;
            for (i, &item) in layer.iter().enumerate() {
                if i > 0 {
                    c += gap(layer[i - 1], item);
                }
                offsets.push(c);
            }
            let targets: Vec<f64> = wanted.iter().zip(&offsets).map(|(w, c)| w - c).collect();
            let fitted = isotonic(&targets, &weights);
            for (i, &item) in layer.iter().enumerate() {
                x[item] = fitted[i] + offsets[i];
            }
        }
    }
    x
}

/// Lines up the two ends of each link of a chain (an item with one edge
/// down to an item with one edge up) where the layer leaves room: the
/// lower end moves under the upper one, else the upper over the lower.
fn straighten(
    items: &[Item],
    segments: &[Segment],
    order: &[Vec<usize>],
    spacing: Spacing,
    x: &mut [f64],
) {
    let mut downs = vec![0usize; items.len()];
    let mut ups = vec![0usize; items.len()];
    for s in segments {
        downs[s.upper] += 1;
        ups[s.lower] += 1;
    }
    // Each item's layer and place in it.
    let mut place = vec![(0usize, 0usize); items.len()];
    for (l, layer) in order.iter().enumerate() {
        for (i, &item) in layer.iter().enumerate() {
            place[item] = (l, i);
        }
    }
    let gap = |a: usize, b: usize| {
        let g = if items[a].dummy || items[b].dummy {
            spacing.edge_gap
        } else {
            spacing.node_gap
        };
        items[a].w / 2.0 + g + items[b].w / 2.0
    };
    // Whether `item` may move to `to` without crowding its neighbours.
    let room = |x: &[f64], item: usize, to: f64| {
        let (l, i) = place[item];
        let layer = &order[l];
        let left = i.checked_sub(1).map(|j| layer[j]);
        let right = layer.get(i + 1).copied();
        left.is_none_or(|a| to - x[a] >= gap(a, item) - 1e-9)
            && right.is_none_or(|b| x[b] - to >= gap(item, b) - 1e-9)
    };
    for _ in 0..3 {
        for s in segments {
            if downs[s.upper] != 1 || ups[s.lower] != 1 {
                continue;
            }
            let under = x[s.upper] + s.upper_dx - s.lower_dx;
            let over = x[s.lower] + s.lower_dx - s.upper_dx;
            if (under - x[s.lower]).abs() < 1e-9 {
                continue;
            }
            if room(x, s.lower, under) {
                x[s.lower] = under;
            } else if room(x, s.upper, over) {
                x[s.upper] = over;
            }
        }
    }
}

/// The non-decreasing sequence closest to `targets` in weighted squares
/// (pool adjacent violators).
fn isotonic(targets: &[f64], weights: &[f64]) -> Vec<f64> {
    // Blocks of (weight, weighted sum, length).
    let mut blocks: Vec<(f64, f64, usize)> = Vec::with_capacity(targets.len());
    for (&t, &w) in targets.iter().zip(weights) {
        blocks.push((w, w * t, 1));
        while blocks.len() > 1 {
            let (w1, s1, n1) = blocks[blocks.len() - 1];
            let (w0, s0, n0) = blocks[blocks.len() - 2];
            if s0 / w0 <= s1 / w1 {
                break;
            }
            blocks.pop();
            let last = blocks.len() - 1;
            blocks[last] = (w0 + w1, s0 + s1, n0 + n1);
        }
    }
    blocks
        .into_iter()
        .flat_map(|(w, s, n)| std::iter::repeat_n(s / w, n))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPACING: Spacing = Spacing {
        layer_gap: 30.0,
        node_gap: 20.0,
        edge_gap: 10.0,
    };

    fn size(w: f64, h: f64) -> Size {
        Size { w, h }
    }

    fn edge(from: usize, to: usize) -> Edge {
        Edge {
            from,
            to,
            from_dx: 0.0,
            to_dx: 0.0,
            weight: 1.0,
        }
    }

    #[test]
    fn isotonic_pools_violators() {
        assert_eq!(
            isotonic(&[1.0, 3.0, 2.0, 4.0], &[1.0; 4]),
            [1.0, 2.5, 2.5, 4.0]
        );
        assert_eq!(isotonic(&[3.0, 1.0], &[3.0, 1.0]), [2.5, 2.5]);
        assert_eq!(isotonic(&[], &[]), Vec::<f64>::new());
    }

    #[test]
    fn ranks_and_cycles() {
        // 0 -> 1 -> 2 -> 0 and 0 -> 2: the edge back to 0 is turned.
        let edges = [(0, 1), (1, 2), (2, 0), (0, 2), (3, 3)];
        let reversed = feedback_edges(4, &edges);
        assert_eq!(reversed, [false, false, true, false, true]);
        let oriented: Vec<(usize, usize)> = edges
            .iter()
            .zip(&reversed)
            .map(|(&(a, b), &r)| if r { (b, a) } else { (a, b) })
            .collect();
        assert_eq!(longest_path(4, &oriented), [0, 1, 2, 0]);
    }

    #[test]
    fn a_fork_is_centred_and_its_edges_spread() {
        // 0 -> 1, 0 -> 2: the children side by side under the parent, the
        // edges leaving it 12 pixels apart.
        let placed = place(
            &[size(40.0, 20.0), size(40.0, 20.0), size(40.0, 20.0)],
            &[edge(0, 1), edge(0, 2)],
            &[0, 1, 1],
            &[false, false],
            SPACING,
        );
        assert_eq!(placed.centres, [(50.0, 10.0), (20.0, 60.0), (80.0, 60.0)]);
        assert_eq!(
            placed.routes[0],
            [(44.0, 20.0), (44.0, 20.0), (20.0, 50.0), (20.0, 50.0)]
        );
        assert_eq!((placed.width, placed.height), (100.0, 70.0));
    }

    #[test]
    fn chains_are_straight_when_the_row_below_is_wider() {
        // 0 -> 1 -> 3 and 0 -> 2 -> 4, the lower boxes twice as wide: the
        // middle row spreads to stand over them.
        let placed = place(
            &[
                size(40.0, 20.0),
                size(40.0, 20.0),
                size(40.0, 20.0),
                size(80.0, 20.0),
                size(80.0, 20.0),
            ],
            &[edge(0, 1), edge(0, 2), edge(1, 3), edge(2, 4)],
            &[0, 1, 1, 2, 2],
            &[false; 4],
            SPACING,
        );
        let x: Vec<f64> = placed.centres.iter().map(|c| c.0).collect();
        assert_eq!((x[1], x[2]), (x[3], x[4]), "{x:?}");
        assert_eq!(x[4] - x[3], 100.0);
    }

    #[test]
    fn a_long_edge_goes_round_the_boxes_in_its_way() {
        // 0 -> 1 -> 2 and 0 -> 2: the long edge passes beside 1.
        let placed = place(
            &[size(40.0, 20.0); 3],
            &[edge(0, 1), edge(1, 2), edge(0, 2)],
            &[0, 1, 2],
            &[false; 3],
            SPACING,
        );
        let (x1, _) = placed.centres[1];
        let through = placed.routes[2][2].0;
        assert!((through - x1).abs() >= 20.0 + 10.0, "{placed:?}");
        assert_eq!(placed.routes[2].len(), 6);
    }

    #[test]
    fn crossings_are_undone() {
        // Two pairs wired across: 0 -> 3, 1 -> 2.
        let placed = place(
            &[size(20.0, 10.0); 4],
            &[edge(0, 3), edge(1, 2)],
            &[0, 0, 1, 1],
            &[false; 2],
            SPACING,
        );
        let c = &placed.centres;
        assert!((c[0].0 < c[1].0) == (c[3].0 < c[2].0), "{c:?}");
    }

    #[test]
    fn a_reversed_edge_is_routed_from_its_own_start() {
        let placed = place(
            &[size(20.0, 10.0); 2],
            &[edge(1, 0)],
            &[0, 1],
            &[true],
            SPACING,
        );
        let route = &placed.routes[0];
        assert_eq!(route.first(), Some(&(10.0, 40.0)));
        assert_eq!(route.last(), Some(&(10.0, 10.0)));
    }
}
