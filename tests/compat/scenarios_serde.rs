//! The oracle's `SerdeScenarios`: how each serde encodes values
//! (`serde_bytes`), and the same values round-tripped through a topology
//! typed with that serde.

use streams_core::dsl::{Consumed, Produced};
use streams_core::serde::{BytesSerde, F64Serde, I32Serde, I64Serde, StringSerde};
use streams_core::{StreamsBuilder, StreamsConfig};
use streams_test::TestRecord;

use super::{KindSerde, Recorder, Scenario, ScenarioResult, config, input, jlen, scenario};

type S = String;

pub(super) const SCENARIOS: &[Scenario] = &[
    scenario!(serde_string),
    scenario!(serde_integer),
    scenario!(serde_long),
    scenario!(serde_double),
    scenario!(serde_bytes),
    scenario!(serde_mixed_types),
    scenario!(serde_default_from_config),
];

const STRINGS: [Option<&str>; 7] = [
    Some(""),
    Some("hello"),
    Some("grüße €"),
    Some("\u{1F600}"),
    Some("tab\tnl\ncr\rctl\u{1}\u{1f}"),
    Some("quote\"back\\slash/"),
    None,
];

fn serde_string() -> ScenarioResult {
    let mut g = Recorder::new();
    for s in STRINGS {
        g.serde_bytes(&StringSerde, s.map(str::to_owned).as_ref());
    }
    let b = StreamsBuilder::new();
    b.stream::<S, S>("in").to("out");
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    for (n, s) in STRINGS.iter().enumerate() {
        i.pipe_record(TestRecord::new(Some(format!("k{n}")), s.map(str::to_owned)).at(n as i64));
    }
    i.pipe_key_value_at("ключ", "значение", 100);
    g.output(&driver, "out");
    g.finish(driver)
}

/// `stream("in", Consumed.with(K, K)).to("out", Produced.with(K, K))`;
/// record i is `(key_of(i), values[i], i)`.
fn round_trip<K: KindSerde>(
    serde: K,
    values: &[Option<K::T>],
    key_of: impl Fn(usize) -> K::T,
) -> ScenarioResult {
    let mut g = Recorder::new();
    for v in values {
        g.serde_bytes(&serde, v.as_ref());
    }
    let b = StreamsBuilder::new();
    b.stream_with::<K::T, K::T>("in", Consumed::with(serde, serde))
        .to_with("out", Produced::with(serde, serde));
    let driver = g.start(b.build()?)?;
    let i = driver.create_input_topic_with_time("in", serde, serde, 0, std::time::Duration::ZERO);
    for (n, v) in values.iter().enumerate() {
        i.pipe_record(TestRecord::new(Some(key_of(n)), v.clone()).at(n as i64));
    }
    g.output_as(&driver, "out", serde, serde);
    g.finish(driver)
}

fn serde_integer() -> ScenarioResult {
    let values = [0, 1, -1, 256, i32::MIN, i32::MAX].map(Some);
    let values: Vec<Option<i32>> = values.into_iter().chain([None]).collect();
    round_trip(I32Serde, &values, |n| n as i32)
}

fn serde_long() -> ScenarioResult {
    let values = [0, 1, -1, 256, i64::MIN, i64::MAX].map(Some);
    let values: Vec<Option<i64>> = values.into_iter().chain([None]).collect();
    round_trip(I64Serde, &values, |n| n as i64)
}

fn serde_double() -> ScenarioResult {
    let values = [
        0.0,
        -0.0,
        1.5,
        0.1,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::from_bits(1), // Double.MIN_VALUE, 4.9E-324
        f64::MAX,
    ]
    .map(Some);
    let values: Vec<Option<f64>> = values.into_iter().chain([None]).collect();
    round_trip(F64Serde, &values, |n| n as f64)
}

fn serde_bytes() -> ScenarioResult {
    let values = [
        Some(vec![]),
        Some(vec![0x00, 0xff]),
        Some(vec![0x68, 0x69]),
        None,
    ];
    round_trip(BytesSerde, &values, |n| vec![n as u8])
}

fn serde_mixed_types() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    let s = b.stream::<S, S>("in");
    s.clone()
        .map(|k, v| {
            let k = k.expect("every input record of this scenario has a key");
            (jlen(k) as i32, jlen(v) as i64)
        })
        .to_with("out-int-long", Produced::with(I32Serde, I64Serde));
    s.map_values(|v| jlen(v) as f64 / 2.0)
        .to_with("out-double", Produced::with(StringSerde, F64Serde));
    let driver = g.start(b.build()?)?;
    let i = input(&driver, "in");
    i.pipe_key_value_at("k", "abc", 0);
    i.pipe_key_value_at("key", "", 1);
    g.output_as(&driver, "out-int-long", I32Serde, I64Serde);
    g.output_as(&driver, "out-double", StringSerde, F64Serde);
    g.finish(driver)
}

fn serde_default_from_config() -> ScenarioResult {
    let mut g = Recorder::new();
    let b = StreamsBuilder::new();
    b.stream::<S, i64>("in")
        .map_values(|v| v.wrapping_add(1))
        .to("out");
    let config: StreamsConfig = config().with_default_value_serde(I64Serde);
    let driver = g.start_with(b.build()?, config)?;
    let i = driver.create_input_topic_with_time(
        "in",
        StringSerde,
        I64Serde,
        0,
        std::time::Duration::ZERO,
    );
    i.pipe_key_value_at("k1", 41, 0);
    i.pipe_key_value_at("k2", -1, 1);
    g.output_as(&driver, "out", StringSerde, I64Serde);
    g.finish(driver)
}
