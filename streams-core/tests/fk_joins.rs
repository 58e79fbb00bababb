//! Foreign-key table-table joins (KIP-213), ported from Kafka's
//! `KTableKTableForeignKeyJoinIntegrationTest` with its exact expected
//! values (its `testCases` over inner/left join, a queryable result store
//! `store` or none, and a same-key "rejoin" of the result with the left
//! table; Kafka's optimization and versioned-store cases are not ported:
//! this library has neither), then a property test against a naive model
//! of the join over random updates, deletes and foreign-key changes.

use std::collections::{BTreeMap, HashMap};
use std::error::Error;

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use streams_core::dsl::{ForeignKeyExtractor, TableJoined};
use streams_core::{KTable, Materialized, StreamsBuilder};
use streams_test::{TestInputTopic, TestOutputTopic, TestRecord, TopologyTestDriver};

type S = String;
type TestResult = Result<(), Box<dyn Error>>;

const LEFT_TABLE: &str = "left_table";
const RIGHT_TABLE: &str = "right_table";
const OUTPUT: &str = "output-topic";
const REJOIN_OUTPUT: &str = "rejoin-output-topic";

/// Kafka's `value -> value.split("\\|")[1]`.
fn second_field(value: &S) -> Option<S> {
    value.split('|').nth(1).map(str::to_owned)
}

/// Kafka's joiner `"(" + value1 + "," + value2 + ")"`.
fn joined(l: &S, r: Option<&S>) -> S {
    format!("({l},{})", r.map_or("null", S::as_str))
}

/// One of Kafka's `testCases`.
#[derive(Debug, Clone, Copy)]
struct Case {
    left_join: bool,
    materialized: bool,
    rejoin: bool,
}

fn cases() -> Vec<Case> {
    let mut all = Vec::new();
    for left_join in [false, true] {
        for materialized in [false, true] {
            for rejoin in [false, true] {
                all.push(Case {
                    left_join,
                    materialized,
                    rejoin,
                });
            }
        }
    }
    all
}

/// Kafka's `getTopology`: the result of the join (materialized as `store`
/// without the cache, or not at all) to `output-topic`, and with `rejoin`
/// its same-key join with the left table to `rejoin-output-topic`.
fn topology(
    case: Case,
    extractor: fn(&S) -> Option<S>,
) -> Result<TopologyTestDriver, Box<dyn Error>> {
    let builder = StreamsBuilder::new();
    let left: KTable<S, S> = builder.table(LEFT_TABLE);
    let right: KTable<S, S> = builder.table(RIGHT_TABLE);
    let main = if case.materialized {
        Materialized::as_("store").with_caching_disabled()
    } else {
        Materialized::default().with_caching_disabled()
    };
    let rejoin_store = || {
        if case.materialized {
            Materialized::as_("store-rejoin").with_caching_disabled()
        } else {
            Materialized::default()
        }
    };
    let extractor = ForeignKeyExtractor::from_value(extractor);
    let fk_join = if case.left_join {
        left.clone().left_join_on_foreign_key_with(
            &right,
            extractor,
            joined,
            TableJoined::default(),
            main,
        )
    } else {
        left.clone().join_on_foreign_key_with(
            &right,
            extractor,
            |l, r| joined(l, Some(r)),
            TableJoined::default(),
            main,
        )
    };
    fk_join.clone().to_stream().to(OUTPUT);
    if case.rejoin {
        let rejoined = if case.left_join {
            fk_join.left_join_with(
                &left,
                |a, b| format!("rejoin({a},{})", b.map_or("null", S::as_str)),
                rejoin_store(),
            )
        } else {
            fk_join.join_with(&left, |a, b| format!("rejoin({a},{b})"), rejoin_store())
        };
        rejoined.to_stream().to(REJOIN_OUTPUT);
    }
    Ok(TopologyTestDriver::new(builder.build()?)?)
}

fn map(entries: &[(&str, Option<&str>)]) -> HashMap<S, Option<S>> {
    entries
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.map(str::to_owned)))
        .collect()
}

