//! What work costs on AWS, from measured runs:
//! `cargo build --release -p backtest-lambda -p analytics-lambda -p data-lambda -p worker --bins`,
//! then `cargo bench -p tests --bench cost`.
//!
//! The default sample set (300 stocks, 1990-2026) goes into a bucket on the
//! emulator. Every function runs as its release binary under a Runtime API
//! (`tests::runtime_api`) with the template's memory and log level, and
//! reaches AWS through the metering proxy (`tests::aws_meter`), which counts
//! DynamoDB request units, S3 requests and bytes and SQS requests as AWS
//! bills them. Those figures times infra/prices.json are the cost model of
//! docs/deploy.md#cost; this prints its tables.

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent, SqsMessage};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use tests::aws_meter::{Meter, Usage};
use tests::operations::{Ids, Op, operations, pattern, scanner_trial, strategy};
use tests::runtime_api::{
    Function, Invocation, answer_bytes, answer_json, http_event, release_dir, template_memory_mb,
};

/// Warm repeats of each request and task after the cold one.
const WARM: usize = 3;
/// Strategies in the measured batch backtest.
const BATCH: usize = 20;
/// The share of requests and tasks that land on a new instance (its start
/// and its first reads of the data): one in a thousand.
const COLD_SHARE: f64 = 1e-3;

#[derive(serde::Deserialize)]
struct Prices {
    as_of: String,
    region: String,
    lambda_arm64_per_gb_second: f64,
    lambda_per_request: f64,
    lambda_mb_per_vcpu: f64,
    lambda_log_bytes_per_invocation: f64,
    http_api_per_request: f64,
    http_api_bytes_per_request: f64,
    dynamodb_per_write_request_unit: f64,
    dynamodb_per_read_request_unit: f64,
    s3_per_get: f64,
    s3_per_put_copy_post_list: f64,
    sqs_per_request: f64,
    sqs_requests_per_worker_batch: f64,
    cloudwatch_logs_per_gb_ingested: f64,
    transfer_out_per_gb: f64,
}

fn prices() -> Prices {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../infra/prices.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).expect("infra/prices.json")
}

/// Measured work: one or more invocations and what they called.
#[derive(Debug, Clone, Default)]
struct Work {
    invocations: f64,
    /// Wall time less the meter's own calls.
    ms: f64,
    cpu_ms: f64,
    /// Lambda's billed duration, estimated: this machine's wall time, plus
    /// the CPU time again for the part of a vCPU the memory size lacks.
    billed_ms: f64,
    gb_seconds: f64,
    log_bytes: f64,
    /// HTTP answers: API Gateway's 512 KB request units and bytes out.
    api_units: f64,
    out_bytes: f64,
    /// Worker batches the SQS event source mapping received and deleted.
    sqs_batches: f64,
    aws: Usage,
}

impl Work {
    fn add_invocation(
        &mut self,
        p: &Prices,
        memory_mb: u32,
        inv: &Invocation,
        aws: Usage,
        http: bool,
    ) {
        let ms = (inv.ms - aws.metering_ms).max(0.0);
        let share = (p.lambda_mb_per_vcpu / memory_mb as f64 - 1.0).max(0.0);
        let billed = (ms + inv.cpu_ms * share).ceil().max(1.0);
        self.invocations += 1.0;
        self.ms += ms;
        self.cpu_ms += inv.cpu_ms;
        self.billed_ms += billed;
        self.gb_seconds += billed / 1e3 * memory_mb as f64 / 1024.0;
        self.log_bytes += inv.log_bytes as f64;
        if http {
            let bytes = answer_bytes(&inv.answer) as f64;
            self.api_units += (bytes / p.http_api_bytes_per_request).ceil().max(1.0);
            self.out_bytes += bytes;
        } else if inv.answer.get("batchItemFailures").is_some() {
            self.sqs_batches += 1.0;
        }
        self.aws.add(&aws);
    }

    fn add(&mut self, o: &Work) {
        self.invocations += o.invocations;
        self.ms += o.ms;
        self.cpu_ms += o.cpu_ms;
        self.billed_ms += o.billed_ms;
        self.gb_seconds += o.gb_seconds;
        self.log_bytes += o.log_bytes;
        self.api_units += o.api_units;
        self.out_bytes += o.out_bytes;
        self.sqs_batches += o.sqs_batches;
        self.aws.add(&o.aws);
    }

