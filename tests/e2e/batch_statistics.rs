//! A finished batch's overfitting statistics over HTTP: computed from the
//! returns its chunks kept (equal to the single backtest's equity curve),
//! in the JSON, the Parquet table's metadata and kept once; the settings
//! checked and named when wrong.

use engine::overfitting::{BlockSums, Moments, block_layout, cscv, deflated};
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::returns::ReturnStore;
use serde_json::{Value, json};
use services::backtest::batch;
use std::sync::Arc;
use std::time::Duration;
use tests::server::{Options, TestServer, eventually, private_market};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

fn sma_strategy(period: &str, risk: &str) -> Value {
    json!({"symbol": "SPX", "start_date": "2012-01-03", "risk_control": risk,
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
            "rule": {"comparison_type": "SVMA", "type_name": ">=", "comparison_value": "0", "period": period}}},
        "exit": {"rule_type": "RiskControlOnly"}})
}

/// The ended batch's status, with its rows from the results table once it
/// succeeded (the status itself never carries them).
async fn finished(s: &TestServer, path: &str) -> Value {
    assert!(
        eventually(Duration::from_secs(120), || async {
            let st = s.get(path, DEMO).await.1;
            st["status"] == "SUCCESS" || st["status"] == "FAILED"
        })
        .await
    );
    let mut done = s.get(path, DEMO).await.1;
    assert!(done.get("rows").is_none(), "the status stays small: {done}");
    if done["status"] == "SUCCESS" {
        done["rows"] = s.get(&format!("{path}/results"), DEMO).await.1;
    }
    done
}

fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1e-300),
        "{what}: {a} vs {b}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_grid_s_statistics_come_from_its_kept_returns_and_reach_every_form_of_its_table() {
    let market = private_market();
    let mut opts = Options::new(market.path().join("db.sqlite"));
    opts.market_dir = market.path().to_path_buf();
    let s = TestServer::start(opts).await;

    // Refusals name the field.
    for (stats, field) in [
        (json!({"blocks": 7}), "statistics.blocks"),
        (json!({"blocks": 32}), "statistics.blocks"),
        (json!({"trials": 1}), "statistics.trials"),
        (json!({"splits": 3}), "statistics"),
        (json!("yes"), "statistics"),
    ] {
        let body = json!({"strategy": sma_strategy("20", "//21"), "grid": {"risk_control": ["//5", "//10"]}, "statistics": stats});
        let (status, answer) = s.post("/backtest/batch", DEMO, &body).await;
        assert_eq!(status, 400, "{answer}");
        assert!(answer.to_string().contains(field), "{field}: {answer}");
    }

    // 8 periods x 3 exits, S = 8 (70 splits), N given as 40.
    let periods: Vec<String> = [5, 10, 20, 40, 60, 100, 150, 200]
        .iter()
        .map(|p| p.to_string())
        .collect();
    let body = json!({"name": "stats", "strategy": sma_strategy("20", "//21"),
        "grid": {"entry.condition.rule.period": periods, "risk_control": ["//5", "//21", "-5/10/21"]},
        "statistics": {"blocks": 8, "trials": 40}});
    let (status, sub) = s.post("/backtest/batch", DEMO, &body).await;
    assert_eq!(status, 202, "{sub}");
    let id = sub["task_id"].as_str().unwrap().to_string();
    let done = finished(&s, &format!("/backtest/batch/{id}")).await;
    assert_eq!(done["status"], "SUCCESS", "{done}");
    let st = &done["statistics"];
    assert_eq!(st["strategies"], 24, "{st}");
    assert_eq!(st["overfitting"]["blocks"], 8);
    assert_eq!(st["overfitting"]["splits"], 70);
    assert_eq!(st["overfitting"]["splits_total"], 70);
    assert_eq!(st["deflated_sharpe"]["trials"], 40.0);
    assert_eq!(st["notes"], json!([]));
    assert_eq!(
        st["overfitting"]["logit_histogram"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["count"].as_u64().unwrap())
            .sum::<u64>(),
        70
    );

    // A grid's strategies share their bars: its chunk kept its reduction
    // alone, which is that of its returns run again as the worker ran them.
    let store = ReturnStore::new(Arc::new(platform::marketdata::LocalDir::new(market.path())));
    let refused = store.get(&id, 0).await.unwrap_err().to_string();
    assert!(refused.contains("reduction only"), "{refused}");
    let expanded = batch::expand(&body, 100).unwrap();
    let items = (0..expanded.len())
        .map(|k| (k, expanded.strategy(k).unwrap(), expanded.varied.get(k)))
        .collect();
    let keep = batch::Keep {
        blocks: 8,
        raw: true,
        walk_forward: None,
    };
    let chunk = batch::run_strategies(
        s.state.market.as_ref(),
        batch::Strategies::Listed(items),
        keep,
        &Default::default(),
    )
    .await
    .unwrap()
    .returns;
    let (indices, _, reduced) = store.reduced(&id, 0).await.unwrap().unwrap();
    assert_eq!(
        (indices, Some(reduced)),
        (chunk.indices.clone(), chunk.reduced.clone())
    );
    assert_eq!(chunk.indices, (0..24).collect::<Vec<u32>>());
    assert_eq!(st["observations"], chunk.times.len());
    assert_eq!(st["periods_per_year"], 252.0);

    // Row 4 (period 10, "//21") run alone: its equity curve's returns are the kept ones.
    let (_, alone) = s
        .post(
            "/backtest/start_backtest",
            DEMO,
            &sma_strategy("10", "//21"),
        )
        .await;
    let task = alone["task_id"].as_str().unwrap();
    finished(&s, &format!("/backtest/status/{task}")).await;
    let (status, chart) = s.get(&format!("/backtest/chart/{task}"), DEMO).await;
    assert_eq!(status, 200, "{chart}");
    let equity: Vec<f64> = chart["equity"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let times: Vec<&str> = chart["time"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(equity.len(), chunk.times.len() + 1);
    assert_eq!(st["first"], times[1]);
    assert_eq!(st["last"], *times.last().unwrap());
    // The chart's equity is in capital, so a tiny return differs in its last bits.
    for (k, w) in equity.windows(2).enumerate() {
        let (kept, charted) = (chunk.series(4)[k], w[1] / w[0] - 1.0);
        assert!(
            (kept - charted).abs() < 1e-14,
            "return {k}: {kept} vs {charted}"
        );
    }

    // The statistics are the engine's on those returns.
    let n = chunk.indices.len();
    let moments: Vec<Moments> = (0..n).map(|k| Moments::of(chunk.series(k))).collect();
    let d = deflated(&moments, Some(40.0)).unwrap();
    let ds = &st["deflated_sharpe"];
    assert_eq!(ds["best_index"], d.best);
    close(ds["sharpe"].as_f64().unwrap(), d.sharpe, "sharpe");
    close(
        ds["sharpe_annualized"].as_f64().unwrap(),
        d.sharpe * 252f64.sqrt(),
        "annualised",
    );
    close(
        ds["expected_max_sharpe"].as_f64().unwrap(),
        d.expected_max_sharpe,
        "E[max]",
    );
    close(
        ds["deflated_sharpe_ratio"].as_f64().unwrap(),
        d.dsr.unwrap(),
        "dsr",
    );
    close(
        ds["probabilistic_sharpe_ratio"].as_f64().unwrap(),
        d.psr.unwrap(),
        "psr",
    );
    let (skip, len) = block_layout(chunk.times.len(), 8);
    assert_eq!(st["overfitting"]["skipped"], skip);
    assert_eq!(st["overfitting"]["block_length"], len);
    let mut sums = BlockSums::new(n, 8, len);
    for k in 0..n {
        sums.set(k, &chunk.series(k)[skip..]);
    }
    let p = cscv(&sums, 1).unwrap();
    let o = &st["overfitting"];
    assert_eq!(o["pbo"].as_f64().unwrap(), p.pbo);
    close(
        o["probability_of_loss"].as_f64().unwrap(),
        p.prob_loss,
        "loss",
    );
    close(
        o["degradation_slope"].as_f64().unwrap(),
        p.degradation.slope,
        "slope",
    );
    close(
        o["mean_logit"].as_f64().unwrap(),
        p.logits.iter().sum::<f64>() / 70.0,
        "logit",
    );

    // Kept once: the note is there, and a second read answers the same.
    assert!(
        store
            .note(&id, "statistics-v2.json")
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(
        s.get(&format!("/backtest/batch/{id}"), DEMO).await.1["statistics"],
        *st
    );

    // The rows carry the single backtest's new metrics.
    let (_, one) = s.get(&format!("/backtest/status/{task}"), DEMO).await;
    for key in [
        "Sortino Ratio",
        "Annual Volatility",
        "Calmar Ratio",
        "Sharpe Ratio",
    ] {
        assert_eq!(done["rows"][4][key], one["result"][key], "{key}");
    }

    // The Parquet table and the Arrow stream carry them as metadata.
    let r = reqwest::Client::new()
        .get(s.url(&format!("/backtest/batch/{id}/results?format=parquet")))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .send()
        .await
        .unwrap();
    let table = platform::marketdata::codec::from_parquet(r.bytes().await.unwrap()).unwrap();
    let kept: Value =
        serde_json::from_str(&table.schema().metadata()["marketlab.statistics"]).unwrap();
    assert_eq!(kept, *st);
    assert!(table.schema().field_with_name("Sortino Ratio").is_ok());
    let r = reqwest::Client::new()
        .get(s.url(&format!("/backtest/batch/{id}/results?format=arrow")))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .send()
        .await
        .unwrap();
    let (_, meta) =
        platform::marketdata::interchange::from_arrow_stream(&r.bytes().await.unwrap()).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&meta["marketlab.statistics"]).unwrap(),
        *st
    );

    // Damaged returns: the rows still read, the statistics say why they are missing.
    let kept = market.path().join(format!("batch-results/{id}"));
    std::fs::remove_file(kept.join("statistics-v2.json")).unwrap();
    let object = kept.join("returns-000000.bin");
    let whole = std::fs::read(&object).unwrap();
    std::fs::write(&object, &whole[..whole.len() - 100]).unwrap();
    let (status, damaged) = s.get(&format!("/backtest/batch/{id}"), DEMO).await;
    assert_eq!(status, 200, "{damaged}");
    let (status, rows) = s.get(&format!("/backtest/batch/{id}/results"), DEMO).await;
    assert_eq!((status, &rows), (200, &done["rows"]));
    assert!(damaged["statistics"]["overfitting"].is_null());
    assert!(
        damaged["statistics"]["notes"][0]
            .as_str()
            .unwrap()
            .contains("could not be read"),
        "{damaged}"
    );

    // One strategy: nothing to compare it with.
    let (_, sub) = s
        .post(
            "/backtest/batch",
            DEMO,
            &json!({"strategies": [sma_strategy("20", "//21")]}),
        )
        .await;
    let one = finished(
        &s,
        &format!("/backtest/batch/{}", sub["task_id"].as_str().unwrap()),
    )
    .await;
    assert!(one["statistics"].is_null(), "{one}");

    // Switched off: the rows alone, and nothing kept for them.
    let body = json!({"strategy": sma_strategy("20", "//21"),
        "grid": {"risk_control": ["//5", "//21"]}, "statistics": false});
    let (_, sub) = s.post("/backtest/batch", DEMO, &body).await;
    let off = sub["task_id"].as_str().unwrap().to_string();
    let plain = finished(&s, &format!("/backtest/batch/{off}")).await;
    assert_eq!(plain["status"], "SUCCESS", "{plain}");
    assert!(plain["statistics"].is_null(), "{plain}");
    // Its second row is the grid's row 7 (period 20, "//21").
    for metric in ["Total Trades", "Total Return (%)", "Sharpe Ratio"] {
        assert_eq!(
            plain["rows"][1][metric], done["rows"][7][metric],
            "{metric}"
        );
    }
    assert!(!market.path().join(format!("batch-results/{off}")).exists());
    s.stop().await;
}