fn store_map(entries: &[(&str, &str)]) -> BTreeMap<S, S> {
    entries
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The result store's rows, when the case has one.
fn check_store(driver: &TopologyTestDriver, case: Case, expected: &[(&str, &str)]) -> TestResult {
    if case.materialized {
        let store = driver.timestamped_key_value_store::<S, S>("store")?;
        assert_eq!(store.to_map(), store_map(expected), "{case:?}");
    }
    Ok(())
}

struct Topics<'d> {
    left: TestInputTopic<'d, S, S>,
    right: TestInputTopic<'d, S, S>,
    output: TestOutputTopic<'d, S, S>,
    rejoin: TestOutputTopic<'d, S, S>,
}

fn topics(driver: &TopologyTestDriver) -> Topics<'_> {
    Topics {
        left: driver.create_input_topic(
            LEFT_TABLE,
            streams_core::serde::StringSerde,
            streams_core::serde::StringSerde,
        ),
        right: driver.create_input_topic(
            RIGHT_TABLE,
            streams_core::serde::StringSerde,
            streams_core::serde::StringSerde,
        ),
        output: driver.create_output_topic(
            OUTPUT,
            streams_core::serde::StringSerde,
            streams_core::serde::StringSerde,
        ),
        rejoin: driver.create_output_topic(
            REJOIN_OUTPUT,
            streams_core::serde::StringSerde,
            streams_core::serde::StringSerde,
        ),
    }
}

const BASE: i64 = 1000;

#[test]
fn do_join_from_left_then_delete_left_entity() -> TestResult {
    for case in cases() {
        let driver = topology(case, second_field)?;
        let t = topics(&driver);
        t.right.pipe_key_value_at("rhs1", "rhsValue1", BASE);
        t.right.pipe_key_value_at("rhs2", "rhsValue2", BASE + 1);
        t.right.pipe_key_value_at("rhs3", "rhsValue3", BASE + 2);
        assert_eq!(t.output.read_key_values_to_map(), map(&[]), "{case:?}");
        if case.rejoin {
            assert_eq!(t.rejoin.read_key_values_to_map(), map(&[]), "{case:?}");
        }
        check_store(&driver, case, &[])?;

        t.left.pipe_key_value_at("lhs1", "lhsValue1|rhs1", BASE + 3);
        t.left.pipe_key_value_at("lhs2", "lhsValue2|rhs2", BASE + 4);
        let expected = [
            ("lhs1", "(lhsValue1|rhs1,rhsValue1)"),
            ("lhs2", "(lhsValue2|rhs2,rhsValue2)"),
        ];
        assert_eq!(
            t.output.read_key_values_to_map(),
            map(&expected.map(|(k, v)| (k, Some(v)))),
            "{case:?}"
        );
        if case.rejoin {
            assert_eq!(
                t.rejoin.read_key_values_to_map(),
                map(&[
                    (
                        "lhs1",
                        Some("rejoin((lhsValue1|rhs1,rhsValue1),lhsValue1|rhs1)")
                    ),
                    (
                        "lhs2",
                        Some("rejoin((lhsValue2|rhs2,rhsValue2),lhsValue2|rhs2)")
                    ),
                ]),
                "{case:?}"
            );
        }
        check_store(&driver, case, &expected)?;

        // Another reference to an existing foreign key.
        t.left.pipe_key_value_at("lhs3", "lhsValue3|rhs1", BASE + 5);
        assert_eq!(
            t.output.read_key_values_to_map(),
            map(&[("lhs3", Some("(lhsValue3|rhs1,rhsValue1)"))]),
            "{case:?}"
        );
        if case.rejoin {
            assert_eq!(
                t.rejoin.read_key_values_to_map(),
                map(&[(
                    "lhs3",
                    Some("rejoin((lhsValue3|rhs1,rhsValue1),lhsValue3|rhs1)")
                )]),
                "{case:?}"
            );
        }
        check_store(
            &driver,
            case,
            &[
                ("lhs1", "(lhsValue1|rhs1,rhsValue1)"),
                ("lhs2", "(lhsValue2|rhs2,rhsValue2)"),
                ("lhs3", "(lhsValue3|rhs1,rhsValue1)"),
            ],
        )?;

        // Deleting one left entity propagates one delete.
        t.left
            .pipe_record(TestRecord::tombstone("lhs1").at(BASE + 6));
        assert_eq!(
            t.output.read_key_values_to_map(),
            map(&[("lhs1", None)]),
            "{case:?}"
        );
        if case.rejoin {
            assert_eq!(
                t.rejoin.read_key_values_to_map(),
                map(&[("lhs1", None)]),
                "{case:?}"
            );
        }
        check_store(
            &driver,
            case,
            &[
                ("lhs2", "(lhsValue2|rhs2,rhsValue2)"),
                ("lhs3", "(lhsValue3|rhs1,rhsValue1)"),
            ],
        )?;
    }
    Ok(())
}

