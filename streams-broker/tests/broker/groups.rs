//! The group coordinator through the client API: joins and generations,
//! eager revocation, crashes and session timeouts, leaving, poll-interval
//! expiry, generation-checked commits, a custom assignor's user data, and
//! a property test of the assignment once a group is stable.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use bytes::Bytes;
use proptest::prelude::*;
use streams_broker::{
    BrokerError, Cluster, ConsumerConfig, GroupState, NewTopic, ProducerRecord, RangeAssignor,
    SimulatedClients,
};
use streams_clients::{
    Assignment, ClientConfig, ClientError, ClientSupplier, Consumer, PartitionAssignor, Polled,
    Rebalance, Subscription, TopicPartition,
};

/// A cluster with topic `t` of `partitions` partitions, and its clients.
fn setup(partitions: i32) -> (Cluster, SimulatedClients) {
    let cluster = Cluster::new();
    cluster
        .admin()
        .create_topic(NewTopic::new("t", partitions))
        .unwrap();
    (cluster.clone(), SimulatedClients::new(cluster))
}

fn config(client: &str) -> ClientConfig {
    ClientConfig::new()
        .set("group.id", "g")
        .set("client.id", client)
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
}

/// A consumer of group `g` subscribed to `t` with the range assignor.
fn member(clients: &SimulatedClients, config: &ClientConfig) -> Box<dyn Consumer> {
    let mut consumer = clients.consumer(config).unwrap();
    consumer
        .subscribe(&["t".to_owned()], Arc::new(RangeAssignor))
        .unwrap();
    consumer
}

fn tps(partitions: &[i32]) -> Vec<TopicPartition> {
    partitions
        .iter()
        .map(|p| TopicPartition::new("t", *p))
        .collect()
}

fn assigned(partitions: &[i32], generation: i32) -> Option<Rebalance> {
    Some(Rebalance::Assigned {
        partitions: tps(partitions),
        user_data: Bytes::new(),
        generation,
    })
}

/// The rebalance event of a poll that must return no records.
fn event(consumer: &mut dyn Consumer) -> Option<Rebalance> {
    let polled = consumer.poll().unwrap();
    assert_eq!(polled.records, [], "{polled:?}");
    polled.rebalance
}

fn member_id(consumer: &dyn Consumer) -> String {
    consumer.group_metadata().unwrap().member_id
}

/// Each member's partitions, as the coordinator has them.
fn assignments(cluster: &Cluster) -> BTreeMap<String, Vec<i32>> {
    cluster
        .admin()
        .describe_group("g")
        .members
        .into_iter()
        .map(|m| {
            let partitions = m.assignment.iter().map(|tp| tp.partition).collect();
            (m.member_id, partitions)
        })
        .collect()
}

/// a alone (generation 1), then b joins (generation 2): a revokes, both
/// get their range.
fn two_members(clients: &SimulatedClients) -> (Box<dyn Consumer>, Box<dyn Consumer>) {
    let mut a = member(clients, &config("a"));
    assert_eq!(event(a.as_mut()), assigned(&[0, 1, 2, 3], 1));
    let mut b = member(clients, &config("b"));
    assert_eq!(event(b.as_mut()), None);
    assert_eq!(
        event(a.as_mut()),
        Some(Rebalance::Revoked(tps(&[0, 1, 2, 3])))
    );
    assert_eq!(event(a.as_mut()), assigned(&[0, 1], 2));
    assert_eq!(event(b.as_mut()), assigned(&[2, 3], 2));
    (a, b)
}

