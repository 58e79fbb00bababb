//! Versioned stores under the `KafkaStreams` runtime on the simulated
//! cluster: the changelog topic Kafka Streams creates for one
//! (`VersionedChangelogTopicConfig`), and a versioned table restored from
//! it by the next instance, history (out-of-order versions) included.

// A failing set-up step fails the test at its line; its error says why.
#![allow(clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use streams_core::runtime::RecordingRestoreListener;
use streams_core::serde::StringSerde;
use streams_core::state::Stores;
use streams_core::topology::Topology;
use streams_core::{Materialized, StreamsBuilder, StreamsConfig};
use streams_test::app::StreamsCluster;

/// Orders joined with the price of their product as of the order's time.
fn priced_orders() -> Topology {
    let builder = StreamsBuilder::new();
    let history =
        Stores::persistent_versioned_key_value_store("prices", Duration::from_secs(60)).unwrap();
    let prices = builder.table_with::<String, String>("prices", Materialized::as_(history));
    builder
        .stream::<String, String>("orders")
        .join(&prices, |order, price| format!("{order}@{price}"))
        .to("priced");
    builder.build().unwrap()
}

fn app() -> StreamsCluster {
    let app = StreamsCluster::new();
    for topic in ["prices", "orders", "priced"] {
        app.create_topic(topic, 1).unwrap();
    }
    app
}

fn config() -> StreamsConfig {
    StreamsConfig::new("versioned").with_property("commit.interval.ms", "1000")
}

/// Kafka's `shouldSetChangelogTopicProperties`: compacted, and nothing
/// younger than the history retention plus a day is compacted away.
#[test]
fn a_versioned_stores_changelog_keeps_its_history_from_the_cleaner() {
    let mut app = app();
    app.start("a", &priced_orders(), config()).unwrap();
    let configs = app
        .cluster()
        .admin()
        .describe_configs("versioned-prices-changelog")
        .unwrap();
    assert_eq!(configs["cleanup.policy"].value, "compact");
    assert_eq!(
        configs["min.compaction.lag.ms"].value,
        (60_000 + 86_400_000).to_string()
    );
}

/// The next instance restores the versioned store from its changelog: an
/// order joins the version valid at its time, one that arrived out of
/// order before the first instance closed.
#[test]
fn a_versioned_table_is_restored_with_its_history() {
    let mut app = app();
    app.start("a", &priced_orders(), config()).unwrap();
    let prices = app.producer("prices", StringSerde, StringSerde);
    let pen = "pen".to_owned();
    for (price, ts) in [("1.00", 10), ("1.20", 30), ("0.90", 20)] {
        prices.send(&pen, Some(&price.to_owned()), ts).unwrap();
    }
    app.run_until_idle().unwrap();
    app.close("a").unwrap();
    app.advance(45_000);
    let restores = Arc::new(Mutex::new(RecordingRestoreListener::default()));
    let listener = restores.clone();
    app.start_with("b", &priced_orders(), config(), |s| {
        s.set_global_state_restore_listener(listener);
    })
    .unwrap();
    let orders = app.producer("orders", StringSerde, StringSerde);
    orders.send(&pen, Some(&"o1".to_owned()), 25).unwrap();
    orders.send(&pen, Some(&"o2".to_owned()), 15).unwrap();
    orders.send(&pen, Some(&"o3".to_owned()), 35).unwrap();
    app.run_until_idle().unwrap();
    let priced: Vec<(String, i64)> = app
        .read("priced", StringSerde, StringSerde)
        .unwrap()
        .into_iter()
        .map(|r| (r.value.unwrap_or_default(), r.timestamp.unwrap_or(-1)))
        .collect();
    assert_eq!(
        priced,
        [
            ("o1@0.90".to_owned(), 25),
            ("o2@1.00".to_owned(), 15),
            ("o3@1.20".to_owned(), 35)
        ]
    );
    // From the changelog, not from the prices topic (committed by a).
    let restored = restores.lock().unwrap().restorations.clone();
    assert_eq!(
        restored
            .iter()
            .map(|r| (r.store.as_str(), r.restored))
            .collect::<Vec<_>>(),
        [("prices", 3)]
    );
}

/// Orders joined with prices after a grace period of 10 ms.
fn priced_orders_with_grace() -> Topology {
    let builder = StreamsBuilder::new();
    let history =
        Stores::persistent_versioned_key_value_store("prices", Duration::from_secs(60)).unwrap();
    let prices = builder.table_with::<String, String>("prices", Materialized::as_(history));
    builder
        .stream::<String, String>("orders")
        .join_with(
            &prices,
            |order, price| format!("{order}@{price}"),
            streams_core::Joined::as_("priced").with_grace_period(Duration::from_millis(10)),
        )
        .to("priced");
    builder.build().unwrap()
}

/// As Kafka's `JoinGracePeriodDurabilityIntegrationTest`: an order still
/// in the join's buffer when its instance closes is restored from the
/// buffer's changelog by the next one and joined when stream time passes
/// it, with the price that came late.
#[test]
fn a_buffered_stream_record_survives_a_restart() {
    let mut app = app();
    app.start("a", &priced_orders_with_grace(), config())
        .unwrap();
    let prices = app.producer("prices", StringSerde, StringSerde);
    let orders = app.producer("orders", StringSerde, StringSerde);
    let pen = "pen".to_owned();
    prices.send(&pen, Some(&"1.00".to_owned()), 0).unwrap();
    orders.send(&pen, Some(&"o1".to_owned()), 20).unwrap();
    app.run_until_idle().unwrap();
    assert!(
        app.read("priced", StringSerde, StringSerde)
            .unwrap()
            .is_empty()
    );
    app.close("a").unwrap();
    app.advance(45_000);
    let restores = Arc::new(Mutex::new(RecordingRestoreListener::default()));
    let listener = restores.clone();
    app.start_with("b", &priced_orders_with_grace(), config(), |s| {
        s.set_global_state_restore_listener(listener);
    })
    .unwrap();
    prices.send(&pen, Some(&"1.20".to_owned()), 15).unwrap();
    app.run_until_idle().unwrap();
    orders.send(&pen, Some(&"o2".to_owned()), 30).unwrap();
    app.run_until_idle().unwrap();
    let priced: Vec<(String, i64)> = app
        .read("priced", StringSerde, StringSerde)
        .unwrap()
        .into_iter()
        .map(|r| (r.value.unwrap_or_default(), r.timestamp.unwrap_or(-1)))
        .collect();
    assert_eq!(priced, [("o1@1.20".to_owned(), 20)]);
    // The order came back from the buffer's changelog, not from `orders`.
    let restored = restores.lock().unwrap().restorations.clone();
    let buffer = restored
        .iter()
        .find(|r| r.store == "priced-Buffer")
        .unwrap();
    assert_eq!(buffer.restored, 1);
}
