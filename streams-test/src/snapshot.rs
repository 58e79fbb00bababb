//! Snapshot tests of a topology's shape: [`assert_topology_snapshot!`](crate::assert_topology_snapshot)
//! keeps Kafka's `describe()` text of a topology in an [insta] snapshot,
//! so that a change to the graph (a node renamed, a repartition added, a
//! sub-topology split) shows up as a reviewable diff.
//!
//! The three forms are insta's: a file snapshot named after the test, a
//! named file snapshot, and an inline snapshot that `cargo insta review`
//! (or `INSTA_UPDATE=always`) fills in.
//!
//! ```
//! use streams_core::StreamsBuilder;
//! use streams_test::assert_topology_snapshot;
//!
//! let builder = StreamsBuilder::new();
//! builder.stream::<String, String>("in").filter(|_, v| !v.is_empty()).to("out");
//! assert_topology_snapshot!(builder.build()?, @r"
//! Topologies:
//!    Sub-topology: 0
//!     Source: KSTREAM-SOURCE-0000000000 (topics: [in])
//!       --> KSTREAM-FILTER-0000000001
//!     Processor: KSTREAM-FILTER-0000000001 (stores: [])
//!       --> KSTREAM-SINK-0000000002
//!       <-- KSTREAM-SOURCE-0000000000
//!     Sink: KSTREAM-SINK-0000000002 (topic: out)
//!       <-- KSTREAM-FILTER-0000000001
//! ");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [insta]: https://insta.rs

use streams_core::Topology;
use streams_core::topology::TopologyDescription;

#[doc(hidden)]
pub use insta as __insta;

/// What [`assert_topology_snapshot!`](crate::assert_topology_snapshot) takes: a [`Topology`], its
/// [`TopologyDescription`], or a reference to either.
pub trait Describe {
    /// Kafka's `describe()` text.
    fn describe_text(&self) -> String;
}

impl Describe for Topology {
    fn describe_text(&self) -> String {
        self.describe().to_string()
    }
}

impl Describe for TopologyDescription {
    fn describe_text(&self) -> String {
        self.to_string()
    }
}

impl<T: Describe + ?Sized> Describe for &T {
    fn describe_text(&self) -> String {
        (**self).describe_text()
    }
}

/// Asserts that a topology's `describe()` text matches its insta snapshot.
///
/// - `assert_topology_snapshot!(topology)`: a file snapshot named after
///   the test;
/// - `assert_topology_snapshot!("name", topology)`: a named file snapshot;
/// - `assert_topology_snapshot!(topology, @"...")`: an inline snapshot.
///
/// `topology` is anything [`Describe`]: a `Topology` or a
/// `TopologyDescription`. A file snapshot's header records the
/// expression as `expression: topology.describe()`. Insta compares with
/// trailing whitespace
/// trimmed; for a byte-exact comparison with Kafka's text, compare
/// `topology.describe().to_string()` with it.
///
/// # Panics
/// When the text differs from the snapshot (insta writes the new one for
/// review), as insta's `assert_snapshot!` does.
///
/// ```
/// use streams_core::StreamsBuilder;
/// use streams_test::assert_topology_snapshot;
///
/// let builder = StreamsBuilder::new();
/// builder.stream::<String, String>("in").to("out");
/// let description = builder.build()?.describe();
/// assert_topology_snapshot!(&description, @r"
/// Topologies:
///    Sub-topology: 0
///     Source: KSTREAM-SOURCE-0000000000 (topics: [in])
///       --> KSTREAM-SINK-0000000001
///     Sink: KSTREAM-SINK-0000000001 (topic: out)
///       <-- KSTREAM-SOURCE-0000000000
/// ");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[macro_export]
macro_rules! assert_topology_snapshot {
    ($topology:expr, @$snapshot:literal $(,)?) => {
        $crate::snapshot::__insta::assert_snapshot!(
            $crate::snapshot::Describe::describe_text(&$topology),
            @$snapshot
        )
    };
    // The file forms give insta the expression to record in the file's
    // header (`expression: topology.describe()`), not this macro's own
    // text: insta's `(name, value, debug_expr)` form, with no name for a
    // snapshot named after the test.
    ($name:literal, $topology:expr $(,)?) => {
        $crate::snapshot::__insta::assert_snapshot!(
            $name,
            $crate::snapshot::Describe::describe_text(&$topology),
            ::core::concat!(::core::stringify!($topology), ".describe()")
        )
    };
    ($topology:expr $(,)?) => {
        $crate::snapshot::__insta::assert_snapshot!(
            ::core::option::Option::<&str>::None,
            $crate::snapshot::Describe::describe_text(&$topology),
            ::core::concat!(::core::stringify!($topology), ".describe()")
        )
    };
}

#[cfg(test)]
mod tests {
    use streams_core::StreamsBuilder;

    /// The file forms, and the header insta writes for them: the
    /// expression given, not the macro's own text.
    #[test]
    fn file_snapshots_record_the_topology_expression() -> Result<(), Box<dyn std::error::Error>> {
        let builder = StreamsBuilder::new();
        builder.stream::<String, String>("in").to("out");
        let topology = builder.build()?;
        assert_topology_snapshot!("in_to_out", topology);
        assert_topology_snapshot!(&topology);
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/snapshots");
        for (file, expression) in [
            (
                "streams_test__snapshot__tests__in_to_out.snap",
                "topology.describe()",
            ),
            (
                "streams_test__snapshot__tests__file_snapshots_record_the_topology_expression.snap",
                // Quoted: YAML reads a leading `&` as an anchor.
                "\"&topology.describe()\"",
            ),
        ] {
            let snap = std::fs::read_to_string(dir.join(file))?;
            let header = format!(
                "---\nsource: streams-test/src/snapshot.rs\nexpression: {expression}\n---\nTopologies:\n"
            );
            assert!(snap.starts_with(&header), "{file}:\n{snap}");
        }
        Ok(())
    }

    /// The inline form, filled in by `cargo insta`.
    #[test]
    fn a_repartition_splits_the_topology() -> streams_core::Result<()> {
        let builder = StreamsBuilder::new();
        builder
            .stream::<String, String>("in")
            .select_key(|_, v| v.clone())
            .repartition()
            .to("out");
        assert_topology_snapshot!(builder.build()?, @"
        Topologies:
           Sub-topology: 0
            Source: KSTREAM-SOURCE-0000000000 (topics: [in])
              --> KSTREAM-KEY-SELECT-0000000001
            Processor: KSTREAM-KEY-SELECT-0000000001 (stores: [])
              --> KSTREAM-FILTER-0000000004
              <-- KSTREAM-SOURCE-0000000000
            Processor: KSTREAM-FILTER-0000000004 (stores: [])
              --> KSTREAM-SINK-0000000003
              <-- KSTREAM-KEY-SELECT-0000000001
            Sink: KSTREAM-SINK-0000000003 (topic: KSTREAM-REPARTITION-0000000002-repartition)
              <-- KSTREAM-FILTER-0000000004

          Sub-topology: 1
            Source: KSTREAM-SOURCE-0000000005 (topics: [KSTREAM-REPARTITION-0000000002-repartition])
              --> KSTREAM-SINK-0000000006
            Sink: KSTREAM-SINK-0000000006 (topic: out)
              <-- KSTREAM-SOURCE-0000000005
        ");
        Ok(())
    }
}
