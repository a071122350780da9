//! Portfolios on the caller's own bars, sent as multipart parts
//! `bars.<SYMBOL>` beside the `portfolio` JSON: stored symbols' bars sent
//! under other names give the stored portfolio's answer exactly, own bars
//! of a stored symbol's name are read in its place (a hand-computed
//! growth), and bad parts are 400s naming the part.

use engine::Bars;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::uploads::Upload;
use serde_json::{Value, json};
use tests::server::TestServer;

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));
const PARQUET: &str = "application/vnd.apache.parquet";

/// `bars` as the Parquet file a caller sends (prices only).
fn parquet(bars: &Bars) -> Vec<u8> {
    let upload = Upload {
        bars: bars.clone(),
        signals: std::array::from_fn(|_| vec![0.0; bars.len()]),
    };
    upload.to_parquet().unwrap().to_vec()
}

/// `v` with `OWN_` taken off every text and key.
fn renamed(v: &Value) -> Value {
    match v {
        Value::String(t) => Value::String(t.replace("OWN_", "")),
        Value::Array(items) => Value::Array(items.iter().map(renamed).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.replace("OWN_", ""), renamed(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Where two answers first differ: the path and both values.
fn difference(a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                difference(
                    &x.get(k).cloned().unwrap_or(Value::Null),
                    &y.get(k).cloned().unwrap_or(Value::Null),
                )
                .map(|d| format!("{k}.{d}"))
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (a, b))| difference(a, b).map(|d| format!("{i}.{d}"))),
        _ if a == b => None,
        _ => Some(format!(": {a} against {b}")),
    }
}

/// The finished task of a submit's answer.
async fn finished(s: &TestServer, (status, r): (u16, Value)) -> Value {
    assert_eq!(status, 202, "{r}");
    let id = r["task_id"].as_str().unwrap();
    s.succeeded(&format!("/backtest/portfolio/{id}"), DEMO)
        .await
}

/// A portfolio in each mode over AAPL, MSFT and NVDA, and the same with
/// their bars sent as OWN_AAPL, OWN_MSFT and OWN_NVDA: the answers are one
/// (every figure, series, order and trade) once the names are mapped
/// back, and the task names each upload by digest.
#[tokio::test(flavor = "multi_thread")]
async fn stored_bars_sent_under_other_names_give_the_stored_portfolio_exactly() {
    let (s, _dir) = TestServer::fresh().await;
    let stored = ["AAPL", "MSFT", "NVDA"];
    let mut files = Vec::new();
    for sym in stored {
        let bars = s.state.market.daily(sym).await.unwrap();
        files.push((format!("bars.OWN_{sym}"), parquet(&bars), bars.len()));
    }
    let sma = |op: &str| {
        json!({"rule_type": "SingleCondition", "condition": {
            "signal": {"name": "Simple Moving Average", "type": "Technical", "params": {"period": 50}},
            "rule": {"comparison_type": "MA", "type_name": op}}})
    };
    let modes = [
        json!({"weights": {"schedule": {"every": "month"},
            "select": {"method": "top", "k": 2, "by": {"momentum": 63}},
            "weighting": {"method": "inverse_volatility", "bars": 20}}}),
        json!({"signals": {"entry": sma("CrossAbove"), "exit": sma("CrossBelow"), "max_positions": 2,
            "rank_by": {"by": {"momentum": 20}}, "sizing": {"method": "equal"}},
            "commission": 0.001}),
    ];
    for mode in modes {
        let mut body =
            json!({"universe": stored, "start_date": "2018-01-02", "end_date": "2023-12-29"});
        body.as_object_mut()
            .unwrap()
            .extend(mode.as_object().unwrap().clone());
        let mut own = body.clone();
        own["universe"] = json!(stored.map(|s| format!("OWN_{s}")));
        let at_store = finished(&s, s.post("/backtest/portfolio", DEMO, &body).await).await;
        let json_part = serde_json::to_vec(&own).unwrap();
        let mut parts: Vec<(&str, &str, &[u8])> =
            vec![("portfolio", "application/json", &json_part)];
        for (name, data, _) in &files {
            parts.push((name, PARQUET, data));
        }
        let sent = finished(&s, s.post_form("/backtest/portfolio", DEMO, &parts).await).await;
        let named = &sent["params"]["own_bars"];
        for (name, _, rows) in &files {
            let summary = &named[name.trim_start_matches("bars.")];
            assert_eq!(summary["rows"], *rows, "{named}");
            assert_eq!(summary["sha256"].as_str().unwrap().len(), 64, "{named}");
        }
        // Renamed in place: printing and reading the numbers again may
        // move one by an ulp (serde_json's parse is not exact).
        let mapped = renamed(&sent["result"]);
        assert!(at_store["result"]["total_trades"].as_u64().unwrap() > 5);
        assert_eq!(difference(&mapped, &at_store["result"]), None, "{own}");
    }
    s.stop().await;
}

/// Own bars named as a stored symbol are read in its place: AAPL as 60
/// sessions growing 1% a session, held whole from the first (one symbol,
/// all of the cash, fractional units, no costs), ends at 1.01^59 of the
/// capital; the benchmark stays the stored SPX. Bad parts are 400s naming
/// the part (or the field) at the submit.
#[tokio::test(flavor = "multi_thread")]
async fn own_bars_replace_a_stored_symbol_and_bad_parts_are_named() {
    let (s, _dir) = TestServer::fresh().await;
    let stored = s.state.market.daily("AAPL").await.unwrap();
    let from = stored
        .time
        .partition_point(|t| t.date() < "2021-02-01".parse().unwrap());
    let mut own = Bars::with_capacity(60);
    for k in 0..60 {
        let c = 100.0 * 1.01f64.powi(k as i32);
        own.push(stored.time[from + k], c, c, c, c, 1_000.0);
    }
    let last = own.date(59).to_string();
    let body = json!({"universe": ["AAPL"], "start_date": "2021-02-01", "end_date": last,
        "weights": {"schedule": {"every": "month"}}});
    let portfolio = serde_json::to_vec(&body).unwrap();
    let bars = parquet(&own);
    let parts = [
        ("portfolio", "application/json", &portfolio[..]),
        ("bars.AAPL", PARQUET, &bars[..]),
    ];
    let task = finished(&s, s.post_form("/backtest/portfolio", DEMO, &parts).await).await;
    let r = &task["result"];
    let growth = 1.01f64.powi(59);
    let total = r["total_return"].as_f64().unwrap();
    assert!((total - (growth - 1.0)).abs() < 1e-12, "{total}");
    let equity = r["series"]["equity"].as_array().unwrap();
    assert_eq!(equity.len(), 60);
    for (k, e) in equity.iter().enumerate() {
        let want = 100_000.0 * 1.01f64.powi(k as i32);
        assert!((e.as_f64().unwrap() - want).abs() < 1e-9 * want, "{k}: {e}");
    }
    assert_eq!(r["end_date"], last.as_str());
    assert_eq!(task["params"]["own_bars"]["AAPL"]["rows"], 60);

    let signals = {
        let mut u = Upload {
            bars: own.clone(),
            signals: std::array::from_fn(|_| vec![0.0; own.len()]),
        };
        u.signals[0][3] = 1.0;
        u.to_parquet().unwrap().to_vec()
    };
    let with_own = serde_json::to_vec(&json!({"universe": ["AAPL"], "own_bars": {}})).unwrap();
    for (parts, field, words) in [
        (
            vec![
                ("portfolio", "application/json", &portfolio[..]),
                ("bars.MSFT", PARQUET, &bars[..]),
            ],
            "bars.MSFT",
            "do not name",
        ),
        (
            vec![
                ("portfolio", "application/json", &portfolio[..]),
                ("bars.AAPL", PARQUET, &b"PAR1 and nothing else"[..]),
            ],
            "bars.AAPL",
            "Parquet",
        ),
        (
            vec![
                ("portfolio", "application/json", &portfolio[..]),
                ("bars.AAPL", PARQUET, &signals[..]),
            ],
            "bars.AAPL",
            "Entry1",
        ),
        (
            vec![
                ("portfolio", "application/json", &portfolio[..]),
                ("bars.AAPL", PARQUET, &bars[..]),
                ("bars.AAPL", PARQUET, &bars[..]),
            ],
            "bars.AAPL",
            "twice",
        ),
        (
            vec![("bars.AAPL", PARQUET, &bars[..])],
            "portfolio",
            "required",
        ),
        (
            vec![
                ("portfolio", "application/json", &portfolio[..]),
                ("prices", PARQUET, &bars[..]),
            ],
            "prices",
            "unknown part",
        ),
        (
            vec![("portfolio", "application/json", &with_own[..])],
            "own_bars",
            "unknown field",
        ),
    ] {
        let (status, e) = s.post_form("/backtest/portfolio", DEMO, &parts).await;
        assert_eq!(status, 400, "{field}: {e}");
        assert!(e["field"].as_str().unwrap().starts_with(field), "{e}");
        assert!(e["detail"].as_str().unwrap().contains(words), "{e}");
    }
    s.stop().await;
}
