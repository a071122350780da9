//! Every screen over HTTP with its exact fields and values recomputed.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
use serde_json::json;
use std::sync::Arc;
use tests::server::{TestServer, market_dir};

const USER: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));
use crate::company::{close, keys, sorted};

#[tokio::test(flavor = "multi_thread")]
async fn every_screen_over_http_with_its_fields() {
    let (s, _dir) = TestServer::fresh().await;
    let md = ParquetMarketData::new(Arc::new(LocalDir::new(market_dir())));
    let (_, list) = s.get("/screens/get-predefined-screens", USER).await;
    let screens = list["data"]["screens"].as_array().unwrap().clone();
    assert_eq!(screens.len(), 15);
    let fields = |key: &str| -> Vec<&str> {
        match key {
            k if k.ends_with("sentiment-seasonality") => vec![
                "symbol",
                "name",
                "group",
                "last_value",
                "last_update",
                "AvgReturn",
            ],
            k if k.ends_with("sentiment-trend") => vec![
                "symbol",
                "chart_name",
                "name",
                "group",
                "last_value",
                "last_update",
                "close",
                "MA",
            ],
            k if k.ends_with("ideas") => vec![
                "symbol",
                "chart_name",
                "date",
                "last_value",
                "five_ma",
                "equity_close",
                "ma_200",
            ],
            "commod-hedger-extremes" => vec![
                "symbol",
                "name",
                "last_value",
                "last_update",
                "three_year_max",
                "three_year_min",
                "net_position",
            ],
            "etf-sector-ma" => vec![
                "symbol",
                "chart_name",
                "name",
                "last_value",
                "last_update",
                "over_10",
                "over_200",
            ],
            "optix-exhaustion" => vec!["chart_name", "last_value", "last_update", "group", "10MA"],
            _ => vec![
                "name",
                "symbol",
                "report_date",
                "divyield",
                "pe_ratio",
                "onemonthperf",
                "threemonthperf",
                "sixmonthperf",
                "oneyearperf",
                "twoyearperf",
                "eps_growth",
                "payout_ratio",
            ],
        }
    };
    let mut listed = 0;
    for sc in &screens {
        let key = sc["key"].as_str().unwrap();
        let path = if key.ends_with("ideas") {
            format!("/screens?key={key}&date=2026-11-12")
        } else {
            format!("/screens?key={key}")
        };
        let (status, r) = s.get(&path, USER).await;
        assert_eq!((status, &r["code"]), (200, &json!(200)), "{key}: {r}");
        assert_eq!(r["type"], sc["category"], "{key}");
        for rec in r["data"].as_array().unwrap() {
            assert_eq!(keys(rec), sorted(&fields(key)), "{key}");
            listed += 1;
        }
    }
    assert!(listed > 50, "{listed} records");

    // Sector breadth: the share of the sector's stocks above their averages.
    let (_, sectors) = s.get("/screens?key=etf-sector-ma", USER).await;
    let symbols = md.symbols().await.unwrap();
    let mut checked = 0;
    for rec in sectors["data"].as_array().unwrap() {
        let etf = symbols
            .iter()
            .find(|x| x.symbol == rec["symbol"].as_str().unwrap())
            .unwrap();
        let (mut above, mut n) = (0, 0);
        for st in symbols
            .iter()
            .filter(|x| x.asset_class == "stock" && x.sector == etf.sector)
        {
            let b = md.daily(&st.symbol).await.unwrap();
            let last = b.len() - 1;
            let ma10 = b.close[last - 9..=last].iter().sum::<f64>() / 10.0;
            n += 1;
            above += (b.close[last] > ma10) as usize;
        }
        if n > 0 {
            close(&rec["over_10"], above as f64 / n as f64 * 100.0, "over_10");
            checked += 1;
        } else {
            assert!(rec["over_10"].is_null());
        }
    }
    assert!(checked > 0);
    // Exhaustion: readings beyond their extremes, with the 10-reading average.
    let (_, ex) = s.get("/screens?key=optix-exhaustion", USER).await;
    let catalog = md.indicator_catalog().await.unwrap();
    for rec in ex["data"].as_array().unwrap() {
        let m = catalog
            .iter()
            .find(|m| m.chart_name == rec["chart_name"].as_str().unwrap())
            .unwrap();
        let series = md.indicator_series(&m.url).await.unwrap();
        let v = *series.close.last().unwrap();
        assert!(v >= m.opt_extreme || v <= m.pess_extreme);
        let tail = &series.close[series.close.len() - 10..];
        close(&rec["10MA"], tail.iter().sum::<f64>() / 10.0, "10MA");
    }
    // The ideas' date is read; a bad key lists the valid ones.
    let (_, ideas) = s
        .get("/screens?key=russell3000-short-ideas&date=2026-11-12", USER)
        .await;
    assert!(
        ideas["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["date"] == "2026-11-12")
    );
    let (status, r) = s.get("/screens?key=best-stocks", USER).await;
    assert_eq!(status, 400);
    let msg = r["msg"].as_str().unwrap();
    assert!(
        msg.contains("key") && msg.contains("etf-sector-ma"),
        "{msg}"
    );
    let (status, r) = s
        .get("/screens?key=stocks-long-ideas&date=12/11/2026", USER)
        .await;
    assert_eq!(status, 400);
    assert!(r["msg"].as_str().unwrap().contains("date"), "{r}");
    s.stop().await;
}

/// Each screen's answer, empty or not, matches exactly one form of the
/// document's `ScreenAnswer`: the one whose `type` lists its category, whose
/// records hold every field it requires and no other.
#[tokio::test(flavor = "multi_thread")]
async fn every_screen_answer_matches_exactly_one_documented_form() {
    let (s, _dir) = TestServer::fresh().await;
    let doc: serde_json::Value = serde_json::from_str(api::routes::document()).unwrap();
    let schemas = &doc["components"]["schemas"];
    let forms: Vec<&serde_json::Value> = schemas["ScreenAnswer"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &schemas[r["$ref"].as_str().unwrap().rsplit('/').next().unwrap()])
        .collect();
    assert_eq!(forms.len(), 7);
    let (_, list) = s.get("/screens/get-predefined-screens", USER).await;
    let mut empty = 0;
    for screen in list["data"]["screens"].as_array().unwrap() {
        let key = screen["key"].as_str().unwrap();
        // Today's answer, and one for a day with no data (1990: empty lists).
        for query in [String::new(), "&date=1990-01-02".to_string()] {
            let (status, answer) = s.get(&format!("/screens?key={key}{query}"), USER).await;
            assert_eq!(status, 200, "{key}: {answer}");
            let category = answer["type"].as_str().unwrap();
            let matching: Vec<&&serde_json::Value> = forms
                .iter()
                .filter(|f| {
                    f["properties"]["type"]["enum"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|c| c == category)
                })
                .collect();
            assert_eq!(matching.len(), 1, "{key}: '{category}'");
            let item_ref = matching[0]["properties"]["data"]["items"]["$ref"]
                .as_str()
                .unwrap();
            let item = &schemas[item_ref.rsplit('/').next().unwrap()];
            let records = answer["data"].as_array().unwrap();
            empty += records.is_empty() as usize;
            for r in records {
                let r = r.as_object().unwrap();
                for need in item["required"].as_array().unwrap() {
                    assert!(r.contains_key(need.as_str().unwrap()), "{key}: {need}");
                }
                for field in r.keys() {
                    assert!(
                        item["properties"].get(field).is_some(),
                        "{key}: '{field}' is not in {item_ref}"
                    );
                }
            }
        }
    }
    assert!(empty > 0, "some answer had empty data");
    s.stop().await;
}