#[test]
fn a_second_member_takes_the_group_from_generation_1_to_2_and_the_range_splits() {
    let (cluster, clients) = setup(4);
    for i in 0..8 {
        cluster
            .producer()
            .send(ProducerRecord::new("t", "k", format!("{i}")).partition(i % 4))
            .unwrap();
    }
    let admin = cluster.admin();
    let mut a = member(&clients, &config("a"));
    // Subscribing sends nothing: the coordinator does not know the group
    // yet, and describes it as Kafka does an unknown group.
    assert_eq!(admin.describe_group("g").state, GroupState::Dead);
    // The first poll joins, completes generation 1 alone, and fetches.
    let first = a.poll().unwrap();
    assert_eq!(first.rebalance, assigned(&[0, 1, 2, 3], 1));
    assert_eq!(first.records.len(), 8);
    let a_id = member_id(a.as_ref());

    let mut b = member(&clients, &config("b"));
    assert_eq!(event(b.as_mut()), None); // joined; waits for a to rejoin
    let group = admin.describe_group("g");
    assert_eq!(
        (group.state, group.generation, group.leader.as_deref()),
        (GroupState::PreparingRebalance, 1, Some(a_id.as_str()))
    );
    // a revokes everything and fetches nothing, then rejoins: everyone has,
    // and a, the leader still, assigns generation 2.
    assert_eq!(
        event(a.as_mut()),
        Some(Rebalance::Revoked(tps(&[0, 1, 2, 3])))
    );
    // It commits what it read (each partition's 2 records) before it
    // rejoins, so no one reads them again.
    let read: BTreeMap<TopicPartition, i64> =
        tps(&[0, 1, 2, 3]).into_iter().map(|tp| (tp, 2)).collect();
    a.commit(&read).unwrap();
    assert_eq!(event(a.as_mut()), assigned(&[0, 1], 2));
    assert_eq!(a.assignment(), tps(&[0, 1]));
    assert_eq!(a.position(&TopicPartition::new("t", 0)).unwrap(), 2);
    assert_eq!(event(b.as_mut()), assigned(&[2, 3], 2));
    let b_id = member_id(b.as_ref());
    let group = admin.describe_group("g");
    assert_eq!(
        (group.state, group.generation, group.leader.as_deref()),
        (GroupState::Stable, 2, Some(a_id.as_str()))
    );
    assert_eq!(group.protocol.as_deref(), Some("range"));
    assert_eq!(
        assignments(&cluster),
        BTreeMap::from([(a_id.clone(), vec![0, 1]), (b_id.clone(), vec![2, 3])])
    );

    // A third member: both existing members revoke, then all three are
    // assigned generation 3.
    let mut c = member(&clients, &config("c"));
    assert_eq!(event(c.as_mut()), None);
    assert_eq!(event(a.as_mut()), Some(Rebalance::Revoked(tps(&[0, 1]))));
    assert_eq!(event(b.as_mut()), Some(Rebalance::Revoked(tps(&[2, 3]))));
    assert_eq!(event(a.as_mut()), None); // rejoined; b has not
    assert_eq!(event(b.as_mut()), None); // the last to rejoin; a leads
    assert_eq!(
        admin.describe_group("g").state,
        GroupState::CompletingRebalance
    );
    assert_eq!(event(c.as_mut()), None); // waits for the leader's assignment
    assert_eq!(event(a.as_mut()), assigned(&[0, 1], 3));
    assert_eq!(event(b.as_mut()), assigned(&[2], 3));
    assert_eq!(event(c.as_mut()), assigned(&[3], 3));
}

#[test]
fn a_crashed_member_stays_until_its_session_times_out_then_the_survivor_takes_all() {
    let (cluster, clients) = setup(4);
    let (mut a, b) = two_members(&clients);
    let b_id = member_id(b.as_ref());
    drop(b); // no close: a crashed process
    cluster.advance_ms(44_999);
    assert_eq!(event(a.as_mut()), None);
    let group = cluster.admin().describe_group("g");
    assert_eq!((group.state, group.generation), (GroupState::Stable, 2));
    assert!(group.members.iter().any(|m| m.member_id == b_id));
    // session.timeout.ms (45 s) after its last poll, the clock's advance
    // removes it.
    cluster.advance_ms(1);
    let group = cluster.admin().describe_group("g");
    assert_eq!(group.state, GroupState::PreparingRebalance);
    assert_eq!(group.members.len(), 1);
    assert_eq!(event(a.as_mut()), Some(Rebalance::Revoked(tps(&[0, 1]))));
    assert_eq!(event(a.as_mut()), assigned(&[0, 1, 2, 3], 3));
}

