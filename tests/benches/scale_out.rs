//! Scale-out: one batch's chunks spread over more workers, measured:
//! `infra/build-functions`, then `cargo bench -p tests --bench scale_out`
//! (`-- 10000` for a smaller batch, which leaves the docs alone).
//!
//! fan_out's 100 x 1,000 SMA grid on SPX (100,000 strategies, statistics
//! on, 256 chunks) runs on moto (127.0.0.1) through the release binaries:
//!
//! - on 1, 2 and 4 `poller` processes;
//! - on the worker function with 1, 2 and 4 instances at once: each
//!   instance is its own process under a Runtime API and takes the queue's
//!   messages in batches of up to 10 as the event source mapping hands them
//!   (`tests::emulator::receive_batch`), so N instances run N batches at
//!   once, each one message after another as the function does;
//! - once more on 1 and 4 instances with every AWS call through the
//!   metering proxy, for the price (not timed: the proxy reads each item
//!   written twice more).
//!
//! Each run submits through the backtest function, follows the batch with
//! its status long-poll to SUCCESS (the wall time), then reads every row
//! back through the backtest function a page at a time: indices 0..n each
//! exactly once, none with an error. The chunk tasks' own start and end
//! times split the wall time into the chunks' span and the fixed part
//! around it, and show how many chunks ran at once.
//!
//! At 100,000 strategies the figures go into docs/deploy.md ("Scale-out",
//! between `<!-- scale-out -->` and `<!-- /scale-out -->`) with the
//! template's concurrency settings and the million-strategy batch timed and
//! priced from them.

// The cost bench's model and runs; this bench uses part of each.
#[allow(dead_code)]
#[path = "cost/model.rs"]
mod model;
#[allow(dead_code)]
#[path = "cost/runs.rs"]
mod runs;

use aws_lambda_events::event::sqs::SqsBatchResponse;
use chrono::NaiveDateTime;
use model::{Cost, PARTS, Work, cost_row, prices, usd};
use runs::Bench;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tests::aws_meter::Meter;
use tests::runtime_api::{
    Function, Killed, answer_json, http_event, release_dir, template_memory_mb,
};

/// Fast periods of the grid; the slow ones make up the batch's size.
const FAST: usize = 100;
/// Rows a page of `GET /backtest/batch/{id}/rows` (its largest).
const PAGE: usize = 10_000;
/// The batch the docs' figures are for.
const DOCS_SIZE: usize = 100_000;
/// Workers (pollers, function instances) of the runs.
const WORKERS: [usize; 3] = [1, 2, 4];
/// What the million's estimate multiplies the strategies by.
const MILLION: f64 = 10.0;

/// A grid of `FAST` x `n / FAST` SMA strategies (fan_out's at 100,000).
fn grid(n: usize) -> Value {
    let side = |op: &str| {
        json!({"rule_type": "SingleCondition", "condition": {
            "signal": {"name": "Simple Moving Average", "params": {"period": "10"}},
            "rule": {"comparison_type": "MA", "type_name": op, "period": "50"}}})
    };
    let periods = |from: usize, k: usize| -> Vec<String> {
        (from..from + k).map(|p| p.to_string()).collect()
    };
    json!({"name": "scale-out",
        "strategy": {"symbol": "SPX", "start_date": "2006-11-27", "risk_control": "//",
            "entry": side("CrossAbove"), "exit": side("CrossBelow")},
        "grid": {
            "entry.condition.signal.params.period,exit.condition.signal.params.period": periods(2, FAST),
            "entry.condition.rule.period,exit.condition.rule.period": periods(2 + FAST, n / FAST)}})
}

/// What ran the chunks.
#[derive(Clone, Copy, PartialEq)]
enum Workers {
    Pollers(usize),
    Instances(usize),
}

impl Workers {
    fn n(self) -> usize {
        match self {
            Workers::Pollers(n) | Workers::Instances(n) => n,
        }
    }

    fn label(self) -> String {
        match self {
            Workers::Pollers(1) => "1 poller".into(),
            Workers::Pollers(n) => format!("{n} pollers"),
            Workers::Instances(1) => "worker function, 1 instance".into(),
            Workers::Instances(n) => format!("worker function, {n} instances"),
        }
    }
}

/// One run's figures.
struct Run {
    workers: Workers,
    /// Submit sent to the status read that answered SUCCESS.
    wall_s: f64,
    /// The submit's own answer.
    submit_s: f64,
    /// From the submit's answer to the first chunk's start (the fan-out).
    to_first_s: f64,
    /// First chunk started to last chunk finished.
    span_s: f64,
    /// Last chunk finished to SUCCESS answered.
    tail_s: f64,
    /// The SUCCESS read's own wall and CPU time (it computes the statistics).
    read_s: f64,
    read_cpu_s: f64,
    chunks: usize,
    /// Mean of each chunk's claim to its result stored.
    chunk_ms: f64,
    /// Most chunks running at the same moment.
    at_once: usize,
    /// Chunks claimed more than once.
    twice: usize,
    /// Messages each instance took (function runs).
    taken: Vec<usize>,
    /// CPU time of the emulator from the submit to SUCCESS.
    emulator_s: f64,
    /// What the run cost, when metered: submit, instance starts, the
    /// workers, one status read, the pages.
    work: Option<Metered>,
}

