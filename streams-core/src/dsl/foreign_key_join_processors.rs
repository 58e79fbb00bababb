//! The processors of a foreign-key join, Kafka's
//! `SubscriptionSendProcessorSupplier`, `SubscriptionReceiveProcessorSupplier`,
//! `SubscriptionJoinProcessorSupplier`, `ForeignTableJoinProcessorSupplier`
//! and `ResponseJoinProcessorSupplier` (4.4 semantics).
//!
//! Records cross the two internal topics with typed keys (the foreign key,
//! then the primary key) and values already in their wire format
//! (`foreign_key_join_wire`): each processor resolves the serdes it needs
//! (given, else the config's default, else the built-in) when it starts,
//! so that a default serde from the config works inside the wrappers too.

use std::rc::Rc;
use std::sync::Arc;

use crate::config::resolve_serde;
use crate::dsl::foreign_key_join_wire::{
    Instruction, RESPONSE_VERSION, Response, SUBSCRIPTION_VERSION, Subscription, combined_key,
    combined_key_prefix, murmur3_hash128, split_combined_key,
};
use crate::dsl::table_processors::ValueGetter;
use crate::error::{RecordPart, Result, StreamsError};
use crate::processor::{Processor, ProcessorContext};
use crate::record::{Change, Record};
use crate::serde::{Serde, SerdeError, SerdeRef};

/// A response on its way to the response topic: its wire bytes, and the
/// partition of the primary record that asked, which Kafka's default
/// partitioner of the response topic sends it to (it is not written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResponseRecord {
    pub(crate) bytes: Vec<u8>,
    pub(crate) primary_partition: Option<i32>,
}

/// The serde of the response topic's values: the wire bytes as they are.
pub(crate) struct ResponseRecordSerde;

impl Serde<ResponseRecord> for ResponseRecordSerde {
    fn serialize(&self, _topic: &str, value: &ResponseRecord) -> Result<Vec<u8>, SerdeError> {
        Ok(value.bytes.clone())
    }

    fn serialize_owned(&self, _topic: &str, value: ResponseRecord) -> Result<Vec<u8>, SerdeError> {
        Ok(value.bytes)
    }

    fn serialize_owned_with_headers(
        &self,
        topic: &str,
        _headers: &mut crate::record::Headers,
        value: ResponseRecord,
    ) -> Result<Vec<u8>, SerdeError> {
        self.serialize_owned(topic, value)
    }

    fn deserialize(&self, _topic: &str, bytes: &[u8]) -> Result<ResponseRecord, SerdeError> {
        Ok(ResponseRecord {
            bytes: bytes.to_vec(),
            primary_partition: None,
        })
    }
}

/// A subscription as the foreign side's join reads it: the primary key
/// deserialized, the rest as it came.
#[derive(Debug, Clone)]
pub(crate) struct Received<K> {
    pub(crate) primary_key: K,
    pub(crate) subscription: Subscription,
}

/// The internal topics' names (without the application id), which also
/// make the pseudo topics Kafka serializes keys and values for
/// (`<application.id>-<subscription topic>-pk`, `-fk`, `-vh`).
#[derive(Debug, Clone)]
pub(crate) struct FkTopics {
    pub(crate) subscription: String,
    pub(crate) response: String,
}

/// Serdes a processor resolved when it started, with the topic each is
/// used for.
pub(crate) struct Ser<T> {
    serde: SerdeRef<T>,
    topic: String,
}

