//! Job queue on SQS. Messages are `{task_id, kind}`: the task record holds the
//! parameters, so a message stays far below the 256 KB limit.

use async_trait::async_trait;
use aws_sdk_sqs::Client;
use platform::PortError;
use platform::queue::{JobMessage, JobQueue};
use std::time::Duration;

/// The message attribute carrying the W3C trace context of the request
/// that queued a job.
pub const TRACEPARENT: &str = "traceparent";

/// A message's trace: its `traceparent` attribute, else the X-Ray header
/// SQS adds when the sender traced with X-Ray (`AWSTraceHeader`).
pub fn trace_of(
    traceparent: Option<&str>,
    aws_trace_header: Option<&str>,
) -> Option<platform::telemetry::trace::Trace> {
    use platform::telemetry::trace::Trace;
    traceparent
        .and_then(Trace::from_traceparent)
        .or_else(|| aws_trace_header.and_then(Trace::from_xray))
}

#[derive(Clone)]
pub struct SqsQueue {
    client: Client,
    queue_url: String,
}

/// Whether a message body is S3's test event (`"Event": "s3:TestEvent"`),
/// sent to each queue when a bucket's notifications are set.
pub fn is_s3_test_event(body: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(body)
        .is_ok_and(|v| v.get("Event").and_then(|e| e.as_str()) == Some("s3:TestEvent"))
}

/// A received message of any body, and the handle that acknowledges it.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub body: String,
    pub receipt_handle: String,
    /// How many times SQS has handed the message out, this time included.
    pub receives: u32,
    traceparent: Option<String>,
    aws_trace_header: Option<String>,
}

impl Delivery {
    /// The job message it carries, with the trace of the request that
    /// queued it.
    pub fn job(&self) -> Result<Received, serde_json::Error> {
        let mut message = serde_json::from_str::<JobMessage>(&self.body)?;
        message.trace = trace_of(
            self.traceparent.as_deref(),
            self.aws_trace_header.as_deref(),
        );
        Ok(Received {
            message,
            receipt_handle: self.receipt_handle.clone(),
            receives: self.receives,
        })
    }
}

/// A received job message and the handle that acknowledges it.
#[derive(Debug, Clone)]
pub struct Received {
    pub message: JobMessage,
    pub receipt_handle: String,
    /// How many times SQS has handed the message out, this time included.
    pub receives: u32,
}

/// A long poll's timeouts: the configured ones with its wait on top, so
/// an empty queue's answer after the wait is not cut short.
fn long_poll(wait: u64) -> aws_sdk_sqs::config::Builder {
    let base = crate::config::timeouts();
    let wait = Duration::from_secs(wait);
    let mut t = aws_config::timeout::TimeoutConfig::builder();
    if let Some(c) = base.connect_timeout() {
        t = t.connect_timeout(c);
    }
    if let Some(a) = base.operation_attempt_timeout() {
        t = t.operation_attempt_timeout(a + wait);
    }
    if let Some(o) = base.operation_timeout() {
        t = t.operation_timeout(o + wait);
    }
    aws_sdk_sqs::config::Builder::default().timeout_config(t.build())
}

impl SqsQueue {
    pub fn new(client: Client, queue_url: impl Into<String>) -> Self {
        SqsQueue {
            client,
            queue_url: queue_url.into(),
        }
    }

    /// Up to `max` job messages, waiting up to `wait_seconds` for the first
    /// (long polling). A body that is not a job message is logged and left:
    /// it can never succeed, and the queue's redrive moves it to the
    /// dead-letter queue.
    pub async fn receive(&self, max: i32, wait_seconds: i32) -> Result<Vec<Received>, PortError> {
        Ok(self
            .receive_any(max, wait_seconds)
            .await?
            .into_iter()
            .filter_map(|d| match d.job() {
                Ok(r) => Some(r),
                Err(e) => {
                    tracing::error!(error = %e, body = %d.body, "a message that is not a job message; left for the dead-letter queue");
                    None
                }
            })
            .collect())
    }

    /// Up to `max` messages of any body (job messages, the bucket's
    /// events), waiting up to `wait_seconds` for the first.
    pub async fn receive_any(
        &self,
        max: i32,
        wait_seconds: i32,
    ) -> Result<Vec<Delivery>, PortError> {
        use aws_sdk_sqs::types::MessageSystemAttributeName as System;
        let out = self
            .client
            .receive_message()
            .queue_url(&self.queue_url)
            .max_number_of_messages(max.clamp(1, 10))
            .wait_time_seconds(wait_seconds.clamp(0, 20))
            .message_attribute_names(TRACEPARENT)
            .message_system_attribute_names(System::AwsTraceHeader)
            .message_system_attribute_names(System::ApproximateReceiveCount)
            .customize()
            .config_override(long_poll(wait_seconds.clamp(0, 20) as u64))
            .send()
            .await
            .map_err(|e| PortError::unavailable_by("receive from SQS", e))?;
        Ok(out
            .messages()
            .iter()
            .filter_map(|m| {
                let attribute = |name: System| m.attributes().and_then(|a| a.get(&name)).cloned();
                Some(Delivery {
                    body: m.body()?.to_string(),
                    receipt_handle: m.receipt_handle()?.to_string(),
                    receives: attribute(System::ApproximateReceiveCount)
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(1),
                    traceparent: m
                        .message_attributes()
                        .and_then(|a| a.get(TRACEPARENT))
                        .and_then(|v| v.string_value())
                        .map(str::to_string),
                    aws_trace_header: attribute(System::AwsTraceHeader),
                })
            })
            .collect())
    }