#[test]
fn do_join_from_right_then_delete_right_entity() -> TestResult {
    for case in cases() {
        let driver = topology(case, second_field)?;
        let t = topics(&driver);
        let lj = case.left_join;
        t.left.pipe_key_value_at("lhs1", "lhsValue1|rhs1", BASE);
        t.left.pipe_key_value_at("lhs2", "lhsValue2|rhs2", BASE + 1);
        t.left.pipe_key_value_at("lhs3", "lhsValue3|rhs1", BASE + 2);
        let half = [
            ("lhs1", "(lhsValue1|rhs1,null)"),
            ("lhs2", "(lhsValue2|rhs2,null)"),
            ("lhs3", "(lhsValue3|rhs1,null)"),
        ];
        let expected: &[(&str, &str)] = if lj { &half } else { &[] };
        assert_eq!(
            t.output.read_key_values_to_map(),
            map(&expected
                .iter()
                .map(|&(k, v)| (k, Some(v)))
                .collect::<Vec<_>>()),
            "{case:?}"
        );
        check_store(&driver, case, expected)?;

        t.right.pipe_key_value_at("rhs1", "rhsValue1", BASE + 3);
        assert_eq!(
            t.output.read_key_values_to_map(),
            map(&[
                ("lhs1", Some("(lhsValue1|rhs1,rhsValue1)")),
                ("lhs3", Some("(lhsValue3|rhs1,rhsValue1)")),
            ]),
            "{case:?}"
        );
        let with_rhs1 = [
            ("lhs1", "(lhsValue1|rhs1,rhsValue1)"),
            ("lhs2", "(lhsValue2|rhs2,null)"),
            ("lhs3", "(lhsValue3|rhs1,rhsValue1)"),
        ];
        let inner_rhs1 = [
            ("lhs1", "(lhsValue1|rhs1,rhsValue1)"),
            ("lhs3", "(lhsValue3|rhs1,rhsValue1)"),
        ];
        check_store(&driver, case, if lj { &with_rhs1 } else { &inner_rhs1 })?;

        t.right.pipe_key_value_at("rhs2", "rhsValue2", BASE + 4);
        assert_eq!(
            t.output.read_key_values_to_map(),
            map(&[("lhs2", Some("(lhsValue2|rhs2,rhsValue2)"))]),
            "{case:?}"
        );
        let all = [
            ("lhs1", "(lhsValue1|rhs1,rhsValue1)"),
            ("lhs2", "(lhsValue2|rhs2,rhsValue2)"),
            ("lhs3", "(lhsValue3|rhs1,rhsValue1)"),
        ];
        check_store(&driver, case, &all)?;

        // An unreferenced foreign key shows up nowhere.
        t.right.pipe_key_value_at("rhs3", "rhsValue3", BASE + 5);
        assert_eq!(t.output.read_key_values_to_map(), map(&[]), "{case:?}");
        check_store(&driver, case, &all)?;

        // Deleting the right entity propagates to every matching key.
        t.right
            .pipe_record(TestRecord::tombstone("rhs1").at(BASE + 6));
        assert_eq!(
            t.output.read_key_values_to_map(),
            map(&[
                ("lhs1", lj.then_some("(lhsValue1|rhs1,null)")),
                ("lhs3", lj.then_some("(lhsValue3|rhs1,null)")),
            ]),
            "{case:?}"
        );
        let left_after = [
            ("lhs1", "(lhsValue1|rhs1,null)"),
            ("lhs2", "(lhsValue2|rhs2,rhsValue2)"),
            ("lhs3", "(lhsValue3|rhs1,null)"),
        ];
        let inner_after = [("lhs2", "(lhsValue2|rhs2,rhsValue2)")];
        check_store(&driver, case, if lj { &left_after } else { &inner_after })?;
    }
    Ok(())
}