impl<T: 'static> Ser<T> {
    fn resolve<K, V>(
        given: &Option<SerdeRef<T>>,
        ctx: &ProcessorContext<'_, K, V>,
        part: RecordPart,
        topic: String,
    ) -> Result<Self> {
        let serde = resolve_serde(given, ctx.config(), ctx.node_name(), part)?;
        Ok(Ser { serde, topic })
    }

    fn pseudo<K, V>(
        given: &Option<SerdeRef<T>>,
        ctx: &ProcessorContext<'_, K, V>,
        part: RecordPart,
        topics: &FkTopics,
        suffix: &str,
    ) -> Result<Self> {
        let topic = format!("{}-{}{suffix}", ctx.application_id(), topics.subscription);
        Self::resolve(given, ctx, part, topic)
    }

    fn ser<K, V>(
        &self,
        ctx: &ProcessorContext<'_, K, V>,
        part: RecordPart,
        v: &T,
    ) -> Result<Vec<u8>> {
        self.serde
            .serialize(&self.topic, v)
            .map_err(|reason| StreamsError::Serialization {
                topic: self.topic.clone(),
                node: Some(ctx.node_name().to_owned()),
                part,
                reason,
            })
    }

    fn de<K, V>(&self, ctx: &ProcessorContext<'_, K, V>, part: RecordPart, b: &[u8]) -> Result<T> {
        self.serde
            .deserialize(&self.topic, b)
            .map_err(|reason| malformed(ctx, part, reason))
    }
}

fn not_started() -> StreamsError {
    StreamsError::processing("a foreign-key join processor was used before init")
}

/// A record of an internal topic that cannot be read, named by where it
/// came from.
fn malformed<K, V>(
    ctx: &ProcessorContext<'_, K, V>,
    part: RecordPart,
    reason: SerdeError,
) -> StreamsError {
    match ctx.record_metadata() {
        Some(m) => StreamsError::Deserialization {
            topic: m.topic.to_string(),
            partition: m.partition,
            offset: m.offset,
            part,
            reason,
        },
        None => StreamsError::Serialization {
            topic: String::new(),
            node: Some(ctx.node_name().to_owned()),
            part,
            reason,
        },
    }
}

fn unsupported<K, V>(
    ctx: &ProcessorContext<'_, K, V>,
    what: &'static str,
    version: u8,
    newest: u8,
) -> StreamsError {
    StreamsError::UnsupportedForeignKeyJoinVersion {
        node: ctx.node_name().to_owned(),
        topic: ctx
            .record_metadata()
            .map(|m| m.topic.to_string())
            .unwrap_or_default(),
        what,
        version,
        newest,
    }
}

/// Kafka's `SubscriptionSendProcessorSupplier`: turns each update of the
/// primary table into subscriptions keyed by foreign key.
pub(crate) struct SubscriptionSend<K, V, KO> {
    pub(crate) extractor: Rc<dyn Fn(&K, &V) -> Option<KO>>,
    pub(crate) left: bool,
    pub(crate) foreign_key_serde: Option<SerdeRef<KO>>,
    pub(crate) primary_key_serde: Option<SerdeRef<K>>,
    pub(crate) value_serde: Option<SerdeRef<V>>,
    pub(crate) topics: FkTopics,
    pub(crate) resolved: Option<(Ser<KO>, Ser<K>, Ser<V>)>,
}

impl<K, V, KO> SubscriptionSend<K, V, KO> {
    pub(crate) fn new(
        extractor: Rc<dyn Fn(&K, &V) -> Option<KO>>,
        left: bool,
        serdes: (
            Option<SerdeRef<KO>>,
            Option<SerdeRef<K>>,
            Option<SerdeRef<V>>,
        ),
        topics: FkTopics,
    ) -> Self {
        SubscriptionSend {
            extractor,
            left,
            foreign_key_serde: serdes.0,
            primary_key_serde: serdes.1,
            value_serde: serdes.2,
            topics,
            resolved: None,
        }
    }
}

