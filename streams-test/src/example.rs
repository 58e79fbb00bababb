//! A helper for doc examples, after `timely::example`: build a topology in
//! a closure and get a running driver back, with test topics that take
//! the built-in serdes (`String`, `Vec<u8>`, `i32`, `i64`, `f64`, `()`), so
//! that an example is its topology, its input and its assertion.
//!
//! ```
//! use streams_test::{KeyValue, example};
//!
//! let driver = example(|builder| {
//!     builder.stream::<String, String>("words").filter(|_, w| w.len() > 3).to("long");
//! });
//! driver.input::<String, String>("words").pipe_key_values([("a", "hi"), ("b", "hello")]);
//! assert_eq!(driver.output::<String, String>("long").read_key_values_to_list(), [KeyValue::pair("b", "hello")]);
//! ```

use std::fmt;
use std::ops::Deref;

use streams_core::serde::{SerdeRef, builtin_serde};
use streams_core::{StreamsBuilder, StreamsConfig};

use crate::{TestInputTopic, TestOutputTopic, TopologyTestDriver};

/// A driver running the topology an [`example`] closure built; it
/// dereferences to the [`TopologyTestDriver`] for everything else (stores,
/// clocks, topics with other serdes).
pub struct Example {
    driver: TopologyTestDriver,
}

impl fmt::Debug for Example {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Example").finish_non_exhaustive()
    }
}

/// Builds a topology with `build` and runs it in a driver with the default
/// config, as [`TopologyTestDriver::new`] does.
///
/// # Panics
/// If the topology is invalid or the driver does not start; an example
/// shows a valid topology.
#[track_caller]
pub fn example(build: impl FnOnce(&StreamsBuilder)) -> Example {
    example_with_config(StreamsConfig::default(), build)
}

/// As [`example`], with a config (a record cache turned off, an
/// application id that names internal topics, default serdes); the
/// topology is built with it too ([`StreamsBuilder::build_with`]), so its
/// `topology.optimization` applies, as when a Kafka application passes
/// the same properties to `build(props)` and to its driver.
///
/// # Panics
/// If the topology is invalid or the driver does not start.
#[track_caller]
pub fn example_with_config(config: StreamsConfig, build: impl FnOnce(&StreamsBuilder)) -> Example {
    let builder = StreamsBuilder::new();
    build(&builder);
    let topology = match builder.build_with(&config) {
        Ok(t) => t,
        Err(e) => panic!("the example's topology is invalid: {e}"),
    };
    match TopologyTestDriver::with_config(topology, config) {
        Ok(driver) => Example { driver },
        Err(e) => panic!("the example's driver does not start: {e}"),
    }
}

#[track_caller]
fn serde<T: 'static>() -> SerdeRef<T> {
    match builtin_serde::<T>() {
        Some(s) => s,
        None => panic!(
            "`{}` has no built-in serde; use `create_input_topic` or `create_output_topic` with a serde",
            std::any::type_name::<T>()
        ),
    }
}

impl Example {
    /// An input topic with the built-in serdes of `K` and `V`.
    ///
    /// # Panics
    /// If `K` or `V` has no built-in serde.
    #[track_caller]
    pub fn input<K: 'static, V: 'static>(&self, topic: &str) -> TestInputTopic<'_, K, V> {
        self.driver
            .create_input_topic(topic, serde::<K>(), serde::<V>())
    }

    /// An output topic with the built-in serdes of `K` and `V`.
    ///
    /// # Panics
    /// If `K` or `V` has no built-in serde.
    #[track_caller]
    pub fn output<K: 'static, V: 'static>(&self, topic: &str) -> TestOutputTopic<'_, K, V> {
        self.driver
            .create_output_topic(topic, serde::<K>(), serde::<V>())
    }

    /// The driver, to close it or move it elsewhere.
    pub fn into_driver(self) -> TopologyTestDriver {
        self.driver
    }
}

impl Deref for Example {
    type Target = TopologyTestDriver;

    fn deref(&self) -> &TopologyTestDriver {
        &self.driver
    }
}