#[test]
fn close_with_leave_group_rebalances_at_once_and_without_waits_for_the_session() {
    let (cluster, clients) = setup(4);
    let (mut a, mut b) = two_members(&clients);
    b.close(true);
    assert_eq!(
        cluster.admin().describe_group("g").state,
        GroupState::PreparingRebalance
    );
    assert_eq!(event(a.as_mut()), Some(Rebalance::Revoked(tps(&[0, 1]))));
    assert_eq!(event(a.as_mut()), assigned(&[0, 1, 2, 3], 3));
    assert!(matches!(
        b.poll(),
        Err(ClientError::InvalidState {
            operation: "poll",
            ..
        })
    ));

    // close(false), Kafka Streams' default: the member stays until its
    // session times out.
    let mut c = member(&clients, &config("c"));
    assert_eq!(event(c.as_mut()), None);
    assert_eq!(
        event(a.as_mut()),
        Some(Rebalance::Revoked(tps(&[0, 1, 2, 3])))
    );
    assert_eq!(event(a.as_mut()), assigned(&[0, 1], 4));
    assert_eq!(event(c.as_mut()), assigned(&[2, 3], 4));
    c.close(false);
    cluster.advance_ms(44_999);
    assert_eq!(event(a.as_mut()), None);
    assert_eq!(cluster.admin().describe_group("g").members.len(), 2);
    cluster.advance_ms(1);
    assert_eq!(event(a.as_mut()), Some(Rebalance::Revoked(tps(&[0, 1]))));
    assert_eq!(event(a.as_mut()), assigned(&[0, 1, 2, 3], 5));
}

#[test]
fn commits_are_accepted_through_preparing_rebalance_and_refused_from_an_old_generation() {
    let (cluster, clients) = setup(4);
    let (mut a, mut b) = two_members(&clients);
    let offsets = |p: i32, o: i64| BTreeMap::from([(TopicPartition::new("t", p), o)]);
    b.commit(&offsets(2, 5)).unwrap();
    let mut c = member(&clients, &config("c"));
    assert_eq!(event(c.as_mut()), None);
    assert_eq!(
        cluster.admin().describe_group("g").state,
        GroupState::PreparingRebalance
    );
    // Still generation 2: before and after the revocation.
    b.commit(&offsets(2, 6)).unwrap();
    assert_eq!(event(b.as_mut()), Some(Rebalance::Revoked(tps(&[2, 3]))));
    b.commit(&offsets(3, 7)).unwrap();
    assert_eq!(b.committed(&TopicPartition::new("t", 2)).unwrap(), Some(6));
    assert_eq!(b.committed(&TopicPartition::new("t", 3)).unwrap(), Some(7));
    // a rejoins, then b: generation 3 begins; b's generation 2 is refused.
    assert_eq!(event(a.as_mut()), Some(Rebalance::Revoked(tps(&[0, 1]))));
    assert_eq!(event(a.as_mut()), None);
    assert_eq!(event(b.as_mut()), None);
    let err = b.commit(&offsets(2, 8)).unwrap_err();
    assert!(err.is_task_migrated());
    let ClientError::CommitFailed { group, detail } = err else {
        panic!("{err:?}");
    };
    assert_eq!(group, "g");
    assert!(
        detail.contains("generation 2 but the group is at generation 3"),
        "{detail}"
    );
    assert_eq!(b.committed(&TopicPartition::new("t", 2)).unwrap(), Some(6));

    // A member the group removed (it did not poll for max.poll.interval.ms)
    // is unknown to it.
    let mut d = clients
        .consumer(
            &config("d")
                .set("group.id", "h")
                .set("max.poll.interval.ms", "1000"),
        )
        .unwrap();
    d.subscribe(&["t".to_owned()], Arc::new(RangeAssignor))
        .unwrap();
    assert_eq!(event(d.as_mut()), assigned(&[0, 1, 2, 3], 1));
    d.commit(&offsets(0, 1)).unwrap();
    cluster.advance_ms(1_000);
    let err = d.commit(&offsets(0, 2)).unwrap_err();
    assert!(
        matches!(&err, ClientError::CommitFailed { group, detail } if group == "h" && detail.contains("UNKNOWN_MEMBER_ID")),
        "{err:?}"
    );
    assert_eq!(d.committed(&TopicPartition::new("t", 0)).unwrap(), Some(1));
    drop((a, c));
}

/// An assignor that deals the partitions out round-robin and tells each
/// member what every member said at join.
#[derive(Debug)]
struct Dealer {
    process: &'static str,
}

