//! The dead-letter queues: what is in one (without taking it out) and
//! sending it all back to its source queue, for the operator's
//! `operator dlq list|redrive`.

use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::{MessageSystemAttributeName, QueueAttributeName};
use platform::PortError;
use std::collections::BTreeMap;

/// A message waiting in a dead-letter queue.
#[derive(Debug, Clone, PartialEq)]
pub struct DeadLetter {
    pub id: String,
    pub body: String,
    /// Times it was handed out, over both queues.
    pub receives: u32,
    /// When it was first sent, Unix milliseconds.
    pub sent_ms: u64,
}

fn unavailable(what: &str) -> impl FnOnce(aws_sdk_sqs::Error) -> PortError + '_ {
    move |e| PortError::unavailable_by(what.to_string(), e)
}

/// The dead-letter queue of `queue_url` (named `<queue>-dlq`, as the
/// template and `provision` make it).
pub async fn dead_letter_url(client: &Client, queue_url: &str) -> Result<String, PortError> {
    let name = queue_url.rsplit('/').next().unwrap_or_default();
    let got = client
        .get_queue_url()
        .queue_name(format!("{name}-dlq"))
        .send()
        .await
        .map_err(|e| unavailable("the dead-letter queue")(e.into()))?;
    Ok(got.queue_url().unwrap_or_default().to_string())
}

/// Messages in the queue (its approximate count).
pub async fn depth(client: &Client, queue_url: &str) -> Result<u64, PortError> {
    let got = client
        .get_queue_attributes()
        .queue_url(queue_url)
        .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
        .send()
        .await
        .map_err(|e| unavailable("queue attributes")(e.into()))?;
    Ok(got
        .attributes()
        .and_then(|a| a.get(&QueueAttributeName::ApproximateNumberOfMessages))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0))
}

/// Up to `max` messages of the queue, left in it: each is received and
/// made visible again at once.
pub async fn peek(
    client: &Client,
    dlq_url: &str,
    max: usize,
) -> Result<Vec<DeadLetter>, PortError> {
    let mut seen: BTreeMap<String, DeadLetter> = BTreeMap::new();
    let mut handles = Vec::new();
    while seen.len() < max {
        let got = client
            .receive_message()
            .queue_url(dlq_url)
            .max_number_of_messages(10)
            .visibility_timeout(30)
            .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
            .message_system_attribute_names(MessageSystemAttributeName::SentTimestamp)
            .send()
            .await
            .map_err(|e| unavailable("receive from the dead-letter queue")(e.into()))?;
        let messages = got.messages();
        if messages.is_empty() {
            break;
        }
        for m in messages {
            let attr = |k: MessageSystemAttributeName| {
                m.attributes()
                    .and_then(|a| a.get(&k))
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            let id = m.message_id().unwrap_or_default().to_string();
            handles.push(m.receipt_handle().unwrap_or_default().to_string());
            seen.entry(id.clone()).or_insert(DeadLetter {
                id,
                body: m.body().unwrap_or_default().to_string(),
                receives: attr(MessageSystemAttributeName::ApproximateReceiveCount) as u32,
                sent_ms: attr(MessageSystemAttributeName::SentTimestamp),
            });
        }
    }
    for handle in handles {
        client
            .change_message_visibility()
            .queue_url(dlq_url)
            .receipt_handle(handle)
            .visibility_timeout(0)
            .send()
            .await
            .map_err(|e| unavailable("release a dead letter")(e.into()))?;
    }
    let mut out: Vec<DeadLetter> = seen.into_values().collect();
    out.sort_by_key(|d| d.sent_ms);
    out.truncate(max);
    Ok(out)
}

/// Sends every message of the dead-letter queue back to `queue_url` (each
/// sent, then deleted: a crash between the two sends one twice, which the
/// worker's claims make harmless); answers how many went.
pub async fn redrive(client: &Client, dlq_url: &str, queue_url: &str) -> Result<usize, PortError> {
    let mut moved = 0;
    loop {
        let got = client
            .receive_message()
            .queue_url(dlq_url)
            .max_number_of_messages(10)
            .visibility_timeout(60)
            .send()
            .await
            .map_err(|e| unavailable("receive from the dead-letter queue")(e.into()))?;
        let messages = got.messages();
        if messages.is_empty() {
            return Ok(moved);
        }
        for m in messages {
            client
                .send_message()
                .queue_url(queue_url)
                .message_body(m.body().unwrap_or_default())
                .send()
                .await
                .map_err(|e| unavailable("send back to the queue")(e.into()))?;
            client
                .delete_message()
                .queue_url(dlq_url)
                .receipt_handle(m.receipt_handle().unwrap_or_default())
                .send()
                .await
                .map_err(|e| unavailable("delete a dead letter")(e.into()))?;
            moved += 1;
        }
    }
}
