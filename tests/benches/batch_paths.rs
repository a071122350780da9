//! The 10,000-pair SMA grid of `benches/batch.rs` on the paths a user
//! takes, in one run: `cargo bench -p tests --bench batch_paths`.
//!
//! - the command line: `marketlab batch run FILE` in its own process (this
//!   binary again, release), from its start to its exit;
//! - HTTP: the embedded server (2 workers, loopback) driven by the Python
//!   package as a notebook drives it (`tests/reference/batch_client.py`:
//!   `batch()`, `wait()` with its long-poll, `results` as Arrow into pandas,
//!   `statistics`), the package's own time included;
//! - vectorbt 1.2 doing the whole job on the same bars (the reference
//!   script of `benches/batch.rs`).
//!
//! On GOOG (backtesting.py's 2,148 bars, imported) and the last 20 years of
//! SPX. The command line and HTTP run each batch with the overfitting
//! statistics (the default) and without (`"statistics": false`),
//! alternating, three times each: the statistics' cost is a difference of
//! medians within one run. vectorbt computes no such statistics, so it is
//! compared with the runs without them.

use engine::Bars;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use tests::server::{Options, TestServer};

/// Set in the child process that runs the command line.
const CHILD: &str = "MARKETLAB_BENCH_BATCH_CLI";
const ROUNDS: usize = 3;

fn fast_windows() -> Vec<usize> {
    (2..=101).collect()
}

fn slow_windows() -> Vec<usize> {
    (0..100).map(|k| 10 + 2 * k).collect()
}

/// The child: `marketlab --data-dir DIR batch run FILE`.
fn cli_child(args: &str) {
    use clap::Parser;
    let (dir, file) = args.split_once('\n').expect("DIR and FILE");
    let cli =
        marketlab::cli::Cli::parse_from(["marketlab", "--data-dir", dir, "batch", "run", file]);
    marketlab::runtime::build()
        .unwrap()
        .block_on(marketlab::cli::run(cli))
        .unwrap();
}

