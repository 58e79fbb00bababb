//! The `topology-viz` command on a description pasted from Java, from a
//! terminal, a log, a file in another encoding; what it refuses, and how.

use std::process::Command;

use insta::assert_snapshot;
use pretty_assertions::assert_eq;
use topology_viz::{Error, Format, Renderer, render};

use crate::{JAVA, run, scratch, text};

/// [`JAVA`] as a Java program's log prints it: the logger's prefix on
/// the `Topologies:` line, log lines before and after.
fn logged() -> String {
    format!(
        "14:02:11.530 [main] INFO App - starting\n14:02:11.532 [main] INFO App - {JAVA}14:02:11.600 [main] INFO KafkaStreams - State transition from CREATED to REBALANCING\n"
    )
}

fn graphviz_installed() -> bool {
    Command::new("dot")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn dot_from_standard_input() -> std::io::Result<()> {
    let out = run(&[], logged().as_bytes(), None)?;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_snapshot!(text(&out.stdout), @r##"
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
    let dir = scratch("mermaid")?;
    let input = dir.join("topology.txt");
    std::fs::write(&input, JAVA)?;
    let output = dir.join("topology.mmd");
    let out = run(
        &[
            input.to_str().ok_or("path")?,
            "-o",
            output.to_str().ok_or("path")?,
        ],
        b"",
        None,
    )?;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mermaid = std::fs::read_to_string(&output)?;
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
    let out = run(&["--format", "svg"], JAVA.as_bytes(), Some(""))?;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let svg = text(&out.stdout);
    assert!(svg.starts_with("<svg "), "{svg}");
    for name in [
        "KSTREAM-SOURCE-0000000000",
        "KSTREAM-REPARTITION-0000000002-repartition",
        "KSTREAM-SINK-0000000007",
        "out",
    ] {
        assert!(
            svg.contains(&format!("data-name=\"{name}\"")),
            "{name} missing"
        );
    }
    // Two boxes, titled as Kafka titles them; wrapped labels.
    assert!(svg.contains(">Sub-topology: 0</text>") && svg.contains(">Sub-topology: 1</text>"));
    assert!(svg.contains("<tspan x=") && svg.contains(">0000000002-repartition</tspan>"));
    Ok(())
}

#[test]
fn graphviz_asked_for_and_missing_is_a_clear_error() -> std::io::Result<()> {
    let out = run(
        &["--format", "svg", "--renderer", "graphviz"],
        JAVA.as_bytes(),
        Some(""),
    )?;
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.starts_with("error: standard input: the graphviz renderer needs Graphviz's `dot` program, which is not on PATH"),
        "{err}"
    );
    let out = run(
        &["--format", "png", "-o", "/dev/null"],
        JAVA.as_bytes(),
        Some(""),
    )?;
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("not on PATH"));
    assert_eq!(text(&out.stderr).lines().count(), 1);
    Ok(())
}

#[test]
fn graphviz_draws_when_installed() -> Result<(), Error> {
    if !graphviz_installed() {
        eprintln!("graphviz is not installed: skipped");
        return Ok(());
    }
    let svg = render(JAVA, Format::Svg, Renderer::Graphviz)?;
    assert!(text(&svg).contains("<title>cluster_1</title>"));
    let png = render(JAVA, Format::Png, Renderer::Graphviz)?;
    assert_eq!(&png[..4], b"\x89PNG");
    Ok(())
}

#[test]
fn errors_name_the_line() -> std::io::Result<()> {
    let broken = JAVA.replace("      <-- KSTREAM-MAPVALUES-0000000006", "      <-- nobody");
    let broken = format!("a log line\n{broken}");
    let out = run(&["--format", "mermaid"], broken.as_bytes(), None)?;
    assert!(!out.status.success());
    assert_eq!(
        text(&out.stderr),
        "error: standard input: not a topology description: line 22: `KSTREAM-SINK-0000000007` names `nobody`, which is not a node of its sub-topology\n"
    );
    let out = run(&[], b"hello\n", None)?;
    assert_eq!(
        text(&out.stderr),
        "error: standard input: not a topology description: no line ends in `Topologies:` (paste the whole text that describe() prints)\n"
    );
    let out = run(
        &[
            "--format",
            "png",
            "--renderer",
            "builtin",
            "-o",
            "/dev/null",
        ],
        JAVA.as_bytes(),
        None,
    )?;
    assert_eq!(
        text(&out.stderr),
        "error: standard input: PNG needs Graphviz (`--renderer graphviz`); the built-in renderer writes SVG and HTML\n"
    );
    Ok(())
}

