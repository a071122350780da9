//! `operator dlq list|redrive`: what a dead-letter queue holds, and sending
//! it back to its queue (AWS only: the embedded queue has no dead letters).

use crate::settings::{SettingError, required};
use aws_sdk_sqs::types::QueueAttributeName;
use clap::Subcommand;
use platform::PortError;
use std::io::Write;

/// Which queue's dead letters.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueName {
    /// The job queue (tasks).
    Jobs,
    /// The webhook queue (delivery attempts).
    Webhooks,
    /// The ingest queue (the bucket's events under `incoming/`).
    Ingest,
}

impl QueueName {
    /// The setting that holds the queue's URL, and its URL there.
    fn url(self, names: &aws_adapters::Names) -> (&'static str, &str) {
        match self {
            QueueName::Jobs => ("MARKETLAB_QUEUE_URL", &names.queue_url),
            QueueName::Webhooks => ("MARKETLAB_WEBHOOK_QUEUE_URL", &names.webhook_queue_url),
            QueueName::Ingest => ("MARKETLAB_INGEST_QUEUE_URL", &names.ingest_queue_url),
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum DlqCommand {
    /// The messages of a dead-letter queue, left in it.
    List {
        #[arg(long, value_enum, default_value = "jobs")]
        queue: QueueName,
        /// At most this many.
        #[arg(long, default_value_t = 100)]
        max: usize,
    },
    /// Sends every message of a dead-letter queue back to its queue.
    Redrive {
        #[arg(long, value_enum, default_value = "jobs")]
        queue: QueueName,
    },
}

/// Why a dead-letter queue cannot be read; each names the setting it came from.
#[derive(Debug, thiserror::Error)]
pub enum DlqError {
    #[error(transparent)]
    Setting(#[from] SettingError),
    #[error("the queue {url} ({setting}) cannot be read")]
    Source {
        setting: &'static str,
        url: String,
        #[source]
        cause: aws_sdk_sqs::Error,
    },
    #[error("the queue {url} ({setting}) has no dead-letter queue: it has no redrive policy")]
    NoRedrivePolicy { setting: &'static str, url: String },
    #[error("the redrive policy of {url} ({setting}) is not readable: {policy}")]
    BadRedrivePolicy {
        setting: &'static str,
        url: String,
        policy: String,
    },
    #[error("the dead-letter queue {arn} of {url} ({setting}) cannot be found")]
    Target {
        setting: &'static str,
        url: String,
        arn: String,
        #[source]
        cause: aws_sdk_sqs::Error,
    },
    #[error(transparent)]
    Port(#[from] PortError),
}

/// A queue's dead-letter queue, as its redrive policy names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redrive {
    pub dlq_url: String,
    /// Receives on the source queue after which a message moves.
    pub max_receives: u32,
}

/// The redrive policy's target ARN and `maxReceiveCount` (SQS gives it as a
/// number, some tools as a string).
fn parse_policy(policy: &str) -> Option<(String, u32)> {
    let v: serde_json::Value = serde_json::from_str(policy).ok()?;
    let arn = v["deadLetterTargetArn"].as_str()?.to_string();
    let max = match &v["maxReceiveCount"] {
        serde_json::Value::String(s) => s.trim().parse().ok()?,
        n => u32::try_from(n.as_u64()?).ok()?,
    };
    Some((arn, max))
}

/// The dead-letter queue of `queue`, read from the queue's own redrive
/// policy (not guessed from a naming rule): a queue URL that is not set, a
/// queue that does not exist and a queue without a dead-letter queue are
/// told apart, each naming the setting.
pub async fn redrive_of(
    sqs: &aws_sdk_sqs::Client,
    names: &aws_adapters::Names,
    queue: QueueName,
) -> Result<(String, Redrive), DlqError> {
    let (setting, url) = queue.url(names);
    let url = required(
        setting,
        url,
        "the queue's URL, whose redrive policy names its dead-letter queue (the functions' environment has it)",
    )?
    .to_string();
    let got = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(QueueAttributeName::RedrivePolicy)
        .send()
        .await
        .map_err(|e| DlqError::Source {
            setting,
            url: url.clone(),
            cause: e.into(),
        })?;
    let Some(policy) = got
        .attributes()
        .and_then(|a| a.get(&QueueAttributeName::RedrivePolicy))
    else {
        return Err(DlqError::NoRedrivePolicy { setting, url });
    };
    let Some((arn, max_receives)) = parse_policy(policy) else {
        return Err(DlqError::BadRedrivePolicy {
            setting,
            url,
            policy: policy.clone(),
        });
    };
    // arn:aws:sqs:<region>:<account>:<name>
    let parts: Vec<&str> = arn.split(':').collect();
    let (account, name) = match parts.as_slice() {
        [.., account, name] => (*account, *name),
        _ => ("", arn.as_str()),
    };
    let mut get = sqs.get_queue_url().queue_name(name);
    if !account.is_empty() {
        get = get.queue_owner_aws_account_id(account);
    }
    let dlq_url = get
        .send()
        .await
        .map_err(|e| DlqError::Target {
            setting,
            url: url.clone(),
            arn: arn.clone(),
            cause: e.into(),
        })?
        .queue_url()
        .unwrap_or_default()
        .to_string();
    Ok((
        url,
        Redrive {
            dlq_url,
            max_receives,
        },
    ))
}

/// How many times a dead letter was received before it reached the
/// dead-letter queue, from its `ApproximateReceiveCount` as this listing
/// read it. SQS keeps counting on the dead-letter queue: the count includes
/// this listing's own receive and every earlier listing's (making a message
/// visible again does not take a receive back). Both are taken off: this
/// one by subtracting it, the earlier ones by the policy's bound, since a
/// message moves once its receives reach `maxReceiveCount`.
pub fn receives_before(approximate_receive_count: u32, max_receives: u32) -> u32 {
    approximate_receive_count
        .saturating_sub(1)
        .min(max_receives)
}

/// `operator dlq list|redrive`.
pub async fn run(
    clients: &aws_adapters::Clients,
    names: &aws_adapters::Names,
    cmd: DlqCommand,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    use aws_adapters::dead_letters::{depth, peek, redrive};
    let sqs = &clients.sqs;
    match cmd {
        DlqCommand::List { queue, max } => {
            let (_, policy) = redrive_of(sqs, names, queue).await?;
            let dlq = &policy.dlq_url;
            let letters = peek(sqs, dlq, max).await.map_err(DlqError::from)?;
            let count = depth(sqs, dlq).await.map_err(DlqError::from)?;
            writeln!(out, "{dlq}: {count} messages")?;
            for d in letters {
                let sent = chrono::DateTime::from_timestamp_millis(d.sent_ms as i64)
                    .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
                    .unwrap_or_default();
                let body: String = d.body.chars().take(300).collect();
                writeln!(
                    out,
                    "{}\t{sent}\treceived {} times\t{body}",
                    d.id,
                    receives_before(d.receives, policy.max_receives)
                )?;
            }
        }
        DlqCommand::Redrive { queue } => {
            let (to, policy) = redrive_of(sqs, names, queue).await?;
            let dlq = &policy.dlq_url;
            let moved = redrive(sqs, dlq, &to).await.map_err(DlqError::from)?;
            writeln!(out, "sent {moved} messages from {dlq} back to {to}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_s_receives_are_not_counted() {
        // Two receives on the jobs queue, then listed once, twice, ten times.
        assert_eq!(receives_before(3, 2), 2);
        assert_eq!(receives_before(4, 2), 2);
        assert_eq!(receives_before(12, 2), 2);
        // A count SQS has not caught up with never goes below zero.
        assert_eq!(receives_before(0, 5), 0);
        assert_eq!(receives_before(1, 5), 0);
    }

    #[test]
    fn the_policy_s_count_is_read_as_a_number_or_a_string() {
        let arn = "arn:aws:sqs:us-east-1:123456789012:marketlab-jobs-dlq";
        for policy in [
            format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":5}}"#),
            format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":"5"}}"#),
        ] {
            assert_eq!(parse_policy(&policy), Some((arn.to_string(), 5)));
        }
        assert_eq!(parse_policy(r#"{"maxReceiveCount":5}"#), None);
        assert_eq!(parse_policy("not json"), None);
    }
}
