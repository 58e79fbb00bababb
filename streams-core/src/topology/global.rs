//! Global stores: a store filled from one topic, whole, by every
//! instance, and readable by every processor, Kafka's
//! `Topology.addGlobalStore` (and, through the DSL, `GlobalKTable`).
//!
//! A global store has its own source and processor, outside the
//! sub-topologies: records of its topic go to that processor at once (the
//! test driver does not queue them), they do not move stream time, and
//! the processor forwards nothing. The store writes no changelog: its topic
//! is its changelog. Any processor reads it without being connected to it.
//!
//! ```
//! use streams_core::processor::{Processor, ProcessorContext};
//! use streams_core::serde::StringSerde;
//! use streams_core::state::Stores;
//! use streams_core::{Record, Result, Topology};
//!
//! /// Keeps the latest value per key; a tombstone deletes.
//! struct Update;
//! impl Processor<String, String, (), ()> for Update {
//!     fn process(&mut self, ctx: &mut ProcessorContext<'_, (), ()>, r: Record<String, String>) -> Result<()> {
//!         let mut store = ctx.key_value_store::<String, String>("rates")?;
//!         match (r.key, r.value) {
//!             (Some(k), Some(v)) => { store.put(k, v)?; }
//!             (Some(k), None) => { store.delete(&k)?; }
//!             (None, _) => {}
//!         }
//!         Ok(())
//!     }
//! }
//!
//! let mut topology = Topology::new();
//! topology.add_global_store(
//!     Stores::key_value_store_builder("rates", StringSerde, StringSerde).with_logging_disabled(),
//!     "rates-source",
//!     "rates",
//!     "rates-updater",
//!     || Update,
//! )?;
//! assert!(topology.describe().to_string().contains("for global store (will not generate tasks)"));
//! // A global store must not write a changelog: its topic is its changelog.
//! let err = Topology::new()
//!     .add_global_store(
//!         Stores::key_value_store_builder("logged", StringSerde, StringSerde),
//!         "s", "t", "p", || Update,
//!     )
//!     .unwrap_err();
//! assert!(matches!(err, streams_core::StreamsError::GlobalStoreLogging { .. }));
//! assert!(err.to_string().contains("must have logging disabled"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::rc::Rc;

use super::description::GlobalStoreDef;
use super::nodes::GlobalSourceNode;
use super::{NodeFactory, NodeKind, Topology};
use crate::config::StreamsConfig;
use crate::config::resolve_serde;
use crate::error::{RecordPart, Result, StreamsError, TopologyError};
use crate::processor::Processor;
use crate::processor::node::{ErasedNode, ProcessorNode};
use crate::serde::{Serde, SerdeRef};
use crate::state::StoreBuilder;

/// What the engine needs to run one global store; the description's side
/// is the [`GlobalStoreDef`] at the same index.
#[derive(Clone)]
pub(crate) struct GlobalRuntime {
    pub(crate) store: Rc<dyn StoreBuilder>,
    pub(crate) source_factory: NodeFactory,
    pub(crate) processor_factory: NodeFactory,
}

/// A global store as the engine builds it: names, topic, and how to make
/// its store, source and processor.
pub(crate) struct GlobalStoreParts<'a> {
    pub(crate) source: &'a str,
    pub(crate) topic: &'a str,
    pub(crate) processor: &'a str,
    pub(crate) store: Rc<dyn StoreBuilder>,
    pub(crate) source_factory: NodeFactory,
    pub(crate) processor_factory: NodeFactory,
}

impl Topology {
    /// The global stores with what the engine needs to run them, in the
    /// order they were added.
    pub(crate) fn global_store_parts(
        &self,
    ) -> impl Iterator<Item = (&GlobalStoreDef, &GlobalRuntime)> {
        self.global_stores.iter().zip(self.global_runtimes.iter())
    }

    /// Whether a global store's source or processor has this name.
    pub(crate) fn is_global_node_name(&self, name: &str) -> bool {
        self.global_stores
            .iter()
            .any(|g| g.source == name || g.processor == name)
    }

    /// The global store's source reading `topic`, if any.
    pub(crate) fn global_source_of(&self, topic: &str) -> Option<&str> {
        self.global_stores
            .iter()
            .find(|g| g.topic == topic)
            .map(|g| g.source.as_str())
    }

    /// Whether a global store has this name.
    pub(crate) fn is_global_store_name(&self, store: &str) -> bool {
        self.global_runtimes.iter().any(|g| g.store.name() == store)
    }

