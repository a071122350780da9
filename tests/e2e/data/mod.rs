//! The indicator data service over HTTP, checked against the Parquet files.

mod derived;
mod prices;
mod trial;

use chrono::Datelike;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD, TRIAL_EMAIL, TRIAL_PASSWORD};
use platform::marketdata::{IndicatorMeta, IndicatorSeries, codec, layout};
use serde_json::{Value, json};
use tests::server::{Options, TestServer, market_dir};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));
const LIGHT: Option<(&str, &str)> = Some(("light@example.test", "light-password"));
const PLAN_DATA: Option<(&str, &str)> = Some(("data@example.test", "data-password"));

fn file_series(key: String) -> IndicatorSeries {
    codec::batch_to_series(
        &codec::from_parquet(std::fs::read(market_dir().join(key)).unwrap().into()).unwrap(),
    )
    .unwrap()
}

fn catalog() -> Vec<IndicatorMeta> {
    codec::batch_to_catalog(
        &codec::from_parquet(
            std::fs::read(market_dir().join(layout::INDICATOR_CATALOG))
                .unwrap()
                .into(),
        )
        .unwrap(),
    )
    .unwrap()
}

fn key(t: chrono::NaiveDateTime) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3f").to_string()
}

async fn server() -> (TestServer, tempfile::TempDir) {
    let (s, dir) = TestServer::fresh().await;
    s.add_account("light@example.test", "light-password", "light-data-yearly")
        .await;
    platform::accounts::add_account(
        s.accounts.as_ref(),
        "data@example.test",
        "data-password",
        "data",
        vec!["AAPL_OPTIX".into()],
    )
    .await
    .unwrap();
    s.add_account("bt@example.test", "bt-password", "backtest")
        .await;
    (s, dir)
}

