//! [`KafkaProducer`]: the client API's [`Producer`] over rdkafka's
//! `ThreadedProducer` (its thread serves the delivery reports, which
//! librdkafka needs while a transaction commits or aborts). A send enqueues the record in librdkafka with its
//! sequence number as the delivery opaque; [`flush`](Producer::flush)
//! waits for every delivery report and returns the metadata in send
//! order. Transactions are librdkafka's (`init_transactions`,
//! `begin_transaction`, `send_offsets_to_transaction` with the consumer's
//! group metadata, `commit_transaction`, `abort_transaction`); a producer
//! fenced by a newer one of the same `transactional.id` (librdkafka's
//! `PRODUCER_FENCED`, `INVALID_PRODUCER_EPOCH` or its local `_FENCED`)
//! is [`ClientError::ProducerFenced`].

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use rdkafka::client::ClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{DeliveryResult, Header as RdHeader, OwnedHeaders};
use rdkafka::producer::{BaseRecord, Producer as _, ProducerContext, ThreadedProducer};
use rdkafka::{Message, TopicPartitionList};
use streams_clients::{
    ClientError, GroupMetadata, Producer, ProducerRecord, RecordMetadata, Result, TopicPartition,
};

use crate::consumer::Registry;
use crate::error::{client_error, code_of, is_fencing, is_stale_member};
use crate::health::Health;

type Delivery = std::result::Result<RecordMetadata, (KafkaError, String, Option<i32>)>;

/// Collects delivery reports by sequence number; log lines and errors go
/// through the supplier's [`Health`].
#[derive(Debug)]
pub(crate) struct DeliveryContext {
    reports: Mutex<BTreeMap<usize, Delivery>>,
    /// Notified when the reports reach `awaited`, for [`Producer::flush`].
    delivered: Condvar,
    /// How many reports a waiting flush needs (0: none waits), read and
    /// written with `reports` locked: a notification per report would be
    /// a futex call per record.
    awaited: AtomicUsize,
    client: String,
    health: Arc<Health>,
}

impl ClientContext for DeliveryContext {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, log_message: &str) {
        self.health.on_log(&self.client, level, fac, log_message);
    }

    fn error(&self, error: KafkaError, reason: &str) {
        self.health.on_error(&self.client, &error, reason);
    }
}

impl ProducerContext for DeliveryContext {
    type DeliveryOpaque = usize;

    fn delivery(&self, result: &DeliveryResult<'_>, seq: usize) {
        let report = match result {
            Ok(m) => Ok(RecordMetadata {
                topic: m.topic().to_owned(),
                partition: m.partition(),
                offset: m.offset(),
                timestamp: m.timestamp().to_millis().unwrap_or(-1),
            }),
            Err((e, m)) => Err((e.clone(), m.topic().to_owned(), Some(m.partition()))),
        };
        if let Ok(mut reports) = self.reports.lock() {
            reports.insert(seq, report);
            let awaited = self.awaited.load(Ordering::Relaxed);
            if awaited > 0 && reports.len() >= awaited {
                self.delivered.notify_all();
            }
        }
    }
}

/// A producer on a real cluster. See the [module docs](self).
pub struct KafkaProducer {
    inner: ThreadedProducer<DeliveryContext>,
    client: String,
    transactional_id: Option<String>,
    timeout: Duration,
    /// The sequence number of the next send, and of the first unflushed one.
    next: usize,
    unflushed: usize,
    registry: Arc<Registry>,
    health: Arc<Health>,
}

impl std::fmt::Debug for KafkaProducer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KafkaProducer")
            .field("client", &self.client)
            .field("transactional_id", &self.transactional_id)
            .field("unflushed", &(self.next - self.unflushed))
            .finish_non_exhaustive()
    }
}

impl KafkaProducer {
    pub(crate) fn new(
        config: &rdkafka::ClientConfig,
        client: String,
        timeout: Duration,
        registry: Arc<Registry>,
        health: Arc<Health>,
    ) -> Result<Self> {
        let context = DeliveryContext {
            reports: Mutex::new(BTreeMap::new()),
            delivered: Condvar::new(),
            awaited: AtomicUsize::new(0),
            client: client.clone(),
            health: health.clone(),
        };
        let inner: ThreadedProducer<DeliveryContext> = config
            .create_with_context(context)
            .map_err(|e| client_error(&client, timeout, "creating the producer", None, e))?;
        Ok(KafkaProducer {
            inner,
            transactional_id: config.get("transactional.id").map(str::to_owned),
            client,
            timeout,
            next: 0,
            unflushed: 0,
            registry,
            health,
        })
    }

