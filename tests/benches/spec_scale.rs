//! Spec-scale benchmark: `cargo bench -p tests --bench spec_scale`.
//!
//! Writes the spec-scale sample set once (22,000 indicators of which 6,284
//! sentiment, 1,500 stocks, option chains on 4,200 underlyings, 1990-2026)
//! into `$MARKETLAB_SPEC_DIR` (default `~/.cache/marketlab/spec-scale`),
//! starts the embedded server on it in a child process (this binary again),
//! and times every operation of the three API documents over HTTP on
//! 127.0.0.1: p50 and p99, then the server's peak resident memory. The
//! table it prints is the one in docs/sample-data.md#spec-scale.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::LocalDir;
use sample::{SampleConfig, generate};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tests::operations::{Ids, Op, operations, pattern, post, scanner_trial, strategy};

const ROLE: &str = "MARKETLAB_BENCH_ROLE";
/// Requests per operation at most, and the time each may take at most.
const REQUESTS: usize = 200;
const BUDGET: Duration = Duration::from_secs(2);
/// The targets, p50.
const LIST_TARGET_MS: f64 = 10.0;
const READ_TARGET_MS: f64 = 20.0;

fn spec_dir() -> PathBuf {
    std::env::var_os("MARKETLAB_SPEC_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME"))
                .join(".cache/marketlab/spec-scale")
        })
}

fn du(path: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(path).into_iter().flatten().flatten() {
        let m = e.metadata().unwrap();
        total += if m.is_dir() { du(&e.path()) } else { m.len() };
    }
    total
}

/// The server half: the embedded server on the spec-scale set, its address
/// on stdout, until stdin closes.
async fn serve(dir: PathBuf) {
    let state = tempfile::tempdir().unwrap();
    let config = marketlab::server::ServerConfig {
        test_market_dir: dir.clone(),
        market_dir: dir,
        database: state.path().join("db.sqlite"),
        addr: "127.0.0.1:0".parse().unwrap(),
        workers: 2,
        sample: SampleConfig::default().spec_scale(),
        demo_accounts: true,
        shutdown_grace: Duration::from_secs(5),
        data_legacy_json: false,
        limits: Default::default(),
        connections: Default::default(),
        scan: services::analytics::scanner::nightly::Schedule {
            at_start: true,
            daily_at: None,
            follow: false,
        },
        inbox: None,
        data_check: platform::marketdata::generation::DEFAULT_CHECK,
        stale_after: marketlab::updates::STALE_AFTER,
        inbox_max_bytes: sample::import::inbox::MAX_BYTES,
        metering: true,
        clock: std::sync::Arc::new(platform::clock::SystemClock),
        webhooks: Default::default(),
    };
    // Metering on, as deployed; the plan's request limit out of the way
    // (tests/benches/metering.rs measures what metering costs).
    let quotas = platform::quota::SqliteQuotaStore::new(
        platform::sqlite::Database::open(&config.database).unwrap(),
    );
    marketlab::operator::plans(
        &quotas,
        Some(marketlab::operator::PlansCommand::Set {
            code: "pro".into(),
            requests_per_minute: Some(1_000_000),
            concurrent_tasks: None,
            monthly_compute_minutes: None,
            max_batch: None,
        }),
        &mut std::io::sink(),
    )
    .await
    .unwrap();
    let embedded = marketlab::server::start(&config, api::jobs::registry)
        .await
        .expect("server starts");
    let listener = tokio::net::TcpListener::bind(config.addr).await.unwrap();
    println!("listening http://{}", listener.local_addr().unwrap());
    let stop = async {
        let _ = tokio::task::spawn_blocking(|| {
            let mut line = String::new();
            let _ = std::io::stdin().read_line(&mut line);
        })
        .await;
    };
    embedded.serve(listener, stop).await.unwrap();
}

struct Server {
    child: Child,
    base: String,
}

impl Server {
    /// Peak resident memory so far, from the kernel's accounting.
    fn peak_rss_mb(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kb: f64 = status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap();
        kb / 1024.0
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

async fn send(client: &reqwest::Client, base: &str, op: &Op) -> (u16, usize) {
    let url = format!("{base}{}", op.path);
    let mut req = match op.method {
        "GET" => client.get(&url),
        _ => client.post(&url).json(op.body.as_ref().unwrap()),
    }
    .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD));
    if op.idempotent {
        req = req.header(
            "idempotency-key",
            format!("spec-scale:{}", op.key.replace(' ', ":")),
        );
    }
    let r = req.send().await.unwrap();
    let status = r.status().as_u16();
    (status, r.bytes().await.unwrap().len())
}

