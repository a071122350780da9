//! Backtest benchmarks: `cargo bench -p tests --bench backtest`.
//!
//! Engine timings are medians over repeated runs; the backtesting.py peer is
//! timed in the same run on the same bars (when the reference venv exists),
//! and the end-to-end task latency goes through the embedded server over HTTP.

use chrono::NaiveDate;
use engine::Bars;
use engine::backtest::{Direction, RiskControl, Settings, TradePrice, run};
use engine::indicators::sma;
use engine::rules::{MaKind, Op, Target, Transform, evaluate};
use engine::strategy::{Block, BlockKind, Column, Comparison, Condition, Source, Technical};
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
use sample::{SampleConfig, generate};
use serde_json::json;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tests::bench::median;
use tests::server::{Options, TestServer};

fn settings(tp: TradePrice, risk: RiskControl) -> Settings {
    Settings {
        direction: Direction::Long,
        trade_price: tp,
        capital_alloc: 1.0,
        commission: 0.0,
        slippage: 0.0,
        risk,
        bars_per_year: 252.0,
        start: 0,
    }
}

fn fmt(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1000.0 {
        format!("{us:.1} us")
    } else if us < 1e6 {
        format!("{:.2} ms", us / 1000.0)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// SMA(10/20) crossover: signals from the close, then the simulation.
fn sma_cross(b: &Bars) -> usize {
    let (f, s) = (sma(&b.close, 10), sma(&b.close, 20));
    let entry = evaluate(&f, Op::CrossAbove, &Target::Series(s.clone()));
    let exit = evaluate(&f, Op::CrossBelow, &Target::Series(s));
    run(
        b,
        &entry,
        &exit,
        &settings(TradePrice::CurrentClose, RiskControl::default()),
    )
    .trades
    .len()
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    // `-- monte-carlo`: that part alone.
    if std::env::args().any(|a| a == "monte-carlo") {
        monte_carlo(&rt);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let config = SampleConfig {
        stocks: 10,
        intraday_days: 10,
        start: NaiveDate::from_ymd_opt(1987, 1, 2).unwrap(),
        ..SampleConfig::default()
    };
    generate(&config, &LocalDir::new(dir.path().join("market"))).unwrap();
    let md = ParquetMarketData::new(Arc::new(LocalDir::new(dir.path().join("market"))));
    let spx = rt.block_on(md.daily("SPX")).unwrap();
    let last = |n: usize| spx.slice_dates(Some(spx.date(spx.len() - n)), None);
    println!("backtest benchmarks (median wall time; sample SPX daily bars)");

    for n in [2_000, 10_000] {
        let b = last(n.min(spx.len()));
        let t = median(Duration::from_secs(2), || {
            black_box(sma_cross(black_box(&b)));
        });
        println!(
            "  SMA 10/20 crossover, {} bars (signals + simulation): {}",
            b.len(),
            fmt(t)
        );
    }

    // Peer: backtesting.py on its own GOOG bars, and the engine on the same bars.
    if tests::reference::find().is_some() {
        let r = tests::reference::run("time_backtesting.py", &json!({"runs": 15}));
        let f = |k: &str| {
            r[k].as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect::<Vec<_>>()
        };
        let (o, h, l, c) = (f("open"), f("high"), f("low"), f("close"));
        let mut goog = Bars::default();
        for (i, d) in r["dates"].as_array().unwrap().iter().enumerate() {
            let d: NaiveDate = d.as_str().unwrap().parse().unwrap();
            goog.push(d.and_hms_opt(0, 0, 0).unwrap(), o[i], h[i], l[i], c[i], 0.0);
        }
        let ours = median(Duration::from_secs(2), || {
            black_box(sma_cross(black_box(&goog)));
        });
        let peer = Duration::from_secs_f64(r["median_seconds"].as_f64().unwrap());
        println!(
            "  peer, same {} GOOG bars: engine {} vs backtesting.py {} -> {:.0}x faster",
            goog.len(),
            fmt(ours),
            fmt(peer),
            peer.as_secs_f64() / ours.as_secs_f64()
        );
    } else {
        println!("  peer skipped: the reference venv is missing (tests/run creates it)");
    }

    // TimeOrder over 30 years: Optix below 30, then RSI below 35, then close above its 50-day SMA.
    let b30 = last(252 * 30);
    let optix = rt.block_on(md.indicator_series("SPX_OPTIX")).unwrap();
    let aligned = services::backtest::run::align(&optix, &b30.time, false);
    let cond = |source: Source, op: Op, comparison: Comparison| Condition {
        source,
        transform: None,
        op,
        comparison,
    };
    let time_order = Block {
        kind: BlockKind::TimeOrder { window: 21 },
        conditions: vec![
            Condition {
                source: Source::Series(Arc::new(aligned)),
                transform: Some(Transform::RangeRank(252)),
                op: Op::Lt,
                comparison: Comparison::Value(20.0),
            },
            cond(
                Source::Technical(Technical::Rsi(14)),
                Op::Lt,
                Comparison::Value(35.0),
            ),
            cond(
                Source::Column(Column::Close),
                Op::CrossAbove,
                Comparison::CloseAverage {
                    kind: MaKind::Simple,
                    period: 50,
                    offset_pct: 0.0,
                },
            ),
        ],
        delay_bars: 0,
    };
    let exit = Block {
        kind: BlockKind::Single,
        conditions: vec![cond(
            Source::Column(Column::Close),
            Op::CrossBelow,
            Comparison::OwnAverage {
                kind: MaKind::Exponential,
                period: 20,
                offset_pct: 0.0,
            },
        )],
        delay_bars: 0,
    };
    let risk = RiskControl {
        stop_loss_pct: Some(8.0),
        take_profit_pct: None,
        max_holding_bars: Some(63),
    };
    let t = median(Duration::from_secs(2), || {
        let (e, x) = (time_order.signal(&b30), exit.signal(&b30));
        black_box(
            run(&b30, &e, &x, &settings(TradePrice::NextOpen, risk))
                .trades
                .len(),
        );
    });
    println!(
        "  TimeOrder (3 steps, qualifier, risk control), {} bars: {}",
        b30.len(),
        fmt(t)
    );

    // A 4,000-combination sweep: fast 5-54 x slow 60-139 SMAs on 10 years.
    let b10 = last(2_520);
    let started = Instant::now();
    let smas: Vec<Vec<f64>> = (0..140)
        .map(|n| if n == 0 { vec![] } else { sma(&b10.close, n) })
        .collect();
    let mut best = (f64::MIN, 0, 0);
    let mut combos = 0;
    for fast in 5..55 {
        for slow in 60..140 {
            let entry = evaluate(
                &smas[fast],
                Op::CrossAbove,
                &Target::Series(smas[slow].clone()),
            );
            let exit = evaluate(
                &smas[fast],
                Op::CrossBelow,
                &Target::Series(smas[slow].clone()),
            );
            let r = run(
                &b10,
                &entry,
                &exit,
                &settings(TradePrice::CurrentClose, RiskControl::default()),
            );
            if r.metrics.total_return > best.0 {
                best = (r.metrics.total_return, fast, slow);
            }
            combos += 1;
        }
    }
    let sweep = started.elapsed();
    println!(
        "  sweep of {combos} SMA pairs on {} bars: {} ({} per combination; best {}/{})",
        b10.len(),
        fmt(sweep),
        fmt(sweep / combos),
        best.1,
        best.2
    );

    // End to end: submit -> SUCCESS through the embedded server, 200 tasks one after another.
    rt.block_on(async {
        let db = tempfile::tempdir().unwrap();
        let s = TestServer::start(Options::new(db.path().join("db.sqlite"))).await;
        let client = reqwest::Client::new();
        let body = json!({
            "symbol": "SPX", "start_date": "2000-01-01", "risk_control": "-8//63",
            "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossBelow", "comparison_value": "30"}}},
            "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossAbove", "comparison_value": "70"}}}
        });
        let mut latencies = Vec::new();
        for _ in 0..200 {
            let t0 = Instant::now();
            let r: serde_json::Value = client.post(s.url("/backtest/start_backtest")).basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD)).json(&body).send().await.unwrap().json().await.unwrap();
            let path = s.url(&format!("/backtest/status/{}", r["task_id"].as_str().unwrap()));
            loop {
                let t: serde_json::Value = client.get(&path).basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD)).send().await.unwrap().json().await.unwrap();
                match t["status"].as_str() {
                    Some("SUCCESS") => break,
                    Some("FAILED") => panic!("{t}"),
                    _ => tokio::time::sleep(Duration::from_micros(500)).await,
                }
            }
            latencies.push(t0.elapsed());
        }
        latencies.sort();
        println!(
            "  end to end, submit to SUCCESS over HTTP (200 tasks, {} bars each): p50 {}, p99 {}",
            s.state.market.bars("SPX", engine::Frequency::Daily, NaiveDate::from_ymd_opt(2000, 1, 1), None).await.unwrap().len(),
            fmt(latencies[99]),
            fmt(latencies[197])
        );

        // Listing an account of 10,000 tasks: the first page, a deep page.
        for i in 0..10_000 {
            s.state
                .tasks
                .create(platform::tasks::NewTask {
                    owner: DEMO_EMAIL.into(),
                    kind: if i % 10 == 0 { platform::tasks::TaskKind::CpmScan } else { platform::tasks::TaskKind::StrategyBacktest },
                    params: json!({"symbol": "SPX", "name": format!("t{i}")}),
                })
                .await
                .unwrap();
        }
        for (label, path) in [
            ("first page", "/backtest/tasks?limit=20"),
            ("page at offset 5000", "/backtest/tasks?limit=20&offset=5000"),
            ("SUCCESS filter", "/backtest/tasks?limit=20&status=SUCCESS"),
        ] {
            let mut times = Vec::new();
            for _ in 0..200 {
                let t0 = Instant::now();
                let r = client.get(s.url(path)).basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD)).send().await.unwrap();
                assert_eq!(r.status().as_u16(), 200);
                let _ = r.bytes().await.unwrap();
                times.push(t0.elapsed());
            }
            times.sort();
            println!(
                "  GET /backtest/tasks, account of 10,200 tasks, {label}: p50 {}, p99 {}",
                fmt(times[99]),
                fmt(times[197])
            );
        }
        // The count a listing used to run (a scan of the owner's rows), on the same file.
        let conn = rusqlite::Connection::open(db.path().join("db.sqlite")).unwrap();
        let scan = median(Duration::from_millis(500), || {
            let n: i64 = conn
                .query_row(
                    "SELECT COUNT(*) FROM tasks WHERE owner = ?1 AND kind IN ('strategy_backtest')",
                    [DEMO_EMAIL],
                    |r| r.get(0),
                )
                .unwrap();
            black_box(n);
        });
        let counted = median(Duration::from_millis(500), || {
            let n: i64 = conn
                .query_row(
                    "SELECT COALESCE(SUM(n), 0) FROM task_counts WHERE owner = ?1 AND kind IN ('strategy_backtest')",
                    [DEMO_EMAIL],
                    |r| r.get(0),
                )
                .unwrap();
            black_box(n);
        });
        println!(
            "  listing total for 10,200 tasks: scanning the owner's rows {} vs trigger-kept counts {} ({:.0}x)",
            fmt(scan),
            fmt(counted),
            scan.as_secs_f64() / counted.as_secs_f64()
        );
        s.stop().await;
    });
    monte_carlo(&rt);
}

