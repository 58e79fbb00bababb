//! The group coordinator: Kafka's `GroupCoordinator` for the classic
//! consumer group protocol (`ClassicGroup` and the classic parts of
//! `GroupMetadataManager`), on the cluster's mock clock.
//!
//! A group moves through Kafka's states:
//!
//! - `Empty`: no members (offsets may be committed by consumers outside
//!   group management, with generation -1).
//! - `PreparingRebalance`: a member joined, left or failed; the coordinator
//!   waits until every member has rejoined or the rebalance timeout (the
//!   largest `max.poll.interval.ms` of the members) passes, then removes
//!   the members that did not rejoin and starts the next generation. A new
//!   group waits `group.initial.rebalance.delay.ms` first (extended by each
//!   member that joins meanwhile).
//! - `CompletingRebalance`: the generation has begun; the leader (the first
//!   member to join it, or the previous leader when it rejoined) runs its
//!   assignor on its next poll and sends the assignment.
//! - `Stable`: every member can fetch its assignment; offset commits are
//!   accepted from members of this generation.
//! - `Dead`: the group was deleted (what `describe_group` reports for a group
//!   the coordinator does not know, as Kafka's `describeGroups` does).
//!
//! Members fail as in Kafka: a consumer that is dropped without `close`
//! (a crashed process) stops heartbeating and is removed
//! `session.timeout.ms` later; a consumer that stays alive but does not poll
//! for `max.poll.interval.ms` leaves the group (its next poll reports the
//! partitions lost); a member that has not synced `max.poll.interval.ms`
//! after its generation began is removed. Deadlines fire at their exact
//! instant when the clock advances, and are checked on every group call.
//!
//! ```
//! use streams_broker::{AutoOffsetReset, Cluster, ConsumerConfig, GroupState, NewTopic, Rebalance};
//!
//! let cluster = Cluster::new();
//! cluster.admin().create_topic(NewTopic::new("t", 2))?;
//! let config = ConsumerConfig::new().group_id("g").auto_offset_reset(AutoOffsetReset::Earliest);
//! let mut a = cluster.consumer(config.clone().client_id("a"));
//! a.subscribe(["t"])?;
//! a.poll()?; // joins: generation 1, a leads and takes both partitions
//! let mut b = cluster.consumer(config.client_id("b"));
//! b.subscribe(["t"])?;
//! b.poll()?; // joins: the group prepares a rebalance
//! assert_eq!(cluster.admin().describe_group("g").state, GroupState::PreparingRebalance);
//! assert!(matches!(a.poll_with_rebalance()?.rebalance, Some(Rebalance::Revoked(_))));
//! a.poll()?; // rejoins: everyone has, generation 2 begins and a assigns
//! b.poll()?;
//! let group = cluster.admin().describe_group("g");
//! assert_eq!((group.state, group.generation), (GroupState::Stable, 2));
//! assert_eq!(group.members.len(), 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use bytes::Bytes;
use streams_clients::{Assignment, Subscription};

use crate::cluster::State;
use crate::error::{BrokerError, Result};
use crate::topic_partition::TopicPartition;

/// A classic group's state (Kafka's `ClassicGroupState`); `Display` writes
/// Kafka's names (`PreparingRebalance`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GroupState {
    /// No members.
    #[default]
    Empty,
    /// Waiting for the members to (re)join.
    PreparingRebalance,
    /// The generation has begun; waiting for the leader's assignment.
    CompletingRebalance,
    /// Every member has its assignment.
    Stable,
    /// Deleted, or never known.
    Dead,
}

impl fmt::Display for GroupState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GroupState::Empty => "Empty",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
            GroupState::Dead => "Dead",
        })
    }
}

/// A group as Kafka's `describeGroups` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDescription {
    /// The group id.
    pub group_id: String,
    /// The state.
    pub state: GroupState,
    /// The generation (0 before the first; -1 for a `Dead` group).
    pub generation: i32,
    /// The assignor the members share (`range`, `stream`), once one joined.
    pub protocol: Option<String>,
    /// The leader's member id, while the group has one.
    pub leader: Option<String>,
    /// The members, in member id order.
    pub members: Vec<MemberDescription>,
}

