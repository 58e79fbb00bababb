//! What librdkafka tells the clients of one supplier besides the results
//! of their calls: its error callback (an authentication the cluster
//! refused) and its log lines.
//!
//! librdkafka does not fail a call whose broker refused the credentials:
//! it reconnects with a backoff, and the call times out like one to an
//! unreachable cluster. Every client of a [`KafkaClients`](crate::KafkaClients)
//! shares one [`Health`]; once any of them heard of a refused
//! authentication, a call of any that fails for want of a broker
//! ([`ClientError::Unreachable`], [`ClientError::Timeout`]) fails with
//! [`ClientError::Authentication`] instead, and the calls that wait on
//! the cluster at start (metadata, admin requests, `init_transactions`,
//! end offsets) stop waiting as soon as it is known.
//!
//! Log lines and error callback reasons go to the `log` crate (target
//! `librdkafka`, as rdkafka's default context sends them) with the values
//! of every secret setting of the supplier's clients (`sasl.password`,
//! `ssl.key.password`, a JAAS config, ...; see [`config::is_secret`](crate::config::is_secret))
//! replaced by `[redacted]`, whatever librdkafka's `debug` setting.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rdkafka::client::ClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::consumer::{BaseConsumer, ConsumerContext};
use rdkafka::error::KafkaError;
use streams_clients::ClientError;

use crate::error::{code_of, is_authentication};

/// See the [module docs](self).
#[derive(Debug, Default)]
pub(crate) struct Health {
    /// The reason of the last refused authentication, secrets scrubbed.
    auth_failure: Mutex<Option<String>>,
    /// The values to keep out of log lines and errors.
    secrets: Mutex<Vec<String>>,
}

impl Health {
    /// Remembers the values of the secret settings among `settings`.
    pub(crate) fn add_secrets<'a>(&self, settings: impl IntoIterator<Item = (&'a str, &'a str)>) {
        let Ok(mut secrets) = self.secrets.lock() else {
            return;
        };
        for (name, value) in settings {
            if crate::config::is_secret(name)
                && !value.is_empty()
                && !secrets.iter().any(|s| s == value)
            {
                secrets.push(value.to_owned());
            }
        }
        // Longest first, so that a secret containing another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }

