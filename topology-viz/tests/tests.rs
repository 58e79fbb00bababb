//! `topology-viz`'s integration tests: the command on real input (`cli`),
//! the input handling against anything (`inputs`), and the HTML page in
//! headless Chromium (`browser`).

use std::io::Write;
use std::process::{Command, Output, Stdio};

mod browser;
mod cli;
mod inputs;

/// What `topology.describe()` printed in a Java program (Kafka 4.4.0's
/// text for `compat/golden/repartition_unnamed.json`).
pub(crate) const JAVA: &str = "Topologies:
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
      --> KSTREAM-MAPVALUES-0000000006
    Processor: KSTREAM-MAPVALUES-0000000006 (stores: [])
      --> KSTREAM-SINK-0000000007
      <-- KSTREAM-SOURCE-0000000005
    Sink: KSTREAM-SINK-0000000007 (topic: out)
      <-- KSTREAM-MAPVALUES-0000000006

";

/// Kafka 4.4.0's text for `compat/golden/repartition_mark_after_table_and_global_joins.json`:
/// four sub-topologies, one of them a global store's, stores, and
/// repartition topics between them.
pub(crate) const JOINS: &str = "Topologies:
   Sub-topology: 0
    Source: KSTREAM-SOURCE-0000000010 (topics: [KSTREAM-KEY-SELECT-0000000007-repartition])
      --> KSTREAM-JOIN-0000000011
    Processor: KSTREAM-JOIN-0000000011 (stores: [names-STATE-STORE-0000000000])
      --> KSTREAM-AGGREGATE-0000000012
      <-- KSTREAM-SOURCE-0000000010
    Processor: KSTREAM-AGGREGATE-0000000012 (stores: [joined])
      --> KTABLE-TOSTREAM-0000000013
      <-- KSTREAM-JOIN-0000000011
    Source: KSTREAM-SOURCE-0000000001 (topics: [names])
      --> KTABLE-SOURCE-0000000002
    Processor: KTABLE-TOSTREAM-0000000013 (stores: [])
      --> KSTREAM-SINK-0000000014
      <-- KSTREAM-AGGREGATE-0000000012
    Sink: KSTREAM-SINK-0000000014 (topic: out-joined)
      <-- KTABLE-TOSTREAM-0000000013
    Processor: KTABLE-SOURCE-0000000002 (stores: [names-STATE-STORE-0000000000])
      --> none
      <-- KSTREAM-SOURCE-0000000001

  Sub-topology: 1 for global store (will not generate tasks)
    Source: KSTREAM-SOURCE-0000000004 (topics: [colors])
      --> KTABLE-SOURCE-0000000005
    Processor: KTABLE-SOURCE-0000000005 (stores: [colors-STATE-STORE-0000000003])
      --> none
      <-- KSTREAM-SOURCE-0000000004
  Sub-topology: 2
    Source: KSTREAM-SOURCE-0000000006 (topics: [in])
      --> KSTREAM-KEY-SELECT-0000000007
    Processor: KSTREAM-KEY-SELECT-0000000007 (stores: [])
      --> KSTREAM-FILTER-0000000009, KSTREAM-LEFTJOIN-0000000015
      <-- KSTREAM-SOURCE-0000000006
    Processor: KSTREAM-LEFTJOIN-0000000015 (stores: [])
      --> global-repartition-filter
      <-- KSTREAM-KEY-SELECT-0000000007
    Processor: KSTREAM-FILTER-0000000009 (stores: [])
      --> KSTREAM-SINK-0000000008
      <-- KSTREAM-KEY-SELECT-0000000007
    Processor: global-repartition-filter (stores: [])
      --> global-repartition-sink
      <-- KSTREAM-LEFTJOIN-0000000015
    Sink: KSTREAM-SINK-0000000008 (topic: KSTREAM-KEY-SELECT-0000000007-repartition)
      <-- KSTREAM-FILTER-0000000009
    Sink: global-repartition-sink (topic: global-repartition)
      <-- global-repartition-filter

  Sub-topology: 3
    Source: global-repartition-source (topics: [global-repartition])
      --> KSTREAM-AGGREGATE-0000000016
    Processor: KSTREAM-AGGREGATE-0000000016 (stores: [global])
      --> KTABLE-TOSTREAM-0000000020
      <-- global-repartition-source
    Processor: KTABLE-TOSTREAM-0000000020 (stores: [])
      --> KSTREAM-SINK-0000000021
      <-- KSTREAM-AGGREGATE-0000000016
    Sink: KSTREAM-SINK-0000000021 (topic: out-global)
      <-- KTABLE-TOSTREAM-0000000020

";

/// Runs the command with `args` and `stdin`, with `PATH` replaced when
/// `path` is given.
pub(crate) fn run(args: &[&str], stdin: &[u8], path: Option<&str>) -> std::io::Result<Output> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_topology-viz"));
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(path) = path {
        command.env("PATH", path);
    }
    let mut child = command.spawn()?;
    if let Some(mut input) = child.stdin.take() {
        // The command may stop reading early (a refused option): not an error.
        let _ = input.write_all(stdin);
    }
    child.wait_with_output()
}

/// Bytes as text, for messages.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh directory for one test's files.
pub(crate) fn scratch(test: &str) -> std::io::Result<std::path::PathBuf> {
    let dir =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("topology-viz-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
