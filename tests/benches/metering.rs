//! Metering overhead: `cargo bench -p tests --bench metering`.
//!
//! The same small authenticated request (`GET /backtest/indicators/list`,
//! a cached list) against two embedded servers in one process, one with
//! usage metering and plan limits on, one with them off, in alternating
//! rounds so drift in the machine falls on both alike. A third round set
//! reads a data answer, which metering also scans for rows and bytes.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use std::time::{Duration, Instant};
use tests::server::{Options, TestServer};

const ROUNDS: usize = 40;
const PER_ROUND: usize = 500;

async fn round(client: &reqwest::Client, url: &str, times: &mut Vec<Duration>) {
    for _ in 0..PER_ROUND {
        let t = Instant::now();
        let r = client
            .get(url)
            .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        r.bytes().await.unwrap();
        times.push(t.elapsed());
    }
}

fn quantile(times: &mut [Duration], q: f64) -> f64 {
    times.sort();
    times[((times.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (on_dir, off_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let on = TestServer::start(Options::new(on_dir.path().join("db.sqlite"))).await;
        let mut off_options = Options::new(off_dir.path().join("db.sqlite"));
        off_options.metering = false;
        let off = TestServer::start(off_options).await;
        // The bench sends far more than a plan's minute allows: raise the
        // limit so every request takes the metered path and none is refused.
        on.without_rate_limit().await;
        let client = reqwest::Client::new();
        println!(
            "metering overhead (embedded servers over HTTP on 127.0.0.1, one keep-alive client; {ROUNDS} alternating rounds of {PER_ROUND} requests each)"
        );
        for (label, path) in [
            ("small request", "/backtest/indicators/list"),
            ("data answer, 90 records", "/ws/getSymbolDataLimitDays/SPX_OPTIX?days=90"),
        ] {
            let (on_url, off_url) = (on.url(path), off.url(path));
            let (mut t_on, mut t_off) = (Vec::new(), Vec::new());
            // Warm both: caches, the login cache, connections.
            round(&client, &on_url, &mut Vec::new()).await;
            round(&client, &off_url, &mut Vec::new()).await;
            for k in 0..ROUNDS {
                // Which goes first alternates too.
                if k % 2 == 0 {
                    round(&client, &off_url, &mut t_off).await;
                    round(&client, &on_url, &mut t_on).await;
                } else {
                    round(&client, &on_url, &mut t_on).await;
                    round(&client, &off_url, &mut t_off).await;
                }
            }
            let (p50_on, p50_off) = (quantile(&mut t_on, 0.5), quantile(&mut t_off, 0.5));
            let (p99_on, p99_off) = (quantile(&mut t_on, 0.99), quantile(&mut t_off, 0.99));
            println!(
                "  {label} ({path}): p50 {p50_on:.1} µs metered vs {p50_off:.1} µs unmetered ({:+.1}%, target under +5%); p99 {p99_on:.1} vs {p99_off:.1} µs",
                (p50_on / p50_off - 1.0) * 100.0
            );
        }
        // What metering adds to a request, without HTTP around it: the
        // limit check and the count, as the auth layer calls them.
        let metering = on.state.metering.clone().unwrap();
        let n = 200_000;
        let t = Instant::now();
        for _ in 0..n {
            metering
                .admit(
                    DEMO_EMAIL,
                    "pro",
                    platform::accounts::Service::Backtest,
                    chrono::Utc::now(),
                )
                .await
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let per = t.elapsed().as_secs_f64() / n as f64 * 1e9;
        println!(
            "  admit and count alone: {per:.0} ns a request ({n} calls; one store call per block of 1,000 requests)"
        );
        // Counting a data answer's rows, alone.
        let body = client
            .get(on.url("/ws/getSymbolDataLimitDays/SPX_OPTIX?days=90"))
            .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let t = Instant::now();
        let mut rows = 0;
        for _ in 0..10_000 {
            rows += api::rows::json_rows(std::hint::black_box(&body));
        }
        println!(
            "  counting the rows of a {}-byte data answer: {:.2} µs ({} rows)",
            body.len(),
            t.elapsed().as_secs_f64() / 10_000.0 * 1e6,
            rows / 10_000
        );
        on.stop().await;
        off.stop().await;
    });
}
