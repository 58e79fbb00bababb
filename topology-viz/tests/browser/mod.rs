//! The HTML page and the SVG picture in headless Chromium, as a reader
//! sees them: every node's name shown whole, inside the window, inside its
//! shape and over no other; a click lights the node's edges and
//! neighbours; the wheel zooms, a drag pans, the find box selects;
//! screenshots kept under the target directory to look at.
//!
//! Chromium is Debian's `chromium` (or `TOPOLOGY_VIZ_CHROMIUM`). Without
//! it these tests say so in one line and pass, except in CI (`CI` set),
//! where they fail: `topology-viz/tests/browser/run` installs it and runs
//! them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use topology_viz::{Format, Renderer, render};

use crate::{JOINS, scratch, text};

const PROBE: &str = include_str!("probe.js");

/// The window: a laptop's screen.
const WINDOW: (u32, u32) = (1440, 900);

/// The Chromium to run, if there is one.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("TOPOLOGY_VIZ_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
    .find(|candidate| candidate.is_file())
}

/// Whether this is a CI run (`CI` set to anything but `false` or `0`).
fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// The Chromium to run; `None` (the test skips, saying so) outside CI
/// when there is none.
///
/// # Panics
/// In CI when there is none.
fn chromium_or_skip(test: &str) -> Option<PathBuf> {
    let found = chromium();
    if found.is_none() {
        assert!(
            !in_ci(),
            "{test}: chromium is not installed and CI is set: run topology-viz/tests/browser/run, which installs Debian's chromium"
        );
        eprintln!(
            "{test}: skipped, chromium is not installed (apt-get install chromium, or set TOPOLOGY_VIZ_CHROMIUM)"
        );
    }
    found
}

/// Runs headless Chromium on `page` with `args`, in a profile of its own,
/// for at most a minute; returns what it printed.
fn headless(chromium: &Path, dir: &Path, page: &Path, args: &[String]) -> Result<String, String> {
    let profile = dir.join("profile");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            &format!("--window-size={},{}", WINDOW.0, WINDOW.1),
            &format!("--user-data-dir={}", profile.display()),
        ])
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", chromium.display()))?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() > Duration::from_secs(60) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("chromium did not finish within a minute".to_owned());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(e.to_string()),
        }
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "chromium failed ({}): {}",
            out.status,
            text(&out.stderr)
        ));
    }
    Ok(text(&out.stdout))
}

/// What the probe wrote into the dumped page, unescaped.
fn probe_lines(dom: &str) -> Result<Vec<Vec<String>>, String> {
    let start = dom
        .rfind("<pre id=\"probe\">")
        .ok_or_else(|| format!("no probe in the page: {dom}"))?;
    let body = &dom[start + "<pre id=\"probe\">".len()..];
    let body = &body[..body.find("</pre>").ok_or("no end of the probe")?];
    Ok(body
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
        .lines()
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect())
}

/// Every name the picture must show: nodes, topics and stores.
fn names(description: &str) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let d = topology_viz::parse(description)?;
    let mut names: Vec<String> = Vec::new();
    for sub in d.subtopologies() {
        for node in sub.nodes() {
            names.push(node.name().to_owned());
            match node.kind() {
                streams_core::topology::NodeType::Source { topics } => match topics {
                    streams_core::Topics::Names(t) => names.extend(t.iter().cloned()),
                    streams_core::Topics::Pattern(p) => names.push(p.clone()),
                },
                streams_core::topology::NodeType::Processor { stores } => {
                    names.extend(stores.iter().cloned());
                }
                streams_core::topology::NodeType::Sink { destination } => match destination {
                    streams_core::topology::Destination::Topic(t) => names.push(t.clone()),
                    streams_core::topology::Destination::Extractor(e) => names.push(e.clone()),
                },
            }
        }
    }
    for g in d.global_stores() {
        names.extend([g.source(), g.processor(), g.topic(), g.store()].map(str::to_owned));
    }
    names.sort();
    names.dedup();
    Ok(names)
}