/// `marketlab batch run FILE` in its own process: its wall time.
fn cli(dir: &Path, file: &Path) -> f64 {
    let t0 = Instant::now();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .env(CHILD, format!("{}\n{}", dir.display(), file.display()))
        .output()
        .unwrap();
    let took = t0.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Seconds from the batch's last chunk's stored outcome to the moment the
/// package's `wait()` returned (one clock: this machine's).
async fn after_last_chunk(s: &TestServer, answer: &serde_json::Value) -> f64 {
    let id = answer["task_id"].as_str().unwrap().parse().unwrap();
    let record = s.state.tasks.get(id).await.unwrap().unwrap();
    let mut last = chrono::NaiveDateTime::MIN;
    for chunk in record.result.unwrap()["chunks"].as_array().unwrap() {
        let chunk = chunk.as_str().unwrap().parse().unwrap();
        let chunk = s.state.tasks.get(chunk).await.unwrap().unwrap();
        last = last.max(chunk.finished_at.unwrap());
    }
    let stored = last.and_utc().timestamp_micros() as f64 / 1e6;
    answer["finished_unix"].as_f64().unwrap() - stored
}

/// One symbol's grid on the three paths.
async fn compare(
    label: &str,
    s: &TestServer,
    data: &Path,
    bars: &Bars,
    start: usize,
    vectorbt: Option<f64>,
) {
    let side = |op: &str| {
        json!({"rule_type": "SingleCondition", "condition": {
            "signal": {"name": "Simple Moving Average", "params": {"period": 10}},
            "rule": {"comparison_type": "MA", "type_name": op, "period": 50}}})
    };
    let strategy = json!({"symbol": label.split([' ', ',']).next().unwrap(),
        "start_date": bars.date(start).to_string(), "risk_control": "//",
        "entry": side("CrossAbove"), "exit": side("CrossBelow")});
    let grid = json!({
        "entry.condition.signal.params.period,exit.condition.signal.params.period": fast_windows(),
        "entry.condition.rule.period,exit.condition.rule.period": slow_windows(),
    });
    let n = fast_windows().len() * slow_windows().len();
    // [with statistics, without] per path.
    let (mut by_cli, mut by_http): ([Vec<f64>; 2], [Vec<f64>; 2]) = Default::default();
    let mut waited = [Vec::new(), Vec::new()];
    let mut late = Vec::new();
    for _ in 0..ROUNDS {
        for (k, statistics) in [true, false].into_iter().enumerate() {
            let file = data.join(format!("grid-{k}.json"));
            let request = json!({"strategy": strategy, "grid": grid, "statistics": statistics});
            std::fs::write(&file, request.to_string()).unwrap();
            by_cli[k].push(cli(data, &file));
            let answer = tests::reference::run(
                "batch_client.py",
                &json!({"url": s.url(""), "user": DEMO_EMAIL, "password": DEMO_PASSWORD,
                    "strategy": strategy, "grid": grid, "statistics": statistics}),
            );
            assert_eq!(answer["n"].as_u64(), Some(n as u64), "{answer}");
            assert_eq!(answer["pbo"].is_null(), !statistics, "{answer}");
            by_http[k].push(answer["done"].as_f64().unwrap());
            waited[k].push(answer["finished"].as_f64().unwrap());
            // With statistics the batch ends when they are computed too.
            if !statistics {
                late.push(after_last_chunk(s, &answer).await);
            }
        }
    }
    let [cli_with, cli_without] = by_cli.map(median);
    let [http_with, http_without] = by_http.map(median);
    let [finished_with, finished_without] = waited.map(median);
    println!(
        "{label} ({} bars in the window), {n} SMA crossovers, medians of {ROUNDS}:",
        bars.len() - start
    );
    println!(
        "  without statistics: command line {cli_without:.3} s; HTTP through the Python package {http_without:.3} s (finished at {finished_without:.3} s) = {:.2}x the command line (target: within 1.3x)",
        http_without / cli_without
    );
    println!(
        "  with statistics: command line {cli_with:.3} s (+{:.3} s); HTTP {http_with:.3} s (+{:.3} s; finished at {finished_with:.3} s) = {:.2}x the command line",
        cli_with - cli_without,
        http_with - http_without,
        http_with / cli_with
    );
    late.sort_by(f64::total_cmp);
    println!(
        "  without statistics, the package's long-poll returned {:.1} ms after the last chunk's outcome was stored (median of {}, at most {:.1} ms; target 50 ms)",
        median(late.clone()) * 1e3,
        late.len(),
        late.last().unwrap() * 1e3
    );
    match vectorbt {
        Some(v) => println!(
            "  vectorbt 1.2 whole job on the same bars and grid: {v:.3} s: the command line is {:.1}x faster, HTTP {:.1}x",
            v / cli_without,
            v / http_without
        ),
        None => println!("  vectorbt not timed (no reference venv)"),
    }
}

/// vectorbt's whole job on `bars` from `start` (GOOG's own when `bars` is
/// None), and the bars it ran on. It is given the window and the bars its
/// longest average needs before it, no more: over all of SPX's bars since
/// 1990 its matrices took 20 GB and half its time went to bars before the
/// window.
fn vectorbt(bars: Option<&Bars>, start: usize) -> (Option<f64>, Option<Bars>) {
    let warm = start.min(slow_windows().into_iter().max().unwrap_or(0) + 1);
    let mut req = json!({"fast": fast_windows(), "slow": slow_windows(), "start": warm,
        "sample": [], "repeat": ROUNDS});
    match bars {
        Some(b) => req["close"] = json!(b.close[start - warm..]),
        None => req["goog"] = json!(true),
    }
    if tests::reference::find().is_none() {
        return (None, None);
    }
    let r = tests::reference::run("vectorbt_sma_grid.py", &req);
    let goog = r.get("bars").map(tests::reference::bars_from);
    (r["whole_seconds"].as_f64(), goog)
}

/// The allocator of the `marketlab` binary, for both paths.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    marketlab::runtime::return_memory_soon();
    if let Ok(args) = std::env::var(CHILD) {
        return cli_child(&args);
    }
    let rt = marketlab::runtime::build().unwrap();
    rt.block_on(async {
        let data = tempfile::tempdir().unwrap();
        let market = data.path().join("market");
        tests::server::sample_into(&market);
        let md = ParquetMarketData::new(Arc::new(LocalDir::new(&market)));
        let (goog_vbt, goog) = vectorbt(None, 0);
        let Some(goog) = goog else {
            println!("skipped: the reference venv is missing (tests/run creates it)");
            return;
        };
        md.write_daily("GOOG", &goog).await.unwrap();
        let spx = md.daily("SPX").await.unwrap();
        let from = spx.date(spx.len() - 1) - chrono::Months::new(240);
        let start = spx.time.partition_point(|t| t.date() < from);
        let (spx_vbt, _) = vectorbt(Some(&spx), start);

        let mut opts = Options::new(data.path().join("bench.sqlite"));
        opts.market_dir = market.clone();
        opts.scan.at_start = false;
        let s = TestServer::start(opts).await;
        compare(
            "GOOG (backtesting.py's bars)",
            &s,
            data.path(),
            &goog,
            0,
            goog_vbt,
        )
        .await;
        compare("SPX, 20 years", &s, data.path(), &spx, start, spx_vbt).await;
        s.stop().await;
    });
}
