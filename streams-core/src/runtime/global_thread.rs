//! An instance's global stores, as Kafka Streams' `GlobalStreamThread`
//! keeps them: one copy per instance, read by every stream task, fed from
//! every partition of each global store's topic by a consumer of its own
//! (no group, so nothing is committed: an instance that starts reads the
//! topics from the beginning).
//!
//! At `start` the instance bootstraps them before its stream threads
//! exist, as Kafka's `GlobalStateManagerImpl.initialize` does: it reads
//! each global topic up to the end offsets it finds (the last stable
//! offset under exactly-once), with the restore listener told of each
//! partition. Then each step of the instance first polls the global
//! consumer, so that a stream task sees a global update as soon as the
//! step after it was written.

use std::cell::RefMut;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use streams_clients::{Admin, ClientConfig, ClientSupplier, Consumer, TopicPartition};

use crate::config::StreamsConfig;
use crate::engine::{GlobalStores, StreamTask};
use crate::runtime::error::{Result, RuntimeError};
use crate::runtime::restore::RestoreListener;
use crate::runtime::task::to_raw;
use crate::state::StateStore;
use crate::topology::Topology;

/// The global stores of one instance and the consumer that feeds them.
pub(crate) struct GlobalThread {
    engine: StreamTask,
    consumer: Box<dyn Consumer>,
    partitions: Vec<TopicPartition>,
    /// Each global topic's store, for the restore listener.
    store_of: BTreeMap<String, String>,
}

impl std::fmt::Debug for GlobalThread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GlobalThread")
            .field("partitions", &self.partitions)
            .field("stores", &self.store_of)
            .finish_non_exhaustive()
    }
}

fn failed(source: crate::error::StreamsError) -> RuntimeError {
    RuntimeError::GlobalThread {
        source: Box::new(source),
    }
}

impl GlobalThread {
    /// The global thread of `topology`, `None` when it has no global
    /// stores.
    ///
    /// # Errors
    /// [`RuntimeError::MissingSourceTopics`] for global topics that do not
    /// exist; a client's error.
    pub(crate) fn new(
        topology: &Topology,
        streams_config: &StreamsConfig,
        process_id: &str,
        isolation: &str,
        clients: &Arc<dyn ClientSupplier>,
        admin: &mut dyn Admin,
    ) -> Result<Option<Self>> {
        let description = topology.describe();
        if description.global_stores().is_empty() {
            return Ok(None);
        }
        let now = clients.clock().now_ms();
        let engine = StreamTask::for_global_stores(topology, streams_config, now)?;
        let store_of: BTreeMap<String, String> = description
            .global_stores()
            .iter()
            .map(|g| (g.topic().to_owned(), g.store().to_owned()))
            .collect();
        let mut partitions = Vec::new();
        let mut missing = Vec::new();
        for topic in engine.global_topics() {
            let count = admin.partition_count(topic).map_err(|e| {
                RuntimeError::client(
                    format!("reading the partition count of global topic {topic}"),
                    e,
                )
            })?;
            match count {
                Some(n) => partitions.extend((0..n).map(|p| TopicPartition::new(topic, p))),
                None => missing.push(topic.to_owned()),
            }
        }
        if !missing.is_empty() {
            return Err(RuntimeError::MissingSourceTopics { topics: missing });
        }
        let config = ClientConfig::new()
            .set("client.id", format!("{process_id}-global-consumer"))
            .set("enable.auto.commit", "false")
            .set("auto.offset.reset", "earliest")
            .set("isolation.level", isolation);
        let mut consumer = clients
            .consumer(&config)
            .map_err(|e| RuntimeError::client("creating the global consumer", e))?;
        consumer
            .assign(&partitions)
            .map_err(|e| RuntimeError::client("assigning the global topics' partitions", e))?;
        Ok(Some(GlobalThread {
            engine,
            consumer,
            partitions,
            store_of,
        }))
    }

    /// Handles on the global stores, for the stream tasks.
    pub(crate) fn global_stores(&self) -> GlobalStores {
        self.engine.global_stores()
    }