    /// Sends a job message. Its owner is the message group: on a standard
    /// queue SQS then serves tenants fairly (SQS fair queues), so one
    /// tenant's backlog does not hold back another's messages.
    async fn send(&self, message: JobMessage, delay_seconds: i32) -> Result<(), PortError> {
        let body = serde_json::to_string(&message).map_err(PortError::internal)?;
        let trace = message.trace.map(|t| {
            aws_sdk_sqs::types::MessageAttributeValue::builder()
                .data_type("String")
                .string_value(t.traceparent())
                .build()
                .expect("data type set")
        });
        self.client
            .send_message()
            .queue_url(&self.queue_url)
            .message_body(body)
            .set_message_attributes(trace.map(|t| [(TRACEPARENT.to_string(), t)].into()))
            .set_message_group_id(
                message
                    .owner
                    .clone()
                    .filter(|o| o.len() <= 128 && o.bytes().all(|b| b.is_ascii_graphic())),
            )
            .delay_seconds(delay_seconds)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| PortError::unavailable_by("send to SQS", e))
    }

    /// The queue's visibility timeout: how long a received message stays
    /// hidden before it is delivered again.
    pub async fn visibility(&self) -> Result<Duration, PortError> {
        use aws_sdk_sqs::types::QueueAttributeName;
        let out = self
            .client
            .get_queue_attributes()
            .queue_url(&self.queue_url)
            .attribute_names(QueueAttributeName::VisibilityTimeout)
            .send()
            .await
            .map_err(|e| PortError::unavailable_by("read the queue's visibility timeout", e))?;
        out.attributes()
            .and_then(|a| a.get(&QueueAttributeName::VisibilityTimeout))
            .and_then(|v| v.parse().ok())
            .map(Duration::from_secs)
            .ok_or_else(|| PortError::internal("the queue has no visibility timeout"))
    }

    /// Hides received messages for `hidden` more from now, ten to a call:
    /// the heartbeat of a batch that runs longer than the visibility
    /// timeout. One call per ten keeps the heartbeat inside its slack when
    /// each call is slow. Answers how many were not extended (a message
    /// already deleted is not found, which its caller expects).
    pub async fn keep(
        &self,
        receipt_handles: &[String],
        hidden: Duration,
    ) -> Result<usize, PortError> {
        use aws_sdk_sqs::types::ChangeMessageVisibilityBatchRequestEntry as Entry;
        let seconds = hidden.as_secs().min(43_200) as i32;
        let mut missed = 0;
        for ten in receipt_handles.chunks(10) {
            let entries = ten
                .iter()
                .enumerate()
                .map(|(n, h)| {
                    Entry::builder()
                        .id(n.to_string())
                        .receipt_handle(h)
                        .visibility_timeout(seconds)
                        .build()
                        .map_err(|e| PortError::internal(format!("a visibility entry: {e}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let out = self
                .client
                .change_message_visibility_batch()
                .queue_url(&self.queue_url)
                .set_entries(Some(entries))
                .send()
                .await
                .map_err(|e| PortError::unavailable_by("extend messages' visibility", e))?;
            missed += out.failed().len();
        }
        Ok(missed)
    }

    /// Makes a received message visible again now, for any worker to take:
    /// its job stalled or never started.
    pub async fn give_back(&self, receipt_handle: &str) -> Result<(), PortError> {
        self.client
            .change_message_visibility()
            .queue_url(&self.queue_url)
            .receipt_handle(receipt_handle)
            .visibility_timeout(0)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| PortError::unavailable_by("give a message back to SQS", e))
    }

    /// Acknowledges a message so it is not delivered again.
    pub async fn delete(&self, receipt_handle: &str) -> Result<(), PortError> {
        self.client
            .delete_message()
            .queue_url(&self.queue_url)
            .receipt_handle(receipt_handle)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| PortError::unavailable_by("delete from SQS", e))
    }
}

#[async_trait]
impl JobQueue for SqsQueue {
    async fn enqueue(&self, message: JobMessage) -> Result<(), PortError> {
        self.send(message, 0).await
    }

    async fn enqueue_after(&self, message: JobMessage, delay: Duration) -> Result<(), PortError> {
        // SQS delays a message by at most 15 minutes.
        self.send(message, delay.as_secs().min(900) as i32).await
    }
}