#[test]
fn should_emit_tombstone_when_deleting_non_joining_records() -> TestResult {
    for case in cases() {
        let driver = topology(case, second_field)?;
        let t = topics(&driver);
        t.left.pipe_key_value_at("lhs1", "lhsValue1|rhs1", BASE);
        let half: &[(&str, &str)] = if case.left_join {
            &[("lhs1", "(lhsValue1|rhs1,null)")]
        } else {
            &[]
        };
        assert_eq!(
            t.output.read_key_values_to_map(),
            map(&half.iter().map(|&(k, v)| (k, Some(v))).collect::<Vec<_>>()),
            "{case:?}"
        );
        check_store(&driver, case, half)?;
        // An inner join cannot know whether it emitted a result: it sends
        // a tombstone; a left join must.
        t.left
            .pipe_record(TestRecord::tombstone("lhs1").at(BASE + 1));
        assert_eq!(
            t.output.read_key_values_to_map(),
            map(&[("lhs1", None)]),
            "{case:?}"
        );
        check_store(&driver, case, &[])?;
        // Deleting a row that does not exist is idempotent.
        t.left
            .pipe_record(TestRecord::tombstone("lhs1").at(BASE + 2));
        assert_eq!(t.output.read_key_values_to_map(), map(&[]), "{case:?}");
        check_store(&driver, case, &[])?;
    }
    Ok(())
}

#[test]
fn should_not_emit_tombstones_when_deleting_non_existing_records() -> TestResult {
    for case in cases() {
        let driver = topology(case, second_field)?;
        let t = topics(&driver);
        t.left.pipe_record(TestRecord::tombstone("lhs1").at(BASE));
        assert_eq!(t.output.read_key_values_to_map(), map(&[]), "{case:?}");
        check_store(&driver, case, &[])?;
    }
    Ok(())
}