    /// A transaction call's error: fenced, a stale group generation, or
    /// another error of the client.
    fn txn_error(&self, operation: &'static str, err: KafkaError) -> ClientError {
        let mut code = code_of(&err);
        if code == Some(RDKafkaErrorCode::Fatal) {
            code = self.inner.client().fatal_error().map(|(c, _)| c);
        }
        match code {
            Some(c) if is_fencing(c) => ClientError::ProducerFenced {
                transactional_id: self.transactional_id.clone().unwrap_or_default(),
                detail: format!("{operation}: {err}"),
            },
            Some(c) if is_stale_member(c) => ClientError::CommitFailed {
                group: String::new(),
                detail: format!("{operation}: {err}"),
            },
            Some(RDKafkaErrorCode::State) => ClientError::InvalidState {
                client: self.client.clone(),
                operation,
                state: err.to_string(),
                hint: "call init_transactions once, then begin_transaction before sending, and commit or abort it",
            },
            _ => self.fail(operation, None, err),
        }
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

    fn require_transactional(&self, operation: &'static str) -> Result<()> {
        if self.transactional_id.is_some() {
            return Ok(());
        }
        Err(ClientError::InvalidState {
            client: self.client.clone(),
            operation,
            state: "non-transactional (made without a transactional.id)".to_owned(),
            hint: "create the producer with a transactional.id to use transactions",
        })
    }

    /// Sends what librdkafka holds back for `linger.ms` at once, waits
    /// for the delivery report of every send since the last flush (as the
    /// producer's thread hands them over), up to `default.api.timeout.ms`,
    /// and takes them (the missing ones are missing from the map).
    /// rdkafka's own `flush` waits in 100 ms slices that do not end when
    /// the last report comes, so that every flush took at least 100 ms.
    fn take_reports(&self) -> Result<BTreeMap<usize, Delivery>> {
        let (from, to) = (self.unflushed, self.next);
        // librdkafka's rd_kafka_flush without waiting: it wakes the brokers
        // to send the queued records now.
        match self.inner.flush(Duration::ZERO) {
            Ok(()) => {}
            Err(KafkaError::Flush(RDKafkaErrorCode::OperationTimedOut)) => {}
            Err(e) => return Err(self.txn_error("flush", e)),
        }
        let poisoned = || ClientError::InvalidState {
            client: self.client.clone(),
            operation: "flush",
            state: "poisoned delivery reports".to_owned(),
            hint: "create a new producer",
        };
        let context = self.inner.context();
        let deadline = Instant::now() + self.timeout;
        let mut guard = context.reports.lock().map_err(|_| poisoned())?;
        loop {
            // Late reports of sends before the last flush (of an aborted
            // transaction, say) are of no one's interest.
            if guard.first_key_value().is_some_and(|(&seq, _)| seq < from) {
                *guard = guard.split_off(&from);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if guard.len() >= to - from || left.is_zero() {
                break;
            }
            context.awaited.store(to - from, Ordering::Relaxed);
            guard = context
                .delivered
                .wait_timeout(guard, left)
                .map_err(|_| poisoned())?
                .0;
        }
        context.awaited.store(0, Ordering::Relaxed);
        Ok(std::mem::take(&mut *guard))
    }

    /// Drops the delivery reports of the sends since the last flush (their
    /// transaction was aborted or committed without a flush call).
    fn forget_unflushed(&mut self) {
        if let Ok(mut reports) = self.inner.context().reports.lock() {
            reports.clear();
        }
        self.unflushed = self.next;
    }
}

impl Producer for KafkaProducer {
    fn send(&mut self, record: ProducerRecord) -> Result<()> {
        let mut headers = OwnedHeaders::new_with_capacity(record.headers.len());
        for h in &record.headers {
            headers = headers.insert(RdHeader {
                key: &h.key,
                value: h.value.as_deref(),
            });
        }
        let seq = self.next;
        let mut base: BaseRecord<'_, [u8], [u8], usize> =
            BaseRecord::with_opaque_to(&record.topic, seq).headers(headers);
        if let Some(k) = record.key.as_deref() {
            base = base.key(k);
        }
        if let Some(v) = record.value.as_deref() {
            base = base.payload(v);
        }
        if let Some(p) = record.partition {
            base = base.partition(p);
        }
        if let Some(ts) = record.timestamp {
            base = base.timestamp(ts);
        }
        let deadline = Instant::now() + self.timeout;
        loop {
            match self.inner.send(base) {
                Ok(()) => break,
                Err((e, back))
                    if code_of(&e) == Some(RDKafkaErrorCode::QueueFull)
                        && Instant::now() < deadline =>
                {
                    // The queue drains as deliveries are reported.
                    std::thread::sleep(Duration::from_millis(10));
                    base = back;
                }
                Err((e, _)) => {
                    let topic = Some((record.topic.as_str(), record.partition));
                    return Err(match code_of(&e) {
                        Some(c) if is_fencing(c) || c == RDKafkaErrorCode::Fatal => {
                            self.txn_error("send", e)
                        }
                        Some(RDKafkaErrorCode::State) => self.txn_error("send", e),
                        _ => self.fail("send", topic, e),
                    });
                }
            }
        }
        self.next += 1;
        Ok(())
    }

    /// Sends what librdkafka holds back for `linger.ms` at once and waits
    /// for the delivery report of every send since the last flush, up to
    /// `default.api.timeout.ms`; it returns as the last report comes in
    /// (rdkafka's own flush waits in 100 ms slices).
    fn flush(&mut self) -> Result<Vec<RecordMetadata>> {
        let (from, to) = (self.unflushed, self.next);
        let mut reports = self.take_reports()?;
        self.unflushed = to;
        let mut out = Vec::with_capacity(to - from);
        for seq in from..to {
            match reports.remove(&seq) {
                Some(Ok(m)) => out.push(m),
                Some(Err((e, topic, partition))) => {
                    return Err(match code_of(&e) {
                        Some(c) if is_fencing(c) => self.txn_error("flush", e),
                        _ => self.fail("flush", Some((&topic, partition)), e),
                    });
                }
                None => {
                    return Err(self.health.refine(
                        &self.client,
                        ClientError::Timeout {
                            operation: format!(
                                "{}: flush (no delivery report for send {seq})",
                                self.client
                            ),
                            timeout_ms: i64::try_from(self.timeout.as_millis()).unwrap_or(i64::MAX),
                        },
                    ));
                }
            }
        }
        Ok(out)
    }

    /// Waits up to `default.api.timeout.ms`, in slices (librdkafka resumes
    /// a timed-out `init_transactions` when called again), and no longer
    /// once the cluster refused the credentials.
    fn init_transactions(&mut self) -> Result<()> {
        self.require_transactional("init_transactions")?;
        let deadline = Instant::now() + self.timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self
                .inner
                .init_transactions(left.min(Duration::from_millis(500)))
            {
                Ok(()) => return Ok(()),
                Err(e) => {
                    let retriable = matches!(&e, KafkaError::Transaction(t) if t.is_retriable());
                    self.health.check(&self.client)?;
                    if !retriable || left <= Duration::from_millis(500) {
                        return Err(self.txn_error("init_transactions", e));
                    }
                }
            }
        }
    }

    fn begin_transaction(&mut self) -> Result<()> {
        self.require_transactional("begin_transaction")?;
        self.inner
            .begin_transaction()
            .map_err(|e| self.txn_error("begin_transaction", e))
    }

    fn send_offsets_to_transaction(
        &mut self,
        offsets: &BTreeMap<TopicPartition, i64>,
        group: &GroupMetadata,
    ) -> Result<()> {
        self.require_transactional("send_offsets_to_transaction")?;
        let Some(metadata) = self.registry.group_metadata(&group.member_id) else {
            return Err(ClientError::CommitFailed {
                group: group.group_id.clone(),
                detail: format!(
                    "the consumer of member {} is closed, so its group metadata is gone",
                    group.member_id
                ),
            });
        };
        let mut tpl = TopicPartitionList::with_capacity(offsets.len());
        for (tp, offset) in offsets {
            tpl.add_partition_offset(&tp.topic, tp.partition, rdkafka::Offset::Offset(*offset))
                .map_err(|e| self.fail("send_offsets_to_transaction", None, e))?;
        }
        self.inner
            .send_offsets_to_transaction(&tpl, &metadata, self.timeout)
            .map_err(|e| match self.txn_error("send_offsets_to_transaction", e) {
                ClientError::CommitFailed { detail, .. } => ClientError::CommitFailed {
                    group: group.group_id.clone(),
                    detail,
                },
                other => other,
            })
    }

    fn commit_transaction(&mut self) -> Result<()> {
        self.require_transactional("commit_transaction")?;
        // rdkafka's commit_transaction first flushes in its 100 ms slices:
        // with every report in, its flush returns at once. A failed
        // delivery fails the commit in librdkafka.
        self.take_reports()?;
        let result = self
            .inner
            .commit_transaction(self.timeout)
            .map_err(|e| self.txn_error("commit_transaction", e));
        self.forget_unflushed();
        result
    }

    fn abort_transaction(&mut self) -> Result<()> {
        self.require_transactional("abort_transaction")?;
        let result = self
            .inner
            .abort_transaction(self.timeout)
            .map_err(|e| self.txn_error("abort_transaction", e));
        self.forget_unflushed();
        result
    }
}
