//! Answers that are tables, asked for as Arrow IPC streams: every such route
//! answers `Accept: application/vnd.apache.arrow.stream` with the JSON
//! answer's columns and values (read back here with the Arrow reader), its
//! other parts in the schema metadata; the JSON answers say they vary by
//! `Accept`; errors stay JSON.

use chrono::NaiveDateTime;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::columns::Column;
use platform::marketdata::interchange::{ARROW_STREAM, Table, from_arrow_stream};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::time::Duration;
use tests::server::{TestServer, eventually};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

/// The route's answer with and without `Accept` naming the Arrow stream.
async fn both(
    s: &TestServer,
    path: &str,
    body: Option<&Value>,
) -> (Value, Table, HashMap<String, String>) {
    let client = reqwest::Client::new();
    let request = |arrow: bool| {
        let mut r = match body {
            Some(b) => client.post(s.url(path)).json(b),
            None => client.get(s.url(path)),
        };
        r = r.basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD));
        if arrow {
            r = r.header("accept", format!("application/json;q=0.5, {ARROW_STREAM}"));
        }
        r
    };
    let json = request(false).send().await.unwrap();
    assert_eq!(json.status(), 200, "{path}");
    let vary: Vec<&str> = json
        .headers()
        .get_all("vary")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert!(vary.contains(&"Accept"), "{path}: Vary {vary:?}");
    let json: Value = json.json().await.unwrap();
    let arrow = request(true).send().await.unwrap();
    assert_eq!(arrow.status(), 200, "{path}");
    assert_eq!(arrow.headers()["content-type"], ARROW_STREAM, "{path}");
    let bytes = arrow.bytes().await.unwrap();
    let (table, metadata) = from_arrow_stream(&bytes).unwrap();
    (json, table, metadata)
}

fn time(text: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
        .or_else(|_| {
            NaiveDateTime::parse_from_str(&format!("{text}T00:00:00"), "%Y-%m-%dT%H:%M:%S")
        })
        .unwrap_or_else(|_| panic!("'{text}' is not a time"))
}

/// The table holds exactly the rows' keys, in order, and their values.
fn same(rows: &[Map<String, Value>], table: &Table, what: &str) {
    let keys: Vec<&str> = rows[0].keys().map(String::as_str).collect();
    let names: Vec<&str> = table.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, keys, "{what}: columns");
    for (name, col) in table {
        for (i, row) in rows.iter().enumerate() {
            let v = &row[name];
            // serde_json reads decimals to within an ulp (pandas reads them exactly).
            let near = |a: f64, b: f64| (a - b).abs() <= f64::EPSILON * b.abs();
            let (ok, got) = match col {
                Column::Number(c) => (
                    c[i].zip(v.as_f64()).is_some_and(|(a, b)| near(a, b))
                        || (c[i].is_none() && v.is_null()),
                    format!("{:?}", c[i]),
                ),
                Column::Integer(c) => (c[i] == v.as_i64(), format!("{:?}", c[i])),
                Column::Text(c) => (c[i].as_deref() == v.as_str(), format!("{:?}", c[i])),
                Column::Time(c) => (c[i] == v.as_str().map(time), format!("{:?}", c[i])),
                Column::Date(c) => (
                    c[i].map(|d| d.to_string()).as_deref() == v.as_str(),
                    format!("{:?}", c[i]),
                ),
            };
            assert!(ok, "{what}: {name}[{i}]: {got} vs {v}");
        }
    }
}

fn objects(v: &Value) -> Vec<Map<String, Value>> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_object().unwrap().clone())
        .collect()
}

