//! Reading Kafka's `describe()` text back into a [`TopologyDescription`].
//!
//! The text is read line by line; leading and trailing spaces do not
//! matter, empty lines neither. Kafka's format is ambiguous in a few
//! places, which are read as Kafka writes them in practice: a list item
//! is whatever lies between `, ` separators (so names containing `, ` do
//! not survive), `none` is an empty list, and a source's topics written
//! `[...]` are names, anything else a pattern.

use std::collections::HashMap;

use petgraph::algo::toposort;
use petgraph::graph::DiGraph;

use super::{Destination, GlobalStore, Node, NodeType, Subtopology, TopologyDescription};
use crate::topology::Topics;

/// Why a text is not a topology description; every variant names the
/// line (counted from 1) where the problem shows.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The line is not what the format allows there.
    #[error("line {line}: expected {expected}, found {found}")]
    Expected {
        /// The line.
        line: usize,
        /// What could have come there.
        expected: &'static str,
        /// What came instead, quoted (shortened), or `end of text`.
        found: String,
    },
    /// A node line of a kind other than `Source`, `Processor` or `Sink`.
    #[error("line {line}: unknown node kind `{kind}`, expected `Source`, `Processor` or `Sink`")]
    UnknownNodeKind {
        /// The line.
        line: usize,
        /// The kind as written.
        kind: String,
    },
    /// A `-->` or `<--` list names a node that its sub-topology does not have.
    #[error("line {line}: `{node}` names `{reference}`, which is not a node of its sub-topology")]
    DanglingReference {
        /// The line of the list.
        line: usize,
        /// The node whose list it is.
        node: String,
        /// The name that matches no node.
        reference: String,
    },
    /// `a --> b` without `b <-- a`, or the reverse.
    #[error(
        "line {line}: `{node}` lists `{other}` as its {relation}, but `{other}` does not list `{node}` back"
    )]
    OneWayLink {
        /// The line of the list.
        line: usize,
        /// The node whose list it is.
        node: String,
        /// The node listed.
        other: String,
        /// `successor` or `predecessor`.
        relation: &'static str,
    },
    /// The successor links go round in a circle.
    #[error("line {line}: node `{node}` is on a cycle")]
    Cycle {
        /// The line of a node on the cycle.
        line: usize,
        /// That node.
        node: String,
    },
    /// Two nodes of the same name.
    #[error("line {line}: node `{name}` is described a second time")]
    DuplicateNode {
        /// The line of the second one.
        line: usize,
        /// The name.
        name: String,
    },
    /// Two sub-topologies (or global stores) with the same id.
    #[error("line {line}: sub-topology {id} is described a second time")]
    DuplicateId {
        /// The line of the second one.
        line: usize,
        /// The id.
        id: usize,
    },
}

impl ParseError {
    /// The line (counted from 1) where the problem shows.
    pub fn line(&self) -> usize {
        match self {
            ParseError::Expected { line, .. }
            | ParseError::UnknownNodeKind { line, .. }
            | ParseError::DanglingReference { line, .. }
            | ParseError::OneWayLink { line, .. }
            | ParseError::Cycle { line, .. }
            | ParseError::DuplicateNode { line, .. }
            | ParseError::DuplicateId { line, .. } => *line,
        }
    }
}

const GLOBAL_SUFFIX: &str = " for global store (will not generate tasks)";

/// `found` for an error: the line quoted, cut at 60 characters.
fn quoted(line: &str) -> String {
    let mut chars = line.chars();
    let head: String = chars.by_ref().take(60).collect();
    if chars.next().is_some() {
        format!("`{head}...`")
    } else {
        format!("`{head}`")
    }
}

fn expected(line: usize, expected: &'static str, found: &str) -> ParseError {
    ParseError::Expected {
        line,
        expected,
        found: quoted(found),
    }
}

/// An arrow line a node still needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arrow {
    Successors,
    Predecessors,
}