fn items(v: &Value) -> Vec<(String, String)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["chart_name"].as_str().unwrap().to_string(),
                i["url"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn catalog_endpoints_and_plan_filtering() {
    let (s, _dir) = server().await;
    let cat = catalog();
    let (status, all) = s.get("/ws/getAllSymbols", LIGHT).await;
    assert_eq!(status, 200);
    let want: Vec<(String, String)> = cat
        .iter()
        .filter(|m| !m.internal && m.kind != "reltrend")
        .map(|m| (m.chart_name.clone(), m.url.clone()))
        .collect();
    assert_eq!(items(&all), want);
    assert_eq!(
        all[0].as_object().unwrap().len(),
        2,
        "CatalogItem has chart_name and url only"
    );
    let (_, with) = s.get("/ws/getAllSymbolswithIndexes", LIGHT).await;
    assert_eq!(
        with.as_array().unwrap().len(),
        cat.iter().filter(|m| !m.internal).count()
    );
    let spx = with
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["url"] == "XLK_RELTREND")
        .unwrap();
    assert_eq!(spx["market_symbol"], "XLK");

    // Pro (all indicators): its selections (the inputs of its custom
    // indicators among them). Data plan: Core and Sectors plus its selection.
    let (_, sel) = s.get("/ws/getAllUserSelectedSymbols", DEMO).await;
    assert_eq!(
        items(&sel).into_iter().map(|(_, u)| u).collect::<Vec<_>>(),
        ["AAII_BULL", "SPX_OPTIX", "XLK_OPTIX"]
    );
    let (_, sel) = s
        .get("/ws/getAllUserSelectedSymbolsWithIndexes", PLAN_DATA)
        .await;
    let (_, twin) = s
        .get("/ws/getAllUserSelectedSymbolswithIndexes", PLAN_DATA)
        .await;
    assert_eq!(sel, twin, "the lowercase-w spelling answers the same");
    let want: Vec<String> = cat
        .iter()
        .filter(|m| {
            !m.internal
                && (m.url == "AAPL_OPTIX" || m.groups.iter().any(|g| g == "Core" || g == "Sectors"))
        })
        .map(|m| m.url.clone())
        .collect();
    assert_eq!(
        sel.as_array()
            .unwrap()
            .iter()
            .map(|i| i["url"].as_str().unwrap().to_string())
            .collect::<Vec<_>>(),
        want
    );
    assert!(
        sel.as_array()
            .unwrap()
            .iter()
            .all(|i| i["market_symbol"].is_string())
    );

    let models: Vec<String> = cat
        .iter()
        .filter(|m| m.subtype == "model")
        .map(|m| m.url.clone())
        .collect();
    assert_eq!(models.len(), 2);
    let (_, m) = s.get("/ws/getModelData", DEMO).await;
    assert_eq!(
        items(&m).into_iter().map(|(_, u)| u).collect::<Vec<_>>(),
        models
    );
    let (_, m) = s.get("/ws/getModelSymbolswithIndexes", DEMO).await;
    assert_eq!(m[0]["market_symbol"], "SPX");
    assert_eq!(
        s.get("/ws/getModelData", LIGHT).await.1,
        json!([]),
        "models are not in the light plan"
    );

    let (_, g) = s.get("/ws/getGroupSymbols/Sectors", PLAN_DATA).await;
    let sectors: Vec<String> = cat
        .iter()
        .filter(|m| m.groups.iter().any(|g| g == "Sectors") && !m.internal)
        .map(|m| m.url.clone())
        .collect();
    assert_eq!(
        items(&g).into_iter().map(|(_, u)| u).collect::<Vec<_>>(),
        sectors
    );
    assert_eq!(
        s.get("/ws/getGroupSymbols/Sectors", LIGHT).await.1,
        json!([]),
        "a group outside the plan lists nothing"
    );
    let (status, body) = s.get("/ws/getGroupSymbols/Nope", DEMO).await;
    assert_eq!((status, body["status"].as_i64()), (404, Some(404)));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn history_endpoints_equal_the_stored_series() {
    let (s, _dir) = server().await;
    let optix = file_series(layout::indicator_series("SPX_OPTIX"));
    let (status, h) = s.get("/ws/getSymbolData/SPX_OPTIX", DEMO).await;
    assert_eq!(status, 200);
    let h = h.as_object().unwrap();
    assert_eq!(h.len(), optix.time.len());
    let keys: Vec<&String> = h.keys().collect();
    assert_eq!(keys.first().unwrap().as_str(), key(optix.time[0]));
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "oldest to newest");
    for (i, t) in optix.time.iter().enumerate().step_by(997) {
        assert_eq!(h[&key(*t)], json!({"close": optix.close[i]}));
    }
    let (_, sh) = s.get("/ws/getSymbolSentimentData/SPX_OPTIX", DEMO).await;
    let last = optix.time.len() - 1;
    assert_eq!(
        sh[key(optix.time[last])],
        json!({"close": optix.close[last], "sentiment": optix.sentiment[last].unwrap()})
    );

    let (_, l) = s
        .get("/ws/getSymbolDataLimitDays/SPX_OPTIX?days=5", DEMO)
        .await;
    let want: serde_json::Map<String, Value> = (last - 4..=last)
        .map(|i| (key(optix.time[i]), json!({"close": optix.close[i]})))
        .collect();
    assert_eq!(l, Value::Object(want));
    // Weekly indicators answer in their own periods.
    let aaii = file_series(layout::indicator_series("AAII_BULL"));
    let (_, l) = s
        .get("/ws/getSymbolDataSentimentLimitDays/AAII_BULL?days=3", DEMO)
        .await;
    let n = aaii.time.len();
    let want: serde_json::Map<String, Value> = (n - 3..n).map(|i| (key(aaii.time[i]), json!({"close": aaii.close[i], "sentiment": aaii.sentiment[i].unwrap(), "market_symbol": "SPX"}))).collect();
    assert_eq!(l, Value::Object(want));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn snapshot_bulk_and_date_endpoints() {
    let (s, _dir) = server().await;
    let cat = catalog();
    let light: Vec<&IndicatorMeta> = cat
        .iter()
        .filter(|m| !m.internal && m.groups.iter().any(|g| g == "Core"))
        .collect();
    let (_, today) = s.get("/ws/getTodayData", LIGHT).await;
    let today = today.as_object().unwrap();
    assert_eq!(today.len(), light.len());
    for (n, m) in light.iter().enumerate() {
        let sr = file_series(layout::indicator_series(&m.url));
        let i = sr.time.len() - 1;
        assert_eq!(
            today[&n.to_string()],
            json!({"name": m.chart_name, "indicator": m.url, "last_close": sr.close[i], "update_date": key(sr.time[i]), "sentiment_value": format!("{}", sr.sentiment[i].unwrap())})
        );
    }
    let (_, idx) = s.get("/ws/getTodayDataIndexes", LIGHT).await;
    assert_eq!(idx["0"]["market_symbol"], json!(light[0].market_symbol));

    let optix = file_series(layout::indicator_series("SPX_OPTIX"));
    let i = optix
        .time
        .iter()
        .position(|t| t.date().to_string() == "2026-01-02")
        .unwrap();
    assert_eq!(
        s.get("/ws/getSymbolLimitDate/SPX_OPTIX?date=20260102", LIGHT)
            .await
            .1,
        json!({"2026-01-02T00:00:00.000": {"close": optix.close[i]}})
    );
    assert_eq!(
        s.get("/ws/getSymbolLimitDate/SPX_OPTIX?date=20260103", LIGHT)
            .await
            .1,
        json!({}),
        "no reading on a Saturday"
    );

    let (_, day) = s.get("/ws/getAllDataForDate?date=20261120", LIGHT).await;
    let daily: Vec<&&IndicatorMeta> = light.iter().filter(|m| m.updated == "Daily").collect();
    for m in &daily {
        let sr = file_series(layout::indicator_series(&m.url));
        let i = sr.time.len() - 1;
        assert_eq!(
            day[&m.url],
            json!({"name": m.chart_name, "last_close": sr.close[i], "update_date": "2026-11-20", "sentiment_value": sr.sentiment[i].unwrap()})
        );
    }
    assert!(
        day.get("AAII_BULL").is_none(),
        "a weekly (Thursday) indicator has no reading on that Friday"
    );

    let (status, bulk) = s.get("/ws/getAllSymbolDataLimitDays?days=3", LIGHT).await;
    assert_eq!(status, 200);
    let bulk = bulk.as_object().unwrap();
    assert_eq!(bulk.len(), light.len());
    let n = optix.time.len();
    assert_eq!(
        bulk["SPX_OPTIX"],
        json!(
            (n - 3..n)
                .map(|i| json!({"date": optix.time[i].date().to_string(), "close": optix.close[i]}))
                .collect::<Vec<_>>()
        )
    );
    for days in ["0", "91", "-1"] {
        let (status, body) = s
            .get(&format!("/ws/getAllSymbolDataLimitDays?days={days}"), LIGHT)
            .await;
        assert_eq!(
            (status, body["status"].as_i64()),
            (410, Some(410)),
            "{days}: {body}"
        );
    }
    let (status, body) = s.get("/ws/getAllSymbolDataLimitDays?days=x", LIGHT).await;
    assert_eq!(
        (status, body["status"].as_i64()),
        (400, Some(400)),
        "not a number at all: {body}"
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn intraday_endpoints() {
    let (s, _dir) = server().await;
    let cat = catalog();
    let intraday: Vec<&IndicatorMeta> = cat.iter().filter(|m| m.intraday).collect();
    assert!(intraday.len() >= 4);
    let (_, syms) = s.get("/ws/getIntradaySymbols", DEMO).await;
    assert_eq!(syms.as_object().unwrap().len(), intraday.len());
    assert_eq!(
        syms["S&P 500 Index Optix"],
        json!({"url": "SPX_OPTIX", "market_symbol": "SPX"})
    );

    let series = file_series(layout::indicator_intraday("SPX_OPTIX"));
    let (_, h) = s.get("/ws/getSymbolIntradayHistory/SPX_OPTIX", DEMO).await;
    let h = h.as_object().unwrap();
    assert_eq!(h.len(), series.time.len());
    assert_eq!(
        h[&key(series.time[5])],
        json!({"close": series.close[5], "market_symbol": "SPX"})
    );
    assert!(
        h.keys().next().unwrap().ends_with("T09:30:00.000"),
        "keys carry the time of day"
    );
    let (_, two) = s
        .get("/ws/getSymbolIntradayLimitDays/SPX_OPTIX?days=2", DEMO)
        .await;
    assert_eq!(
        two.as_object().unwrap().len(),
        26,
        "13 records a market day"
    );
    let n = series.time.len();
    assert!(
        two.get(key(series.time[n - 26])).is_some() && two.get(key(series.time[n - 27])).is_none()
    );

    let (_, latest) = s.get("/ws/getTodayIntradayData", DEMO).await;
    let latest = latest.as_object().unwrap();
    assert_eq!(
        latest.len(),
        13 * intraday.len(),
        "every record of the latest date"
    );
    let spx: Vec<&Value> = latest
        .values()
        .filter(|v| v["symbol"] == "SPX_OPTIX")
        .collect();
    assert_eq!(spx.len(), 13);
    assert!(spx.iter().all(|v| {
        v["datetime"]
            .as_str()
            .unwrap()
            .starts_with(&series.time[n - 1].date().to_string())
    }));
    assert_eq!(
        s.get("/ws/getSymbolIntradayHistory/AAII_BULL", DEMO)
            .await
            .0,
        404,
        "no intraday series"
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_trial_truncation_and_legacy_encoding() {
    let (s, dir) = server().await;
    let no_plan = Some(("bt@example.test", "bt-password"));
    for user in [None, Some((DEMO_EMAIL, "wrong")), no_plan] {
        let (status, body) = s.get("/ws/getSymbolData/SPX_OPTIX", user).await;
        assert_eq!(
            (status, body["status"].as_i64()),
            (401, Some(401)),
            "{user:?}: {body}"
        );
        assert!(body["error"].is_string());
    }
    let (status, body) = s.get("/ws/getSymbolData/NOPE_OPTIX", DEMO).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (
            404,
            Some("parameter 'symbol': 'NOPE_OPTIX' is not a known symbol")
        )
    );
    let (status, body) = s.get("/ws/getSymbolData/SPX_MODEL_SWING", LIGHT).await;
    assert_eq!(
        (status, body["status"].as_i64()),
        (405, Some(405)),
        "{body}"
    );
    assert!(body["error"].as_str().unwrap().contains("not subscribed"));
    assert_eq!(
        s.get("/ws/getSymbolData/SPX_BREADTH_RAW", DEMO).await.0,
        404,
        "internal records are not served"
    );
    for date in ["2026-01-02", "2026010", "20261340", "abcdefgh", ""] {
        let (status, body) = s
            .get(
                &format!("/ws/getSymbolLimitDate/SPX_OPTIX?date={date}"),
                DEMO,
            )
            .await;
        assert_eq!(
            (status, body["status"].as_i64()),
            (406, Some(406)),
            "{date}"
        );
        assert_eq!(
            s.get(&format!("/ws/getAllDataForDate?date={date}"), DEMO)
                .await
                .0,
            406
        );
    }
    for days in ["", "0", "-3", "two"] {
        assert_eq!(
            s.get(
                &format!("/ws/getSymbolDataLimitDays/SPX_OPTIX?days={days}"),
                DEMO
            )
            .await
            .0,
            400,
            "{days}"
        );
    }

    // Trial accounts: the last 90 records of full-history requests.
    let optix = file_series(layout::indicator_series("SPX_OPTIX"));
    let trial = Some((TRIAL_EMAIL, TRIAL_PASSWORD));
    let (_, h) = s.get("/ws/getSymbolData/SPX_OPTIX", trial).await;
    let h = h.as_object().unwrap();
    assert_eq!(h.len(), 90);
    let n = optix.time.len();
    assert!(h.contains_key(&key(optix.time[n - 90])) && !h.contains_key(&key(optix.time[n - 91])));
    assert_eq!(
        s.get("/ws/getSymbolSentimentData/SPX_OPTIX", trial)
            .await
            .1
            .as_object()
            .unwrap()
            .len(),
        90
    );
    // Every other path that can return history is held to 90 records too.
    let len = |v: &Value| match v {
        Value::Object(o) => o.len(),
        Value::Array(a) => a.len(),
        other => panic!("not a collection: {other}"),
    };
    for (path, want) in [
        ("/ws/getSymbolDataLimitDays/SPX_OPTIX?days=120", 90),
        ("/ws/getSymbolDataLimitDays/SPX_OPTIX?days=100000", 90),
        ("/ws/getSymbolDataLimitDays/SPX_OPTIX?days=30", 30),
        (
            "/ws/getSymbolDataSentimentLimitDays/SPX_OPTIX?days=100000",
            90,
        ),
        ("/ws/getUserIndicatorData?url=CUSTOM_OPTIX_AAII", 90),
        ("/ws/getSymbolIntradayHistory/SPX_OPTIX", 90),
        ("/ws/getSymbolIntradayLimitDays/SPX_OPTIX?days=100", 90),
        ("/ws/getSymbolIntradayLimitDays/SPX_OPTIX?days=2", 26),
    ] {
        let (status, body) = s.get(path, trial).await;
        assert_eq!((status, len(&body)), (200, want), "{path}: {body:.200}");
        let (status, full) = s.get(path, DEMO).await;
        assert!(
            status == 200 && len(&full) >= want,
            "{path}: {status} {full:.300}"
        );
    }
    let (_, bulk) = s.get("/ws/getAllSymbolDataLimitDays?days=90", trial).await;
    assert!(bulk.as_object().unwrap().values().all(|v| len(v) <= 90));
    s.stop().await;

    // The legacy switch: the same JSON, sent as a JSON string.
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    opts.data_legacy_json = true;
    let legacy = TestServer::start(opts).await;
    let (status, body) = legacy
        .get("/ws/getSymbolDataLimitDays/SPX_OPTIX?days=2", DEMO)
        .await;
    assert_eq!(status, 200);
    let inner: Value = serde_json::from_str(body.as_str().expect("a JSON string")).unwrap();
    assert_eq!(inner.as_object().unwrap().len(), 2);
    assert_eq!(
        inner[key(optix.time[n - 1])],
        json!({"close": optix.close[n - 1]})
    );
    let (status, err) = legacy.get("/ws/getSymbolData/NOPE", DEMO).await;
    assert_eq!(
        (status, err["status"].as_i64()),
        (404, Some(404)),
        "errors keep their plain body"
    );
    legacy.stop().await;
}