#[test]
fn join_should_produce_nulls_when_value_has_non_matching_foreign_key() -> TestResult {
    for case in cases() {
        let driver = topology(case, second_field)?;
        let t = topics(&driver);
        let lj = case.left_join;
        let step = |value: &'static str,
                    ts: i64,
                    out: Option<&str>,
                    store: &[(&str, &str)]|
         -> TestResult {
            t.left.pipe_key_value_at("lhs1", value, ts);
            let expected = match out {
                Some(v) => map(&[("lhs1", Some(v))]),
                None => map(&[("lhs1", None)]),
            };
            assert_eq!(
                t.output.read_key_values_to_map(),
                expected,
                "{case:?} {value}"
            );
            check_store(&driver, case, store)
        };
        t.left.pipe_key_value_at("lhs1", "lhsValue1|rhs1", BASE);
        let half: &[(&str, &str)] = if lj {
            &[("lhs1", "(lhsValue1|rhs1,null)")]
        } else {
            &[]
        };
        assert_eq!(
            t.output.read_key_values_to_map(),
            map(&half.iter().map(|&(k, v)| (k, Some(v))).collect::<Vec<_>>()),
            "{case:?}"
        );
        check_store(&driver, case, half)?;
        // Moving to another missing foreign key: an (unneeded) tombstone
        // from an inner join, the new row from a left join.
        let rhs2: &[(&str, &str)] = if lj {
            &[("lhs1", "(lhsValue1|rhs2,null)")]
        } else {
            &[]
        };
        step(
            "lhsValue1|rhs2",
            BASE + 1,
            lj.then_some("(lhsValue1|rhs2,null)"),
            rhs2,
        )?;
        let rhs3: &[(&str, &str)] = if lj {
            &[("lhs1", "(lhsValue1|rhs3,null)")]
        } else {
            &[]
        };
        step(
            "lhsValue1|rhs3",
            BASE + 2,
            lj.then_some("(lhsValue1|rhs3,null)"),
            rhs3,
        )?;
        // A right row nobody references any more changes nothing.
        t.right.pipe_key_value_at("rhs1", "rhsValue1", BASE + 3);
        assert_eq!(t.output.read_key_values_to_map(), map(&[]), "{case:?}");
        check_store(&driver, case, rhs3)?;
        // Moving to an existing foreign key completes the join.
        step(
            "lhsValue1|rhs1",
            BASE + 4,
            Some("(lhsValue1|rhs1,rhsValue1)"),
            &[("lhs1", "(lhsValue1|rhs1,rhsValue1)")],
        )?;
        // And away again: a tombstone (inner) or the half-joined row (left).
        step(
            "lhsValue1|rhs2",
            BASE + 5,
            lj.then_some("(lhsValue1|rhs2,null)"),
            rhs2,
        )?;
    }
    Ok(())
}

#[test]
fn should_unsubscribe_old_foreign_key_if_left_side_is_updated() -> TestResult {
    for case in cases() {
        let driver = topology(case, second_field)?;
        let t = topics(&driver);
        t.right.pipe_key_value_at("rhs1", "rhsValue1", BASE);
        t.right.pipe_key_value_at("rhs2", "rhsValue2", BASE + 1);
        assert_eq!(t.output.read_key_values_to_map(), map(&[]), "{case:?}");
        check_store(&driver, case, &[])?;
        t.left.pipe_key_value_at("lhs1", "lhsValue1|rhs1", BASE + 2);
        let first = [("lhs1", "(lhsValue1|rhs1,rhsValue1)")];
        assert_eq!(
            t.output.read_key_values_to_map(),
            map(&[("lhs1", Some(first[0].1))]),
            "{case:?}"
        );
        check_store(&driver, case, &first)?;
        // A new foreign key.
        t.left.pipe_key_value_at("lhs1", "lhsValue1|rhs2", BASE + 3);
        let second = [("lhs1", "(lhsValue1|rhs2,rhsValue2)")];
        assert_eq!(
            t.output.read_key_values_to_map(),
            map(&[("lhs1", Some(second[0].1))]),
            "{case:?}"
        );
        check_store(&driver, case, &second)?;
        // An update of the old foreign row reaches nobody.
        t.right
            .pipe_key_value_at("rhs1", "rhsValue1Delta", BASE + 4);
        assert_eq!(t.output.read_key_values_to_map(), map(&[]), "{case:?}");
        check_store(&driver, case, &second)?;
    }
    Ok(())
}

#[test]
fn should_emit_record_on_null_foreign_key_for_left_joins() -> TestResult {
    for case in cases().into_iter().filter(|c| c.left_join) {
        let driver = topology(case, |_| None)?;
        let t = topics(&driver);
        t.left.pipe_key_value_at("lhs1", "lhsValue1|rhs1", BASE);
        let expected = [("lhs1", "(lhsValue1|rhs1,null)")];
        assert_eq!(
            t.output.read_key_values_to_map(),
            map(&[("lhs1", Some(expected[0].1))]),
            "{case:?}"
        );
        check_store(&driver, case, &expected)?;
    }
    Ok(())
}

