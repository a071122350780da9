//! Grids of portfolios over HTTP: a batch varies a portfolio's fields; each
//! row has the metrics the same portfolio run alone answers, and the
//! batch's overfitting statistics are the engine's on the equity curves of
//! those runs; a row's Monte Carlo draws those runs' session returns; a
//! walk-forward picks, on each window, what the points run alone over its
//! sessions say. Refusals name the grid path.

use engine::backtest::monte_carlo as mc;
use engine::overfitting::{BlockSums, Moments, block_layout, cscv, deflated};
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use std::time::Duration;
use tests::server::{TestServer, eventually};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

const STOCKS: [&str; 12] = [
    "AAPL", "MSFT", "NVDA", "AMZN", "GOOGL", "META", "TSLA", "JPM", "V", "JNJ", "XOM", "PG",
];

fn portfolio() -> Value {
    json!({
        "universe": STOCKS, "start_date": "2016-01-04", "end_date": "2022-12-30",
        "commission": 0.001, "trade_price": "next_open",
        "signals": {
            "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Simple Moving Average"}, "rule": {"comparison_type": "MA", "type_name": "CrossAbove", "period": 20}}},
            "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "SMA"}, "rule": {"comparison_type": "MA", "type_name": "CrossBelow", "period": 20}}},
            "max_positions": 4, "rank_by": {"by": {"momentum": 20}},
            "sizing": {"method": "equal"}
        }
    })
}

fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1e-300),
        "{what}: {a} vs {b}"
    );
}

async fn ended(s: &TestServer, path: &str) -> Value {
    assert!(
        eventually(Duration::from_secs(120), || async {
            let st = s.get(path, DEMO).await.1;
            st["status"] == "SUCCESS" || st["status"] == "FAILED"
        })
        .await
    );
    s.get(path, DEMO).await.1
}