/// A history answer's records as rows, the key as `Date` first.
fn keyed(v: &Value) -> Vec<Map<String, Value>> {
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, r)| {
            let mut row = Map::new();
            row.insert("Date".into(), json!(k));
            row.extend(r.as_object().unwrap().clone());
            row
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_table_answer_is_also_an_arrow_stream_of_the_same_values() {
    let (s, _dir) = TestServer::fresh().await;

    // Correlation and beta: the rolling rows, the matrix and code beside them.
    let q = json!({"benchmark": "SPX", "stock_comparison": ["TLT", "GLD", "NDX"], "start_date": "2015-01-01", "end_date": "2020-12-31", "roll_window": 21});
    let (json, table, meta) = both(&s, "/symbol_corr", Some(&q)).await;
    same(&objects(&json["data"]["corr_roll"]), &table, "corr_roll");
    assert_eq!(meta["code"], "211");
    let matrix: Value = serde_json::from_str(&meta["corr_matrix"]).unwrap();
    assert_eq!(matrix, json["data"]["corr_matrix"]);
    let (json, table, meta) = both(&s, "/symbol_beta", Some(&q)).await;
    same(&objects(&json["data"]["beta_roll"]), &table, "beta_roll");
    assert_eq!(meta["code"], "211");
    assert!(
        table.len() == 8 && table[0].0 == "Date",
        "Date, 3 x (beta, price), stock_price"
    );

    // Data-service series, plain and with sentiment and market symbol.
    for path in [
        "/ws/getSymbolData/SPX_OPTIX",
        "/ws/getSymbolSentimentData/SPX_OPTIX",
        "/ws/getSymbolDataLimitDays/SPX_OPTIX?days=300",
        "/ws/getSymbolDataSentimentLimitDays/SPX_OPTIX?days=300",
    ] {
        let (json, table, _) = both(&s, path, None).await;
        let rows = keyed(&json);
        assert!(rows.len() >= 300, "{path}");
        same(&rows, &table, path);
    }

    // The scanner's day, once the start-up scan has written it.
    let path = "/smart-stock-scanner/latest-day-all?category=SwingAI";
    assert!(
        eventually(Duration::from_secs(60), || async {
            s.get(path, DEMO).await.1["code"] == 200
        })
        .await,
        "the start-up scan wrote a day"
    );
    let (json, table, meta) = both(&s, path, None).await;
    let data = &json["data"];
    same(&objects(&data["scanner_data"]), &table, "scanner_data");
    assert_eq!(
        (
            meta["code"].as_str(),
            meta["as_of_date"].as_str(),
            meta["count"].clone()
        ),
        (
            "200",
            data["as_of_date"].as_str().unwrap(),
            data["count"].to_string()
        )
    );
    assert_eq!(
        serde_json::from_str::<Value>(&meta["tickers"]).unwrap(),
        data["tickers"]
    );

    // A batch's results: the Arrow table is the Parquet file's, by Accept or format.
    let grid = json!({"strategy": {"symbol": "SPX", "start_date": "2016-01-04", "risk_control": "//5",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
            "rule": {"comparison_type": "SVMA", "type_name": ">=", "comparison_value": "0", "period": "20"}}},
        "exit": {"rule_type": "RiskControlOnly"}},
        "grid": {"entry.condition.rule.period": ["10", "20", "50"], "risk_control": ["//5", "//21"]}});
    let (status, sub) = s.post("/backtest/batch", DEMO, &grid).await;
    assert_eq!(status, 202, "{sub}");
    let id = sub["task_id"].as_str().unwrap().to_string();
    assert!(
        eventually(Duration::from_secs(60), || async {
            s.get(&format!("/backtest/batch/{id}"), DEMO).await.1["status"] == "SUCCESS"
        })
        .await
    );
    let results = format!("/backtest/batch/{id}/results");
    let (json, table, _) = both(&s, &results, None).await;
    assert_eq!(json.as_array().unwrap().len(), 6);
    let base = s.base.clone();
    let get = |path: String| {
        let url = format!("{base}{path}");
        async move {
            reqwest::Client::new()
                .get(url)
                .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
                .send()
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap()
        }
    };
    let parquet = get(format!("{results}?format=parquet")).await;
    let parquet = platform::marketdata::codec::from_parquet(parquet).unwrap();
    assert_eq!(table, platform::marketdata::columns::all(&parquet));
    let (by_format, _) = from_arrow_stream(&get(format!("{results}?format=arrow")).await).unwrap();
    assert_eq!(by_format, table);
    let index = table
        .iter()
        .find(|(n, _)| n == "index")
        .map(|(_, c)| c.clone());
    assert_eq!(index, Some(Column::Integer((0..6).map(Some).collect())));

    // Errors stay JSON whatever is accepted.
    let r = reqwest::Client::new()
        .get(s.url("/ws/getSymbolData/NO_SUCH_CODE"))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .header("accept", ARROW_STREAM)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    s.stop().await;
}
