//! Where windows close: Kafka's `GraphGraceSearchUtil`. A windowed
//! aggregation records its grace period on the topology, by the name of
//! its store (`Topology::set_window_grace`); `suppress(until_window_closes(..))`
//! walks up from its parent to the windowed aggregation and takes that
//! grace period. An operator added between them needs to do nothing.

use crate::error::{Result, StreamsError};
use crate::topology::Topology;

/// The grace period of the windowed aggregation that `node` is (or is
/// connected to the store of), if it is one.
fn grace_of(topology: &Topology, node: usize) -> Option<i64> {
    let def = topology.nodes().get(node)?;
    def.stores
        .iter()
        .find_map(|store| topology.window_grace(store))
}

/// The grace period that closes windows at `node`: that of the windowed
/// aggregation upstream of it (the largest, over several parents), Kafka's
/// `findAndVerifyWindowGrace`.
pub(crate) fn find_window_grace(topology: &Topology, node: &str) -> Result<i64> {
    fn search(
        topology: &Topology,
        at: &str,
        node: usize,
        chain: &str,
        depth: usize,
    ) -> Result<i64> {
        if let Some(grace) = grace_of(topology, node) {
            return Ok(grace);
        }
        let Some(def) = topology.nodes().get(node) else {
            return Err(not_windowed(at, chain));
        };
        let chain = if chain.is_empty() {
            def.name.clone()
        } else {
            format!("{}->{chain}", def.name)
        };
        if def.parents.is_empty() || depth > topology.nodes().len() {
            return Err(not_windowed(at, &chain));
        }
        let mut inherited = -1;
        for &parent in &def.parents {
            inherited = inherited.max(search(topology, at, parent, &chain, depth + 1)?);
        }
        Ok(inherited)
    }
    let index = topology
        .nodes()
        .iter()
        .position(|n| n.name == node)
        .ok_or_else(|| not_windowed(node, node))?;
    search(topology, node, index, "", 0)
}

fn not_windowed(node: &str, chain: &str) -> StreamsError {
    StreamsError::NotWindowed {
        node: node.to_owned(),
        chain: chain.to_owned(),
    }
}
