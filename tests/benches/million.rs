//! The million-strategy grid end to end: `cargo bench -p tests --bench
//! million`. A 1,000 x 1,000 grid of SMA crossovers (fast 2..=1001, slow
//! 1002..=2001, entry and exit linked) on the last 20 years of SPX,
//! submitted over HTTP by the demo account with its plan's batch size set
//! to 1,000,000 (`plans set pro --max-batch`), run by the embedded server's
//! 2 workers (release, in this process), followed with the long-poll the
//! Python package uses, its results exported as Parquet. Prints the wall
//! time of each step, the statistics (DSR, sampled PBO) and this process's
//! peak resident memory (the server's, with the client's small share).
//!
//! `-- N` runs an N x N grid instead (a quicker look).

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use std::time::Instant;
use tests::server::{Options, TestServer};

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn main() {
    let side: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1000);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let data = tempfile::tempdir().unwrap();
        let market = data.path().join("market");
        tests::server::sample_into(&market);
        let mut opts = Options::new(data.path().join("bench.sqlite"));
        opts.market_dir = market.clone();
        opts.scan.at_start = false;
        let s = TestServer::start(opts).await;
        let metering = s.state.metering.clone().expect("metering on");
        marketlab::operator::plans(
            metering.quota_store().as_ref(),
            Some(marketlab::operator::PlansCommand::Set {
                code: "pro".into(),
                requests_per_minute: None,
                concurrent_tasks: None,
                monthly_compute_minutes: None,
                max_batch: Some(platform::quota::MAX_BATCH as u64),
            }),
            &mut std::io::sink(),
        )
        .await
        .unwrap();
        let spx = {
            use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
            let md = ParquetMarketData::new(std::sync::Arc::new(LocalDir::new(&market)));
            md.daily("SPX").await.unwrap()
        };
        let from = spx.date(spx.len() - 1) - chrono::Months::new(240);
        let crossing = |op: &str| {
            json!({"rule_type": "SingleCondition", "condition": {
                "signal": {"name": "Simple Moving Average", "params": {"period": "10"}},
                "rule": {"comparison_type": "MA", "type_name": op, "period": "50"}}})
        };
        let periods = |from: usize| -> Vec<String> {
            (from..from + side).map(|p| p.to_string()).collect()
        };
        let grid = json!({"name": "million",
            "strategy": {"symbol": "SPX", "start_date": from.to_string(), "risk_control": "//",
                "entry": crossing("CrossAbove"), "exit": crossing("CrossBelow")},
            "grid": {
                "entry.condition.signal.params.period,exit.condition.signal.params.period": periods(2),
                "entry.condition.rule.period,exit.condition.rule.period": periods(2 + side)}});
        let http = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(60))
            .build()
            .unwrap();
        let before = peak_rss_mib();
        let started = Instant::now();
        let sub: Value = http
            .post(s.url("/backtest/batch"))
            .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
            .json(&grid)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let submitted = started.elapsed();
        let id = sub["task_id"].as_str().unwrap_or_else(|| panic!("{sub}"));
        let status = loop {
            let st: Value = http
                .get(s.url(&format!("/backtest/batch/{id}?wait=20")))
                .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            match st["status"].as_str() {
                Some("PENDING" | "RUNNING") => eprintln!(
                    "{:>6.1} s: {} of {} done",
                    started.elapsed().as_secs_f64(),
                    st["done"],
                    st["total"]
                ),
                _ => break st,
            }
        };
        let finished = started.elapsed();
        let parquet = http
            .get(s.url(&format!("/backtest/batch/{id}/results?format=parquet")))
            .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let exported = started.elapsed();
        let stats = &status["statistics"];
        println!(
            "{side} x {side} SMA grid on SPX, 20 years ({} strategies), release, 2 workers:",
            side * side
        );
        println!(
            "  submitted in {:.2} s, {} at {:.1} s (long-poll), Parquet ({:.1} MB) by {:.1} s",
            submitted.as_secs_f64(),
            status["status"],
            finished.as_secs_f64(),
            parquet.len() as f64 / 1e6,
            exported.as_secs_f64()
        );
        println!(
            "  DSR {} (best row {}), PBO {} from {} of {} splits",
            stats["deflated_sharpe"]["deflated_sharpe_ratio"],
            stats["deflated_sharpe"]["best_index"],
            stats["overfitting"]["pbo"],
            stats["overfitting"]["splits"],
            stats["overfitting"]["splits_total"]
        );
        println!(
            "  peak resident memory {:.0} MiB ({:.0} MiB before the submit)",
            peak_rss_mib(),
            before
        );
        s.stop().await;
    });
}