#[test]
fn the_page_shows_every_name_and_lights_a_click() -> Result<(), Box<dyn std::error::Error>> {
    let Some(chromium) = chromium_or_skip("the_page_shows_every_name_and_lights_a_click") else {
        return Ok(());
    };
    let dir = scratch("browser-page")?;
    let page = String::from_utf8(render(JOINS, Format::Html, Renderer::Builtin)?)?;
    let html = dir.join("topology.html");
    std::fs::write(&html, &page)?;

    // A screenshot, to look at: target/tmp/topology-viz-browser-page/topology.png.
    let png = dir.join("topology.png");
    headless(
        &chromium,
        &dir,
        &html,
        &[format!("--screenshot={}", png.display())],
    )?;
    let shot = std::fs::read(&png)?;
    assert_eq!(&shot[..8], b"\x89PNG\r\n\x1a\n");
    // The PNG's IHDR: 1440 by 900 pixels.
    assert_eq!(&shot[16..24], &[0, 0, 0x05, 0xa0, 0, 0, 0x03, 0x84]);
    eprintln!("the page's screenshot: {}", png.display());

    // The page with the probe after its own script.
    let probe = page.replace(
        "</body>",
        &format!(
            "<script>window.PROBE_CLICK = 'KSTREAM-AGGREGATE-0000000012'; window.PROBE_HOOK = 'colors';\n{PROBE}</script>\n</body>"
        ),
    );
    let probed = dir.join("probe.html");
    std::fs::write(&probed, probe)?;
    let dom = headless(&chromium, &dir, &probed, &["--dump-dom".to_owned()])?;
    let lines = probe_lines(&dom)?;
    let value = |key: &str| -> Option<String> {
        lines
            .iter()
            .find(|l| l[0] == key)
            .map(|l| l[1..].join("\t"))
    };

    // Every name, whole, in view, shown, inside its shape, big enough.
    let mut seen: Vec<String> = Vec::new();
    for l in lines.iter().filter(|l| l[0] == "vertex") {
        let [_, name, label, view, shown, fits, line_height] = l.as_slice() else {
            return Err(format!("a probe line: {l:?}").into());
        };
        assert_eq!(label, name, "the label shows the whole name");
        assert_eq!(
            (view.as_str(), shown.as_str(), fits.as_str()),
            ("in-view", "shown", "fits"),
            "{name}"
        );
        let height: f64 = line_height.parse()?;
        assert!(height >= 7.0, "{name}'s letters are {height} pixels high");
        seen.push(name.clone());
    }
    seen.sort();
    assert_eq!(seen, names(JOINS)?);
    let overlaps: Vec<&Vec<String>> = lines.iter().filter(|l| l[0] == "overlap").collect();
    assert!(overlaps.is_empty(), "labels over labels: {overlaps:?}");

    // The click lit the node, its three edges and its neighbours.
    assert_eq!(value("focus").as_deref(), Some("true"));
    assert_eq!(
        value("lit edges").as_deref(),
        Some(
            "KSTREAM-AGGREGATE-0000000012 -> KTABLE-TOSTREAM-0000000013, KSTREAM-AGGREGATE-0000000012 -> joined, KSTREAM-JOIN-0000000011 -> KSTREAM-AGGREGATE-0000000012"
        )
    );
    assert_eq!(
        value("lit vertices").as_deref(),
        Some(
            "KSTREAM-AGGREGATE-0000000012, KSTREAM-JOIN-0000000011, KTABLE-TOSTREAM-0000000013, joined"
        )
    );
    assert_eq!(
        value("selected").as_deref(),
        Some("KSTREAM-AGGREGATE-0000000012")
    );
    assert_eq!(
        value("lit edge colour").as_deref(),
        Some("rgb(214, 39, 40)")
    );
    // Its row in the side lists (none: a processor is in none of them).
    assert_eq!(value("lit list items").as_deref(), Some("0"));
    // The hook, as a test or the console calls it: a topic's neighbours.
    assert_eq!(value("hook").as_deref(), Some("KSTREAM-SOURCE-0000000004"));
    // A click on the background puts the light out.
    assert_eq!(value("after clearing").as_deref(), Some("false\t"));
    // The wheel zooms (200 pixels of wheel: e^0.3), a drag pans by as far
    // as the pointer moved, the find box selects by name.
    assert_eq!(value("zoom").as_deref(), Some("1.350"));
    assert_eq!(value("pan").as_deref(), Some("60.0\t-30.0"));
    assert_eq!(value("found").as_deref(), Some("names"));
    Ok(())
}

#[test]
fn the_svg_is_drawn_as_laid_out() -> Result<(), Box<dyn std::error::Error>> {
    let Some(chromium) = chromium_or_skip("the_svg_is_drawn_as_laid_out") else {
        return Ok(());
    };
    let dir = scratch("browser-svg")?;
    let svg = String::from_utf8(render(JOINS, Format::Svg, Renderer::Builtin)?)?;
    // The SVG in a page with the probe: the same measures, with the
    // browser's own fonts, at its own size.
    let page = format!(
        "<!DOCTYPE html><html><body style=\"margin:0\">{}<pre id=\"out\"></pre><script>\n\
         var out = []; var svg = document.querySelector('svg');\n\
         var box = svg.getBoundingClientRect();\n\
         document.querySelectorAll('.vertex').forEach(function (v) {{\n\
           var r = v.querySelector('text').getBoundingClientRect();\n\
           var s = v.querySelector('.shape').getBoundingClientRect();\n\
           var fits = r.left >= s.left - 0.5 && r.right <= s.right + 0.5 && r.top >= s.top - 0.5 && r.bottom <= s.bottom + 0.5;\n\
           var inside = r.left >= box.left && r.right <= box.right && r.top >= box.top && r.bottom <= box.bottom;\n\
           if (!fits || !inside) out.push(v.dataset.name + (fits ? '' : ' overflows its shape') + (inside ? '' : ' is outside the picture'));\n\
         }});\n\
         out.push(document.querySelectorAll('.vertex').length + ' vertices, ' + document.querySelectorAll('.cluster').length + ' boxes');\n\
         document.getElementById('out').textContent = out.join('\\n');\n\
         </script></body></html>",
        svg.replace("<svg xmlns", "<svg id=\"picture\" xmlns")
    );
    let html = dir.join("svg.html");
    std::fs::write(&html, page)?;
    let dom = headless(&chromium, &dir, &html, &["--dump-dom".to_owned()])?;
    let out = dom
        .split("<pre id=\"out\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next())
        .ok_or("no output")?;
    assert_eq!(out, "31 vertices, 4 boxes");
    // A screenshot of the SVG alone, at its size, to look at.
    let file = dir.join("topology.svg");
    std::fs::write(&file, &svg)?;
    let png = dir.join("topology-svg.png");
    headless(
        &chromium,
        &dir,
        &file,
        &[format!("--screenshot={}", png.display())],
    )?;
    assert_eq!(&std::fs::read(&png)?[..4], b"\x89PNG");
    eprintln!("the SVG's screenshot: {}", png.display());
    Ok(())
}
