//! What was sent is what runs, over real HTTP with the sample data: every
//! documented body is taken and refused with one unknown field, the
//! misspellings a new user makes are refused by name (with the name meant),
//! a grid path or value is named where it fails, a grid that repeats one
//! strategy is refused, integers stay integers in every table, a default
//! that decided trades is reported with its count, and an unknown symbol is
//! the same 404 naming its field on every service.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::columns::Column;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Duration;
use tests::operations::{self, Ids};
use tests::server::{TestServer, eventually};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

/// SMA(fast) crossing the close, on SPX since 2016; `risk` is sent only
/// when given.
fn sma(fast: Value, risk: Option<&str>) -> Value {
    let signal =
        json!({"name": "Simple Moving Average", "type": "Technical", "params": {"period": fast}});
    let mut s = json!({"symbol": "SPX", "start_date": "2016-01-04",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": signal, "rule": {"comparison_type": "MA", "type_name": "CrossAbove"}}},
        "exit": {"rule_type": "SingleCondition", "condition": {"signal": signal, "rule": {"comparison_type": "MA", "type_name": "CrossBelow"}}}});
    if let Some(r) = risk {
        s["risk_control"] = json!(r);
    }
    s
}

/// Task ids for the operations' catalogue when no task is read.
fn no_tasks() -> Ids {
    Ids {
        backtest: String::new(),
        batch: String::new(),
        cpm: String::new(),
        scanner: String::new(),
    }
}

