//! Kafka's answers against the simulated broker's, step by step.
//!
//! Both sides are normalised first. An error is compared by its Java
//! exception class alone: the messages are the Java client's and ours,
//! worded differently. Our `BrokerError` variants map to Kafka's classes in
//! [`crate::mirror::java_exception`]. Where the Java client never sends the
//! request (an unknown topic or partition in `produce` and in the admin's
//! `deleteRecords` / `listOffsets`: it waits for metadata until
//! `max.block.ms` or the call's timeout, then throws `TimeoutException`), the
//! broker's answer would be `UNKNOWN_TOPIC_OR_PARTITION`: such a timeout is
//! compared as `UnknownTopicOrPartitionException`, our
//! `UnknownTopic` / `UnknownPartition`.

use std::fmt::Write as _;

use pretty_assertions::StrComparison;
use serde_json::{Map, Value};

/// A Java client's `TimeoutException` while it waits for a topic or
/// partition to appear in its metadata.
fn is_metadata_timeout(class: &str, message: &str) -> bool {
    class == "TimeoutException"
        && (message.contains("not present in metadata")
            || message.contains("(api=METADATA) timed out"))
}

/// Errors reduced to their class (Kafka's metadata timeouts to
/// `UnknownTopicOrPartitionException`); everything else as it is.
fn normalise(v: &Value) -> Value {
    match v {
        Value::Object(m) if m.contains_key("error") => {
            let class = m["error"].as_str().unwrap_or_default();
            let message = m.get("message").and_then(Value::as_str).unwrap_or_default();
            let class = if is_metadata_timeout(class, message) {
                "UnknownTopicOrPartitionException"
            } else {
                class
            };
            let mut out = Map::new();
            out.insert("error".into(), Value::String(class.to_owned()));
            for (k, x) in m {
                if k != "error" && k != "message" {
                    out.insert(k.clone(), normalise(x));
                }
            }
            Value::Object(out)
        }
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, x)| (k.clone(), normalise(x))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(normalise).collect()),
        other => other.clone(),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 160 {
        format!("{}...", s.chars().take(157).collect::<String>())
    } else {
        s
    }
}

/// Every path at which `kafka` and `simulated` differ, with both values.
fn differences(path: &str, kafka: &Value, simulated: &Value, out: &mut Vec<String>) {
    match (kafka, simulated) {
        (Value::Object(a), Value::Object(b)) => {
            for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                let p = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => differences(&p, x, y, out),
                    (Some(x), None) => {
                        out.push(format!("{p}: Kafka {}, simulated: absent", short(x)))
                    }
                    (None, Some(y)) => {
                        out.push(format!("{p}: Kafka: absent, simulated {}", short(y)))
                    }
                    (None, None) => {}
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differences(&format!("{path}[{i}]"), x, y, out);
            }
        }
        (Value::Array(a), Value::Array(b)) => out.push(format!(
            "{path}: Kafka has {} elements, simulated {} (offsets: Kafka {}, simulated {})",
            a.len(),
            b.len(),
            offsets(a),
            offsets(b)
        )),
        (x, y) if x != y => out.push(format!(
            "{path}: Kafka {}, simulated {}",
            short(x),
            short(y)
        )),
        _ => {}
    }
}

/// The `offset`s of a list of records, for a short message.
fn offsets(records: &[Value]) -> String {
    let o: Vec<String> = records
        .iter()
        .map(|r| {
            r.get("offset")
                .map_or_else(|| "?".to_owned(), Value::to_string)
        })
        .collect();
    format!("[{}]", o.join(", "))
}

/// What a step is about, for the report: `read compaction_keeps_latest-0`.
fn describe(step: &Value) -> String {
    let mut s = step["step"].as_str().unwrap_or("?").to_owned();
    if let Some(t) = step.get("topic").and_then(Value::as_str) {
        let _ = write!(s, " {t}");
        match step.get("partition") {
            Some(Value::Number(p)) => {
                let _ = write!(s, "-{p}");
            }
            Some(Value::Null) => s.push_str(" (partitioner)"),
            _ => {}
        }
    }
    for extra in ["before_offset", "spec", "auto_offset_reset", "seek", "ms"] {
        if let Some(v) = step.get(extra) {
            let _ = write!(s, " {extra}={v}");
        }
    }
    s
}

/// `Ok` when every step's answers agree; otherwise a report naming the
/// scenario, each differing step and field, and a diff of the step.
pub(crate) fn scenario(name: &str, kafka: &[Value], simulated: &[Value]) -> Result<(), String> {
    let mut report = String::new();
    let mut differing = 0;
    if kafka.len() != simulated.len() {
        let _ = writeln!(
            report,
            "Kafka ran {} steps, the simulated broker {}",
            kafka.len(),
            simulated.len()
        );
    }
    for (i, (k, s)) in kafka.iter().zip(simulated).enumerate() {
        let (k, s) = (normalise(k), normalise(s));
        if k == s {
            continue;
        }
        differing += 1;
        let mut fields = Vec::new();
        differences("", &k, &s, &mut fields);
        let _ = writeln!(report, "\nstep {i} ({}):", describe(&k));
        for f in &fields {
            let _ = writeln!(report, "  {f}");
        }
        let kafka_text = serde_json::to_string_pretty(&k).unwrap_or_default();
        let sim_text = serde_json::to_string_pretty(&s).unwrap_or_default();
        let _ = writeln!(
            report,
            "  diff (< Kafka 4.4.0, > simulated):\n{}",
            StrComparison::new(&kafka_text, &sim_text)
        );
    }
    if report.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "scenario {name}: {differing} of {} steps differ between Kafka 4.4.0 and the simulated broker\n{report}",
            kafka.len()
        ))
    }
}
