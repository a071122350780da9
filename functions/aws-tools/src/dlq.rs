//! `operator dlq list|redrive`: what a dead-letter queue holds, and sending
//! it back to its queue (AWS only: the embedded queue has no dead letters).

use anyhow::Result;
use clap::Subcommand;
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

/// `operator dlq list|redrive`.
pub async fn run(
    clients: &aws_adapters::Clients,
    names: &aws_adapters::Names,
    cmd: DlqCommand,
    out: &mut impl Write,
) -> Result<()> {
    use aws_adapters::dead_letters::{dead_letter_url, depth, peek, redrive};
    let sqs = &clients.sqs;
    let source = |q: QueueName| match q {
        QueueName::Jobs => names.queue_url.clone(),
        QueueName::Webhooks => names.webhook_queue_url.clone(),
        QueueName::Ingest => names.ingest_queue_url.clone(),
    };
    match cmd {
        DlqCommand::List { queue, max } => {
            let dlq = dead_letter_url(sqs, &source(queue)).await?;
            let letters = peek(sqs, &dlq, max).await?;
            writeln!(out, "{dlq}: {} messages", depth(sqs, &dlq).await?)?;
            for d in letters {
                let sent = chrono::DateTime::from_timestamp_millis(d.sent_ms as i64)
                    .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
                    .unwrap_or_default();
                let body: String = d.body.chars().take(300).collect();
                writeln!(
                    out,
                    "{}\t{sent}\treceived {} times\t{body}",
                    d.id, d.receives
                )?;
            }
        }
        DlqCommand::Redrive { queue } => {
            let to = source(queue);
            let dlq = dead_letter_url(sqs, &to).await?;
            let moved = redrive(sqs, &dlq, &to).await?;
            writeln!(out, "sent {moved} messages from {dlq} back to {to}")?;
        }
    }
    Ok(())
}
