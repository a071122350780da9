//! Phases 5, 6 and 9: 64 concurrent heavy reads from one tenant (Monte
//! Carlo of 10,000 draws in blocks of one bar; correlations of every sample
//! ticker over 36 years; the campaign's correlation of SPX against ten
//! tickers rolling over five sessions, a 2.9 MB JSON answer, asked for
//! gzip'd and br'd) while another tenant keeps making a cheap request. Every
//! heavy read is answered (200, or 429/503 within 2 s; the compressed ones
//! honour `Retry-After` until they are answered, so the load lasts), the
//! server's threads stay under [`MAX_THREADS`], its memory grows by under
//! 300 MiB, the cheap request's p99 stays under 50 ms, and the tenant's
//! `/usage` compute grows by the work the answered reads did (for the
//! compressed ones: `compute_ms.compression`, at least a millisecond for
//! each compressed answer).

use super::{Check, DEMO, Server};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Threads the server may have under the flood: the async workers and
/// compute threads (one each per core), the blocking threads of reads
/// (files, and one per database connection at a time: a burst of requests
/// waits for its turn without a thread) and a few of its own (signals,
/// metering, deliveries). Measured: 31 at rest after the start-up scan, no
/// more under the flood.
pub const MAX_THREADS: u64 = 80;
const REQUESTS: usize = 64;
const CHEAP: (&str, &str) = ("cheap@soak.test", "a cheap long password");

/// The kinds of heavy read.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Heavy {
    MonteCarlo,
    Correlation,
    /// The campaign's correlation, its answer compressed (half gzip, half br).
    Compressed,
}

impl Heavy {
    fn name(self) -> &'static str {
        match self {
            Heavy::MonteCarlo => "64 concurrent Monte Carlo reads",
            Heavy::Correlation => "64 concurrent correlations",
            Heavy::Compressed => "64 concurrent gzip'd and br'd correlations",
        }
    }

    /// The `/usage` compute kind the reads are counted under.
    fn kind(self) -> &'static str {
        match self {
            Heavy::MonteCarlo => "monte_carlo",
            Heavy::Correlation => "symbol_corr",
            Heavy::Compressed => "compression",
        }
    }
}

/// Threads and resident memory (MiB) of `pid` now.
fn sample(pid: u32) -> (u64, f64) {
    (
        super::status_field(pid, "Threads:") as u64,
        super::status_field(pid, "VmRSS:") / 1024.0,
    )
}

/// The request heavy read `i` makes, built fresh for each send.
fn request(
    http: &reqwest::Client,
    base: &str,
    heavy: Heavy,
    target: &Value,
    i: usize,
) -> reqwest::RequestBuilder {
    let r = match heavy {
        Heavy::MonteCarlo => http.get(format!(
            "{base}/backtest/monte-carlo/{}?draws=10000&block=1",
            target.as_str().unwrap_or_default()
        )),
        Heavy::Correlation => http.post(format!("{base}/symbol_corr")).json(target),
        Heavy::Compressed => http
            .post(format!("{base}/symbol_corr"))
            .json(target)
            .header(
                "accept-encoding",
                if i.is_multiple_of(2) { "gzip" } else { "br" },
            ),
    };
    r.basic_auth(DEMO.0, Some(DEMO.1))
}

/// What one heavy read came to: its last status, the slowest refusal
/// (429/503) it got, whether its answer was compressed.
struct Read {
    status: u16,
    slowest_refusal: Duration,
    compressed: bool,
}

/// Heavy read `i`: sent once, or for the compressed kind until answered
/// (each refusal's `Retry-After` waited, for at most a minute).
async fn read(http: reqwest::Client, base: String, heavy: Heavy, target: Value, i: usize) -> Read {
    let give_up = Instant::now() + Duration::from_secs(60);
    let mut slowest_refusal = Duration::ZERO;
    loop {
        let started = Instant::now();
        let answer = request(&http, &base, heavy, &target, i).send().await;
        let took = started.elapsed();
        let Ok(answer) = answer else {
            return Read {
                status: 0,
                slowest_refusal,
                compressed: false,
            };
        };
        let status = answer.status().as_u16();
        let compressed = answer.headers().contains_key("content-encoding");
        let retry_after = answer
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(1);
        // Read to its end: an answer left unread holds its connection.
        let _ = answer.bytes().await;
        if matches!(status, 429 | 503) {
            slowest_refusal = slowest_refusal.max(took);
            if heavy == Heavy::Compressed && Instant::now() < give_up {
                tokio::time::sleep(Duration::from_secs(retry_after)).await;
                continue;
            }
        }
        return Read {
            status,
            slowest_refusal,
            compressed,
        };
    }
}

