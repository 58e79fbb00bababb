//! [`KafkaAdmin`]: the client API's [`Admin`] over rdkafka's
//! `AdminClient`: topics created with their configs, partition counts
//! from the cluster's metadata, and delete-records. rdkafka's admin calls
//! are futures, resolved by its own background thread; this crate waits
//! for them on the calling thread (no async runtime).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic as RdNewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::types::RDKafkaRespErr;
use rdkafka::{Offset, TopicPartitionList};
use streams_clients::{Admin, ClientError, NewTopic, Result, TopicPartition};

use crate::error::client_error;

struct ThreadWaker(std::thread::Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `future` on this thread until it is ready or `timeout` passed.
fn block_on<F: Future>(future: F, timeout: Duration) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let waker = Waker::from(Arc::new(ThreadWaker(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let deadline = Instant::now() + timeout;
    loop {
        if let Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return Some(v);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        std::thread::park_timeout(left);
    }
}

/// An admin client on a real cluster. See the [module docs](self).
pub struct KafkaAdmin {
    inner: AdminClient<DefaultClientContext>,
    client: String,
    timeout: Duration,
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
    ) -> Result<Self> {
        let inner = config
            .create()
            .map_err(|e| client_error(&client, timeout, "creating the admin client", None, e))?;
        Ok(KafkaAdmin {
            inner,
            client,
            timeout,
        })
    }

    fn options(&self) -> AdminOptions {
        AdminOptions::new()
            .request_timeout(Some(self.timeout))
            .operation_timeout(Some(self.timeout))
    }

    fn wait<F: Future>(&self, operation: &str, future: F) -> Result<F::Output> {
        // The request has its own timeout; this one is for a lost answer.
        block_on(future, self.timeout + Duration::from_secs(5)).ok_or_else(|| {
            ClientError::Timeout {
                operation: format!("{}: {operation}", self.client),
                timeout_ms: i64::try_from(self.timeout.as_millis()).unwrap_or(i64::MAX),
            }
        })
    }
}

impl Admin for KafkaAdmin {
    fn list_topics(&mut self) -> Result<Vec<String>> {
        let metadata = self
            .inner
            .inner()
            .fetch_metadata(None, self.timeout)
            .map_err(|e| client_error(&self.client, self.timeout, "list_topics", None, e))?;
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
            .map_err(|e| {
                client_error(
                    &self.client,
                    self.timeout,
                    "create_topic",
                    Some((&topic.name, None)),
                    e,
                )
            })?;
        for result in results {
            match result {
                Ok(_) => {}
                Err((name, RDKafkaErrorCode::TopicAlreadyExists)) => {
                    return Err(ClientError::TopicExists { topic: name });
                }
                Err((name, code)) => {
                    return Err(client_error(
                        &self.client,
                        self.timeout,
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
        let metadata = self
            .inner
            .inner()
            .fetch_metadata(Some(topic), self.timeout)
            .map_err(|e| {
                client_error(
                    &self.client,
                    self.timeout,
                    "partition_count",
                    Some((topic, None)),
                    e,
                )
            })?;
        let Some(t) = metadata.topics().iter().find(|t| t.name() == topic) else {
            return Ok(None);
        };
        match t.error() {
            None => Ok(Some(
                i32::try_from(t.partitions().len()).unwrap_or(i32::MAX),
            )),
            Some(RDKafkaRespErr::RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) => Ok(None),
            Some(err) => Err(client_error(
                &self.client,
                self.timeout,
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
                .map_err(|e| client_error(&self.client, self.timeout, "delete_records", None, e))?;
        }
        let options = self.options();
        let result = self
            .wait("delete_records", self.inner.delete_records(&tpl, &options))?
            .map_err(|e| client_error(&self.client, self.timeout, "delete_records", None, e))?;
        for e in result.elements() {
            if let Err(err) = e.error() {
                return Err(client_error(
                    &self.client,
                    self.timeout,
                    "delete_records",
                    Some((e.topic(), Some(e.partition()))),
                    err,
                ));
            }
        }
        Ok(())
    }
}
