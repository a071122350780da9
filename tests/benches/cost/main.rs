//! What work costs on AWS, from measured runs:
//! `infra/build-functions` (each function built alone),
//! then `cargo bench -p tests --bench cost`.
//!
//! The default sample set (300 stocks, 1990-2026) goes into a bucket on the
//! emulator. Every function runs as its release binary under a Runtime API
//! (`tests::runtime_api`) with the template's memory and log level, and
//! reaches AWS through the metering proxy (`tests::aws_meter`), which counts
//! DynamoDB request units, S3 requests and bytes and SQS requests as AWS
//! bills them. Those figures times infra/prices.json are the cost model of
//! docs/deploy.md#cost; this prints its tables.

mod model;
mod runs;

use model::{COLD_SHARE, Cost, PARTS, Prices, Work, cost_row, expected, prices, usd};
use runs::{Bench, requests, task_kind};
use serde_json::json;
use std::collections::BTreeMap;
use tests::aws_meter::Meter;
use tests::operations::{Ids, operations, pattern, scanner_trial, strategy};
use tests::runtime_api::template_memory_mb;

/// Strategies in the measured batch backtest.
const BATCH: usize = 20;

fn kb(bytes: f64) -> String {
    format!("{:.1}", bytes / 1024.0)
}

/// A row of the inputs table: per unit of work.
fn inputs_row(label: &str, memory: &str, w: &Work, p: &Prices) {
    println!(
        "| {label} | {memory} | {:.2} | {:.1} | {:.1} | {:.1} | {:.2} | {:.2} | {:.1} | {} | {:.2} | {:.2} | {} | {} |",
        w.invocations,
        w.ms,
        w.cpu_ms,
        w.billed_ms,
        w.aws.dynamo_read_units,
        w.aws.dynamo_write_units,
        w.aws.s3_gets as f64,
        kb(w.aws.s3_get_bytes as f64),
        w.aws.s3_puts as f64,
        w.sqs_requests(p),
        kb(w.log_bytes),
        kb(w.out_bytes),
    );
}

