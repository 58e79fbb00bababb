//! The simulated side: replays a scenario's steps, as Kafka's JSON gives
//! their inputs (topic, configs, records, offsets, sleeps), on a
//! [`Cluster`] on a mock clock, and writes each step's answer in the Java
//! tool's JSON shape (`compat/broker/SCENARIOS.md`).
//!
//! Time: the mock clock starts a day after `T0`, so that every record is
//! older than `segment.ms` and each produce step after the first starts a
//! new segment, as on the real broker (SCENARIOS.md, "Facts"). Only `sleep`
//! and `wait_compacted` move it: a `sleep` by its `ms`, a `wait_compacted`
//! as the Java step waits (a read, then 250 ms steps until the read
//! changes, then 1 s steps until three reads agree). The cleaner and
//! retention run on their 1 s schedules (`log.cleaner.backoff.ms`,
//! `log.retention.check.interval.ms`, as `scripts/kafka-up` sets them).

use std::collections::{BTreeMap, HashMap};

use bytes::Bytes;
use serde_json::{Map, Value, json};
use streams_broker::partitioner::partition_for_key;
use streams_broker::record::{Header, Record};
use streams_broker::{
    AutoOffsetReset, BrokerError, Cluster, ConsumerConfig, ConsumerRecord, IsolationLevel,
    NewTopic, OffsetSpec, Producer, ProducerConfig, TopicPartition,
};

/// `T0` of the scenarios.
pub(crate) const T0: i64 = 1_700_000_000_000;

/// The Java consumer polls for at most 15 s, 200 ms a poll.
const MAX_CONSUME_POLLS: usize = 75;

/// The Java class name of the exception Kafka's clients throw for the
/// error code behind each variant.
pub(crate) fn java_exception(e: &BrokerError) -> String {
    match e {
        BrokerError::UnknownTopic { .. } | BrokerError::UnknownPartition { .. } => {
            "UnknownTopicOrPartitionException"
        }
        BrokerError::OffsetOutOfRange { .. } => "OffsetOutOfRangeException",
        BrokerError::PolicyViolation { .. } => "PolicyViolationException",
        BrokerError::RecordTooLarge { .. } => "RecordTooLargeException",
        BrokerError::TopicAlreadyExists { .. } => "TopicExistsException",
        BrokerError::InvalidTopic { .. } => "InvalidTopicException",
        BrokerError::InvalidPartitions { .. } => "InvalidPartitionsException",
        BrokerError::InvalidReplicationFactor { .. } => "InvalidReplicationFactorException",
        BrokerError::InvalidConfig { .. } => "InvalidConfigurationException",
        BrokerError::NoOffsetForPartition { .. } => "NoOffsetForPartitionException",
        BrokerError::NotAssigned { .. } => "IllegalStateException",
        BrokerError::CorruptRecord { .. } => "CorruptRecordException",
        BrokerError::ProducerFenced { .. } => "ProducerFencedException",
        BrokerError::InvalidProducerEpoch { .. } => "InvalidProducerEpochException",
        BrokerError::InvalidTxnState { .. } => "IllegalStateException",
        BrokerError::InvalidTxnTransition { .. } => "InvalidTxnStateException",
        other => return format!("BrokerError::{other:?}"),
    }
    .to_owned()
}

/// `"ok"`, or the error's JSON.
fn outcome(result: Result<(), BrokerError>) -> Value {
    match result {
        Ok(()) => json!("ok"),
        Err(e) => Value::Object(error(&e)),
    }
}

fn isolation_of(step: &Value) -> Result<IsolationLevel, String> {
    match str_field(step, "isolation")? {
        "read_committed" => Ok(IsolationLevel::ReadCommitted),
        "read_uncommitted" => Ok(IsolationLevel::ReadUncommitted),
        other => Err(format!("unknown isolation {other:?}")),
    }
}

fn error(e: &BrokerError) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("error".into(), json!(java_exception(e)));
    m.insert("message".into(), json!(e.to_string()));
    m
}

/// Bytes as the Java tool writes them: UTF-8 text, or `hex:...`.
fn text(b: Option<&[u8]>) -> Value {
    match b {
        None => Value::Null,
        Some(b) => match std::str::from_utf8(b) {
            Ok(s) => json!(s),
            Err(_) => json!(format!(
                "hex:{}",
                b.iter().map(|x| format!("{x:02x}")).collect::<String>()
            )),
        },
    }
}

