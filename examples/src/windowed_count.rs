//! Page views per user in 5-minute tumbling windows, with a minute of grace
//! for late views, suppressed to one final count per user and window.
//!
//! Views are keyed by user. The count of a window is written to
//! [`OUTPUT`] once, when stream time passes the window's end plus the grace
//! period; a view later than that is dropped and counted in the driver's
//! `dropped_records` metric. The running counts are in the window store
//! [`STORE`].
//!
//! ```
//! use streams_core::serde::{I64Serde, StringSerde};
//! use streams_examples::windowed_count;
//! use streams_test::TopologyTestDriver;
//!
//! let driver = TopologyTestDriver::new(windowed_count::topology()?)?;
//! let views = driver.create_input_topic(windowed_count::INPUT, StringSerde, StringSerde);
//! let counts = driver.create_output_topic(windowed_count::OUTPUT, windowed_count::key_serde(), I64Serde);
//! views.pipe_key_value_at("alice", "/home", 0);
//! views.pipe_key_value_at("alice", "/cart", 60_000);
//! assert!(counts.is_empty()); // the window [0, 5 min) is still open
//! views.pipe_key_value_at("bob", "/home", 360_000); // 6 minutes: it closes
//! let result = counts.read_record();
//! assert_eq!(result.key.map(|k| k.to_string()).as_deref(), Some("[alice@0/300000]"));
//! assert_eq!(result.value, Some(2));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::time::Duration;

use streams_core::dsl::{
    BufferConfig, Materialized, Produced, Suppressed, TimeWindows, WindowedSerde,
};
use streams_core::serde::{I64Serde, StringSerde};
use streams_core::{Result, StreamsBuilder, Topology};

/// The input topic: user -> page viewed.
pub const INPUT: &str = "page-views";
/// The output topic: (user, window) -> final count of views.
pub const OUTPUT: &str = "page-views-per-user";
/// The window store of the running counts.
pub const STORE: &str = "page-views-per-user-store";
/// The window size.
pub const WINDOW: Duration = Duration::from_secs(5 * 60);
/// How long after a window's end late views still count.
pub const GRACE: Duration = Duration::from_secs(60);

/// The serde of the output topic's keys: the user and the window start.
pub fn key_serde() -> WindowedSerde<String> {
    WindowedSerde::time_with_size(StringSerde, WINDOW)
}

