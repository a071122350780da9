//! A stand-in for Lambda's SQS event source mapping, which exists only on
//! AWS: it long-polls a queue, hands each batch to a function as the
//! `SqsEvent` Lambda builds, deletes the messages the function's answer did
//! not report failed (read by Lambda's rules for partial batch responses)
//! and leaves the failed ones to come back after the queue's visibility
//! timeout. The function is code in this process ([`InProcess`]: `ingest
//! --poll` on the local stack) or behind an invoke URL ([`Invoke`]: the
//! `event-source` binary in front of `cargo lambda watch`), with up to
//! `concurrency` batches in flight, as the mapping's maximum concurrency.

use aws_lambda_events::encodings::Base64Data;
use aws_lambda_events::event::sqs::{SqsEvent, SqsMessage, SqsMessageAttribute};
use aws_sdk_sqs::types::{
    ChangeMessageVisibilityBatchRequestEntry, DeleteMessageBatchRequestEntry, Message,
    MessageSystemAttributeName, QueueAttributeName,
};
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why a batch was not handed on, or not answered.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Nothing listens at the invoke URL: the function never saw the batch,
    /// so it is given back at once rather than hidden for the visibility
    /// timeout.
    #[error("the function at {url} was not reached: {reason}")]
    Unreachable { url: String, reason: String },
    /// The invocation failed (an error answer, no answer in time, an answer
    /// that is not a batch response): the whole batch comes back, as on
    /// Lambda.
    #[error("the invocation failed: {0}")]
    Invocation(String),
    /// The queue could not be read or written.
    #[error("queue {queue}: {reason}")]
    Queue { queue: String, reason: String },
    /// A setting that cannot work (an invoke URL that is not `http://`).
    #[error("{0}")]
    Setting(String),
    /// A handler panicked: the process exits for its supervisor to start a
    /// clean one.
    #[error("a handler panicked: {0}")]
    Panicked(String),
}

/// What a function is: it answers one batch with its JSON (a batch
/// response, or null), or fails.
pub trait Handler: Send + Sync + 'static {
    fn invoke(&self, event: SqsEvent) -> impl Future<Output = Result<Value, Error>> + Send;
}

/// A function in this process: a closure from the event to its answer.
pub struct InProcess<F>(pub F);

impl<F, Fut> Handler for InProcess<F>
where
    F: Fn(SqsEvent) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Value> + Send,
{
    fn invoke(&self, event: SqsEvent) -> impl Future<Output = Result<Value, Error>> + Send {
        let answer = (self.0)(event);
        async move { Ok(answer.await) }
    }
}

/// A function behind an invoke URL (Lambda's `Invoke` API over plain HTTP,
/// as `cargo lambda watch` serves it at
/// `/2015-03-31/functions/<name>/invocations`).
#[derive(Debug, Clone)]
pub struct Invoke {
    url: hyper::Uri,
    address: String,
    /// An invocation's bound: the function's timeout (a first invocation
    /// under `cargo lambda watch` also builds the function).
    timeout: Duration,
}

impl Invoke {
    pub fn new(url: &str, timeout: Duration) -> Result<Invoke, Error> {
        let uri: hyper::Uri = url
            .parse()
            .map_err(|e| Error::Setting(format!("invoke URL {url}: {e}")))?;
        if uri.scheme_str() != Some("http") {
            return Err(Error::Setting(format!(
                "invoke URL {url}: only http:// (a local emulator) is supported"
            )));
        }
        let host = uri
            .host()
            .ok_or_else(|| Error::Setting(format!("invoke URL {url}: no host")))?;
        let address = format!("{host}:{}", uri.port_u16().unwrap_or(80));
        Ok(Invoke {
            url: uri,
            address,
            timeout,
        })
    }

    /// Whether something accepts connections at the URL's address.
    pub async fn reachable(&self) -> bool {
        tokio::net::TcpStream::connect(&self.address).await.is_ok()
    }