fn headers_json(headers: &[Header]) -> Value {
    Value::Array(
        headers
            .iter()
            .map(|h| json!([h.key, text(h.value.as_deref())]))
            .collect(),
    )
}

fn record_json(r: &ConsumerRecord) -> Value {
    json!({
        "offset": r.offset,
        "key": text(r.key.as_deref()),
        "value": text(r.value.as_deref()),
        "headers": headers_json(&r.headers),
        "timestamp": r.timestamp,
    })
}

fn field<'a>(step: &'a Value, name: &str) -> Result<&'a Value, String> {
    step.get(name)
        .ok_or_else(|| format!("step {step} has no field {name:?}"))
}

fn str_field<'a>(step: &'a Value, name: &str) -> Result<&'a str, String> {
    field(step, name)?
        .as_str()
        .ok_or_else(|| format!("field {name:?} of {step} is not a string"))
}

fn int_field(step: &Value, name: &str) -> Result<i64, String> {
    field(step, name)?
        .as_i64()
        .ok_or_else(|| format!("field {name:?} of {step} is not an integer"))
}

fn tp_of(step: &Value) -> Result<TopicPartition, String> {
    let partition = i32::try_from(int_field(step, "partition")?).map_err(|e| e.to_string())?;
    Ok(TopicPartition::new(str_field(step, "topic")?, partition))
}

fn bytes_of(v: &Value) -> Result<Option<Bytes>, String> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(Bytes::from(s.clone().into_bytes()))),
        other => Err(format!("not a string or null: {other}")),
    }
}