impl Run {
    fn fixed_s(&self) -> f64 {
        self.wall_s - self.span_s
    }
}

#[derive(Default)]
struct Metered {
    submit: Work,
    starts: Work,
    run: Work,
    status: Work,
    pages: Work,
}

impl Metered {
    fn total(&self) -> Work {
        let mut w = self.submit.clone();
        for part in [&self.starts, &self.run, &self.status, &self.pages] {
            w.add(part);
        }
        w
    }

    /// The million by fan_out's model: the same chunks, messages, items
    /// and objects; the workers' compute ten times; ten times the pages.
    fn million(&self) -> Work {
        let mut w = self.submit.clone();
        w.add(&self.starts);
        let mut run = self.run.clone();
        run.ms *= MILLION;
        run.cpu_ms *= MILLION;
        run.billed_ms *= MILLION;
        run.gb_seconds *= MILLION;
        w.add(&run);
        w.add(&self.status);
        w.add(&self.pages.scaled(MILLION));
        w
    }
}

/// What every run shares.
struct Shared {
    clients: aws_adapters::Clients,
    /// The market data each run's bucket holds.
    market: tempfile::TempDir,
    /// The meter and the prices.
    bench: Bench,
    auth: String,
    logs: tempfile::TempDir,
    n: usize,
}

