//! Spec-scale benchmark: `cargo bench -p tests --bench spec_scale`.
//!
//! Writes the spec-scale sample set once (22,000 indicators of which 6,284
//! sentiment, 1,500 stocks, option chains on 4,200 underlyings, 1990-2026)
//! into `$MARKETLAB_SPEC_DIR` (default `~/.cache/marketlab/spec-scale`),
//! starts the embedded server on it in a child process (this binary again),
//! and times every operation of the three API documents over HTTP on
//! 127.0.0.1: p50 and p99, then the server's peak resident memory. The
//! table it prints is the one in docs/sample-data.md#spec-scale.

use api::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::LocalDir;
use sample::{SampleConfig, generate};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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
    let config = api::server::ServerConfig {
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
        },
        inbox: None,
        metering: true,
    };
    // Metering on, as deployed; the plan's request limit out of the way
    // (tests/benches/metering.rs measures what metering costs).
    let quotas = platform::quota::SqliteQuotaStore::new(
        platform::sqlite::Database::open(&config.database).unwrap(),
    );
    api::operator::plans(
        &quotas,
        Some(api::operator::PlansCommand::Set {
            code: "pro".into(),
            requests_per_minute: Some(1_000_000),
            concurrent_tasks: None,
            monthly_compute_minutes: None,
        }),
        &mut std::io::sink(),
    )
    .await
    .unwrap();
    let embedded = api::server::start(&config, api::jobs::registry)
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

/// One timed operation: its documented key, the request, its label.
struct Op {
    key: &'static str,
    method: &'static str,
    path: String,
    body: Option<Value>,
    /// Submits repeat one Idempotency-Key: the first creates the task, the
    /// rest are replays (validation and the key's lookup, nothing queued).
    idempotent: bool,
}

fn get(key: &'static str, path: impl Into<String>) -> Op {
    Op {
        key,
        method: "GET",
        path: path.into(),
        body: None,
        idempotent: false,
    }
}

fn post(key: &'static str, path: &str, body: Value, idempotent: bool) -> Op {
    Op {
        key,
        method: "POST",
        path: path.into(),
        body: Some(body),
        idempotent,
    }
}

fn strategy() -> Value {
    tests::server::optix_strategy()
}

fn pattern() -> Value {
    json!({"symbol": "SPX", "system_pattern": "double_bottom", "corr_per": 85, "time_in_market": 21})
}

fn scanner_trial() -> Value {
    json!({"name": "spec-scale bench", "start_date": "2026-08-03", "end_date": "2026-11-20",
        "find_type": "stock/etf", "signals": ["All"], "total_capital": 100000,
        "long_short_ratio": "0.7/0.3", "commission": 0.05, "daily_limit": 3})
}

fn correlation() -> Value {
    json!({"benchmark": "SPX", "stock_comparison": ["IVV", "TLT"], "start_date": "2020-01-02", "end_date": "2024-12-31"})
}