fn record_of(v: &Value) -> Result<Record, String> {
    let headers = field(v, "headers")?
        .as_array()
        .ok_or("headers is not an array")?
        .iter()
        .map(|h| {
            let key = h[0].as_str().ok_or("a header key is not a string")?;
            Ok(match bytes_of(&h[1])? {
                Some(value) => Header::new(key, value),
                None => Header::null(key),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Record {
        key: bytes_of(field(v, "key")?)?,
        value: bytes_of(field(v, "value")?)?,
        headers,
        timestamp: int_field(v, "timestamp")?,
    })
}

/// The step's inputs: everything but its answers.
fn inputs(step: &Value) -> Map<String, Value> {
    let mut m = step.as_object().cloned().unwrap_or_default();
    for answer in ["result", "results", "earliest", "latest"] {
        m.remove(answer);
    }
    if matches!(
        m.get("step").and_then(Value::as_str),
        Some("read" | "read_isolated")
    ) {
        m.remove("records");
        m.remove("position");
    }
    m
}

/// The simulated cluster and what the Java tool's `model` tracks: per
/// partition, the records a read would return if nothing were cleaned.
struct Mirror {
    cluster: Cluster,
    model: HashMap<TopicPartition, Vec<Value>>,
    /// The transactional producers, by the name the steps give them.
    producers: HashMap<String, Producer>,
}

/// Runs the steps on a fresh simulated cluster; the answers, one per step.
pub(crate) fn run(steps: &[Value]) -> Result<Vec<Value>, String> {
    let cluster = Cluster::builder()
        .start_time_ms(T0 + 86_400_000)
        .log_cleaner_backoff_ms(1_000)
        .log_retention_check_interval_ms(1_000)
        .build();
    let mut mirror = Mirror {
        cluster,
        model: HashMap::new(),
        producers: HashMap::new(),
    };
    steps
        .iter()
        .enumerate()
        .map(|(i, step)| {
            mirror
                .step(step)
                .map_err(|e| format!("step {i} ({}): {e}", step["step"]))
        })
        .collect()
}

impl Mirror {
    fn step(&mut self, step: &Value) -> Result<Value, String> {
        let mut out = inputs(step);
        let kind = str_field(step, "step")?;
        match kind {
            "create_topic" => {
                let mut topic = NewTopic::new(
                    str_field(step, "topic")?,
                    i32::try_from(int_field(step, "partitions")?).map_err(|e| e.to_string())?,
                );
                for (k, v) in field(step, "configs")?
                    .as_object()
                    .ok_or("configs is not an object")?
                {
                    topic = topic.config(k, v.as_str().ok_or("a config value is not a string")?);
                }
                let result = match self.cluster.admin().create_topic(topic) {
                    Ok(()) => json!("ok"),
                    Err(e) => Value::Object(error(&e)),
                };
                out.insert("result".into(), result);
            }
            "produce" => {
                let results = self.produce(step)?;
                out.insert("results".into(), Value::Array(results));
            }
            "delete_records" => {
                let tp = tp_of(step)?;
                let before = int_field(step, "before_offset")?;
                let result = match self.cluster.admin().delete_records_before(&tp, before) {
                    Ok(lw) => {
                        if let Some(m) = self.model.get_mut(&tp) {
                            m.retain(|r| r["offset"].as_i64().is_some_and(|o| o >= lw));
                        }
                        json!({ "low_watermark": lw })
                    }
                    Err(e) => Value::Object(error(&e)),
                };
                out.insert("result".into(), result);
            }
            "list_offsets" => {
                let tp = tp_of(step)?;
                let spec = match str_field(step, "spec")? {
                    "earliest" => OffsetSpec::Earliest,
                    "latest" => OffsetSpec::Latest,
                    "max_timestamp" => OffsetSpec::MaxTimestamp,
                    "timestamp" => OffsetSpec::Timestamp(int_field(step, "timestamp")?),
                    other => return Err(format!("unknown offset spec {other:?}")),
                };
                let result = match self.cluster.admin().list_offsets(&tp, spec) {
                    Ok(Some(o)) => json!({
                        "offset": o.offset,
                        "timestamp": o.timestamp.unwrap_or(-1),
                    }),
                    Ok(None) => json!({ "offset": -1, "timestamp": -1 }),
                    Err(e) => Value::Object(error(&e)),
                };
                out.insert("result".into(), result);
            }
            "read" => {
                let tp = tp_of(step)?;
                let admin = self.cluster.admin();
                match self.read_all(&tp).and_then(|records| {
                    let earliest = admin.list_offsets(&tp, OffsetSpec::Earliest)?;
                    let latest = admin.list_offsets(&tp, OffsetSpec::Latest)?;
                    Ok((records, earliest, latest))
                }) {
                    Ok((records, earliest, latest)) => {
                        self.model.insert(tp, records.clone());
                        out.insert("records".into(), Value::Array(records));
                        out.insert("earliest".into(), json!(earliest.map(|o| o.offset)));
                        out.insert("latest".into(), json!(latest.map(|o| o.offset)));
                    }
                    Err(e) => {
                        out.insert("result".into(), Value::Object(error(&e)));
                    }
                }
            }
            "consume" => {
                let result = self.consume(step)?;
                out.insert("result".into(), result);
            }
            "sleep" => self.cluster.advance_ms(int_field(step, "ms")?),
            "wait_compacted" => {
                let tp = tp_of(step)?;
                let result = self.wait_compacted(&tp).map_err(|e| e.to_string())?;
                out.insert("result".into(), json!(result));
            }
            "txn_init" => {
                let timeout_ms = match step.get("transaction_timeout_ms") {
                    Some(v) => v
                        .as_i64()
                        .ok_or("transaction_timeout_ms is not an integer")?,
                    None => 60_000,
                };
                let producer = self.cluster.producer_with(
                    ProducerConfig::new()
                        .transactional_id(str_field(step, "transactional_id")?)
                        .transaction_timeout_ms(timeout_ms),
                );
                let result = producer.init_transactions();
                self.producers
                    .insert(str_field(step, "producer")?.to_owned(), producer);
                out.insert("result".into(), outcome(result));
            }
            "txn_begin" | "txn_commit" | "txn_abort" => {
                let producer = self.transactional(step)?;
                let result = match kind {
                    "txn_begin" => producer.begin_transaction(),
                    "txn_commit" => producer.commit_transaction(),
                    _ => producer.abort_transaction(),
                };
                out.insert("result".into(), outcome(result));
            }
            "txn_produce" => {
                let results = self.produce(step)?;
                out.insert("results".into(), Value::Array(results));
            }
            "wait_stable" => {
                // The simulated coordinator writes its markers before the
                // commit or abort returns: stable at once.
                let tp = tp_of(step)?;
                let info = self.cluster.log_info(&tp).map_err(|e| e.to_string())?;
                let stable = info.last_stable_offset == info.high_watermark;
                out.insert(
                    "result".into(),
                    json!(if stable { "stable" } else { "unstable" }),
                );
            }
            "list_offsets_isolated" => {
                let tp = tp_of(step)?;
                let isolation = isolation_of(step)?;
                let result =
                    match self
                        .cluster
                        .admin()
                        .list_offsets_with(&tp, OffsetSpec::Latest, isolation)
                    {
                        Ok(o) => json!({ "offset": o.map_or(-1, |o| o.offset) }),
                        Err(e) => Value::Object(error(&e)),
                    };
                out.insert("result".into(), result);
            }
            "read_isolated" => {
                let tp = tp_of(step)?;
                let (records, position) = self
                    .read_isolated(&tp, isolation_of(step)?)
                    .map_err(|e| e.to_string())?;
                out.insert("records".into(), Value::Array(records));
                out.insert("position".into(), json!(position));
            }
            other => return Err(format!("unknown step kind {other:?}")),
        }
        Ok(Value::Object(out))
    }

    /// The transactional producer a step names.
    fn transactional(&self, step: &Value) -> Result<&Producer, String> {
        let name = str_field(step, "producer")?;
        self.producers
            .get(name)
            .ok_or_else(|| format!("no txn_init made a producer {name:?}"))
    }

    /// The Java tool's `readIsolated`: a consumer at the isolation level
    /// from the beginning until its position reaches its end offset taken
    /// at the start (the LSO under `read_committed`).
    fn read_isolated(
        &self,
        tp: &TopicPartition,
        isolation: IsolationLevel,
    ) -> Result<(Vec<Value>, i64), BrokerError> {
        let end = self
            .cluster
            .admin()
            .list_offsets_with(tp, OffsetSpec::Latest, isolation)?
            .map_or(0, |o| o.offset);
        let mut consumer = self.cluster.consumer(
            ConsumerConfig::new()
                .auto_offset_reset(AutoOffsetReset::Earliest)
                .enable_auto_commit(false)
                .isolation_level(isolation),
        );
        consumer.assign([tp.clone()]);
        consumer.seek_to_beginning(tp)?;
        let mut out = Vec::new();
        let mut polls = 0;
        while consumer.position(tp)? < end {
            polls += 1;
            assert!(
                polls < 100_000,
                "read of {tp} stuck at {} < {end}",
                consumer.position(tp)?
            );
            out.extend(consumer.poll()?.iter().map(record_json));
        }
        Ok((out, consumer.position(tp)?))
    }

    /// One batch per partition, the records in the order given (the Java
    /// producer with `linger.ms=10000` and one `flush` per step); a
    /// `txn_produce` step sends with its transactional producer.
    fn produce(&mut self, step: &Value) -> Result<Vec<Value>, String> {
        let topic = str_field(step, "topic")?;
        let records: Vec<Record> = field(step, "records")?
            .as_array()
            .ok_or("records is not an array")?
            .iter()
            .map(record_of)
            .collect::<Result<_, _>>()?;
        let all_fail = |e: &BrokerError| vec![Value::Object(error(e)); records.len()];
        // The partition of each record.
        let partitions: Vec<i32> = match field(step, "partition")?.as_i64() {
            Some(p) => vec![i32::try_from(p).map_err(|e| e.to_string())?; records.len()],
            None => {
                let count = match self.cluster.admin().partition_count(topic) {
                    Ok(n) => n,
                    Err(e) => return Ok(all_fail(&e)),
                };
                records
                    .iter()
                    .map(|r| {
                        let key = r
                            .key
                            .as_deref()
                            .ok_or("the mirror does not model sticky partitioning of null keys")?;
                        partition_for_key(key, count).map_err(|e| format!("{e:?}"))
                    })
                    .collect::<Result<_, String>>()?
            }
        };
        let mut by_partition: BTreeMap<i32, Vec<usize>> = BTreeMap::new();
        for (i, p) in partitions.iter().enumerate() {
            by_partition.entry(*p).or_default().push(i);
        }
        let mut results = vec![Value::Null; records.len()];
        let plain;
        let producer = if str_field(step, "step")? == "txn_produce" {
            self.transactional(step)?
        } else {
            plain = self.cluster.producer();
            &plain
        };
        let mut model = Vec::new();
        for (p, indices) in by_partition {
            let tp = TopicPartition::new(topic, p);
            let batch = indices.iter().map(|&i| records[i].clone());
            match producer.send_batch(&tp, batch) {
                Ok(Some((first, _))) => {
                    for (n, &i) in indices.iter().enumerate() {
                        let offset = first + i64::try_from(n).map_err(|e| e.to_string())?;
                        let r = &records[i];
                        results[i] =
                            json!({ "partition": p, "offset": offset, "timestamp": r.timestamp });
                        model.push((
                            tp.clone(),
                            json!({
                                "offset": offset,
                                "key": text(r.key.as_deref()),
                                "value": text(r.value.as_deref()),
                                "headers": headers_json(&r.headers),
                                "timestamp": r.timestamp,
                            }),
                        ));
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    for &i in &indices {
                        results[i] = Value::Object(error(&e));
                    }
                }
            }
        }
        for (tp, record) in model {
            self.model.entry(tp).or_default().push(record);
        }
        Ok(results)
    }

    /// The Java tool's `readAll`: a new consumer from the beginning until
    /// its position reaches the high watermark taken at the start.
    fn read_all(&self, tp: &TopicPartition) -> Result<Vec<Value>, BrokerError> {
        let end = self
            .cluster
            .admin()
            .list_offsets(tp, OffsetSpec::Latest)?
            .map_or(0, |o| o.offset);
        let mut consumer = self.cluster.consumer(
            ConsumerConfig::new()
                .auto_offset_reset(AutoOffsetReset::Earliest)
                .enable_auto_commit(false),
        );
        consumer.assign([tp.clone()]);
        consumer.seek_to_beginning(tp)?;
        let mut out = Vec::new();
        let mut polls = 0;
        while consumer.position(tp)? < end {
            polls += 1;
            assert!(
                polls < 100_000,
                "read of {tp} stuck at {} < {end}",
                consumer.position(tp)?
            );
            out.extend(consumer.poll()?.iter().map(record_json));
        }
        Ok(out)
    }

    /// The Java tool's `consume`: a consumer with that reset policy, seeked
    /// to `seek`, polling (at least once) until its position is the high
    /// watermark taken at the start, it fails, or 15 s of polls pass.
    fn consume(&self, step: &Value) -> Result<Value, String> {
        let tp = tp_of(step)?;
        let reset = match str_field(step, "auto_offset_reset")? {
            "earliest" => AutoOffsetReset::Earliest,
            "latest" => AutoOffsetReset::Latest,
            "none" => AutoOffsetReset::None,
            other => return Err(format!("unknown auto_offset_reset {other:?}")),
        };
        let seek = int_field(step, "seek")?;
        let end = match self.cluster.admin().list_offsets(&tp, OffsetSpec::Latest) {
            Ok(o) => o.map_or(0, |o| o.offset),
            Err(e) => return Ok(Value::Object(error(&e))),
        };
        let mut consumer = self.cluster.consumer(
            ConsumerConfig::new()
                .auto_offset_reset(reset)
                .enable_auto_commit(false),
        );
        consumer.assign([tp.clone()]);
        let mut records = Vec::new();
        let outcome = (|| {
            consumer.seek(&tp, seek)?;
            for _ in 0..MAX_CONSUME_POLLS {
                records.extend(consumer.poll()?.iter().map(record_json));
                if consumer.position(&tp)? == end {
                    break;
                }
            }
            consumer.position(&tp)
        })();
        Ok(match outcome {
            Ok(position) => json!({ "records": records, "position": position }),
            Err(e) => {
                let mut m = error(&e);
                m.insert("records".into(), Value::Array(records));
                Value::Object(m)
            }
        })
    }

    /// The Java tool's `wait_compacted`, on the mock clock.
    fn wait_compacted(&mut self, tp: &TopicPartition) -> Result<&'static str, BrokerError> {
        let before = self.model.get(tp).cloned().unwrap_or_default();
        let mut now = self.read_all(tp)?;
        let mut waited = 0;
        while now == before && waited < 60_000 {
            self.cluster.advance_ms(250);
            waited += 250;
            now = self.read_all(tp)?;
        }
        if now == before {
            return Ok("unchanged");
        }
        let mut same = 1;
        while same < 3 {
            self.cluster.advance_ms(1_000);
            let again = self.read_all(tp)?;
            same = if again == now { same + 1 } else { 1 };
            now = again;
        }
        self.model.insert(tp.clone(), now);
        Ok("compacted")
    }
}