/// Monte Carlo of a 30-year daily backtest: over HTTP as a user asks for
/// it (1,000 and 10,000 draws of both methods), and the engine's bootstrap
/// against numpy's, vectorised, on the same growth factors.
fn monte_carlo(rt: &tokio::runtime::Runtime) {
    use engine::backtest::monte_carlo::{Plan, Resampling, bands, simulate};
    rt.block_on(async {
        let db = tempfile::tempdir().unwrap();
        let s = TestServer::start(Options::new(db.path().join("db.sqlite"))).await;
        let demo = Some((DEMO_EMAIL, DEMO_PASSWORD));
        let body = json!({
            "symbol": "SPX", "start_date": "1995-01-03", "risk_control": "-5//21",
            "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
                "rule": {"comparison_type": "SVMA", "type_name": "CrossAbove", "comparison_value": "0", "period": "50"}}},
            "exit": {"rule_type": "RiskControlOnly"}
        });
        let (_, sub) = s.post("/backtest/start_backtest", demo, &body).await;
        let id = sub["task_id"].as_str().unwrap().to_string();
        let task = s.succeeded(&format!("/backtest/status/{id}"), demo).await;
        let (_, chart) = s.get(&format!("/backtest/chart/{id}"), demo).await;
        let equity: Vec<f64> = chart["equity"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let returns: Vec<f64> = equity.windows(2).map(|w| w[1] / w[0]).collect();
        let trades: Vec<f64> = task["result"]["Each Return"].as_array().unwrap().iter().map(|v| 1.0 + v.as_f64().unwrap() / 100.0).collect();
        let block = (returns.len() as f64).cbrt().round() as usize;
        let client = reqwest::Client::new();
        for draws in [1_000, 10_000] {
            let url = s.url(&format!("/backtest/monte-carlo/{id}?draws={draws}&seed=1"));
            let mut times = Vec::new();
            for _ in 0..7 {
                let t0 = Instant::now();
                let r = client.get(&url).basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD)).send().await.unwrap();
                assert_eq!(r.status().as_u16(), 200);
                let _ = r.bytes().await.unwrap();
                times.push(t0.elapsed());
            }
            times.sort();
            println!(
                "  Monte Carlo over HTTP, {draws} draws of {} trades and of {} bar returns (blocks of {block}), the whole answer: p50 {}",
                trades.len(),
                returns.len(),
                fmt(times[3])
            );
        }
        s.stop().await;

        let draws = 10_000;
        let years = 30.0;
        let engine = |growth: &[f64], how: Resampling| {
            let plan = Plan { how, draws, seed: 1, years, max_points: 250 };
            median(Duration::from_secs(3), || {
                let sim = simulate(growth, &plan, &|| true).expect("not stopped");
                black_box(bands(&sim, &[5.0, 25.0, 50.0, 75.0, 95.0]));
            })
        };
        let ours_trades = engine(&trades, Resampling::Independent);
        let ours_returns = engine(&returns, Resampling::Blocks(block));
        println!(
            "  engine, {draws} draws on 2 threads: trades {}, bar returns in blocks {}",
            fmt(ours_trades),
            fmt(ours_returns)
        );
        if tests::reference::find().is_none() {
            println!("  peer skipped: the reference venv is missing (tests/run creates it)");
            return;
        }
        let file = |v: &[f64]| {
            let f = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(f.path(), v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>()).unwrap();
            f
        };
        let (tf, rf) = (file(&trades), file(&returns));
        let peer = tests::reference::run(
            "time_monte_carlo.py",
            &json!({"trades": tf.path(), "returns": rf.path(), "draws": draws, "block": block, "years": years, "runs": 5}),
        );
        for (name, ours) in [("trades", ours_trades), ("returns", ours_returns)] {
            let theirs = Duration::from_secs_f64(peer[name].as_f64().unwrap());
            println!(
                "  peer, {name}: engine {} vs numpy (vectorised) {} -> {:.1}x faster",
                fmt(ours),
                fmt(theirs),
                theirs.as_secs_f64() / ours.as_secs_f64()
            );
        }
    });
}
