//! What a million-strategy batch's fan-out costs on AWS, priced from a
//! metered emulator run of a 100,000-strategy batch:
//! `infra/build-functions`, then `cargo bench -p tests --bench fan_out`
//! (docs/deploy.md#cost, "A million-strategy batch").
//!
//! A 100 x 1,000 SMA grid on the last 20 years of SPX (the million bench's
//! grid with a tenth of its fast periods) is submitted to the backtest
//! function, fanned out and run by the worker function as the event source
//! mapping hands it the queue's messages, statistics included, and its rows
//! read back a page at a time (a function answers at most 6 MB: the
//! million's 19 MB Parquet file is not served through one). Every function runs
//! as its release binary under a Runtime API and reaches the emulator
//! through the metering proxy, as in the cost bench (`benches/cost`).
//!
//! A batch makes at most 256 chunks (`batch::chunk_size`): a million
//! strategies are as many chunks, invocations and requests as the 100,000
//! measured here, each chunk ten times the strategies. The million's
//! estimate is therefore the measured requests and units with the worker's
//! compute times ten, and its rows read in ten times the pages.

// The cost bench's model and runs; this bench uses part of each.
#[allow(dead_code)]
#[path = "cost/model.rs"]
mod model;
#[allow(dead_code)]
#[path = "cost/runs.rs"]
mod runs;

use model::{Cost, PARTS, Work, cost_row, prices, usd};
use runs::{Bench, StatusRead};
use serde_json::{Value, json};
use tests::aws_meter::Meter;
use tests::runtime_api::{answer_json, http_event};

const FAST: usize = 100;
const SLOW: usize = 1_000;
/// Rows a page of `GET /backtest/batch/{id}/rows` (its largest).
const PAGE: usize = 10_000;

/// The worker's compute `k` times over, its requests as they were.
fn compute_times(w: &Work, k: f64) -> Work {
    let mut out = w.clone();
    out.ms *= k;
    out.cpu_ms *= k;
    out.billed_ms *= k;
    out.gb_seconds *= k;
    out
}