impl<K, V, KO> Processor<K, Change<V>, KO, Vec<u8>> for SubscriptionSend<K, V, KO>
where
    K: Clone + 'static,
    V: Clone + 'static,
    KO: Clone + 'static,
{
    fn init(&mut self, ctx: &mut ProcessorContext<'_, KO, Vec<u8>>) -> Result<()> {
        let t = &self.topics;
        self.resolved = Some((
            Ser::pseudo(&self.foreign_key_serde, ctx, RecordPart::Key, t, "-fk")?,
            Ser::pseudo(&self.primary_key_serde, ctx, RecordPart::Key, t, "-pk")?,
            Ser::pseudo(&self.value_serde, ctx, RecordPart::Value, t, "-vh")?,
        ));
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, KO, Vec<u8>>,
        record: Record<K, Change<V>>,
    ) -> Result<()> {
        let (fk_ser, pk_ser, value_ser) = self.resolved.as_ref().ok_or_else(not_started)?;
        let (Some(key), Some(change)) = (&record.key, &record.value) else {
            ctx.count_dropped_record();
            return Ok(());
        };
        if !change.is_latest {
            // Kafka's versioned semantics: an out-of-order update of a
            // versioned table is skipped and counted.
            ctx.count_dropped_record();
            return Ok(());
        }
        let partition = ctx.record_metadata().map(|m| m.partition).ok_or_else(|| {
            StreamsError::processing(
                "a foreign-key join subscription needs the partition of the record it is for; \
                 forward table updates from process(), not from a punctuation",
            )
        })?;
        let hash = match &change.new {
            Some(v) => Some(murmur3_hash128(&value_ser.ser(
                ctx,
                RecordPart::Value,
                v,
            )?)),
            None => None,
        };
        let primary_key = pk_ser.ser(ctx, RecordPart::Key, key)?;
        let extract = |v: &Option<V>| v.as_ref().and_then(|v| (self.extractor)(key, v));
        let (old_fk, new_fk) = (extract(&change.old), extract(&change.new));
        let changed = |new: &Option<KO>, old: &KO| -> Result<bool> {
            let new = match new {
                Some(k) => Some(fk_ser.ser(ctx, RecordPart::Key, k)?),
                None => None,
            };
            Ok(new != Some(fk_ser.ser(ctx, RecordPart::Key, old)?))
        };
        let mut out: Vec<(Option<KO>, Instruction)> = Vec::with_capacity(2);
        if self.left {
            if change.old.is_none() && change.new.is_none() {
                return Ok(());
            }
            if let Some(old) = &old_fk
                && changed(&new_fk, old)?
            {
                out.push((old_fk.clone(), Instruction::DeleteKeyNoPropagate));
            }
            out.push((new_fk, Instruction::PropagateNullIfNoFkValAvailable));
        } else if change.new.is_some() {
            match (&old_fk, &new_fk) {
                (_, None) => {
                    // Kafka: "Skipping record due to null foreign key",
                    // counted as a dropped record.
                    ctx.count_dropped_record();
                    if old_fk.is_some() {
                        out.push((old_fk.clone(), Instruction::DeleteKeyAndPropagate));
                    }
                }
                (Some(old), Some(_)) if changed(&new_fk, old)? => {
                    out.push((old_fk.clone(), Instruction::DeleteKeyNoPropagate));
                    out.push((new_fk, Instruction::PropagateNullIfNoFkValAvailable));
                }
                _ => out.push((new_fk, Instruction::PropagateOnlyIfFkValAvailable)),
            }
        } else if old_fk.is_some() {
            out.push((old_fk, Instruction::DeleteKeyAndPropagate));
        }
        for (fk, instruction) in out {
            let subscription = Subscription {
                hash,
                instruction,
                primary_key: primary_key.clone(),
                version: SUBSCRIPTION_VERSION,
                primary_partition: Some(partition),
            };
            let forwarded = Record {
                key: fk,
                value: Some(subscription.to_bytes()),
                timestamp: record.timestamp,
                headers: record.headers.clone(),
            };
            ctx.forward(forwarded)?;
        }
        Ok(())
    }
}

/// Kafka's `SubscriptionReceiveProcessorSupplier`: keeps each subscription
/// in the subscription store under (foreign key, primary key), forgets
/// deleted ones, and passes it on to the join with the foreign table.
pub(crate) struct SubscriptionReceive<KO, K> {
    pub(crate) store: String,
    pub(crate) foreign_key_serde: Option<SerdeRef<KO>>,
    pub(crate) primary_key_serde: Option<SerdeRef<K>>,
    pub(crate) topics: FkTopics,
    pub(crate) resolved: Option<(Ser<KO>, Ser<K>)>,
}

