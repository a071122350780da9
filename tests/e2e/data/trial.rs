//! The trial's history limit on every data route, enumerated from the data
//! group's routes (their OpenAPI document), so a new route is checked the day
//! it is added: asked for everything it can give (the whole history, 100,000
//! days, a date 16 years back), a trial account gets at most the last 90
//! readings of any series, and nothing older.

use super::DEMO;
use chrono::NaiveDateTime;
use marketlab::server::{TRIAL_EMAIL, TRIAL_PASSWORD};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use tests::server::TestServer;

const TRIAL: Option<(&str, &str)> = Some((TRIAL_EMAIL, TRIAL_PASSWORD));
/// A daily indicator of the trial's Core group that has a 30-minute series too.
const SYMBOL: &str = "SPX_OPTIX";
/// The trial's daily custom indicator.
const CUSTOM: &str = "CUSTOM_TECH_SPREAD";
/// A stored symbol, whose daily bars are a series too.
const STOCK: &str = "SPX";

/// A parameter of an operation: `(name, in, required)`.
type Param = (String, String, bool);

/// The data group's GET operations and their parameters.
fn data_routes() -> Vec<(String, Vec<Param>)> {
    let doc: Value = serde_json::from_str(api::routes::document()).unwrap();
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        let Some(op) = item.get("get") else { continue };
        if op["tags"][0] != "data" {
            continue;
        }
        let params = op["parameters"]
            .as_array()
            .map(|ps| {
                ps.iter()
                    .map(|p| {
                        (
                            p["name"].as_str().unwrap().to_string(),
                            p["in"].as_str().unwrap().to_string(),
                            p["required"].as_bool().unwrap_or(false),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.push((path.clone(), params));
    }
    out
}

/// The request that asks a route for the most history it can give.
fn widest(path: &str, params: &[Param], days: &str) -> String {
    let mut url = path.to_string();
    let mut query = Vec::new();
    for (name, place, required) in params {
        let value = match name.as_str() {
            "symbol" => SYMBOL,
            "group" => "Core",
            "days" => days,
            "date" => "20100105",
            "url" => CUSTOM,
            "ticker" => STOCK,
            _ if !required => continue,
            other => panic!("{path}: no value for the required parameter '{other}'; add one here"),
        };
        if place == "path" {
            url = url.replace(&format!("{{{name}}}"), value);
        } else {
            query.push(format!("{name}={value}"));
        }
    }
    if query.is_empty() {
        url
    } else {
        format!("{url}?{}", query.join("&"))
    }
}

fn moment(text: &str) -> Option<NaiveDateTime> {
    let t = text.get(..19).unwrap_or(text);
    NaiveDateTime::parse_from_str(t, "%Y-%m-%dT%H:%M:%S")
        .ok()
        .or_else(|| {
            chrono::NaiveDate::parse_from_str(text.get(..10)?, "%Y-%m-%d")
                .ok()
                .map(|d| d.and_hms_opt(0, 0, 0).unwrap())
        })
}

/// Every dated reading of an answer, by the series it belongs to: the path's
/// symbol, an `indicator` or `symbol` field beside it, or a top-level key
/// that names one.
fn readings(
    v: &Value,
    series: Option<&str>,
    known: &BTreeSet<String>,
    out: &mut BTreeMap<String, BTreeSet<NaiveDateTime>>,
) {
    match v {
        Value::Object(o) => {
            let here = ["indicator", "symbol"]
                .iter()
                .find_map(|f| o.get(*f).and_then(Value::as_str))
                .filter(|c| known.contains(*c))
                .or(series);
            for (k, item) in o {
                let code = if known.contains(k) {
                    Some(k.as_str())
                } else {
                    here
                };
                if let (Some(code), Some(t)) = (code, moment(k)) {
                    out.entry(code.to_string()).or_default().insert(t);
                }
                if ["update_date", "date", "Date", "DT", "datetime"].contains(&k.as_str())
                    && let (Some(code), Some(t)) = (here, item.as_str().and_then(moment))
                {
                    out.entry(code.to_string()).or_default().insert(t);
                }
                readings(item, code, known, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| readings(i, series, known, out)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_data_route_gives_a_trial_at_most_the_last_90_readings() {
    let (s, _dir) = TestServer::fresh().await;
    let market = s.state.market.clone();
    let catalog = market.indicator_catalog().await.unwrap();
    let mut known: BTreeSet<String> = catalog.iter().map(|m| m.url.clone()).collect();
    known.insert(CUSTOM.into());
    known.insert("CUSTOM_OPTIX_AAII".into());
    // The oldest reading a trial may see of each series: the 90th latest.
    let oldest = |time: &[NaiveDateTime]| time[time.len().saturating_sub(90)];
    let mut daily_from = BTreeMap::new();
    let mut intraday_from = BTreeMap::new();
    for m in catalog.iter() {
        let s = market.indicator_series(&m.url).await.unwrap();
        daily_from.insert(m.url.clone(), oldest(&s.time));
        if m.intraday {
            let s = market.indicator_intraday(&m.url).await.unwrap();
            intraday_from.insert(m.url.clone(), oldest(&s.time));
        }
    }
    for custom in [CUSTOM, "CUSTOM_OPTIX_AAII"] {
        let (status, full) = s
            .get(&format!("/ws/getUserIndicatorData?url={custom}"), DEMO)
            .await;
        assert_eq!(status, 200, "{full}");
        let times: Vec<NaiveDateTime> = full
            .as_array()
            .unwrap()
            .iter()
            .map(|r| moment(r["DT"].as_str().unwrap()).unwrap())
            .collect();
        assert!(times.len() > 200, "{custom}: a long history to cut");
        daily_from.insert(custom.into(), oldest(&times));
    }

    let bars = market.daily(STOCK).await.unwrap();
    assert!(bars.len() > 200, "a long history to cut");
    known.insert(STOCK.into());
    daily_from.insert(STOCK.into(), oldest(&bars.time));

    let routes = data_routes();
    assert!(routes.len() >= 23, "{routes:?}");
    let mut with_history = Vec::new();
    for (path, params) in &routes {
        let mut url = widest(path, params, "100000");
        let (mut status, mut body) = s.get(&url, TRIAL).await;
        if status == 410 {
            // The bulk form takes at most 90 days by the spec.
            url = widest(path, params, "90");
            (status, body) = s.get(&url, TRIAL).await;
        }
        assert_eq!(status, 200, "{url}: a trial is served: {body:.300}");
        let mut found = BTreeMap::new();
        let symbol = path.contains("{symbol}").then_some(SYMBOL);
        readings(&body, symbol, &known, &mut found);
        let intraday = path.contains("Intraday");
        for (code, times) in &found {
            let from = if intraday {
                intraday_from.get(code)
            } else {
                daily_from.get(code)
            }
            .unwrap_or_else(|| panic!("{url}: readings of '{code}', a series not known here"));
            assert!(
                times.len() <= 90,
                "{url}: {} readings of {code} for a trial",
                times.len()
            );
            let first = times.first().unwrap();
            assert!(
                first >= from,
                "{url}: a trial got {code} at {first}, before its last 90 readings (from {from})"
            );
        }
        if !found.is_empty() {
            with_history.push(url);
        }
    }
    // The routes that answer readings were seen answering some (the two
    // asked for a date before the window answer none).
    assert!(with_history.len() >= 12, "{with_history:#?}");
    // A date within the window is still answered.
    let recent = daily_from[SYMBOL].format("%Y%m%d");
    let (_, one) = s
        .get(
            &format!("/ws/getSymbolLimitDate/{SYMBOL}?date={recent}"),
            TRIAL,
        )
        .await;
    assert_eq!(one.as_object().unwrap().len(), 1, "{one}");
    let (_, all) = s
        .get(&format!("/ws/getAllDataForDate?date={recent}"), TRIAL)
        .await;
    assert!(all.get(SYMBOL).is_some(), "{all:.300}");
    s.stop().await;
}