/// The topology: count per user and window, suppressed until the window
/// closes.
///
/// # Errors
/// None in practice; building a topology returns a `Result`.
pub fn topology() -> Result<Topology> {
    let builder = StreamsBuilder::new();
    builder
        .stream::<String, String>(INPUT)
        .group_by_key()
        .windowed_by(TimeWindows::of_size_and_grace(WINDOW, GRACE)?)
        .count_with(Materialized::as_(STORE))
        .suppress(Suppressed::until_window_closes(BufferConfig::unbounded()))
        .to_stream()
        .to_with(OUTPUT, Produced::with(key_serde(), I64Serde));
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use streams_core::StreamsConfig;
    use streams_core::dsl::{Window, Windowed};
    use streams_test::{TestOutput, TestTopology};

    const MIN: i64 = 60_000;

    fn page_views() -> Result<TestTopology> {
        Ok(TestTopology::new(topology)?.with_config(StreamsConfig::new("page-views-app")))
    }

    /// The final counts, keyed by user and window.
    fn finals(t: &TestTopology) -> TestOutput<'_, Windowed<String>, i64> {
        t.output_with(OUTPUT, key_serde(), I64Serde)
    }

    /// `user`'s 5-minute window starting at `minute`.
    fn window(user: &str, minute: i64) -> Windowed<String> {
        Windowed::new(user.to_owned(), Window::of_size(minute * MIN, 5 * MIN))
    }

    #[test]
    fn one_final_count_per_user_and_window() -> Result<()> {
        let t = page_views()?;
        let views = t.input();
        views
            .at(0)
            .add("alice", "/home")
            .at(MIN)
            .add("bob", "/home")
            .at(4 * MIN)
            .add("alice", "/cart")
            .at(5 * MIN)
            .add("alice", "/pay");
        // Stream time 5 min: [0, 5) has ended but is within its grace.
        finals(&t).expect_no_more_records();

        // 6 min = end + grace: the first window closes, for every user.
        views.at(6 * MIN).add("bob", "/home");
        finals(&t)
            .expect_next_record()
            .has_key(window("alice", 0))
            .has_value(2)
            .has_timestamp(4 * MIN)
            .and()
            .expect_next_record()
            .has_key(window("bob", 0))
            .has_value(1)
            .has_timestamp(MIN)
            .and()
            .expect_no_more_records();

        views.at(11 * MIN).add("carol", "/home");
        finals(&t)
            .expect_next_record()
            .has_key(window("alice", 5))
            .has_value(1)
            .has_timestamp(5 * MIN)
            .and()
            .expect_next_record()
            .has_key(window("bob", 5))
            .has_value(1)
            .has_timestamp(6 * MIN)
            .and()
            .expect_no_more_records();
        Ok(())
    }

    #[test]
    fn late_views_count_within_the_grace_period_only() -> Result<()> {
        let t = page_views()?;
        let views = t.input();
        views
            .at(MIN)
            .add("alice", "/a")
            .at(5 * MIN)
            .add("alice", "/b");
        // Late, at 4.5 min, but within the grace: counted.
        views.at(4 * MIN + 30_000).add("alice", "/late");
        views.at(6 * MIN).add("alice", "/c");
        finals(&t)
            .expect_next_record()
            .has_key(window("alice", 0))
            .has_value(2)
            .has_timestamp(4 * MIN + 30_000)
            .and()
            .expect_no_more_records();
        assert_eq!(t.driver().metrics().dropped_records, 0);

        // Too late: the window has closed.
        views.at(2 * MIN).add("alice", "/too-late");
        finals(&t).expect_no_more_records();
        assert_eq!(t.driver().metrics().dropped_records, 1);
        Ok(())
    }

    /// The fluent store checks read key-value stores; a window store is
    /// read through the driver.
    #[test]
    fn the_store_holds_the_running_counts() -> Result<()> {
        let t = page_views()?;
        t.input()
            .at(0)
            .add("alice", "/a")
            .at(3 * MIN)
            .add("alice", "/b")
            .at(5 * MIN)
            .add("alice", "/c");
        let store = t.driver().window_store::<String, i64>(STORE)?;
        assert_eq!(
            store.fetch(&"alice".to_owned(), 0..=5 * MIN),
            [(0, 2), (5 * MIN, 1)]
        );
        assert_eq!(store.get(&"alice".to_owned(), 0), Some(2));
        Ok(())
    }

    #[test]
    fn names_follow_kafka() -> Result<()> {
        let topology = topology()?;
        assert_eq!(
            topology.node_names(),
            [
                "KSTREAM-SOURCE-0000000000",
                "KSTREAM-AGGREGATE-0000000001",
                "KTABLE-SUPPRESS-0000000002",
                "KTABLE-TOSTREAM-0000000004",
                "KSTREAM-SINK-0000000005"
            ]
        );
        assert_eq!(
            topology.store_names(),
            [STORE, "KTABLE-SUPPRESS-STATE-STORE-0000000003"]
        );
        let t = page_views()?;
        t.input().at(0).add("alice", "/home");
        assert_eq!(
            t.driver()
                .produced_topic_names()
                .into_iter()
                .collect::<Vec<_>>(),
            [
                "page-views-app-KTABLE-SUPPRESS-STATE-STORE-0000000003-changelog".to_owned(),
                format!("page-views-app-{STORE}-changelog"),
            ]
        );
        Ok(())
    }
}