/// What a heavy read works on: a 20-year backtest's task id, or a
/// correlation of every sample ticker against SPX over 36 years.
async fn target(http: &reqwest::Client, base: &str, heavy: Heavy) -> Value {
    match heavy {
        Heavy::MonteCarlo => {
            let strategy = json!({
                "symbol": "SPX", "start_date": "2004-01-02", "name": "soak monte carlo",
                "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
                    "rule": {"comparison_type": "SVMA", "type_name": "CrossAbove", "comparison_value": "0", "period": "20"}}},
                "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
                    "rule": {"comparison_type": "SVMA", "type_name": "CrossBelow", "comparison_value": "0", "period": "20"}}}
            });
            let sub: Value = http
                .post(format!("{base}/backtest/start_backtest"))
                .basic_auth(DEMO.0, Some(DEMO.1))
                .json(&strategy)
                .send()
                .await
                .expect("submitted")
                .json()
                .await
                .expect("a JSON answer");
            let id = sub["task_id"].as_str().expect("a task id").to_string();
            let done = super::demo_get(http, &format!("{base}/backtest/status/{id}?wait=20")).await;
            assert_eq!(done["status"], "SUCCESS", "{done}");
            json!(id)
        }
        Heavy::Correlation => {
            // The cross-asset set and the soak's twelve sample stocks.
            let tickers = [
                "IVV", "IJH", "IJR", "EFA", "SCZ", "EEM", "AGG", "SHY", "IEF", "TLT", "TIP", "LQD",
                "VNQ", "GLD", "DBC", "HYG", "USO", "DXY", "AAPL", "MSFT", "NVDA", "AMZN", "GOOGL",
                "META", "TSLA", "JPM", "V", "JNJ", "XOM", "PG",
            ];
            json!({"benchmark": "SPX", "stock_comparison": tickers,
                "start_date": "1990-01-02", "end_date": "2025-12-31", "roll_window": 21})
        }
        Heavy::Compressed => json!({"benchmark": "SPX",
            "stock_comparison": ["IVV", "IJH", "IJR", "EFA", "EEM", "AGG", "TLT", "GLD", "DBC", "HYG"],
            "start_date": "1990-01-02", "end_date": "2026-12-31", "roll_window": 5}),
    }
}

async fn usage_ms(http: &reqwest::Client, base: &str, kind: &str) -> u64 {
    let usage = super::demo_get(http, &format!("{base}/usage")).await;
    usage["total"]["compute_ms"][kind].as_u64().unwrap_or(0)
}