impl Arrow {
    fn expected(self) -> &'static str {
        match self {
            Arrow::Successors => "a `-->` line",
            Arrow::Predecessors => "a `<--` line",
        }
    }
}

/// A node as read, with the lines its parts came from.
struct RawNode {
    node: Node,
    line: usize,
    successors_line: usize,
    predecessors_line: usize,
    /// The arrow lines still to come, in order.
    pending: Vec<Arrow>,
}

struct RawBlock {
    id: usize,
    line: usize,
    global: bool,
    nodes: Vec<RawNode>,
}

pub(super) fn parse(text: &str) -> Result<TopologyDescription, ParseError> {
    let mut lines = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .enumerate()
        .map(|(i, l)| (i + 1, l));
    match lines.next() {
        Some((_, l)) if l.trim() == "Topologies:" => {}
        Some((n, l)) => return Err(expected(n, "`Topologies:`", l)),
        None => return Err(expected(1, "`Topologies:`", "")),
    }
    let mut blocks: Vec<RawBlock> = Vec::new();
    let mut last_line = 1;
    for (n, raw) in lines {
        last_line = n;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("Sub-topology: ") {
            check_complete(&blocks, n, line)?;
            let (id, global) = match rest.strip_suffix(GLOBAL_SUFFIX) {
                Some(id) => (id, true),
                None => (rest, false),
            };
            blocks.push(RawBlock {
                id: parse_id(id).ok_or_else(|| expected(n, "a sub-topology id", line))?,
                line: n,
                global,
                nodes: Vec::new(),
            });
        } else if let Some(rest) = arrow(line, "-->") {
            let node = awaiting(&mut blocks, Arrow::Successors, n, line)?;
            node.node.successors = parse_names(rest, n, line)?;
            node.successors_line = n;
        } else if let Some(rest) = arrow(line, "<--") {
            let node = awaiting(&mut blocks, Arrow::Predecessors, n, line)?;
            node.node.predecessors = parse_names(rest, n, line)?;
            node.predecessors_line = n;
        } else {
            check_complete(&blocks, n, line)?;
            let node = parse_node(line, n)?;
            match blocks.last_mut() {
                Some(block) => block.nodes.push(node),
                None => return Err(expected(n, "`Sub-topology: <id>`", line)),
            }
        }
    }
    if let Err(ParseError::Expected { line, expected, .. }) = check_complete(&blocks, last_line, "")
    {
        return Err(ParseError::Expected {
            line,
            expected,
            found: "end of text".to_owned(),
        });
    }
    assemble(blocks)
}

/// The list after an arrow (`-->` alone is an empty list).
fn arrow<'a>(line: &'a str, arrow: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(arrow)?;
    if rest.is_empty() {
        Some(rest)
    } else {
        rest.strip_prefix(' ')
    }
}

/// The node that is waiting for this arrow line.
fn awaiting<'a>(
    blocks: &'a mut [RawBlock],
    arrow: Arrow,
    n: usize,
    line: &str,
) -> Result<&'a mut RawNode, ParseError> {
    let Some(node) = blocks.last_mut().and_then(|b| b.nodes.last_mut()) else {
        return Err(expected(n, "a node before an arrow line", line));
    };
    match node.pending.first() {
        Some(&next) if next == arrow => {
            node.pending.remove(0);
            Ok(node)
        }
        Some(&next) => Err(expected(n, next.expected(), line)),
        None => Err(expected(
            n,
            "a node or `Sub-topology: <id>` (the node has all its arrow lines)",
            line,
        )),
    }
}

/// An error when the last node still waits for an arrow line.
fn check_complete(blocks: &[RawBlock], n: usize, line: &str) -> Result<(), ParseError> {
    match blocks
        .last()
        .and_then(|b| b.nodes.last())
        .and_then(|node| node.pending.first())
    {
        Some(next) => Err(expected(n, next.expected(), line)),
        None => Ok(()),
    }
}

