//! The error every port returns. Callers map it to HTTP once, in the API
//! layer. A fault keeps its cause, so the one log line written at the edge
//! (`chain`) shows what failed underneath, not only what was being done.

/// A cause of any kind: an SDK's, SQLite's, Parquet's, I/O's error or a message.
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What a port answers.
pub type PortResult<T> = Result<T, PortError>;

#[derive(Debug, thiserror::Error)]
pub enum PortError {
    /// The addressed item does not exist (or belongs to someone else).
    #[error("{0} not found")]
    NotFound(String),
    /// The caller's input cannot be served (bad name, malformed file).
    #[error("{0}")]
    Invalid(String),
    /// A backing service is down or overloaded; retrying later may succeed.
    #[error("{what} is unavailable")]
    Unavailable {
        what: String,
        #[source]
        cause: Option<Cause>,
    },
    /// A fault inside the adapter: corrupt data, a bug, a failed invariant.
    #[error("internal error: {context}")]
    Internal {
        context: String,
        #[source]
        cause: Option<Cause>,
    },
}

impl PortError {
    /// A fault whose cause says it all (its text becomes the context).
    pub fn internal(cause: impl Into<Cause>) -> Self {
        let cause = cause.into();
        PortError::Internal {
            context: cause.to_string(),
            cause: Some(cause),
        }
    }

    /// A fault while doing `context`, caused by `cause`.
    pub fn fault(context: impl Into<String>, cause: impl Into<Cause>) -> Self {
        PortError::Internal {
            context: context.into(),
            cause: Some(cause.into()),
        }
    }

    /// `what` is down or overloaded.
    pub fn unavailable(what: impl Into<String>) -> Self {
        PortError::Unavailable {
            what: what.into(),
            cause: None,
        }
    }

    /// `what` is down or overloaded, as `cause` says.
    pub fn unavailable_by(what: impl Into<String>, cause: impl Into<Cause>) -> Self {
        PortError::Unavailable {
            what: what.into(),
            cause: Some(cause.into()),
        }
    }

    /// Whether a job that hit this error should be retried rather than failed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, PortError::Unavailable { .. })
    }
}

/// An error and its causes on one line, `a: b: c`; a cause whose text the
/// line already ends with (a message kept as its own cause) is not repeated.
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut line = e.to_string();
    let mut next = e.source();
    while let Some(cause) = next {
        let text = cause.to_string();
        if !text.is_empty() && !line.ends_with(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        next = cause.source();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("dispatch failure")]
    struct Dispatch(#[source] std::io::Error);

    #[test]
    fn the_chain_names_every_cause_once() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
        let e = PortError::fault("put item into tasks", Dispatch(io));
        assert_eq!(
            chain(&e),
            "internal error: put item into tasks: dispatch failure: connection refused"
        );
        let e = PortError::internal(format!("row {} is corrupt", 7));
        assert_eq!(chain(&e), "internal error: row 7 is corrupt");
        let e = PortError::unavailable_by("SQS", std::io::Error::other("timed out"));
        assert_eq!(chain(&e), "SQS is unavailable: timed out");
        assert!(e.is_retryable());
    }
}
