//! Backtests on the caller's own bars (CSV mode) sent as JSON rows, CSV text,
//! Parquet and an Arrow IPC stream; the upload kept once and summarised in the task record; the
//! benchmark measured over exactly the backtest's window.

use chrono::NaiveDate;
use engine::Bars;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
use platform::uploads::Upload;
use serde_json::{Value, json};
use std::sync::Arc;
use tests::server::{Options, TestServer, market_dir, private_market};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

fn day(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

async fn spx() -> Arc<Bars> {
    ParquetMarketData::new(Arc::new(LocalDir::new(market_dir())))
        .daily("SPX")
        .await
        .unwrap()
}

/// SPX from 2005 to 2018 with Entry1 on every 50th bar and Exit1 25 bars later.
async fn old_spx_upload() -> Upload {
    let bars = spx()
        .await
        .slice_dates(Some(day("2005-01-01")), Some(day("2018-12-31")));
    let mut signals: [Vec<f64>; 10] = Default::default();
    for i in 0..bars.len() {
        for (k, s) in signals.iter_mut().enumerate() {
            let on = (k == 0 && i % 50 == 0) || (k == 5 && i % 50 == 25);
            s.push(if on { 1.0 } else { 0.0 });
        }
    }
    Upload { bars, signals }
}

fn strategy() -> Value {
    json!({
        "symbol": "MYSPX", "start_date": "2000-01-01", "benchmark": "SPX", "risk_control": "//",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Entry1"}, "rule": {"type_name": ">", "comparison_value": "0.5"}}},
        "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Exit1"}, "rule": {"type_name": ">", "comparison_value": "0.5"}}}
    })
}

fn json_rows(u: &Upload) -> Value {
    let b = &u.bars;
    Value::Array(
        (0..b.len())
            .map(|i| {
                json!({"Date": b.date(i).to_string(), "Open": b.open[i], "High": b.high[i], "Low": b.low[i],
                    "Close": b.close[i], "Volume": b.volume[i], "Entry1": u.signals[0][i], "Exit1": u.signals[5][i],
                    "Note": "dropped"})
            })
            .collect(),
    )
}

fn csv_text(u: &Upload) -> String {
    let b = &u.bars;
    let mut out = String::from("date,open,high,low,close,volume,Entry1,Exit1,Note\n");
    for i in 0..b.len() {
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},x\n",
            b.date(i),
            b.open[i],
            b.high[i],
            b.low[i],
            b.close[i],
            b.volume[i],
            u.signals[0][i],
            u.signals[5][i]
        ));
    }
    out
}

/// A part of a form as a test writes it: name, content type, bytes.
type Part = (&'static str, &'static str, Vec<u8>);

async fn post_form(s: &TestServer, path: &str, parts: &[(&str, &str, &[u8])]) -> (u16, Value) {
    s.post_form(path, DEMO, parts).await
}

/// Waits for the task and returns its record.
async fn finished(s: &TestServer, submitted: (u16, Value)) -> Value {
    assert_eq!(submitted.0, 202, "{}", submitted.1);
    let id = submitted.1["task_id"].as_str().unwrap();
    s.succeeded(&format!("/backtest/status/{id}"), DEMO).await
}

fn close(a: &Value, b: f64) {
    let a = a.as_f64().unwrap();
    assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{a} vs {b}");
}

/// The benchmark's change between two dates, from its closes.
fn change(b: &Bars, first: NaiveDate, last: NaiveDate) -> f64 {
    let at = |d: NaiveDate| b.close[b.time.partition_point(|t| t.date() <= d) - 1];
    (at(last) / at(first) - 1.0) * 100.0
}

