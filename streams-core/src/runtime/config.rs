//! The runtime's settings, read from the [`StreamsConfig`]'s properties by
//! Kafka's names, with Kafka's defaults and Kafka's messages for values
//! out of range.

use crate::config::StreamsConfig;
use crate::runtime::error::{Result, RuntimeError};

/// `processing.guarantee`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProcessingGuarantee {
    /// `at_least_once` (Kafka's default): after a crash, what was processed
    /// since the last commit is processed again, and its output appears
    /// again.
    #[default]
    AtLeastOnce,
    /// `exactly_once_v2`: a transactional producer per stream thread; the
    /// output, the changelogs and the input offsets of a commit become
    /// visible together or not at all.
    ExactlyOnceV2,
}

impl std::fmt::Display for ProcessingGuarantee {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ProcessingGuarantee::AtLeastOnce => "at_least_once",
            ProcessingGuarantee::ExactlyOnceV2 => "exactly_once_v2",
        })
    }
}

/// The settings the runtime reads, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RuntimeConfig {
    pub(crate) application_id: String,
    pub(crate) num_stream_threads: usize,
    pub(crate) commit_interval_ms: i64,
    pub(crate) guarantee: ProcessingGuarantee,
    pub(crate) num_standby_replicas: u32,
    /// `-1`: never wait for an empty partition.
    pub(crate) max_task_idle_ms: i64,
    pub(crate) session_timeout_ms: Option<String>,
    pub(crate) max_poll_interval_ms: Option<String>,
    pub(crate) max_poll_records: i64,
    /// `repartition.purge.interval.ms`: at most this often, a commit
    /// deletes the consumed records of repartition topics.
    pub(crate) repartition_purge_interval_ms: i64,
}

impl RuntimeConfig {
    pub(crate) fn from_streams_config(config: &StreamsConfig) -> Result<Self> {
        let application_id = config.application_id().to_owned();
        let legal = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
        if application_id.is_empty()
            || application_id.len() > 249
            || !application_id.chars().all(legal)
        {
            return Err(RuntimeError::InvalidApplicationId { application_id });
        }
        let props = config.properties();
        let guarantee = match props.get("processing.guarantee").map(String::as_str) {
            None | Some("at_least_once") => ProcessingGuarantee::AtLeastOnce,
            Some("exactly_once_v2") => ProcessingGuarantee::ExactlyOnceV2,
            Some(other) => {
                return Err(RuntimeError::InvalidConfig {
                    name: "processing.guarantee",
                    value: other.to_owned(),
                    reason: "String must be one of: at_least_once, exactly_once_v2".to_owned(),
                });
            }
        };
        let int = |name: &'static str, default: i64, min: i64| -> Result<i64> {
            match props.get(name) {
                None => Ok(default),
                Some(v) => match v.trim().parse::<i64>() {
                    Ok(n) if n >= min => Ok(n),
                    Ok(_) => Err(RuntimeError::InvalidConfig {
                        name,
                        value: v.clone(),
                        reason: format!("Value must be at least {min}"),
                    }),
                    Err(_) => Err(RuntimeError::InvalidConfig {
                        name,
                        value: v.clone(),
                        reason: "Not a number".to_owned(),
                    }),
                },
            }
        };
        let default_commit = match guarantee {
            ProcessingGuarantee::AtLeastOnce => 30_000,
            ProcessingGuarantee::ExactlyOnceV2 => 100,
        };
        let threads = int("num.stream.threads", 1, 1)?;
        let standbys = int("num.standby.replicas", 0, 0)?;
        Ok(RuntimeConfig {
            application_id,
            num_stream_threads: usize::try_from(threads).unwrap_or(usize::MAX),
            commit_interval_ms: int("commit.interval.ms", default_commit, 0)?,
            guarantee,
            num_standby_replicas: u32::try_from(standbys).unwrap_or(u32::MAX),
            max_task_idle_ms: int("max.task.idle.ms", 0, -1)?,
            session_timeout_ms: props.get("session.timeout.ms").cloned(),
            max_poll_interval_ms: props.get("max.poll.interval.ms").cloned(),
            max_poll_records: int("max.poll.records", 1000, 1)?,
            repartition_purge_interval_ms: int("repartition.purge.interval.ms", 30_000, 0)?,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<RuntimeConfig> {
        let mut config = StreamsConfig::new("app");
        for (k, v) in pairs {
            config = config.with_property(*k, *v);
        }
        RuntimeConfig::from_streams_config(&config)
    }

    #[test]
    fn kafka_defaults() {
        let c = parse(&[]).unwrap();
        assert_eq!(
            (
                c.num_stream_threads,
                c.commit_interval_ms,
                c.guarantee,
                c.num_standby_replicas,
                c.max_task_idle_ms
            ),
            (1, 30_000, ProcessingGuarantee::AtLeastOnce, 0, 0)
        );
        let eos = parse(&[("processing.guarantee", "exactly_once_v2")]).unwrap();
        assert_eq!(eos.commit_interval_ms, 100);
    }

    #[test]
    fn bad_values_name_the_config() {
        let e = parse(&[("processing.guarantee", "exactly_once")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid value exactly_once for configuration processing.guarantee: String must be one of: at_least_once, exactly_once_v2"
        );
        let e = parse(&[("num.stream.threads", "0")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Invalid value 0 for configuration num.stream.threads: Value must be at least 1"
        );
        let e = RuntimeConfig::from_streams_config(&StreamsConfig::new("word count")).unwrap_err();
        assert!(
            matches!(e, RuntimeError::InvalidApplicationId { ref application_id } if application_id == "word count")
        );
    }
}
