//! What a use case can answer instead of a result. The HTTP layer maps each
//! variant to its service's envelope in one place (`api::error`).

use platform::PortError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The client sent a value the use case cannot take; `field` names it as
    /// the client wrote it.
    #[error("'{field}' {reason}")]
    Invalid { field: String, reason: String },
    /// A ticker, task or series the client named does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The account's plan does not cover what it asked for (data: 405).
    #[error("{0}")]
    NotSubscribed(String),
    /// The data exist but cannot support the answer (too few sessions).
    #[error("insufficient data: {0}")]
    Insufficient(String),
    /// A port failed; the source is kept for the logs.
    #[error(transparent)]
    Port(#[from] PortError),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A use case's error in a job: a port's failure keeps its retry class;
/// anything the request itself causes can never succeed.
impl From<Error> for platform::worker::JobError {
    fn from(e: Error) -> Self {
        match e {
            Error::Port(p) => p.into(),
            other => platform::worker::JobError::Permanent(other.to_string()),
        }
    }
}

impl Error {
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Invalid {
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// An integer that must lie in `[min, max]`.
    pub fn check_range(field: &str, value: i64, min: i64, max: i64) -> Result<i64> {
        if (min..=max).contains(&value) {
            Ok(value)
        } else {
            Err(Error::invalid(
                field,
                format!("must be between {min} and {max}, got {value}"),
            ))
        }
    }
}
