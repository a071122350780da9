//! Data service benchmark: `cargo bench -p tests --bench data`.
//!
//! Full-history requests through the embedded server over HTTP (loopback),
//! after a warm-up request fills the decoded-column cache.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use std::time::{Duration, Instant};
use tests::server::{Options, TestServer};

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let db = tempfile::tempdir().unwrap();
        let s = TestServer::start(Options::new(db.path().join("db.sqlite"))).await;
        let client = reqwest::Client::new();
        let series = s.state.market.indicator_series("SPX_OPTIX").await.unwrap();
        let from = series.time[0].date();
        let years = (series.time[series.time.len() - 1].date() - from).num_days() as f64 / 365.25;
        println!("data service benchmarks (embedded server over HTTP on 127.0.0.1; median and p99 of 300 requests)");
        for (label, path) in [
            ("full history, daily indicator", "/ws/getSymbolData/SPX_OPTIX"),
            ("full history with sentiment", "/ws/getSymbolSentimentData/SPX_OPTIX"),
            ("catalog (cached)", "/ws/getAllSymbolswithIndexes"),
            ("last 90 days", "/ws/getSymbolDataLimitDays/SPX_OPTIX?days=90"),
        ] {
            let url = s.url(path);
            let get = || client.get(&url).basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD)).send();
            let warm = get().await.unwrap().bytes().await.unwrap();
            let mut times: Vec<Duration> = Vec::with_capacity(300);
            for _ in 0..300 {
                let t = Instant::now();
                let body = get().await.unwrap().bytes().await.unwrap();
                times.push(t.elapsed());
                assert_eq!(body.len(), warm.len());
            }
            times.sort();
            println!("  {label} ({path}, {} KB): p50 {:.2} ms, p99 {:.2} ms", warm.len() / 1024, times[150].as_secs_f64() * 1e3, times[297].as_secs_f64() * 1e3);
        }
        println!("  (SPX_OPTIX: {} daily readings, {:.1} years from {from})", series.time.len(), years);
        s.stop().await;
    });
}
