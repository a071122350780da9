//! A 500-symbol, 20-year portfolio in signal mode, end to end against
//! vectorbt in one run: `cargo bench -p tests --bench portfolio` (add
//! `-- --write-docs` to put the figures into docs/portfolios.md).
//!
//! 500 sample stocks from 2006 to 2026, the close crossing its 50-session
//! average in and out, 20 slots ranked by 20-session momentum, 5% of the
//! free cash each, next-open fills, 0.1% commission:
//! `Client.portfolio(...).wait()` from the working tree's package over
//! HTTP to the embedded server (the submit, the server's work, the
//! long-poll and the whole answer parsed) against vectorbt's signals and
//! `Portfolio.from_signals` of the same orders (numba warmed), timed
//! interleaved in one Python process. Both final values must agree. Then
//! a 1,000-point grid of that portfolio with its statistics, through the
//! package's `batch(portfolio=..., grid=...)`.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::LocalDir;
use serde_json::json;
use tests::server::{Options, TestServer};

fn main() {
    let write = std::env::args().any(|a| a == "--write-docs");
    if tests::reference::find().is_none() {
        println!("  skipped: the reference venv is missing (tests/run creates it)");
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let data = tempfile::tempdir().unwrap();
        let config = sample::SampleConfig {
            stocks: 500,
            start: chrono::NaiveDate::from_ymd_opt(2006, 1, 3).unwrap(),
            intraday_days: 5,
            ..Default::default()
        };
        sample::generate(&config, &LocalDir::new(data.path())).unwrap();
        let db = tempfile::tempdir().unwrap();
        let mut opts = Options::new(db.path().join("db.sqlite"));
        opts.market_dir = data.path().to_path_buf();
        let s = TestServer::start(opts).await;
        let universe: Vec<String> = s
            .state
            .market
            .symbols()
            .await
            .unwrap()
            .iter()
            .filter(|i| i.asset_class == "stock")
            .map(|i| i.symbol.clone())
            .take(500)
            .collect();
        assert_eq!(universe.len(), 500);
        // Where the server's time goes, in process: the request checked
        // against the data, the run, the answer encoded.
        let body = json!({
            "universe": universe, "start_date": "2006-06-01", "end_date": "2026-11-20",
            "trade_price": "next_open", "commission": 0.001,
            "signals": {
                "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Simple Moving Average"}, "rule": {"comparison_type": "MA", "type_name": "CrossAbove", "period": 50}}},
                "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Simple Moving Average"}, "rule": {"comparison_type": "MA", "type_name": "CrossBelow", "period": 50}}},
                "max_positions": 20, "rank_by": {"by": {"momentum": 20}},
                "sizing": {"method": "fixed_fraction", "fraction": 0.05}
            }
        });
        let market = s.state.market.clone();
        let (mut prep, mut run, mut encode) = (Vec::new(), Vec::new(), Vec::new());
        let mut bytes = 0;
        for _ in 0..6 {
            let t0 = std::time::Instant::now();
            let p = services::backtest::portfolio::prepare(market.as_ref(), &body).await.unwrap();
            let t1 = std::time::Instant::now();
            let r = services::backtest::portfolio::execute(market.as_ref(), p).await.unwrap();
            let t2 = std::time::Instant::now();
            bytes = serde_json::to_vec(&r).unwrap().len();
            let t3 = std::time::Instant::now();
            prep.push(t1 - t0);
            run.push(t2 - t1);
            encode.push(t3 - t2);
        }
        let median = |v: &mut Vec<std::time::Duration>| {
            v.sort();
            v[v.len() / 2].as_secs_f64() * 1e3
        };
        println!(
            "  in process: checked against the data {:.1} ms, run {:.1} ms, answer encoded {:.1} ms ({:.1} MB)",
            median(&mut prep),
            median(&mut run),
            median(&mut encode),
            bytes as f64 / 1e6
        );
        // The run's own phases: rules built per symbol, bars laid on the
        // calendar, signals evaluated, the simulation, the answer built.
        let mut phases: Vec<Vec<std::time::Duration>> = vec![Vec::new(); 5];
        for _ in 0..6 {
            use services::backtest::portfolio::{blocks, compute, prepare};
            let p = prepare(market.as_ref(), &body).await.unwrap();
            let t0 = std::time::Instant::now();
            let b = blocks(market.as_ref(), &p).await.unwrap();
            let t1 = std::time::Instant::now();
            let laid = compute::Laid::new(&p);
            let t2 = std::time::Instant::now();
            let firing = compute::Firing::new(&p, &laid, &b);
            let t3 = std::time::Instant::now();
            let out = compute::simulate(&p, &laid, Some(&firing), true);
            let t4 = std::time::Instant::now();
            let _ = compute::figures(&p, &out);
            let t5 = std::time::Instant::now();
            for (k, d) in [t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4].into_iter().enumerate() {
                phases[k].push(d);
            }
        }
        let shown: Vec<String> = ["rules built", "bars laid", "signals", "simulation", "figures"]
            .iter()
            .zip(&mut phases)
            .map(|(name, d)| format!("{name} {:.1} ms", median(d)))
            .collect();
        println!("  the run: {}", shown.join(", "));
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../clients/python/src");
        let input = json!({
            "url": s.base, "user": DEMO_EMAIL, "password": DEMO_PASSWORD, "src": src,
            "data": data.path(), "universe": universe, "start": "2006-06-01", "end": "2026-11-20",
            "runs": 15, "peer_runs": 5,
        });
        let r = tokio::task::spawn_blocking(move || tests::reference::run("time_portfolio.py", &input))
            .await
            .unwrap();
        let f = |k: &str| r[k].as_f64().unwrap();
        assert!(
            (f("final") - f("peer_final")).abs() <= 1e-6 * f("peer_final"),
            "the same portfolio: {r}"
        );
        assert_eq!(r["orders"], r["peer_orders"], "{r}");
        let line = format!(
            "{} symbols x {} sessions, 20 slots: `Client.portfolio(...).wait()` p50 {:.0} ms (p90 {:.0} ms; {} orders) vs vectorbt's signals and `from_signals` p50 {:.0} ms: **{:.1}x faster** ({} and {} runs)",
            r["symbols"],
            r["sessions"],
            f("p50") * 1e3,
            f("p90") * 1e3,
            r["orders"],
            f("peer_p50") * 1e3,
            f("peer_p50") / f("p50"),
            r["runs"],
            r["peer_runs"],
        );
        println!("portfolio, end to end (embedded server, release build)\n  {line}");
        println!("  phases: {}", r["phases"]);
        let tables_line = format!(
            "then the equity, orders and trades tables the wait leaves unread, as Arrow: {:.0} ms",
            f("tables") * 1e3
        );
        println!("  {tables_line}");
        // A 1,000-point grid of that portfolio, with its statistics.
        let input = json!({
            "url": s.base, "user": DEMO_EMAIL, "password": DEMO_PASSWORD, "src": src,
            "universe": universe, "start": "2006-06-01", "end": "2026-11-20",
        });
        let g = tokio::task::spawn_blocking(move || tests::reference::run("time_portfolio_grid.py", &input))
            .await
            .unwrap();
        let seconds = g["seconds"].as_f64().unwrap();
        let grid_line = format!(
            "a grid of {} such portfolios (25 slot counts x 40 momentum lookbacks) with its statistics, `Client.batch(portfolio=..., grid=...).wait()` then `results` and `statistics`: **{:.1} s** ({:.0} ms a portfolio on 2 cores; vectorbt at its p50 above would take {:.0} s for the same points one at a time)",
            g["rows"],
            seconds,
            seconds * 1e3 / g["rows"].as_f64().unwrap(),
            f("peer_p50") * g["rows"].as_f64().unwrap(),
        );
        println!("  {grid_line}");
        if write {
            tests::bench::write_docs_block(
                "portfolios.md",
                "portfolio-speed",
                &[line, tables_line, grid_line],
            );
        }
        s.stop().await;
    });
}
