//! Where a Streams runtime gets its clients: Kafka Streams'
//! `KafkaClientSupplier`, plus the clock the clients live on. The
//! simulated cluster supplies clients on its mock clock; a real cluster
//! (rdkafka) supplies clients in real time. Nothing above this trait knows
//! which it has.

use std::sync::Arc;

use crate::admin::Admin;
use crate::config::ClientConfig;
use crate::consumer::Consumer;
use crate::error::Result;
use crate::producer::Producer;

/// The time the clients live in, in milliseconds since the epoch.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now.
    fn now_ms(&self) -> i64;
}

/// Hands out clients configured by Kafka's names. See the [module docs](self).
pub trait ClientSupplier: Send + Sync + std::fmt::Debug {
    /// A producer (transactional when the config has `transactional.id`).
    ///
    /// # Errors
    /// A config the implementation rejects.
    fn producer(&self, config: &ClientConfig) -> Result<Box<dyn Producer>>;

    /// A consumer for a stream thread's group (`group.id` set) or for
    /// restoring state (no `group.id`: partitions are assigned by hand).
    ///
    /// # Errors
    /// A config the implementation rejects.
    fn consumer(&self, config: &ClientConfig) -> Result<Box<dyn Consumer>>;

    /// An admin client.
    ///
    /// # Errors
    /// A config the implementation rejects.
    fn admin(&self, config: &ClientConfig) -> Result<Box<dyn Admin>>;

    /// The clock the clients' cluster runs on.
    fn clock(&self) -> Arc<dyn Clock>;
}
