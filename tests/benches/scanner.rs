//! Scanner benchmark: `cargo bench -p tests --bench scanner`.
//!
//! Over a full-universe sample set (1,500 stocks from 1990):
//! - the nightly job in a process of its own, as it runs at night: its wall
//!   time and peak memory (targets: under 4 s on 2 cores, under 1 GB);
//! - the nightly job as it runs at night: a cold process reads every stock's
//!   bars and Optix series from Parquet, computes the 37 signals on each
//!   whole history and the statistics of every signal that fired on the
//!   latest session, and writes the day's file; then the same job warm;
//! - the scanner backtest over ten years, computed and from the history;
//! - `latest-day-all` through the embedded server over HTTP (loopback,
//!   keep-alive): median and p99 of 300 requests per form.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
use platform::scanner::{ParquetScannerStore, READ_TTL};
use platform::worker::Progress;
use services::analytics::scanner::nightly::{self, Schedule};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tests::server::{Options, TestServer};

/// Set in the child process that runs one nightly scan and reports.
const CHILD: &str = "MARKETLAB_BENCH_SCAN_DIR";

/// The child: one scan of the directory, then its time and peak memory as JSON.
fn scan_child(dir: &str) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let t0 = Instant::now();
    let blobs = Arc::new(LocalDir::new(dir));
    let store = ParquetScannerStore::new(blobs.clone(), READ_TTL);
    let market = ParquetMarketData::new(blobs);
    let s = rt
        .block_on(nightly::run(&market, &store, None, &Progress::default()))
        .unwrap();
    let seconds = t0.elapsed().as_secs_f64();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let peak_kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(f64::NAN);
    println!(
        "{}",
        serde_json::json!({"seconds": seconds, "peak_mb": peak_kb / 1024.0, "stocks": s.stocks, "items": s.items})
    );
}

