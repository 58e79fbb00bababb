//! The Java side: building `compat/broker` with Maven, starting and
//! stopping the broker with `scripts/kafka-up` / `kafka-down`, and running
//! the tool's `scenario ADDR NAME`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// A scenario takes about 5 to 25 s on a quiet machine (`transactions`
/// waits 15 s for a transaction timeout); this is for a JVM
/// that hangs, not a slow one.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(240);

/// `Some("'java' not found on PATH")` when `java` or `mvn` is missing.
pub(crate) fn missing_tools() -> Option<String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing: Vec<&str> = ["java", "mvn"]
        .into_iter()
        .filter(|tool| {
            !std::env::split_paths(&path).any(|dir| {
                let candidate = dir.join(tool);
                candidate.is_file()
                    && std::fs::metadata(&candidate).is_ok_and(|m| {
                        std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0
                    })
            })
        })
        .collect();
    if missing.is_empty() {
        None
    } else {
        Some(format!(
            "{} not found on PATH",
            missing
                .iter()
                .map(|t| format!("'{t}'"))
                .collect::<Vec<_>>()
                .join(" and ")
        ))
    }
}

/// Runs `child` to its end (or kills it after `timeout`); its stdout and
/// stderr.
fn wait_output(
    mut child: Child,
    timeout: Duration,
    what: &str,
) -> Result<(bool, String, String), String> {
    let mut out = child.stdout.take().expect("stdout is piped");
    let mut err = child.stderr.take().expect("stderr is piped");
    let out = thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err = thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(50)),
            Ok(None) => {
                let _ = child.kill(); // only the process this function started
                let _ = child.wait();
                return Err(format!(
                    "{what} did not finish in {} s; killed it",
                    timeout.as_secs()
                ));
            }
            Err(e) => return Err(format!("{what}: {e}")),
        }
    };
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    Ok((status.success(), out, err))
}

/// The last `n` lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The compiled Java tool and its classpath.
pub(crate) struct Tool {
    classpath: String,
}

impl Tool {
    /// `mvn -q -B process-classes` in `compat/broker` (what
    /// `compat/broker/regenerate` and `scripts/kafka-up` run): compiles the
    /// tool and writes `target/classpath.txt`. `$MVN_ARGS` is passed on.
    pub(crate) fn build(root: &Path) -> Result<Tool, String> {
        let project = root.join("compat/broker");
        let mut cmd = Command::new("mvn");
        cmd.args(["-q", "-B", "-Dstyle.color=never"]);
        if let Ok(extra) = std::env::var("MVN_ARGS") {
            cmd.args(extra.split_whitespace());
        }
        cmd.arg("-f")
            .arg(project.join("pom.xml"))
            .arg("process-classes")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = cmd.spawn().map_err(|e| format!("could not run mvn: {e}"))?;
        let (ok, out, err) = wait_output(child, Duration::from_secs(600), "mvn process-classes")?;
        if !ok {
            return Err(format!(
                "the Maven build of compat/broker failed:\n{out}{err}"
            ));
        }
        let classpath_file = project.join("target/classpath.txt");
        let deps = std::fs::read_to_string(&classpath_file).map_err(|e| {
            format!(
                "{}: {e} (after mvn process-classes)",
                classpath_file.display()
            )
        })?;
        let classes: PathBuf = project.join("target/classes");
        Ok(Tool {
            classpath: format!("{}:{}", classes.display(), deps.trim()),
        })
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new("java");
        cmd.args([
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Xss1m",
            "-cp",
        ])
        .arg(&self.classpath)
        .arg("compat.broker.Main")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        cmd
    }

    /// Fails when the tool's scenarios are not `names`.
    pub(crate) fn check_scenario_names(&self, names: &[&str]) -> Result<(), String> {
        let child = self
            .command()
            .arg("list")
            .spawn()
            .map_err(|e| format!("could not run java: {e}"))?;
        let (ok, out, err) =
            wait_output(child, Duration::from_secs(60), "compat.broker.Main list")?;
        if !ok {
            return Err(format!("compat.broker.Main list failed:\n{err}"));
        }
        let listed: Vec<&str> = out
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        if listed != names {
            return Err(format!(
                "the Java tool's scenarios are {listed:?}, the Rust oracle knows {names:?}: add a trial (and the steps' mirror) in streams-broker/tests/real_broker"
            ));
        }
        Ok(())
    }

    /// Kafka's JSON for one scenario (`compat.broker.Main scenario ADDR NAME`).
    pub(crate) fn scenario(&self, bootstrap: &str, name: &str) -> Result<String, String> {
        let started = Instant::now();
        let child = self
            .command()
            .args(["scenario", bootstrap, name])
            .spawn()
            .map_err(|e| format!("could not run java: {e}"))?;
        let what = format!("compat.broker.Main scenario {bootstrap} {name}");
        let (ok, out, err) = wait_output(child, SCENARIO_TIMEOUT, &what)?;
        if !ok {
            return Err(format!(
                "{what} failed after {:.1} s; its stderr ends with:\n{}",
                started.elapsed().as_secs_f64(),
                tail(&err, 40)
            ));
        }
        Ok(out)
    }
}

/// The broker of this run; dropping it stops a broker it started.
pub(crate) struct Broker {
    root: PathBuf,
    bootstrap: String,
    owned: bool,
}

impl Broker {
    /// `$KAFKA_BOOTSTRAP`, or a new broker from `scripts/kafka-up --parent
    /// <this pid>` (its watchdog stops the broker if this process dies
    /// without dropping the guard).
    pub(crate) fn start(root: &Path) -> Result<Broker, String> {
        if let Ok(addr) = std::env::var("KAFKA_BOOTSTRAP")
            && !addr.is_empty()
        {
            return Ok(Broker {
                root: root.to_path_buf(),
                bootstrap: addr,
                owned: false,
            });
        }
        let mut cmd = Command::new(root.join("scripts/kafka-up"));
        cmd.arg("--parent")
            .arg(std::process::id().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // The tool was just built: kafka-up's own Maven run needs no network.
        let mvn_args = std::env::var("MVN_ARGS").unwrap_or_default();
        cmd.env("MVN_ARGS", format!("{mvn_args} -o").trim());
        let child = cmd
            .spawn()
            .map_err(|e| format!("could not run scripts/kafka-up: {e}"))?;
        // kafka-up has its own timeouts (KAFKA_UP_TIMEOUT, 180 s per wait).
        let (ok, out, err) = wait_output(child, Duration::from_secs(420), "scripts/kafka-up")?;
        let bootstrap = out.trim().to_owned();
        if !ok || bootstrap.is_empty() {
            return Err(format!("scripts/kafka-up failed to start a broker:\n{err}"));
        }
        Ok(Broker {
            root: root.to_path_buf(),
            bootstrap,
            owned: true,
        })
    }

    /// The bootstrap address, `127.0.0.1:PORT`.
    pub(crate) fn bootstrap(&self) -> &str {
        &self.bootstrap
    }

    /// Whether this run started the broker (and so stops it).
    pub(crate) fn owned(&self) -> bool {
        self.owned
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let status = Command::new(self.root.join("scripts/kafka-down"))
            .arg(&self.bootstrap)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output();
        match status {
            Ok(o) if o.status.success() => {}
            Ok(o) => eprintln!(
                "real_broker: scripts/kafka-down {} failed:\n{}",
                self.bootstrap,
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => eprintln!("real_broker: could not run scripts/kafka-down: {e}"),
        }
    }
}