    async fn post(&self, body: Vec<u8>) -> Result<Value, Error> {
        use http_body_util::BodyExt;
        let stream = tokio::net::TcpStream::connect(&self.address)
            .await
            .map_err(|e| Error::Unreachable {
                url: self.url.to_string(),
                reason: e.to_string(),
            })?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|e| Error::Invocation(format!("handshake: {e}")))?;
        tokio::spawn(connection);
        let request = hyper::Request::post(self.url.clone())
            .header(hyper::header::HOST, &self.address)
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(http_body_util::Full::new(hyper::body::Bytes::from(body)))
            .map_err(|e| Error::Invocation(e.to_string()))?;
        let exchange = async {
            let response = sender
                .send_request(request)
                .await
                .map_err(|e| Error::Invocation(format!("no answer: {e}")))?;
            let (parts, body) = response.into_parts();
            let body = body
                .collect()
                .await
                .map_err(|e| Error::Invocation(format!("answer cut short: {e}")))?
                .to_bytes();
            Ok::<_, Error>((parts, body))
        };
        let (parts, body) = tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| Error::Invocation(format!("no answer in {:?}", self.timeout)))??;
        let excerpt = || String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
        if !parts.status.is_success() {
            return Err(Error::Invocation(format!(
                "status {}: {}",
                parts.status,
                excerpt()
            )));
        }
        if parts.headers.contains_key("x-amz-function-error") {
            return Err(Error::Invocation(format!("function error: {}", excerpt())));
        }
        function_answer(&body)
    }
}

impl Handler for Invoke {
    async fn invoke(&self, event: SqsEvent) -> Result<Value, Error> {
        let body = serde_json::to_vec(&event).map_err(|e| Error::Invocation(e.to_string()))?;
        self.post(body).await
    }
}

/// A function's answer from its bytes: empty is null (success); an error
/// document (`errorType` and `errorMessage`, as the runtime reports a
/// function's error) is a failed invocation.
fn function_answer(body: &[u8]) -> Result<Value, Error> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    let answer: Value = serde_json::from_slice(body)
        .map_err(|e| Error::Invocation(format!("the answer is not JSON: {e}")))?;
    if answer.get("batchItemFailures").is_none()
        && let (Some(kind), Some(message)) = (answer.get("errorType"), answer.get("errorMessage"))
    {
        return Err(Error::Invocation(format!("{kind}: {message}")));
    }
    Ok(answer)
}

/// The messages of a batch to leave in the queue, by Lambda's rules for a
/// partial batch response: none for a null answer, an answer without
/// `batchItemFailures` or with an empty one; those named otherwise. An
/// answer Lambda cannot read (not an object, failures that are not a list,
/// an identifier that is empty, not a string or not a message of the batch)
/// fails the whole batch.
pub fn to_leave(ids: &[String], answer: &Value) -> Result<Vec<String>, String> {
    let failures = match answer {
        Value::Null => return Ok(Vec::new()),
        Value::Object(o) => match o.get("batchItemFailures") {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(Value::Array(items)) => items,
            Some(other) => return Err(format!("batchItemFailures is not a list: {other}")),
        },
        other => return Err(format!("not a batch response: {other}")),
    };
    let mut leave = Vec::new();
    for item in failures {
        match item.get("itemIdentifier").and_then(Value::as_str) {
            Some(id) if !id.is_empty() && ids.iter().any(|i| i == id) => {
                if !leave.iter().any(|l| l == id) {
                    leave.push(id.to_string());
                }
            }
            _ => {
                return Err(format!(
                    "a failure that names no message of the batch: {item}"
                ));
            }
        }
    }
    Ok(leave)
}

/// The event Lambda hands a function for `messages` of the queue `arn`:
/// each record's id, receipt handle, body and its digests, the system
/// attributes (`ApproximateReceiveCount`, `SentTimestamp`, ...) and
/// message attributes, the source and its region.
pub fn event_of(messages: &[Message], arn: &str, region: &str) -> SqsEvent {
    let mut event = SqsEvent::default();
    for m in messages {
        let mut record = SqsMessage::default();
        record.message_id = m.message_id().map(str::to_string);
        record.receipt_handle = m.receipt_handle().map(str::to_string);
        record.body = m.body().map(str::to_string);
        record.md5_of_body = m.md5_of_body().map(str::to_string);
        record.md5_of_message_attributes = m.md5_of_message_attributes().map(str::to_string);
        for (name, value) in m.attributes().into_iter().flatten() {
            record
                .attributes
                .insert(name.as_str().to_string(), value.clone());
        }
        for (name, value) in m.message_attributes().into_iter().flatten() {
            let mut a = SqsMessageAttribute::default();
            a.data_type = Some(value.data_type().to_string());
            a.string_value = value.string_value().map(str::to_string);
            a.binary_value = value.binary_value().map(|b| base64_data(b.as_ref()));
            a.string_list_values = value.string_list_values().to_vec();
            a.binary_list_values = value
                .binary_list_values()
                .iter()
                .map(|b| base64_data(b.as_ref()))
                .collect();
            record.message_attributes.insert(name.clone(), a);
        }
        record.event_source = Some("aws:sqs".into());
        record.event_source_arn = Some(arn.to_string());
        record.aws_region = Some(region.to_string());
        event.records.push(record);
    }
    event
}