/// The nightly job in a fresh process (this binary again): wall time, peak memory.
fn scan_in_own_process(dir: &std::path::Path) -> serde_json::Value {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .env(CHILD, dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(text.lines().last().unwrap_or_default()).unwrap()
}

fn main() {
    if let Ok(dir) = std::env::var(CHILD) {
        return scan_child(&dir);
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let config = sample::SampleConfig {
            stocks: sample::FULL_UNIVERSE,
            intraday_days: 5,
            ..Default::default()
        };
        let t0 = Instant::now();
        sample::generate(&config, &LocalDir::new(dir.path())).unwrap();
        println!(
            "scanner benchmarks: {} stocks (sample set written in {:.0} s)",
            config.stocks,
            t0.elapsed().as_secs_f64()
        );

        // The job as it runs at night: a process of its own (three runs).
        let runs: Vec<serde_json::Value> = (0..3).map(|_| scan_in_own_process(dir.path())).collect();
        let secs: Vec<f64> = runs.iter().map(|r| r["seconds"].as_f64().unwrap()).collect();
        let peak: Vec<f64> = runs.iter().map(|r| r["peak_mb"].as_f64().unwrap()).collect();
        println!(
            "  nightly job in its own process, {} stocks, {} signals fired: {:.2}-{:.2} s (target < 4 s), peak memory {:.0}-{:.0} MB (target < 1 GB), on 2 cores",
            runs[0]["stocks"],
            runs[0]["items"],
            secs.iter().cloned().fold(f64::INFINITY, f64::min),
            secs.iter().cloned().fold(0.0, f64::max),
            peak.iter().cloned().fold(f64::INFINITY, f64::min),
            peak.iter().cloned().fold(0.0, f64::max),
        );

        let blobs = Arc::new(LocalDir::new(dir.path()));
        // Where the engine's time goes: each signal over every stock's whole
        // history, one thread, bars in memory.
        {
            let md = ParquetMarketData::new(blobs.clone());
            let mut stocks = Vec::new();
            for s in md.symbols().await.unwrap().iter().filter(|s| s.asset_class == "stock") {
                let bars = md.daily(&s.symbol).await.unwrap();
                let optix = md
                    .indicator_series(&format!("{}_OPTIX", s.symbol))
                    .await
                    .unwrap();
                stocks.push((bars, optix));
            }
            let mut times: Vec<(f64, &str)> = engine::scanner::SIGNALS
                .iter()
                .map(|signal| {
                    let t0 = Instant::now();
                    for (b, o) in &stocks {
                        let inputs = engine::scanner::Inputs {
                            open: &b.open,
                            high: &b.high,
                            low: &b.low,
                            close: &b.close,
                            optix: Some(&o.close),
                        };
                        std::hint::black_box((signal.fire)(&inputs));
                    }
                    (t0.elapsed().as_secs_f64(), signal.name)
                })
                .collect();
            let t0 = Instant::now();
            for (b, _) in &stocks {
                let v = engine::scanner::stats::Vols::new(&b.close);
                for i in 0..b.len() {
                    std::hint::black_box(v.levels(i, 5));
                }
            }
            times.push((t0.elapsed().as_secs_f64(), "(volatility of every bar)"));
            times.sort_by(|a, b| b.0.total_cmp(&a.0));
            let total: f64 = times.iter().map(|t| t.0).sum();
            let top: Vec<String> = times
                .iter()
                .take(8)
                .map(|(t, n)| format!("{n} {t:.2} s"))
                .collect();
            println!(
                "  engine, one thread, every stock's whole history: 37 signals and the volatility {total:.2} s; most: {}",
                top.join(", ")
            );
        }
        let store = ParquetScannerStore::new(blobs.clone(), READ_TTL);
        let cold = ParquetMarketData::new(blobs.clone());
        let t0 = Instant::now();
        let s = nightly::run(&cold, &store, None, &Progress::default())
            .await
            .unwrap();
        let cold_secs = t0.elapsed().as_secs_f64();
        let t0 = Instant::now();
        nightly::run(&cold, &store, None, &Progress::default())
            .await
            .unwrap();
        let warm_secs = t0.elapsed().as_secs_f64();
        let file = std::fs::metadata(dir.path().join(platform::scanner::key(s.date)))
            .unwrap()
            .len();
        println!(
            "  nightly job, {}: {} stocks, {} signals fired, file {:.1} MB: cold {cold_secs:.2} s (target < 15 s: {:.1}x under), warm {warm_secs:.2} s, on 2 cores",
            s.date,
            s.stocks,
            s.items,
            file as f64 / 1e6,
            15.0 / cold_secs
        );

        // The scanner backtest's worker time: ten years, every signal, the
        // full universe. First with the nightly file of the last session
        // only, so every other session is computed; then with the history
        // backfilled, as a deployment that has run nightly holds it.
        let q = services::analytics::scanner::backtest::requests::ScannerBacktestParams {
            start_date: Some("2016-11-21".into()),
            end_date: Some("2026-11-20".into()),
            find_type: Some("stock".into()),
            signals: Some(serde_json::json!(["All"])),
            total_capital: Some(serde_json::json!(1_000_000)),
            long_short_ratio: Some("0.7/0.3".into()),
            ..Default::default()
        }
        .validate()
        .unwrap();
        let backtest = |market: ParquetMarketData, label: &'static str| {
            let (store, q) = (&store, &q);
            async move {
                let t0 = Instant::now();
                let a = services::analytics::scanner::backtest::run(
                    &market,
                    store,
                    q,
                    &Progress::default(),
                )
                .await
                .unwrap();
                let secs = t0.elapsed().as_secs_f64();
                let d = a.data.unwrap();
                println!(
                    "  scanner backtest, 10 years, all signals, {label}: {secs:.2} s (target < 2 s), {} trades, total return {:.1}%",
                    d.stats.total_trades, d.stats.total_return
                );
                (market, serde_json::to_value(&d).unwrap())
            }
        };
        // Cold: a fresh process's reads; warm: the bars already decoded.
        let (market, _) = backtest(ParquetMarketData::new(blobs.clone()), "computed, cold").await;
        let (market, computed) = backtest(market, "computed, warm").await;
        drop(market);
        let t0 = Instant::now();
        let h = services::analytics::scanner::history::backfill(
            &cold,
            &store,
            "2016-11-21".parse().unwrap(),
            None,
            &Progress::default(),
        )
        .await
        .unwrap();
        let history_bytes: u64 = std::fs::read_dir(dir.path().join("scanner/history"))
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        println!(
            "  history backfill, {} sessions ({} months, {} items, {:.0} MB): {:.2} s",
            h.sessions,
            h.months,
            h.items,
            history_bytes as f64 / 1e6,
            t0.elapsed().as_secs_f64()
        );
        let (market, _) =
            backtest(ParquetMarketData::new(blobs.clone()), "from the history, cold").await;
        let (_, read) = backtest(market, "from the history, warm").await;
        assert_eq!(read, computed, "the history gives the computed answer");

        let mut opts = Options::new(dir.path().join("bench.sqlite"));
        opts.market_dir = dir.path().to_path_buf();
        opts.scan = Schedule {
            at_start: false,
            daily_at: None,
            follow: false,
        };
        let server = TestServer::start(opts).await;
        let http = reqwest::Client::new();
        for (label, path) in [
            ("SwingAI, all items", "/smart-stock-scanner/latest-day-all"),
            (
                "MidTermAI, all items",
                "/smart-stock-scanner/latest-day-all?category=MidTermAI",
            ),
            (
                "one ticker",
                "/smart-stock-scanner/latest-day-all?ticker=AAPL&category=MidTermAI",
            ),
            (
                "20 items with trade lists",
                "/smart-stock-scanner/latest-day-all?include_backtest=true",
            ),
        ] {
            let get = || {
                http.get(server.url(path))
                    .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
                    .send()
            };
            let body = get().await.unwrap().bytes().await.unwrap();
            let mut times: Vec<Duration> = Vec::with_capacity(300);
            for _ in 0..300 {
                let t = Instant::now();
                let r = get().await.unwrap();
                assert_eq!(r.status(), 200);
                r.bytes().await.unwrap();
                times.push(t.elapsed());
            }
            times.sort();
            println!(
                "  latest-day-all over HTTP, {label} ({} KB): p50 {:.2} ms (target < 5 ms), p99 {:.2} ms",
                body.len() / 1024,
                times[150].as_secs_f64() * 1e3,
                times[297].as_secs_f64() * 1e3
            );
        }
        server.stop().await;
    });
}