async fn finished(client: &reqwest::Client, base: &str, status_path: String) {
    let t0 = Instant::now();
    loop {
        let r: Value = client
            .get(format!("{base}{status_path}"))
            .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if r["status"] == "SUCCESS" {
            return;
        }
        assert!(r["status"] != "FAILED", "{status_path}: {r}");
        assert!(
            t0.elapsed() < Duration::from_secs(600),
            "{status_path}: {r}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn submit(client: &reqwest::Client, base: &str, op: Op) -> String {
    let r: Value = client
        .post(format!("{base}{}", op.path))
        .json(op.body.as_ref().unwrap())
        .header(
            "idempotency-key",
            format!("spec-scale:{}", op.key.replace(' ', ":")),
        )
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    r["task_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{}: {r}", op.key))
        .to_string()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let dir = spec_dir();
    let rt = tokio::runtime::Runtime::new().unwrap();
    if std::env::var(ROLE).as_deref() == Ok("server") {
        rt.block_on(serve(dir));
        return;
    }
    // The data set, once.
    if !dir.join(platform::marketdata::layout::SYMBOLS).exists() {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let t = Instant::now();
        let summary = generate(&SampleConfig::default().spec_scale(), &LocalDir::new(&dir))
            .expect("spec-scale set");
        println!(
            "spec-scale set written in {:.1} s: {} symbols, {} indicators, {} objects, {:.2} GB",
            t.elapsed().as_secs_f64(),
            summary.symbols,
            summary.indicators,
            summary.objects,
            summary.bytes as f64 / 1e9
        );
    }
    println!(
        "spec-scale set at {}: {:.2} GB on disk",
        dir.display(),
        du(&dir) as f64 / 1e9
    );

    // The server, in a process of its own so its memory is its own.
    let started = Instant::now();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .env(ROLE, "server")
        .env("MARKETLAB_SPEC_DIR", &dir)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("server said {line}"))
        .to_string();
    let server = Server { child, base };
    rt.block_on(async {
        let client = reqwest::Client::new();
        let health = client.get(format!("{}/health", server.base)).send().await.unwrap();
        assert_eq!(health.status(), 200);
        println!(
            "server start to first answer: {:.0} ms (the nightly scan at start runs behind it)",
            ms(started.elapsed())
        );
        let base = server.base.clone();
        let ids = Ids {
            backtest: submit(&client, &base, post("POST /backtest/start_backtest", "/backtest/start_backtest", strategy(), true)).await,
            batch: submit(&client, &base, post("POST /backtest/batch", "/backtest/batch", json!({"name": "spec-scale bench", "strategy": strategy(), "grid": {"risk_control": ["//5", "//10"]}}), true)).await,
            cpm: submit(&client, &base, post("POST /cpm/backtest/start", "/cpm/backtest/start", pattern(), true)).await,
            scanner: submit(&client, &base, post("POST /smart-scanner-backtest/start", "/smart-scanner-backtest/start", scanner_trial(), true)).await,
        };
        finished(&client, &base, format!("/backtest/status/{}", ids.backtest)).await;
        finished(&client, &base, format!("/backtest/batch/{}", ids.batch)).await;
        finished(&client, &base, format!("/cpm/status/{}", ids.cpm)).await;
        finished(&client, &base, format!("/smart-scanner-backtest/status/{}", ids.scanner)).await;
        let _ = submit(&client, &base, post("POST /cpm/scan/start", "/cpm/scan/start", pattern(), true)).await;

        println!(
            "peak resident memory after the tasks ran: {:.0} MB",
            server.peak_rss_mb()
        );
        let ops = operations(&ids);
        // Every documented operation is measured.
        let doc: Value = serde_json::from_str(api::routes::document()).unwrap();
        let documented: BTreeSet<String> = doc["paths"]
            .as_object()
            .unwrap()
            .iter()
            .flat_map(|(p, o)| o.as_object().unwrap().keys().map(move |m| format!("{} {p}", m.to_uppercase())))
            .collect();
        let measured: BTreeSet<String> = ops.iter().map(|o| o.key.to_string()).collect();
        let missing: Vec<_> = documented.difference(&measured).collect();
        assert!(missing.is_empty(), "operations without a benchmark request: {missing:?}");

        println!("\n| operation | answer | first ms | p50 ms | p99 ms | requests | server peak MB |");
        println!("|---|---|---|---|---|---|---|");
        let mut over = Vec::new();
        for op in &ops {
            let first = Instant::now();
            let (status, size) = send(&client, &base, op).await;
            let first = ms(first.elapsed());
            assert!((200..300).contains(&status), "{}: {status}", op.key);
            let mut times = Vec::with_capacity(REQUESTS);
            let t0 = Instant::now();
            while times.len() < REQUESTS && (times.len() < 10 || t0.elapsed() < BUDGET) {
                let t = Instant::now();
                let (status, _) = send(&client, &base, op).await;
                times.push(t.elapsed());
                assert!((200..300).contains(&status), "{}: {status}", op.key);
            }
            times.sort();
            let p50 = ms(times[times.len() / 2]);
            let p99 = ms(times[(times.len() * 99 / 100).min(times.len() - 1)]);
            println!(
                "| `{}` | {} KB | {first:.1} | {p50:.2} | {p99:.2} | {} | {:.0} |",
                op.key,
                (size + 512) / 1024,
                times.len(),
                server.peak_rss_mb()
            );
            let target = if op.key == "GET /backtest/indicators/list" {
                LIST_TARGET_MS
            } else {
                READ_TARGET_MS
            };
            let read = op.method == "GET" || !op.idempotent;
            if read && p50 > target {
                over.push(format!("{} p50 {p50:.1} ms (target {target} ms)", op.key));
            }
        }
        println!(
            "\n{} operations; server peak resident memory {:.0} MB (target under 2048 MB)",
            ops.len(),
            server.peak_rss_mb()
        );
        if over.is_empty() {
            println!("every read under its p50 target");
        } else {
            println!("over the p50 target:");
            for o in over {
                println!("  {o}");
            }
        }
    });
}