/// Every operation with a request that answers 2xx; `ids` are finished tasks.
fn operations(ids: &Ids) -> Vec<Op> {
    let q = "symbol=SPX&system_pattern=double_bottom&corr_per=85&time_in_market=21";
    let mut ops = vec![
        get("GET /health", "/health"),
        get("GET /auth-info", "/auth-info"),
        get("GET /assets/{file}", "/assets/lightweight-charts.js"),
        get("GET /usage", "/usage"),
        // Backtest service.
        get("GET /backtest/indicators/list", "/backtest/indicators/list"),
        get(
            "GET /backtest/indicators/metadata",
            "/backtest/indicators/metadata?indicator=SPX_OPTIX",
        ),
        get("GET /backtest/tutorial", "/backtest/tutorial"),
        get("GET /backtest/tasks", "/backtest/tasks?limit=20"),
        get(
            "GET /backtest/status/{task_id}",
            format!("/backtest/status/{}", ids.backtest),
        ),
        get(
            "GET /backtest/report/{task_id}",
            format!("/backtest/report/{}", ids.backtest),
        ),
        get("GET /backtest/batches", "/backtest/batches"),
        get(
            "GET /backtest/batch/{batch_id}",
            format!("/backtest/batch/{}", ids.batch),
        ),
        get(
            "GET /backtest/batch/{batch_id}/results",
            format!("/backtest/batch/{}/results", ids.batch),
        ),
        get(
            "GET /backtest/batch/{batch_id}/report",
            format!("/backtest/batch/{}/report", ids.batch),
        ),
        post(
            "POST /backtest/validate",
            "/backtest/validate",
            strategy(),
            false,
        ),
        post(
            "POST /backtest/start_backtest",
            "/backtest/start_backtest",
            strategy(),
            true,
        ),
        post(
            "POST /backtest/batch",
            "/backtest/batch",
            json!({"name": "spec-scale bench", "strategy": strategy(), "grid": {"risk_control": ["//5", "//10"]}}),
            true,
        ),
        // Analytics service.
        get("GET /seasonality", "/seasonality?ticker=SPX"),
        get(
            "GET /seasonality/get-predefined-holidays",
            "/seasonality/get-predefined-holidays",
        ),
        get(
            "GET /seasonality/one-dollar-curve",
            "/seasonality/one-dollar-curve?ticker=SPX",
        ),
        get(
            "GET /seasonality/performance-around-holiday",
            "/seasonality/performance-around-holiday?ticker=SPX",
        ),
        get(
            "GET /seasonality/performance-around-specific-days",
            "/seasonality/performance-around-specific-days?ticker=SPX",
        ),
        get(
            "GET /seasonality/performance-by-day-of-month",
            "/seasonality/performance-by-day-of-month?ticker=SPX",
        ),
        get(
            "GET /seasonality/performance-by-day-of-single-month",
            "/seasonality/performance-by-day-of-single-month?ticker=SPX",
        ),
        get(
            "GET /seasonality/performance-by-day-of-year",
            "/seasonality/performance-by-day-of-year?ticker=SPX",
        ),
        get(
            "GET /seasonality/performance-by-month",
            "/seasonality/performance-by-month?ticker=SPX",
        ),
        get(
            "GET /seasonality/performance-by-week",
            "/seasonality/performance-by-week?ticker=SPX",
        ),
        post("POST /symbol_corr", "/symbol_corr", correlation(), false),
        post("POST /symbol_beta", "/symbol_beta", correlation(), false),
        post(
            "POST /asset_corr",
            "/asset_corr",
            json!({"start_date": "2020-01-02", "end_date": "2024-12-31"}),
            false,
        ),
        post(
            "POST /pattern_corr",
            "/pattern_corr",
            json!({"referenceSymbol": "SPX", "referenceStartDate": "2024-01-02", "referenceEndDate": "2024-06-28", "comparisonSymbol": "NDX", "comparisonStartDate": "2023-01-03", "comparisonEndDate": "2023-06-30"}),
            false,
        ),
        get(
            "GET /cpm/get-predefined-patterns",
            "/cpm/get-predefined-patterns",
        ),
        get("GET /cpm/scan", format!("/cpm/scan?{q}")),
        post("POST /cpm/scan", "/cpm/scan", pattern(), false),
        get(
            "GET /cpm/scan_with_backtest",
            format!("/cpm/scan_with_backtest?{q}"),
        ),
        post(
            "POST /cpm/scan_with_backtest",
            "/cpm/scan_with_backtest",
            pattern(),
            false,
        ),
        post("POST /cpm/scan/start", "/cpm/scan/start", pattern(), true),
        post(
            "POST /cpm/backtest/start",
            "/cpm/backtest/start",
            pattern(),
            true,
        ),
        get(
            "GET /cpm/status/{task_id}",
            format!("/cpm/status/{}", ids.cpm),
        ),
        get(
            "GET /cpm/report/{task_id}",
            format!("/cpm/report/{}", ids.cpm),
        ),
        get("GET /cpm/tasks", "/cpm/tasks"),
        post(
            "POST /smart-scanner-backtest/start",
            "/smart-scanner-backtest/start",
            scanner_trial(),
            true,
        ),
        get(
            "GET /smart-scanner-backtest/status/{task_id}",
            format!("/smart-scanner-backtest/status/{}", ids.scanner),
        ),
        get(
            "GET /smart-scanner-backtest/report/{task_id}",
            format!("/smart-scanner-backtest/report/{}", ids.scanner),
        ),
        get(
            "GET /smart-scanner-backtest/tasks",
            "/smart-scanner-backtest/tasks",
        ),
        get(
            "GET /smart-stock-scanner/get-predefined-signals",
            "/smart-stock-scanner/get-predefined-signals",
        ),
        get(
            "GET /smart-stock-scanner/latest-day-all",
            "/smart-stock-scanner/latest-day-all",
        ),
        get(
            "GET /smart-stock-scanner/single/{ticker}",
            "/smart-stock-scanner/single/AAPL",
        ),
        get(
            "GET /smart-option-scanner/options",
            "/smart-option-scanner/options",
        ),
        get("GET /screens", "/screens?key=etf-sector-ma"),
        get(
            "GET /screens/get-predefined-screens",
            "/screens/get-predefined-screens",
        ),
        get("GET /reports", "/reports"),
        get(
            "GET /reports/get-predefined-report-types",
            "/reports/get-predefined-report-types",
        ),
        get(
            "GET /company_detail/market_pred",
            "/company_detail/market_pred?symbol=AAPL",
        ),
        get("GET /company_detail/get_pred", "/company_detail/get_pred"),
        get("GET /views/seasonality", "/views/seasonality?ticker=SPX"),
        get(
            "GET /views/correlation",
            "/views/correlation?benchmark=SPX&stock_comparison=IVV,TLT&start_date=2020-01-02&end_date=2024-12-31",
        ),
        get("GET /views/pattern", format!("/views/pattern?{q}")),
        // Indicator data service.
        get("GET /ws/getAllSymbols", "/ws/getAllSymbols"),
        get(
            "GET /ws/getAllSymbolswithIndexes",
            "/ws/getAllSymbolswithIndexes",
        ),
        get(
            "GET /ws/getAllUserSelectedSymbols",
            "/ws/getAllUserSelectedSymbols",
        ),
        get(
            "GET /ws/getAllUserSelectedSymbolsWithIndexes",
            "/ws/getAllUserSelectedSymbolsWithIndexes",
        ),
        get("GET /ws/getModelData", "/ws/getModelData"),
        get(
            "GET /ws/getModelSymbolswithIndexes",
            "/ws/getModelSymbolswithIndexes",
        ),
        get(
            "GET /ws/getGroupSymbols/{group}",
            "/ws/getGroupSymbols/Core",
        ),
        get(
            "GET /ws/getSymbolData/{symbol}",
            "/ws/getSymbolData/SPX_OPTIX",
        ),
        get(
            "GET /ws/getSymbolSentimentData/{symbol}",
            "/ws/getSymbolSentimentData/SPX_OPTIX",
        ),
        get(
            "GET /ws/getSymbolDataLimitDays/{symbol}",
            "/ws/getSymbolDataLimitDays/SPX_OPTIX?days=90",
        ),
        get(
            "GET /ws/getSymbolDataSentimentLimitDays/{symbol}",
            "/ws/getSymbolDataSentimentLimitDays/SPX_OPTIX?days=90",
        ),
        get(
            "GET /ws/getSymbolLimitDate/{symbol}",
            "/ws/getSymbolLimitDate/SPX_OPTIX?date=20261120",
        ),
        get("GET /ws/getTodayData", "/ws/getTodayData"),
        get("GET /ws/getTodayDataIndexes", "/ws/getTodayDataIndexes"),
        get(
            "GET /ws/getAllDataForDate",
            "/ws/getAllDataForDate?date=20261120",
        ),
        get(
            "GET /ws/getAllSymbolDataLimitDays",
            "/ws/getAllSymbolDataLimitDays?days=5",
        ),
        get("GET /ws/getIntradaySymbols", "/ws/getIntradaySymbols"),
        get(
            "GET /ws/getSymbolIntradayHistory/{symbol}",
            "/ws/getSymbolIntradayHistory/SPX_OPTIX",
        ),
        get(
            "GET /ws/getSymbolIntradayLimitDays/{symbol}",
            "/ws/getSymbolIntradayLimitDays/SPX_OPTIX?days=5",
        ),
        get("GET /ws/getTodayIntradayData", "/ws/getTodayIntradayData"),
        get("GET /ws/getUserIndicators", "/ws/getUserIndicators"),
        get(
            "GET /ws/getUserIndicatorData",
            "/ws/getUserIndicatorData?url=CUSTOM_TECH_SPREAD",
        ),
        get("GET /ws/usage", "/ws/usage"),
    ];
    for what in [
        "get_analysis",
        "get_balance",
        "get_cash",
        "get_earning",
        "get_holder",
        "get_income",
        "get_news",
        "get_profile",
        "get_sec",
    ] {
        let key: &'static str = Box::leak(format!("GET /company_detail/{what}").into_boxed_str());
        ops.push(get(key, format!("/company_detail/{what}?symbol=AAPL")));
    }
    ops
}

/// Finished tasks the status and report operations read.
struct Ids {
    backtest: String,
    batch: String,
    cpm: String,
    scanner: String,
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