/// One member of a described group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberDescription {
    /// The member id the coordinator gave it.
    pub member_id: String,
    /// Its `client.id`.
    pub client_id: String,
    /// The topics it subscribed to.
    pub topics: BTreeSet<String>,
    /// Its partitions in the current generation (empty until the leader's
    /// assignment arrives).
    pub assignment: Vec<TopicPartition>,
    /// What the assignor gave it besides partitions.
    pub user_data: Bytes,
}

/// What a consumer sends with its JoinGroup.
#[derive(Debug, Clone)]
pub(crate) struct JoinRequest {
    pub(crate) client_id: String,
    pub(crate) topics: BTreeSet<String>,
    pub(crate) protocol: String,
    pub(crate) user_data: Bytes,
    pub(crate) owned: Vec<TopicPartition>,
    pub(crate) session_timeout_ms: i64,
    pub(crate) rebalance_timeout_ms: i64,
}

/// The answer to a member's SyncGroup.
#[derive(Debug)]
pub(crate) enum SyncOutcome {
    /// The member is not in the group (removed, or never joined).
    UnknownMember,
    /// A new rebalance started and the member has not joined it.
    Rejoin,
    /// The member joined; the generation has not begun.
    JoinPending,
    /// The member leads the new generation: run the assignor on these.
    Lead {
        generation: i32,
        partitions_per_topic: BTreeMap<String, i32>,
        members: BTreeMap<String, Subscription>,
    },
    /// Waiting for the leader's assignment.
    AwaitingLeader,
    /// The member's assignment in `generation`.
    Assigned {
        generation: i32,
        assignment: Assignment,
    },
}

/// The answer to a member's heartbeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeartbeatOutcome {
    /// The member is in the stable generation it knows.
    Stable,
    /// The group is rebalancing (or moved past the member's generation).
    Rebalancing,
    /// The member is not in the group any more.
    UnknownMember,
}

#[derive(Debug)]
pub(crate) struct Member {
    client_id: String,
    topics: BTreeSet<String>,
    protocol: String,
    user_data: Bytes,
    owned: Vec<TopicPartition>,
    assignment: Option<Assignment>,
    /// Has (re)joined the rebalance in progress.
    joined: bool,
    /// Has sent its SyncGroup in the current generation.
    synced: bool,
    session_timeout_ms: i64,
    rebalance_timeout_ms: i64,
    last_heartbeat_ms: i64,
    last_poll_ms: i64,
    /// Its client still runs (a background heartbeat thread beats for it).
    alive: bool,
}

impl Member {
    /// When the member fails: `session.timeout.ms` after the last
    /// heartbeat once its client stopped, else `max.poll.interval.ms` after
    /// its last poll.
    fn expiry_ms(&self) -> i64 {
        if self.alive {
            self.last_poll_ms.saturating_add(self.rebalance_timeout_ms)
        } else {
            self.last_heartbeat_ms
                .saturating_add(self.session_timeout_ms)
        }
    }
}

/// The initial rebalance of a new group: its delay and the time left.
#[derive(Debug, Clone, Copy)]
struct InitialDelay {
    delay_ms: i64,
    remaining_ms: i64,
    new_member_added: bool,
}

/// A consumer group's membership, generation and committed offsets.
#[derive(Debug, Default)]
pub(crate) struct Group {
    state: GroupState,
    pub(crate) generation: i32,
    leader: Option<String>,
    protocol: Option<String>,
    pub(crate) members: BTreeMap<String, Member>,
    /// Members that rejoined the rebalance in progress, in join order.
    join_order: Vec<String>,
    join_deadline_ms: Option<i64>,
    initial: Option<InitialDelay>,
    sync_deadline_ms: Option<i64>,
    /// `group.initial.rebalance.delay.ms`, as the broker has it now.
    initial_rebalance_delay_ms: i64,
    pub(crate) offsets: BTreeMap<TopicPartition, i64>,
}

