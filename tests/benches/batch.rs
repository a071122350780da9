//! Batch backtests: `cargo bench -p tests --bench batch`.
//!
//! A 10,000-combination SMA-crossover grid (fast 2..=101 x slow 10..=208,
//! entry on fast crossing above slow, exit on crossing below, filled at the
//! close, no costs):
//! - the engine alone (one workspace of shared averages and crossings per
//!   thread, the simulation on firings), on 1 and 2 threads, against
//!   vectorbt's whole job and its `from_signals` alone on the same bars in
//!   the same run, with a sample of pairs checked equal;
//! - end to end over HTTP on the embedded server (2 workers, loopback),
//!   from the submit to the finished table, over 20 years of SPX bars;
//! - a 200-window walk-forward of a 1,000-pair grid end to end over HTTP.
//!
//! `-- engine` runs the engine alone without the peer, `-- http` the end to
//! end part alone, `-- walk-forward` the walk-forward alone.

use engine::Bars;
use engine::backtest::{Metrics, simulate};
use engine::rules::Op;
use engine::workspace::Workspace;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
use serde_json::{Value, json};
use services::analytics::scanner::nightly::Schedule;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tests::bench::median;
use tests::reference::crossover_rule;
use tests::server::{Options, TestServer};

fn fast_windows() -> Vec<usize> {
    (2..=101).collect()
}

fn slow_windows() -> Vec<usize> {
    (0..100).map(|k| 10 + 2 * k).collect()
}

fn pairs() -> Vec<(usize, usize)> {
    let slow = slow_windows();
    fast_windows()
        .into_iter()
        .flat_map(|f| slow.iter().map(move |s| (f, *s)))
        .collect()
}