    fn scaled(&self, k: f64) -> Work {
        Work {
            invocations: self.invocations * k,
            ms: self.ms * k,
            cpu_ms: self.cpu_ms * k,
            billed_ms: self.billed_ms * k,
            gb_seconds: self.gb_seconds * k,
            log_bytes: self.log_bytes * k,
            api_units: self.api_units * k,
            out_bytes: self.out_bytes * k,
            sqs_batches: self.sqs_batches * k,
            aws: self.aws.scaled(k),
        }
    }

    /// `a - b`, floored at zero: what a cold run adds to a warm one.
    fn less(&self, b: &Work) -> Work {
        let mut d = self.clone();
        let mut neg = b.scaled(-1.0);
        // Counts floor at zero; the float fields may go negative, then floor.
        neg.aws = Usage::default();
        d.add(&neg);
        d.aws = self.aws.less(&b.aws);
        for f in [
            &mut d.invocations,
            &mut d.ms,
            &mut d.cpu_ms,
            &mut d.billed_ms,
            &mut d.gb_seconds,
            &mut d.log_bytes,
            &mut d.api_units,
            &mut d.out_bytes,
            &mut d.sqs_batches,
        ] {
            *f = f.max(0.0);
        }
        d
    }
}

/// Where a unit of work's dollars go.
#[derive(Debug, Clone, Default)]
struct Cost {
    lambda_compute: f64,
    lambda_requests: f64,
    api_gateway: f64,
    dynamodb: f64,
    s3: f64,
    sqs: f64,
    logs: f64,
    transfer: f64,
}

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

impl Cost {
    fn of(w: &Work, p: &Prices) -> Cost {
        Cost {
            lambda_compute: w.gb_seconds * p.lambda_arm64_per_gb_second,
            lambda_requests: w.invocations * p.lambda_per_request,
            api_gateway: w.api_units * p.http_api_per_request,
            dynamodb: w.aws.dynamo_read_units * p.dynamodb_per_read_request_unit
                + w.aws.dynamo_write_units * p.dynamodb_per_write_request_unit,
            s3: w.aws.s3_gets as f64 * p.s3_per_get
                + w.aws.s3_puts as f64 * p.s3_per_put_copy_post_list,
            sqs: (w.aws.sqs_requests as f64 + w.sqs_batches * p.sqs_requests_per_worker_batch)
                * p.sqs_per_request,
            logs: (w.log_bytes + w.invocations * p.lambda_log_bytes_per_invocation) / GIB
                * p.cloudwatch_logs_per_gb_ingested,
            transfer: w.out_bytes / GIB * p.transfer_out_per_gb,
        }
    }

    fn parts(&self) -> [f64; 8] {
        [
            self.lambda_compute,
            self.lambda_requests,
            self.api_gateway,
            self.dynamodb,
            self.s3,
            self.sqs,
            self.logs,
            self.transfer,
        ]
    }

    fn total(&self) -> f64 {
        self.parts().iter().sum()
    }
}

const PARTS: [&str; 8] = [
    "Lambda compute",
    "Lambda requests",
    "API Gateway",
    "DynamoDB",
    "S3",
    "SQS",
    "CloudWatch Logs",
    "transfer out",
];

/// Warm work per unit plus the cold share of an instance's first one.
fn expected(warm: &Work, cold_extra: &Work) -> Work {
    let mut w = warm.clone();
    w.add(&cold_extra.scaled(COLD_SHARE));
    w
}

/// The function a path reaches through the template's routes.
fn function_of(path: &str) -> &'static str {
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