/// Two descriptions, as a log of two runs holds them.
fn two() -> String {
    let second = "Topologies:\n   Sub-topology: 0\n    Source: s (topics: [a])\n      --> none\n";
    format!("run 1: {JAVA}run 2: {second}")
}

#[test]
fn several_topologies_in_one_input() -> std::io::Result<()> {
    // DOT: a graph each, one after the other (Graphviz reads them all).
    let out = run(&[], two().as_bytes(), None)?;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).matches("digraph topology {").count(), 2);
    // SVG and HTML: all of them, under a heading each.
    let out = run(&["-f", "svg"], two().as_bytes(), None)?;
    let svg = text(&out.stdout);
    assert!(
        svg.contains(">Topology 1 of 2, from line 1</text>"),
        "{svg}"
    );
    assert!(
        svg.contains(">Topology 2 of 2, from line 23</text>"),
        "{svg}"
    );
    let out = run(&["--html"], two().as_bytes(), None)?;
    let html = text(&out.stdout);
    assert!(html.contains(r#"<h2 class="part">Topology 2 of 2, from line 23</h2>"#));
    assert!(html.contains(r#"id="t1-v0" data-name="s""#));
    // Mermaid draws one: which, the command asks.
    let out = run(&["-f", "mermaid"], two().as_bytes(), None)?;
    assert_eq!(
        text(&out.stderr),
        "error: standard input: the input holds 2 topologies and mermaid draws one at a time: choose one (`--topology N`), or write svg, html or dot, which show them all\n"
    );
    let out = run(
        &["-f", "mermaid", "--topology", "2"],
        two().as_bytes(),
        None,
    )?;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_snapshot!(text(&out.stdout), @r#"
    flowchart TB
        subgraph s0["Sub-topology: 0"]
            n0(["s"])
        end
        n1[/"a"/]
        n1 --> n0
    "#);
    let out = run(&["--topology", "3"], two().as_bytes(), None)?;
    assert_eq!(
        text(&out.stderr),
        "error: standard input: there is no topology 3: the input holds 2, numbered from 1\n"
    );
    Ok(())
}

#[test]
fn html_page_from_a_file() -> Result<(), Box<dyn std::error::Error>> {
    let dir = scratch("html")?;
    let input = dir.join("joins.txt");
    std::fs::write(&input, crate::JOINS)?;
    let output = dir.join("joins.html");
    let (input, output) = (
        input.to_str().ok_or("path")?,
        output.to_str().ok_or("path")?,
    );
    let out = run(&[input, "--html", "-o", output], b"", None)?;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = std::fs::read_to_string(output)?;
    assert!(page.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    // Nothing from the network: no links, no sources, no imports.
    for outside in ["<link", " src=", "@import", "url(http", "fetch("] {
        assert!(!page.contains(outside), "{outside}");
    }
    assert!(page.contains("4 sub-topologies · 20 nodes · 7 topics · 4 stores"));
    assert!(page.contains(
        r#"<li data-target="t0-v15"><span class="name">colors-STATE-STORE-0000000003</span> <span class="badge global">global</span>"#
    ), "{page}");
    // The extension decides too, and --html with another --format is refused.
    let named = dir.join("joins.htm");
    let out = run(&[input, "-o", named.to_str().ok_or("path")?], b"", None)?;
    assert!(out.status.success() && std::fs::read_to_string(named)?.starts_with("<!DOCTYPE html>"));
    let out = run(&[input, "--html", "-f", "svg"], b"", None)?;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot be used with"));
    Ok(())
}

#[test]
fn an_output_it_cannot_write_is_refused() -> Result<(), Box<dyn std::error::Error>> {
    let dir = scratch("extensions")?;
    let jpg = dir.join("out.jpg");
    let jpg = jpg.to_str().ok_or("path")?;
    let out = run(&["-o", jpg], JAVA.as_bytes(), None)?;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: cannot write `.jpg` files ({jpg}): name the output .dot, .gv, .mmd, .svg, .png or .html, or give --format\n"
        )
    );
    assert!(!std::path::Path::new(jpg).exists(), "nothing written");
    // Named for one format, asked for another.
    let svg = dir.join("out.svg");
    let svg = svg.to_str().ok_or("path")?;
    let out = run(&["-o", svg, "-f", "dot"], JAVA.as_bytes(), None)?;
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {svg} is named for svg but dot was asked for: rename the output, or leave out --format\n"
        )
    );
    // --format says what to write into a name that says nothing.
    let txt = dir.join("out.txt");
    let out = run(
        &["-o", txt.to_str().ok_or("path")?, "-f", "dot"],
        JAVA.as_bytes(),
        None,
    )?;
    assert!(out.status.success());
    assert!(std::fs::read_to_string(&txt)?.starts_with("digraph topology {"));
    // No extension at all: DOT, as on standard output.
    let bare = dir.join("topology");
    let out = run(&["-o", bare.to_str().ok_or("path")?], JAVA.as_bytes(), None)?;
    assert!(out.status.success());
    assert!(std::fs::read_to_string(&bare)?.starts_with("digraph topology {"));
    Ok(())
}

#[test]
fn bad_input_is_one_line_and_a_failure() -> Result<(), Box<dyn std::error::Error>> {
    let dir = scratch("bad-input")?;
    // Not UTF-8: Latin-1 bytes in a topic name.
    let latin1 = dir.join("latin1.txt");
    std::fs::write(
        &latin1,
        b"Topologies:\n   Sub-topology: 0\n    Source: s (topics: [caf\xe9])\n",
    )?;
    let latin1 = latin1.to_str().ok_or("path")?;
    let out = run(&[latin1], b"", None)?;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {latin1}: not UTF-8 text (byte 58 is not): save the description as UTF-8, for example with `iconv -t UTF-8`\n"
        )
    );
    // UTF-16 with a byte order mark (PowerShell's `>`) is read.
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend(JAVA.encode_utf16().flat_map(u16::to_le_bytes));
    let out = run(&["-f", "mermaid"], &utf16, None)?;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("flowchart TB\n"));
    // A file that is not there.
    let out = run(&["/nonexistent/topology.txt"], b"", None)?;
    assert_eq!(
        text(&out.stderr),
        "error: cannot read /nonexistent/topology.txt: no such file or directory\n"
    );
    // A log line alone.
    let out = run(&[], b"14:02:11.532 [main] INFO App - started\n", None)?;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stderr).lines().count(), 1);
    Ok(())
}