/// Strategies that may run on different bars keep their raw returns beside
/// the reduction, and are compared on the bars they all share.
#[tokio::test(flavor = "multi_thread")]
async fn strategies_on_different_bars_keep_their_returns_and_meet_on_the_bars_all_share() {
    let market = private_market();
    let mut opts = Options::new(market.path().join("db.sqlite"));
    opts.market_dir = market.path().to_path_buf();
    let s = TestServer::start(opts).await;
    let mut late = sma_strategy("20", "//21");
    late["start_date"] = json!("2016-01-04");
    let body = json!({"strategies": [sma_strategy("20", "//5"), sma_strategy("50", "//10"), late]});
    let (status, sub) = s.post("/backtest/batch", DEMO, &body).await;
    assert_eq!(status, 202, "{sub}");
    let id = sub["task_id"].as_str().unwrap().to_string();
    let done = finished(&s, &format!("/backtest/batch/{id}")).await;
    let st = &done["statistics"];
    assert_eq!(
        (st["strategies"].as_u64(), &st["notes"]),
        (Some(3), &json!([])),
        "{st}"
    );
    let store = ReturnStore::new(Arc::new(platform::marketdata::LocalDir::new(market.path())));
    let chunk = store.get(&id, 0).await.unwrap().expect("raw returns kept");
    assert_eq!(chunk.indices, vec![0, 1, 2]);
    // The late strategy's returns are the bars all three share.
    let (_, alone) = s.post("/backtest/start_backtest", DEMO, &late).await;
    let task = alone["task_id"].as_str().unwrap();
    finished(&s, &format!("/backtest/status/{task}")).await;
    let (_, chart) = s.get(&format!("/backtest/chart/{task}"), DEMO).await;
    let times = chart["time"].as_array().unwrap();
    assert_eq!(st["observations"], times.len() - 1);
    assert_eq!(chunk.times.len(), times.len() - 1);
    assert_eq!(st["first"], times[1]);
    s.stop().await;
}