struct Bench {
    prices: Prices,
    meter: Meter,
    env: Vec<(&'static str, String)>,
    clients: aws_adapters::Clients,
    queue_url: String,
    auth: String,
}

impl Bench {
    async fn function(&self, binary: &str) -> (Function, u32) {
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
    async fn invoke(
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

    fn request(&self, op: &Op) -> Value {
        let mut e = http_event(op.method, &op.path, op.body.as_ref(), Some(&self.auth));
        if op.idempotent {
            e["headers"]["idempotency-key"] = json!(format!("cost:{}", op.key.replace(' ', ":")));
        }
        e
    }

    /// Hands the queue's messages to the worker as the event source mapping
    /// does, until `done` says the task ended.
    async fn drain(
        &self,
        worker: &mut Function,
        memory: u32,
        work: &mut Work,
        status: &mut StatusRead<'_>,
    ) {
        let t0 = std::time::Instant::now();
        loop {
            let got = self
                .clients
                .sqs
                .receive_message()
                .queue_url(&self.queue_url)
                .max_number_of_messages(10)
                .wait_time_seconds(1)
                .send()
                .await
                .unwrap();
            let messages = got.messages();
            if messages.is_empty() {
                if status.done().await {
                    return;
                }
                assert!(t0.elapsed().as_secs() < 600, "the task did not end");
                continue;
            }
            let mut event = SqsEvent::default();
            for m in messages {
                let mut s = SqsMessage::default();
                s.message_id = m.receipt_handle().map(str::to_string);
                s.body = m.body().map(str::to_string);
                s.event_source = Some("aws:sqs".into());
                event.records.push(s);
            }
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
            let failed: Vec<&str> = answer
                .batch_item_failures
                .iter()
                .map(|f| f.item_identifier.as_str())
                .collect();
            for m in messages {
                let handle = m.receipt_handle().unwrap_or_default();
                if !failed.contains(&handle) {
                    self.clients
                        .sqs
                        .delete_message()
                        .queue_url(&self.queue_url)
                        .receipt_handle(handle)
                        .send()
                        .await
                        .unwrap();
                }
            }
        }
    }
}

/// Whether the task being drained has ended (read outside the meter).
struct StatusRead<'a> {
    bench: &'a Bench,
    function: &'a mut Function,
    path: String,
}

impl StatusRead<'_> {
    async fn done(&mut self) -> bool {
        let inv = self
            .function
            .invoke(http_event("GET", &self.path, None, Some(&self.bench.auth)))
            .await;
        // Polls are not the task's cost: one read of the result is.
        self.bench.meter.take();
        let s = answer_json(&inv.answer)["status"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(s != "FAILED", "{}: {}", self.path, inv.answer);
        s == "SUCCESS"
    }
}

/// A task kind's measured runs.
struct TaskRuns {
    kind: &'static str,
    /// Per task: submit, worker, one read of the result.
    warm: Work,
    /// The worker's part of `warm`.
    worker: Work,
    /// Task compute the account was counted for per task (`GET /usage`).
    metered_ms: f64,
    cold_extra: Work,
    worker_memory: u32,
    id: String,
}

async fn task_kind(
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
async fn compute_ms(b: &Bench, http: &mut Function) -> f64 {
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
struct RequestRuns {
    key: &'static str,
    function: &'static str,
    warm: Work,
    cold: Work,
}

async fn requests(b: &Bench, ops: &[Op]) -> (Vec<RequestRuns>, BTreeMap<&'static str, Work>) {
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

fn usd(x: f64) -> String {
    if x >= 100.0 {
        format!("${x:.0}")
    } else if x >= 1.0 {
        format!("${x:.2}")
    } else if x >= 0.01 {
        format!("${x:.3}")
    } else {
        format!("${x:.5}")
    }
}

fn kb(bytes: f64) -> String {
    format!("{:.1}", bytes / 1024.0)
}

/// A row of the inputs table: per unit of work.
fn inputs_row(label: &str, memory: &str, w: &Work) {
    println!(
        "| {label} | {memory} | {:.2} | {:.1} | {:.1} | {:.1} | {:.2} | {:.2} | {:.1} | {} | {:.2} | {:.2} | {} | {} |",
        w.invocations,
        w.ms,
        w.cpu_ms,
        w.billed_ms,
        w.aws.dynamo_read_units,
        w.aws.dynamo_write_units,
        w.aws.s3_gets as f64,
        kb(w.aws.s3_get_bytes as f64),
        w.aws.s3_puts as f64,
        w.aws.sqs_requests as f64 + w.sqs_batches * 2.0,
        kb(w.log_bytes),
        kb(w.out_bytes),
    );
}

const INPUTS_HEAD: &str = "| work | memory MB | invocations | wall ms | CPU ms | billed ms (est.) | DynamoDB RRU | DynamoDB WRU | S3 GETs | S3 GET KB | S3 PUT/LIST | SQS requests | log KB | out KB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|";

/// A row of the breakdown table: `n` units of `w`.
fn cost_row(label: &str, n: f64, w: &Work, p: &Prices) -> f64 {
    let c = Cost::of(&w.scaled(n), p);
    let total = c.total();
    let cells: Vec<String> = c
        .parts()
        .iter()
        .map(|x| format!("{} ({:.0}%)", usd(*x), 100.0 * x / total.max(1e-12)))
        .collect();
    println!("| {label} | {} | **{}** |", cells.join(" | "), usd(total));
    total
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let prices = prices();
        let clients = tests::emulator::clients().await;
        // The default sample set, as `marketlab` serves it.
        let market = tempfile::tempdir().unwrap();
        sample::generate(&sample::SampleConfig::default(), &platform::marketdata::LocalDir::new(market.path()))
            .expect("the sample set");
        let t = std::time::Instant::now();
        let bucket = tests::emulator::bucket_of(&clients, market.path()).await;
        eprintln!("sample set uploaded in {:.0} s", t.elapsed().as_secs_f64());
        let d = tests::emulator::deployment_on(clients.clone(), bucket).await;
        // The demo account's custom indicator the data requests read.
        let accounts = d.state.auth.store();
        let mut demo = accounts.get(api::server::DEMO_EMAIL).await.unwrap().unwrap();
        demo.custom_indicators.push(platform::accounts::CustomIndicator {
            url: "CUSTOM_TECH_SPREAD".into(),
            name: "Technology Optix minus S&P 500 Optix (10-day average)".into(),
            indicator_1_url: "XLK_OPTIX".into(),
            indicator_2_url: "SPX_OPTIX".into(),
            calculate: "difference".into(),
            timeframe: "Daily".into(),
            ma: "10".into(),
            upper_extreme_value: 15.0,
            lower_extreme_value: -15.0,
            create_date: chrono::NaiveDate::from_ymd_opt(2026, 1, 6).unwrap().and_hms_opt(12, 0, 0).unwrap(),
        });
        accounts.put(demo).await.unwrap();
        let meter = Meter::start(&tests::emulator::endpoint()).await;
        let mut env = tests::emulator::function_env(&d.names);
        for (k, v) in env.iter_mut() {
            match *k {
                "AWS_ENDPOINT_URL" => *v = meter.endpoint.clone(),
                // As the template deploys them.
                "RUST_LOG" => *v = "info".into(),
                _ => {}
            }
        }
        let auth = format!(
            "Basic {}",
            base64::Engine::encode(
                &base64::engine::general_purpose::STANDARD,
                format!("{}:{}", api::server::DEMO_EMAIL, api::server::DEMO_PASSWORD)
            )
        );
        let b = Bench {
            prices,
            meter,
            env,
            clients,
            queue_url: d.names.queue_url.clone(),
            auth,
        };
        let p = &b.prices;

        // Tasks.
        let mut backtest = b.function("backtest").await;
        let mut analytics = b.function("analytics").await;
        let mut reader = b.function("backtest").await.0;
        let grid: Vec<String> = (1..=BATCH).map(|k| format!("//{}", 5 * k)).collect();
        let batch_body = json!({"name": "cost", "strategy": strategy(), "grid": {"risk_control": grid}});
        let tasks = vec![
            task_kind(&b, "backtest", &mut backtest, &mut reader, ("/backtest/start_backtest", strategy()),
                |id| format!("/backtest/status/{id}"), |id| format!("/backtest/status/{id}")).await,
            task_kind(&b, "pattern scan", &mut analytics, &mut reader, ("/cpm/scan/start", pattern()),
                |id| format!("/cpm/status/{id}"), |id| format!("/cpm/status/{id}")).await,
            task_kind(&b, "pattern backtest", &mut analytics, &mut reader, ("/cpm/backtest/start", pattern()),
                |id| format!("/cpm/status/{id}"), |id| format!("/cpm/status/{id}")).await,
            task_kind(&b, "scanner backtest", &mut analytics, &mut reader, ("/smart-scanner-backtest/start", scanner_trial()),
                |id| format!("/smart-scanner-backtest/status/{id}"), |id| format!("/smart-scanner-backtest/status/{id}")).await,
            task_kind(&b, "batch backtest", &mut backtest, &mut reader, ("/backtest/batch", batch_body),
                |id| format!("/backtest/batch/{id}"), |id| format!("/backtest/batch/{id}/results")).await,
        ];
        drop((backtest, analytics, reader));

        // The nightly scanner, on the sample's 300 stocks.
        let (mut nightly, nmem) = b.function("scanner-nightly").await;
        let mut night = Work::default();
        b.invoke(&mut nightly, nmem, json!({}), &mut night, false).await;
        drop(nightly);
        let spec_scale = sample::SPEC_STOCKS as f64 / sample::DEFAULT_STOCKS as f64;

        // Every documented request.
        let id = |kind: &str| tasks.iter().find(|t| t.kind == kind).unwrap().id.clone();
        let ids = Ids {
            backtest: id("backtest"),
            batch: id("batch backtest"),
            cpm: id("pattern backtest"),
            scanner: id("scanner backtest"),
        };
        let ops = operations(&ids);
        let (reqs, flushes) = requests(&b, &ops).await;

        println!("cost model: measured on the emulator with the release binaries; prices {} {} (infra/prices.json)", p.region, p.as_of);
        println!("\n### Inputs per unit of work (warm instance)\n");
        println!("{INPUTS_HEAD}");
        for t in &tasks {
            inputs_row(&format!("{} task", t.kind), &format!("{} (worker)", t.worker_memory), &t.warm);
        }
        inputs_row("nightly scanner run (300 stocks)", &nmem.to_string(), &night);
        let mut by_service: BTreeMap<&str, (Work, Work, usize)> = BTreeMap::new();
        for r in &reqs {
            let e = by_service.entry(r.function).or_default();
            e.0.add(&r.warm);
            e.1.add(&r.cold);
            e.2 += 1;
        }
        for (f, (w, _, n)) in &by_service {
            inputs_row(&format!("{f} request (mean of {n} operations)"), &template_memory_mb(f).to_string(), &w.scaled(1.0 / *n as f64));
        }
        for (f, w) in &flushes {
            inputs_row(&format!("{f}: the usage write of a request 2 s after the last"), "", w);
        }
        println!("\n### What a new instance adds (its start and first reads)\n");
        println!("{INPUTS_HEAD}");
        for t in &tasks {
            inputs_row(&format!("{} task, first on a new worker", t.kind), &t.worker_memory.to_string(), &t.cold_extra);
        }
        for (f, (w, c, _)) in &by_service {
            inputs_row(&format!("{f}: every operation once on a new instance"), &template_memory_mb(f).to_string(), &c.less(w));
        }

        println!("\n### What it costs (a new instance for one in {:.0} requests or tasks)\n", 1.0 / COLD_SHARE);
        println!("| work | {} | total |", PARTS.join(" | "));
        println!("|{}", "---|".repeat(PARTS.len() + 2));
        let mut headline = Vec::new();
        for t in &tasks {
            let w = expected(&t.warm, &t.cold_extra);
            let (n, label) = if t.kind == "batch backtest" {
                (1000.0 / BATCH as f64, format!("1,000 strategies in batches of {BATCH}"))
            } else {
                (1000.0, format!("1,000 {} tasks", t.kind))
            };
            headline.push((label.clone(), cost_row(&label, n, &w, p)));
        }
        let label = format!("one nightly scanner run, {} stocks (measured on {}, scaled)", sample::SPEC_STOCKS, sample::DEFAULT_STOCKS);
        headline.push((label.clone(), cost_row(&label, spec_scale, &night, p)));
        for (f, (w, c, n)) in &by_service {
            let mean = w.scaled(1.0 / *n as f64);
            let cold = c.less(w).scaled(1.0 / *n as f64);
            let mut each = mean.clone();
            each.add(&flushes[f]);
            let label = format!("1,000,000 {f} requests (every operation alike)");
            headline.push((label.clone(), cost_row(&label, 1e6, &expected(&each, &cold), p)));
        }

        println!("\n### Per operation (warm; µ$ per request)\n");
        println!("| operation | function | wall ms | billed ms | RRU | WRU | S3 GETs | out KB | µ$ per request | first on a new instance, µ$ |");
        println!("|---|---|---|---|---|---|---|---|---|---|");
        for r in &reqs {
            println!(
                "| {} | {} | {:.1} | {:.0} | {:.2} | {:.2} | {:.1} | {} | {:.3} | {:.3} |",
                r.key,
                r.function,
                r.warm.ms,
                r.warm.billed_ms,
                r.warm.aws.dynamo_read_units,
                r.warm.aws.dynamo_write_units,
                r.warm.aws.s3_gets as f64,
                kb(r.warm.out_bytes),
                Cost::of(&r.warm, p).total() * 1e6,
                Cost::of(&r.cold, p).total() * 1e6,
            );
        }

        // The plans at their limits.
        // What a minute of task compute (as the account is counted for it)
        // costs, all in, for each kind; the plans are held to the dearest.
        let per_minute: Vec<(&str, f64)> = tasks
            .iter()
            .map(|t| (t.kind, Cost::of(&expected(&t.warm, &t.cold_extra), p).total() / t.metered_ms.max(1.0) * 60_000.0))
            .collect();
        let worker_minute = per_minute.iter().map(|(_, c)| *c).fold(0.0, f64::max);
        // The bound the plans' budgets assume (tests::plan_costs) holds for
        // every kind measured.
        {
            use tests::plan_costs::counted_minute_at_most;
            let bound = counted_minute_at_most(template_memory_mb("worker"), p.lambda_arm64_per_gb_second);
            for t in &tasks {
                let cost = Cost::of(&expected(&t.warm, &t.cold_extra), p).total();
                assert!(
                    cost / t.metered_ms.max(1.0) * 60_000.0 <= bound,
                    "{}: a counted minute costs more than tests::plan_costs's bound",
                    t.kind
                );
            }
            println!("A counted minute costs at most {} by tests::plan_costs's bound; every kind measured is within it.\n", usd(bound));
        }
        println!("\n### Plans at their limits\n");
        for (kind, c) in &per_minute {
            let t = tasks.iter().find(|t| t.kind == *kind).unwrap();
            println!(
                "- {kind}: {:.0} ms of task compute counted per task ({:.0} ms billed by Lambda); a counted minute costs {} all in",
                t.metered_ms, t.worker.billed_ms, usd(*c)
            );
        }
        println!();
        println!("| plan | task compute per month | its cost at most | requests per minute, per service | a month at that rate on all its services |");
        println!("|---|---|---|---|---|");
        // A request's cost on each service: the mean operation, with its usage write.
        let per_request: BTreeMap<&str, f64> = by_service
            .iter()
            .map(|(f, (w, _, n))| {
                let mut each = w.scaled(1.0 / *n as f64);
                each.add(&flushes[f]);
                (*f, Cost::of(&each, p).total())
            })
            .collect();
        for plan in platform::accounts::PLANS.iter().filter(|p| !p.services.is_empty()) {
            let l = platform::quota::default_limits(plan.code);
            let services: f64 = plan
                .services
                .iter()
                .map(|s| per_request[match s {
                    platform::accounts::Service::Backtest => "backtest",
                    platform::accounts::Service::Analytics => "analytics",
                    platform::accounts::Service::Data => "data",
                }])
                .sum();
            println!(
                "| `{}` | {} min | {} | {} | {} |",
                plan.code,
                l.monthly_compute_minutes,
                usd(l.monthly_compute_minutes as f64 * worker_minute),
                l.requests_per_minute,
                usd(l.requests_per_minute as f64 * 60.0 * 24.0 * 30.0 * services),
            );
        }
        println!("\n### Headline\n");
        for (label, total) in headline {
            println!("- {label}: **{}**", usd(total));
        }
        let calls: BTreeMap<String, u64> = reqs.iter().fold(BTreeMap::new(), |mut m, r| {
            for (k, n) in &r.cold.aws.calls {
                *m.entry(k.clone()).or_default() += n;
            }
            m
        });
        eprintln!("AWS calls of the cold request pass: {calls:?}");
    });
}