/// The operations of the document that take a body, as `POST path`.
fn body_operations() -> BTreeSet<String> {
    let doc: Value = serde_json::from_str(api::routes::document()).unwrap();
    let mut out = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if op.get("requestBody").is_some() {
                out.insert(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    out
}

/// The error's `field` and message in any service's envelope.
fn refusal(body: &Value) -> (Option<&str>, &str) {
    let message = ["detail", "msg", "error"]
        .iter()
        .find_map(|k| body[*k].as_str())
        .unwrap_or_default();
    (body["field"].as_str(), message)
}

/// Every operation with a body: a valid body answers 2xx, and the same
/// body with one field more is a 400 naming it, in the service's envelope.
/// A new operation with a body fails this test until it has a body here.
#[tokio::test(flavor = "multi_thread")]
async fn every_documented_body_is_taken_and_an_unknown_field_in_it_refused() {
    let (s, _dir) = TestServer::fresh().await;
    let ids = no_tasks();
    let mut bodies: Vec<(String, String, Value)> = operations::operations(&ids)
        .into_iter()
        .filter_map(|op| Some((op.key.to_string(), op.path, op.body?)))
        .collect();
    bodies.push((
        "POST /smart-stock-scanner/alerts".into(),
        "/smart-stock-scanner/alerts".into(),
        json!({"name": "strict", "signals": ["MA"], "min_trades": 3}),
    ));
    let hook = json!({"url": "http://127.0.0.1:9/hook", "events": ["scanner.alert"], "description": "strict"});
    bodies.push(("POST /webhooks".into(), "/webhooks".into(), hook.clone()));
    let (status, endpoint) = s.post("/webhooks", DEMO, &hook).await;
    assert_eq!(status, 201, "{endpoint}");
    bodies.push((
        "POST /webhooks/{webhook_id}/rotate".into(),
        format!("/webhooks/{}/rotate", endpoint["id"].as_str().unwrap()),
        json!({"keep_previous_hours": 1}),
    ));
    bodies.push((
        "POST /keys".into(),
        "/keys".into(),
        json!({"name": "strict", "scopes": ["read"], "mode": "test", "expires_at": "2099-01-01T00:00:00Z"}),
    ));
    let covered: BTreeSet<String> = bodies.iter().map(|(k, _, _)| k.clone()).collect();
    assert_eq!(
        covered,
        body_operations(),
        "a body for every operation that takes one"
    );
    for (key, path, body) in &bodies {
        let (status, answer) = s.post(path, DEMO, body).await;
        assert!(
            (200..300).contains(&status)
                && answer.get("code").is_none_or(|c| c.as_u64() < Some(400)),
            "{key}: {status} {answer}"
        );
        let mut extra = body.clone();
        extra["zz_unknown_field"] = json!(1);
        let (status, answer) = s.post(path, DEMO, &extra).await;
        assert_eq!(status, 400, "{key}: {answer}");
        let (field, message) = refusal(&answer);
        assert_eq!(field, Some("zz_unknown_field"), "{key}: {answer}");
        assert_eq!(
            message, "parameter 'zz_unknown_field': unknown field",
            "{key}"
        );
    }
    println!(
        "{} operations with a body, each refusing an unknown field",
        bodies.len()
    );
    s.stop().await;
}

/// Every operation's documented query, as the operations' catalogue sends
/// it (each parameter from the document), still answers 2xx: the rule
/// refuses only what an operation does not declare.
#[tokio::test(flavor = "multi_thread")]
async fn every_documented_query_is_still_taken() {
    let (s, _dir) = TestServer::fresh().await;
    let ids = no_tasks();
    let mut queries = 0;
    for op in operations::operations(&ids) {
        if op.method != "GET" || op.key.contains("_id}") {
            continue;
        }
        let (status, text) = s.get_text(&op.path, DEMO).await;
        assert!(
            (200..300).contains(&status) && !text.contains("unknown query parameter"),
            "{}: {status} {text:.300}",
            op.key
        );
        queries += usize::from(op.path.contains('?'));
    }
    assert!(queries >= 25, "{queries} operations sent a query");
    s.stop().await;
}

/// The misspellings of a new user, each refused by name with the one meant.
#[tokio::test(flavor = "multi_thread")]
async fn misspelt_fields_and_parameters_are_refused_naming_the_one_meant() {
    let (s, _dir) = TestServer::fresh().await;
    let mut strategy = sma(json!(10), Some("//"));
    strategy["comission"] = json!(0.001);
    let (status, e) = s.post("/backtest/validate", DEMO, &strategy).await;
    assert_eq!(status, 400, "{e}");
    assert_eq!(
        refusal(&e),
        (
            Some("comission"),
            "parameter 'comission': unknown field (did you mean 'commission'?)"
        )
    );
    let mut strategy = sma(json!(10), Some("//"));
    strategy["entry"]["condition"]["rule"]["perod"] = json!(20);
    let (status, e) = s.post("/backtest/start_backtest", DEMO, &strategy).await;
    assert_eq!(status, 400, "{e}");
    assert_eq!(
        refusal(&e).1,
        "parameter 'entry.condition.rule.perod': unknown field (did you mean 'period'?)"
    );
    for (path, field, meant) in [
        (
            "/seasonality?ticker=SPX&start_yr=2010",
            "start_yr",
            "start_year",
        ),
        (
            "/seasonality/performance-by-month?ticker=SPX&end_yaer=2020",
            "end_yaer",
            "end_year",
        ),
        (
            "/views/correlation?benchmark=SPX&stock_comparison=AAPL&start_date=2020-01-02&end_date=2024-12-31&rolling_window=63",
            "rolling_window",
            "roll_window",
        ),
        ("/backtest/tasks?limt=5", "limt", "limit"),
        ("/ws/getSymbolDataLimitDays/SPX_OPTIX?day=5", "day", "days"),
    ] {
        let (status, e) = s.get(path, DEMO).await;
        assert_eq!(status, 400, "{path}: {e}");
        assert_eq!(
            refusal(&e),
            (
                Some(field),
                format!("parameter '{field}': unknown query parameter (did you mean '{meant}'?)")
                    .as_str()
            ),
            "{path}"
        );
    }
    // A JSON body and its form alike.
    let body = json!({"benchmark": "SPX", "stock_comparison": ["AAPL"], "start_date": "2020-01-02", "end_date": "2024-12-31", "rolling_window": 63});
    let (status, e) = s.post("/symbol_corr", DEMO, &body).await;
    assert_eq!(
        (status, refusal(&e).0),
        (400, Some("rolling_window")),
        "{e}"
    );
    let form = reqwest::Client::new()
        .post(s.url("/symbol_corr"))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .form(&[
            ("benchmark", "SPX"),
            ("stock_comparison", "AAPL"),
            ("start_date", "2020-01-02"),
            ("end_date", "2024-12-31"),
            ("rolling_window", "63"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(form.status(), 400);
    let e: Value = form.json().await.unwrap();
    assert_eq!(
        refusal(&e).1,
        "parameter 'rolling_window': unknown field (did you mean 'roll_window'?)"
    );
    s.stop().await;
}

/// The rules inside a portfolio, each one of several shapes (tagged by
/// `method`, or by their one key), refuse an unknown field by its path,
/// and the document says so: every shape of their schemas is closed, so a
/// generator or fuzzer builds no body the service refuses.
#[tokio::test(flavor = "multi_thread")]
async fn a_portfolio_s_rules_refuse_an_unknown_field_by_its_path_as_documented() {
    let doc: Value = serde_json::from_str(api::routes::document()).unwrap();
    for name in [
        "SelectParams",
        "WeightingParams",
        "SizingParams",
        "ScoreParams",
    ] {
        for shape in doc["components"]["schemas"][name]["oneOf"]
            .as_array()
            .unwrap()
        {
            assert_eq!(shape["additionalProperties"], false, "{name}: {shape}");
        }
    }
    let (s, _dir) = TestServer::fresh().await;
    let mut weights = operations::portfolio();
    weights["weights"]["weighting"] = json!({"method": "inverse_volatility", "bars": 20});
    let strategy = sma(json!(10), None);
    let signals = json!({"universe": ["AAPL", "MSFT", "NVDA"], "start_date": "2020-01-02", "end_date": "2021-12-31",
        "signals": {"entry": strategy["entry"], "exit": strategy["exit"], "max_positions": 2,
            "rank_by": {"by": {"volatility": 20}}, "sizing": {"method": "fixed_fraction", "fraction": 0.2}}});
    for (body, at) in [
        (&weights, "/weights/select"),
        (&weights, "/weights/select/by"),
        (&weights, "/weights/weighting"),
        (&signals, "/signals/sizing"),
        (&signals, "/signals/rank_by/by"),
    ] {
        let (status, e) = s.post("/backtest/portfolio", DEMO, body).await;
        assert_eq!(status, 202, "{e}");
        let mut b = body.clone();
        b.pointer_mut(at).unwrap()["zz_unknown_field"] = json!(1);
        let (status, e) = s.post("/backtest/portfolio", DEMO, &b).await;
        assert_eq!(status, 400, "{at}: {e}");
        let path = at[1..].replace('/', ".");
        let (field, message) = refusal(&e);
        if at.ends_with("/by") {
            // A one-key shape: a second key is refused where the shape is
            // read (inside a tagged rule, the rule's path).
            assert!(field.is_some_and(|f| path.starts_with(f)), "{e}");
            assert!(message.contains("a single key"), "{e}");
        } else {
            assert_eq!(
                field,
                Some(format!("{path}.zz_unknown_field").as_str()),
                "{e}"
            );
        }
    }
    s.stop().await;
}

/// A grid is checked before anything runs: a path no strategy holds, a
/// value its field cannot take, a value listed twice and a path that
/// changes nothing the backtest reads are each refused naming the path.
#[tokio::test(flavor = "multi_thread")]
async fn grid_paths_and_values_are_checked_before_anything_runs() {
    let (s, _dir) = TestServer::fresh().await;
    let grid = |grid: Value| json!({"strategy": sma(json!(10), Some("//")), "grid": grid});
    for (g, field, words) in [
        (
            json!({"entry.condition.rule.perod": [5, 10, 20]}),
            "grid.entry.condition.rule.perod",
            "unknown field (did you mean 'period'?)",
        ),
        (
            json!({"risk_control": ["//5", "bad"]}),
            "grid.risk_control",
            "the value 'bad': ",
        ),
        (
            json!({"entry.condition.signal.params.period,exit.condition.signal.params.period": [5, 0]}),
            "grid.entry.condition.signal.params.period,exit.condition.signal.params.period",
            "the value 0: must be at least 1",
        ),
        (
            json!({"entry.condition.signal.params.period": [5, 10, 5]}),
            "grid.entry.condition.signal.params.period",
            "lists 5 twice (item 2)",
        ),
        (
            json!({"name": ["a", "b"]}),
            "grid.name",
            "the values 'a' and 'b' give the same strategy (points 0 and 1 of the grid)",
        ),
        (
            json!({"risk_control": ["//", "//"], "exclude_oo": [0, 1]}),
            "grid.risk_control",
            "lists '//' twice",
        ),
        (
            json!({"exclude_oo": [0, 1]}),
            "grid.exclude_oo",
            "give the same strategy",
        ),
        (
            json!({"entry.condition.signal.params.period": [5, 5.0]}),
            "grid.entry.condition.signal.params.period",
            "the values 5 and 5.0 give the same strategy",
        ),
    ] {
        let (status, e) = s.post("/backtest/batch", DEMO, &grid(g.clone())).await;
        assert_eq!(status, 400, "{g}: {e}");
        let (got, message) = refusal(&e);
        assert_eq!(got, Some(field), "{g}: {e}");
        assert!(
            message.starts_with(&format!("parameter '{field}': ")) && message.contains(words),
            "{g}: {message}"
        );
    }
    let (_, listed) = s.get("/backtest/batches", DEMO).await;
    assert_eq!(listed["total"], 0, "nothing was queued: {listed}");
    s.stop().await;
}

/// Grid values sent as integers come back as integers in the JSON, CSV,
/// Parquet and Arrow rows, and so do the counts among the metrics, as in a
/// single run.
#[tokio::test(flavor = "multi_thread")]
async fn integer_grid_values_and_counts_stay_integers_in_every_format() {
    let (s, _dir) = TestServer::fresh().await;
    let path = "entry.condition.signal.params.period,exit.condition.signal.params.period";
    let body = json!({"strategy": sma(json!(10), Some("//")), "grid": {path: [5, 20]}, "statistics": false});
    let (status, sub) = s.post("/backtest/batch", DEMO, &body).await;
    assert_eq!(status, 202, "{sub}");
    let id = sub["task_id"].as_str().unwrap().to_string();
    let status_path = format!("/backtest/batch/{id}");
    assert!(
        eventually(Duration::from_secs(120), || async {
            s.get(&status_path, DEMO).await.1["status"] == "SUCCESS"
        })
        .await
    );
    let results = |format: &'static str| {
        let path = format!("/backtest/batch/{id}/results?format={format}");
        let s = &s;
        async move { s.get_raw(&path, DEMO).await.1 }
    };
    let rows: Value = serde_json::from_slice(&results("json").await).unwrap();
    let trades: Vec<i64> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert!(r["params"][path].is_i64(), "{r}");
            assert!(
                r["Total Trades"].is_u64() && r["DrawDown Period"].is_u64(),
                "{r}"
            );
            r["Total Trades"].as_i64().unwrap()
        })
        .collect();
    assert_eq!(rows[1]["params"][path], json!(20));
    let csv = String::from_utf8(results("csv").await.to_vec()).unwrap();
    let line: Vec<&str> = csv.lines().nth(2).unwrap().split(',').collect();
    assert_eq!(
        line[..4],
        ["1", "20", "SPX", &trades[1].to_string()][..],
        "{csv}"
    );
    let parquet = platform::marketdata::codec::from_parquet(results("parquet").await).unwrap();
    use platform::marketdata::columns::integers;
    assert_eq!(integers(&parquet, path).unwrap(), [Some(5), Some(20)]);
    assert_eq!(
        integers(&parquet, "Total Trades").unwrap(),
        trades.iter().map(|t| Some(*t)).collect::<Vec<_>>()
    );
    let (table, _) =
        platform::marketdata::interchange::from_arrow_stream(&results("arrow").await).unwrap();
    let column = |name: &str| table.iter().find(|(n, _)| n == name).unwrap().1.clone();
    assert_eq!(column(path), Column::Integer(vec![Some(5), Some(20)]));
    assert!(matches!(column("Total Trades"), Column::Integer(_)));
    assert!(matches!(column("DrawDown Period"), Column::Integer(_)));
    // A single run of the first point: the same count, as an integer.
    let (status, sub) = s
        .post("/backtest/start_backtest", DEMO, &sma(json!(5), Some("//")))
        .await;
    assert_eq!(status, 202, "{sub}");
    let one = s
        .succeeded(
            &format!("/backtest/status/{}", sub["task_id"].as_str().unwrap()),
            DEMO,
        )
        .await;
    assert_eq!(one["result"]["Total Trades"], json!(trades[0]));
    s.stop().await;
}

/// A result carries the defaults it was given; when the default maximum
/// holding closed trades, a warning says how many and what to send.
#[tokio::test(flavor = "multi_thread")]
async fn the_default_maximum_holding_is_reported_with_the_trades_it_closed() {
    let (s, _dir) = TestServer::fresh().await;
    let run = |strategy: Value| {
        let s = &s;
        async move {
            let (status, sub) = s.post("/backtest/start_backtest", DEMO, &strategy).await;
            assert_eq!(status, 202, "{sub}");
            s.succeeded(
                &format!("/backtest/status/{}", sub["task_id"].as_str().unwrap()),
                DEMO,
            )
            .await["result"]
                .clone()
        }
    };
    let defaulted = run(sma(json!(10), None)).await;
    assert_eq!(defaulted["defaults_applied"]["risk_control"], "//21");
    assert_eq!(defaulted["defaults_applied"]["commission"], "0.0000");
    let reasons = defaulted["Exit Reason"].as_array().unwrap();
    let closed = reasons.iter().filter(|r| *r == "Max Holding").count();
    assert!(closed > 0, "{defaulted}");
    let warning = format!(
        "risk_control was not sent, and its default '//21' closed {closed} of {} trades at the maximum holding; send risk_control '//' for no risk control, or the limits you mean",
        reasons.len()
    );
    assert!(
        defaulted["warnings"]
            .as_array()
            .unwrap()
            .contains(&json!(warning)),
        "{}",
        defaulted["warnings"]
    );
    // Sent explicitly, the same limit is no default and no warning.
    let explicit = run(sma(json!(10), Some("//21"))).await;
    assert_eq!(explicit["Total Trades"], defaulted["Total Trades"]);
    assert!(explicit["defaults_applied"].get("risk_control").is_none());
    assert!(
        !explicit["warnings"]
            .to_string()
            .contains("risk_control was not sent"),
        "{explicit}"
    );
    // A run on the caller's own bars (CSV mode) carries them too.
    let mut own = sma(json!(10), None);
    own["csv_mode"] = json!(true);
    own["csv_data"] = json!((0..60)
        .map(|d| {
            let close = 100.0 + (d as f64 / 3.0).sin() * 5.0;
            json!({"Date": chrono::NaiveDate::from_ymd_opt(2024, 1, 1).unwrap() + chrono::Days::new(d),
                "Open": close, "High": close + 1.0, "Low": close - 1.0, "Close": close, "Volume": 1000})
        })
        .collect::<Vec<_>>());
    own["start_date"] = json!("2024-01-01");
    let csv = run(own).await;
    assert_eq!(csv["defaults_applied"]["risk_control"], "//21", "{csv}");
    assert_eq!(csv["defaults_applied"]["trade_price"], 2);
    // A batch says it too, before its rows.
    let (status, sub) = s
        .post(
            "/backtest/batch",
            DEMO,
            &json!({"strategies": [sma(json!(10), None), sma(json!(20), Some("//"))], "statistics": false}),
        )
        .await;
    assert_eq!(status, 202, "{sub}");
    let (_, batch) = s
        .get(
            &format!("/backtest/batch/{}", sub["task_id"].as_str().unwrap()),
            DEMO,
        )
        .await;
    assert_eq!(batch["defaults_applied"]["risk_control"], "//21");
    assert!(
        batch["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("risk_control was not sent for 1 of 2 strategies"),
        "{batch}"
    );
    s.stop().await;
}

/// An unknown symbol or ticker is a 404 naming its field on every service.
#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_symbol_is_a_404_naming_its_field_on_every_service() {
    let (s, _dir) = TestServer::fresh().await;
    let mut batch = json!({"strategies": [sma(json!(10), Some("//")), sma(json!(20), Some("//"))]});
    batch["strategies"][1]["symbol"] = json!("NOSUCH");
    let mut benchmark = sma(json!(10), Some("//"));
    benchmark["benchmark"] = json!("NOSUCH");
    let posts = [
        (
            "/backtest/validate",
            {
                let mut b = sma(json!(10), Some("//"));
                b["symbol"] = json!("NOSUCH");
                b
            },
            "symbol",
        ),
        ("/backtest/start_backtest", benchmark, "benchmark"),
        ("/backtest/batch", batch, "strategies[1].symbol"),
        (
            "/symbol_corr",
            json!({"benchmark": "SPX", "stock_comparison": ["NOSUCH"], "start_date": "2020-01-02", "end_date": "2024-12-31"}),
            "stock_comparison",
        ),
        (
            "/symbol_beta",
            json!({"benchmark": "NOSUCH", "stock_comparison": ["AAPL"], "start_date": "2020-01-02", "end_date": "2024-12-31"}),
            "benchmark",
        ),
        (
            "/pattern_corr",
            json!({"referenceSymbol": "NOSUCH", "referenceStartDate": "2024-01-02", "referenceEndDate": "2024-06-28", "comparisonSymbol": "SPX", "comparisonStartDate": "2023-01-03", "comparisonEndDate": "2023-06-30"}),
            "referenceSymbol",
        ),
        (
            "/cpm/scan",
            {
                let mut p = operations::pattern();
                p["symbol"] = json!("NOSUCH");
                p
            },
            "symbol",
        ),
    ];
    for (path, body, field) in posts {
        let (status, e) = s.post(path, DEMO, &body).await;
        assert_eq!(status, 404, "{path}: {e}");
        let (got, message) = refusal(&e);
        assert_eq!(got, Some(field), "{path}: {e}");
        assert!(
            message.starts_with(&format!("parameter '{field}': 'NOSUCH")),
            "{path}: {message}"
        );
    }
    for (path, field) in [
        ("/seasonality?ticker=NOSUCH", "ticker"),
        ("/seasonality/performance-by-month?ticker=NOSUCH", "ticker"),
        ("/smart-stock-scanner/single/NOSUCH", "ticker"),
        ("/company_detail/get_profile?symbol=NOSUCH", "symbol"),
        ("/company_detail/market_pred?symbol=NOSUCH", "symbol"),
        ("/ws/getSymbolData/NOSUCH", "symbol"),
        ("/ws/getSymbolDataLimitDays/NOSUCH?days=5", "symbol"),
        ("/ws/getGroupSymbols/NOSUCH", "group"),
    ] {
        let (status, e) = s.get(path, DEMO).await;
        assert_eq!(status, 404, "{path}: {e}");
        let (got, message) = refusal(&e);
        assert_eq!(got, Some(field), "{path}: {e}");
        assert!(
            message.starts_with(&format!("parameter '{field}': 'NOSUCH' is not a known")),
            "{path}: {message}"
        );
    }
    s.stop().await;
}

/// The strategy bodies the spec shows, in each of its spellings (numbers
/// as text, `voters` for a Scoring block's conditions, the qualifier
/// inside the rule, TimeOrder steps on the block, every 2.1 field with its
/// default), are all taken as sent.
#[tokio::test(flavor = "multi_thread")]
async fn the_spec_s_strategy_bodies_are_taken_as_sent() {
    let (s, _dir) = TestServer::fresh().await;
    let optix = |op: &str, value: &str| json!({"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": op, "comparison_value": value}});
    let every_field = json!({
        "symbol": "SPX", "name": "every field", "description": {"Introduction": "x", "Rules": "y"},
        "benchmark": "SPX", "direction": "Long", "frequency": "Daily", "strategy": "Single",
        "model": "cash", "capital": 100000, "capital_alloc": "1.000000", "commission": "0.0000",
        "slippage": "0.0000", "start_date": "2005-01-01", "end_date": "2024-12-31", "trade_price": 2,
        "risk_control": "//21", "exclude_oo": 0, "market_environment": 0,
        "index_moving_average_slope": 0, "opted": 0, "win_rate": "0.0000", "csv_mode": false,
        "entry": {"rule_type": "SingleCondition", "delay_bars": 0, "condition": optix("CrossBelow", "30")},
        "exit": {"rule_type": "SingleCondition", "condition": optix("CrossAbove", "70")}
    });
    let mut voters = every_field.clone();
    voters["entry"] = json!({"rule_type": "Scoring", "voters": [optix("<", "40"), optix("<", "30"), optix("<", "20")], "score_threshold": 2});
    let mut qualifier_in_rule = every_field.clone();
    qualifier_in_rule["entry"]["condition"]["rule"]["qualifier"] =
        json!({"comparison_operator": "Range Rank", "calculation_period": "252", "ma_type": "S"});
    let mut qualifier_beside = every_field.clone();
    qualifier_beside["entry"]["condition"]["qualifier"] =
        json!({"comparison_operator": "Range Rank", "calculation_period": 252});
    let mut time_order = every_field.clone();
    time_order["entry"] = json!({"rule_type": "TimeOrder", "steps": [optix("<", "30"), optix(">", "40")], "signals_in_market": 21});
    let mut own_average = every_field.clone();
    own_average["entry"]["condition"]["rule"] = json!({"comparison_type": "SVMA", "type_name": "<", "comparison_value": "-10", "period": "21"});
    let mut risk_only = every_field.clone();
    risk_only["exit"] = json!({"rule_type": "RiskControlOnly"});
    risk_only["risk_control"] = json!("-5/10/21");
    for (what, body) in [
        ("every field", every_field),
        ("voters", voters),
        ("qualifier inside the rule", qualifier_in_rule),
        ("qualifier beside the rule", qualifier_beside),
        ("TimeOrder", time_order),
        ("SVMA", own_average),
        ("RiskControlOnly", risk_only),
    ] {
        let (status, v) = s.post("/backtest/validate", DEMO, &body).await;
        assert_eq!(
            (status, v["status"].as_str()),
            (200, Some("valid")),
            "{what}: {v}"
        );
        let (status, sub) = s.post("/backtest/start_backtest", DEMO, &body).await;
        assert_eq!(status, 202, "{what}: {sub}");
        s.succeeded(
            &format!("/backtest/status/{}", sub["task_id"].as_str().unwrap()),
            DEMO,
        )
        .await;
    }
    s.stop().await;
}

/// An unknown key is named, with the field meant, even beside a missing
/// required one: a tagged rule's misspelt tag (`metod`) in a portfolio's
/// weights and signals, and a strategy's misspelt required field, are
/// named, not reported as the field that is missing.
#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_field_is_named_even_beside_a_missing_required_one() {
    let (s, _dir) = TestServer::fresh().await;
    let strategy = sma(json!(10), None);
    let mut weights = operations::portfolio();
    weights["weights"]["select"] = json!({"metod": "top", "k": 2, "by": {"momentum": 63}});
    let mut weighting = operations::portfolio();
    weighting["weights"]["weighting"] = json!({"metod": "inverse_volatility", "bars": 20});
    let mut stray = operations::portfolio();
    stray["weights"]["select"] = json!({"k": 2, "by": {"momentum": 63}, "zz_unknown": 1});
    let signals = json!({"universe": ["AAPL", "MSFT", "NVDA"], "start_date": "2020-01-02", "end_date": "2021-12-31",
        "signals": {"entry": strategy["entry"], "exit": strategy["exit"], "max_positions": 2,
            "rank_by": {"by": {"volatility": 20}}, "sizing": {"metod": "fixed_fraction", "fraction": 0.2}}});
    let mut symbol = strategy.clone();
    let sent = symbol.as_object_mut().unwrap().remove("symbol").unwrap();
    symbol["symbl"] = sent;
    let mut rule = strategy.clone();
    let rule_type = rule["entry"].as_object_mut().unwrap().remove("rule_type");
    rule["entry"]["rule_typ"] = rule_type.unwrap();
    for (path, body, field, message) in [
        (
            "/backtest/portfolio",
            &weights,
            "weights.select.metod",
            "unknown field (did you mean 'method'?)",
        ),
        (
            "/backtest/portfolio",
            &weighting,
            "weights.weighting.metod",
            "unknown field (did you mean 'method'?)",
        ),
        (
            "/backtest/portfolio",
            &stray,
            "weights.select.zz_unknown",
            "unknown field",
        ),
        (
            "/backtest/portfolio",
            &signals,
            "signals.sizing.metod",
            "unknown field (did you mean 'method'?)",
        ),
        (
            "/backtest/validate",
            &symbol,
            "symbl",
            "unknown field (did you mean 'symbol'?)",
        ),
        (
            "/backtest/start_backtest",
            &rule,
            "entry.rule_typ",
            "unknown field (did you mean 'rule_type'?)",
        ),
    ] {
        let (status, e) = s.post(path, DEMO, body).await;
        assert_eq!(status, 400, "{path} {field}: {e}");
        assert_eq!(
            refusal(&e),
            (
                Some(field),
                format!("parameter '{field}': {message}").as_str()
            ),
            "{path}"
        );
    }
    // The missing tag alone is what it is.
    let mut missing = operations::portfolio();
    missing["weights"]["select"] = json!({"k": 2, "by": {"momentum": 63}});
    let (status, e) = s.post("/backtest/portfolio", DEMO, &missing).await;
    assert_eq!(
        (status, refusal(&e)),
        (
            400,
            (
                Some("weights.select.method"),
                "parameter 'weights.select.method': is required"
            )
        ),
        "{e}"
    );
    s.stop().await;
}