/// A decimal id as Java prints an `int`: digits, no sign, no leading zero.
fn parse_id(s: &str) -> Option<usize> {
    let digits = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits || (s.len() > 1 && s.starts_with('0')) {
        return None;
    }
    s.parse().ok().filter(|&id| i32::try_from(id).is_ok())
}

/// `a, b` or `none`.
fn parse_names(list: &str, n: usize, line: &str) -> Result<Vec<String>, ParseError> {
    if list == "none" {
        return Ok(Vec::new());
    }
    split_items(list).ok_or_else(|| expected(n, "node names separated by `, `, or `none`", line))
}

/// `[a, b]` or `[]`.
fn parse_set(set: &str) -> Option<Vec<String>> {
    let inner = set.strip_prefix('[')?.strip_suffix(']')?;
    if inner.is_empty() {
        Some(Vec::new())
    } else {
        split_items(inner)
    }
}

/// Items separated by `, `, none of them empty or listed twice.
fn split_items(list: &str) -> Option<Vec<String>> {
    let mut items: Vec<String> = Vec::new();
    for item in list.split(", ") {
        if item.is_empty() || items.iter().any(|i| i == item) {
            return None;
        }
        items.push(item.to_owned());
    }
    Some(items)
}

/// `<name> (<key>: <value>)`: the name before the first ` (<key>: `.
fn split_node<'a>(rest: &'a str, keys: &[&str]) -> Option<(&'a str, usize, &'a str)> {
    let body = rest.strip_suffix(')')?;
    let (at, k) = keys
        .iter()
        .enumerate()
        .filter_map(|(k, key)| body.find(&format!(" ({key}: ")).map(|at| (at, k)))
        .min()?;
    let name = &body[..at];
    let value = &body[at + keys[k].len() + 4..];
    (!name.is_empty()).then_some((name, k, value))
}

fn parse_node(line: &str, n: usize) -> Result<RawNode, ParseError> {
    let (name, kind, pending) = if let Some(rest) = line.strip_prefix("Source: ") {
        let (name, _, topics) = split_node(rest, &["topics"])
            .ok_or_else(|| expected(n, "`Source: <name> (topics: <topics or pattern>)`", line))?;
        let topics = match parse_set(topics) {
            Some(names) => Topics::Names(names),
            None if topics.is_empty() => {
                return Err(expected(n, "topics `[a, b]` or a pattern", line));
            }
            None => Topics::Pattern(topics.to_owned()),
        };
        (name, NodeType::Source { topics }, vec![Arrow::Successors])
    } else if let Some(rest) = line.strip_prefix("Processor: ") {
        let (name, _, stores) = split_node(rest, &["stores"])
            .ok_or_else(|| expected(n, "`Processor: <name> (stores: [<stores>])`", line))?;
        let stores =
            parse_set(stores).ok_or_else(|| expected(n, "stores `[a, b]` or `[]`", line))?;
        (
            name,
            NodeType::Processor { stores },
            vec![Arrow::Successors, Arrow::Predecessors],
        )
    } else if let Some(rest) = line.strip_prefix("Sink: ") {
        let (name, k, target) =
            split_node(rest, &["topic", "extractor class"]).ok_or_else(|| {
                expected(
                    n,
                    "`Sink: <name> (topic: <topic>)` or `(extractor class: <class>)`",
                    line,
                )
            })?;
        let destination = if k == 0 {
            Destination::Topic(target.to_owned())
        } else {
            Destination::Extractor(target.to_owned())
        };
        (
            name,
            NodeType::Sink { destination },
            vec![Arrow::Predecessors],
        )
    } else {
        return Err(match line.split_once(": ") {
            Some((kind, _))
                if !kind.is_empty() && kind.chars().all(|c| c.is_alphanumeric() || c == '-') =>
            {
                ParseError::UnknownNodeKind {
                    line: n,
                    kind: kind.to_owned(),
                }
            }
            _ => expected(n, "a node, an arrow line or `Sub-topology: <id>`", line),
        });
    };
    Ok(RawNode {
        node: Node {
            name: name.to_owned(),
            kind,
            successors: Vec::new(),
            predecessors: Vec::new(),
        },
        line: n,
        successors_line: n,
        predecessors_line: n,
        pending,
    })
}

