//! Scanner benchmark: `cargo bench -p tests --bench scanner`.
//!
//! Over a full-universe sample set (1,500 stocks from 1990):
//! - the nightly job as it runs at night: a cold process reads every stock's
//!   bars and Optix series from Parquet, computes the 37 signals on each
//!   whole history and the statistics of every signal that fired on the
//!   latest session, and writes the day's file; then the same job warm;
//! - `latest-day-all` through the embedded server over HTTP (loopback,
//!   keep-alive): median and p99 of 300 requests per form.

use api::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::{LocalDir, ParquetMarketData};
use platform::scanner::{ParquetScannerStore, READ_TTL};
use platform::worker::Progress;
use services::analytics::scanner::nightly::{self, Schedule};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tests::server::{Options, TestServer};

fn main() {
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

        let blobs = Arc::new(LocalDir::new(dir.path()));
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
        // full universe; the nightly file covers the last session only, so
        // the items of every other session are computed.
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
        // Cold: a fresh process's reads; warm: the bars already decoded.
        let market = ParquetMarketData::new(blobs.clone());
        for label in ["cold", "warm"] {
            let t0 = Instant::now();
            let a = services::analytics::scanner::backtest::run(
                &market,
                &store,
                &q,
                &Progress::default(),
            )
            .await
            .unwrap();
            let d = a.data.unwrap();
            println!(
                "  scanner backtest, 10 years, all signals, {label}: {:.2} s (target < 2 s), {} trades, total return {:.1}%",
                t0.elapsed().as_secs_f64(),
                d.total_trades,
                d.total_return
            );
        }

        let mut opts = Options::new(dir.path().join("bench.sqlite"));
        opts.market_dir = dir.path().to_path_buf();
        opts.scan = Schedule {
            at_start: false,
            daily_at: None,
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
