//! What the service measures, under one set of names for both runtimes:
//! recorded through the `metrics` facade here, exported as Prometheus text
//! by the embedded server and as CloudWatch Embedded Metric Format by the
//! Lambda functions. Labels stay few and bounded (route templates, task
//! kinds, plans, outcomes): never an account, a task id or a raw path, so
//! CloudWatch dimensions and Prometheus series stay a fixed, small set.
//! With no exporter installed every call here is a no-op.

pub mod emf;
pub mod otlp;
pub mod trace;

use metrics::{
    Unit, counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram,
};
use std::time::Duration;

pub const HTTP_REQUESTS: &str = "http_requests_total";
pub const HTTP_DURATION: &str = "http_request_duration_seconds";
pub const TASKS: &str = "tasks_total";
pub const TASK_QUEUE_WAIT: &str = "task_queue_wait_seconds";
pub const TASK_RUN: &str = "task_run_seconds";
pub const TASK_ATTEMPTS: &str = "task_attempts";
pub const BATCH_ROWS: &str = "batch_rows_total";
pub const BATCH_ROWS_PER_SECOND: &str = "batch_rows_per_second";
pub const QUEUE_DEPTH: &str = "queue_depth";
pub const QUEUE_OLDEST_AGE: &str = "queue_oldest_age_seconds";
pub const DLQ_DEPTH: &str = "dlq_depth";
pub const WORKER_SLOTS_BUSY: &str = "worker_slots_busy";
pub const CACHE_HITS: &str = "cache_hits_total";
pub const CACHE_MISSES: &str = "cache_misses_total";
pub const CACHE_BYTES: &str = "cache_bytes";
pub const QUOTA_REJECTIONS: &str = "quota_rejections_total";
pub const METERING_FLUSH_LAG: &str = "metering_flush_lag_seconds";
pub const COLD_STARTS: &str = "cold_starts_total";
pub const WEBHOOK_ATTEMPTS: &str = "webhook_attempts_total";
pub const PANICS: &str = "panics_total";
pub const DATA_LAG: &str = "market_data_lag_seconds";
pub const DATA_IMPORTS: &str = "market_data_imports_total";

/// Every metric with its unit and meaning: exporters read units from here
/// (EMF needs them per metric, Prometheus prints the text as HELP).
pub fn describe() {
    describe_gauge!(
        DATA_LAG,
        Unit::Seconds,
        "Time since the close of the first session missing from the market data (0 while current)"
    );
    describe_counter!(
        DATA_IMPORTS,
        Unit::Count,
        "Files imported from incoming/, by outcome (ingested, rejected)"
    );
    describe_counter!(
        HTTP_REQUESTS,
        Unit::Count,
        "HTTP requests by route template, method and status class"
    );
    describe_histogram!(
        HTTP_DURATION,
        Unit::Seconds,
        "Time from request to answer head, by route template and method"
    );
    describe_counter!(
        TASKS,
        Unit::Count,
        "Task attempts that ended, by kind and outcome (success, failed, retry, waiting)"
    );
    describe_histogram!(
        TASK_QUEUE_WAIT,
        Unit::Seconds,
        "Time from a task's submit to the start of its attempt"
    );
    describe_histogram!(TASK_RUN, Unit::Seconds, "Time an attempt spent computing");
    describe_histogram!(
        TASK_ATTEMPTS,
        Unit::Count,
        "The attempt number at which a task ended"
    );
    describe_counter!(
        BATCH_ROWS,
        Unit::Count,
        "Backtest rows computed by batch chunks"
    );
    describe_histogram!(
        BATCH_ROWS_PER_SECOND,
        Unit::CountPerSecond,
        "Rows per second of each batch chunk"
    );
    describe_gauge!(QUEUE_DEPTH, Unit::Count, "Messages waiting in a queue");
    describe_gauge!(
        QUEUE_OLDEST_AGE,
        Unit::Seconds,
        "Age of the oldest waiting message"
    );
    describe_gauge!(DLQ_DEPTH, Unit::Count, "Messages in a dead-letter queue");
    describe_gauge!(
        WORKER_SLOTS_BUSY,
        Unit::Count,
        "Jobs running in this process"
    );
    describe_counter!(
        CACHE_HITS,
        Unit::Count,
        "Market-data cache reads answered from memory"
    );
    describe_counter!(
        CACHE_MISSES,
        Unit::Count,
        "Market-data cache reads that decoded from storage"
    );
    describe_gauge!(
        CACHE_BYTES,
        Unit::Bytes,
        "Bytes held by a market-data cache with a budget"
    );
    describe_counter!(
        QUOTA_REJECTIONS,
        Unit::Count,
        "Requests and submits refused with 429 by a plan limit, by plan and limit"
    );
    describe_gauge!(
        METERING_FLUSH_LAG,
        Unit::Seconds,
        "Age of the oldest usage count at its flush"
    );
    describe_counter!(
        COLD_STARTS,
        Unit::Count,
        "First invocations of a Lambda instance"
    );
    describe_counter!(
        WEBHOOK_ATTEMPTS,
        Unit::Count,
        "Webhook delivery attempts by outcome"
    );
    describe_counter!(
        PANICS,
        Unit::Count,
        "Requests whose handler panicked (answered 500; a bug to fix)"
    );
}

/// A handler panicked; its request was answered 500.
pub fn panic_caught() {
    counter!(PANICS).increment(1);
}