impl PartitionAssignor for Dealer {
    fn name(&self) -> &str {
        "dealer"
    }

    fn subscription_user_data(&self, topics: &BTreeSet<String>) -> Bytes {
        let topics: Vec<&str> = topics.iter().map(String::as_str).collect();
        Bytes::from(format!("{}@{}", self.process, topics.join(",")))
    }

    fn assign(
        &self,
        partitions_per_topic: &BTreeMap<String, i32>,
        members: &BTreeMap<String, Subscription>,
    ) -> BTreeMap<String, Assignment> {
        let said: Vec<String> = members
            .values()
            .map(|s| String::from_utf8_lossy(&s.user_data).into_owned())
            .collect();
        let ids: Vec<&String> = members.keys().collect();
        let mut out: BTreeMap<String, Assignment> = ids
            .iter()
            .map(|id| {
                let data = format!("{id} of [{}] by {}", said.join(" "), self.process);
                let assignment = Assignment {
                    partitions: Vec::new(),
                    user_data: Bytes::from(data),
                };
                ((*id).clone(), assignment)
            })
            .collect();
        let mut i = 0;
        for (topic, count) in partitions_per_topic {
            for p in 0..*count {
                let id = ids[i % ids.len()];
                if let Some(a) = out.get_mut(id) {
                    a.partitions.push(TopicPartition::new(topic.clone(), p));
                }
                i += 1;
            }
        }
        out
    }
}

#[test]
fn a_custom_assignors_user_data_reaches_the_leader_and_every_member() {
    let (cluster, clients) = setup(3);
    let subscribe = |client: &str, process: &'static str| {
        let mut consumer = clients.consumer(&config(client)).unwrap();
        consumer
            .subscribe(&["t".to_owned()], Arc::new(Dealer { process }))
            .unwrap();
        consumer
    };
    let mut a = subscribe("a", "p1");
    let _ = a.poll().unwrap();
    let mut b = subscribe("b", "p2");
    assert_eq!(event(b.as_mut()), None);
    assert!(matches!(event(a.as_mut()), Some(Rebalance::Revoked(_))));
    let (a_id, b_id) = (member_id(a.as_ref()), {
        let _ = a.poll().unwrap(); // rejoins: generation 2 by a's assignor
        let Some(Rebalance::Assigned { user_data, .. }) = event(b.as_mut()) else {
            panic!("b has no assignment");
        };
        let b_id = member_id(b.as_ref());
        assert_eq!(
            user_data,
            Bytes::from(format!("{b_id} of [p1@t p2@t] by p1"))
        );
        b_id
    });
    let group = cluster.admin().describe_group("g");
    assert_eq!(group.protocol.as_deref(), Some("dealer"));
    let data: BTreeMap<&str, (Vec<i32>, Bytes)> = group
        .members
        .iter()
        .map(|m| {
            let partitions = m.assignment.iter().map(|tp| tp.partition).collect();
            (m.member_id.as_str(), (partitions, m.user_data.clone()))
        })
        .collect();
    assert_eq!(
        data,
        BTreeMap::from([
            (
                a_id.as_str(),
                (
                    vec![0, 2],
                    Bytes::from(format!("{a_id} of [p1@t p2@t] by p1"))
                )
            ),
            (
                b_id.as_str(),
                (vec![1], Bytes::from(format!("{b_id} of [p1@t p2@t] by p1")))
            ),
        ])
    );

    // A member with another assignor cannot join.
    let mut range = cluster.consumer(ConsumerConfig::new().group_id("g"));
    range.subscribe(["t"]).unwrap();
    assert_eq!(
        range.poll().unwrap_err(),
        BrokerError::InconsistentGroupProtocol {
            group: "g".into(),
            protocol: "range".into(),
            group_protocol: "dealer".into(),
        }
    );
}

