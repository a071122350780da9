//! The scanner backtest over HTTP, and the scanner history it reads.

use platform::scanner::ScannerStore;
use platform::worker::Progress;
use serde_json::{Value, json};
use services::analytics::scanner::nightly;
use std::time::Duration;
use tests::server::{TestServer, eventually, private_market};

use crate::scanner::{USER, close_to};

/// Submits a scanner backtest and waits for its task.
async fn scanner_task(s: &TestServer, body: &Value) -> Value {
    let (status, r) = s.post("/smart-scanner-backtest/start", USER, body).await;
    assert_eq!(status, 202, "{r}");
    let path = format!(
        "/smart-scanner-backtest/status/{}",
        r["task_id"].as_str().unwrap()
    );
    assert!(
        eventually(Duration::from_secs(120), || async {
            matches!(
                s.get(&path, USER).await.1["status"].as_str(),
                Some("SUCCESS" | "FAILED")
            )
        })
        .await
    );
    s.get(&path, USER).await.1
}

#[tokio::test(flavor = "multi_thread")]
async fn scanner_backtest_over_http() {
    let (s, _dir) = TestServer::fresh().await;
    let body = json!({"name": "all signals", "start_date": "2025-06-02", "end_date": "2026-11-20",
        "find_type": "stock/etf", "signals": ["All"], "total_capital": 100000,
        "long_short_ratio": "0.7/0.3", "commission": 0.05, "daily_limit": 3});
    let task = scanner_task(&s, &body).await;
    assert_eq!(task["status"], "SUCCESS", "{task}");
    let result = &task["result"];
    assert_eq!(
        (&result["code"], &result["msg"]),
        (&json!(200), &json!("Finish Scanner trader!"))
    );
    let d = &result["data"];
    let arrays = d["result"].as_object().unwrap();
    let n = d["TOTAL TRADES"].as_u64().unwrap() as usize;
    assert!(n > 10, "{n} trades");
    for (k, v) in arrays {
        assert_eq!(v.as_array().unwrap().len(), n, "{k}");
    }
    let list: Vec<Value> = serde_json::from_str(d["TRADE LIST"].as_str().unwrap()).unwrap();
    assert_eq!(list.len(), n);
    assert_eq!(
        d["TOTAL POSITIVE"].as_u64().unwrap() + d["TOTAL NEGATIVE"].as_u64().unwrap(),
        n as u64
    );
    let dates = d["dates"].as_array().unwrap();
    assert_eq!(d["equity"].as_array().unwrap().len(), dates.len());
    assert!(
        d["cash"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c.as_f64().unwrap() >= -1e-6)
    );
    let equity = d["equity"].as_array().unwrap();
    let last = equity.last().unwrap().as_f64().unwrap();
    assert!(close_to(
        &d["TOTAL RETURN"],
        (last / 100000.0 - 1.0) * 100.0
    ));
    // Every trade: entered the session after its signal, at most 3 a session,
    // sized within the side's capital, long and short shares respected.
    let mut per_session = std::collections::HashMap::new();
    for (k, item) in list.iter().enumerate() {
        let entry = arrays["Start Date"][k].as_str().unwrap();
        assert!(item["Date"].as_str().unwrap() < entry);
        *per_session.entry(entry.to_string()).or_insert(0) += 1;
        let side = if arrays["Direction"][k] == "Long" {
            0.7
        } else {
            0.3
        };
        let value = arrays["Shares"][k].as_f64().unwrap() * arrays["Price"][k].as_f64().unwrap();
        assert!(value <= arrays["Kelly"][k].as_f64().unwrap() * side * 100000.0 + 1e-6);
        assert!(arrays["Kelly"][k].as_f64().unwrap() <= 0.25);
        let status = arrays["OrderStatus"][k].as_str().unwrap();
        assert!(["Profit Target", "Stop Loss", "Time Is Up", "Open"].contains(&status));
        assert_eq!(arrays["Action"][k] == "Hold", status == "Open");
    }
    assert!(per_session.values().all(|c| *c <= 3));
    // The same request, the same result to the bit.
    let again = scanner_task(&s, &body).await;
    assert_eq!(again["result"]["data"], result["data"]);
    // Listed with its name and find_type.
    let (_, tasks) = s.get("/smart-scanner-backtest/tasks", USER).await;
    assert_eq!(tasks["tasks"][0]["name"], "all signals");
    assert_eq!(tasks["tasks"][0]["find_type"], "stock/etf");
    // Another tenant's id is 404.
    s.add_account("other@example.test", "other-password", "pro")
        .await;
    let id = again["task_id"].as_str().unwrap();
    let (status, _) = s
        .get(
            &format!("/smart-scanner-backtest/status/{id}"),
            Some(("other@example.test", "other-password")),
        )
        .await;
    assert_eq!(status, 404);

    // Nothing passes the filters: 407 without data.
    let mut none = body.clone();
    none["optix_range"] = json!("200-300");
    let task = scanner_task(&s, &none).await;
    assert_eq!(
        (&task["result"]["code"], &task["result"]["data"]),
        (&json!(407), &Value::Null),
        "{task}"
    );
    // Bad values are refused at the submit, naming the field.
    for (field, value) in [
        ("signals", json!(["Nope"])),
        ("long_short_ratio", json!("0.9/0.9")),
        ("start_date", json!("2027-01-01")),
        ("rank_condition", json!("Luck")),
        ("daily_limit", json!(0)),
    ] {
        let mut bad = body.clone();
        bad[field] = value;
        let (status, r) = s.post("/smart-scanner-backtest/start", USER, &bad).await;
        assert_eq!((status, &r["code"]), (400, &json!(400)), "{field}: {r}");
        assert!(r["msg"].as_str().unwrap().contains(field), "{field}: {r}");
    }
    s.stop().await;
}