pub async fn heavy_reads(bin: &Path, data: &Path, port: u16, heavy: Heavy) -> Check {
    let _ = Command::new(bin)
        .args(["--data-dir", data.to_str().unwrap(), "accounts", "add"])
        .args(["--email", CHEAP.0, "--password", CHEAP.1, "--plan", "pro"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let server = Server::start(bin, data, port, data.join("heavy.log"));
    server.ready().await;
    let base = server.base.clone();
    let http = reqwest::Client::new();
    let target = target(&http, &base, heavy).await;
    // One alone first: what a read costs when nothing else runs.
    let alone_started = Instant::now();
    let alone = request(&http, &base, heavy, &target, 0)
        .send()
        .await
        .expect("answered");
    // Read to its end: an answer left unread holds its connection, and a
    // correlation's (megabytes) would hold the server's stop until its
    // grace runs out.
    let answered = alone_started.elapsed();
    let status = alone.status().as_u16();
    let alone_compressed = alone.headers().contains_key("content-encoding");
    let body = alone.bytes().await.unwrap_or_default();
    assert_eq!(status, 200, "{:.300}", String::from_utf8_lossy(&body));
    assert_eq!(alone_compressed, heavy == Heavy::Compressed);
    let alone = answered;
    let counted_before = usage_ms(&http, &base, heavy.kind()).await;
    // The cheap tenant, signed in and warm.
    let cheap = reqwest::Client::new();
    let cheap_get = || {
        cheap
            .get(format!("{base}/backtest/tasks?limit=1"))
            .basic_auth(CHEAP.0, Some(CHEAP.1))
            .send()
    };
    assert_eq!(cheap_get().await.expect("answered").status().as_u16(), 200);
    let pid = server.pid();
    let (threads_before, rss_before) = sample(pid);
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let done = done.clone();
        tokio::spawn(async move {
            let (mut threads, mut rss) = (0u64, 0f64);
            while !done.load(Ordering::SeqCst) {
                let (t, r) = sample(pid);
                threads = threads.max(t);
                rss = rss.max(r);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            (threads, rss)
        })
    };
    let mut reads = tokio::task::JoinSet::new();
    for i in 0..REQUESTS {
        reads.spawn(read(http.clone(), base.clone(), heavy, target.clone(), i));
    }
    let cheap_times = {
        let done = done.clone();
        let mut times = Vec::new();
        // At most 100 cheap requests a second: the cheap tenant's plan
        // allows 12,000 a minute, which an unpaced loop reaches in a phase
        // of 16 s, and its own 429s would read as another tenant's slowness.
        let mut pace = tokio::time::interval(Duration::from_millis(10));
        pace.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let reads_done = async {
            let mut answers = Vec::new();
            while let Some(r) = reads.join_next().await {
                answers.push(r.expect("a read task"));
            }
            done.store(true, Ordering::SeqCst);
            answers
        };
        tokio::pin!(reads_done);
        let answers = loop {
            tokio::select! {
                answers = &mut reads_done => break answers,
                took = async {
                    pace.tick().await;
                    let t = Instant::now();
                    let ok = cheap_get().await.is_ok_and(|r| r.status().is_success());
                    (ok, t.elapsed())
                } => {
                    times.push(if took.0 { took.1.as_secs_f64() * 1000.0 } else { f64::INFINITY });
                }
            }
        };
        (times, answers)
    };
    let (mut times, answers) = cheap_times;
    let (threads_peak, rss_peak) = watcher.await.expect("the watcher");
    times.sort_by(f64::total_cmp);
    let p99 = super::percentile(&times, 0.99);
    let ok200 = answers.iter().filter(|r| r.status == 200).count();
    let compressed = answers.iter().filter(|r| r.compressed).count();
    let refused_late = answers
        .iter()
        .filter(|r| r.slowest_refusal > Duration::from_secs(2))
        .count();
    let other = answers
        .iter()
        .filter(|r| !matches!(r.status, 200 | 429 | 503))
        .count();
    // The answered reads' run time reaches /usage once counts are flushed:
    // for the compressed ones, a millisecond at least for each compression.
    let want = match heavy {
        Heavy::Compressed => compressed as u64,
        _ => (alone.as_millis() as u64 * ok200 as u64) / 2,
    };
    let flushed_by = Instant::now() + Duration::from_secs(30);
    let mut counted = usage_ms(&http, &base, heavy.kind())
        .await
        .saturating_sub(counted_before);
    while counted < want && Instant::now() < flushed_by {
        tokio::time::sleep(Duration::from_millis(500)).await;
        counted = usage_ms(&http, &base, heavy.kind())
            .await
            .saturating_sub(counted_before);
    }
    // The clients' idle connections go first, so the stop does not wait
    // for them.
    drop((http, cheap));
    server.stop();
    let grew = rss_peak - rss_before;
    let ok = other == 0
        && refused_late == 0
        && ok200 >= 1
        && (heavy != Heavy::Compressed || (ok200 == REQUESTS && compressed >= 1))
        && threads_peak <= MAX_THREADS
        && grew < 300.0
        && p99 < 50.0
        && counted >= want;
    Check {
        name: heavy.name(),
        ok,
        detail: format!(
            "{ok200} answered 200 ({compressed} compressed), {} refused (429/503), {refused_late} refused after 2 s, {other} other; one alone {:.0} ms; threads {threads_before} -> peak {threads_peak} (limit {MAX_THREADS}); memory {rss_before:.0} -> peak {rss_peak:.0} MiB (+{grew:.0}, limit 300); another tenant's cheap GET p99 {p99:.1} ms over {} requests (limit 50); /usage {} compute +{counted} ms (at least {want})",
            answers.len() - ok200 - other,
            alone.as_secs_f64() * 1000.0,
            times.len(),
            heavy.kind(),
        ),
    }
}