/// The grid on `threads` threads, each with its own workspace.
fn engine_grid(
    bars: &Bars,
    pairs: &[(usize, usize)],
    start: usize,
    threads: usize,
) -> Vec<Metrics> {
    let settings = tests::reference::close_fills(start);
    let settings = &settings;
    std::thread::scope(|scope| {
        let parts: Vec<_> = pairs
            .chunks(pairs.len().div_ceil(threads))
            .map(|part| {
                scope.spawn(move || {
                    let mut ws = Workspace::new(bars);
                    part.iter()
                        .map(|&(f, s)| {
                            let entry = ws.block(&crossover_rule(f, s, Op::CrossAbove));
                            let exit = ws.block(&crossover_rule(f, s, Op::CrossBelow));
                            simulate(bars, &entry, &exit, settings).metrics
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        parts.into_iter().flat_map(|h| h.join().unwrap()).collect()
    })
}

/// The engine against vectorbt on `bars` (or GOOG's, when `bars` is None).
fn against_vectorbt(label: &str, bars: Option<&Bars>, start: usize, peer: bool) {
    let pairs = pairs();
    let sample: Vec<[usize; 2]> = pairs.iter().step_by(50).map(|(f, s)| [*f, *s]).collect();
    let mut req = json!({"fast": fast_windows(), "slow": slow_windows(), "start": start,
        "sample": sample, "exact": true, "repeat": if peer { 3 } else { 0 }});
    match bars {
        Some(b) => req["close"] = json!(b.close),
        None => req["goog"] = json!(true),
    }
    // The bars of GOOG come from the peer's script even when it is not timed.
    let peer = (peer || bars.is_none())
        .then(tests::reference::find)
        .flatten()
        .map(|_| tests::reference::run("vectorbt_sma_grid.py", &req));
    let goog;
    let bars = match (bars, &peer) {
        (Some(b), _) => b,
        (None, Some(r)) => {
            goog = tests::reference::bars_from(&r["bars"]);
            &goog
        }
        (None, None) => {
            println!("{label}: skipped, the reference venv is missing (tests/run creates it)");
            return;
        }
    };
    let n = pairs.len() as f64;
    let one = median(Duration::from_secs(3), || {
        std::hint::black_box(engine_grid(bars, &pairs, start, 1));
    });
    let two = median(Duration::from_secs(3), || {
        std::hint::black_box(engine_grid(bars, &pairs, start, 2));
    });
    let rate = |d: Duration| n / d.as_secs_f64();
    println!(
        "{label} ({} bars, {} in the window), {} pairs: engine {:.0} pairs/s on 1 thread ({:.1} ms), {:.0} pairs/s on 2 ({:.1} ms; target 200,000)",
        bars.len(),
        bars.len() - start,
        pairs.len(),
        rate(one),
        one.as_secs_f64() * 1e3,
        rate(two),
        two.as_secs_f64() * 1e3,
    );
    let Some(r) = peer.filter(|r| r.get("whole_seconds").is_some()) else {
        println!("  vectorbt not timed (`-- engine`, or no reference venv)");
        return;
    };
    let whole = r["whole_seconds"].as_f64().unwrap();
    let signals = r["from_signals_seconds"].as_f64().unwrap();
    println!(
        "  vectorbt 1.2, same bars and grid: whole job {:.0} pairs/s ({:.2} s), from_signals alone {:.0} pairs/s -> engine on 2 threads {:.0}x the whole job, {:.0}x from_signals",
        n / whole,
        whole,
        n / signals,
        whole / two.as_secs_f64(),
        signals / two.as_secs_f64(),
    );
    // The sample equal, apart from pairs vectorbt's rolling mean misorders.
    let ours = engine_grid(bars, &pairs, start, 2);
    let (mut same, mut theirs_wrong) = (0, 0);
    for t in r["results"].as_array().unwrap() {
        let (f, s) = (
            t["fast"].as_u64().unwrap() as usize,
            t["slow"].as_u64().unwrap() as usize,
        );
        if !t["vbt_sign_errors"].as_array().unwrap().is_empty() {
            theirs_wrong += 1;
            continue;
        }
        let m = &ours[pairs.iter().position(|p| *p == (f, s)).unwrap()];
        let want = t["total_return"].as_f64().unwrap();
        assert_eq!(
            m.total_trades as u64,
            t["trades"].as_u64().unwrap(),
            "SMA {f}/{s}"
        );
        assert!(
            (m.total_return - want).abs() <= 1e-9 * want.abs().max(1.0),
            "SMA {f}/{s}: {} vs {want}",
            m.total_return
        );
        same += 1;
    }
    println!(
        "  sample of {} pairs: {same} equal (trades, total return to 1e-9), {theirs_wrong} skipped where vectorbt's rolling mean misorders the averages",
        same + theirs_wrong
    );
}

/// A 1,000-pair grid (fast 2..=41 x slow 10..=58) walked forward over
/// 200 windows of the 20 years (252 sessions in sample, 24 out), rolling
/// and anchored, end to end over HTTP: submit to the finished batch with
/// its walk-forward.
async fn walk_forward(s: &TestServer, http: &reqwest::Client, strategy: &Value, bars: usize) {
    let grid = json!({
        "entry.condition.signal.params.period,exit.condition.signal.params.period": fast_windows()[..40],
        "entry.condition.rule.period,exit.condition.rule.period": slow_windows()[..25],
    });
    let out = (bars - 252).div_ceil(200);
    for anchored in [false, true] {
        let body = json!({"strategy": strategy, "grid": grid,
            "walk_forward": {"in_sample": 252, "out_of_sample": out, "anchored": anchored}});
        let (_, total, done) = batch_to_success(s, http, &body).await;
        let w = &done["walk_forward"];
        let windows = w["windows"].as_array().unwrap().len();
        assert_eq!(
            (windows, done["rows"].as_array().unwrap().len()),
            (200, 1000),
            "{w}"
        );
        println!(
            "walk-forward of 1,000 SMA crossovers over {bars} bars of SPX, {windows} {} windows (252 in sample, {out} out) end to end over HTTP: {total:.2} s (target: under 10 s); out of sample {:.1}%, efficiency {}",
            if anchored { "anchored" } else { "rolling" },
            w["total_return"].as_f64().unwrap() * 100.0,
            w["efficiency"]
        );
    }
}

/// Submits a batch and polls it to SUCCESS: seconds to the submit's
/// answer and to the finished batch, and its status.
async fn batch_to_success(
    s: &TestServer,
    http: &reqwest::Client,
    body: &Value,
) -> (f64, f64, Value) {
    let t0 = Instant::now();
    let sub = demo(http.post(s.url("/backtest/batch")).json(body)).await;
    let submitted = t0.elapsed().as_secs_f64();
    let id = sub["task_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{sub}"))
        .to_string();
    loop {
        let mut st = demo(http.get(s.url(&format!("/backtest/batch/{id}")))).await;
        if st["status"] == "SUCCESS" {
            // The status stays small; the rows are the results table's.
            st["rows"] = demo(http.get(s.url(&format!("/backtest/batch/{id}/results")))).await;
            return (submitted, t0.elapsed().as_secs_f64(), st);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The JSON answer of a request as the demo account.
async fn demo(req: reqwest::RequestBuilder) -> Value {
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
            follow: false,
        };
        let market_dir = opts.market_dir.clone();
        let s = TestServer::start(opts).await;
        let md = ParquetMarketData::new(Arc::new(LocalDir::new(&market_dir)));
        let spx = md.daily("SPX").await.unwrap();
        let last = spx.date(spx.len() - 1);
        let from = last - chrono::Months::new(240);
        let start = spx.time.partition_point(|t| t.date() < from);

        let only = std::env::args().skip(1).find(|a| !a.starts_with('-'));
        let part = |name: &str| only.as_deref().is_none_or(|o| o == name);
        if part("engine") {
            let peer = only.is_none();
            against_vectorbt("GOOG (backtesting.py's bars)", None, 0, peer);
            against_vectorbt("SPX, 20 years", Some(&spx), start, peer);
        }
        // End to end: the same grid as one batch, entry and exit periods linked.
        let side = |op: &str| {
            json!({"rule_type": "SingleCondition", "condition": {
                "signal": {"name": "Simple Moving Average", "params": {"period": 10}},
                "rule": {"comparison_type": "MA", "type_name": op, "period": 50}}})
        };
        let strategy = json!({"symbol": "SPX", "start_date": from.to_string(), "risk_control": "//",
            "entry": side("CrossAbove"), "exit": side("CrossBelow")});
        let http = reqwest::Client::new();
        if part("walk-forward") {
            walk_forward(&s, &http, &strategy, spx.len() - start).await;
        }
        if !part("http") {
            s.stop().await;
            return;
        }
        // Each size with the overfitting statistics (the default) and
        // without (`statistics: false`), alternating, so the statistics'
        // cost end to end is a difference within one run.
        for (fast, slow) in [(10usize, 10usize), (100, 100)] {
            let grid = json!({
                "entry.condition.signal.params.period,exit.condition.signal.params.period": fast_windows()[..fast],
                "entry.condition.rule.period,exit.condition.rule.period": slow_windows()[..slow],
            });
            let n = fast * slow;
            let mut runs: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
            for round in 0..3 {
                for (k, statistics) in [json!(true), json!(false)].into_iter().enumerate() {
                    let body = json!({"strategy": strategy, "grid": grid, "statistics": statistics});
                    let (submitted, total, table) = batch_to_success(&s, &http, &body).await;
                    assert_eq!(table["rows"].as_array().unwrap().len(), n);
                    assert_eq!(table["statistics"].is_null(), k == 1);
                    runs[k].push(total);
                    if round == 0 && k == 0 {
                        println!(
                            "batch of {n} SMA crossovers over 20 years of SPX ({} bars) end to end over HTTP: submit (every strategy checked) {submitted:.3} s",
                            spx.len() - start,
                        );
                    }
                }
            }
            let median = |v: &mut Vec<f64>| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            let (with, without) = (median(&mut runs[0]), median(&mut runs[1]));
            println!(
                "  to the finished table, median of 3: {with:.3} s with the overfitting statistics, {without:.3} s without: they add {:.3} s; {:.0} strategies/s without (target: 10,000 in under 1 s; the statistics adding under 1 s)",
                with - without,
                n as f64 / without
            );
        }
        s.stop().await;
    });
}
