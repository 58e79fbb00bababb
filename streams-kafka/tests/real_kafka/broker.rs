//! The real broker of the run: `scripts/kafka-up --parent <pid>` at start,
//! `scripts/kafka-down` when the guard drops (the same pattern as
//! `streams-broker/tests/real_broker`).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// `Some("'java' not found on PATH")` when `java` or `mvn` is missing.
pub(crate) fn missing_tools() -> Option<String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing: Vec<String> = ["java", "mvn"]
        .into_iter()
        .filter(|tool| {
            !std::env::split_paths(&path).any(|dir| {
                let candidate = dir.join(tool);
                std::fs::metadata(&candidate).is_ok_and(|m| {
                    m.is_file()
                        && std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0
                })
            })
        })
        .map(|t| format!("'{t}'"))
        .collect();
    if missing.is_empty() {
        None
    } else {
        Some(format!("{} not found on PATH", missing.join(" and ")))
    }
}

/// The broker of this run; dropping it stops a broker it started.
pub(crate) struct Broker {
    root: PathBuf,
    bootstrap: String,
    /// The SASL_PLAINTEXT listener's address, when it has one.
    sasl: Option<String>,
    owned: bool,
}

impl Broker {
    /// `$KAFKA_BOOTSTRAP`, or a new broker from `scripts/kafka-up --parent
    /// <this pid> --sasl <users>` (its watchdog stops the broker if this
    /// process dies without dropping the guard), with a SASL_PLAINTEXT
    /// listener for `users` (`NAME:PASSWORD,...`).
    pub(crate) fn start(root: &Path, users: &str) -> Result<Broker, String> {
        if let Ok(addr) = std::env::var("KAFKA_BOOTSTRAP")
            && !addr.is_empty()
        {
            return Ok(Broker {
                root: root.to_path_buf(),
                bootstrap: addr,
                sasl: None,
                owned: false,
            });
        }
        let (bootstrap, sasl) = kafka_up(root, &["--sasl".as_ref(), users.as_ref()])?;
        Ok(Broker {
            root: root.to_path_buf(),
            bootstrap,
            sasl,
            owned: true,
        })
    }

    /// A broker of its own (even with `$KAFKA_BOOTSTRAP`), for a trial
    /// that stops and restarts it.
    pub(crate) fn start_own(root: &Path) -> Result<Broker, String> {
        let (bootstrap, _) = kafka_up(root, &[])?;
        Ok(Broker {
            root: root.to_path_buf(),
            bootstrap,
            sasl: None,
            owned: true,
        })
    }

    /// The SASL_PLAINTEXT (PLAIN) listener's address, if there is one.
    pub(crate) fn sasl_bootstrap(&self) -> Option<&str> {
        self.sasl.as_deref()
    }

    /// `scripts/kafka-down --keep`: the broker stops, its directory stays.
    pub(crate) fn stop_keeping_data(&self) -> Result<(), String> {
        let out = Command::new(self.root.join("scripts/kafka-down"))
            .arg("--keep")
            .arg(&self.bootstrap)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("could not run scripts/kafka-down: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "scripts/kafka-down --keep failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    /// `scripts/kafka-up --dir`: the stopped broker starts again on its
    /// port with its data.
    pub(crate) fn restart(&self) -> Result<(), String> {
        let dir = self.dir()?;
        let (bootstrap, _) = kafka_up(&self.root, &["--dir".as_ref(), dir.as_os_str()])?;
        if bootstrap == self.bootstrap {
            Ok(())
        } else {
            Err(format!("restarted on {bootstrap}, not {}", self.bootstrap))
        }
    }

    /// The kafka-up directory of this broker.
    fn dir(&self) -> Result<PathBuf, String> {
        let tmp = std::env::var_os("TMPDIR").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
        std::fs::read_dir(&tmp)
            .map_err(|e| format!("{}: {e}", tmp.display()))?
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("kafka-up."))
                    && std::fs::read_to_string(p.join("bootstrap"))
                        .is_ok_and(|b| b.trim() == self.bootstrap)
            })
            .ok_or_else(|| format!("no kafka-up directory for {}", self.bootstrap))
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

/// Runs `scripts/kafka-up --parent <this pid> ARGS` and returns the
/// addresses it printed: the broker's, and the SASL listener's if any.
fn kafka_up(root: &Path, args: &[&std::ffi::OsStr]) -> Result<(String, Option<String>), String> {
    let mut child = Command::new(root.join("scripts/kafka-up"))
        .arg("--parent")
        .arg(std::process::id().to_string())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not run scripts/kafka-up: {e}"))?;
    let mut out = child.stdout.take().ok_or("kafka-up: no stdout")?;
    let mut err = child.stderr.take().ok_or("kafka-up: no stderr")?;
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
    // kafka-up has its own timeouts (KAFKA_UP_TIMEOUT, 180 s per wait).
    let deadline = Instant::now() + Duration::from_secs(420);
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(50)),
            Ok(None) => {
                let _ = child.kill(); // the process this function started
                let _ = child.wait();
                return Err("scripts/kafka-up did not finish in 420 s; killed it".to_owned());
            }
            Err(e) => return Err(format!("scripts/kafka-up: {e}")),
        }
    };
    let out = out.join().unwrap_or_default();
    let mut lines = out.lines().map(str::trim).filter(|l| !l.is_empty());
    let bootstrap = lines.next().unwrap_or_default().to_owned();
    let sasl = lines.next().map(str::to_owned);
    let err = err.join().unwrap_or_default();
    if !status.success() || bootstrap.is_empty() {
        return Err(format!("scripts/kafka-up failed to start a broker:\n{err}"));
    }
    Ok((bootstrap, sasl))
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
                "real_kafka: scripts/kafka-down {} failed:\n{}",
                self.bootstrap,
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(e) => eprintln!("real_kafka: could not run scripts/kafka-down: {e}"),
        }
    }
}