impl Group {
    /// The largest rebalance timeout of the members (Kafka's
    /// `rebalanceTimeoutMs`).
    fn rebalance_timeout_ms(&self) -> i64 {
        self.members
            .values()
            .map(|m| m.rebalance_timeout_ms)
            .max()
            .unwrap_or(0)
    }

    /// The next instant something is due.
    fn next_deadline(&self) -> Option<i64> {
        let members = self.members.values().map(Member::expiry_ms).min();
        let join = self
            .join_deadline_ms
            .filter(|_| self.state == GroupState::PreparingRebalance);
        let sync = self.sync_deadline_ms.filter(|_| {
            matches!(
                self.state,
                GroupState::CompletingRebalance | GroupState::Stable
            ) && self.members.values().any(|m| !m.synced)
        });
        [members, join, sync].into_iter().flatten().min()
    }

    /// Fires every deadline up to `now`, each at its own instant.
    fn expire(&mut self, now: i64) {
        // Each round removes a member or ends a phase; the bound only
        // guards against a deadline that would not move.
        for _ in 0..(4 * self.members.len() + 8) {
            let Some(at) = self.next_deadline().filter(|t| *t <= now) else {
                return;
            };
            let failed: Vec<String> = self
                .members
                .iter()
                .filter(|(_, m)| m.expiry_ms() <= at)
                .map(|(id, _)| id.clone())
                .collect();
            if !failed.is_empty() {
                for id in failed {
                    self.remove_member(&id, at);
                }
                continue;
            }
            if self.state == GroupState::PreparingRebalance
                && self.join_deadline_ms.is_some_and(|t| t <= at)
            {
                match self.initial {
                    Some(initial) if initial.new_member_added && initial.remaining_ms > 0 => {
                        let delay = initial.delay_ms.min(initial.remaining_ms);
                        self.initial = Some(InitialDelay {
                            delay_ms: delay,
                            remaining_ms: (initial.remaining_ms - initial.delay_ms).max(0),
                            new_member_added: false,
                        });
                        self.join_deadline_ms = Some(at.saturating_add(delay));
                    }
                    _ => self.complete_join(at),
                }
                continue;
            }
            if self.sync_deadline_ms.is_some_and(|t| t <= at) {
                self.sync_deadline_ms = None;
                let unsynced: Vec<String> = self
                    .members
                    .iter()
                    .filter(|(_, m)| !m.synced)
                    .map(|(id, _)| id.clone())
                    .collect();
                for id in &unsynced {
                    self.members.remove(id);
                }
                if !unsynced.is_empty() {
                    self.prepare_rebalance(at);
                }
            }
        }
    }

    /// Removes a member (failed or left) and rebalances what remains.
    fn remove_member(&mut self, member: &str, at: i64) {
        if self.members.remove(member).is_none() {
            return;
        }
        self.join_order.retain(|m| m != member);
        match self.state {
            GroupState::Stable | GroupState::CompletingRebalance => self.prepare_rebalance(at),
            GroupState::PreparingRebalance => self.maybe_complete_join(at),
            GroupState::Empty | GroupState::Dead => {}
        }
    }

    /// Kafka's `prepareRebalance`: waits for every member to rejoin.
    fn prepare_rebalance(&mut self, at: i64) {
        self.sync_deadline_ms = None;
        for m in self.members.values_mut() {
            m.joined = false;
            m.assignment = None;
        }
        self.join_order.clear();
        if self.state == GroupState::Empty {
            let delay = self.initial_rebalance_delay_ms;
            self.initial = Some(InitialDelay {
                delay_ms: delay,
                remaining_ms: (self.rebalance_timeout_ms() - delay).max(0),
                new_member_added: false,
            });
            self.join_deadline_ms = Some(at.saturating_add(delay));
            self.state = GroupState::PreparingRebalance;
        } else {
            self.initial = None;
            self.join_deadline_ms = Some(at.saturating_add(self.rebalance_timeout_ms()));
            self.state = GroupState::PreparingRebalance;
            self.maybe_complete_join(at);
        }
    }

