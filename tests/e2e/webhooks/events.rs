//! The events besides a task's end: a batch's (with its long-polled
//! status), the nightly scan's, and scanner alerts.

use super::receiver::Receiver;
use super::{DEMO, OTHER, server, settled_log, subscribe};
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn sma_strategy(period: &str, risk: &str) -> Value {
    json!({"symbol": "SPX", "start_date": "2016-01-04", "risk_control": risk,
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
            "rule": {"comparison_type": "SVMA", "type_name": ">=", "comparison_value": "0", "period": period}}},
        "exit": {"rule_type": "RiskControlOnly"}})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_tells_batch_finished_once_with_its_best_row_and_its_status_long_polls() {
    let (s, _dir) = server().await;
    let rx = Receiver::ok().await;
    let endpoint = subscribe(
        &s,
        json!({"url": rx.url("/b"), "events": ["batch.finished"]}),
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let grid = json!({"name": "hooked", "strategy": sma_strategy("50", "//21"),
        "grid": {"entry.condition.rule.period": ["20", "50", "200"], "risk_control": ["//21", "-5/10/21"]}});
    let (status, sub) = s.post("/backtest/batch", DEMO, &grid).await;
    assert_eq!(status, 202, "{sub}");
    let id = sub["task_id"].as_str().unwrap();
    let asked = Instant::now();
    let (status, batch) = s.get(&format!("/backtest/batch/{id}?wait=20"), DEMO).await;
    assert_eq!(status, 200);
    assert_eq!(
        batch["status"], "SUCCESS",
        "one long-poll holds until the batch is done: {batch}"
    );
    assert!(asked.elapsed() < Duration::from_secs(20));
    let (status, bad) = s
        .get(&format!("/backtest/batch/{id}?wait=soon"), DEMO)
        .await;
    assert_eq!(status, 400);
    assert!(bad.to_string().contains("wait"), "{bad}");

    let got = rx.wait_for(1, Duration::from_secs(30)).await;
    assert_eq!(got.len(), 1);
    let p = got[0].json();
    assert_eq!(p["type"], "batch.finished");
    assert_eq!(p["data"]["batch_id"], json!(id));
    assert_eq!(p["data"]["status"], "SUCCESS");
    assert_eq!(p["data"]["total"], 6);
    let table = s
        .get(&format!("/backtest/batch/{id}/results"), DEMO)
        .await
        .1;
    let rows = table.as_array().unwrap();
    let best = rows
        .iter()
        .max_by(|a, b| {
            a["Total Return (%)"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["Total Return (%)"].as_f64().unwrap())
        })
        .unwrap();
    assert_eq!(p["data"]["best"]["index"], best["index"]);
    let failed = rows.iter().filter(|r| !r["error"].is_null()).count();
    assert_eq!(p["data"]["failed_rows"], json!(failed));
    for key in [
        "Total Return (%)",
        "CAGR",
        "Sharpe Ratio",
        "Max Drawdown",
        "Total Trades",
    ] {
        assert_eq!(p["data"]["best"][key], best[key], "{key}");
    }
    assert_eq!(p["data"]["best"]["params"], best["params"]);
    assert_eq!(
        p["data"]["links"]["results"],
        json!(format!("/backtest/batch/{id}/results"))
    );
    // Every chunk ended before the batch did: the log holds all the
    // events the batch will ever tell.
    let log = settled_log(&s, &endpoint, (DEMO_EMAIL, DEMO_PASSWORD)).await;
    assert_eq!(log.len(), 1, "one event for the batch, not one per chunk");
    assert_eq!(rx.got().len(), 1);
    s.stop().await;
}

async fn alert(s: &tests::server::TestServer, body: Value) -> String {
    let (status, a) = s.post("/smart-stock-scanner/alerts", DEMO, &body).await;
    assert_eq!(status, 201, "{a}");
    a["data"]["id"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn alerts_deliver_the_day_s_matching_items_once_per_alert_and_day() {
    let (s, _dir) = server().await;
    s.add_account(OTHER.0, OTHER.1, "pro").await;
    let scanner = s.state.scanner.clone();
    if scanner.dates().await.unwrap().is_empty() {
        services::analytics::scanner::nightly::run(
            s.state.market.as_ref(),
            scanner.as_ref(),
            None,
            &Default::default(),
        )
        .await
        .unwrap();
    }
    let date = *scanner.dates().await.unwrap().last().unwrap();
    let day = scanner.day(date).await.unwrap().unwrap();
    assert!(!day.rows.is_empty());
    let first = &day.rows[0];

    let rx = Receiver::ok().await;
    let endpoint = subscribe(
        &s,
        json!({"url": rx.url("/a"), "events": ["scanner.alert", "scan.completed"]}),
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let other_rx = Receiver::ok().await;
    let (status, _) = s
        .post(
            "/webhooks",
            Some(OTHER),
            &json!({"url": other_rx.url("/o"), "events": ["scanner.alert"]}),
        )
        .await;
    assert_eq!(status, 201);

    let by_win_rate = alert(
        &s,
        json!({"name": "winners", "min_win_rate": 60, "min_trades": 5}),
    )
    .await;
    let exact = alert(
        &s,
        json!({"signals": [first.signal], "tickers": [first.symbol.to_lowercase()]}),
    )
    .await;
    let none = alert(&s, json!({"tickers": ["ZZZZZ"]})).await;
    // Another tenant's alert on everything: it hears of it, through its own endpoint only.
    let (status, theirs) = s
        .post("/smart-stock-scanner/alerts", Some(OTHER), &json!({}))
        .await;
    assert_eq!(status, 201, "{theirs}");
    let (_, listed) = s.get("/smart-stock-scanner/alerts", DEMO).await;
    assert_eq!(listed["data"]["alerts"].as_array().unwrap().len(), 3);

    let events = s.state.webhooks.as_ref().unwrap().events();
    services::analytics::scanner::nightly::tell(&events, scanner.as_ref(), date).await;
    // The same day scanned again tells nothing new.
    services::analytics::scanner::nightly::tell(&events, scanner.as_ref(), date).await;

    let winners: Vec<_> = day
        .rows
        .iter()
        .filter(|r| r.figures.win_rate >= 60.0 && r.figures.trade_number >= 5)
        .collect();
    let want = 1 + usize::from(!winners.is_empty()) + 1; // scan.completed, winners, exact
    // Both scans have told: the log holds every event recorded for them.
    let log = settled_log(&s, &endpoint, (DEMO_EMAIL, DEMO_PASSWORD)).await;
    assert_eq!(log.len(), want, "{log:?}");
    let got: Vec<Value> = rx.got().iter().map(|r| r.json()).collect();
    assert_eq!(got.len(), want, "{got:?}");
    let completed = got.iter().find(|p| p["type"] == "scan.completed").unwrap();
    assert_eq!(completed["data"]["date"], json!(date.to_string()));
    assert_eq!(completed["data"]["items"], json!(day.rows.len()));
    let of = |id: &str| got.iter().find(|p| p["data"]["alert_id"] == id).cloned();
    assert!(
        of(&none).is_none(),
        "an alert matching nothing sends nothing"
    );
    let exact = of(&exact).expect("the exact alert's event");
    let items = exact["data"]["items"].as_array().unwrap();
    assert!(
        items
            .iter()
            .all(|i| i["symbol"] == json!(first.symbol) && i["signal"] == json!(first.signal))
    );
    let count = day
        .rows
        .iter()
        .filter(|r| r.symbol == first.symbol && r.signal == first.signal)
        .count();
    assert_eq!(
        (items.len(), exact["data"]["matched"].as_u64()),
        (count, Some(count as u64))
    );
    assert_eq!(items[0]["win_rate"], json!(first.figures.win_rate));
    if let Some(w) = of(&by_win_rate) {
        assert_eq!(w["data"]["matched"], json!(winners.len()));
        let mut symbols: Vec<&str> = w["data"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["symbol"].as_str().unwrap())
            .collect();
        let mut expected: Vec<&str> = winners
            .iter()
            .take(100)
            .map(|r| r.symbol.as_str())
            .collect();
        symbols.sort();
        expected.sort();
        assert_eq!(symbols, expected);
    }
    let theirs_got = other_rx.wait_for(1, Duration::from_secs(30)).await;
    assert_eq!(theirs_got.len(), 1);
    assert_eq!(
        theirs_got[0].json()["data"]["matched"],
        json!(day.rows.len())
    );

    // Refusals name the field; another tenant's alert reads as not found.
    for (body, field) in [
        (json!({"signals": ["NoSuchSignal"]}), "signals[0]"),
        (json!({"min_win_rate": 150}), "min_win_rate"),
        (json!({"tickers": ["BAD TICKER"]}), "tickers[0]"),
        (json!({"colour": "red"}), "colour"),
    ] {
        let (status, e) = s.post("/smart-stock-scanner/alerts", DEMO, &body).await;
        assert_eq!(status, 400, "{body}: {e}");
        assert!(e.to_string().contains(field), "{field}: {e}");
    }
    let their_id = theirs["data"]["id"].as_str().unwrap();
    let r = reqwest::Client::new()
        .delete(s.url(&format!("/smart-stock-scanner/alerts/{their_id}")))
        .basic_auth(super::DEMO.unwrap().0, Some(super::DEMO.unwrap().1))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 404);
    s.stop().await;
}