    /// Adds a global store after checking names, topic and store.
    pub(crate) fn add_global_store_parts(&mut self, parts: GlobalStoreParts<'_>) -> Result<()> {
        for name in [parts.source, parts.processor] {
            self.check_new_name(name)?;
        }
        if parts.source == parts.processor {
            return Err(TopologyError::DuplicateName {
                name: parts.source.to_owned(),
            }
            .into());
        }
        if parts.topic.is_empty() {
            return Err(TopologyError::EmptyTopic {
                node: parts.source.to_owned(),
            }
            .into());
        }
        let read_by = self
            .nodes
            .iter()
            .find(|n| match &n.kind {
                NodeKind::Source { topics, pattern } => {
                    topics.iter().any(|t| t.name == parts.topic)
                        || pattern
                            .as_ref()
                            .is_some_and(|(re, _)| re.is_match(parts.topic))
                }
                _ => false,
            })
            .map(|n| n.name.clone())
            .or_else(|| self.global_source_of(parts.topic).map(str::to_owned));
        if let Some(existing) = read_by {
            return Err(TopologyError::TopicAlreadyRead {
                topic: parts.topic.to_owned(),
                existing,
            }
            .into());
        }
        let store = parts.store.name().to_owned();
        if self.stores.iter().any(|s| s.name() == store) || self.is_global_store_name(&store) {
            return Err(TopologyError::DuplicateStore { store }.into());
        }
        if parts.store.logging_enabled() {
            return Err(StreamsError::GlobalStoreLogging {
                store,
                topic: parts.topic.to_owned(),
            });
        }
        self.global_stores.push(GlobalStoreDef {
            source: parts.source.to_owned(),
            topic: parts.topic.to_owned(),
            processor: parts.processor.to_owned(),
            store,
            node_position: self.nodes.len(),
        });
        self.global_runtimes.push(GlobalRuntime {
            store: parts.store,
            source_factory: parts.source_factory,
            processor_factory: parts.processor_factory,
        });
        Ok(())
    }

    /// Adds a global store, Kafka's `Topology.addGlobalStore`: the source
    /// `source_name` reads `topic` with the default serdes for `K` and `V`
    /// and hands every record to the processor `processor_name`, made by
    /// `supplier`, which keeps the store up to date. The store must have
    /// logging disabled: its topic is its changelog. Records of `topic` go
    /// to the processor at once, without moving stream time; any
    /// processor may read the store without being connected to it.
    ///
    /// # Errors
    /// A name already used, an empty topic, a topic another source reads, a
    /// store name already used, or a store with logging enabled.
    pub fn add_global_store<K, V, P>(
        &mut self,
        store: impl StoreBuilder + 'static,
        source_name: &str,
        topic: &str,
        processor_name: &str,
        supplier: impl Fn() -> P + 'static,
    ) -> Result<&mut Self>
    where
        K: Clone + 'static,
        V: Clone + 'static,
        P: Processor<K, V, (), ()>,
    {
        self.add_global_store_typed::<K, V, P>(
            store,
            source_name,
            topic,
            processor_name,
            supplier,
            None,
            None,
        )?;
        Ok(self)
    }

    /// As [`Topology::add_global_store`], reading `topic` with these serdes.
    ///
    /// # Errors
    /// As [`Topology::add_global_store`].
    #[allow(clippy::too_many_arguments)]
    pub fn add_global_store_with_serdes<K, V, P>(
        &mut self,
        store: impl StoreBuilder + 'static,
        source_name: &str,
        key_serde: impl Serde<K>,
        value_serde: impl Serde<V>,
        topic: &str,
        processor_name: &str,
        supplier: impl Fn() -> P + 'static,
    ) -> Result<&mut Self>
    where
        K: Clone + 'static,
        V: Clone + 'static,
        P: Processor<K, V, (), ()>,
    {
        self.add_global_store_typed::<K, V, P>(
            store,
            source_name,
            topic,
            processor_name,
            supplier,
            Some(std::sync::Arc::new(key_serde)),
            Some(std::sync::Arc::new(value_serde)),
        )?;
        Ok(self)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add_global_store_typed<K, V, P>(
        &mut self,
        store: impl StoreBuilder + 'static,
        source_name: &str,
        topic: &str,
        processor_name: &str,
        supplier: impl Fn() -> P + 'static,
        key_serde: Option<SerdeRef<K>>,
        value_serde: Option<SerdeRef<V>>,
    ) -> Result<()>
    where
        K: Clone + 'static,
        V: Clone + 'static,
        P: Processor<K, V, (), ()>,
    {
        let source_factory: NodeFactory = Rc::new(move |config: &StreamsConfig, node: &str| {
            Ok(Box::new(GlobalSourceNode::<K, V> {
                key: resolve_serde(&key_serde, config, node, RecordPart::Key)?,
                value: resolve_serde(&value_serde, config, node, RecordPart::Value)?,
            }) as Box<dyn ErasedNode>)
        });
        let processor_factory: NodeFactory = Rc::new(move |_config: &StreamsConfig, node: &str| {
            Ok(
                Box::new(ProcessorNode::<P, K, V, (), ()>::new(supplier(), node))
                    as Box<dyn ErasedNode>,
            )
        });
        self.add_global_store_parts(GlobalStoreParts {
            source: source_name,
            topic,
            processor: processor_name,
            store: Rc::new(store),
            source_factory,
            processor_factory,
        })
    }
}