#[test]
fn should_emit_record_when_old_and_new_fk_differ() -> TestResult {
    fn extractor(value: &S) -> Option<S> {
        second_field(value).filter(|fk| fk != "returnNull")
    }
    for case in cases().into_iter().filter(|c| c.left_join) {
        let driver = topology(case, extractor)?;
        let t = topics(&driver);
        // The left table takes numbers 0-2, the right table 3-5, the
        // registration topic 6 and its nodes 7-9: the store is 10.
        let subscriptions = "KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000010";
        // Kafka's subscriptionStoreKey("lhs1", "rhs1").
        let key = [&[0, 0, 0, 4][..], b"rhs1", b"lhs1"].concat();
        let subscribed = || -> Result<bool, Box<dyn Error>> {
            let store = driver.timestamped_key_value_store::<Vec<u8>, Vec<u8>>(subscriptions)?;
            Ok(store.get(&key).is_some())
        };
        t.left.pipe_key_value_at("lhs1", "lhsValue1|rhs1", BASE);
        let expected = [("lhs1", "(lhsValue1|rhs1,null)")];
        assert_eq!(
            t.output.read_key_values_to_map(),
            map(&[("lhs1", Some(expected[0].1))]),
            "{case:?}"
        );
        check_store(&driver, case, &expected)?;
        assert!(subscribed()?, "{case:?}");
        t.left
            .pipe_key_value_at("lhs1", "lhsValue1|returnNull", BASE);
        let expected = [("lhs1", "(lhsValue1|returnNull,null)")];
        assert_eq!(
            t.output.read_key_values_to_map(),
            map(&[("lhs1", Some(expected[0].1))]),
            "{case:?}"
        );
        check_store(&driver, case, &expected)?;
        assert!(!subscribed()?, "{case:?}");
    }
    Ok(())
}

// ---------------------------------------------------------------------
// A naive model: the join's result table is, for each left row whose
// foreign key names a right row, joiner(left, right); a left join keeps
// the other left rows joined with nothing.

/// An operation on the two tables.
#[derive(Debug, Clone)]
enum Op {
    /// Left row `k` refers to right row `fk` (`None`: no foreign key).
    Left(u8, Option<u8>, u8),
    DeleteLeft(u8),
    Right(u8, u8),
    DeleteRight(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..6, proptest::option::weighted(0.85, 0u8..4), 0u8..3).prop_map(|(k, fk, v)| Op::Left(k, fk, v)),
        1 => (0u8..6).prop_map(Op::DeleteLeft),
        3 => (0u8..4, 0u8..3).prop_map(|(k, v)| Op::Right(k, v)),
        1 => (0u8..4).prop_map(Op::DeleteRight),
    ]
}

fn left_value(fk: Option<u8>, v: u8) -> S {
    match fk {
        Some(fk) => format!("v{v}|r{fk}"),
        None => format!("v{v}"),
    }
}

fn model(ops: &[Op], left_join: bool) -> BTreeMap<S, S> {
    let mut left: BTreeMap<S, S> = BTreeMap::new();
    let mut right: BTreeMap<S, S> = BTreeMap::new();
    for op in ops {
        match op {
            Op::Left(k, fk, v) => {
                left.insert(format!("l{k}"), left_value(*fk, *v));
            }
            Op::DeleteLeft(k) => {
                left.remove(&format!("l{k}"));
            }
            Op::Right(k, v) => {
                right.insert(format!("r{k}"), format!("w{v}"));
            }
            Op::DeleteRight(k) => {
                right.remove(&format!("r{k}"));
            }
        }
    }
    left.iter()
        .filter_map(|(k, l)| {
            let r = second_field(l).and_then(|fk| right.get(&fk));
            (r.is_some() || left_join).then(|| (k.clone(), joined(l, r)))
        })
        .collect()
}

