//! Batch backtests end to end: `cargo bench -p tests --bench batch`.
//!
//! A grid of close-over-its-average strategies on SPX (every session since
//! 1990, about 9,300 bars), submitted over HTTP to the embedded server on
//! loopback with 2 workers, timed from the submit to the finished table.

use api::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::json;
use services::analytics::scanner::nightly::Schedule;
use std::time::{Duration, Instant};
use tests::server::{Options, TestServer};

/// The JSON answer of a request as the demo account.
async fn demo(req: reqwest::RequestBuilder) -> serde_json::Value {
    let r = req.basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD)).send();
    r.await.unwrap().json().await.unwrap()
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = Options::new(dir.path().join("bench.sqlite"));
        opts.scan = Schedule {
            at_start: false,
            daily_at: None,
        };
        let s = TestServer::start(opts).await;
        let http = reqwest::Client::new();
        for (periods, risks) in [(20usize, 5usize), (100, 10), (200, 50)] {
            let strategy = json!({"symbol": "SPX", "start_date": "1990-01-02",
                "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
                    "rule": {"comparison_type": "SVMA", "type_name": "CrossAbove", "comparison_value": "0", "period": "50"}}},
                "exit": {"rule_type": "RiskControlOnly"}, "risk_control": "//21"});
            let p: Vec<String> = (0..periods).map(|k| (5 + 2 * k).to_string()).collect();
            let r: Vec<String> = (0..risks).map(|k| format!("//{}", 5 + 3 * k)).collect();
            let body = json!({"strategy": strategy, "grid": {"entry.condition.rule.period": p, "risk_control": r}});
            let n = periods * risks;
            let t0 = Instant::now();
            let sub = demo(http.post(s.url("/backtest/batch")).json(&body)).await;
            let submitted = t0.elapsed();
            let id = sub["task_id"].as_str().unwrap_or_else(|| panic!("{sub}")).to_string();
            loop {
                let st = demo(http.get(s.url(&format!("/backtest/batch/{id}")))).await;
                if st["status"] == "SUCCESS" {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let total = t0.elapsed().as_secs_f64();
            println!(
                "batch of {n} strategies over ~9,300 SPX bars: submit (every strategy checked) {:.2} s, to the finished table {total:.2} s: {:.0} strategies/s end to end (target: 10,000 in under 1 s)",
                submitted.as_secs_f64(),
                n as f64 / total
            );
        }
        s.stop().await;
    });
}