/// Checks the blocks read and builds the description.
fn assemble(blocks: Vec<RawBlock>) -> Result<TopologyDescription, ParseError> {
    let mut names: HashMap<String, ()> = HashMap::new();
    let mut ids: HashMap<usize, ()> = HashMap::new();
    let mut description = TopologyDescription::default();
    for block in blocks {
        if ids.insert(block.id, ()).is_some() {
            return Err(ParseError::DuplicateId {
                line: block.line,
                id: block.id,
            });
        }
        for raw in &block.nodes {
            if names.insert(raw.node.name.clone(), ()).is_some() {
                return Err(ParseError::DuplicateNode {
                    line: raw.line,
                    name: raw.node.name.clone(),
                });
            }
        }
        if block.global {
            description.global_stores.push(global_store(block)?);
        } else {
            check_links(&block.nodes)?;
            description.subtopologies.push(Subtopology {
                id: block.id,
                nodes: block.nodes.into_iter().map(|raw| raw.node).collect(),
            });
        }
    }
    description.subtopologies.sort_by_key(|s| s.id);
    description.global_stores.sort_by_key(|g| g.id);
    Ok(description)
}

/// A global store block: a source of one topic, forwarding to a
/// processor of one store, which forwards nowhere.
fn global_store(block: RawBlock) -> Result<GlobalStore, ParseError> {
    const SHAPE: &str = "a global store's source of one topic and its processor of one store";
    let mut nodes = block.nodes.into_iter();
    let (Some(source), Some(processor)) = (nodes.next(), nodes.next()) else {
        return Err(ParseError::Expected {
            line: block.line,
            expected: SHAPE,
            found: "fewer than two nodes".to_owned(),
        });
    };
    if let Some(extra) = nodes.next() {
        return Err(ParseError::Expected {
            line: extra.line,
            expected: "`Sub-topology: <id>` (a global store has two nodes)",
            found: quoted(&extra.node.name),
        });
    }
    let topic = match &source.node.kind {
        NodeType::Source {
            topics: Topics::Names(topics),
        } if topics.len() == 1 => topics[0].clone(),
        _ => {
            return Err(ParseError::Expected {
                line: source.line,
                expected: SHAPE,
                found: quoted(&source.node.name),
            });
        }
    };
    let store = match &processor.node.kind {
        NodeType::Processor { stores } if stores.len() == 1 => stores[0].clone(),
        _ => {
            return Err(ParseError::Expected {
                line: processor.line,
                expected: SHAPE,
                found: quoted(&processor.node.name),
            });
        }
    };
    if source.node.successors != [processor.node.name.clone()] {
        return Err(ParseError::Expected {
            line: source.successors_line,
            expected: "the global store's processor as the only successor",
            found: quoted(&source.node.successors.join(", ")),
        });
    }
    if !processor.node.successors.is_empty() {
        return Err(ParseError::Expected {
            line: processor.successors_line,
            expected: "`--> none` (a global store's processor forwards nowhere)",
            found: quoted(&processor.node.successors.join(", ")),
        });
    }
    if processor.node.predecessors != [source.node.name.clone()] {
        return Err(ParseError::Expected {
            line: processor.predecessors_line,
            expected: "the global store's source as the only predecessor",
            found: quoted(&processor.node.predecessors.join(", ")),
        });
    }
    Ok(GlobalStore {
        id: block.id,
        source: source.node.name,
        topic,
        processor: processor.node.name,
        store,
    })
}

