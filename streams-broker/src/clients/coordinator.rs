//! The consumer's side of the classic group protocol: Kafka's
//! `ConsumerCoordinator` (over `AbstractCoordinator`), eager. Each poll of
//! a subscribed consumer takes one step: a stable member heartbeats, and on
//! a rebalance first revokes everything it has (one poll, in which it may
//! still commit), then rejoins (the next poll), then syncs until its
//! assignment arrives; the leader runs its assignor when it syncs. The
//! assignor runs without the cluster's lock, as on a real client, so it may
//! call the cluster itself (create topics, ask partition counts).
//!
//! See [`crate::clients::group`] for the coordinator's side and an example.

use std::collections::BTreeSet;
use std::sync::Arc;

use streams_clients::{GroupMetadata, PartitionAssignor, Rebalance};

use crate::clients::group::{HeartbeatOutcome, JoinRequest, SyncOutcome};
use crate::cluster::Cluster;
use crate::error::{BrokerError, Result};
use crate::topic_partition::TopicPartition;

/// Where a member is in the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Not a member: the next poll joins as a new one.
    Unjoined,
    /// Joined (or rejoined); waiting for the generation and the assignment.
    Joining,
    /// Has its assignment.
    Stable,
    /// Has its assignment but its subscription changed: the next poll
    /// revokes and the one after rejoins.
    RejoinNeeded,
    /// Revoked its partitions; the next poll rejoins.
    Revoked,
}

/// One consumer's membership of its group.
#[derive(Debug)]
pub(crate) struct ConsumerCoordinator {
    group_id: String,
    client_id: String,
    topics: BTreeSet<String>,
    assignor: Arc<dyn PartitionAssignor>,
    session_timeout_ms: i64,
    rebalance_timeout_ms: i64,
    member_id: Option<String>,
    generation: i32,
    owned: Vec<TopicPartition>,
    phase: Phase,
}

impl ConsumerCoordinator {
    /// A consumer subscribed to `topics`, not joined yet.
    pub(crate) fn new(
        group_id: String,
        client_id: String,
        topics: BTreeSet<String>,
        assignor: Arc<dyn PartitionAssignor>,
        session_timeout_ms: i64,
        rebalance_timeout_ms: i64,
    ) -> Self {
        Self {
            group_id,
            client_id,
            topics,
            assignor,
            session_timeout_ms,
            rebalance_timeout_ms,
            member_id: None,
            generation: -1,
            owned: Vec::new(),
            phase: Phase::Unjoined,
        }
    }

    /// The member id, once joined.
    pub(crate) fn member_id(&self) -> Option<&str> {
        self.member_id.as_deref()
    }

    /// Whether the member holds an assignment it may fetch from.
    pub(crate) fn is_stable(&self) -> bool {
        matches!(self.phase, Phase::Stable | Phase::RejoinNeeded)
    }

    /// A new subscription: a member with an assignment revokes and
    /// rejoins; one that is joining sends the new one with its next join.
    pub(crate) fn resubscribe(
        &mut self,
        topics: BTreeSet<String>,
        assignor: Arc<dyn PartitionAssignor>,
    ) {
        let changed = topics != self.topics || assignor.name() != self.assignor.name();
        self.topics = topics;
        self.assignor = assignor;
        if changed {
            self.phase = match self.phase {
                Phase::Stable | Phase::RejoinNeeded => Phase::RejoinNeeded,
                Phase::Joining | Phase::Revoked => Phase::Revoked,
                Phase::Unjoined => Phase::Unjoined,
            };
        }
    }

    /// One poll's step of the protocol; the rebalance event it produced.
    ///
    /// # Errors
    /// [`BrokerError::InconsistentGroupProtocol`] when the group's members
    /// use another assignor.
    pub(crate) fn poll(&mut self, cluster: &Cluster) -> Result<Option<Rebalance>> {
        match self.phase {
            Phase::Stable | Phase::RejoinNeeded => {
                let member = self.member_id.clone().unwrap_or_default();
                let outcome = cluster
                    .state()
                    .heartbeat(&self.group_id, &member, self.generation);
                match outcome {
                    HeartbeatOutcome::UnknownMember => {
                        self.member_id = None;
                        self.generation = -1;
                        self.phase = Phase::Unjoined;
                        Ok(Some(Rebalance::Lost(std::mem::take(&mut self.owned))))
                    }
                    HeartbeatOutcome::Stable if self.phase == Phase::Stable => Ok(None),
                    HeartbeatOutcome::Stable | HeartbeatOutcome::Rebalancing => {
                        self.phase = Phase::Revoked;
                        Ok(Some(Rebalance::Revoked(self.owned.clone())))
                    }
                }
            }
            Phase::Unjoined | Phase::Revoked => {
                self.join(cluster)?;
                self.sync(cluster)
            }
            Phase::Joining => self.sync(cluster),
        }
    }