/// Runs `ops` through the join; returns the result store and the table
/// the output topic describes (the last value per key, deletes removed).
fn run(
    ops: &[Op],
    left_join: bool,
    caching: bool,
) -> Result<(BTreeMap<S, S>, BTreeMap<S, S>), Box<dyn Error>> {
    let builder = StreamsBuilder::new();
    let left: KTable<S, S> = builder.table(LEFT_TABLE);
    let right: KTable<S, S> = builder.table(RIGHT_TABLE);
    let mut m = Materialized::as_("store");
    if !caching {
        m = m.with_caching_disabled();
    }
    let extractor = ForeignKeyExtractor::from_key_and_value(|_: &S, v: &S| second_field(v));
    let result = if left_join {
        left.left_join_on_foreign_key_with(&right, extractor, joined, TableJoined::as_("fk"), m)
    } else {
        left.join_on_foreign_key_with(
            &right,
            extractor,
            |l, r| joined(l, Some(r)),
            TableJoined::default(),
            m,
        )
    };
    result.to_stream().to(OUTPUT);
    let driver = TopologyTestDriver::new(builder.build()?)?;
    let t = topics(&driver);
    let mut output: BTreeMap<S, S> = BTreeMap::new();
    for (ts, op) in ops.iter().enumerate() {
        let ts = ts as i64;
        match op {
            Op::Left(k, fk, v) => {
                t.left
                    .pipe_key_value_at(format!("l{k}"), left_value(*fk, *v), ts)
            }
            Op::DeleteLeft(k) => t
                .left
                .pipe_record(TestRecord::tombstone(format!("l{k}")).at(ts)),
            Op::Right(k, v) => t
                .right
                .pipe_key_value_at(format!("r{k}"), format!("w{v}"), ts),
            Op::DeleteRight(k) => t
                .right
                .pipe_record(TestRecord::tombstone(format!("r{k}")).at(ts)),
        }
        for kv in t.output.read_key_values_to_list() {
            match kv.value {
                Some(v) => output.insert(kv.key.ok_or("null key")?, v),
                None => output.remove(&kv.key.ok_or("null key")?),
            };
        }
    }
    let store = driver
        .timestamped_key_value_store::<S, S>("store")?
        .to_map();
    Ok((store, output))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, rng_seed: proptest::test_runner::RngSeed::Fixed(14), ..ProptestConfig::default() })]

    /// After every random sequence, the result store and the table the
    /// output topic describes equal the model, for both joins, with and
    /// without the record cache.
    #[test]
    fn the_join_equals_a_naive_model(ops in proptest::collection::vec(op(), 1..40), left_join: bool, caching: bool) {
        let expected = model(&ops, left_join);
        let (store, output) = run(&ops, left_join, caching).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&store, &expected);
        prop_assert_eq!(&output, &expected);
    }
}

/// The runtime's view: the subscription topic is co-partitioned with the
/// foreign table and the response topic with the primary table (Kafka's
/// `copartitionSources` in `doJoinOnForeignKey`), so that they take those
/// tables' partition counts.
#[test]
fn internal_topics_take_the_partition_counts_of_their_tables() -> TestResult {
    use streams_core::runtime::TopologyMetadata;
    let builder = StreamsBuilder::new();
    let orders: KTable<S, S> = builder.table("orders");
    let products: KTable<S, S> = builder.table("products");
    orders
        .join_on_foreign_key(&products, second_field, |o, p| format!("{o}{p}"))
        .to_stream()
        .to("out");
    let topology = builder.build()?;
    let infos = topology.topics_info("app");
    let groups: Vec<Vec<String>> = infos
        .iter()
        .flat_map(|i| i.copartition_groups.clone())
        .collect();
    let registration = "app-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic";
    let response = "app-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic";
    assert_eq!(
        groups,
        [
            vec![response.to_owned(), "orders".to_owned()],
            vec![registration.to_owned(), "products".to_owned()],
        ]
    );
    let counts: BTreeMap<&str, i32> = [("orders", 2), ("products", 3)].into();
    let metadata = TopologyMetadata::resolve(infos, &groups, |t| Ok(counts.get(t).copied()))?;
    assert_eq!(metadata.partitions[registration], 3);
    assert_eq!(metadata.partitions[response], 2);
    // Two sub-topologies: 2 tasks of the primary side, 3 of the foreign.
    assert_eq!(metadata.tasks.len(), 5);
    Ok(())
}