#[tokio::test(flavor = "multi_thread")]
async fn a_grid_of_portfolios_has_the_rows_and_statistics_of_its_portfolios_run_alone() {
    let (s, _dir) = TestServer::fresh().await;
    let slots = [2, 4, 6];
    let lookbacks = [10, 60];
    let body = json!({"name": "rotation", "portfolio": portfolio(),
        "grid": {"signals.max_positions": slots, "signals.rank_by.by.momentum": lookbacks},
        "statistics": {"blocks": 4}});
    let (status, sub) = s.post("/backtest/batch", DEMO, &body).await;
    assert_eq!(status, 202, "{sub}");
    let id = sub["task_id"].as_str().unwrap();
    let done = ended(&s, &format!("/backtest/batch/{id}")).await;
    assert_eq!(done["status"], "SUCCESS", "{done}");
    assert_eq!(
        done["paths"],
        json!(["signals.max_positions", "signals.rank_by.by.momentum"])
    );
    let rows = s
        .get(&format!("/backtest/batch/{id}/results"), DEMO)
        .await
        .1;
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 6);

    // Each point run alone as a portfolio task: the row has its metrics.
    let mut returns = Vec::new();
    for (k, row) in rows.iter().enumerate() {
        let (n, lookback) = (slots[k / 2], lookbacks[k % 2]);
        assert_eq!(row["index"], k);
        assert_eq!(
            row["params"],
            json!({"signals.max_positions": n, "signals.rank_by.by.momentum": lookback})
        );
        assert_eq!(row["error"], Value::Null, "{row}");
        let mut alone = portfolio();
        alone["signals"]["max_positions"] = json!(n);
        alone["signals"]["rank_by"]["by"]["momentum"] = json!(lookback);
        let (status, r) = s.post("/backtest/portfolio", DEMO, &alone).await;
        assert_eq!(status, 202, "{r}");
        let task = s
            .succeeded(
                &format!("/backtest/portfolio/{}", r["task_id"].as_str().unwrap()),
                DEMO,
            )
            .await;
        let r = &task["result"];
        // The row speaks 2.11's names in percent; the portfolio the
        // glossary's, in fractions (ratios the same in both).
        for (column, field, scale) in [
            ("Total Return (%)", "total_return", 100.0),
            ("CAGR", "cagr", 100.0),
            ("Sharpe Ratio", "sharpe", 1.0),
            ("Sortino Ratio", "sortino", 1.0),
            ("Annual Volatility", "annual_volatility", 100.0),
            ("Max Drawdown", "max_drawdown", 100.0),
            ("Calmar Ratio", "calmar", 1.0),
            ("Time in Market", "time_in_market", 100.0),
            ("Win Rate", "win_rate", 100.0),
            ("Average Win %", "average_win", 100.0),
            ("Average Loss %", "average_loss", 100.0),
        ] {
            close(
                row[column].as_f64().unwrap(),
                r[field].as_f64().unwrap() * scale,
                &format!("row {k} {column}"),
            );
        }
        assert_eq!(row["Total Trades"], r["total_trades"], "row {k}");
        assert_eq!(row["DrawDown Period"], r["drawdown_period"], "row {k}");
        close(
            row["BuyHoldGain"].as_f64().unwrap(),
            r["relative"]["benchmark_return"].as_f64().unwrap() * 100.0,
            &format!("row {k}: the benchmark's change"),
        );
        // The winners and losers the win rate counts.
        let (won, lost) = (
            r["winning_trades"].as_u64().unwrap(),
            r["losing_trades"].as_u64().unwrap(),
        );
        assert!(won + lost <= r["total_trades"].as_u64().unwrap());
        close(
            r["win_rate"].as_f64().unwrap(),
            won as f64 / r["total_trades"].as_f64().unwrap(),
            "the win rate",
        );
        assert!(r["total_trades"].as_u64().unwrap() > 10, "{k}: {r}");
        let equity: Vec<f64> = r["series"]["equity"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        returns.push(
            equity
                .windows(2)
                .map(|w| w[1] / w[0] - 1.0)
                .collect::<Vec<f64>>(),
        );
    }
    // The rows differ: the grid varies what the portfolio does.
    let sharpes: std::collections::HashSet<String> =
        rows.iter().map(|r| r["Sharpe Ratio"].to_string()).collect();
    assert_eq!(sharpes.len(), 6, "{sharpes:?}");

    // The statistics are the engine's on those runs' returns.
    let st = &done["statistics"];
    assert_eq!(st["strategies"], 6, "{st}");
    assert_eq!(st["observations"], returns[0].len());
    let moments: Vec<Moments> = returns.iter().map(|r| Moments::of(r)).collect();
    let d = deflated(&moments, None).unwrap();
    let ds = &st["deflated_sharpe"];
    assert_eq!(ds["best_index"], d.best);
    close(ds["sharpe"].as_f64().unwrap(), d.sharpe, "sharpe");
    close(
        ds["deflated_sharpe_ratio"].as_f64().unwrap(),
        d.dsr.unwrap(),
        "dsr",
    );
    let (skip, len) = block_layout(returns[0].len(), 4);
    let mut sums = BlockSums::new(6, 4, len);
    for (k, r) in returns.iter().enumerate() {
        sums.set(k, &r[skip..]);
    }
    let p = cscv(&sums, 1).unwrap();
    assert_eq!(st["overfitting"]["pbo"].as_f64().unwrap(), p.pbo);
    assert_eq!(st["overfitting"]["splits"], 6);

    // A row's Monte Carlo: its session returns drawn in blocks, those of
    // the same portfolio run alone; its trades are not drawn.
    let (status, mc) = s
        .get(
            &format!("/backtest/batch/{id}/monte-carlo?row=3&draws=300&seed=7&block=10"),
            DEMO,
        )
        .await;
    assert_eq!(status, 200, "{mc}");
    assert_eq!(mc["trades"], Value::Null);
    assert!(mc["notes"][0].as_str().unwrap().contains("overlap"), "{mc}");
    // The row's CAGR is 2.11's percent; the Monte Carlo's a fraction.
    close(
        mc["actual"]["cagr"].as_f64().unwrap(),
        rows[3]["CAGR"].as_f64().unwrap() / 100.0,
        "cagr",
    );
    let growth: Vec<f64> = returns[3].iter().map(|r| 1.0 + r).collect();
    let (first, last) = (
        chrono::NaiveDate::from_ymd_opt(2016, 1, 4).unwrap(),
        chrono::NaiveDate::from_ymd_opt(2022, 12, 30).unwrap(),
    );
    let plan = mc::Plan {
        how: mc::Resampling::Blocks(10),
        draws: 300,
        seed: 7,
        years: (last - first).num_days() as f64 / 365.25,
        max_points: 250,
    };
    let sim = mc::simulate(&growth, &plan, &|| true).unwrap();
    let bands = mc::bands(&sim, &[5.0, 25.0, 50.0, 75.0, 95.0]);
    let drawn = &mc["returns"];
    assert_eq!(drawn["steps"], growth.len());
    for (k, v) in bands.cagr.iter().enumerate() {
        close(drawn["cagr"][k].as_f64().unwrap(), *v, "a CAGR band");
    }
    for (k, v) in bands.final_equity.iter().enumerate() {
        close(
            drawn["final_equity"][k].as_f64().unwrap(),
            v * 100_000.0,
            "a final equity band",
        );
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_grid_of_portfolios_refuses_what_it_cannot_run_naming_the_path() {
    let (s, _dir) = TestServer::fresh().await;
    for (body, field, says) in [
        (
            json!({"portfolio": portfolio(), "grid": {"signals.max_positions": [2, 0]}}),
            "grid.signals.max_positions",
            "the value 0",
        ),
        (
            json!({"portfolio": portfolio(), "grid": {"universe.1": ["MSFT", "NOPE"]}}),
            "grid.universe.1",
            "NOPE",
        ),
        (
            json!({"portfolio": portfolio(), "grid": {"signals.slots": [2, 3]}}),
            "grid.signals.slots",
            "unknown field",
        ),
        (
            json!({"portfolio": portfolio(), "grid": {"name": ["a", "b"]}}),
            "grid.name",
            "the same",
        ),
        (
            json!({"portfolio": portfolio(), "strategy": {}, "grid": {"name": ["a"]}}),
            "portfolio",
            "not both",
        ),
    ] {
        let (status, answer) = s.post("/backtest/batch", DEMO, &body).await;
        assert_eq!(status, 400, "{body}: {answer}");
        let text = answer.to_string();
        assert!(text.contains(&format!("'{field}'")), "{field}: {answer}");
        assert!(text.contains(says), "{says}: {answer}");
    }
    s.stop().await;
}

/// The portfolio run alone as a task over `from`..=`to`: its result.
async fn alone(s: &TestServer, body: &Value, from: &str, to: &str) -> Value {
    let mut b = body.clone();
    b["start_date"] = json!(from);
    b["end_date"] = json!(to);
    let (status, sub) = s.post("/backtest/portfolio", DEMO, &b).await;
    assert_eq!(status, 202, "{sub}");
    let id = sub["task_id"].as_str().unwrap();
    s.succeeded(&format!("/backtest/portfolio/{id}"), DEMO)
        .await["result"]
        .clone()
}

/// A walk-forward over a 2 x 2 grid of momentum rotations: on each window
/// the pick is the point whose run alone over the in-sample sessions has
/// the highest Sharpe ratio (its score and return are that run's), its
/// out-of-sample figures are the run alone over the out-of-sample
/// sessions, and the stitched equity compounds those runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_grid_of_portfolios_walks_forward_as_its_points_run_alone_on_each_window() {
    let (s, _dir) = TestServer::fresh().await;
    let base = json!({"universe": ["AAPL", "MSFT", "NVDA", "AMZN", "XOM", "JNJ"],
        "start_date": "2018-01-02", "end_date": "2021-12-31", "commission": 0.001,
        "weights": {"schedule": {"every": "month"}, "select": {"method": "top", "k": 2, "by": {"momentum": 21}}}});
    let (ks, lookbacks) = ([1, 3], [21, 126]);
    let body = json!({"portfolio": base,
        "grid": {"weights.select.k": ks, "weights.select.by.momentum": lookbacks},
        "walk_forward": {"in_sample": 378, "out_of_sample": 210}});
    let (status, sub) = s.post("/backtest/batch", DEMO, &body).await;
    assert_eq!(status, 202, "{sub}");
    let id = sub["task_id"].as_str().unwrap();
    let done = ended(&s, &format!("/backtest/batch/{id}")).await;
    assert_eq!(done["status"], "SUCCESS", "{done}");
    let walk = &done["walk_forward"];
    assert_eq!(walk["notes"], json!([]), "{walk}");
    let windows = walk["windows"].as_array().unwrap();
    assert_eq!(windows.len(), 3, "{walk}");
    let points: Vec<Value> = (0..4)
        .map(|k| {
            let mut p = base.clone();
            p["weights"]["select"]["k"] = json!(ks[k / 2]);
            p["weights"]["select"]["by"]["momentum"] = json!(lookbacks[k % 2]);
            p
        })
        .collect();
    let (mut growth, mut sessions, mut picked) = (1.0, 0, std::collections::BTreeSet::new());
    for w in windows {
        let day = |k: &str| w[k].as_str().unwrap()[..10].to_string();
        let mut best: Option<(usize, Value)> = None;
        for (k, p) in points.iter().enumerate() {
            let r = alone(&s, p, &day("in_sample_start"), &day("in_sample_end")).await;
            if best
                .as_ref()
                .is_none_or(|(_, b)| r["sharpe"].as_f64() > b["sharpe"].as_f64())
            {
                best = Some((k, r));
            }
        }
        let (k, inside) = best.unwrap();
        assert_eq!(w["best_index"], k, "{w}");
        picked.insert(k);
        close(
            w["score"].as_f64().unwrap(),
            inside["sharpe"].as_f64().unwrap(),
            "the score",
        );
        close(
            w["in_sample_return"].as_f64().unwrap(),
            inside["total_return"].as_f64().unwrap(),
            "the in-sample return",
        );
        let outside = alone(
            &s,
            &points[k],
            &day("out_of_sample_start"),
            &day("out_of_sample_end"),
        )
        .await;
        for (ours, theirs) in [
            ("out_of_sample_return", "total_return"),
            ("out_of_sample_sharpe", "sharpe"),
            ("out_of_sample_max_drawdown", "max_drawdown"),
        ] {
            close(
                w[ours].as_f64().unwrap(),
                outside[theirs].as_f64().unwrap(),
                ours,
            );
        }
        assert_eq!(w["out_of_sample_trades"], outside["total_trades"]);
        growth *= 1.0 + outside["total_return"].as_f64().unwrap();
        sessions += outside["series"]["equity"].as_array().unwrap().len();
    }
    let equity = walk["equity"].as_array().unwrap();
    assert_eq!(equity.len(), sessions);
    close(
        equity.last().unwrap()["equity"].as_f64().unwrap(),
        growth,
        "the stitched equity",
    );
    close(
        walk["total_return"].as_f64().unwrap(),
        growth - 1.0,
        "the stitched return",
    );
    println!("picks {picked:?}, stitched growth {growth}");
    s.stop().await;
}