/// A status code's class: `2xx` ... `5xx`.
pub fn status_class(status: u16) -> &'static str {
    match status {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

/// One answered request; `route` is the matched template (`/backtest/status/{task_id}`),
/// or `unmatched`.
pub fn request(route: &str, method: &str, status: u16, took: Duration) {
    let (route, method) = (interned(route), interned(method));
    counter!(HTTP_REQUESTS, "route" => route, "method" => method, "status" => status_class(status))
        .increment(1);
    histogram!(HTTP_DURATION, "route" => route, "method" => method).record(took.as_secs_f64());
}

/// Route templates and methods kept once for the life of the process, so a
/// request's labels allocate nothing. The set is bounded: templates are the
/// router's (unknown paths are `unmatched`), methods are HTTP's (others,
/// which the router refuses, share one label).
fn interned(s: &str) -> &'static str {
    use parking_lot::RwLock;
    use std::collections::HashSet;
    use std::sync::OnceLock;
    static SEEN: OnceLock<RwLock<HashSet<&'static str>>> = OnceLock::new();
    const MAX: usize = 1024;
    let seen = SEEN.get_or_init(Default::default);
    if let Some(k) = seen.read().get(s) {
        return k;
    }
    let mut w = seen.write();
    if let Some(k) = w.get(s) {
        return k;
    }
    if w.len() >= MAX {
        return "other";
    }
    let k: &'static str = Box::leak(s.to_owned().into_boxed_str());
    w.insert(k);
    k
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    Failed,
    /// To be delivered again (a dependency failed, the task is busy elsewhere).
    Retry,
    /// Sent back to wait for one of its owner's task slots.
    Waiting,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Failed => "failed",
            Outcome::Retry => "retry",
            Outcome::Waiting => "waiting",
        }
    }
}

/// One attempt of a task of `kind` that ended as `outcome`.
pub fn task(kind: &'static str, outcome: Outcome) {
    counter!(TASKS, "kind" => kind, "outcome" => outcome.as_str()).increment(1);
}

/// An attempt that ran: how long it waited since its submit, how long it
/// ran, and (when it ended the task) its attempt number.
pub fn task_timing(
    kind: &'static str,
    waited: Duration,
    ran: Duration,
    ended_at_attempt: Option<u32>,
) {
    histogram!(TASK_QUEUE_WAIT, "kind" => kind).record(waited.as_secs_f64());
    histogram!(TASK_RUN, "kind" => kind).record(ran.as_secs_f64());
    if let Some(a) = ended_at_attempt {
        histogram!(TASK_ATTEMPTS, "kind" => kind).record(f64::from(a));
    }
}

/// A batch chunk computed `rows` rows in `took`.
pub fn batch_rows(rows: usize, took: Duration) {
    counter!(BATCH_ROWS).increment(rows as u64);
    if !took.is_zero() {
        histogram!(BATCH_ROWS_PER_SECOND).record(rows as f64 / took.as_secs_f64());
    }
}

/// A queue's waiting messages and the age of its oldest.
pub fn queue(name: &'static str, depth: u64, oldest: Option<Duration>) {
    gauge!(QUEUE_DEPTH, "queue" => name).set(depth as f64);
    if let Some(age) = oldest {
        queue_oldest(name, age);
    }
}

/// The oldest message's age alone (the worker sees it in its batch).
pub fn queue_oldest(name: &'static str, age: Duration) {
    gauge!(QUEUE_OLDEST_AGE, "queue" => name).set(age.as_secs_f64());
}

pub fn data_lag(lag: Duration) {
    gauge!(DATA_LAG).set(lag.as_secs_f64());
}

pub fn data_import(outcome: &'static str) {
    counter!(DATA_IMPORTS, "outcome" => outcome).increment(1);
}

pub fn dead_letters(name: &'static str, depth: u64) {
    gauge!(DLQ_DEPTH, "queue" => name).set(depth as f64);
}

/// A job started (`+1`) or ended (`-1`) in this process.
pub fn worker_busy(delta: f64) {
    gauge!(WORKER_SLOTS_BUSY).increment(delta);
}

pub fn cache_read(cache: &'static str, hit: bool) {
    if hit {
        counter!(CACHE_HITS, "cache" => cache).increment(1);
    } else {
        counter!(CACHE_MISSES, "cache" => cache).increment(1);
    }
}

pub fn cache_bytes(cache: &'static str, bytes: usize) {
    gauge!(CACHE_BYTES, "cache" => cache).set(bytes as f64);
}

/// A 429 from a plan limit (`requests_per_minute`, `monthly_compute_minutes`).
pub fn quota_rejected(plan: &str, limit: &'static str) {
    counter!(QUOTA_REJECTIONS, "plan" => plan.to_string(), "limit" => limit).increment(1);
}

pub fn metering_flushed(lag: Duration) {
    gauge!(METERING_FLUSH_LAG).set(lag.as_secs_f64());
}

/// A Lambda instance's first invocation (its function is the `service` dimension).
pub fn cold_start() {
    counter!(COLD_STARTS).increment(1);
}

/// A webhook attempt: `delivered`, `retry` or `failed`.
pub fn webhook_attempt(outcome: &'static str) {
    counter!(WEBHOOK_ATTEMPTS, "outcome" => outcome).increment(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_classes() {
        assert_eq!(
            [101, 200, 204, 302, 404, 429, 500, 503].map(status_class),
            ["1xx", "2xx", "2xx", "3xx", "4xx", "4xx", "5xx", "5xx"]
        );
    }
}
