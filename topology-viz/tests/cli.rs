//! The `topology-viz` command on a description pasted from Java.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use topology_viz::{Error, Format, Renderer, render};

/// What `topology.describe()` printed in a Java program (Kafka 4.4.0's
/// text for `compat/golden/repartition_unnamed.json`), with a log line
/// before it, as pasted from a terminal.
const JAVA: &str = "14:02:11.532 [main] INFO Topology - here it is\n\
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
      --> KSTREAM-MAPVALUES-0000000006
    Processor: KSTREAM-MAPVALUES-0000000006 (stores: [])
      --> KSTREAM-SINK-0000000007
      <-- KSTREAM-SOURCE-0000000005
    Sink: KSTREAM-SINK-0000000007 (topic: out)
      <-- KSTREAM-MAPVALUES-0000000006

";

/// Runs the command with `args` and `stdin`, with `PATH` replaced when
/// `path` is given.
fn run(args: &[&str], stdin: &str, path: Option<&str>) -> std::io::Result<Output> {
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
        input.write_all(stdin.as_bytes())?;
    }
    child.wait_with_output()
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8_lossy(&bytes).into_owned()
}

fn graphviz_installed() -> bool {
    Command::new("dot")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn dot_from_standard_input() -> std::io::Result<()> {
    let out = run(&[], JAVA, None)?;
    assert!(out.status.success(), "{}", text(out.stderr));
    assert_snapshot!(text(out.stdout), @r##"
    digraph topology {
      graph [fontname="Helvetica", fontsize=11];
      node [fontname="Helvetica", fontsize=10];
      edge [fontname="Helvetica", fontsize=9];
      subgraph cluster_0 {
        label="Sub-topology: 0";
        style=rounded;
        labeljust=l;
        n0 [label="KSTREAM-SOURCE-0000000000", shape=invhouse, style=filled, fillcolor="#d5e8d4"];
        n1 [label="KSTREAM-KEY-SELECT-0000000001", shape=box, style="rounded,filled", fillcolor="#dae8fc"];
        n2 [label="KSTREAM-FILTER-0000000004", shape=box, style="rounded,filled", fillcolor="#dae8fc"];
        n3 [label="KSTREAM-SINK-0000000003", shape=house, style=filled, fillcolor="#ffe6cc"];
      }
      subgraph cluster_1 {
        label="Sub-topology: 1";
        style=rounded;
        labeljust=l;
        n6 [label="KSTREAM-SOURCE-0000000005", shape=invhouse, style=filled, fillcolor="#d5e8d4"];
        n7 [label="KSTREAM-MAPVALUES-0000000006", shape=box, style="rounded,filled", fillcolor="#dae8fc"];
        n8 [label="KSTREAM-SINK-0000000007", shape=house, style=filled, fillcolor="#ffe6cc"];
      }
      n4 [label="in", shape=box, style=filled, fillcolor="#eeeeee"];
      n5 [label="KSTREAM-REPARTITION-0000000002-repartition", shape=box, style=filled, fillcolor="#eeeeee"];
      n9 [label="out", shape=box, style=filled, fillcolor="#eeeeee"];
      n4 -> n0;
      n0 -> n1;
      n1 -> n2;
      n2 -> n3;
      n3 -> n5;
      n5 -> n6;
      n6 -> n7;
      n7 -> n8;
      n8 -> n9;
    }
    "##);
    Ok(())
}

#[test]
fn mermaid_from_a_file() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("topology-viz-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let input = dir.join("topology.txt");
    std::fs::write(&input, JAVA)?;
    let output = dir.join("topology.mmd");
    let out = run(
        &[
            input.to_str().ok_or("path")?,
            "-o",
            output.to_str().ok_or("path")?,
        ],
        "",
        None,
    )?;
    assert!(out.status.success(), "{}", text(out.stderr));
    let mermaid = std::fs::read_to_string(&output)?;
    std::fs::remove_dir_all(&dir)?;
    assert_snapshot!(mermaid, @r#"
    flowchart TB
        subgraph s0["Sub-topology: 0"]
            n0(["KSTREAM-SOURCE-0000000000"])
            n1("KSTREAM-KEY-SELECT-0000000001")
            n2("KSTREAM-FILTER-0000000004")
            n3[["KSTREAM-SINK-0000000003"]]
        end
        subgraph s1["Sub-topology: 1"]
            n6(["KSTREAM-SOURCE-0000000005"])
            n7("KSTREAM-MAPVALUES-0000000006")
            n8[["KSTREAM-SINK-0000000007"]]
        end
        n4[/"in"/]
        n5[/"KSTREAM-REPARTITION-0000000002-repartition"/]
        n9[/"out"/]
        n4 --> n0
        n0 --> n1
        n1 --> n2
        n2 --> n3
        n3 --> n5
        n5 --> n6
        n6 --> n7
        n7 --> n8
        n8 --> n9
    "#);
    Ok(())
}

#[test]
fn svg_without_graphviz() -> std::io::Result<()> {
    let out = run(&["--format", "svg"], JAVA, Some(""))?;
    assert!(out.status.success(), "{}", text(out.stderr));
    let svg = text(out.stdout);
    assert!(svg.contains("<svg "), "{svg}");
    for name in [
        "KSTREAM-SOURCE-0000000000",
        "KSTREAM-REPARTITION-0000000002-repartition",
        "KSTREAM-SINK-0000000007",
        "out",
    ] {
        assert!(svg.contains(name), "{name} missing");
    }
    Ok(())
}

#[test]
fn graphviz_asked_for_and_missing_is_a_clear_error() -> std::io::Result<()> {
    let out = run(
        &["--format", "svg", "--renderer", "graphviz"],
        JAVA,
        Some(""),
    )?;
    assert!(!out.status.success());
    let err = text(out.stderr);
    assert!(
        err.starts_with("error: standard input: the graphviz renderer needs Graphviz's `dot` program, which is not on PATH"),
        "{err}"
    );
    let out = run(&["--format", "png"], JAVA, Some(""))?;
    assert!(!out.status.success());
    assert!(text(out.stderr).contains("not on PATH"));
    Ok(())
}

#[test]
fn graphviz_draws_when_installed() -> Result<(), Error> {
    if !graphviz_installed() {
        eprintln!("graphviz is not installed: skipped");
        return Ok(());
    }
    let svg = render(JAVA, Format::Svg, Renderer::Graphviz)?;
    assert!(text(svg).contains("<title>cluster_1</title>"));
    let png = render(JAVA, Format::Png, Renderer::Graphviz)?;
    assert_eq!(&png[..4], b"\x89PNG");
    Ok(())
}

#[test]
fn errors_name_the_line() -> std::io::Result<()> {
    let broken = JAVA.replace("      <-- KSTREAM-MAPVALUES-0000000006", "      <-- nobody");
    let out = run(&["--format", "mermaid"], &broken, None)?;
    assert!(!out.status.success());
    assert_eq!(
        text(out.stderr),
        "error: standard input: not a topology description: line 22: `KSTREAM-SINK-0000000007` names `nobody`, which is not a node of its sub-topology\n"
    );
    let out = run(&[], "hello\n", None)?;
    assert!(text(out.stderr).contains("no line ends in `Topologies:`"));
    let out = run(&["--format", "png", "--renderer", "builtin"], JAVA, None)?;
    assert!(text(out.stderr).contains("PNG needs Graphviz"));
    Ok(())
}