#[test]
fn a_live_member_that_does_not_poll_for_max_poll_interval_loses_its_partitions() {
    let (cluster, clients) = setup(4);
    let mut a = member(&clients, &config("a"));
    assert_eq!(event(a.as_mut()), assigned(&[0, 1, 2, 3], 1));
    let mut b = member(&clients, &config("b").set("max.poll.interval.ms", "10000"));
    assert_eq!(event(b.as_mut()), None);
    assert_eq!(
        event(a.as_mut()),
        Some(Rebalance::Revoked(tps(&[0, 1, 2, 3])))
    );
    assert_eq!(event(a.as_mut()), assigned(&[0, 1], 2));
    assert_eq!(event(b.as_mut()), assigned(&[2, 3], 2));
    let old_b = member_id(b.as_ref());
    // a polls every 5 s; b stops polling but its client lives (its
    // heartbeats go on, so the session does not expire).
    cluster.advance_ms(5_000);
    assert_eq!(event(a.as_mut()), None);
    cluster.advance_ms(4_999);
    assert_eq!(
        cluster.admin().describe_group("g").state,
        GroupState::Stable
    );
    cluster.advance_ms(1);
    let group = cluster.admin().describe_group("g");
    assert_eq!(group.state, GroupState::PreparingRebalance);
    assert!(group.members.iter().all(|m| m.member_id != old_b));
    // b's next poll says its partitions are lost; the one after rejoins as
    // a new member.
    assert_eq!(event(b.as_mut()), Some(Rebalance::Lost(tps(&[2, 3]))));
    assert_eq!(b.group_metadata(), None);
    assert_eq!(event(b.as_mut()), None);
    assert_ne!(cluster.admin().describe_group("g").members.len(), 1);
    assert_eq!(event(a.as_mut()), Some(Rebalance::Revoked(tps(&[0, 1]))));
    let Some(Rebalance::Assigned { generation, .. }) = event(a.as_mut()) else {
        panic!("a has no assignment");
    };
    assert_eq!(generation, 3);
    let Some(Rebalance::Assigned { partitions, .. }) = event(b.as_mut()) else {
        panic!("b has no assignment");
    };
    assert_eq!(partitions.len(), 2);
    assert_ne!(member_id(b.as_ref()), old_b);
}

