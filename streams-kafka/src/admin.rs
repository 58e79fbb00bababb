//! [`KafkaAdmin`]: the client API's [`Admin`] over rdkafka's
//! `AdminClient`: topics created with their configs, partition counts
//! from the cluster's metadata, and delete-records. rdkafka's admin calls
//! are futures, resolved by its own background thread; this crate waits
//! for them on the calling thread (no async runtime).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use rdkafka::admin::{
    AdminClient, AdminOptions, ConfigSource, NewTopic as RdNewTopic, ResourceSpecifier,
    TopicReplication,
};
use rdkafka::consumer::BaseConsumer;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::metadata::Metadata;
use rdkafka::types::RDKafkaRespErr;
use rdkafka::{Offset, TopicPartitionList};
use streams_clients::{Admin, ClientError, NewTopic, Result, TopicPartition};

use crate::error::client_error;
use crate::health::{Health, LogContext};

struct ThreadWaker(std::thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `future` on this thread until it is ready, `timeout` passed or
/// `give_up` says so (asked every 100 ms).
fn block_on<F: Future>(
    future: F,
    timeout: Duration,
    give_up: impl Fn() -> bool,
) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let deadline = Instant::now() + timeout;
    loop {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return Some(v);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || give_up() {
            return None;
        }
        std::thread::park_timeout(left.min(Duration::from_millis(100)));
    }
}

/// An admin client on a real cluster. See the [module docs](self).
pub struct KafkaAdmin {
    inner: AdminClient<LogContext>,
    client: String,
    timeout: Duration,
    health: Arc<Health>,
    config: rdkafka::ClientConfig,
    /// A consumer made when the cluster does not answer, to hear why:
    /// librdkafka gives the admin client's errors to no one.
    probe: OnceLock<Option<BaseConsumer<LogContext>>>,
}

impl std::fmt::Debug for KafkaAdmin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaAdmin")
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

impl KafkaAdmin {
    pub(crate) fn new(
        config: &rdkafka::ClientConfig,
        client: String,
        timeout: Duration,
        health: Arc<Health>,
    ) -> Result<Self> {
        let context = LogContext {
            client: client.clone(),
            health: health.clone(),
        };
        let inner = config
            .create_with_context(context)
            .map_err(|e| client_error(&client, timeout, "creating the admin client", None, e))?;
        Ok(KafkaAdmin {
            inner,
            client,
            timeout,
            health,
            config: config.clone(),
            probe: OnceLock::new(),
        })
    }

    /// `err` of `operation` as the client API's error (an authentication
    /// the cluster refused, when the call failed for want of a broker).
    fn fail(
        &self,
        operation: &str,
        topic: Option<(&str, Option<i32>)>,
        err: KafkaError,
    ) -> ClientError {
        self.health.refine(
            &self.client,
            client_error(&self.client, self.timeout, operation, topic, err),
        )
    }

    /// Takes the errors the probe heard (it connects when it is made),
    /// which tell a refused authentication from a cluster that is away.
    fn hear_why(&self) {
        let probe = self.probe.get_or_init(|| {
            let context = LogContext {
                client: format!("{}-probe", self.client),
                health: self.health.clone(),
            };
            // With a group id (never joined, nothing committed) librdkafka
            // hands the client's errors to the consumer's poll.
            let mut config = self.config.clone();
            config.set(
                "group.id",
                format!("streams-kafka-probe-{}-{}", std::process::id(), self.client),
            );
            config.create_with_context(context).ok()
        });
        if let Some(probe) = probe {
            self.health.drain(probe);
        }
    }

    /// The cluster's metadata (of `topic`, or of all topics), asked again
    /// until `default.api.timeout.ms`, and no longer once the cluster
    /// refused the credentials.
    fn metadata(&self, topic: Option<&str>, operation: &str) -> Result<Metadata> {
        let deadline = Instant::now() + self.timeout;
        loop {
            let asked = Instant::now();
            let left = deadline.saturating_duration_since(asked);
            match self
                .inner
                .inner()
                .fetch_metadata(topic, left.min(Duration::from_millis(250)))
            {
                Ok(metadata) => return Ok(metadata),
                Err(e) => {
                    self.hear_why();
                    self.health.check(&self.client)?;
                    if left <= Duration::from_millis(250) {
                        return Err(self.fail(operation, topic.map(|t| (t, None)), e));
                    }
                    // An answer at once (no broker up): not a busy loop.
                    std::thread::sleep(Duration::from_millis(50).saturating_sub(asked.elapsed()));
                }
            }
        }
    }

    fn options(&self) -> AdminOptions {
        AdminOptions::new()
            .request_timeout(Some(self.timeout))
            .operation_timeout(Some(self.timeout))
    }

    fn wait<F: Future>(&self, operation: &str, future: F) -> Result<F::Output> {
        // The request has its own timeout; this one is for a lost answer.
        let refused = || self.health.auth_failure().is_some();
        match block_on(future, self.timeout + Duration::from_secs(5), refused) {
            Some(output) => Ok(output),
            None => {
                self.health.check(&self.client)?;
                Err(ClientError::Timeout {
                    operation: format!("{}: {operation}", self.client),
                    timeout_ms: i64::try_from(self.timeout.as_millis()).unwrap_or(i64::MAX),
                })
            }
        }
    }
}

