//! The `topology-viz` command: see the crate docs of `topology_viz`.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use topology_viz::{Format, Renderer, render};

/// Draws a Kafka Streams topology from the text of its describe()
/// (Java's `topology.describe().toString()`, or streams-core's).
#[derive(Debug, Parser)]
#[command(name = "topology-viz", version, about)]
struct Args {
    /// The file holding the description; `-` or none reads standard input.
    input: Option<PathBuf>,
    /// dot, mermaid, svg or png [default: from the output file's
    /// extension, else dot].
    #[arg(short, long)]
    format: Option<Format>,
    /// Who draws SVG and PNG: builtin (SVG, nothing to install) or
    /// graphviz (needs `dot` on PATH) [default: builtin for SVG, graphviz
    /// for PNG].
    #[arg(short, long)]
    renderer: Option<Renderer>,
    /// Where to write; standard output if none.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

fn run(args: Args) -> Result<(), String> {
    let (name, text) = match &args.input {
        Some(path) if path.as_os_str() != "-" => (
            path.display().to_string(),
            std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?,
        ),
        _ => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("standard input: {e}"))?;
            ("standard input".to_owned(), text)
        }
    };
    let format = args
        .format
        .or_else(|| args.output.as_deref().and_then(Format::from_extension))
        .unwrap_or(Format::Dot);
    let renderer = args.renderer.unwrap_or(match format {
        Format::Png => Renderer::Graphviz,
        _ => Renderer::Builtin,
    });
    let bytes = render(&text, format, renderer).map_err(|e| format!("{name}: {e}"))?;
    match &args.output {
        Some(path) => std::fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display())),
        None => std::io::stdout()
            .write_all(&bytes)
            .map_err(|e| format!("standard output: {e}")),
    }
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