    /// Completes the join phase once every member has rejoined (not during
    /// the initial delay, which only its deadline ends).
    fn maybe_complete_join(&mut self, at: i64) {
        if self.state == GroupState::PreparingRebalance
            && self.initial.is_none()
            && self.members.values().all(|m| m.joined)
        {
            self.complete_join(at);
        }
    }

    /// Kafka's `completeClassicGroupJoin`: removes the members that did not
    /// rejoin, elects the leader and begins the next generation.
    fn complete_join(&mut self, at: i64) {
        self.join_deadline_ms = None;
        self.initial = None;
        self.members.retain(|_, m| m.joined);
        self.generation = self.generation.saturating_add(1);
        if self.members.is_empty() {
            self.state = GroupState::Empty;
            self.leader = None;
            self.protocol = None;
            self.join_order.clear();
            return;
        }
        let keeps = self
            .leader
            .as_ref()
            .is_some_and(|l| self.members.contains_key(l));
        if !keeps {
            self.leader = self
                .join_order
                .iter()
                .find(|m| self.members.contains_key(*m))
                .cloned()
                .or_else(|| self.members.keys().next().cloned());
        }
        self.join_order.clear();
        for m in self.members.values_mut() {
            m.joined = false;
            m.synced = false;
            m.assignment = None;
            // The join response is the member's heartbeat too.
            m.last_heartbeat_ms = m.last_heartbeat_ms.max(at);
        }
        self.state = GroupState::CompletingRebalance;
        self.sync_deadline_ms = Some(at.saturating_add(self.rebalance_timeout_ms()));
    }

    fn touch(&mut self, member: &str, now: i64) {
        if let Some(m) = self.members.get_mut(member) {
            m.last_poll_ms = now;
            m.last_heartbeat_ms = now;
        }
    }

    /// A JoinGroup: a new member (`member` `None`) or a known one rejoining.
    /// Returns the member id.
    fn join(
        &mut self,
        group_id: &str,
        member: Option<&str>,
        new_member_id: impl FnOnce() -> String,
        request: JoinRequest,
        now: i64,
    ) -> Result<String> {
        // The members must share an assignor (the joining member itself
        // may change its own).
        if let Some((_, other)) = self
            .members
            .iter()
            .find(|(id, m)| Some(id.as_str()) != member && m.protocol != request.protocol)
        {
            return Err(BrokerError::InconsistentGroupProtocol {
                group: group_id.to_owned(),
                protocol: request.protocol,
                group_protocol: other.protocol.clone(),
            });
        }
        let id = match member {
            Some(id) if self.members.contains_key(id) => id.to_owned(),
            Some(id) => {
                return Err(BrokerError::UnknownMemberId {
                    group: group_id.to_owned(),
                    member: id.to_owned(),
                });
            }
            None => new_member_id(),
        };
        let is_new = !self.members.contains_key(&id);
        let in_initial_delay =
            self.state == GroupState::PreparingRebalance && self.initial.is_some();
        self.protocol = Some(request.protocol.clone());
        let entry = self.members.entry(id.clone()).or_insert_with(|| Member {
            client_id: request.client_id.clone(),
            topics: BTreeSet::new(),
            protocol: String::new(),
            user_data: Bytes::new(),
            owned: Vec::new(),
            assignment: None,
            joined: false,
            synced: false,
            session_timeout_ms: request.session_timeout_ms,
            rebalance_timeout_ms: request.rebalance_timeout_ms,
            last_heartbeat_ms: now,
            last_poll_ms: now,
            alive: true,
        });
        entry.client_id = request.client_id;
        entry.topics = request.topics;
        entry.protocol = request.protocol;
        entry.user_data = request.user_data;
        entry.owned = request.owned;
        entry.session_timeout_ms = request.session_timeout_ms;
        entry.rebalance_timeout_ms = request.rebalance_timeout_ms;
        entry.last_heartbeat_ms = now;
        entry.last_poll_ms = now;
        entry.alive = true;
        match self.state {
            GroupState::Empty | GroupState::Stable | GroupState::CompletingRebalance => {
                self.prepare_rebalance(now);
            }
            GroupState::PreparingRebalance | GroupState::Dead => {}
        }
        if let Some(m) = self.members.get_mut(&id)
            && !m.joined
        {
            m.joined = true;
            self.join_order.push(id.clone());
        }
        if is_new
            && in_initial_delay
            && let Some(initial) = &mut self.initial
        {
            initial.new_member_added = true;
        }
        self.maybe_complete_join(now);
        self.expire(now);
        Ok(id)
    }