#[test]
fn a_closed_pipe_ends_quietly() -> std::io::Result<()> {
    // `topology-viz | head -c 1`: the reader is gone before anything is
    // written, so the first write fails with a broken pipe.
    let mut child = Command::new(env!("CARGO_BIN_EXE_topology-viz"))
        .args(["--format", "svg"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    drop(child.stdout.take());
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        stdin.write_all(JAVA.as_bytes())?;
    }
    let out = child.wait_with_output()?;
    assert_eq!(text(&out.stderr), "");
    assert!(out.status.success());
    Ok(())
}

#[test]
fn png_is_not_written_to_a_terminal() -> std::io::Result<()> {
    // `script` (util-linux) gives the command a terminal.
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!(
            "png_is_not_written_to_a_terminal: skipped, `script` (util-linux) is not installed"
        );
        return Ok(());
    }
    let command = format!(
        "printf 'Topologies:\\n' | {} -f png",
        env!("CARGO_BIN_EXE_topology-viz")
    );
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()?;
    let screen = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{screen}");
    assert!(
        screen.contains("error: PNG is binary and standard output is a terminal: write it to a file (`-o topology.png`) or redirect standard output"),
        "{screen}"
    );
    Ok(())
}

#[test]
fn a_large_topology_is_drawn_quickly() -> std::io::Result<()> {
    // 400 processors in a chain with links 7 and 23 steps back: thousands
    // of dummy nodes on long edges.
    let n = 400;
    let mut input = String::from(
        "Topologies:\n   Sub-topology: 0\n    Source: src (topics: [in])\n      --> p0\n",
    );
    for i in 0..n {
        let succ: Vec<String> = [1, 7, 23]
            .iter()
            .filter(|&&d| i + d < n)
            .map(|d| format!("p{}", i + d))
            .chain((i == n - 1).then(|| "k".to_owned()))
            .collect();
        let pred: Vec<String> = [1, 7, 23]
            .iter()
            .filter(|&&d| i >= d)
            .map(|d| format!("p{}", i - d))
            .collect();
        let pred = if pred.is_empty() {
            "src".to_owned()
        } else {
            pred.join(", ")
        };
        input.push_str(&format!(
            "    Processor: p{i} (stores: [])\n      --> {}\n      <-- {pred}\n",
            succ.join(", ")
        ));
    }
    input.push_str(&format!("    Sink: k (topic: out)\n      <-- p{}\n", n - 1));
    let start = std::time::Instant::now();
    let out = run(&["-f", "svg"], input.as_bytes(), None)?;
    let took = start.elapsed();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(took < std::time::Duration::from_secs(20), "{took:?}");
    Ok(())
}