impl<KO, K> Processor<KO, Vec<u8>, KO, Received<K>> for SubscriptionReceive<KO, K>
where
    KO: Clone + 'static,
    K: Clone + 'static,
{
    fn init(&mut self, ctx: &mut ProcessorContext<'_, KO, Received<K>>) -> Result<()> {
        let t = &self.topics;
        self.resolved = Some((
            Ser::pseudo(&self.foreign_key_serde, ctx, RecordPart::Key, t, "-fk")?,
            Ser::pseudo(&self.primary_key_serde, ctx, RecordPart::Key, t, "-pk")?,
        ));
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, KO, Received<K>>,
        record: Record<KO, Vec<u8>>,
    ) -> Result<()> {
        let (fk_ser, pk_ser) = self.resolved.as_ref().ok_or_else(not_started)?;
        let Some(bytes) = &record.value else {
            ctx.count_dropped_record();
            return Ok(());
        };
        let subscription =
            Subscription::from_bytes(bytes).map_err(|e| malformed(ctx, RecordPart::Value, e))?;
        if record.key.is_none()
            && subscription.instruction != Instruction::PropagateNullIfNoFkValAvailable
        {
            // Kafka: "Skipping record due to null foreign key".
            ctx.count_dropped_record();
            return Ok(());
        }
        if subscription.version > SUBSCRIPTION_VERSION {
            return Err(unsupported(
                ctx,
                "subscription",
                subscription.version,
                SUBSCRIPTION_VERSION,
            ));
        }
        let primary_key = pk_ser.de(ctx, RecordPart::Value, &subscription.primary_key)?;
        if let Some(fk) = &record.key {
            let key = combined_key(
                &fk_ser.ser(ctx, RecordPart::Key, fk)?,
                &subscription.primary_key,
            );
            let mut store = ctx.timestamped_key_value_store::<Vec<u8>, Vec<u8>>(&self.store)?;
            match subscription.instruction {
                Instruction::DeleteKeyAndPropagate | Instruction::DeleteKeyNoPropagate => {
                    store.delete(&key)?;
                }
                _ => {
                    store.put(key, bytes.clone(), record.timestamp)?;
                }
            }
        }
        let received = Received {
            primary_key,
            subscription,
        };
        ctx.forward(record.with_value(Some(received)))
    }
}

/// Kafka's `SubscriptionJoinProcessorSupplier`: answers a subscription
/// with the foreign row, as its instruction says.
pub(crate) struct SubscriptionJoin<K, KO, VO> {
    pub(crate) getter: ValueGetter<KO, VO>,
    pub(crate) foreign_value_serde: Option<SerdeRef<VO>>,
    pub(crate) topics: FkTopics,
    pub(crate) resolved: Option<Ser<VO>>,
    pub(crate) _primary: std::marker::PhantomData<fn() -> K>,
}

impl<K, KO, VO> Processor<KO, Received<K>, K, ResponseRecord> for SubscriptionJoin<K, KO, VO>
where
    K: Clone + 'static,
    KO: 'static,
    VO: 'static,
{
    fn init(&mut self, ctx: &mut ProcessorContext<'_, K, ResponseRecord>) -> Result<()> {
        let topic = format!("{}-{}", ctx.application_id(), self.topics.response);
        self.resolved = Some(Ser::resolve(
            &self.foreign_value_serde,
            ctx,
            RecordPart::Value,
            topic,
        )?);
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, ResponseRecord>,
        record: Record<KO, Received<K>>,
    ) -> Result<()> {
        let vo_ser = self.resolved.as_ref().ok_or_else(not_started)?;
        let Some(received) = &record.value else {
            return Ok(());
        };
        let foreign = match &record.key {
            Some(fk) => (self.getter)(&ctx.store_lookup(), fk)?,
            None => None,
        };
        let timestamp = match &foreign {
            Some((_, ts)) => record.timestamp.max(*ts),
            None => record.timestamp,
        };
        let s = &received.subscription;
        let value = match (s.instruction, &foreign) {
            (Instruction::DeleteKeyNoPropagate, _)
            | (Instruction::PropagateOnlyIfFkValAvailable, None) => return Ok(()),
            (Instruction::DeleteKeyAndPropagate, _) => None,
            (_, Some((v, _))) => Some(vo_ser.ser(ctx, RecordPart::Value, v)?),
            (_, None) => None,
        };
        let response = Response {
            hash: s.hash,
            foreign_value: value,
            version: RESPONSE_VERSION,
        };
        let forwarded = Record {
            key: Some(received.primary_key.clone()),
            value: Some(ResponseRecord {
                bytes: response.to_bytes(),
                primary_partition: s.primary_partition,
            }),
            timestamp,
            headers: record.headers,
        };
        ctx.forward(forwarded)
    }
}