/// A run's own deployment (a new bucket, tables and queues: no run meets
/// another's items, objects or messages, nor a store grown by the runs
/// before it, which the emulator would read more slowly) and the backtest
/// functions on it, warm.
struct Stage {
    d: tests::emulator::Deployment,
    /// The workers' and `front`'s environment: through the meter when
    /// metered, else straight to the emulator as `watch`'s.
    env: Vec<(&'static str, String)>,
    /// Submits, reads the finished status and the rows.
    front: Function,
    /// Reads the status once the chunks have ended (unmetered).
    watch: Function,
}

/// A new deployment with the market data, the demo account's plan opened
/// to the batch as an operator would (its concurrent tasks, 8 on `pro`,
/// stay: more than the runs' workers).
async fn stage(sh: &Shared, metered: bool) -> Stage {
    let bucket = tests::emulator::bucket_of(&sh.clients, sh.market.path()).await;
    let d = tests::emulator::deployment_on(sh.clients.clone(), bucket).await;
    let plan = d
        .state
        .auth
        .store()
        .get(marketlab::server::DEMO_EMAIL)
        .await
        .unwrap()
        .unwrap()
        .plan;
    let limits = platform::quota::PlanLimits {
        max_batch: Some(sh.n),
        monthly_compute_minutes: 1_000_000,
        ..platform::quota::default_limits(&plan)
    };
    assert!(
        limits.concurrent_tasks as usize >= *WORKERS.iter().max().unwrap(),
        "the plan's concurrent tasks hold back the workers"
    );
    d.state
        .metering
        .as_ref()
        .expect("metering")
        .quota_store()
        .set_plan_limits(&plan, limits)
        .await
        .unwrap();
    let mut direct = tests::emulator::function_env(&d.names);
    for (k, v) in direct.iter_mut() {
        if *k == "RUST_LOG" {
            *v = "info".into();
        }
    }
    let env = if metered {
        runs::metered_env(&d.names, &sh.bench.meter)
    } else {
        direct.clone()
    };
    let hmem = template_memory_mb("backtest");
    let backtest = release_dir().join("backtest");
    let mut front = Function::new(&backtest, "marketlab-backtest", hmem, &env).await;
    let mut watch = Function::new(&backtest, "marketlab-backtest", hmem, &direct).await;
    // Warm, the caller's account read once.
    let usage = http_event("GET", "/usage", None, Some(&sh.auth));
    for f in [&mut front, &mut watch] {
        invoke(None, f, hmem, usage.clone(), &mut Work::default(), true).await;
    }
    sh.bench.meter.take();
    Stage {
        d,
        env,
        front,
        watch,
    }
}

/// Invokes `f`: through the meter into `work` when `meter` is given, else
/// straight, failing on an error answer or a 5xx.
async fn invoke(
    meter: Option<&Bench>,
    f: &mut Function,
    memory: u32,
    event: Value,
    work: &mut Work,
    http: bool,
) -> Value {
    if let Some(b) = meter {
        return b.invoke(f, memory, event, work, http).await;
    }
    let inv = f.invoke(event).await;
    let status = inv.answer["statusCode"].as_u64().unwrap_or(200);
    assert!(
        inv.answer.get("error").is_none() && status < 500,
        "{}\n{}",
        inv.answer,
        f.log_tail()
    );
    inv.answer
}

/// One function instance taking batches as the event source mapping hands
/// them until `stop`; answers the messages it took.
async fn serve(
    d: &tests::emulator::Deployment,
    meter: Option<&Bench>,
    f: &mut Function,
    work: &mut Work,
    stop: &AtomicBool,
) -> usize {
    let memory = template_memory_mb("worker");
    let mut taken = 0;
    while !stop.load(Ordering::Relaxed) {
        let Some((event, handles)) =
            tests::emulator::receive_batch(&d.clients, &d.names.queue_url).await
        else {
            continue;
        };
        taken += handles.len();
        let answer = invoke(
            meter,
            f,
            memory,
            serde_json::to_value(&event).unwrap(),
            work,
            false,
        )
        .await;
        let answer: SqsBatchResponse = serde_json::from_value(answer).unwrap();
        tests::emulator::settle_batch(&d.clients, &d.names.queue_url, &handles, &answer).await;
    }
    taken
}

/// A read of the bench's own, `None` (and said) when it failed.
fn read<T>(r: Result<T, platform::PortError>) -> Option<T> {
    r.map_err(|e| eprintln!("a read of the batch failed, read again: {e}"))
        .ok()
}

/// How often the bench checks the batch's count of ended chunks.
const CHECK: Duration = Duration::from_millis(50);

/// Follows the batch by its count of ended chunks (one small read each
/// [`CHECK`]), then reads its status once through `watch`; answers when
/// that read said SUCCESS, and the read (the first of the finished batch:
/// it computes the statistics), having stopped the workers. Not the status
/// long-poll: it rereads the batch's chunk statuses at every chunk's end,
/// which on the emulator would take its time from the workers.
async fn follow(
    tasks: &dyn platform::tasks::TaskStore,
    watch: &mut Function,
    auth: &str,
    id: &str,
    stop: &AtomicBool,
) -> (Instant, tests::runtime_api::Invocation) {
    use platform::tasks::TaskStatus;
    let started = Instant::now();
    let uuid: uuid::Uuid = id.parse().unwrap();
    let mut chunks = None;
    loop {
        assert!(
            started.elapsed() < Duration::from_secs(1_800),
            "the batch did not end"
        );
        // An emulator that fails a read (moto answers a rare 500 under
        // concurrent writes) is read again at the next check.
        if chunks.is_none()
            && let Some(record) = read(tasks.get(uuid).await).map(|r| r.expect("the batch"))
        {
            match record.status {
                TaskStatus::Success => {
                    chunks = record
                        .result
                        .as_ref()
                        .and_then(|r| r["chunks"].as_array())
                        .map(Vec::len)
                }
                TaskStatus::Failed => panic!("the batch failed: {:?}", record.error),
                _ => {}
            }
        }
        // The fan-out's end and each chunk's are counted to the batch.
        if let Some(c) = chunks
            && read(tasks.ends(uuid).await).is_some_and(|e| e > c as u64)
        {
            break;
        }
        tokio::time::sleep(CHECK).await;
    }
    let read = watch
        .invoke(http_event(
            "GET",
            &format!("/backtest/batch/{id}"),
            None,
            Some(auth),
        ))
        .await;
    let at = Instant::now();
    stop.store(true, Ordering::Relaxed);
    let st = answer_json(&read.answer);
    assert_eq!(st["status"], "SUCCESS", "{st}\n{}", watch.log_tail());
    (at, read)
}

/// `n` pollers started, each having logged that it polls the queue, their
/// logs in `logs`.
async fn start_pollers(s: &Stage, logs: &std::path::Path, n: usize, run: usize) -> Vec<Killed> {
    let poller = release_dir().join("poller");
    assert!(
        poller.exists(),
        "{} is missing: run infra/build-functions first",
        poller.display()
    );
    let mut started = Vec::new();
    for k in 0..n {
        let (child, log) = tests::pollers::start(&poller, &s.d.names, &[], logs, run * 10 + k);
        let t = Instant::now();
        while tests::pollers::logged(&log, "poller started").is_empty() {
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "poller {k} did not start: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        started.push(child);
    }
    started
}

/// SIGTERM to each poller (it finishes its job first), and its exit.
async fn stop_pollers(pollers: Vec<Killed>) {
    for mut p in pollers {
        // SAFETY: a signal to our own child, which has not been reaped.
        unsafe { libc::kill(p.0.id() as libc::pid_t, libc::SIGTERM) };
        let t = Instant::now();
        while p.0.try_wait().unwrap().is_none() {
            assert!(
                t.elapsed() < Duration::from_secs(60),
                "a poller did not stop"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// CPU seconds the emulator's process has used (user and system), found by
/// its command line and port; 0 when it is not this machine's (an
/// `AWS_ENDPOINT_URL` of the caller's).
fn emulator_cpu_s() -> f64 {
    static PID: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let pid = PID.get_or_init(|| {
        let port = tests::emulator::endpoint().rsplit(':').next()?.to_string();
        std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            let args: Vec<String> = cmd
                .split(|b| *b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            (args.iter().any(|a| a.ends_with("moto_server.py")) && args.contains(&port))
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
    });
    let Some(pid) = pid else { return 0.0 };
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    // After the command's name: state is field 3, utime and stime 14 and 15.
    let rest: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |r| r.1)
        .split_whitespace()
        .collect();
    let ticks: f64 = rest[11..13]
        .iter()
        .filter_map(|t| t.parse::<f64>().ok())
        .sum();
    // SAFETY: sysconf reads a constant of the system.
    ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

fn seconds(from: NaiveDateTime, to: NaiveDateTime) -> f64 {
    (to - from).num_microseconds().unwrap_or(0) as f64 / 1e6
}

/// Reads every row through `front`, `PAGE` at a time: each index of
/// 0..n exactly once, none with an error.
async fn rows_once(
    front: &mut Function,
    auth: &str,
    n: usize,
    meter: Option<&Bench>,
    id: &str,
    pages: &mut Work,
) {
    let memory = template_memory_mb("backtest");
    let mut seen = vec![0u8; n];
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(c) => format!("/backtest/batch/{id}/rows?limit={PAGE}&cursor={c}"),
            None => format!("/backtest/batch/{id}/rows?limit={PAGE}"),
        };
        let page = invoke(
            meter,
            front,
            memory,
            http_event("GET", &path, None, Some(auth)),
            pages,
            true,
        )
        .await;
        let page = answer_json(&page);
        for row in page["rows"].as_array().expect("a page of rows") {
            let index = row["index"].as_u64().expect("a row's index") as usize;
            assert!(index < n, "row index {index} out of 0..{n}");
            assert!(row["error"].is_null(), "row {index} did not run: {row}");
            seen[index] += 1;
        }
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    let missing = seen.iter().filter(|c| **c == 0).count();
    let twice = seen.iter().filter(|c| **c > 1).count();
    assert!(
        missing == 0 && twice == 0,
        "{missing} rows missing, {twice} more than once"
    );
}

/// One batch, submit to SUCCESS, on `workers`; metered when `metered`.
async fn run(sh: &Shared, workers: Workers, metered: bool, k: usize) -> Run {
    let mut s = stage(sh, metered).await;
    let bench = &sh.bench;
    let meter = metered.then_some(bench);
    let mut m = Metered::default();
    // The workers, started before the submit: a fleet's processes are up,
    // each reads the bars at its first chunk.
    let mut pollers = Vec::new();
    let mut instances = Vec::new();
    let wmem = template_memory_mb("worker");
    match workers {
        Workers::Pollers(n) => pollers = start_pollers(&s, sh.logs.path(), n, k).await,
        Workers::Instances(n) => {
            for _ in 0..n {
                let mut f = Function::new(
                    &release_dir().join("worker"),
                    "marketlab-worker",
                    wmem,
                    &s.env,
                )
                .await;
                let mut start = Work::default();
                invoke(
                    meter,
                    &mut f,
                    wmem,
                    json!({"Records": []}),
                    &mut start,
                    false,
                )
                .await;
                // Lambda bills a start within the first invocation: no
                // invocation, no batch of its own.
                start.invocations = 0.0;
                start.sqs_batches = 0.0;
                m.starts.add(&start);
                instances.push((f, Work::default()));
            }
        }
    }
    m.starts.aws.add(&bench.meter.take());

    // Submit.
    let hmem = template_memory_mb("backtest");
    let emulator0 = emulator_cpu_s();
    let t0 = Instant::now();
    let utc0 = chrono::Utc::now().naive_utc();
    let answer = invoke(
        meter,
        &mut s.front,
        hmem,
        http_event("POST", "/backtest/batch", Some(&grid(sh.n)), Some(&sh.auth)),
        &mut m.submit,
        true,
    )
    .await;
    let submit_s = t0.elapsed().as_secs_f64();
    let id = answer_json(&answer)["task_id"]
        .as_str()
        .unwrap_or_else(|| panic!("submit: {answer}"))
        .to_string();

    // The chunks, followed to SUCCESS.
    let stop = AtomicBool::new(false);
    let ((ended, read), taken) = {
        let Stage { d, watch, .. } = &mut s;
        let d: &tests::emulator::Deployment = d;
        let serving = futures::future::join_all(
            instances
                .iter_mut()
                .map(|(f, w)| serve(d, meter, f, w, &stop)),
        );
        tokio::join!(
            follow(d.state.tasks.as_ref(), watch, &sh.auth, &id, &stop),
            serving
        )
    };
    let wall_s = (ended - t0).as_secs_f64();
    let emulator_s = emulator_cpu_s() - emulator0;
    stop_pollers(std::mem::take(&mut pollers)).await;
    for (_, w) in &instances {
        m.run.add(w);
    }
    // What the workers called after their last answer was taken.
    m.run.aws.add(&bench.meter.take());
    drop(instances);

    // The chunks' own times.
    let record =
        s.d.state
            .tasks
            .get(id.parse().unwrap())
            .await
            .unwrap()
            .unwrap();
    let chunk_ids: Vec<uuid::Uuid> = record
        .result
        .as_ref()
        .and_then(|r| r["chunks"].as_array())
        .expect("the batch's chunks")
        .iter()
        .map(|c| c.as_str().unwrap().parse().unwrap())
        .collect();
    let tasks = s.d.state.tasks.clone();
    let chunks: Vec<platform::tasks::Task> = {
        use futures::StreamExt;
        futures::stream::iter(chunk_ids.iter().map(|c| {
            let tasks = tasks.clone();
            async move { tasks.get(*c).await.unwrap().expect("a chunk task") }
        }))
        .buffered(8)
        .collect()
        .await
    };
    let times: Vec<(NaiveDateTime, NaiveDateTime)> = chunks
        .iter()
        .map(|c| {
            (
                c.started_at.expect("started"),
                c.finished_at.expect("finished"),
            )
        })
        .collect();
    let first = times.iter().map(|t| t.0).min().unwrap();
    let last = times.iter().map(|t| t.1).max().unwrap();
    let span_s = seconds(first, last);
    let chunk_ms =
        times.iter().map(|(a, b)| seconds(*a, *b)).sum::<f64>() * 1e3 / times.len() as f64;
    let mut edges: Vec<(NaiveDateTime, i32)> = times
        .iter()
        .flat_map(|(a, b)| [(*a, 1), (*b, -1)])
        .collect();
    // An end before a start at the same instant: touching is not overlapping.
    edges.sort();
    let (mut now, mut at_once) = (0i32, 0i32);
    for (_, e) in edges {
        now += e;
        at_once = at_once.max(now);
    }
    let twice = chunks.iter().filter(|c| c.attempts > 1).count();
    let to_first_s = seconds(utc0, first) - submit_s;
    let tail_s = wall_s - seconds(utc0, last);

    // One read of the finished status, then every row once.
    let st = invoke(
        meter,
        &mut s.front,
        hmem,
        http_event(
            "GET",
            &format!("/backtest/batch/{id}"),
            None,
            Some(&sh.auth),
        ),
        &mut m.status,
        true,
    )
    .await;
    let st = answer_json(&st);
    assert_eq!(st["status"], "SUCCESS", "{st}");
    assert_eq!(st["done"], sh.n, "{st}");
    assert!(st["statistics"]["deflated_sharpe"].is_object(), "{st}");
    rows_once(&mut s.front, &sh.auth, sh.n, meter, &id, &mut m.pages).await;

    let r = Run {
        workers,
        wall_s,
        submit_s,
        to_first_s,
        span_s,
        tail_s,
        read_s: read.ms / 1e3,
        read_cpu_s: read.cpu_ms / 1e3,
        chunks: chunks.len(),
        chunk_ms,
        at_once: at_once as usize,
        twice,
        taken,
        emulator_s,
        work: metered.then_some(m),
    };
    eprintln!(
        "{}{}: {:.2} s submit to SUCCESS (submit {:.2}, to the first chunk {:.2}, chunks {:.2}, tail {:.2}, its SUCCESS read {:.2} with {:.2} of CPU); {} chunks, {:.0} ms each, at most {} at once, {} claimed twice; messages per instance {:?}; emulator CPU {:.1} s",
        r.workers.label(),
        if metered { " (metered)" } else { "" },
        r.wall_s,
        r.submit_s,
        r.to_first_s,
        r.span_s,
        r.tail_s,
        r.read_s,
        r.read_cpu_s,
        r.chunks,
        r.chunk_ms,
        r.at_once,
        r.twice,
        r.taken,
        r.emulator_s
    );
    r
}

/// The worker function's concurrency settings in infra/template.yaml (a
/// `!Ref` read as its parameter's default).
struct Deployed {
    reserved: Option<u32>,
    maximum: Option<u32>,
    batch_size: u32,
    /// The parameter both come from, when they do.
    parameter: Option<String>,
}

fn deployed() -> Deployed {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../infra/template.yaml"),
    )
    .expect("infra/template.yaml");
    let indent = |l: &str| l.len() - l.trim_start().len();
    // Each parameter's default.
    let mut defaults = std::collections::HashMap::new();
    let mut section = "";
    let mut name = String::new();
    for line in text.lines() {
        let t = line.trim();
        if indent(line) == 0 && t.ends_with(':') {
            section = if t == "Parameters:" { "p" } else { "" };
        } else if section == "p" && indent(line) == 2 && t.ends_with(':') {
            name = t.trim_end_matches(':').to_string();
        } else if section == "p"
            && indent(line) == 4
            && let Some(v) = t.strip_prefix("Default:")
        {
            defaults.insert(name.clone(), v.trim().to_string());
        }
    }
    // The worker function's resource.
    let mut block = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if indent(line) == 2 && line.trim().ends_with(':') {
            inside = line.trim() == "WorkerFunction:";
        } else if inside {
            block.push(line.trim());
        }
    }
    assert!(!block.is_empty(), "no WorkerFunction in the template");
    let mut parameter = None;
    let mut value = |key: &str| -> Option<u32> {
        let line = block
            .iter()
            .find(|l| !l.starts_with('#') && l.contains(key))?;
        let v = line.split(key).nth(1)?.trim_start_matches(':');
        let v = v.trim().trim_end_matches('}').trim();
        match v.strip_prefix("!Ref ") {
            Some(p) => {
                parameter = Some(p.to_string());
                defaults.get(p)?.parse().ok()
            }
            None => v.parse().ok(),
        }
    };
    Deployed {
        reserved: value("ReservedConcurrentExecutions"),
        maximum: value("MaximumConcurrency"),
        batch_size: value("BatchSize").expect("the Jobs event's BatchSize"),
        parameter,
    }
}

/// The `Timeout` infra/template.yaml gives `resource` (its own, else the
/// global one).
fn function_timeout_s(resource: &str) -> u32 {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../infra/template.yaml"),
    )
    .expect("infra/template.yaml");
    let indent = |l: &str| l.len() - l.trim_start().len();
    let (mut global, mut own, mut inside) = (None, None, "");
    for line in text.lines() {
        let t = line.trim();
        if indent(line) <= 2 && t.ends_with(':') {
            inside = if t == "Globals:" || t == format!("{resource}:") {
                if t == "Globals:" { "g" } else { "r" }
            } else if indent(line) == 0 || inside == "r" {
                ""
            } else {
                inside
            };
        } else if let Some(v) = t.strip_prefix("Timeout:") {
            match inside {
                "g" => global = v.trim().parse().ok(),
                "r" => own = own.or(v.trim().parse().ok()),
                _ => {}
            }
        }
    }
    own.or(global).expect("a Timeout")
}

/// A figures block's lines, put between `<!-- name -->` and `<!-- /name -->`
/// in `doc` (which must hold both markers).
fn write_block(doc: &str, name: &str, lines: &[String]) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(doc);
    let text = std::fs::read_to_string(&path).expect("doc readable");
    let (open, close) = (format!("<!-- {name} -->"), format!("<!-- /{name} -->"));
    let a = text.find(&open).expect("opening marker");
    let b = text.find(&close).expect("closing marker");
    let out = format!(
        "{}{open}\n\n{}\n\n{}",
        &text[..a],
        lines.join("\n"),
        &text[b..]
    );
    std::fs::write(&path, out).expect("doc written");
    println!("(written to {doc})");
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Thousands separated, as the docs print counts.
fn count(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (k, c) in s.chars().enumerate() {
        if k > 0 && (s.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn main() {
    let n: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(DOCS_SIZE);
    assert!(
        n >= FAST && n.is_multiple_of(FAST),
        "the batch is {FAST} x k strategies"
    );
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let load_before = load_average();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let clients = tests::emulator::clients().await;
        // SPX and the catalog; few stocks, so the upload is short.
        let market = tempfile::tempdir().unwrap();
        let config = sample::SampleConfig {
            stocks: 5,
            intraday_days: 0,
            ..Default::default()
        };
        sample::generate(&config, &platform::marketdata::LocalDir::new(market.path()))
            .expect("the sample set");
        let meter = Meter::start(&tests::emulator::endpoint()).await;
        let auth = tests::runtime_api::basic(
            marketlab::server::DEMO_EMAIL,
            marketlab::server::DEMO_PASSWORD,
        );
        let sh = Shared {
            bench: Bench {
                prices: prices(),
                meter,
                env: Vec::new(),
                clients: clients.clone(),
                queue_url: String::new(),
                auth: auth.clone(),
            },
            clients,
            market,
            auth,
            logs: tempfile::tempdir().unwrap(),
            n,
        };
        let timings = WORKERS
            .map(Workers::Pollers)
            .into_iter()
            .chain(WORKERS.map(Workers::Instances))
            .map(|w| (w, false));
        let pricings = [1, *WORKERS.last().unwrap()].map(|k| (Workers::Instances(k), true));
        let (mut timed, mut priced) = (Vec::new(), Vec::new());
        for (k, (w, metered)) in timings.chain(pricings).enumerate() {
            let r = run(&sh, w, metered, k).await;
            if metered {
                priced.push(r);
            } else {
                timed.push(r);
            }
        }
        let load_after = load_average();
        report(&sh, &timed, &priced, cores, (&load_before, &load_after));
    });
}

fn report(sh: &Shared, timed: &[Run], priced: &[Run], cores: usize, load: (&str, &str)) {
    let p = &sh.bench.prices;
    let n = sh.n;
    let find = |w: Workers| timed.iter().find(|r| r.workers == w).unwrap();
    let chunks = timed[0].chunks;
    let chunk = n.div_ceil(chunks);
    let mut out = Vec::new();
    out.push(format!(
        "Measured on {cores} cores (load average {} at the start, {} at the end), moto on 127.0.0.1, the release binaries: a {FAST} x {} SMA grid on SPX ({} strategies, statistics on) in {chunks} chunks of {}. Each run has tables and a queue of its own and starts its workers (new processes), then submits; the wall time runs from the submit to the batch's status answering SUCCESS (read once its count of ended chunks is complete: checked every {} ms). The chunks' span runs from the first chunk's claim to the last one's stored result (the chunk tasks' own times); the fixed part is the rest: the submit, the fan-out before the first chunk, the statistics read at the end.",
        load.0,
        load.1,
        count(n / FAST),
        count(n),
        count(chunk),
        CHECK.as_millis(),
    ));
    out.push(String::new());
    out.push("| workers | chunks at once (most) | submit to SUCCESS, s | chunks' span, s | fixed part, s | a chunk's run, ms (mean) | strategies/s in the span | per worker | speed-up | emulator CPU, s | rows | chunks claimed twice |".into());
    out.push("|---|---|---|---|---|---|---|---|---|---|---|---|".into());
    for r in timed {
        let one = match r.workers {
            Workers::Pollers(_) => find(Workers::Pollers(1)),
            Workers::Instances(_) => find(Workers::Instances(1)),
        };
        let rate = n as f64 / r.span_s;
        out.push(format!(
            "| {} | {} | {:.1} | {:.1} | {:.1} | {:.0} | {} | {} | {:.2}x | {:.1} | {} once each | {} |",
            r.workers.label(),
            r.at_once,
            r.wall_s,
            r.span_s,
            r.fixed_s(),
            r.chunk_ms,
            count(rate.round() as usize),
            count((rate / r.workers.n() as f64).round() as usize),
            one.wall_s / r.wall_s,
            r.emulator_s,
            count(n),
            r.twice,
        ));
    }
    out.push(String::new());
    let one = find(Workers::Instances(1));
    let speed = |k: fn(usize) -> Workers, m: usize| find(k(1)).wall_s / find(k(m)).wall_s;
    let t_run = one.chunk_ms / 1e3;
    let t_between = (one.span_s / one.chunks as f64 - t_run).max(0.0);
    let twice: usize = timed.iter().chain(priced).map(|r| r.twice).sum();
    out.push(format!(
        "- **Every row once, in every run**: the rows read back through the backtest function a page of {} at a time hold each index 0..{} exactly once, none with an error; {}. The chunks' own times show the workers running chunks side by side (the most at once in the table).",
        count(PAGE),
        count(n),
        if twice == 0 {
            "no chunk was claimed twice".to_string()
        } else {
            format!("{twice} chunk claims were repeated (the table says where)")
        },
    ));
    let share = |r: &Run| 100.0 * r.emulator_s / r.wall_s;
    let two = find(Workers::Instances(2));
    out.push(format!(
        "- **On this machine the emulator is the bottleneck.** It has {cores} cores, shared by the workers, the bench and the emulator, one Python process that answers every DynamoDB, S3 and SQS call and uses about one core's worth at most: it was busy {:.0}% of the wall time with one instance and {:.0}% with two. One instance runs {} strategies/s in the span: a chunk of {} in {:.0} ms (its claim to its stored result) and {:.0} ms between chunks (the next message's receive, the claim and slot, the delete: the emulator's answers). Two instances ran {:.2}x as fast as one, four {:.2}x; two pollers {:.2}x, four {:.2}x: more workers mostly wait on the emulator here, and more than {cores} could not run faster on {cores} cores anyway. So the runs show the chunks spread over the workers with every row once, not the wall time on AWS, where each instance has its own vCPU and DynamoDB, S3 and SQS answer them all; that is derived below from one worker's figures.",
        share(one),
        share(two),
        count((n as f64 / one.span_s).round() as usize),
        count(chunk),
        t_run * 1e3,
        t_between * 1e3,
        speed(Workers::Instances, 2),
        speed(Workers::Instances, 4),
        speed(Workers::Pollers, 2),
        speed(Workers::Pollers, 4),
    ));
    let dep = deployed();
    let messages = chunks.div_ceil(dep.batch_size as usize);
    let pro = platform::quota::default_limits("pro").concurrent_tasks as usize;
    let setting = |v: Option<u32>| v.map_or_else(|| "not set".to_string(), |v| v.to_string());
    out.push(format!(
        "- **Deployed concurrency** (infra/template.yaml): the worker function's `ReservedConcurrentExecutions` {}, the `Jobs` event's `ScalingConfig` `MaximumConcurrency` {}{}; `BatchSize` {}. An instance runs its batch's messages one after another, so one batch's {chunks} chunk messages keep at most {messages} instances busy. Each chunk also holds one of its tenant's running-task slots while it runs (`concurrent_tasks`, {pro} on `pro`; a chunk without one goes back to the queue for 2 s): a tenant's batch runs at most that many chunks at once unless an operator raises the plan's (`operator plans set pro --concurrent-tasks {messages}`).",
        setting(dep.reserved),
        setting(dep.maximum),
        dep.parameter
            .as_ref()
            .map(|p| format!(" (both the `{p}` parameter's default)"))
            .unwrap_or_default(),
        dep.batch_size,
    ));

    // The million: the same chunks, ten times the strategies in each.
    let per_chunk = MILLION * t_run + t_between;
    // The fixed part as measured on one instance: the same chunk tasks and
    // messages either way.
    let fixed = one.fixed_s();
    let cap = dep.maximum.into_iter().chain(dep.reserved).min();
    let capped = |c: usize| cap.map_or(c, |m| c.min(m as usize)).min(messages).max(1);
    let at = [
        ("one instance".to_string(), 1),
        (
            format!("a `pro` tenant: its {pro} running-task slots"),
            capped(pro),
        ),
        (
            format!(
                "a plan with {messages} or more concurrent tasks: the {messages} instances one batch keeps busy{}",
                cap.map(|c| format!(" (the template allows {c})"))
                    .unwrap_or_default()
            ),
            capped(messages),
        ),
    ];
    out.push(format!(
        "- **A million strategies** make the same {chunks} chunks with ten times the strategies in each (`batch::chunk_size`). A chunk: its run ({:.0} ms) ten times, plus the {:.0} ms between chunks, {:.2} s. The fixed part as measured on one instance, {:.1} s: the submit ({:.2} s), the fan-out to the first chunk ({:.2} s: {chunks} chunk tasks and messages either way) and the tail from the last chunk to SUCCESS ({:.2} s, nearly all the first read of the finished batch, which computes the statistics). At a concurrency C the wall time is the fixed part plus ceil({chunks} / C) chunks one after another, taking a worker instance ({} MB: {:.2} vCPUs) to run a chunk as fast as a core here and AWS to answer as fast as the emulator did for one worker. Lambda's SQS event source starts five batches at once and adds up to 300 instances a minute, so the instances below are busy within seconds:",
        t_run * 1e3,
        t_between * 1e3,
        per_chunk,
        fixed,
        one.submit_s,
        one.to_first_s,
        one.tail_s,
        count(template_memory_mb("worker") as usize),
        template_memory_mb("worker") as f64 / p.lambda_mb_per_vcpu,
    ));
    out.push(String::new());
    out.push("| concurrency | instances at once | chunks one after another | submit to SUCCESS, estimated |".into());
    out.push("|---|---|---|---|".into());
    for (label, c) in &at {
        let rounds = chunks.div_ceil(*c);
        out.push(format!(
            "| {label} | {c} | {rounds} | {:.0} s |",
            fixed + rounds as f64 * per_chunk
        ));
    }
    out.push(String::new());
    let hvcpu = template_memory_mb("backtest") as f64 / p.lambda_mb_per_vcpu;
    let waiting = (one.read_s - one.read_cpu_s).max(0.0);
    let grown = one.read_cpu_s / hvcpu.min(1.0) + MILLION * waiting;
    let timeout = function_timeout_s("BacktestFunction");
    out.push(format!(
        "- **The first read of the finished batch grows with it.** Here it took {:.2} s, {:.2} s of it CPU. Its CSCV is held to a budget of splits (a million strategies score 256 of 12,870: [batches.md](batches.md)), but it reads every chunk's returns: were that waiting part ({:.2} s here, on the emulator) ten times as long, and its CPU on the backtest function's {} MB ({:.2} vCPUs), the read would take about {:.0} s, {} the function's {timeout} s `Timeout` (API Gateway's is 29 s). A million-strategy batch's first status read on AWS is worth measuring before relying on these figures.",
        one.read_s,
        one.read_cpu_s,
        waiting,
        count(template_memory_mb("backtest") as usize),
        hvcpu,
        grown,
        if grown > timeout as f64 { "past" } else { "within" },
    ));
    out.push(String::new());

    // Priced from the metered runs.
    let metered = |k: usize| priced.iter().find(|r| r.workers == Workers::Instances(k));
    let (m1, mk) = (
        metered(1).and_then(|r| r.work.as_ref()).unwrap(),
        priced.last().unwrap(),
    );
    let k = mk.workers.n();
    let mk = mk.work.as_ref().unwrap();
    let mut starts = m1.starts.clone();
    starts.add(&mk.starts);
    let start = starts.scaled(1.0 / (1 + k) as f64);
    let busiest = capped(messages);
    let mut million = m1.million();
    million.add(&start.scaled(busiest.saturating_sub(1) as f64));
    let million = million.scaled(DOCS_SIZE as f64 / n as f64);
    out.push("Priced with the model of [A million-strategy batch](#a-million-strategy-batch) (`tests/benches/cost/model.rs`) from two more runs with every AWS call through the metering proxy (not timed: the proxy reads each item written again):".into());
    out.push(String::new());
    out.push(format!("| work | {} | total |", PARTS.join(" | ")));
    out.push(format!("|{}", "---|".repeat(PARTS.len() + 2)));
    let row = |label: &str, w: &Work| {
        let c = Cost::of(w, p);
        let total = c.total();
        let cells: Vec<String> = c
            .parts()
            .iter()
            .map(|x| format!("{} ({:.0}%)", usd(*x), 100.0 * x / total.max(1e-12)))
            .collect();
        format!("| {label} | {} | **{}** |", cells.join(" | "), usd(total))
    };
    let (c1, ck) = (Cost::of(&m1.total(), p), Cost::of(&mk.total(), p));
    out.push(row(
        &format!("{} strategies on 1 instance (measured)", count(n)),
        &m1.total(),
    ));
    out.push(row(
        &format!("{} strategies on {k} instances (measured)", count(n)),
        &mk.total(),
    ));
    out.push(row(
        &format!("1,000,000 strategies on {busiest} instances (estimated)"),
        &million,
    ));
    out.push(String::new());
    let lambda = |c: &Cost| c.lambda_compute + c.lambda_requests;
    out.push(format!(
        "- **More instances do not make it dearer on AWS.** The same chunks, messages, items and objects whatever the number of instances: all but Lambda came to {} on 1 instance and {} on {k}. Lambda's part was {} and {}: it bills each invocation's wall time, which here stretches as {k} instances share {cores} cores and the emulator; on AWS each has its own vCPU. So the million is priced from the 1-instance run (the worker's compute ten times, ten times the pages, as fan_out does) plus a start for each of the {busiest} instances ({:.1} µ$ each measured: process start and initialisation).",
        usd(c1.total() - lambda(&c1)),
        usd(ck.total() - lambda(&ck)),
        usd(lambda(&c1)),
        usd(lambda(&ck)),
        Cost::of(&start, p).total() * 1e6,
    ));
    if n != DOCS_SIZE {
        out.push(format!(
            "- Measured at {} strategies, not {}: the million's figures above are this batch's scaled, not the million's.",
            count(n),
            count(DOCS_SIZE),
        ));
    }

    println!();
    for l in &out {
        println!("{l}");
    }
    println!();
    // fan_out's breakdown, for the runs metered.
    println!("| work | {} | total |", PARTS.join(" | "));
    println!("|{}", "---|".repeat(PARTS.len() + 2));
    for r in priced {
        let m = r.work.as_ref().unwrap();
        for (part, w) in [
            ("submit", &m.submit),
            ("instance starts", &m.starts),
            ("worker", &m.run),
            ("status read", &m.status),
            ("pages", &m.pages),
        ] {
            cost_row(&format!("{}: {part}", r.workers.label()), 1.0, w, p);
        }
    }
    for r in priced {
        let calls = &r.work.as_ref().unwrap().run.aws.calls;
        eprintln!("AWS calls of the workers, {}: {calls:?}", r.workers.label());
    }
    if n == DOCS_SIZE {
        write_block("docs/deploy.md", "scale-out", &out);
    } else {
        println!(
            "(docs/deploy.md left alone: its figures are for {} strategies)",
            count(DOCS_SIZE)
        );
    }
}