    /// A SyncGroup (for the leader: before it sends the assignment).
    fn sync(
        &mut self,
        member: &str,
        partitions_of: impl Fn(&str) -> Option<i32>,
        now: i64,
    ) -> SyncOutcome {
        if !self.members.contains_key(member) {
            return SyncOutcome::UnknownMember;
        }
        self.touch(member, now);
        match self.state {
            GroupState::Empty | GroupState::Dead => SyncOutcome::UnknownMember,
            GroupState::PreparingRebalance => {
                if self.members.get(member).is_some_and(|m| m.joined) {
                    SyncOutcome::JoinPending
                } else {
                    SyncOutcome::Rejoin
                }
            }
            GroupState::CompletingRebalance => {
                if let Some(m) = self.members.get_mut(member) {
                    m.synced = true;
                }
                if self.leader.as_deref() != Some(member) {
                    return SyncOutcome::AwaitingLeader;
                }
                let topics: BTreeSet<&String> =
                    self.members.values().flat_map(|m| &m.topics).collect();
                SyncOutcome::Lead {
                    generation: self.generation,
                    partitions_per_topic: topics
                        .into_iter()
                        .filter_map(|t| partitions_of(t).map(|n| (t.clone(), n)))
                        .collect(),
                    members: self
                        .members
                        .iter()
                        .map(|(id, m)| {
                            (
                                id.clone(),
                                Subscription {
                                    topics: m.topics.clone(),
                                    user_data: m.user_data.clone(),
                                    owned_partitions: m.owned.clone(),
                                },
                            )
                        })
                        .collect(),
                }
            }
            GroupState::Stable => {
                let generation = self.generation;
                match self.members.get_mut(member) {
                    Some(m) => {
                        m.synced = true;
                        SyncOutcome::Assigned {
                            generation,
                            assignment: m.assignment.clone().unwrap_or_default(),
                        }
                    }
                    None => SyncOutcome::UnknownMember,
                }
            }
        }
    }

    /// The leader's SyncGroup with the assignment: the group becomes
    /// `Stable` when it is still waiting for this leader's generation.
    fn install(
        &mut self,
        leader: &str,
        generation: i32,
        mut assignments: BTreeMap<String, Assignment>,
        now: i64,
    ) {
        if self.state != GroupState::CompletingRebalance
            || self.generation != generation
            || self.leader.as_deref() != Some(leader)
        {
            return;
        }
        self.touch(leader, now);
        for (id, m) in &mut self.members {
            let assignment = assignments.remove(id).unwrap_or_default();
            m.owned.clone_from(&assignment.partitions);
            m.assignment = Some(assignment);
        }
        self.state = GroupState::Stable;
    }

    fn heartbeat(&mut self, member: &str, generation: i32, now: i64) -> HeartbeatOutcome {
        if !self.members.contains_key(member) {
            return HeartbeatOutcome::UnknownMember;
        }
        self.touch(member, now);
        if self.state == GroupState::Stable && self.generation == generation {
            HeartbeatOutcome::Stable
        } else {
            HeartbeatOutcome::Rebalancing
        }
    }

