//! Kafka's client configuration names to librdkafka's.
//!
//! Most names are the same in both (`bootstrap.servers`, `group.id`,
//! `client.id`, `acks`, `isolation.level`, `session.timeout.ms`,
//! `transactional.id`, `transaction.timeout.ms`, `security.protocol`,
//! `sasl.*`, `ssl.*`, ...) and pass through unchanged. Some are renamed
//! ([`RENAMED`]), some are Java-only and dropped ([`DROPPED`]); a few are
//! read by this crate itself (`max.poll.records`,
//! `default.api.timeout.ms`). Every client gets Kafka's defaults where
//! librdkafka's differ: producers partition keyed records with `murmur2`
//! as Java's producer does (`partitioner=murmur2_random`), so that a
//! record lands on the partition Kafka Streams would write it to;
//! consumers use the eager `range` assignor and read uncommitted records
//! unless `isolation.level` says otherwise (librdkafka's own default is
//! `read_committed`), and fetch again 10 ms after their queue of fetched
//! records passed `queued.min.messages` (`fetch.queue.backoff.ms`;
//! librdkafka's default, 1 s, made a consumer that takes records faster
//! than that wait up to a second per 100,000 records, where Java's
//! consumer fetches again once the application took what it fetched).
//!
//! ```
//! use streams_clients::ClientConfig;
//! use streams_kafka::config::{Role, to_rdkafka};
//!
//! let kafka = ClientConfig::new().set("fetch.max.wait.ms", "100").set("max.poll.records", "10");
//! let native = to_rdkafka(Role::Consumer, "127.0.0.1:9092", &Default::default(), &kafka)?;
//! assert_eq!(native.get("fetch.wait.max.ms"), Some("100"));
//! assert_eq!(native.get("max.poll.records"), None);
//! assert_eq!(native.get("partition.assignment.strategy"), Some("range"));
//! assert_eq!(native.get("fetch.queue.backoff.ms"), Some("10"));
//! let kafka = ClientConfig::new().set("fetch.queue.backoff.ms", "1000");
//! let native = to_rdkafka(Role::Consumer, "127.0.0.1:9092", &Default::default(), &kafka)?;
//! assert_eq!(native.get("fetch.queue.backoff.ms"), Some("1000"));
//! # Ok::<(), streams_clients::ClientError>(())
//! ```

use std::collections::BTreeMap;

use streams_clients::{ClientConfig, ClientError};

/// Kafka names that librdkafka spells differently: (Kafka's, librdkafka's).
pub const RENAMED: [(&str, &str); 4] = [
    ("fetch.max.wait.ms", "fetch.wait.max.ms"),
    ("delivery.timeout.ms", "message.timeout.ms"),
    ("receive.buffer.bytes", "socket.receive.buffer.bytes"),
    ("send.buffer.bytes", "socket.send.buffer.bytes"),
];

/// Kafka names with no librdkafka counterpart (Java serializers, the Java
/// client's blocking and API timeouts) or read by this crate: not passed on.
pub const DROPPED: [&str; 9] = [
    "key.serializer",
    "value.serializer",
    "key.deserializer",
    "value.deserializer",
    "max.poll.records",
    "default.api.timeout.ms",
    "max.block.ms",
    "interceptor.classes",
    "partition.assignment.strategy",
];

/// Whether the value of configuration `name` is a secret (a password, a
/// private key, a JAAS or OAuth config): it never appears in a `Debug`
/// output or an error of this crate.
pub fn is_secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "password",
        "secret",
        "jaas",
        "ssl.key.pem",
        "oauthbearer.config",
        "keystore.key",
        "private",
    ]
    .iter()
    .any(|s| name.contains(s))
}

/// `value` of `name` as it may be shown: `[redacted]` for a secret.
pub fn shown<'a>(name: &str, value: &'a str) -> &'a str {
    if is_secret(name) { "[redacted]" } else { value }
}

/// Which client a configuration is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A producer.
    Producer,
    /// A consumer.
    Consumer,
    /// An admin client.
    Admin,
}

