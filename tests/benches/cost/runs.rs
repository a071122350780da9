//! The measured runs: tasks through submit, worker and result read, and
//! every documented request, on new and warm instances.

use crate::model::{Prices, Work};
use aws_lambda_events::event::sqs::SqsBatchResponse;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use tests::aws_meter::Meter;
use tests::operations::Op;
use tests::runtime_api::{Function, answer_json, http_event, release_dir, template_memory_mb};

/// Warm repeats of each request and task after the cold one.
pub const WARM: usize = 3;

/// The function a path reaches through the template's routes.
pub fn function_of(path: &str) -> &'static str {
    let first = path
        .trim_start_matches('/')
        .split(['/', '?'])
        .next()
        .unwrap_or_default();
    match first {
        "ws" => "data",
        "backtest" | "health" | "auth-info" | "usage" | "assets" | "openapi.json" | "docs" => {
            "backtest"
        }
        _ => "analytics",
    }
}

/// The functions' environment as the template deploys it (`info` logs),
/// their AWS calls through the meter.
pub fn metered_env(names: &aws_adapters::Names, meter: &Meter) -> Vec<(&'static str, String)> {
    let mut env = tests::emulator::function_env(names);
    for (k, v) in env.iter_mut() {
        match *k {
            "AWS_ENDPOINT_URL" => *v = meter.endpoint.clone(),
            "RUST_LOG" => *v = "info".into(),
            _ => {}
        }
    }
    env
}

pub struct Bench {
    pub prices: Prices,
    pub meter: Meter,
    pub env: Vec<(&'static str, String)>,
    pub clients: aws_adapters::Clients,
    pub queue_url: String,
    pub auth: String,
}

impl Bench {
    pub async fn function(&self, binary: &str) -> (Function, u32) {
        let memory = template_memory_mb(binary);
        let f = Function::new(
            &release_dir().join(binary),
            &format!("marketlab-{binary}"),
            memory,
            &self.env,
        )
        .await;
        (f, memory)
    }

    /// One invocation, its AWS calls, recorded into `work`.
    pub async fn invoke(
        &self,
        f: &mut Function,
        memory: u32,
        event: Value,
        work: &mut Work,
        http: bool,
    ) -> Value {
        let inv = f.invoke(event).await;
        let aws = self.meter.take();
        let status = inv.answer["statusCode"].as_u64().unwrap_or(200);
        assert!(
            inv.answer.get("error").is_none() && status < 500,
            "{}\n{}",
            inv.answer,
            f.log_tail()
        );
        work.add_invocation(&self.prices, memory, &inv, aws, http);
        inv.answer
    }

    pub fn request(&self, op: &Op) -> Value {
        let mut e = http_event(op.method, &op.path, op.body.as_ref(), Some(&self.auth));
        if op.idempotent {
            e["headers"]["idempotency-key"] = json!(format!("cost:{}", op.key.replace(' ', ":")));
        }
        e
    }

    /// Hands the queue's messages to the worker as the event source mapping
    /// does, until `done` says the task ended.
    pub async fn drain(
        &self,
        worker: &mut Function,
        memory: u32,
        work: &mut Work,
        status: &mut StatusRead<'_>,
    ) {
        let t0 = std::time::Instant::now();
        loop {
            let Some((event, handles)) =
                tests::emulator::receive_batch(&self.clients, &self.queue_url).await
            else {
                if status.done().await {
                    return;
                }
                assert!(
                    t0.elapsed().as_secs() < 300,
                    "the task did not end: {}",
                    status.last
                );
                continue;
            };
            let answer = self
                .invoke(
                    worker,
                    memory,
                    serde_json::to_value(&event).unwrap(),
                    work,
                    false,
                )
                .await;
            let answer: SqsBatchResponse = serde_json::from_value(answer).unwrap();
            tests::emulator::settle_batch(&self.clients, &self.queue_url, &handles, &answer).await;
        }
    }
}

/// Whether the task being drained has ended (read outside the meter).
pub struct StatusRead<'a> {
    pub bench: &'a Bench,
    pub function: &'a mut Function,
    pub path: String,
    /// The last answer read.
    pub last: Value,
}

impl StatusRead<'_> {
    pub async fn done(&mut self) -> bool {
        let inv = self
            .function
            .invoke(http_event("GET", &self.path, None, Some(&self.bench.auth)))
            .await;
        // Polls are not the task's cost: one read of the result is.
        self.bench.meter.take();
        self.last = inv.answer.clone();
        let s = answer_json(&inv.answer)["status"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(s != "FAILED", "{}: {}", self.path, inv.answer);
        s == "SUCCESS"
    }
}

/// A task kind's measured runs.
pub struct TaskRuns {
    pub kind: &'static str,
    /// Per task: submit, worker, one read of the result.
    pub warm: Work,
    /// The worker's part of `warm`.
    pub worker: Work,
    /// Task compute the account was counted for per task (`GET /usage`).
    pub metered_ms: f64,
    pub cold_extra: Work,
    pub worker_memory: u32,
    pub id: String,
}

