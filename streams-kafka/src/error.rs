//! rdkafka's errors as the client API's, by librdkafka's error code: a
//! fenced producer ([`ClientError::ProducerFenced`]), a commit from a
//! member of an old generation ([`ClientError::CommitFailed`]), an unknown
//! topic or partition, a topic that exists, a timeout, a cluster that
//! cannot be reached ([`ClientError::Unreachable`]), refused credentials
//! ([`ClientError::Authentication`]); anything else
//! travels as the `source` of [`ClientError::Implementation`], with the
//! client named.

use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use streams_clients::ClientError;

/// librdkafka's error code of `err`, if it has one.
pub(crate) fn code_of(err: &KafkaError) -> Option<RDKafkaErrorCode> {
    match err {
        KafkaError::Transaction(e) => Some(e.code()),
        KafkaError::AdminOp(code) => Some(*code),
        other => other.rdkafka_error_code(),
    }
}

/// Whether `code` means a newer producer of the same `transactional.id`
/// fenced this one.
pub(crate) fn is_fencing(code: RDKafkaErrorCode) -> bool {
    matches!(
        code,
        RDKafkaErrorCode::ProducerFenced
            | RDKafkaErrorCode::InvalidProducerEpoch
            | RDKafkaErrorCode::Fenced
            | RDKafkaErrorCode::TransactionCoordinatorFenced
    )
}

/// Whether `code` means the group moved on without this member.
pub(crate) fn is_stale_member(code: RDKafkaErrorCode) -> bool {
    matches!(
        code,
        RDKafkaErrorCode::IllegalGeneration
            | RDKafkaErrorCode::UnknownMemberId
            | RDKafkaErrorCode::RebalanceInProgress
            | RDKafkaErrorCode::FencedInstanceId
    )
}

/// Whether `code` means no broker (or not the coordinator the call
/// needs) could be reached.
pub(crate) fn is_unreachable(code: RDKafkaErrorCode) -> bool {
    matches!(
        code,
        RDKafkaErrorCode::BrokerTransportFailure
            | RDKafkaErrorCode::AllBrokersDown
            | RDKafkaErrorCode::WaitingForCoordinator
            | RDKafkaErrorCode::CoordinatorNotAvailable
    )
}

/// Whether `code` means the cluster refused the client's credentials.
pub(crate) fn is_authentication(code: RDKafkaErrorCode) -> bool {
    matches!(
        code,
        RDKafkaErrorCode::Authentication
            | RDKafkaErrorCode::SaslAuthenticationFailed
            | RDKafkaErrorCode::UnsupportedSASLMechanism
            | RDKafkaErrorCode::IllegalSASLState
    )
}

/// `err` of `client`'s `operation` (on `topic`, when one is involved) as
/// a [`ClientError`].
pub(crate) fn client_error(
    client: &str,
    timeout: std::time::Duration,
    operation: &str,
    topic: Option<(&str, Option<i32>)>,
    err: KafkaError,
) -> ClientError {
    if let KafkaError::ClientConfig(_, description, name, value) = &err {
        return ClientError::InvalidConfig {
            name: name.clone(),
            value: crate::config::shown(name, value).to_owned(),
            reason: description.replace(value.as_str(), crate::config::shown(name, value)),
        };
    }
    let code = code_of(&err);
    match code {
        Some(RDKafkaErrorCode::UnknownTopicOrPartition | RDKafkaErrorCode::UnknownTopic)
            if topic.is_some() =>
        {
            let (topic, partition) = topic.unwrap_or_default();
            ClientError::UnknownTopicOrPartition {
                topic: topic.to_owned(),
                partition,
            }
        }
        Some(RDKafkaErrorCode::UnknownPartition) if topic.is_some() => {
            let (topic, partition) = topic.unwrap_or_default();
            ClientError::UnknownTopicOrPartition {
                topic: topic.to_owned(),
                partition,
            }
        }
        Some(RDKafkaErrorCode::TopicAlreadyExists) if topic.is_some() => ClientError::TopicExists {
            topic: topic.unwrap_or_default().0.to_owned(),
        },
        Some(
            RDKafkaErrorCode::OperationTimedOut
            | RDKafkaErrorCode::RequestTimedOut
            | RDKafkaErrorCode::MessageTimedOut
            | RDKafkaErrorCode::TimedOutQueue,
        ) => ClientError::Timeout {
            operation: format!("{client}: {operation} ({err})"),
            timeout_ms: i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX),
        },
        Some(code) if is_unreachable(code) => ClientError::Unreachable {
            client: client.to_owned(),
            operation: operation.to_owned(),
            detail: err.to_string(),
        },
        Some(code) if is_authentication(code) => ClientError::Authentication {
            client: client.to_owned(),
            detail: err.to_string(),
        },
        _ => ClientError::Implementation {
            client: client.to_owned(),
            source: format!("{operation}: {err}").into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: std::time::Duration = std::time::Duration::from_secs(1);

    #[test]
    fn maps_by_code() {
        let unknown = client_error(
            "c",
            T,
            "send",
            Some(("t", Some(3))),
            KafkaError::MessageProduction(RDKafkaErrorCode::UnknownPartition),
        );
        assert!(matches!(
            unknown,
            ClientError::UnknownTopicOrPartition { ref topic, partition: Some(3) } if topic == "t"
        ));
        let exists = client_error(
            "admin",
            T,
            "create_topic",
            Some(("t", None)),
            KafkaError::AdminOp(RDKafkaErrorCode::TopicAlreadyExists),
        );
        assert!(matches!(exists, ClientError::TopicExists { ref topic } if topic == "t"));
        let other = client_error("c", T, "poll", None, KafkaError::Canceled);
        assert_eq!(other.to_string(), "c: poll: KafkaError (Client dropped)");
        assert!(is_fencing(RDKafkaErrorCode::ProducerFenced));
        assert!(is_stale_member(RDKafkaErrorCode::IllegalGeneration));
    }
}
