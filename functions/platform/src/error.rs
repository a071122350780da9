//! The error every port returns. Callers map it to HTTP once, in the API layer.

#[derive(Debug, thiserror::Error)]
pub enum PortError {
    /// The addressed item does not exist (or belongs to someone else).
    #[error("{0} not found")]
    NotFound(String),
    /// The caller's input cannot be served (bad name, malformed file).
    #[error("{0}")]
    Invalid(String),
    /// A backing service is down or overloaded; retrying later may succeed.
    #[error("{0} is unavailable")]
    Unavailable(String),
    /// A fault inside the adapter: corrupt data, a bug, a failed invariant.
    #[error("internal error: {0}")]
    Internal(String),
}

impl PortError {
    pub fn internal(e: impl std::fmt::Display) -> Self {
        PortError::Internal(e.to_string())
    }

    /// Whether a job that hit this error should be retried rather than failed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, PortError::Unavailable(_))
    }
}