    /// JoinGroup, as the known member or, when the coordinator has
    /// forgotten it, as a new one.
    fn join(&mut self, cluster: &Cluster) -> Result<()> {
        let request = JoinRequest {
            client_id: self.client_id.clone(),
            topics: self.topics.clone(),
            protocol: self.assignor.name().to_owned(),
            user_data: self.assignor.subscription_user_data(&self.topics),
            owned: self.owned.clone(),
            session_timeout_ms: self.session_timeout_ms,
            rebalance_timeout_ms: self.rebalance_timeout_ms,
        };
        let mut state = cluster.state();
        let joined = state.join_group(&self.group_id, self.member_id.as_deref(), request.clone());
        let id = match joined {
            Err(BrokerError::UnknownMemberId { .. }) => {
                self.member_id = None;
                state.join_group(&self.group_id, None, request)?
            }
            other => other?,
        };
        self.member_id = Some(id);
        self.phase = Phase::Joining;
        Ok(())
    }

    /// SyncGroup until it answers: the assignment, or a wait.
    fn sync(&mut self, cluster: &Cluster) -> Result<Option<Rebalance>> {
        // A rejoin, a leader's assignment and the sync that fetches it are
        // at most three rounds; a fourth finds the group where it is.
        for _ in 0..4 {
            let member = self.member_id.clone().unwrap_or_default();
            let outcome = cluster.state().sync_group(&self.group_id, &member);
            match outcome {
                SyncOutcome::UnknownMember => {
                    self.member_id = None;
                    self.join(cluster)?;
                }
                SyncOutcome::Rejoin => self.join(cluster)?,
                SyncOutcome::JoinPending | SyncOutcome::AwaitingLeader => return Ok(None),
                SyncOutcome::Lead {
                    generation,
                    partitions_per_topic,
                    members,
                } => {
                    let assignments = self.assignor.assign(&partitions_per_topic, &members);
                    cluster.state().install_assignment(
                        &self.group_id,
                        &member,
                        generation,
                        assignments,
                    );
                }
                SyncOutcome::Assigned {
                    generation,
                    assignment,
                } => {
                    self.generation = generation;
                    self.owned.clone_from(&assignment.partitions);
                    self.phase = Phase::Stable;
                    return Ok(Some(Rebalance::Assigned {
                        partitions: assignment.partitions,
                        user_data: assignment.user_data,
                        generation,
                    }));
                }
            }
        }
        Ok(None)
    }

    /// The member id and generation an offset commit carries: those of
    /// the member's last assignment, which the coordinator accepts until
    /// the group's next generation begins.
    ///
    /// # Errors
    /// [`BrokerError::UnknownMemberId`] before the member joined or after
    /// it was removed (Kafka's "not part of an active group").
    pub(crate) fn commit_identity(&self) -> Result<(Option<&str>, i32)> {
        match (&self.member_id, self.generation) {
            (Some(member), generation) if generation >= 0 => Ok((Some(member), generation)),
            _ => Err(BrokerError::UnknownMemberId {
                group: self.group_id.clone(),
                member: self.member_id.clone().unwrap_or_default(),
            }),
        }
    }

    /// The member's group identity, while it holds an assignment.
    pub(crate) fn group_metadata(&self) -> Option<GroupMetadata> {
        let member_id = self.member_id.clone()?;
        (self.generation >= 0).then(|| GroupMetadata {
            group_id: self.group_id.clone(),
            generation: self.generation,
            member_id,
        })
    }

    /// Leaves the group (`leave_group`), or stops heartbeating and stays a
    /// member until the session times out.
    pub(crate) fn close(&mut self, cluster: &Cluster, leave_group: bool) {
        if let Some(member) = self.member_id.take() {
            let mut state = cluster.state();
            if leave_group {
                state.leave_group(&self.group_id, &member);
            } else {
                state.stop_heartbeats(&self.group_id, &member);
            }
        }
        self.generation = -1;
        self.owned.clear();
        self.phase = Phase::Unjoined;
    }
}