#[tokio::test(flavor = "multi_thread")]
async fn own_bars_as_json_rows_csv_text_parquet_and_arrow_run_alike() {
    let (s, _dir) = TestServer::fresh().await;
    let upload = old_spx_upload().await;
    let mut body = strategy();
    body["csv_mode"] = json!(true);
    body["csv_data"] = json_rows(&upload);
    let by_rows = finished(&s, s.post("/backtest/start_backtest", DEMO, &body).await).await;

    let plain = serde_json::to_vec(&strategy()).unwrap();
    let text = csv_text(&upload);
    let by_csv = finished(
        &s,
        post_form(
            &s,
            "/backtest/start_backtest",
            &[
                ("strategy", "application/json", &plain),
                ("bars", "text/csv", text.as_bytes()),
            ],
        )
        .await,
    )
    .await;
    let parquet = upload.to_parquet().unwrap();
    let by_parquet = finished(
        &s,
        post_form(
            &s,
            "/backtest/start_backtest",
            &[
                ("strategy", "application/json", &plain),
                ("bars", "application/vnd.apache.parquet", &parquet),
            ],
        )
        .await,
    )
    .await;
    // An Arrow IPC stream (what the Python client sends), with a text
    // column the server leaves unread.
    let mut columns = platform::marketdata::columns::all(
        &platform::marketdata::codec::from_parquet(parquet.clone()).unwrap(),
    );
    columns.push((
        "Note".into(),
        platform::marketdata::columns::Column::Text(vec![Some("dropped".into()); upload.len()]),
    ));
    let stream =
        platform::marketdata::interchange::to_arrow_stream(columns, Default::default()).unwrap();
    let by_arrow = finished(
        &s,
        post_form(
            &s,
            "/backtest/start_backtest",
            &[
                ("strategy", "application/json", &plain),
                ("bars", "application/vnd.apache.arrow.stream", &stream),
            ],
        )
        .await,
    )
    .await;
    // A stream cut short is refused naming the bars, not a server fault.
    let cut = &stream[..stream.len() / 2];
    let (status, refused) = post_form(
        &s,
        "/backtest/start_backtest",
        &[
            ("strategy", "application/json", &plain),
            ("bars", "application/vnd.apache.arrow.stream", cut),
        ],
    )
    .await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["field"], "csv_data", "{refused}");
    // CSV text inside the JSON field runs the same.
    body["csv_data"] = json!(text);
    let by_text = finished(&s, s.post("/backtest/start_backtest", DEMO, &body).await).await;
    for other in [&by_csv, &by_parquet, &by_arrow, &by_text] {
        assert_eq!(other["result"], by_rows["result"]);
    }

    // The numbers: a trade per entry row (the last entry stays open), and
    // buy-and-hold and the benchmark (SPX itself) over the window the bars
    // cover, though start_date is earlier and SPX goes on for years.
    let r = &by_rows["result"];
    let b = &upload.bars;
    let entries = (0..b.len()).filter(|i| i % 50 == 0).count();
    assert_eq!(r["Total Trades"], json!(entries));
    let hold = (b.close[b.len() - 1] / b.close[0] - 1.0) * 100.0;
    close(&r["BuyHoldGain"], hold);
    close(&r["Benchmark Return (%)"], hold);
    close(
        &r["Benchmark Return (%)"],
        change(&*spx().await, b.date(0), b.date(b.len() - 1)),
    );
    let first = (b.close[25] / b.close[0] - 1.0) * 100.0;
    close(&r["Each Return"][0], first);

    // Its series and its page come from the stored upload: one close per
    // uploaded bar, the equity ending at the final capital.
    let id = by_parquet["task_id"].as_str().unwrap();
    let (status, chart) = s.get(&format!("/backtest/chart/{id}"), DEMO).await;
    assert_eq!(status, 200, "{chart}");
    assert_eq!(chart["close"].as_array().unwrap().len(), b.len());
    close(&chart["close"][b.len() - 1], b.close[b.len() - 1]);
    close(
        &chart["equity"][b.len() - 1],
        r["Final Capital"].as_f64().unwrap(),
    );
    let page = reqwest::Client::new()
        .get(s.url(&format!("/backtest/report/{id}")))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status().as_u16(), 200);

    // The record summarises the upload and links to it; the rows come back
    // on request, in the 16-column shape, equal to what was sent.
    let params = &by_parquet["params"];
    assert!(params.get("csv_data").is_none(), "{params}");
    let summary = &params["csv_upload"];
    assert_eq!(
        (
            &summary["rows"],
            &summary["first_date"],
            &summary["last_date"]
        ),
        (
            &json!(b.len()),
            &json!(b.date(0).to_string()),
            &json!(b.date(b.len() - 1).to_string())
        )
    );
    assert_eq!(summary["signal_columns"], json!(["Entry1", "Exit1"]));
    assert_eq!(
        params["csv_mode"],
        json!(true),
        "a bars part implies CSV mode"
    );
    let (status, full) = s.get(summary["url"].as_str().unwrap(), DEMO).await;
    assert_eq!(status, 200);
    let rows = full["params"]["csv_data"].as_array().unwrap();
    assert_eq!(rows.len(), b.len());
    assert_eq!(rows[7]["Close"], json!(b.close[7]));
    assert_eq!(rows[0].as_object().unwrap().len(), 16);
    // The same bars sent three ways are stored once.
    let stored = std::fs::read_dir(market_dir().join("uploads"))
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .filter(|f| {
            f.file_name().to_string_lossy()
                == format!("{}.parquet", summary["sha256"].as_str().unwrap())
        })
        .count();
    assert_eq!(stored, 1);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_symbol_whose_bars_end_years_before_the_benchmark_s() {
    let market = private_market();
    let md = ParquetMarketData::new(Arc::new(LocalDir::new(market.path())));
    let spx = md.daily("SPX").await.unwrap();
    let old = spx.slice_dates(None, Some(day("2018-12-31")));
    md.write_daily("OLDSPX", &old).await.unwrap();
    let db = tempfile::tempdir().unwrap();
    let mut opts = Options::new(db.path().join("db.sqlite"));
    opts.market_dir = market.path().to_path_buf();
    opts.scan.at_start = false;
    let s = TestServer::start(opts).await;
    let body = json!({
        "symbol": "OLDSPX", "start_date": "2000-01-01", "risk_control": "//21",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"}, "rule": {"type_name": ">", "comparison_value": "1"}}},
        "exit": {"rule_type": "RiskControlOnly"}
    });
    let task = finished(&s, s.post("/backtest/start_backtest", DEMO, &body).await).await;
    let r = &task["result"];
    let first = old.time.partition_point(|t| t.date() < day("2000-01-01"));
    let (d0, d1) = (old.date(first), old.date(old.len() - 1));
    assert_eq!(
        d1,
        r["BT End Date"]
            .as_str()
            .unwrap()
            .parse::<NaiveDate>()
            .unwrap()
    );
    let expected = change(&spx, d0, d1);
    close(&r["Benchmark Return (%)"], expected);
    close(&r["BuyHoldGain"], expected);
    // Not SPX to the end of its own data.
    assert!((expected - change(&spx, d0, spx.date(spx.len() - 1))).abs() > 1.0);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_bars_are_refused_naming_the_row_and_the_part() {
    let (s, _dir) = TestServer::fresh().await;
    let plain = serde_json::to_vec(&strategy()).unwrap();
    let cases: Vec<(Vec<Part>, &str, &str)> = vec![
        (
            vec![("bars", "text/csv", b"Date,Open,High,Low,Close,Volume\n2024-01-02,1,1,1,1,1\n".to_vec())],
            "strategy",
            "is required",
        ),
        (
            vec![("strategy", "application/json", plain.clone()), ("bars", "text/csv", b"Date,Open,High,Low,Close,Volume\n2024-01-02,1,1,1,1,1\n2024-01-03,1,oops,1,1,1\n".to_vec())],
            "csv_data[1].High",
            "'oops' is not a number",
        ),
        (
            vec![("strategy", "application/json", plain.clone()), ("bars", "text/csv", b"Date,Open,High,Low,Volume\n".to_vec())],
            "csv_data",
            "column 'Close' is required in the header row",
        ),
        (
            vec![("strategy", "application/json", plain.clone()), ("bars", "application/vnd.apache.parquet", b"PAR1 and nothing else".to_vec())],
            "csv_data",
            "not a readable Parquet file",
        ),
        (
            vec![("strategy", "application/json", br#"{"csv_mode": false}"#.to_vec()), ("bars", "text/csv", b"x".to_vec())],
            "csv_mode",
            "is false, but a 'bars' part was sent",
        ),
        (
            vec![("strategy", "application/json", plain.clone()), ("prices", "text/csv", b"x".to_vec())],
            "prices",
            "unknown part",
        ),
    ];
    for (parts, field, why) in cases {
        let parts: Vec<(&str, &str, &[u8])> = parts
            .iter()
            .map(|(n, c, d)| (*n, *c, d.as_slice()))
            .collect();
        let (status, e) = post_form(&s, "/backtest/start_backtest", &parts).await;
        assert_eq!(status, 400, "{e}");
        let message = e["detail"].as_str().unwrap_or_default();
        assert!(
            message.starts_with(&format!("parameter '{field}': {why}")),
            "{field}: {e}"
        );
    }
    // JSON rows: the row and column named; a bad row is not queued.
    let mut body = strategy();
    body["csv_mode"] = json!(true);
    body["csv_data"] =
        json!([{"Date": "2024-01-02", "Open": 2, "High": 1, "Low": 1.5, "Close": 1, "Volume": 1}]);
    let (status, e) = s.post("/backtest/start_backtest", DEMO, &body).await;
    assert_eq!(status, 400);
    assert!(
        e["detail"]
            .as_str()
            .unwrap()
            .starts_with("parameter 'csv_data[0].High': High 1 is below Low 1.5"),
        "{e}"
    );
    let (status, e) = s.post("/backtest/validate", DEMO, &body).await;
    assert_eq!(
        (
            status,
            e["detail"]
                .as_str()
                .is_some_and(|d| d.contains("csv_data[0].High"))
        ),
        (400, true),
        "{e}"
    );
    // Without csv_mode the rows are ignored (2.8), even bad ones.
    body["csv_mode"] = json!(false);
    body["symbol"] = json!("SPX");
    body["entry"]["condition"]["signal"]["name"] = json!("Symbol Close");
    body["exit"]["condition"]["signal"]["name"] = json!("Symbol Close");
    let (status, e) = s.post("/backtest/validate", DEMO, &body).await;
    assert_eq!(status, 200, "{e}");
    let (_, tasks) = s.get("/backtest/tasks", DEMO).await;
    assert_eq!(tasks["total"], json!(0));
    // An unknown `include` is named.
    let (status, e) = s
        .get(
            &format!("/backtest/status/{}?include=trades", uuid::Uuid::new_v4()),
            DEMO,
        )
        .await;
    assert_eq!(status, 400, "{e}");
    assert!(
        e["detail"]
            .as_str()
            .unwrap()
            .starts_with("parameter 'include'")
    );
    s.stop().await;
}
