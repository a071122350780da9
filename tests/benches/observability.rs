//! What the metrics cost: the same requests and tasks against the embedded
//! server in this process, in alternating rounds with metrics off (every
//! metric call a no-op, as with no recorder) and on (the Prometheus
//! recorder of `--metrics-addr`, scraped once a second). Alternating keeps
//! warm-up and drift out of the difference. Trace ids and log spans are on
//! in both; the metric calls of one request and one task are also timed
//! alone. Usage metering is off in both (the reads would pass any plan's
//! rate limit). `cargo bench -p tests --bench observability` (`-- --write-docs`
//! puts the figures into docs/operations.md).

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tests::server::{Options, TestServer, optix_strategy};

const ROUNDS: usize = 30;
const REQUESTS: usize = 500;
const TASKS: usize = 60;

fn p50(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// The Prometheus recorder behind a switch: off, every metric is a no-op
/// handle, as when no recorder is installed.
struct Switch {
    on: Arc<AtomicBool>,
    inner: metrics_exporter_prometheus::PrometheusRecorder,
}

impl Recorder for Switch {
    fn describe_counter(&self, k: KeyName, u: Option<Unit>, d: SharedString) {
        self.inner.describe_counter(k, u, d)
    }
    fn describe_gauge(&self, k: KeyName, u: Option<Unit>, d: SharedString) {
        self.inner.describe_gauge(k, u, d)
    }
    fn describe_histogram(&self, k: KeyName, u: Option<Unit>, d: SharedString) {
        self.inner.describe_histogram(k, u, d)
    }
    fn register_counter(&self, key: &Key, m: &Metadata<'_>) -> Counter {
        if self.on.load(Ordering::Relaxed) {
            self.inner.register_counter(key, m)
        } else {
            Counter::noop()
        }
    }
    fn register_gauge(&self, key: &Key, m: &Metadata<'_>) -> Gauge {
        if self.on.load(Ordering::Relaxed) {
            self.inner.register_gauge(key, m)
        } else {
            Gauge::noop()
        }
    }
    fn register_histogram(&self, key: &Key, m: &Metadata<'_>) -> Histogram {
        if self.on.load(Ordering::Relaxed) {
            self.inner.register_histogram(key, m)
        } else {
            Histogram::noop()
        }
    }
}

/// Status reads of a finished task: each one's µs.
async fn reads(client: &reqwest::Client, url: &str, n: usize) -> Vec<f64> {
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t0 = Instant::now();
        let r = client
            .get(url)
            .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        r.bytes().await.unwrap();
        times.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    times
}

/// Backtests submitted and long-polled to SUCCESS: each one's µs, and the last id.
async fn tasks(client: &reqwest::Client, s: &TestServer, n: usize) -> (Vec<f64>, String) {
    let body = serde_json::to_vec(&optix_strategy()).unwrap();
    let mut times = Vec::with_capacity(n);
    let mut last = String::new();
    for _ in 0..n {
        let (id, took) = tests::bench::backtest_to_success(client, &s.url(""), &body).await;
        times.push(took.as_secs_f64() * 1e6);
        last = id;
    }
    (times, last)
}

fn main() {
    let write = std::env::args().any(|a| a == "--write-docs");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let db = tempfile::tempdir().unwrap();
        let mut opts = Options::new(db.path().join("db.sqlite"));
        opts.scan.at_start = false;
        // Tens of thousands of reads a minute: past any plan's rate limit.
        opts.metering = false;
        let on = Arc::new(AtomicBool::new(false));
        let inner = marketlab::metrics::recorder().unwrap();
        let handle = inner.handle();
        metrics::set_global_recorder(Switch {
            on: on.clone(),
            inner,
        })
        .unwrap();
        platform::telemetry::describe();
        let s = TestServer::start(opts).await;
        let client = reqwest::Client::new();
        let (_, id) = tasks(&client, &s, 50).await;
        let read_url = s.url(&format!("/backtest/status/{id}"));
        reads(&client, &read_url, 500).await;
        // Scraped once a second, as Prometheus would.
        let scraper = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                handle.run_upkeep();
                std::hint::black_box(handle.render());
            }
        });
        // Rounds alternate off and on (the order flips every pair), so
        // warm-up and drift fall on both alike.
        let (mut read, mut task) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
        for pair in 0..ROUNDS {
            for step in 0..2 {
                let i = (step + pair) % 2;
                on.store(i == 1, Ordering::Relaxed);
                read[i].extend(reads(&client, &read_url, REQUESTS).await);
                task[i].extend(tasks(&client, &s, TASKS).await.0);
            }
        }
        scraper.abort();
        let [read_off, read_on] = read.map(p50);
        let [task_off, task_on] = task.map(p50);
        let (requests, tasks) = (ROUNDS * REQUESTS, ROUNDS * TASKS);

        // The calls themselves, as one request and one task make them
        // (metrics on): what they cost on a core, without the noise above.
        on.store(true, Ordering::Relaxed);
        let n = 200_000;
        let t0 = Instant::now();
        for _ in 0..n {
            platform::telemetry::request("/backtest/status/{task_id}", "GET", 200, Duration::from_micros(250));
        }
        let per_request_ns = t0.elapsed().as_nanos() as f64 / n as f64;
        let t0 = Instant::now();
        for _ in 0..n {
            use platform::telemetry as m;
            m::request("/backtest/start_backtest", "POST", 202, Duration::from_micros(300));
            m::request("/backtest/status/{task_id}", "GET", 200, Duration::from_micros(900));
            m::worker_busy(1.0);
            for _ in 0..4 {
                m::cache_read("bars", true);
            }
            m::task_timing("strategy_backtest", Duration::from_micros(60), Duration::from_micros(700), Some(1));
            m::task("strategy_backtest", m::Outcome::Success);
            m::worker_busy(-1.0);
        }
        let per_task_ns = t0.elapsed().as_nanos() as f64 / n as f64;

        let lines = [
            format!(
                "the metric calls of one request: **{per_request_ns:.0} ns**; of one backtest task (its submit and status requests, four cache reads, the task's counters and histograms): **{per_task_ns:.0} ns**, {:.3}% of the task p50 below",
                per_task_ns / (task_off * 1e3) * 100.0
            ),
            format!(
                "authenticated status read (`GET /backtest/status/{{id}}`, a finished task) over HTTP, {requests} each way: p50 **{read_off:.0} µs** off, **{read_on:.0} µs** on ({:+.2}%)",
                (read_on / read_off - 1.0) * 100.0
            ),
            format!(
                "backtest (Optix strategy, SPX) submit to SUCCESS over HTTP, {tasks} each way: p50 **{:.3} ms** off, **{:.3} ms** on (**{:+.2}%**; limit 2%). Runs with no change between them differ by up to 2% here: the call cost above is the precise figure",
                task_off / 1e3,
                task_on / 1e3,
                (task_on / task_off - 1.0) * 100.0
            ),
        ];
        println!("metrics on vs off, embedded server (release build, {ROUNDS} pairs of alternating rounds)");
        for l in &lines {
            println!("  {l}");
        }
        if write {
            tests::bench::write_docs_block("operations.md", "observability", &lines);
        }
        s.stop().await;
    });
}
