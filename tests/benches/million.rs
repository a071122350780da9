//! The million-strategy grid end to end: `cargo bench -p tests --bench
//! million`. A 1,000 x 1,000 grid of SMA crossovers (fast 2..=1001, slow
//! 1002..=2001, entry and exit linked) on the last 20 years of SPX,
//! submitted over HTTP by the demo account with its plan's batch size set
//! to 1,000,000 (`plans set pro --max-batch`), run by the embedded server's
//! 2 workers, followed with the long-poll the Python package uses, its
//! results exported as Parquet. The server runs in a process of its own as
//! the `marketlab` binary runs it (release, its runtime), on the sample
//! data generated and scanned before it starts. Prints the wall time of each step,
//! the statistics (DSR, sampled PBO) and the server's peak resident memory.
//!
//! `-- N` runs an N x N grid instead (a quicker look).

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use std::io::BufRead;
use std::time::Instant;

/// The allocator of the `marketlab` binary.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A process's peak resident memory, in MiB.
fn peak_rss_mib(pid: u32) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// `marketlab` with these arguments, in this process, on the binary's
/// runtime.
fn marketlab(args: &[&str]) {
    let cli = <marketlab::cli::Cli as clap::Parser>::parse_from(
        std::iter::once("marketlab").chain(args.iter().copied()),
    );
    marketlab::runtime::build()
        .unwrap()
        .block_on(marketlab::cli::run(cli))
        .unwrap();
}

/// The server, in a child process (this binary again, as `serve-child DIR
/// PORT`), once it listens.
fn start_server(dir: &str) -> (std::process::Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["serve-child", dir, &port.to_string()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    for line in out.by_ref() {
        if line.unwrap().starts_with("marketlab listening on") {
            // The rest is read as it comes, so the server never writes to
            // a closed pipe.
            std::thread::spawn(move || out.for_each(drop));
            return (child, format!("http://127.0.0.1:{port}"));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the server stopped before it listened");
}

fn main() {
    marketlab::runtime::return_memory_soon();
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("serve-child") {
        let (dir, port) = (&args[2], &args[3]);
        return marketlab(&["--data-dir", dir, "serve", "--port", port]);
    }
    let side: usize = args
        .iter()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1000);
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().to_str().unwrap().to_string();
    // The sample data and its nightly scan first, as on a server that has
    // run before: the server's start does both on an empty directory, and
    // the scan would share the cores with the batch's first seconds.
    marketlab(&["--data-dir", &dir, "sample-data"]);
    marketlab(&["--data-dir", &dir, "scan"]);
    let most = platform::quota::MAX_BATCH.to_string();
    marketlab(&[
        "--data-dir",
        &dir,
        "plans",
        "set",
        "pro",
        "--max-batch",
        &most,
    ]);
    let (mut server, base) = start_server(&dir);
    let url = |path: &str| format!("{base}{path}");
    let market = data.path().join("market");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
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
        let started = Instant::now();
        let sub: Value = http
            .post(url("/backtest/batch"))
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
                .get(url(&format!("/backtest/batch/{id}?wait=20")))
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
            .get(url(&format!("/backtest/batch/{id}/results?format=parquet")))
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
            "  the server's peak resident memory {:.0} MiB",
            peak_rss_mib(server.id())
        );
    });
    server.kill().unwrap();
    server.wait().unwrap();
}