    /// `text` with every known secret replaced by `[redacted]`.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let Ok(secrets) = self.secrets.lock() else {
            return text.to_owned();
        };
        secrets
            .iter()
            .fold(text.to_owned(), |t, s| t.replace(s.as_str(), "[redacted]"))
    }

    /// librdkafka's error callback of `client`.
    pub(crate) fn on_error(&self, client: &str, error: &KafkaError, reason: &str) {
        let reason = self.scrub(reason);
        if code_of(error).is_some_and(is_authentication) {
            self.refused(&reason);
        }
        log::error!(target: "librdkafka", "librdkafka: {client}: {error}: {reason}");
    }

    /// Remembers that the cluster refused the credentials (`detail`: what
    /// librdkafka said; the first word is kept, the error callback's,
    /// which says the most).
    pub(crate) fn refused(&self, detail: &str) {
        if let Ok(mut failure) = self.auth_failure.lock()
            && failure.is_none()
        {
            *failure = Some(self.scrub(detail));
        }
    }

    /// Takes the error events waiting in `consumer`'s queue (one without
    /// partitions: nothing else is there), and remembers a refused
    /// authentication among them. librdkafka reports a consumer's errors
    /// through its poll, not through the error callback.
    pub(crate) fn drain<C: ConsumerContext>(&self, consumer: &BaseConsumer<C>) {
        // A poll returns at the first error or message, or when its time
        // is up; log lines and statistics on the way are handled within
        // (with librdkafka's debug logs on there are many).
        for _ in 0..100 {
            match consumer.poll(Duration::from_millis(10)) {
                Some(Err(e)) => {
                    if code_of(&e).is_some_and(is_authentication) {
                        self.refused(&e.to_string());
                    }
                }
                Some(Ok(_)) => {}
                None => return,
            }
        }
    }

    /// librdkafka's log callback of `client`.
    pub(crate) fn on_log(&self, client: &str, level: RDKafkaLogLevel, fac: &str, message: &str) {
        let message = self.scrub(message);
        match level {
            RDKafkaLogLevel::Emerg
            | RDKafkaLogLevel::Alert
            | RDKafkaLogLevel::Critical
            | RDKafkaLogLevel::Error => {
                log::error!(target: "librdkafka", "librdkafka: {client}: {fac} {message}");
            }
            RDKafkaLogLevel::Warning => {
                log::warn!(target: "librdkafka", "librdkafka: {client}: {fac} {message}");
            }
            RDKafkaLogLevel::Notice | RDKafkaLogLevel::Info => {
                log::info!(target: "librdkafka", "librdkafka: {client}: {fac} {message}");
            }
            RDKafkaLogLevel::Debug => {
                log::debug!(target: "librdkafka", "librdkafka: {client}: {fac} {message}");
            }
        }
    }

    /// Why the cluster refused the credentials, if it did.
    pub(crate) fn auth_failure(&self) -> Option<String> {
        self.auth_failure.lock().ok()?.clone()
    }

    /// `err` of `client`, as an authentication error when it is the want
    /// of a broker and a broker refused the credentials.
    pub(crate) fn refine(&self, client: &str, err: ClientError) -> ClientError {
        match err {
            ClientError::Unreachable { .. } | ClientError::Timeout { .. } => {
                match self.auth_failure() {
                    Some(detail) => ClientError::Authentication {
                        client: client.to_owned(),
                        detail,
                    },
                    None => err,
                }
            }
            other => other,
        }
    }

    /// The authentication error of `client`, once one is known.
    pub(crate) fn check(&self, client: &str) -> Result<(), ClientError> {
        match self.auth_failure() {
            Some(detail) => Err(ClientError::Authentication {
                client: client.to_owned(),
                detail,
            }),
            None => Ok(()),
        }
    }
}

/// The context of a client without callbacks of its own (the admin
/// client, a consumer's end-offsets client): its log lines and errors go
/// through the supplier's [`Health`].
#[derive(Debug)]
pub(crate) struct LogContext {
    pub(crate) client: String,
    pub(crate) health: Arc<Health>,
}

impl ClientContext for LogContext {
    fn log(&self, level: RDKafkaLogLevel, fac: &str, log_message: &str) {
        self.health.on_log(&self.client, level, fac, log_message);
    }

    fn error(&self, error: KafkaError, reason: &str) {
        self.health.on_error(&self.client, &error, reason);
    }
}

impl ConsumerContext for LogContext {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubs_secrets_and_refines_timeouts() {
        let health = Health::default();
        health.add_secrets([
            ("sasl.password", "hunter2"),
            ("sasl.username", "alice"),
            ("sasl.jaas.config", "x required password=\"hunter22\";"),
        ]);
        assert_eq!(
            health.scrub("user alice with hunter2 and x required password=\"hunter22\";"),
            "user alice with [redacted] and [redacted]"
        );
        let timeout = ClientError::Timeout {
            operation: "c: poll".into(),
            timeout_ms: 1,
        };
        assert!(matches!(
            health.refine("c", timeout),
            ClientError::Timeout { .. }
        ));
        health.on_error(
            "c",
            &KafkaError::Global(rdkafka::error::RDKafkaErrorCode::Authentication),
            "SASL authentication error: Invalid username or password (hunter2)",
        );
        let refused = health.refine(
            "c",
            ClientError::Timeout {
                operation: "c: poll".into(),
                timeout_ms: 1,
            },
        );
        assert!(matches!(refused, ClientError::Authentication { .. }));
        assert!(!refused.to_string().contains("hunter2"), "{refused}");
        assert!(health.check("c").is_err());
    }
}
