//! What the operator needs from its environment, checked before its first
//! call, so a missing setting is named in one line instead of surfacing as
//! an SDK error several causes deep (or as a queue that "does not exist"
//! because its URL was empty).

use aws_sdk_sqs::config::ProvideCredentials;

/// A setting the operator cannot do without, missing or unusable.
#[derive(Debug, thiserror::Error)]
pub enum SettingError {
    #[error("{name} is not set: {why}")]
    Missing {
        name: &'static str,
        why: &'static str,
    },
    #[error("{name} is not usable: {reason}")]
    Unusable { name: &'static str, reason: String },
    #[error(
        "AWS_ACCESS_KEY_ID is not set: no AWS credentials were found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)"
    )]
    NoCredentials(#[source] aws_sdk_sqs::error::BoxError),
}

/// `value`, the setting `name`, unless it is empty.
pub fn required<'a>(
    name: &'static str,
    value: &'a str,
    why: &'static str,
) -> Result<&'a str, SettingError> {
    if value.trim().is_empty() {
        return Err(SettingError::Missing { name, why });
    }
    Ok(value)
}

/// The region and credentials the SDK finds in the environment (the same
/// shared configuration every client loads).
pub async fn aws() -> Result<(), SettingError> {
    let sdk = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .load()
        .await;
    if sdk.region().is_none() {
        return Err(SettingError::Missing {
            name: "AWS_REGION",
            why: "the deployment's region (or AWS_DEFAULT_REGION, or a profile's region)",
        });
    }
    let Some(provider) = sdk.credentials_provider() else {
        return Err(SettingError::NoCredentials(
            "no credentials provider".into(),
        ));
    };
    provider
        .provide_credentials()
        .await
        .map_err(|e| SettingError::NoCredentials(Box::new(e)))?;
    Ok(())
}

/// An error and its causes on one line: what `main` prints. anyhow's `{:?}`
/// (what a `main` returning an error prints) spreads the causes over lines
/// and adds a backtrace under `RUST_BACKTRACE=1`. A cause's own line breaks
/// (the credential chain's list of providers tried) are folded, and a cause
/// that repeats the one above it (the SDK gives a service error's text at
/// two levels) is left out.
pub fn one_line(e: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in e.chain() {
        let text = cause
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if !text.is_empty() && parts.last() != Some(&text) {
            parts.push(text);
        }
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_setting_is_named_with_why_it_is_needed() {
        let e = required("MARKETLAB_INGEST_QUEUE_URL", " ", "the ingest queue").unwrap_err();
        assert_eq!(
            e.to_string(),
            "MARKETLAB_INGEST_QUEUE_URL is not set: the ingest queue"
        );
        assert_eq!(required("X", "http://q", "").unwrap(), "http://q");
    }

    /// A cause that says what the one above it said.
    #[derive(Debug, thiserror::Error)]
    #[error("ResourceNotFoundException: Requested resource not found")]
    struct Repeated(#[source] Option<Box<Repeated>>);

    #[test]
    fn a_repeated_cause_is_given_once() {
        let e = anyhow::Error::from(Repeated(Some(Box::new(Repeated(None)))))
            .context("internal error: list accounts");
        assert_eq!(
            one_line(&e),
            "internal error: list accounts: ResourceNotFoundException: Requested resource not found"
        );
    }

    #[test]
    fn causes_are_folded_onto_one_line() {
        let e = anyhow::Error::from(SettingError::NoCredentials(
            "no credentials found in chain. Attempted:\n  Environment: not set\n  Profile: none"
                .into(),
        ))
        .context("listing dead letters");
        assert_eq!(
            one_line(&e),
            "listing dead letters: AWS_ACCESS_KEY_ID is not set: no AWS credentials were found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE): no credentials found in chain. Attempted: Environment: not set Profile: none"
        );
    }
}
