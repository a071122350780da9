//! What a use case can answer instead of a result. The HTTP layer maps each
//! variant to its service's envelope in one place (`api::error`).

use platform::PortError;

/// A value the client sent that a use case cannot take. Every service, query
/// parameter or body member, words it the same way:
/// `parameter '<field>': <reason>`, where `field` is the name or path as the
/// client wrote it (`buy_rules.conditions[0].signal`) and `reason` quotes
/// the value sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("parameter '{field}': {reason}")]
pub struct FieldError {
    pub field: String,
    pub reason: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            reason: reason.into(),
        }
    }

    pub fn required(field: impl Into<String>) -> Self {
        FieldError::new(field, "is required")
    }

    /// A serde error at its path (`.` is the whole value): a missing field
    /// is named by its own path.
    pub fn from_serde<E: std::fmt::Display>(e: serde_path_to_error::Error<E>) -> Self {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        let missing = inner
            .strip_prefix("missing field `")
            .and_then(|r| r.strip_suffix('`'));
        match (path.as_str(), missing) {
            (".", Some(field)) => FieldError::required(field),
            (_, Some(field)) => FieldError::required(format!("{path}.{field}")),
            (".", None) => FieldError::new("body", inner),
            _ => FieldError::new(path, inner),
        }
    }

    /// The same mistake inside a larger request: `strategies[2]` + `symbol`
    /// is `strategies[2].symbol`.
    pub fn within(mut self, parent: &str) -> Self {
        self.field = if self.field.starts_with('[') {
            format!("{parent}{}", self.field)
        } else {
            format!("{parent}.{}", self.field)
        };
        self
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The client sent a value the use case cannot take.
    #[error(transparent)]
    Invalid(#[from] FieldError),
    /// A ticker, task or series the client named does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The account's plan does not cover what it asked for (data: 405).
    #[error("{0}")]
    NotSubscribed(String),
    /// The request conflicts with the account's state (a limit of things
    /// kept reached, a disabled endpoint): 409.
    #[error("{0}")]
    Conflict(String),
    /// The data exist but cannot support the answer (too few sessions).
    #[error("insufficient data: {0}")]
    Insufficient(String),
    /// A port failed; the source is kept for the logs.
    #[error(transparent)]
    Port(#[from] PortError),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `T` read from JSON; a mistake names the path of its field
/// (`entry.condition.rule`).
pub fn from_json<T: serde::de::DeserializeOwned>(
    value: serde_json::Value,
) -> Result<T, FieldError> {
    serde_path_to_error::deserialize(value).map_err(FieldError::from_serde)
}

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
    /// The field a client mistake names, if it is one.
    pub fn field(&self) -> Option<&str> {
        match self {
            Error::Invalid(e) => Some(&e.field),
            _ => None,
        }
    }

    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Invalid(FieldError::new(field, reason))
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