pub async fn task_kind(
    b: &Bench,
    kind: &'static str,
    http: &mut (Function, u32),
    reader: &mut Function,
    submit: (&str, Value),
    status: fn(&str) -> String,
    result: fn(&str) -> String,
) -> TaskRuns {
    let (mut worker, wmem) = b.function("worker").await;
    let mut runs = Vec::new();
    let mut workers = Work::default();
    let mut metered = 0.0;
    let mut id = String::new();
    for run in 0..=WARM {
        let mut w = Work::default();
        let mut on_worker = Work::default();
        let counted = compute_ms(b, reader).await;
        let answer = b
            .invoke(
                &mut http.0,
                http.1,
                http_event("POST", submit.0, Some(&submit.1), Some(&b.auth)),
                &mut w,
                true,
            )
            .await;
        id = answer_json(&answer)["task_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{kind}: {answer}"))
            .to_string();
        let mut read = StatusRead {
            bench: b,
            function: &mut http.0,
            path: status(&id),
            last: Value::Null,
        };
        b.drain(&mut worker, wmem, &mut on_worker, &mut read).await;
        w.add(&on_worker);
        if run > 0 {
            workers.add(&on_worker.scaled(1.0 / WARM as f64));
            metered += (compute_ms(b, reader).await - counted) / WARM as f64;
        }
        let answer = b
            .invoke(
                &mut http.0,
                http.1,
                http_event("GET", &result(&id), None, Some(&b.auth)),
                &mut w,
                true,
            )
            .await;
        assert_eq!(answer["statusCode"], 200, "{kind}: {answer}");
        runs.push(w);
    }
    let mut warm = Work::default();
    for w in &runs[1..] {
        warm.add(w);
    }
    let warm = warm.scaled(1.0 / WARM as f64);
    TaskRuns {
        kind,
        cold_extra: runs[0].less(&warm),
        warm,
        worker: workers,
        metered_ms: metered,
        worker_memory: wmem,
        id,
    }
}

/// The account's task compute this month, as `GET /usage` (a backtest
/// function's) reports it; not metered, the bench's own read.
pub async fn compute_ms(b: &Bench, http: &mut Function) -> f64 {
    let inv = http
        .invoke(http_event("GET", "/usage", None, Some(&b.auth)))
        .await;
    b.meter.take();
    let usage = answer_json(&inv.answer);
    usage["total"]["compute_ms"]
        .as_object()
        .unwrap_or_else(|| panic!("usage: {}", inv.answer))
        .values()
        .filter_map(Value::as_f64)
        .sum()
}

/// Every operation's request: cold (a new instance), then warm repeats.
pub struct RequestRuns {
    pub key: &'static str,
    pub function: &'static str,
    pub warm: Work,
    pub cold: Work,
}

pub async fn requests(b: &Bench, ops: &[Op]) -> (Vec<RequestRuns>, BTreeMap<&'static str, Work>) {
    let mut out = Vec::new();
    let mut flushes = BTreeMap::new();
    for binary in ["backtest", "analytics", "data"] {
        let (mut f, memory) = b.function(binary).await;
        let mine: Vec<&Op> = ops
            .iter()
            .filter(|o| function_of(&o.path) == binary)
            .collect();
        let mut cold = Vec::new();
        let mut warm = vec![Work::default(); mine.len()];
        for pass in 0..=WARM {
            for (k, op) in mine.iter().enumerate() {
                let mut w = Work::default();
                let answer = b.invoke(&mut f, memory, b.request(op), &mut w, true).await;
                let status = answer["statusCode"].as_u64().unwrap_or(0);
                assert!((200..300).contains(&status), "{}: {answer}", op.key);
                if pass == 0 {
                    cold.push(w);
                } else {
                    warm[k].add(&w.scaled(1.0 / WARM as f64));
                }
            }
        }
        // An instance writes its usage counts at the end of the first
        // request 2 s or more after its last write: at a few requests a
        // second, each request does. What that write adds to a request:
        tokio::time::sleep(std::time::Duration::from_millis(2_100)).await;
        let (k, op) = mine
            .iter()
            .enumerate()
            .find(|(_, o)| {
                [
                    "GET /usage",
                    "GET /ws/usage",
                    "GET /cpm/get-predefined-patterns",
                ]
                .contains(&o.key)
            })
            .expect("a light authenticated request");
        let mut w = Work::default();
        b.invoke(&mut f, memory, b.request(op), &mut w, true).await;
        let mut flush = w.less(&warm[k]);
        flush.invocations = 0.0;
        flushes.insert(binary, flush);
        for ((op, c), w) in mine.iter().zip(cold).zip(warm) {
            out.push(RequestRuns {
                key: op.key,
                function: binary,
                warm: w,
                cold: c,
            });
        }
    }
    (out, flushes)
}