/// One step of the property test.
#[derive(Debug, Clone)]
enum Op {
    /// A consumer in slot `i` subscribes (when the slot is empty).
    Join(usize),
    /// The consumer in slot `i` polls.
    Poll(usize),
    /// The consumer in slot `i` is dropped without close.
    Crash(usize),
    /// The consumer in slot `i` closes.
    Close(usize, bool),
    /// The clock moves.
    Advance(i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => (0..4usize).prop_map(Op::Join),
        3 => (0..4usize).prop_map(Op::Poll),
        1 => (0..4usize).prop_map(Op::Crash),
        1 => ((0..4usize), any::<bool>()).prop_map(|(i, leave)| Op::Close(i, leave)),
        1 => prop_oneof![Just(1_000i64), Just(20_000), Just(45_000), Just(300_000)]
            .prop_map(Op::Advance),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn once_stable_every_partition_has_exactly_one_live_member_and_generations_only_grow(
        ops in prop::collection::vec(op(), 1..40),
    ) {
        let cluster = Cluster::new();
        cluster.admin().create_topic(NewTopic::new("t", 5)).unwrap();
        cluster.admin().create_topic(NewTopic::new("u", 3)).unwrap();
        let clients = SimulatedClients::new(cluster.clone());
        let mut slots: Vec<Option<Box<dyn Consumer>>> = (0..4).map(|_| None).collect();
        let mut generation = cluster.admin().describe_group("g").generation;
        let mut check = |cluster: &Cluster| {
            let now = cluster.admin().describe_group("g").generation;
            prop_assert!(now >= generation, "generation {} after {}", now, generation);
            generation = now;
            Ok(())
        };
        let poll = |consumer: &mut Box<dyn Consumer>| -> Result<Polled, TestCaseError> {
            let polled = consumer.poll().unwrap();
            if matches!(polled.rebalance, Some(Rebalance::Revoked(_) | Rebalance::Lost(_))) {
                prop_assert!(polled.records.is_empty());
            }
            Ok(polled)
        };
        for op in ops {
            match op {
                Op::Join(i) => {
                    if slots[i].is_none() {
                        let mut consumer = clients.consumer(&config(&format!("c{i}"))).unwrap();
                        consumer
                            .subscribe(&["t".to_owned(), "u".to_owned()], Arc::new(RangeAssignor))
                            .unwrap();
                        slots[i] = Some(consumer);
                    }
                }
                Op::Poll(i) => {
                    if let Some(consumer) = &mut slots[i] {
                        poll(consumer)?;
                    }
                }
                Op::Crash(i) => drop(slots[i].take()),
                Op::Close(i, leave) => {
                    if let Some(mut consumer) = slots[i].take() {
                        consumer.close(leave);
                    }
                }
                Op::Advance(ms) => cluster.advance_ms(ms),
            }
            check(&cluster)?;
        }
        // Every live consumer polls each second until the group is stable
        // with exactly the live consumers (the crashed ones time out).
        let mut settled = false;
        for _ in 0..200 {
            for consumer in slots.iter_mut().flatten() {
                poll(consumer)?;
            }
            check(&cluster)?;
            let group = cluster.admin().describe_group("g");
            let live: BTreeSet<String> = slots
                .iter()
                .flatten()
                .filter_map(|c| c.group_metadata().map(|g| g.member_id))
                .collect();
            let members: BTreeSet<String> =
                group.members.iter().map(|m| m.member_id.clone()).collect();
            let all_assigned = slots.iter().flatten().all(|c| {
                c.group_metadata().is_some_and(|g| g.generation == group.generation)
            });
            if (group.state == GroupState::Stable && members == live && all_assigned)
                || (slots.iter().all(Option::is_none) && group.members.is_empty())
            {
                settled = true;
                break;
            }
            cluster.advance_ms(1_000);
        }
        prop_assert!(settled, "{:?}", cluster.admin().describe_group("g"));
        let group = cluster.admin().describe_group("g");
        let mut owners: BTreeMap<TopicPartition, Vec<String>> = BTreeMap::new();
        for m in &group.members {
            for tp in &m.assignment {
                owners.entry(tp.clone()).or_default().push(m.member_id.clone());
            }
        }
        if slots.iter().any(Option::is_some) {
            let every: Vec<TopicPartition> = (0..5)
                .map(|p| TopicPartition::new("t", p))
                .chain((0..3).map(|p| TopicPartition::new("u", p)))
                .collect();
            prop_assert_eq!(owners.keys().cloned().collect::<Vec<_>>(), every);
            prop_assert!(owners.values().all(|o| o.len() == 1), "{:?}", owners);
            // Each consumer reads what the coordinator assigned it.
            for consumer in slots.iter().flatten() {
                let id = consumer.group_metadata().unwrap().member_id;
                let theirs: Vec<TopicPartition> = group
                    .members
                    .iter()
                    .find(|m| m.member_id == id)
                    .map(|m| m.assignment.clone())
                    .unwrap_or_default();
                prop_assert_eq!(consumer.assignment(), theirs);
            }
        } else {
            prop_assert!(owners.is_empty());
        }
    }
}

#[test]
fn a_new_subscription_revokes_and_rejoins_with_its_topics_and_assignor() {
    let (cluster, clients) = setup(2);
    cluster.admin().create_topic(NewTopic::new("u", 1)).unwrap();
    let mut a = member(&clients, &config("a"));
    assert_eq!(event(a.as_mut()), assigned(&[0, 1], 1));
    a.subscribe(
        &["t".to_owned(), "u".to_owned()],
        Arc::new(Dealer { process: "p1" }),
    )
    .unwrap();
    assert_eq!(event(a.as_mut()), Some(Rebalance::Revoked(tps(&[0, 1]))));
    let Some(Rebalance::Assigned {
        partitions,
        generation,
        ..
    }) = event(a.as_mut())
    else {
        panic!("a has no assignment");
    };
    assert_eq!(generation, 2);
    assert_eq!(
        partitions,
        [
            TopicPartition::new("t", 0),
            TopicPartition::new("t", 1),
            TopicPartition::new("u", 0)
        ]
    );
    let group = cluster.admin().describe_group("g");
    assert_eq!(group.protocol.as_deref(), Some("dealer"));
    assert_eq!(
        group.members[0].topics,
        BTreeSet::from(["t".to_owned(), "u".to_owned()])
    );
}

#[test]
fn a_group_empties_when_its_last_member_leaves_and_only_then_can_be_deleted() {
    let (cluster, clients) = setup(2);
    let admin = cluster.admin();
    let mut a = member(&clients, &config("a"));
    assert_eq!(event(a.as_mut()), assigned(&[0, 1], 1));
    a.commit(&BTreeMap::from([(TopicPartition::new("t", 0), 1)]))
        .unwrap();
    let err = admin.delete_group("g").unwrap_err();
    assert_eq!(
        err.to_string(),
        "group g has 1 member(s) (NON_EMPTY_GROUP): close its consumers, or wait for their \
         sessions to time out, before deleting it"
    );
    a.close(true);
    // The emptied group still starts a generation, and keeps its offsets.
    let group = admin.describe_group("g");
    assert_eq!(
        (group.state, group.generation, group.leader),
        (GroupState::Empty, 2, None)
    );
    assert_eq!(admin.list_groups(), [("g".to_owned(), GroupState::Empty)]);
    let mut reader = cluster.consumer(ConsumerConfig::new().group_id("g"));
    assert_eq!(
        reader.committed(&TopicPartition::new("t", 0)).unwrap(),
        Some(1)
    );
    // A consumer outside group management commits to an Empty group.
    reader
        .commit_offsets([(TopicPartition::new("t", 1), 4)])
        .unwrap();
    admin.delete_group("g").unwrap();
    assert_eq!(admin.describe_group("g").state, GroupState::Dead);
    assert_eq!(
        reader.committed(&TopicPartition::new("t", 1)).unwrap(),
        None
    );
    assert_eq!(
        admin.delete_group("g").unwrap_err(),
        BrokerError::GroupIdNotFound { group: "g".into() }
    );
}

#[test]
fn one_long_advance_fires_each_deadline_at_its_own_instant() {
    let (cluster, clients) = setup(4);
    let (mut a, b) = two_members(&clients);
    drop(b);
    // b's session ends at 45 s (a rebalance that would wait until 345 s for
    // a), but a has not polled since 0, so at 300 s it leaves: the group
    // is empty by then, one generation later.
    cluster.advance_ms(299_999);
    let group = cluster.admin().describe_group("g");
    assert_eq!(
        (group.state, group.generation, group.members.len()),
        (GroupState::PreparingRebalance, 2, 1)
    );
    cluster.advance_ms(1);
    let group = cluster.admin().describe_group("g");
    assert_eq!(
        (group.state, group.generation, group.members.len()),
        (GroupState::Empty, 3, 0)
    );
    assert_eq!(event(a.as_mut()), Some(Rebalance::Lost(tps(&[0, 1]))));
    assert_eq!(event(a.as_mut()), assigned(&[0, 1, 2, 3], 4));
}

#[test]
fn a_member_that_never_syncs_its_generation_is_removed_after_the_rebalance_timeout() {
    let (cluster, clients) = setup(4);
    let mut a = member(&clients, &config("a"));
    assert_eq!(event(a.as_mut()), assigned(&[0, 1, 2, 3], 1));
    // b's session outlasts the rebalance timeout (a's and b's
    // max.poll.interval.ms, 300 s); it joins, then crashes.
    let mut b = member(&clients, &config("b").set("session.timeout.ms", "400000"));
    assert_eq!(event(b.as_mut()), None);
    drop(b);
    assert_eq!(
        event(a.as_mut()),
        Some(Rebalance::Revoked(tps(&[0, 1, 2, 3])))
    );
    assert_eq!(event(a.as_mut()), assigned(&[0, 1], 2));
    cluster.advance_ms(150_000);
    assert_eq!(event(a.as_mut()), None);
    cluster.advance_ms(149_999);
    assert_eq!(event(a.as_mut()), None);
    assert_eq!(cluster.admin().describe_group("g").members.len(), 2);
    // 300 s after generation 2 began, b, which never sent its SyncGroup,
    // is removed (Kafka's pending sync expiry), before its session ends.
    cluster.advance_ms(1);
    let group = cluster.admin().describe_group("g");
    assert_eq!(
        (group.state, group.members.len()),
        (GroupState::PreparingRebalance, 1)
    );
    assert_eq!(event(a.as_mut()), Some(Rebalance::Revoked(tps(&[0, 1]))));
    assert_eq!(event(a.as_mut()), assigned(&[0, 1, 2, 3], 3));
}