/// Every name listed is a node of the sub-topology that lists the node
/// back, and the successor links have no cycle.
fn check_links(nodes: &[RawNode]) -> Result<(), ParseError> {
    let index: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, raw)| (raw.node.name.as_str(), i))
        .collect();
    let mut graph = DiGraph::<usize, ()>::with_capacity(nodes.len(), nodes.len());
    let ids: Vec<_> = (0..nodes.len()).map(|i| graph.add_node(i)).collect();
    let lists = |raw: &'_ RawNode| {
        [
            (
                raw.node.successors.clone(),
                raw.successors_line,
                "successor",
            ),
            (
                raw.node.predecessors.clone(),
                raw.predecessors_line,
                "predecessor",
            ),
        ]
    };
    // Names that match no node first: they explain one-way links too.
    for raw in nodes {
        for (list, line, _) in lists(raw) {
            if let Some(other) = list.iter().find(|o| !index.contains_key(o.as_str())) {
                return Err(ParseError::DanglingReference {
                    line,
                    node: raw.node.name.clone(),
                    reference: other.clone(),
                });
            }
        }
    }
    for (i, raw) in nodes.iter().enumerate() {
        for (list, line, relation) in lists(raw) {
            for other in &list {
                let Some(&j) = index.get(other.as_str()) else {
                    continue;
                };
                let back = if relation == "successor" {
                    &nodes[j].node.predecessors
                } else {
                    &nodes[j].node.successors
                };
                if !back.contains(&raw.node.name) {
                    return Err(ParseError::OneWayLink {
                        line,
                        node: raw.node.name.clone(),
                        other: other.clone(),
                        relation,
                    });
                }
                if relation == "successor" {
                    graph.add_edge(ids[i], ids[j], ());
                }
            }
        }
    }
    toposort(&graph, None).map(|_| ()).map_err(|cycle| {
        let raw = &nodes[graph[cycle.node_id()]];
        ParseError::Cycle {
            line: raw.line,
            node: raw.node.name.clone(),
        }
    })
}

/// `Debug` shows the message (as `Display` does), so that a test or
/// `main` returning `Result<(), Box<dyn Error>>` prints what went wrong and
/// what to do; match on the variants for the structure.
impl std::fmt::Debug for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        match parse(text) {
            Ok(d) => panic!("parsed: {d:?}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn errors_name_the_line_and_what_was_expected() {
        assert_eq!(
            err("Topology"),
            "line 1: expected `Topologies:`, found `Topology`"
        );
        assert_eq!(
            err("Topologies:\n   Sub-topology: x\n"),
            "line 2: expected a sub-topology id, found `Sub-topology: x`"
        );
        assert_eq!(
            err("Topologies:\n   Sub-topology: 0\n    Source: s (topics: [t])\n"),
            "line 4: expected a `-->` line, found end of text"
        );
        assert_eq!(
            err("Topologies:\n   Sub-topology: 0\n    Source: s (topics: [t])\n      --> p\n"),
            "line 4: `s` names `p`, which is not a node of its sub-topology"
        );
        assert_eq!(
            err("Topologies:\n    Source: s (topics: [t])\n"),
            "line 2: expected `Sub-topology: <id>`, found `Source: s (topics: [t])`"
        );
        assert_eq!(
            err("Topologies:\n  Sub-topology: 0\n    Processor: p (stores: [])\n      <-- none\n"),
            "line 4: expected a `-->` line, found `<-- none`"
        );
    }

    #[test]
    fn cycles_are_errors() {
        let text = "Topologies:\n   Sub-topology: 0\n\
                    Processor: a (stores: [])\n --> b\n <-- b\n\
                    Processor: b (stores: [])\n --> a\n <-- a\n";
        assert_eq!(err(text), "line 6: node `b` is on a cycle");
    }

    #[test]
    fn one_way_links_are_errors() {
        let text = "Topologies:\n   Sub-topology: 0\n\
                    Source: a (topics: [t])\n --> b\n\
                    Processor: b (stores: [])\n --> none\n <-- none\n";
        assert_eq!(
            err(text),
            "line 4: `a` lists `b` as its successor, but `b` does not list `a` back"
        );
    }
}
