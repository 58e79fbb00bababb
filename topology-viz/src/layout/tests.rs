//! The layout against what a reader needs of it, on random topologies:
//! nothing overlaps, every box holds its own and no topic, every label
//! fits its shape, every edge runs from its vertex to its vertex.

use proptest::prelude::*;
use streams_core::topology::TopologyDescription;

use super::{Drawing, layout};
use crate::model::{Kind, Model};
use crate::text::{FONT_SIZE, width};

/// A small random number generator (xorshift), for one case.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// Kafka's text of a random topology: 1 to 4 sub-topologies of sources,
/// processors (with stores) and sinks over a pool of topics that they
/// share (so feedback loops happen), some global stores, names short and
/// long.
pub(crate) fn random_description(seed: u64) -> String {
    let mut rng = Rng(seed | 1);
    let mut text = String::from("Topologies:\n");
    let mut id = 0;
    let mut serial = 0;
    let mut name = |rng: &mut Rng, kind: &str| {
        serial += 1;
        match rng.below(3) {
            0 => format!("{}{serial}", &kind[..1]),
            1 => format!("KSTREAM-{kind}-{serial:010}"),
            _ => format!("{kind}-step-{serial}").to_lowercase(),
        }
    };
    let topic = |rng: &mut Rng| match rng.below(8) {
        7 => format!(
            "KSTREAM-AGGREGATE-STATE-STORE-{:010}-repartition",
            rng.below(3)
        ),
        k => format!("t{k}"),
    };
    for _ in 0..1 + rng.below(4) {
        if rng.below(5) == 0 {
            let store = format!("global-store-{id}");
            text.push_str(&format!(
                "  Sub-topology: {id} for global store (will not generate tasks)\n    Source: gs{id} (topics: [g{id}])\n      --> gp{id}\n    Processor: gp{id} (stores: [{store}])\n      --> none\n      <-- gs{id}\n"
            ));
            id += 1;
            continue;
        }
        // (kind, name, detail, predecessors)
        let mut nodes: Vec<(&str, String, String, Vec<usize>)> = Vec::new();
        for _ in 0..1 + rng.below(2) {
            let detail = if rng.below(6) == 0 {
                format!("topics: {}-.*", topic(&mut rng))
            } else {
                let mut ts = vec![topic(&mut rng)];
                let t2 = topic(&mut rng);
                if rng.below(3) == 0 && !ts.contains(&t2) {
                    ts.push(t2);
                }
                format!("topics: [{}]", ts.join(", "))
            };
            nodes.push(("Source", name(&mut rng, "SOURCE"), detail, Vec::new()));
        }
        for _ in 0..rng.below(7) {
            let mut preds = vec![rng.below(nodes.len())];
            let p2 = rng.below(nodes.len());
            if rng.below(4) == 0 && !preds.contains(&p2) {
                preds.push(p2);
            }
            let stores: Vec<String> = (0..rng.below(3))
                .map(|k| match rng.below(4) {
                    0 => "shared-store".to_owned(),
                    _ => format!("store-{id}-{k}"),
                })
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let detail = format!("stores: [{}]", stores.join(", "));
            nodes.push(("Processor", name(&mut rng, "PROCESSOR"), detail, preds));
        }
        let before_sinks = nodes.len();
        for _ in 0..rng.below(3) {
            let pred = vec![rng.below(before_sinks)];
            let detail = if rng.below(8) == 0 {
                "extractor class: Router".to_owned()
            } else {
                format!("topic: {}", topic(&mut rng))
            };
            nodes.push(("Sink", name(&mut rng, "SINK"), detail, pred));
        }
        text.push_str(&format!("   Sub-topology: {id}\n"));
        for (i, (kind, n, detail, preds)) in nodes.iter().enumerate() {
            let succs: Vec<&str> = nodes
                .iter()
                .filter(|node| node.3.contains(&i))
                .map(|node| node.1.as_str())
                .collect();
            text.push_str(&format!("    {kind}: {n} ({detail})\n"));
            if *kind != "Sink" {
                let list = if succs.is_empty() {
                    "none".to_owned()
                } else {
                    succs.join(", ")
                };
                text.push_str(&format!("      --> {list}\n"));
            }
            if *kind != "Source" {
                let list: Vec<&str> = preds.iter().map(|&p| nodes[p].1.as_str()).collect();
                text.push_str(&format!("      <-- {}\n", list.join(", ")));
            }
        }
        text.push('\n');
        id += 1;
    }
    text
}

fn overlap(a: (f64, f64, f64, f64), b: (f64, f64, f64, f64)) -> bool {
    const SLACK: f64 = 0.5;
    a.0 < b.2 - SLACK && b.0 < a.2 - SLACK && a.1 < b.3 - SLACK && b.1 < a.3 - SLACK
}

fn inside(a: (f64, f64, f64, f64), outer: (f64, f64, f64, f64)) -> bool {
    const SLACK: f64 = 0.5;
    a.0 >= outer.0 - SLACK
        && a.1 >= outer.1 - SLACK
        && a.2 <= outer.2 + SLACK
        && a.3 <= outer.3 + SLACK
}