/// Bytes as the event carries them (base64 in its JSON).
fn base64_data(bytes: &[u8]) -> Base64Data {
    let mut data = Base64Data::default();
    data.extend_from_slice(bytes);
    data
}

/// How the queue is read.
#[derive(Debug, Clone)]
pub struct Settings {
    pub queue_url: String,
    /// Messages per batch, 1 to 10 (the mapping's `BatchSize`).
    pub batch_size: i32,
    /// Batches in flight at once (the mapping's maximum concurrency).
    pub concurrency: usize,
    /// A receive's long-poll wait, up to 20 s (what the mapping uses).
    pub wait_seconds: i32,
}

/// What one batch came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handed {
    pub messages: usize,
    /// Left in the queue to come back (the whole batch when the invocation failed).
    pub left: usize,
}

/// A queue read for a function.
pub struct EventSource {
    sqs: aws_sdk_sqs::Client,
    settings: Settings,
    arn: String,
    region: String,
}

impl EventSource {
    /// Reads the queue's ARN (each record's `eventSourceARN`): a queue that
    /// cannot be read fails here, before anything is received.
    pub async fn new(sqs: aws_sdk_sqs::Client, settings: Settings) -> Result<EventSource, Error> {
        let queue_error = |reason: String| Error::Queue {
            queue: settings.queue_url.clone(),
            reason,
        };
        let arn = sqs
            .get_queue_attributes()
            .queue_url(&settings.queue_url)
            .attribute_names(QueueAttributeName::QueueArn)
            .send()
            .await
            .map_err(|e| queue_error(aws_sdk_sqs::error::DisplayErrorContext(e).to_string()))?
            .attributes()
            .and_then(|a| a.get(&QueueAttributeName::QueueArn).cloned())
            .ok_or_else(|| queue_error("no QueueArn attribute".into()))?;
        // arn:aws:sqs:<region>:<account>:<name>
        let region = arn.split(':').nth(3).unwrap_or_default().to_string();
        Ok(EventSource {
            sqs,
            settings,
            arn,
            region,
        })
    }

    pub fn arn(&self) -> &str {
        &self.arn
    }

    /// Up to a batch of messages, long-polling for the first.
    pub async fn receive(&self) -> Result<Vec<Message>, Error> {
        let wait = self.settings.wait_seconds.clamp(0, 20);
        // The wait on top of the usual bounds, so an empty queue's answer
        // after the wait is not cut short.
        let bound = Duration::from_secs(wait as u64 + 10);
        let timeouts = aws_sdk_sqs::config::timeout::TimeoutConfig::builder()
            .operation_attempt_timeout(bound)
            .operation_timeout(bound)
            .build();
        let out = self
            .sqs
            .receive_message()
            .queue_url(&self.settings.queue_url)
            .max_number_of_messages(self.settings.batch_size.clamp(1, 10))
            .wait_time_seconds(wait)
            .message_system_attribute_names(MessageSystemAttributeName::All)
            .message_attribute_names("All")
            .customize()
            .config_override(aws_sdk_sqs::config::Builder::default().timeout_config(timeouts))
            .send()
            .await
            .map_err(|e| self.queue_error("receive", e))?;
        Ok(out.messages().to_vec())
    }

    /// Hands `messages` to `handler` as one event and settles them by its
    /// answer: deleted, or left to come back; given back at once when the
    /// function was not reached.
    pub async fn hand<H: Handler>(
        &self,
        handler: &H,
        messages: &[Message],
    ) -> Result<Handed, Error> {
        let ids: Vec<String> = messages
            .iter()
            .map(|m| m.message_id().unwrap_or_default().to_string())
            .collect();
        let started = Instant::now();
        let answer = handler
            .invoke(event_of(messages, &self.arn, &self.region))
            .await;
        let leave = match answer {
            Ok(answer) => to_leave(&ids, &answer).unwrap_or_else(|reason| {
                tracing::warn!(%reason, "the function's answer fails the whole batch");
                ids.clone()
            }),
            Err(e @ Error::Unreachable { .. }) => {
                self.give_back(messages).await?;
                return Err(e);
            }
            Err(e) => {
                tracing::warn!(error = %e, "the whole batch comes back");
                ids.clone()
            }
        };
        let done: Vec<&Message> = messages
            .iter()
            .filter(|m| !leave.iter().any(|l| Some(l.as_str()) == m.message_id()))
            .collect();
        self.delete(&done).await?;
        let handed = Handed {
            messages: messages.len(),
            left: leave.len(),
        };
        tracing::info!(
            messages = handed.messages,
            left = handed.left,
            took_ms = started.elapsed().as_millis() as u64,
            "batch handed to the function"
        );
        Ok(handed)
    }

