//! The `topology-viz` command: see the crate docs of `topology_viz`.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use topology_viz::{Format, Renderer, decode, parse_all, render_pasted};

/// Draws a Kafka Streams topology from the text of its describe()
/// (Java's `topology.describe().toString()`, or streams-core's).
#[derive(Debug, Parser)]
#[command(
    name = "topology-viz",
    version,
    about,
    after_help = "\
The input may be a log: each description starts at a line ending in `Topologies:` \
(text before it on that line is skipped) and several may follow one another.

Examples:
  topology-viz topology.txt -o topology.svg       SVG, no Graphviz needed
  topology-viz topology.txt --html -o t.html      a page to explore: pan, zoom, click a node
  topology-viz app.log -f mermaid --topology 2    the second description in a log, as Mermaid
  topology-viz topology.txt -o topology.png       PNG, drawn by Graphviz's `dot`
  pbpaste | topology-viz -o topology.svg          from the clipboard (macOS)"
)]
struct Args {
    /// The file holding the description; `-` or none reads standard input.
    input: Option<PathBuf>,
    /// dot, mermaid, svg, png or html [default: from the output file's
    /// extension, else dot].
    #[arg(short, long, value_name = "FORMAT")]
    format: Option<Format>,
    /// Write an HTML page (the same as `--format html`): the picture with
    /// pan and zoom, a node's neighbours lit on hover or click, and the
    /// lists of topics and stores; one file, nothing loaded from the network.
    #[arg(long, conflicts_with = "format")]
    html: bool,
    /// Who draws SVG and PNG: builtin (SVG and HTML, nothing to install)
    /// or graphviz (SVG and PNG, needs `dot` on PATH) [default: builtin,
    /// graphviz for PNG].
    #[arg(short, long, value_name = "RENDERER")]
    renderer: Option<Renderer>,
    /// Where to write (.dot, .gv, .mmd, .mermaid, .svg, .png, .html or
    /// .htm); standard output if none.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Draw only the N-th description of the input (counted from 1);
    /// Mermaid and Graphviz need one when there are several.
    #[arg(long, value_name = "N")]
    topology: Option<usize>,
}

/// Why the command stopped.
#[derive(Debug, thiserror::Error)]
enum CliError {
    #[error("cannot read {name}: {why}")]
    Read { name: String, why: String },
    #[error("{name}: {error}")]
    Input {
        name: String,
        error: topology_viz::Error,
    },
    #[error(
        "cannot write `.{ext}` files ({path}): name the output .dot, .gv, .mmd, .svg, .png or .html, or give --format"
    )]
    UnknownExtension { path: String, ext: String },
    #[error(
        "{path} is named for {named} but {format} was asked for: rename the output, or leave out --format"
    )]
    Mismatch {
        path: String,
        named: Format,
        format: Format,
    },
    #[error(
        "PNG is binary and standard output is a terminal: write it to a file (`-o topology.png`) or redirect standard output"
    )]
    BinaryToTerminal,
    #[error("cannot write {name}: {why}")]
    Write { name: String, why: String },
}

/// An I/O error's text as a lowercase phrase, without `(os error N)`.
fn why(e: &std::io::Error) -> String {
    let text = e.to_string();
    let text = match text.find(" (os error") {
        Some(at) => text[..at].to_owned(),
        None => text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

/// The format to write: `--html`, `--format`, the output's extension, or
/// DOT; an extension that names no format is refused unless `--format`
/// says what to write, and one that names another format is refused.
fn choose_format(args: &Args) -> Result<Format, CliError> {
    let asked = if args.html {
        Some(Format::Html)
    } else {
        args.format
    };
    let Some(path) = &args.output else {
        return Ok(asked.unwrap_or(Format::Dot));
    };
    let named = Format::from_extension(path);
    match (asked, named, path.extension()) {
        (Some(format), Some(named), _) if format != named => Err(CliError::Mismatch {
            path: path.display().to_string(),
            named,
            format,
        }),
        (Some(format), _, _) => Ok(format),
        (None, Some(named), _) => Ok(named),
        (None, None, None) => Ok(Format::Dot),
        (None, None, Some(ext)) => Err(CliError::UnknownExtension {
            path: path.display().to_string(),
            ext: ext.to_string_lossy().into_owned(),
        }),
    }
}

fn read_input(input: Option<&Path>) -> Result<(String, String), CliError> {
    match input {
        Some(path) if path.as_os_str() != "-" => {
            let name = path.display().to_string();
            let bytes = std::fs::read(path).map_err(|e| CliError::Read {
                name: name.clone(),
                why: why(&e),
            })?;
            let text = decode(&bytes).map_err(|error| CliError::Input {
                name: name.clone(),
                error,
            })?;
            Ok((name, text))
        }
        _ => {
            let name = "standard input".to_owned();
            let mut stdin = std::io::stdin();
            if stdin.is_terminal() {
                let _ = writeln!(
                    std::io::stderr(),
                    "topology-viz: reading describe() text from the terminal; end it with Ctrl-D"
                );
            }
            let mut bytes = Vec::new();
            stdin.read_to_end(&mut bytes).map_err(|e| CliError::Read {
                name: name.clone(),
                why: why(&e),
            })?;
            let text = decode(&bytes).map_err(|error| CliError::Input {
                name: name.clone(),
                error,
            })?;
            Ok((name, text))
        }
    }
}

fn run(args: &Args) -> Result<(), CliError> {
    let format = choose_format(args)?;
    let stdout = std::io::stdout();
    if args.output.is_none() && format.is_binary() && stdout.is_terminal() {
        return Err(CliError::BinaryToTerminal);
    }
    let (name, text) = read_input(args.input.as_deref())?;
    let input_error = |error| CliError::Input {
        name: name.clone(),
        error,
    };
    let mut found = parse_all(&text).map_err(input_error)?;
    if let Some(n) = args.topology {
        let count = found.len();
        if n == 0 || n > count {
            return Err(input_error(topology_viz::Error::NoSuchTopology {
                asked: n,
                count,
            }));
        }
        found = vec![found.swap_remove(n - 1)];
    }
    let renderer = args.renderer.unwrap_or(match format {
        Format::Png => Renderer::Graphviz,
        _ => Renderer::Builtin,
    });
    let bytes = render_pasted(&found, format, renderer).map_err(input_error)?;
    match &args.output {
        Some(path) => std::fs::write(path, bytes).map_err(|e| CliError::Write {
            name: path.display().to_string(),
            why: why(&e),
        }),
        None => {
            let mut out = stdout.lock();
            match out.write_all(&bytes).and_then(|()| out.flush()) {
                // A reader that went away (`| head`) wanted no more.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                Err(e) => Err(CliError::Write {
                    name: "standard output".to_owned(),
                    why: why(&e),
                }),
                Ok(()) => Ok(()),
            }
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Not eprintln!, which panics when standard error is closed.
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::FAILURE
        }
    }
}