/// Kafka's `ForeignTableJoinProcessorSupplier`: an update of the foreign
/// table answers every subscription to its key (a prefix scan of the
/// subscription store, in key byte order).
pub(crate) struct ForeignTableJoin<K, KO, VO> {
    pub(crate) store: String,
    pub(crate) foreign_key_serde: Option<SerdeRef<KO>>,
    pub(crate) primary_key_serde: Option<SerdeRef<K>>,
    pub(crate) foreign_value_serde: Option<SerdeRef<VO>>,
    pub(crate) topics: FkTopics,
    pub(crate) resolved: Option<(Ser<KO>, Ser<K>, Ser<VO>)>,
}

impl<K, KO, VO> Processor<KO, Change<VO>, K, ResponseRecord> for ForeignTableJoin<K, KO, VO>
where
    K: Clone + 'static,
    KO: 'static,
    VO: 'static,
{
    fn init(&mut self, ctx: &mut ProcessorContext<'_, K, ResponseRecord>) -> Result<()> {
        let t = &self.topics;
        let response = format!("{}-{}", ctx.application_id(), t.response);
        self.resolved = Some((
            Ser::pseudo(&self.foreign_key_serde, ctx, RecordPart::Key, t, "-fk")?,
            Ser::pseudo(&self.primary_key_serde, ctx, RecordPart::Key, t, "-pk")?,
            Ser::resolve(&self.foreign_value_serde, ctx, RecordPart::Value, response)?,
        ));
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, ResponseRecord>,
        record: Record<KO, Change<VO>>,
    ) -> Result<()> {
        let (fk_ser, pk_ser, vo_ser) = self.resolved.as_ref().ok_or_else(not_started)?;
        let (Some(fk), Some(change)) = (&record.key, &record.value) else {
            // Kafka: "Skipping record due to null key".
            ctx.count_dropped_record();
            return Ok(());
        };
        if !change.is_latest {
            // Kafka's versioned semantics, as in the subscription sender.
            ctx.count_dropped_record();
            return Ok(());
        }
        let prefix = combined_key_prefix(&fk_ser.ser(ctx, RecordPart::Key, fk)?);
        let subscribers: Vec<(Vec<u8>, Vec<u8>)> = {
            let store = ctx.timestamped_key_value_store::<Vec<u8>, Vec<u8>>(&self.store)?;
            store
                .range(prefix.clone()..)?
                .take_while(|(k, _)| k.starts_with(&prefix))
                .map(|(k, v)| (k, v.value))
                .collect()
        };
        let value = match &change.new {
            Some(v) => Some(vo_ser.ser(ctx, RecordPart::Value, v)?),
            None => None,
        };
        for (key, stored) in subscribers {
            let (_, pk) =
                split_combined_key(&key).map_err(|e| malformed(ctx, RecordPart::Key, e))?;
            let primary_key = pk_ser.de(ctx, RecordPart::Key, pk)?;
            let s = Subscription::from_bytes(&stored)
                .map_err(|e| malformed(ctx, RecordPart::Value, e))?;
            let response = Response {
                hash: s.hash,
                foreign_value: value.clone(),
                version: RESPONSE_VERSION,
            };
            let forwarded = Record {
                key: Some(primary_key),
                value: Some(ResponseRecord {
                    bytes: response.to_bytes(),
                    primary_partition: s.primary_partition,
                }),
                timestamp: record.timestamp,
                headers: record.headers.clone(),
            };
            ctx.forward(forwarded)?;
        }
        Ok(())
    }
}