    /// Kafka's `validateOffsetCommit` for a classic group.
    fn validate_commit(&self, group_id: &str, member: Option<&str>, generation: i32) -> Result<()> {
        if generation < 0 && self.state == GroupState::Empty {
            return Ok(());
        }
        if generation >= 0 || member.is_some() {
            let member = member.unwrap_or_default();
            if !self.members.contains_key(member) {
                return Err(BrokerError::UnknownMemberId {
                    group: group_id.to_owned(),
                    member: member.to_owned(),
                });
            }
            if generation != self.generation {
                return Err(BrokerError::IllegalGeneration {
                    group: group_id.to_owned(),
                    member: member.to_owned(),
                    generation,
                    current: self.generation,
                });
            }
        } else if self.state != GroupState::Empty {
            return Err(BrokerError::UnknownMemberId {
                group: group_id.to_owned(),
                member: String::new(),
            });
        }
        if self.state == GroupState::CompletingRebalance {
            return Err(BrokerError::RebalanceInProgress {
                group: group_id.to_owned(),
            });
        }
        Ok(())
    }

    fn describe(&self, group_id: &str) -> GroupDescription {
        GroupDescription {
            group_id: group_id.to_owned(),
            state: self.state,
            generation: self.generation,
            protocol: self.protocol.clone(),
            leader: self.leader.clone(),
            members: self
                .members
                .iter()
                .map(|(id, m)| MemberDescription {
                    member_id: id.clone(),
                    client_id: m.client_id.clone(),
                    topics: m.topics.clone(),
                    assignment: m
                        .assignment
                        .as_ref()
                        .map(|a| a.partitions.clone())
                        .unwrap_or_default(),
                    user_data: m
                        .assignment
                        .as_ref()
                        .map(|a| a.user_data.clone())
                        .unwrap_or_default(),
                })
                .collect(),
        }
    }
}

/// The coordinator's calls, on the cluster's state (the caller holds its
/// lock). Each checks the group's deadlines at the cluster's time first.
impl State {
    /// The group, created `Empty` when new, its deadlines fired up to now.
    fn group_at_now(&mut self, group_id: &str) -> &mut Group {
        let now = self.now_ms;
        let delay = self.config.group_initial_rebalance_delay_ms;
        let group = self.groups.entry(group_id.to_owned()).or_default();
        group.initial_rebalance_delay_ms = delay;
        group.expire(now);
        group
    }

    /// The next instant a group has something due.
    pub(crate) fn next_group_deadline(&self) -> Option<i64> {
        self.groups.values().filter_map(Group::next_deadline).min()
    }

    /// Fires every group deadline up to the cluster's time.
    pub(crate) fn expire_groups(&mut self) {
        let now = self.now_ms;
        for group in self.groups.values_mut() {
            group.expire(now);
        }
    }

    /// JoinGroup; returns the member id.
    pub(crate) fn join_group(
        &mut self,
        group_id: &str,
        member: Option<&str>,
        request: JoinRequest,
    ) -> Result<String> {
        let now = self.now_ms;
        let n = self.next_member_id;
        let client = request.client_id.clone();
        let mut used = false;
        let id = self.group_at_now(group_id).join(
            group_id,
            member,
            || {
                used = true;
                format!("{client}-{n}")
            },
            request,
            now,
        )?;
        if used {
            self.next_member_id += 1;
        }
        Ok(id)
    }

    /// SyncGroup without an assignment (a follower's, or the leader's
    /// before it runs the assignor).
    pub(crate) fn sync_group(&mut self, group_id: &str, member: &str) -> SyncOutcome {
        let now = self.now_ms;
        let partitions: BTreeMap<String, i32> = self
            .topics
            .iter()
            .map(|(name, t)| (name.clone(), i32::try_from(t.partitions.len()).unwrap_or(0)))
            .collect();
        self.group_at_now(group_id)
            .sync(member, |t| partitions.get(t).copied(), now)
    }

    /// The leader's SyncGroup with the assignment of `generation`.
    pub(crate) fn install_assignment(
        &mut self,
        group_id: &str,
        leader: &str,
        generation: i32,
        assignments: BTreeMap<String, Assignment>,
    ) {
        let now = self.now_ms;
        self.group_at_now(group_id)
            .install(leader, generation, assignments, now);
    }

    /// Heartbeat (a stable member's poll).
    pub(crate) fn heartbeat(
        &mut self,
        group_id: &str,
        member: &str,
        generation: i32,
    ) -> HeartbeatOutcome {
        let now = self.now_ms;
        self.group_at_now(group_id)
            .heartbeat(member, generation, now)
    }