    async fn delete(&self, messages: &[&Message]) -> Result<(), Error> {
        if messages.is_empty() {
            return Ok(());
        }
        let entries = messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                DeleteMessageBatchRequestEntry::builder()
                    .id(i.to_string())
                    .receipt_handle(m.receipt_handle().unwrap_or_default())
                    .build()
                    .expect("id and handle set")
            })
            .collect();
        let out = self
            .sqs
            .delete_message_batch()
            .queue_url(&self.settings.queue_url)
            .set_entries(Some(entries))
            .send()
            .await
            .map_err(|e| self.queue_error("delete", e))?;
        for f in out.failed() {
            tracing::warn!(
                entry = f.id(),
                code = f.code(),
                "a message done was not deleted; it comes back"
            );
        }
        Ok(())
    }

    /// Makes `messages` visible again now.
    async fn give_back(&self, messages: &[Message]) -> Result<(), Error> {
        let entries = messages
            .iter()
            .enumerate()
            .map(|(i, m)| {
                ChangeMessageVisibilityBatchRequestEntry::builder()
                    .id(i.to_string())
                    .receipt_handle(m.receipt_handle().unwrap_or_default())
                    .visibility_timeout(0)
                    .build()
                    .expect("id and handle set")
            })
            .collect();
        self.sqs
            .change_message_visibility_batch()
            .queue_url(&self.settings.queue_url)
            .set_entries(Some(entries))
            .send()
            .await
            .map_err(|e| self.queue_error("give back", e))?;
        Ok(())
    }

    fn queue_error<E: std::error::Error + 'static>(&self, what: &str, e: E) -> Error {
        Error::Queue {
            queue: self.settings.queue_url.clone(),
            reason: format!("{what}: {}", aws_sdk_sqs::error::DisplayErrorContext(e)),
        }
    }

    /// Reads the queue for `handler` with `concurrency` loops (each one
    /// batch in flight) until `stop` completes; a batch in flight then is
    /// finished first. A failed receive is tried again a second later; a
    /// panicking handler ends the run with [`Error::Panicked`].
    pub async fn run<H: Handler>(
        self,
        handler: H,
        stop: impl Future<Output = ()>,
    ) -> Result<(), Error> {
        let (source, handler) = (Arc::new(self), Arc::new(handler));
        let (stopping, stopped) = tokio::sync::watch::channel(false);
        let mut loops = tokio::task::JoinSet::new();
        for _ in 0..source.settings.concurrency.max(1) {
            let (source, handler, mut stopped) = (source.clone(), handler.clone(), stopped.clone());
            loops.spawn(async move {
                loop {
                    let received = tokio::select! {
                        _ = stopped.wait_for(|s| *s) => return,
                        r = source.receive() => r,
                    };
                    let pause = match received {
                        Ok(messages) if messages.is_empty() => continue,
                        Ok(messages) => match source.hand(handler.as_ref(), &messages).await {
                            Ok(_) => continue,
                            Err(e) => {
                                tracing::warn!(error = %e, "batch not handed; trying again shortly");
                                true
                            }
                        },
                        Err(e) => {
                            tracing::warn!(error = %e, "receive failed; trying again shortly");
                            true
                        }
                    };
                    if pause {
                        tokio::select! {
                            _ = stopped.wait_for(|s| *s) => return,
                            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                        }
                    }
                }
            });
        }
        drop(stopped);
        let mut stop = std::pin::pin!(stop);
        let mut stop_done = false;
        loop {
            tokio::select! {
                _ = &mut stop, if !stop_done => {
                    stop_done = true;
                    let _ = stopping.send(true);
                }
                ended = loops.join_next() => match ended {
                    None => return Ok(()),
                    Some(Ok(())) => {}
                    Some(Err(e)) => {
                        let _ = stopping.send(true);
                        return Err(Error::Panicked(e.to_string()));
                    }
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ids() -> Vec<String> {
        vec!["a".into(), "b".into(), "c".into()]
    }

    #[test]
    fn a_partial_batch_response_is_read_as_lambda_reads_it() {
        // Complete successes.
        for answer in [
            Value::Null,
            json!({}),
            json!({"batchItemFailures": null}),
            json!({"batchItemFailures": []}),
            json!({"scanned": null, "batchItemFailures": []}),
        ] {
            assert_eq!(to_leave(&ids(), &answer), Ok(vec![]), "{answer}");
        }
        // The failures named, once each.
        assert_eq!(
            to_leave(
                &ids(),
                &json!({"batchItemFailures": [{"itemIdentifier": "c"}, {"itemIdentifier": "a"}, {"itemIdentifier": "c"}]})
            ),
            Ok(vec!["c".to_string(), "a".to_string()])
        );
        // Complete failures: an answer Lambda cannot read.
        for answer in [
            json!("ok"),
            json!([1]),
            json!({"batchItemFailures": "a"}),
            json!({"batchItemFailures": [{"itemIdentifier": ""}]}),
            json!({"batchItemFailures": [{"itemIdentifier": null}]}),
            json!({"batchItemFailures": [{"itemId": "a"}]}),
            json!({"batchItemFailures": [{"itemIdentifier": "z"}]}),
            json!({"batchItemFailures": [{"itemIdentifier": 1}]}),
        ] {
            assert!(to_leave(&ids(), &answer).is_err(), "{answer}");
        }
    }

    #[test]
    fn a_function_error_document_fails_the_invocation() {
        assert_eq!(function_answer(b"").unwrap(), Value::Null);
        assert_eq!(function_answer(b" \n").unwrap(), Value::Null);
        assert_eq!(
            function_answer(br#"{"batchItemFailures":[]}"#).unwrap(),
            json!({"batchItemFailures": []})
        );
        let e = function_answer(br#"{"errorType":"Panic","errorMessage":"boom"}"#).unwrap_err();
        assert!(e.to_string().contains("boom"), "{e}");
        assert!(function_answer(b"<html>").is_err());
    }

    #[test]
    fn records_carry_what_lambda_fills() {
        use aws_sdk_sqs::types::MessageAttributeValue;
        let m = Message::builder()
            .message_id("id-1")
            .receipt_handle("handle-1")
            .body("{\"x\":1}")
            .md5_of_body("md5")
            .attributes(MessageSystemAttributeName::ApproximateReceiveCount, "2")
            .attributes(MessageSystemAttributeName::SentTimestamp, "1700000000000")
            .message_attributes(
                "traceparent",
                MessageAttributeValue::builder()
                    .data_type("String")
                    .string_value("00-abc-def-01")
                    .build()
                    .unwrap(),
            )
            .build();
        let event = event_of(&[m], "arn:aws:sqs:us-east-1:123456789012:jobs", "us-east-1");
        let v = serde_json::to_value(&event).unwrap();
        let r = &v["Records"][0];
        assert_eq!(r["messageId"], "id-1");
        assert_eq!(r["receiptHandle"], "handle-1");
        assert_eq!(r["body"], "{\"x\":1}");
        assert_eq!(r["md5OfBody"], "md5");
        assert_eq!(r["attributes"]["ApproximateReceiveCount"], "2");
        assert_eq!(r["attributes"]["SentTimestamp"], "1700000000000");
        assert_eq!(
            r["messageAttributes"]["traceparent"]["stringValue"],
            "00-abc-def-01"
        );
        assert_eq!(r["messageAttributes"]["traceparent"]["dataType"], "String");
        assert_eq!(r["eventSource"], "aws:sqs");
        assert_eq!(
            r["eventSourceARN"],
            "arn:aws:sqs:us-east-1:123456789012:jobs"
        );
        assert_eq!(r["awsRegion"], "us-east-1");
    }

    #[test]
    fn only_a_plain_http_invoke_url_is_taken() {
        let i = Invoke::new(
            "http://127.0.0.1:9000/2015-03-31/functions/worker/invocations",
            Duration::from_secs(1),
        )
        .unwrap();
        assert_eq!(i.address, "127.0.0.1:9000");
        assert!(Invoke::new("https://lambda.example/x", Duration::from_secs(1)).is_err());
        assert!(Invoke::new("not a url", Duration::from_secs(1)).is_err());
    }
}