fn grid() -> Value {
    let side = |op: &str| {
        json!({"rule_type": "SingleCondition", "condition": {
            "signal": {"name": "Simple Moving Average", "params": {"period": "10"}},
            "rule": {"comparison_type": "MA", "type_name": op, "period": "50"}}})
    };
    let periods = |from: usize, n: usize| -> Vec<String> {
        (from..from + n).map(|p| p.to_string()).collect()
    };
    json!({"name": "fan-out",
        "strategy": {"symbol": "SPX", "start_date": "2006-11-27", "risk_control": "//",
            "entry": side("CrossAbove"), "exit": side("CrossBelow")},
        "grid": {
            "entry.condition.signal.params.period,exit.condition.signal.params.period": periods(2, FAST),
            "entry.condition.rule.period,exit.condition.rule.period": periods(2 + FAST, SLOW)}})
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let prices = prices();
        let clients = tests::emulator::clients().await;
        // SPX and the catalog; few stocks, so the upload is short.
        let market = tempfile::tempdir().unwrap();
        let config = sample::SampleConfig {
            stocks: 5,
            intraday_days: 0,
            ..Default::default()
        };
        sample::generate(&config, &platform::marketdata::LocalDir::new(market.path()))
            .expect("the sample set");
        let bucket = tests::emulator::bucket_of(&clients, market.path()).await;
        let d = tests::emulator::deployment_on(clients.clone(), bucket).await;
        // The demo account's plan, opened to the batch as an operator would.
        let plan = d
            .state
            .auth
            .store()
            .get(marketlab::server::DEMO_EMAIL)
            .await
            .unwrap()
            .unwrap()
            .plan;
        d.state
            .metering
            .as_ref()
            .expect("metering")
            .quota_store()
            .set_plan_limits(
                &plan,
                platform::quota::PlanLimits {
                    max_batch: Some(FAST * SLOW),
                    monthly_compute_minutes: 1_000_000,
                    ..platform::quota::default_limits(&plan)
                },
            )
            .await
            .unwrap();
        let meter = Meter::start(&tests::emulator::endpoint()).await;
        let env = runs::metered_env(&d.names, &meter);
        let b = Bench {
            prices,
            meter,
            env,
            clients,
            queue_url: d.names.queue_url.clone(),
            auth: tests::runtime_api::basic(
                marketlab::server::DEMO_EMAIL,
                marketlab::server::DEMO_PASSWORD,
            ),
        };
        let p = &b.prices;
        let (mut http, hmem) = b.function("backtest").await;
        let (mut worker, wmem) = b.function("worker").await;

        // Submit.
        let mut submit = Work::default();
        let t0 = std::time::Instant::now();
        let answer = b
            .invoke(
                &mut http,
                hmem,
                http_event("POST", "/backtest/batch", Some(&grid()), Some(&b.auth)),
                &mut submit,
                true,
            )
            .await;
        let id = answer_json(&answer)["task_id"]
            .as_str()
            .unwrap_or_else(|| panic!("submit: {answer}"))
            .to_string();
        // Fan-out, chunks and statistics on the worker.
        let mut run = Work::default();
        let mut status = StatusRead {
            bench: &b,
            function: &mut http,
            path: format!("/backtest/batch/{id}"),
            last: Value::Null,
        };
        b.drain(&mut worker, wmem, &mut run, &mut status).await;
        let ran_s = t0.elapsed().as_secs_f64();
        let record = d.state.tasks.get(id.parse().unwrap()).await.unwrap().unwrap();
        let chunks = record.result.as_ref().and_then(|r| r["chunks"].as_array()).map_or(0, Vec::len);
        // One read of the finished status, then the rows a page at a time.
        let mut status_read = Work::default();
        let st = b
            .invoke(
                &mut http,
                hmem,
                http_event("GET", &format!("/backtest/batch/{id}"), None, Some(&b.auth)),
                &mut status_read,
                true,
            )
            .await;
        let st = answer_json(&st);
        assert_eq!(st["status"], "SUCCESS", "{st}");
        assert!(st["statistics"]["deflated_sharpe"].is_object(), "{st}");
        let mut pages = Work::default();
        let mut cursor: Option<String> = None;
        let mut rows = 0;
        loop {
            let path = match &cursor {
                Some(c) => format!("/backtest/batch/{id}/rows?limit={PAGE}&cursor={c}"),
                None => format!("/backtest/batch/{id}/rows?limit={PAGE}"),
            };
            let page = b
                .invoke(&mut http, hmem, http_event("GET", &path, None, Some(&b.auth)), &mut pages, true)
                .await;
            let page = answer_json(&page);
            rows += page["rows"].as_array().map_or(0, Vec::len);
            match page["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => break,
            }
        }
        assert_eq!(rows, FAST * SLOW);

        println!(
            "fan-out cost: a {FAST} x {SLOW} SMA grid ({} strategies) on the emulator with the release binaries, {chunks} chunk tasks, submit to SUCCESS {ran_s:.1} s; prices {} {} (infra/prices.json)\n",
            FAST * SLOW,
            p.region,
            p.as_of
        );
        println!("| part | invocations | wall ms | billed ms | DynamoDB RRU | DynamoDB WRU | S3 GETs | S3 PUTs | SQS requests | out KB | cost |");
        println!("|---|---|---|---|---|---|---|---|---|---|---|");
        let row = |label: &str, w: &Work| {
            let c = Cost::of(w, p).total();
            println!(
                "| {label} | {:.0} | {:.0} | {:.0} | {:.1} | {:.1} | {} | {} | {:.0} | {:.0} | {} |",
                w.invocations,
                w.ms,
                w.billed_ms,
                w.aws.dynamo_read_units,
                w.aws.dynamo_write_units,
                w.aws.s3_gets,
                w.aws.s3_puts,
                w.sqs_requests(p),
                w.out_bytes / 1024.0,
                usd(c)
            );
            c
        };
        row("submit (backtest function)", &submit);
        row("fan-out, chunks, statistics (worker)", &run);
        row("finished status, one read", &status_read);
        row(&format!("rows, {} pages of {PAGE}", pages.invocations), &pages);
        let mut measured = submit.clone();
        measured.add(&run);
        measured.add(&status_read);
        measured.add(&pages);
        let total = row("**100,000 strategies, rows by pages**", &measured);

        // The million: the same chunks and requests, ten times the compute
        // on the worker, ten times the pages.
        let mut million = submit.clone();
        million.add(&compute_times(&run, 10.0));
        million.add(&status_read);
        million.add(&pages.scaled(10.0));
        println!();
        println!("| work | {} | total |", PARTS.join(" | "));
        println!("|{}", "---|".repeat(PARTS.len() + 2));
        cost_row("100,000 strategies (measured)", 1.0, &measured, p);
        cost_row("1,000,000 strategies (estimated)", 1.0, &million, p);
        println!(
            "\nper 1,000 strategies: {} measured at 100,000, {} estimated at 1,000,000",
            usd(total / (FAST * SLOW) as f64 * 1e3),
            usd(Cost::of(&million, p).total() / 1e3)
        );
        let calls: std::collections::BTreeMap<String, u64> = run.aws.calls.clone();
        eprintln!("AWS calls of the worker's run: {calls:?}");
    });
}