impl KafkaAdmin {
    /// The configs set on `topic` itself (describe-configs entries whose
    /// source is the topic's own config: those given when it was created
    /// or altered since), by name; the broker's and Kafka's defaults are
    /// left out. A value the broker does not show (a sensitive one) is
    /// `None`. Kafka's `Admin.describeConfigs`, for checking what a topic,
    /// an internal one say, was created with.
    ///
    /// # Errors
    ///
    /// As the other admin calls: `Unreachable` or `Timeout` when the
    /// cluster does not answer within `default.api.timeout.ms`,
    /// `Authentication` when it refuses the credentials, and the broker's
    /// error (an unknown topic, say) for the topic.
    ///
    /// ```no_run
    /// use streams_clients::ClientConfig;
    /// use streams_kafka::KafkaClients;
    ///
    /// let clients = KafkaClients::new("127.0.0.1:9092");
    /// let admin = clients.kafka_admin(&ClientConfig::new())?;
    /// let configs = admin.topic_configs("app-counts-store-changelog")?;
    /// assert_eq!(configs["cleanup.policy"].as_deref(), Some("compact"));
    /// # Ok::<(), streams_clients::ClientError>(())
    /// ```
    pub fn topic_configs(&self, topic: &str) -> Result<BTreeMap<String, Option<String>>> {
        let options = self.options();
        let resources = self
            .wait(
                "topic_configs",
                self.inner
                    .describe_configs([&ResourceSpecifier::Topic(topic)], &options),
            )?
            .map_err(|e| self.fail("topic_configs", Some((topic, None)), e))?;
        let mut configs = BTreeMap::new();
        for resource in resources {
            let resource = resource.map_err(|code| {
                self.fail(
                    "topic_configs",
                    Some((topic, None)),
                    KafkaError::AdminOp(code),
                )
            })?;
            for entry in resource.entries {
                if entry.source == ConfigSource::DynamicTopic {
                    configs.insert(entry.name, entry.value);
                }
            }
        }
        Ok(configs)
    }
}

impl Admin for KafkaAdmin {
    fn list_topics(&mut self) -> Result<Vec<String>> {
        let metadata = self.metadata(None, "list_topics")?;
        let mut names: Vec<String> = metadata
            .topics()
            .iter()
            .filter(|t| t.error().is_none())
            .map(|t| t.name().to_owned())
            .filter(|n| n != "__consumer_offsets" && n != "__transaction_state")
            .collect();
        names.sort();
        Ok(names)
    }

    fn create_topic(&mut self, topic: &NewTopic) -> Result<()> {
        let mut new = RdNewTopic::new(
            &topic.name,
            topic.partitions,
            TopicReplication::Fixed(i32::from(topic.replication_factor)),
        );
        for (name, value) in &topic.configs {
            new = new.set(name, value);
        }
        let options = self.options();
        let results = self
            .wait("create_topic", self.inner.create_topics([&new], &options))?
            .map_err(|e| self.fail("create_topic", Some((&topic.name, None)), e))?;
        for result in results {
            match result {
                Ok(_) => {}
                Err((name, RDKafkaErrorCode::TopicAlreadyExists)) => {
                    return Err(ClientError::TopicExists { topic: name });
                }
                Err((name, code)) => {
                    return Err(self.fail(
                        "create_topic",
                        Some((&name, None)),
                        KafkaError::AdminOp(code),
                    ));
                }
            }
        }
        // The controller has the topic; wait until the metadata shows it
        // (as Kafka Streams' InternalTopicManager does), so that a
        // partition count or a subscription right after sees it.
        let deadline = Instant::now() + self.timeout;
        while self.partition_count(&topic.name)? != Some(topic.partitions) {
            if Instant::now() > deadline {
                return Err(ClientError::Timeout {
                    operation: format!(
                        "{}: waiting for the metadata of the new topic {}",
                        self.client, topic.name
                    ),
                    timeout_ms: i64::try_from(self.timeout.as_millis()).unwrap_or(i64::MAX),
                });
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    fn partition_count(&mut self, topic: &str) -> Result<Option<i32>> {
        let metadata = self.metadata(Some(topic), "partition_count")?;
        let Some(t) = metadata.topics().iter().find(|t| t.name() == topic) else {
            return Ok(None);
        };
        match t.error() {
            None => Ok(Some(
                i32::try_from(t.partitions().len()).unwrap_or(i32::MAX),
            )),
            Some(RDKafkaRespErr::RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) => Ok(None),
            Some(err) => Err(self.fail(
                "partition_count",
                Some((topic, None)),
                KafkaError::MetadataFetch(err.into()),
            )),
        }
    }

    fn delete_records(&mut self, before: &BTreeMap<TopicPartition, i64>) -> Result<()> {
        if before.is_empty() {
            return Ok(());
        }
        let mut tpl = TopicPartitionList::with_capacity(before.len());
        for (tp, offset) in before {
            tpl.add_partition_offset(&tp.topic, tp.partition, Offset::Offset(*offset))
                .map_err(|e| self.fail("delete_records", None, e))?;
        }
        let options = self.options();
        let result = self
            .wait("delete_records", self.inner.delete_records(&tpl, &options))?
            .map_err(|e| self.fail("delete_records", None, e))?;
        for e in result.elements() {
            if let Err(err) = e.error() {
                return Err(self.fail(
                    "delete_records",
                    Some((e.topic(), Some(e.partition()))),
                    err,
                ));
            }
        }
        Ok(())
    }
}
