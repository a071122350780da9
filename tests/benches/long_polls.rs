//! What waiting costs: 500 long-polled status reads (`?wait=20`) held at
//! once on tasks that do not end, against the embedded server in this
//! process: the memory they hold over idle (the process's resident set,
//! clients' connections included, so an upper bound for the server) and
//! the backtests' submit-to-SUCCESS time with and without them.
//! `cargo bench -p tests --bench long_polls` (`-- --write-docs` puts the
//! figures into docs/webhooks.md).

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::tasks::{NewTask, TaskKind};
use std::time::{Duration, Instant};
use tests::server::{Options, TestServer, optix_strategy};

const WAITERS: usize = 500;

/// Resident set of this process, MiB.
fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb / 1024.0
}

/// `n` backtests, each submitted and long-polled to SUCCESS; the p50 in ms.
async fn backtests(client: &reqwest::Client, s: &TestServer, n: usize) -> f64 {
    let body = serde_json::to_vec(&optix_strategy()).unwrap();
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        times.push(
            tests::bench::backtest_to_success(client, &s.url(""), &body)
                .await
                .1,
        );
    }
    times.sort();
    times[n / 2].as_secs_f64() * 1e3
}

fn main() {
    let write = std::env::args().any(|a| a == "--write-docs");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let db = tempfile::tempdir().unwrap();
        let mut opts = Options::new(db.path().join("db.sqlite"));
        opts.scan.at_start = false;
        // One tenant holds them all: its share is raised to the lot.
        opts.limits.long_polls.per_tenant = WAITERS;
        let s = TestServer::start(opts).await;
        let client = reqwest::Client::new();
        backtests(&client, &s, 30).await;
        let idle_p50 = backtests(&client, &s, 200).await;
        let _ = tokio::task::spawn_blocking(platform::memory::trim).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let idle = rss_mib();

        // Tasks that stay PENDING: created, never queued.
        let mut ids = Vec::with_capacity(WAITERS);
        for _ in 0..WAITERS {
            let t = s
                .state
                .tasks
                .create(NewTask {
                    owner: DEMO_EMAIL.into(),
                    kind: TaskKind::StrategyBacktest,
                    params: optix_strategy(),
                })
                .await
                .unwrap();
            ids.push(t.id);
        }
        let waiters = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
        let started = Instant::now();
        let held: Vec<_> = ids
            .iter()
            .map(|id| {
                let req = waiters
                    .get(s.url(&format!("/backtest/status/{id}?wait=20")))
                    .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD));
                tokio::spawn(async move { req.send().await.map(|r| r.status().as_u16()) })
            })
            .collect();
        // Every read has armed its wait (one entry per task in the hub).
        while platform::tasks::finishes::finishes().len() < WAITERS {
            assert!(started.elapsed() < Duration::from_secs(15), "the long-polls did not all arrive");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let all_in = started.elapsed();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let holding = rss_mib();
        let busy_p50 = backtests(&client, &s, 200).await;
        let still = platform::tasks::finishes::finishes().len();
        let answered = futures::future::join_all(held).await;
        let ok = answered.iter().filter(|r| matches!(r, Ok(Ok(200)))).count();
        let lines = [
            format!(
                "{WAITERS} long-polls (`?wait=20`) held at once, all in within {:.0} ms: resident memory {idle:.0} MiB idle, {holding:.0} MiB holding them: **+{:.1} MiB** (limit 50; clients' connections in the same process included), about {:.0} KiB per waiting read",
                all_in.as_secs_f64() * 1e3,
                holding - idle,
                (holding - idle) * 1024.0 / WAITERS as f64
            ),
            format!(
                "backtest (Optix strategy, SPX, stored) submit to SUCCESS p50 over 200 runs: **{idle_p50:.2} ms** with no waiters, **{busy_p50:.2} ms** with the {WAITERS} held ({:.2}x); {still} reads still waiting when the runs ended, {ok} of {WAITERS} answered 200 at their 20 s",
                busy_p50 / idle_p50
            ),
        ];
        println!("long-polls, embedded server (release build)");
        for l in &lines {
            println!("  {l}");
        }
        if write {
            tests::bench::write_docs_block("webhooks.md", "long-polls", &lines);
        }
        s.stop().await;
    });
}