/// Every property the pictures need; an error names the first broken.
fn check(model: &Model, d: &Drawing) -> Result<(), String> {
    let frames: Vec<(f64, f64, f64, f64)> = d
        .frames
        .iter()
        .map(|f| (f.x, f.y, f.x + f.w, f.y + f.h))
        .collect();
    let all = (0.0, 0.0, d.width, d.height);
    for (i, (v, p)) in model.vertices.iter().zip(&d.vertices).enumerate() {
        let b = p.bounds();
        if !inside(b, all) {
            return Err(format!("{} outside the drawing: {b:?} in {all:?}", v.name));
        }
        for (w, q) in model.vertices.iter().zip(&d.vertices).skip(i + 1) {
            if overlap(b, q.bounds()) {
                return Err(format!("{} overlaps {}", v.name, w.name));
            }
        }
        match v.cluster {
            Some(c) if !inside(b, frames[c]) => {
                return Err(format!("{} is not inside its box {c}", v.name));
            }
            _ => {}
        }
        for (c, f) in frames.iter().enumerate() {
            if v.cluster != Some(c) && overlap(b, *f) {
                return Err(format!("{} is inside box {c}, not its own", v.name));
            }
        }
        let extra = if v.kind == Kind::Extractor { 24.0 } else { 8.0 };
        for line in &p.lines {
            if width(line, FONT_SIZE) + extra > p.w {
                return Err(format!("the label {line:?} is wider than its shape"));
            }
        }
        if p.lines.concat() != v.name {
            return Err(format!("the label of {} lost text: {:?}", v.name, p.lines));
        }
    }
    for (i, a) in frames.iter().enumerate() {
        if !inside(*a, all) {
            return Err(format!("box {i} outside the drawing"));
        }
        for b in &frames[i + 1..] {
            if overlap(*a, *b) {
                return Err(format!("box {i} overlaps another: {a:?} {b:?}"));
            }
        }
    }
    for (e, route) in model.edges.iter().zip(&d.routes) {
        let (Some(&start), Some(&end)) = (route.first(), route.last()) else {
            return Err("an empty route".to_owned());
        };
        if route.len() % 2 != 0 || route.len() < 4 {
            return Err(format!("a route of {} points", route.len()));
        }
        for (v, p) in [(e.from, start), (e.to, end)] {
            let (l, t, r, b) = d.vertices[v].bounds();
            let on_side = (p.1 - t).abs() < 0.01 || (p.1 - b).abs() < 0.01;
            if !(on_side && p.0 >= l - 0.01 && p.0 <= r + 0.01) {
                let name = &model.vertices[v].name;
                return Err(format!(
                    "an edge of {name} ends at {p:?}, off {:?}",
                    (l, t, r, b)
                ));
            }
        }
        for &(x, y) in route {
            if !inside((x, y, x, y), all) {
                return Err(format!("an edge leaves the drawing at {:?}", (x, y)));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_topologies_draw_cleanly(seed in any::<u64>()) {
        let text = random_description(seed);
        let description = TopologyDescription::parse(&text)
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let model = Model::of(&description);
        let drawing = layout(&model);
        prop_assert_eq!(drawing.vertices.len(), model.vertices.len());
        if let Err(why) = check(&model, &drawing) {
            return Err(TestCaseError::fail(format!("{why}\n{text}")));
        }
    }
}

/// The Java example of the README, laid out: where each thing went.
#[test]
fn a_repartitioned_topology() -> Result<(), Box<dyn std::error::Error>> {
    let text = "Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000000 (topics: [in])
      --> KSTREAM-KEY-SELECT-0000000001
    Processor: KSTREAM-KEY-SELECT-0000000001 (stores: [])
      --> KSTREAM-SINK-0000000003
      <-- KSTREAM-SOURCE-0000000000
    Sink: KSTREAM-SINK-0000000003 (topic: counts-repartition)
      <-- KSTREAM-KEY-SELECT-0000000001

  Sub-topology: 1
    Source: KSTREAM-SOURCE-0000000005 (topics: [counts-repartition])
      --> KSTREAM-AGGREGATE-0000000002
    Processor: KSTREAM-AGGREGATE-0000000002 (stores: [counts])
      --> none
      <-- KSTREAM-SOURCE-0000000005
";
    let description = TopologyDescription::parse(text)?;
    let model = Model::of(&description);
    let d = layout(&model);
    check(&model, &d)?;
    let mut out = String::new();
    for f in &d.frames {
        out.push_str(&format!(
            "box {:?} at {:.1},{:.1} {}x{}, title {}\n",
            f.title,
            f.x,
            f.y,
            f.w,
            f.h,
            if f.title_at.0 { "above" } else { "below" }
        ));
    }
    for (v, p) in model.vertices.iter().zip(&d.vertices) {
        out.push_str(&format!(
            "{} {:?} at {:.1},{:.1} {}x{} {:?}\n",
            v.kind.word(),
            v.name,
            p.x,
            p.y,
            p.w,
            p.h,
            p.lines
        ));
    }
    insta::assert_snapshot!(out, @r#"
    box "Sub-topology: 0" at 0.0,67.0 217x254, title above
    box "Sub-topology: 1" at 9.6,428.0 207x237, title below
    source "KSTREAM-SOURCE-0000000000" at 113.1,124.0 153x54 ["KSTREAM-SOURCE-", "0000000000"]
    processor "KSTREAM-KEY-SELECT-0000000001" at 113.1,201.0 174x44 ["KSTREAM-KEY-SELECT-", "0000000001"]
    sink "KSTREAM-SINK-0000000003" at 113.1,278.0 128x54 ["KSTREAM-SINK-", "0000000003"]
    topic "in" at 113.1,13.5 56x27 ["in"]
    topic "counts-repartition" at 113.1,374.5 119x27 ["counts-repartition"]
    source "KSTREAM-SOURCE-0000000005" at 113.1,471.0 153x54 ["KSTREAM-SOURCE-", "0000000005"]
    processor "KSTREAM-AGGREGATE-0000000002" at 113.1,548.0 175x44 ["KSTREAM-AGGREGATE-", "0000000002"]
    store "counts" at 113.1,616.5 62x37 ["counts"]
    "#);
    Ok(())
}