/// A month's items as text, keyed by session and symbol name: equal to the bit
/// (NaN included) when the texts are equal.
fn history_text(m: &platform::scanner::HistoryMonth, sessions: &[&str]) -> Vec<String> {
    m.items
        .iter()
        .filter(|it| sessions.contains(&m.sessions[it.session as usize].to_string().as_str()))
        .map(|it| {
            format!(
                "{} {} {:?}",
                m.sessions[it.session as usize],
                m.symbols[it.symbol as usize],
                platform::scanner::HistoryItem {
                    session: 0,
                    symbol: 0,
                    ..it.clone()
                }
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_history_backfill_equals_the_nightly_scans_and_backtests_read_it() {
    use platform::marketdata::{LocalDir, ParquetMarketData};
    use platform::scanner::ParquetScannerStore;
    use services::analytics::scanner::backtest::{self, requests::ScannerBacktestParams};
    use services::analytics::scanner::history::backfill;
    use std::sync::Arc;
    let market_dir = private_market();
    let market = ParquetMarketData::new(Arc::new(LocalDir::new(market_dir.path())));
    let store_in = |dir: &tempfile::TempDir| {
        ParquetScannerStore::new(Arc::new(LocalDir::new(dir.path())), Duration::ZERO)
    };
    let d = |s: &str| s.parse::<chrono::NaiveDate>().unwrap();

    // The nightly job of three sessions records each in the history...
    let (nightly_dir, filled_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let nightly_store = store_in(&nightly_dir);
    let days = ["2026-11-18", "2026-11-19", "2026-11-20"];
    for day in days {
        nightly::run(&market, &nightly_store, Some(d(day)), &Progress::default())
            .await
            .unwrap();
    }
    let nightly_month = nightly_store
        .history(d("2026-11-01"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        nightly_month.sessions,
        days.iter().map(|s| d(s)).collect::<Vec<_>>()
    );
    // ...and a backfill of the month records the same items on those sessions.
    let filled = store_in(&filled_dir);
    let s = backfill(
        &market,
        &filled,
        d("2026-11-01"),
        Some(d("2026-11-20")),
        &Progress::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        (s.from, s.to, s.sessions, s.months),
        (d("2026-11-02"), d("2026-11-20"), 15, 1)
    );
    let month = filled.history(d("2026-11-01")).await.unwrap().unwrap();
    assert_eq!(month.sessions.len(), 15);
    let (a, b) = (
        history_text(&nightly_month, &days),
        history_text(&month, &days),
    );
    assert!(a.len() > 20, "{} items", a.len());
    assert_eq!(a, b);
    assert_eq!(s.items, month.items.len());
    // The backfill wrote no day file, and refuses a range after the data.
    assert!(filled.dates().await.unwrap().is_empty());
    let e = backfill(
        &market,
        &filled,
        d("2026-11-01"),
        Some(d("2026-12-01")),
        &Progress::default(),
    )
    .await
    .unwrap_err();
    assert!(e.to_string().contains("to"), "{e}");

    // A backtest gives the same answer to the bit whether it reads the
    // history (whole or in part) or computes every session.
    let q = ScannerBacktestParams {
        start_date: Some("2025-06-02".into()),
        end_date: Some("2026-11-20".into()),
        find_type: Some("stock/etf".into()),
        signals: Some(json!(["All"])),
        total_capital: Some(json!(100000)),
        long_short_ratio: Some("0.7/0.3".into()),
        commission: Some(json!(0.05)),
        ..Default::default()
    }
    .validate()
    .unwrap();
    let empty_dir = tempfile::tempdir().unwrap();
    let answer = |store: ParquetScannerStore| {
        let (market, q) = (&market, &q);
        async move {
            let a = backtest::run(market, &store, q, &Progress::default())
                .await
                .unwrap();
            serde_json::to_value(a).unwrap()
        }
    };
    let computed = answer(store_in(&empty_dir)).await;
    assert_eq!(computed["code"], 200);
    assert!(computed["data"]["TOTAL TRADES"].as_u64().unwrap() > 10);
    // In part: November 2026 from the backfill, the rest computed.
    assert_eq!(answer(store_in(&filled_dir)).await, computed);
    backfill(
        &market,
        &filled,
        d("2025-06-02"),
        Some(d("2026-11-20")),
        &Progress::default(),
    )
    .await
    .unwrap();
    assert_eq!(answer(store_in(&filled_dir)).await, computed);
    // Whole: a history that differs shows in the answer, so it was read.
    let mut june = filled.history(d("2025-06-01")).await.unwrap().unwrap();
    for it in &mut june.items {
        it.reading.figures.std_dev = 1.0 / (1.0 + it.figures.std_dev);
    }
    filled.put_history(june).await.unwrap();
    assert_ne!(answer(store_in(&filled_dir)).await, computed);
}