/// A joiner of the primary value with the foreign one, each possibly
/// missing; `None` when the user's joiner cannot be called (an inner join
/// without a foreign value, a primary row that is gone).
pub(crate) type FkJoiner<V, VO, VR> = Rc<dyn Fn(Option<&V>, Option<&VO>) -> Option<VR>>;

/// Kafka's `ResponseJoinProcessorSupplier`: drops a response whose hash is
/// not the hash of the primary row's current value (it answers an older
/// version of the row), joins the others.
pub(crate) struct ResponseJoin<K, V, VO, VR> {
    pub(crate) getter: ValueGetter<K, V>,
    pub(crate) value_serde: Option<SerdeRef<V>>,
    pub(crate) foreign_value_serde: Option<SerdeRef<VO>>,
    pub(crate) joiner: FkJoiner<V, VO, VR>,
    pub(crate) left: bool,
    pub(crate) topics: FkTopics,
    pub(crate) resolved: Option<(Ser<V>, Ser<VO>)>,
}

impl<K, V, VO, VR> Processor<K, ResponseRecord, K, VR> for ResponseJoin<K, V, VO, VR>
where
    K: Clone + 'static,
    V: 'static,
    VO: 'static,
    VR: Clone + 'static,
{
    fn init(&mut self, ctx: &mut ProcessorContext<'_, K, VR>) -> Result<()> {
        let response = format!("{}-{}", ctx.application_id(), self.topics.response);
        self.resolved = Some((
            Ser::pseudo(
                &self.value_serde,
                ctx,
                RecordPart::Value,
                &self.topics,
                "-vh",
            )?,
            Ser::resolve(&self.foreign_value_serde, ctx, RecordPart::Value, response)?,
        ));
        Ok(())
    }

    fn process(
        &mut self,
        ctx: &mut ProcessorContext<'_, K, VR>,
        record: Record<K, ResponseRecord>,
    ) -> Result<()> {
        let (value_ser, vo_ser) = self.resolved.as_ref().ok_or_else(not_started)?;
        let (Some(key), Some(value)) = (&record.key, &record.value) else {
            ctx.count_dropped_record();
            return Ok(());
        };
        let response =
            Response::from_bytes(&value.bytes).map_err(|e| malformed(ctx, RecordPart::Value, e))?;
        if response.version != RESPONSE_VERSION {
            return Err(unsupported(
                ctx,
                "response",
                response.version,
                RESPONSE_VERSION,
            ));
        }
        let current = (self.getter)(&ctx.store_lookup(), key)?;
        let current_hash = match &current {
            Some((v, _)) => Some(murmur3_hash128(&value_ser.ser(
                ctx,
                RecordPart::Value,
                v,
            )?)),
            None => None,
        };
        if current_hash != response.hash {
            // A stale response: the row changed since it subscribed.
            ctx.count_dropped_record();
            return Ok(());
        }
        let foreign = match &response.foreign_value {
            Some(b) => Some(vo_ser.de(ctx, RecordPart::Value, b)?),
            None => None,
        };
        let result = if foreign.is_none() && (!self.left || current.is_none()) {
            None
        } else {
            (self.joiner)(current.as_ref().map(|(v, _)| v), foreign.as_ref())
        };
        ctx.forward(record.with_value(result))
    }
}

/// The partitioner of the response topic when `TableJoined` gives none:
/// the partition of the primary record that subscribed.
pub(crate) fn primary_partition_of<K>(
    _topic: &str,
    _key: Option<&K>,
    value: Option<&ResponseRecord>,
    _partitions: i32,
) -> Option<i32> {
    value.and_then(|v| v.primary_partition)
}

/// The serde of the subscription topic's values (the wire bytes).
pub(crate) fn subscription_value_serde() -> SerdeRef<Vec<u8>> {
    Arc::new(crate::serde::BytesSerde)
}