    /// LeaveGroup: the member goes at once and the rest rebalance.
    pub(crate) fn leave_group(&mut self, group_id: &str, member: &str) {
        let now = self.now_ms;
        let group = self.group_at_now(group_id);
        group.remove_member(member, now);
        group.expire(now);
    }

    /// The member's client stopped without leaving (closed with
    /// `leave_group` false, or dropped): it stops heartbeating and stays
    /// until its session times out.
    pub(crate) fn stop_heartbeats(&mut self, group_id: &str, member: &str) {
        let now = self.now_ms;
        let Some(group) = self.groups.get_mut(group_id) else {
            return;
        };
        group.expire(now);
        if let Some(m) = group.members.get_mut(member)
            && m.alive
        {
            m.alive = false;
            m.last_heartbeat_ms = now;
        }
    }

    /// OffsetCommit: validated as Kafka's classic group does, then stored.
    pub(crate) fn commit_group_offsets(
        &mut self,
        group_id: &str,
        member: Option<&str>,
        generation: i32,
        offsets: impl IntoIterator<Item = (TopicPartition, i64)>,
    ) -> Result<()> {
        let group = self.group_at_now(group_id);
        group.validate_commit(group_id, member, generation)?;
        group.offsets.extend(offsets);
        Ok(())
    }

    /// OffsetFetch.
    pub(crate) fn committed_offset(&mut self, group_id: &str, tp: &TopicPartition) -> Option<i64> {
        let now = self.now_ms;
        let group = self.groups.get_mut(group_id)?;
        group.expire(now);
        group.offsets.get(tp).copied()
    }

    /// DescribeGroups: a group the coordinator does not know is `Dead`.
    pub(crate) fn describe_group(&mut self, group_id: &str) -> GroupDescription {
        let now = self.now_ms;
        match self.groups.get_mut(group_id) {
            Some(group) => {
                group.expire(now);
                group.describe(group_id)
            }
            None => GroupDescription {
                group_id: group_id.to_owned(),
                state: GroupState::Dead,
                generation: -1,
                protocol: None,
                leader: None,
                members: Vec::new(),
            },
        }
    }

    /// ListGroups: every group's id and state, in id order.
    pub(crate) fn list_groups(&mut self) -> Vec<(String, GroupState)> {
        self.expire_groups();
        self.groups
            .iter()
            .map(|(id, g)| (id.clone(), g.state))
            .collect()
    }

    /// DeleteGroups: only a group without members; its offsets go too.
    pub(crate) fn delete_group(&mut self, group_id: &str) -> Result<()> {
        let now = self.now_ms;
        let Some(group) = self.groups.get_mut(group_id) else {
            return Err(BrokerError::GroupIdNotFound {
                group: group_id.to_owned(),
            });
        };
        group.expire(now);
        if !group.members.is_empty() {
            return Err(BrokerError::NonEmptyGroup {
                group: group_id.to_owned(),
                members: group.members.len(),
            });
        }
        self.groups.remove(group_id);
        Ok(())
    }
}

/// The admin client's group calls (Kafka's `describeConsumerGroups`,
/// `listConsumerGroups`, `deleteConsumerGroups`).
impl crate::clients::Admin {
    /// The group's state, generation, leader and members with their
    /// assignments; a group the coordinator does not know is `Dead`.
    pub fn describe_group(&self, group_id: &str) -> GroupDescription {
        self.cluster.state().describe_group(group_id)
    }

    /// Every group's id and state, in id order.
    pub fn list_groups(&self) -> Vec<(String, GroupState)> {
        self.cluster.state().list_groups()
    }

    /// Deletes a group without members, with its committed offsets.
    ///
    /// # Errors
    /// [`BrokerError::GroupIdNotFound`], or [`BrokerError::NonEmptyGroup`]
    /// while it has members.
    pub fn delete_group(&self, group_id: &str) -> Result<()> {
        self.cluster.state().delete_group(group_id)
    }
}