/// The librdkafka configuration for a client of `role`: `bootstrap`
/// first, then `extra` (the supplier's own librdkafka settings), then
/// `config` by Kafka's names, renamed or dropped as the [module docs](self)
/// say.
///
/// # Errors
/// [`ClientError::InvalidConfig`] when `partition.assignment.strategy`
/// names anything but `range` (librdkafka cannot run Kafka Streams'
/// assignor, and this crate maps only eager rebalances), or for Java's
/// `sasl.jaas.config` (its value redacted: it holds a password).
pub fn to_rdkafka(
    role: Role,
    bootstrap: &str,
    extra: &BTreeMap<String, String>,
    config: &ClientConfig,
) -> Result<rdkafka::ClientConfig, ClientError> {
    let mut native = rdkafka::ClientConfig::new();
    native.set("bootstrap.servers", bootstrap);
    match role {
        Role::Producer => {
            native.set("partitioner", "murmur2_random");
        }
        Role::Consumer => {
            native.set("partition.assignment.strategy", "range");
            native.set("enable.partition.eof", "false");
            // Kafka's default; librdkafka's is read_committed.
            native.set("isolation.level", "read_uncommitted");
            // See the module docs: librdkafka's 1 s starved the stream
            // threads (the stateless benchmark at 170 k records/s, 420 k
            // with this).
            native.set("fetch.queue.backoff.ms", "10");
        }
        Role::Admin => {}
    }
    let mut settings = extra
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .chain(config.iter());
    if let Some((name, value)) = settings.find(|(n, _)| *n == "sasl.jaas.config") {
        return Err(ClientError::InvalidConfig {
            name: name.to_owned(),
            value: shown(name, value).to_owned(),
            reason: "a JAAS config is Java's; librdkafka takes sasl.mechanism, sasl.username and sasl.password instead".to_owned(),
        });
    }
    for (name, value) in extra {
        if !DROPPED.contains(&name.as_str()) {
            native.set(name, value);
        }
    }
    for (name, value) in config.iter() {
        if name == "partition.assignment.strategy" && value.trim() != "range" {
            return Err(ClientError::InvalidConfig {
                name: name.to_owned(),
                value: value.to_owned(),
                reason: "streams-kafka runs librdkafka's eager range assignor only; remove the setting or set it to range".to_owned(),
            });
        }
        if DROPPED.contains(&name) {
            continue;
        }
        let name = RENAMED
            .iter()
            .find(|(kafka, _)| *kafka == name)
            .map_or(name, |(_, native)| native);
        native.set(name, value);
    }
    Ok(native)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_renames_and_drops() {
        let kafka = ClientConfig::new()
            .set("bootstrap.servers", "other:1")
            .set("sasl.mechanism", "PLAIN")
            .set("delivery.timeout.ms", "5000")
            .set(
                "key.serializer",
                "org.apache.kafka.common.serialization.StringSerializer",
            );
        let extra = BTreeMap::from([("linger.ms".to_owned(), "1".to_owned())]);
        let native = to_rdkafka(Role::Producer, "127.0.0.1:1", &extra, &kafka).unwrap();
        assert_eq!(native.get("bootstrap.servers"), Some("other:1"));
        assert_eq!(native.get("sasl.mechanism"), Some("PLAIN"));
        assert_eq!(native.get("message.timeout.ms"), Some("5000"));
        assert_eq!(native.get("delivery.timeout.ms"), None);
        assert_eq!(native.get("key.serializer"), None);
        assert_eq!(native.get("linger.ms"), Some("1"));
        assert_eq!(native.get("partitioner"), Some("murmur2_random"));
        let consumer = to_rdkafka(Role::Consumer, "x:1", &extra, &ClientConfig::new()).unwrap();
        assert_eq!(consumer.get("isolation.level"), Some("read_uncommitted"));
    }

    #[test]
    fn secrets_are_never_shown() {
        for name in [
            "sasl.password",
            "ssl.key.password",
            "sasl.jaas.config",
            "sasl.oauthbearer.client.secret",
            "ssl.key.pem",
        ] {
            assert!(is_secret(name), "{name}");
            assert_eq!(shown(name, "hunter2"), "[redacted]");
        }
        assert_eq!(shown("sasl.username", "alice"), "alice");
    }

    #[test]
    fn refuses_other_assignors() {
        let kafka = ClientConfig::new().set("partition.assignment.strategy", "cooperative-sticky");
        let err = to_rdkafka(Role::Consumer, "x:1", &BTreeMap::new(), &kafka).unwrap_err();
        assert!(
            matches!(err, ClientError::InvalidConfig { ref name, .. } if name == "partition.assignment.strategy")
        );
    }
}