const INPUTS_HEAD: &str = "| work | memory MB | invocations | wall ms | CPU ms | billed ms (est.) | DynamoDB RRU | DynamoDB WRU | S3 GETs | S3 GET KB | S3 PUT/LIST | SQS requests | log KB | out KB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|";

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let prices = prices();
        let clients = tests::emulator::clients().await;
        // The default sample set, as `marketlab` serves it.
        let market = tempfile::tempdir().unwrap();
        sample::generate(&sample::SampleConfig::default(), &platform::marketdata::LocalDir::new(market.path()))
            .expect("the sample set");
        let t = std::time::Instant::now();
        let bucket = tests::emulator::bucket_of(&clients, market.path()).await;
        eprintln!("sample set uploaded in {:.0} s", t.elapsed().as_secs_f64());
        let d = tests::emulator::deployment_on(clients.clone(), bucket).await;
        // The demo account's custom indicators, as the embedded server has them.
        let accounts = d.state.auth.store();
        let mut demo = accounts.get(marketlab::server::DEMO_EMAIL).await.unwrap().unwrap();
        demo.custom_indicators = marketlab::server::demo_custom_indicators();
        accounts.put(demo).await.unwrap();
        let meter = Meter::start(&tests::emulator::endpoint()).await;
        let env = runs::metered_env(&d.names, &meter);
        let auth = tests::runtime_api::basic(
            marketlab::server::DEMO_EMAIL,
            marketlab::server::DEMO_PASSWORD,
        );
        let b = Bench {
            prices,
            meter,
            env,
            clients,
            queue_url: d.names.queue_url.clone(),
            auth,
        };
        let p = &b.prices;

        // Tasks.
        let mut backtest = b.function("backtest").await;
        let mut analytics = b.function("analytics").await;
        let mut reader = b.function("backtest").await.0;
        let grid: Vec<String> = (1..=BATCH).map(|k| format!("//{}", 5 * k)).collect();
        let batch_body = json!({"name": "cost", "strategy": strategy(), "grid": {"risk_control": grid}});
        let tasks = vec![
            task_kind(&b, "backtest", &mut backtest, &mut reader, ("/backtest/start_backtest", strategy()),
                |id| format!("/backtest/status/{id}"), |id| format!("/backtest/status/{id}")).await,
            task_kind(&b, "pattern scan", &mut analytics, &mut reader, ("/cpm/scan/start", pattern()),
                |id| format!("/cpm/status/{id}"), |id| format!("/cpm/status/{id}")).await,
            task_kind(&b, "pattern backtest", &mut analytics, &mut reader, ("/cpm/backtest/start", pattern()),
                |id| format!("/cpm/status/{id}"), |id| format!("/cpm/status/{id}")).await,
            task_kind(&b, "scanner backtest", &mut analytics, &mut reader, ("/smart-scanner-backtest/start", scanner_trial()),
                |id| format!("/smart-scanner-backtest/status/{id}"), |id| format!("/smart-scanner-backtest/status/{id}")).await,
            task_kind(&b, "batch backtest", &mut backtest, &mut reader, ("/backtest/batch", batch_body),
                |id| format!("/backtest/batch/{id}"), |id| format!("/backtest/batch/{id}/results")).await,
        ];
        drop((backtest, analytics, reader));

        // The nightly scanner, on the sample's 300 stocks.
        let (mut nightly, nmem) = b.function("scanner-nightly").await;
        let mut night = Work::default();
        b.invoke(&mut nightly, nmem, json!({}), &mut night, false).await;
        drop(nightly);
        let spec_scale = sample::SPEC_STOCKS as f64 / sample::DEFAULT_STOCKS as f64;

        // Every documented request.
        let id = |kind: &str| tasks.iter().find(|t| t.kind == kind).unwrap().id.clone();
        let ids = Ids {
            backtest: id("backtest"),
            batch: id("batch backtest"),
            cpm: id("pattern backtest"),
            scanner: id("scanner backtest"),
        };
        let ops = operations(&ids);
        let (reqs, flushes) = requests(&b, &ops).await;

        println!("cost model: measured on the emulator with the release binaries; prices {} {} (infra/prices.json)", p.region, p.as_of);
        println!("\n### Inputs per unit of work (warm instance)\n");
        println!("{INPUTS_HEAD}");
        for t in &tasks {
            inputs_row(&format!("{} task", t.kind), &format!("{} (worker)", t.worker_memory), &t.warm, p);
        }
        inputs_row("nightly scanner run (300 stocks)", &nmem.to_string(), &night, p);
        let mut by_service: BTreeMap<&str, (Work, Work, usize)> = BTreeMap::new();
        for r in &reqs {
            let e = by_service.entry(r.function).or_default();
            e.0.add(&r.warm);
            e.1.add(&r.cold);
            e.2 += 1;
        }
        for (f, (w, _, n)) in &by_service {
            inputs_row(&format!("{f} request (mean of {n} operations)"), &template_memory_mb(f).to_string(), &w.scaled(1.0 / *n as f64), p);
        }
        for (f, w) in &flushes {
            inputs_row(&format!("{f}: the usage write of a request 2 s after the last"), "", w, p);
        }
        println!("\n### What a new instance adds (its start and first reads)\n");
        println!("{INPUTS_HEAD}");
        for t in &tasks {
            inputs_row(&format!("{} task, first on a new worker", t.kind), &t.worker_memory.to_string(), &t.cold_extra, p);
        }
        for (f, (w, c, _)) in &by_service {
            inputs_row(&format!("{f}: every operation once on a new instance"), &template_memory_mb(f).to_string(), &c.less(w), p);
        }

        println!("\n### What it costs (a new instance for one in {:.0} requests or tasks)\n", 1.0 / COLD_SHARE);
        println!("| work | {} | total |", PARTS.join(" | "));
        println!("|{}", "---|".repeat(PARTS.len() + 2));
        let mut headline = Vec::new();
        for t in &tasks {
            let w = expected(&t.warm, &t.cold_extra);
            let (n, label) = if t.kind == "batch backtest" {
                (1000.0 / BATCH as f64, format!("1,000 strategies in batches of {BATCH}"))
            } else {
                (1000.0, format!("1,000 {} tasks", t.kind))
            };
            headline.push((label.clone(), cost_row(&label, n, &w, p)));
        }
        let label = format!("one nightly scanner run, {} stocks (measured on {}, scaled)", sample::SPEC_STOCKS, sample::DEFAULT_STOCKS);
        headline.push((label.clone(), cost_row(&label, spec_scale, &night, p)));
        for (f, (w, c, n)) in &by_service {
            let mean = w.scaled(1.0 / *n as f64);
            let cold = c.less(w).scaled(1.0 / *n as f64);
            let mut each = mean.clone();
            each.add(&flushes[f]);
            let label = format!("1,000,000 {f} requests (every operation alike)");
            headline.push((label.clone(), cost_row(&label, 1e6, &expected(&each, &cold), p)));
        }

        println!("\n### Per operation (warm; µ$ per request)\n");
        println!("| operation | function | wall ms | billed ms | RRU | WRU | S3 GETs | out KB | µ$ per request | first on a new instance, µ$ |");
        println!("|---|---|---|---|---|---|---|---|---|---|");
        for r in &reqs {
            println!(
                "| {} | {} | {:.1} | {:.0} | {:.2} | {:.2} | {:.1} | {} | {:.3} | {:.3} |",
                r.key,
                r.function,
                r.warm.ms,
                r.warm.billed_ms,
                r.warm.aws.dynamo_read_units,
                r.warm.aws.dynamo_write_units,
                r.warm.aws.s3_gets as f64,
                kb(r.warm.out_bytes),
                Cost::of(&r.warm, p).total() * 1e6,
                Cost::of(&r.cold, p).total() * 1e6,
            );
        }

        // The plans at their limits.
        // What a minute of task compute (as the account is counted for it)
        // costs, all in, for each kind; the plans are held to the dearest.
        let per_minute: Vec<(&str, f64)> = tasks
            .iter()
            .map(|t| (t.kind, Cost::of(&expected(&t.warm, &t.cold_extra), p).total() / t.metered_ms.max(1.0) * 60_000.0))
            .collect();
        let worker_minute = per_minute.iter().map(|(_, c)| *c).fold(0.0, f64::max);
        // The bound the plans' budgets assume (tests::plan_costs) holds for
        // every kind measured.
        {
            use tests::plan_costs::counted_minute_at_most;
            let bound = counted_minute_at_most(template_memory_mb("worker"), p.lambda_arm64_per_gb_second);
            for t in &tasks {
                let cost = Cost::of(&expected(&t.warm, &t.cold_extra), p).total();
                assert!(
                    cost / t.metered_ms.max(1.0) * 60_000.0 <= bound,
                    "{}: a counted minute costs more than tests::plan_costs's bound",
                    t.kind
                );
            }
            println!("A counted minute costs at most {} by tests::plan_costs's bound; every kind measured is within it.\n", usd(bound));
        }
        println!("\n### Plans at their limits\n");
        for (kind, c) in &per_minute {
            let t = tasks.iter().find(|t| t.kind == *kind).unwrap();
            println!(
                "- {kind}: {:.0} ms of task compute counted per task ({:.0} ms billed by Lambda); a counted minute costs {} all in",
                t.metered_ms, t.worker.billed_ms, usd(*c)
            );
        }
        println!();
        println!("| plan | task compute per month | its cost at most | requests per minute, per service | a month at that rate on all its services |");
        println!("|---|---|---|---|---|");
        // A request's cost on each service: the mean operation, with its usage write.
        let per_request: BTreeMap<&str, f64> = by_service
            .iter()
            .map(|(f, (w, _, n))| {
                let mut each = w.scaled(1.0 / *n as f64);
                each.add(&flushes[f]);
                (*f, Cost::of(&each, p).total())
            })
            .collect();
        for plan in platform::accounts::PLANS.iter().filter(|p| !p.services.is_empty()) {
            let l = platform::quota::default_limits(plan.code);
            let services: f64 = plan
                .services
                .iter()
                .map(|s| per_request[match s {
                    platform::accounts::Service::Backtest => "backtest",
                    platform::accounts::Service::Analytics => "analytics",
                    platform::accounts::Service::Data => "data",
                }])
                .sum();
            println!(
                "| `{}` | {} min | {} | {} | {} |",
                plan.code,
                l.monthly_compute_minutes,
                usd(l.monthly_compute_minutes as f64 * worker_minute),
                l.requests_per_minute,
                usd(l.requests_per_minute as f64 * 60.0 * 24.0 * 30.0 * services),
            );
        }
        println!("\n### Headline\n");
        for (label, total) in headline {
            println!("- {label}: **{}**", usd(total));
        }
        let calls: BTreeMap<String, u64> = reqs.iter().fold(BTreeMap::new(), |mut m, r| {
            for (k, n) in &r.cold.aws.calls {
                *m.entry(k.clone()).or_default() += n;
            }
            m
        });
        eprintln!("AWS calls of the cold request pass: {calls:?}");
    });
}