    /// Reads every global topic up to its current end, telling `listener`
    /// of each partition's restoration.
    ///
    /// # Errors
    /// A client's error; a global processor's error.
    pub(crate) fn bootstrap(
        &mut self,
        listener: Option<&Arc<Mutex<dyn RestoreListener>>>,
    ) -> Result<()> {
        let tell = |f: &mut dyn FnMut(&mut dyn RestoreListener)| {
            if let Some(l) = listener
                && let Ok(mut l) = l.lock()
            {
                f(&mut *l);
            }
        };
        let end = self
            .consumer
            .end_offsets(&self.partitions)
            .map_err(|e| RuntimeError::client("reading the end offsets of the global topics", e))?;
        let mut restored: BTreeMap<TopicPartition, (i64, usize)> = BTreeMap::new();
        for tp in &self.partitions.clone() {
            let start = self.position(tp)?;
            let store = self.store_of.get(&*tp.topic).cloned().unwrap_or_default();
            let stop = end.get(tp).copied().unwrap_or(0);
            tell(&mut |l| l.on_restore_start(tp, &store, start, stop));
            restored.insert(tp.clone(), (start, 0));
        }
        loop {
            let behind: Vec<&TopicPartition> = self
                .partitions
                .iter()
                .filter(|tp| {
                    let stop = end.get(*tp).copied().unwrap_or(0);
                    restored.get(*tp).is_some_and(|(at, _)| *at < stop)
                })
                .collect();
            if behind.is_empty() {
                break;
            }
            let polled = self
                .consumer
                .poll()
                .map_err(|e| RuntimeError::client("reading the global topics", e))?;
            let mut batches: BTreeMap<TopicPartition, usize> = BTreeMap::new();
            for record in polled.records {
                let tp = TopicPartition::new(&*record.topic, record.partition);
                *batches.entry(tp).or_default() += 1;
                let (topic, offset) = (record.topic.clone(), record.offset);
                self.engine
                    .process_global(&topic, offset, to_raw(record))
                    .map_err(failed)?;
            }
            let mut moved = false;
            for tp in self.partitions.clone() {
                let position = self.position(&tp)?;
                let Some(entry) = restored.get_mut(&tp) else {
                    continue;
                };
                let batch = batches.get(&tp).copied().unwrap_or(0);
                if position > entry.0 {
                    moved = true;
                }
                entry.0 = entry.0.max(position);
                entry.1 += batch;
                if batch > 0 {
                    let store = self.store_of.get(&*tp.topic).cloned().unwrap_or_default();
                    tell(&mut |l| l.on_batch_restored(&tp, &store, position, batch));
                }
            }
            if !moved {
                // Still below an end offset and nothing came: Kafka waits
                // `task.timeout.ms` and fails ("Global task did not make
                // progress to restore state"); on the mock clock nothing
                // would come later, so it fails now, naming the partition.
                let stuck = self.partitions.iter().find_map(|tp| {
                    let stop = end.get(tp).copied().unwrap_or(0);
                    restored
                        .get(tp)
                        .filter(|(at, _)| *at < stop)
                        .map(|(at, _)| (tp.clone(), *at, stop))
                });
                if let Some((partition, position, end)) = stuck {
                    return Err(RuntimeError::GlobalRestoreStalled {
                        partition,
                        position,
                        end,
                    });
                }
                break;
            }
        }
        for (tp, (_, total)) in &restored {
            let store = self.store_of.get(&*tp.topic).cloned().unwrap_or_default();
            tell(&mut |l| l.on_restore_end(tp, &store, *total));
        }
        Ok(())
    }

    fn position(&mut self, tp: &TopicPartition) -> Result<i64> {
        self.consumer.position(tp).map_err(|e| {
            RuntimeError::client(format!("reading the global consumer's position in {tp}"), e)
        })
    }

    /// Polls the global topics once and applies what arrived; returns how
    /// many records it applied.
    ///
    /// # Errors
    /// A client's error; a global processor's error.
    pub(crate) fn poll(&mut self) -> Result<usize> {
        let polled = self
            .consumer
            .poll()
            .map_err(|e| RuntimeError::client("reading the global topics", e))?;
        let n = polled.records.len();
        for record in polled.records {
            let (topic, offset) = (record.topic.clone(), record.offset);
            self.engine
                .process_global(&topic, offset, to_raw(record))
                .map_err(failed)?;
        }
        Ok(n)
    }

    /// The global store `name`.
    ///
    /// # Errors
    /// No global store of that name and type.
    pub(crate) fn store<S: StateStore>(&self, name: &str) -> Result<RefMut<'_, S>> {
        Ok(self.engine.store::<S>(name)?)
    }

    /// Closes the stores and the consumer.
    pub(crate) fn close(&mut self) {
        let _ = self.engine.close();
        self.consumer.close(false);
    }
}
