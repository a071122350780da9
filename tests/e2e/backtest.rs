//! The backtest service over HTTP: validate encodings, errors of section 7,
//! and strategies run by the worker, checked against trades computed here.

use chrono::NaiveDate;
use engine::Frequency;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use tests::server::TestServer;

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

async fn run_to_result(s: &TestServer, body: &Value) -> Value {
    let (status, r) = s.post("/backtest/start_backtest", DEMO, body).await;
    assert_eq!(status, 202, "{r}");
    let id = r["task_id"].as_str().unwrap().to_string();
    let task = s.succeeded(&format!("/backtest/status/{id}"), DEMO).await;
    let mut echoed = task["params"].clone();
    if body.get("csv_data").is_some() {
        // The rows are kept once, as columns: the record summarises and
        // links them; asked for, they come back in the 16-column shape (2.8).
        let summary = echoed
            .as_object_mut()
            .unwrap()
            .remove("csv_upload")
            .unwrap();
        let sent = body["csv_data"].as_array().unwrap().len();
        assert_eq!(summary["rows"], json!(sent));
        let url = format!("/backtest/status/{id}?include=csv_data");
        assert_eq!(summary["url"], json!(url));
        let (_, full) = s.get(&url, DEMO).await;
        let rows = full["params"]["csv_data"].as_array().unwrap();
        assert_eq!(rows.len(), sent);
        for row in rows {
            let keys: Vec<&String> = row.as_object().unwrap().keys().collect();
            assert_eq!(keys.len(), 16, "{keys:?}");
            assert!(row.get("Note").is_none() && row["Exit5"] == json!(0.0));
        }
        echoed["csv_data"] = body["csv_data"].clone();
    }
    assert_eq!(echoed, *body, "params echo the submission");
    task["result"].clone()
}

fn close_to(a: &Value, b: f64) -> bool {
    (a.as_f64().unwrap() - b).abs() < 1e-9 * b.abs().max(1.0)
}

fn returns(v: &Value) -> Vec<f64> {
    v["Each Return"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn dates(v: &Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn validate_encodes_signals_conditions_and_defaults() {
    let (s, _dir) = TestServer::fresh().await;
    let body = json!({
        "symbol": "SPX",
        "risk_control": "-5/10/21",
        "entry": {"rule_type": "Scoring", "score_threshold": 2, "condition": [
            {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossBelow", "comparison_value": "30"},
             "qualifier": {"comparison_operator": "Range Rank", "calculation_period": "252", "ma_type": "S"}},
            {"signal": {"name": "Relative Strength Index"}, "rule": {"type_name": "<", "comparison_value": 30}},
            {"signal": {"name": "Symbol Close"}, "rule": {"comparison_type": "SVMA", "type_name": ">=", "comparison_value": "0", "period": "50"}}
        ]},
        "exit": {"rule_type": "RiskControlOnly"}
    });
    let (status, v) = s.post("/backtest/validate", DEMO, &body).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["status"], "valid");
    assert_eq!(v["user_supplied"], body);
    assert_eq!(v["entry"]["rule_type"], "Scoring");
    assert_eq!(
        v["entry"]["signals"],
        json!([
            {"code": "SI:S&P 500 Index Optix;IDS:EO75/EP25;SC:SV/4/30", "signal_name": "S&P 500 Index Optix"},
            {"code": "TI:Relative Strength Index;IDS:EO20/EP80;SC:SV/2/30", "signal_name": "Relative Strength Index"},
            {"code": "SY:Symbol Close;IDS:EO0/EP0;SC:SVMA/>=/0", "signal_name": "Symbol Close"}
        ])
    );
    assert_eq!(
        v["entry"]["cond"],
        json!([
            {"newCondition": 8, "conditionPeriod": "252", "ma_type": "S"},
            {"newCondition": 3, "conditionPeriod": "21", "ma_type": "S"},
            {"newCondition": 7, "conditionPeriod": "50", "ma_type": "S"}
        ])
    );
    assert_eq!(
        v["exit"],
        json!({"rule_type": "RiskControlOnly", "signals": [{"code": "SY:Symbol Close;IDS:EO0.7/EP0.3;SC:SV/0/999999", "signal_name": "Symbol Close"}], "cond": [{"newCondition": 3, "conditionPeriod": "21", "ma_type": "S"}]})
    );
    let d = &v["defaults_applied"];
    assert_eq!(
        (
            d["end_date"].as_str(),
            d["capital_alloc"].as_str(),
            d["trade_price"].as_i64()
        ),
        (Some("2026-11-20"), Some("1.000000"), Some(2))
    );
    assert!(
        d.get("risk_control").is_none(),
        "given fields are not defaults"
    );
    let warnings = v["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("'>=' is outside the 16 operator codes")),
        "{warnings:?}"
    );

    // TimeOrder: the first step's qualifier goes into the first cond entry; a
    // weekly indicator on a daily backtest is run, with a warning naming both.
    let body = json!({
        "symbol": "SPX",
        "entry": {"rule_type": "TimeOrder", "signals_in_market": 21, "steps": [
            {"signal": {"name": "AAII Bullish Sentiment %", "params": {"extreme_optimism": "55", "extreme_pessimism": "20"}}, "rule": {"type_name": "<", "comparison_value": 25},
             "qualifier": {"comparison_operator": "Net Change", "calculation_period": 5, "ma_type": "E"}},
            {"signal": {"name": "Symbol Close"}, "rule": {"type_name": "All-time High"}}
        ]},
        "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Exponential Moving Average"}, "rule": {"comparison_type": "MA", "type_name": "CrossBelow", "period": "30"}}}
    });
    let (status, v) = s.post("/backtest/validate", DEMO, &body).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(
        v["entry"]["signals"][0]["code"],
        "SI:AAII Bullish Sentiment %;IDS:EO55/EP20;SC:SV/2/25"
    );
    assert_eq!(
        v["entry"]["signals"][1]["code"],
        "SY:Symbol Close;IDS:EO0/EP0;SC:SV/12/"
    );
    assert_eq!(
        v["entry"]["cond"][0],
        json!({"newCondition": 11, "conditionPeriod": "5", "ma_type": "E"})
    );
    assert_eq!(
        v["exit"]["signals"][0]["code"],
        "TI:Exponential Moving Average;IDS:EO20/EP80;SC:MA/4/"
    );
    let w = v["warnings"].to_string();
    assert!(
        w.contains("updated Weekly but the backtest runs Daily"),
        "{w}"
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_of_section_seven() {
    let (s, _dir) = TestServer::fresh().await;
    let sc = |name: &str| json!({"signal": {"name": name}, "rule": {"type_name": ">", "comparison_value": "1"}});
    let base = json!({"symbol": "SPX", "entry": {"rule_type": "SingleCondition", "condition": sc("Symbol Close")}, "exit": {"rule_type": "RiskControlOnly"}});
    let with = |path: &[&str], v: Value| {
        let mut b = base.clone();
        let mut cur = &mut b;
        for p in &path[..path.len() - 1] {
            cur = &mut cur[*p];
        }
        cur[path[path.len() - 1]] = v;
        b
    };
    let cases = vec![
        (
            with(
                &["entry"],
                json!({"rule_type": "Scoring", "condition": sc("Symbol Close")}),
            ),
            "parameter 'entry.condition': must be an array for Scoring",
        ),
        (
            with(
                &["entry"],
                json!({"rule_type": "TimeOrder", "condition": {"steps": [sc("Symbol Close")]}}),
            ),
            "entry.condition.steps",
        ),
        (
            with(
                &["entry", "condition", "qualifier"],
                json!({"comparison_operator": "Range Rank", "calculation_period": 21}),
            )
            .pipe(|mut b| {
                b["entry"]["condition"]["signal"]["name"] = json!("Relative Strength Index");
                b
            }),
            "cannot take a qualifier",
        ),
        (
            with(
                &["entry", "condition", "signal", "name"],
                json!("Nope Indicator"),
            ),
            "parameter 'entry.condition.signal.name': 'Nope Indicator' is not",
        ),
        (
            with(&["start_date"], json!("2020-02-30")),
            "parameter 'start_date': must be a date YYYY-MM-DD, got '2020-02-30'",
        ),
        (
            with(&["frequency"], json!("Hourly")).pipe(|mut b| {
                b["symbol"] = json!("TLT");
                b
            }),
            "parameter 'frequency': Hourly needs 30-minute bars",
        ),
        (
            with(&["risk_control"], json!("5/x/21")),
            "parameter 'risk_control': take-profit 'x'",
        ),
        (
            json!({"entry": base["entry"], "exit": base["exit"]}),
            "parameter 'symbol': is required",
        ),
        (json!([1, 2]), "parameter 'body': must be a JSON object"),
    ];
    // An unknown symbol is a 404 naming its field.
    for (field, name) in [("symbol", "ZZZZ"), ("benchmark", "QQQQ")] {
        for path in ["/backtest/validate", "/backtest/start_backtest"] {
            let (status, v) = s.post(path, DEMO, &with(&[field], json!(name))).await;
            assert_eq!(status, 404, "{path}: {v}");
            assert_eq!(
                v["detail"],
                format!("parameter '{field}': '{name}' is not a known symbol"),
                "{path}"
            );
            assert_eq!(v["field"], field);
        }
    }
    for (body, want) in cases {
        for path in ["/backtest/validate", "/backtest/start_backtest"] {
            let (status, v) = s.post(path, DEMO, &body).await;
            assert_eq!(status, 400, "{path} {body}: {v}");
            assert!(
                v["detail"].as_str().unwrap().contains(want),
                "{path}: {} (wanted {want})",
                v["detail"]
            );
        }
    }
    let resp = reqwest::Client::new()
        .post(s.url("/backtest/start_backtest"))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    assert_eq!(s.post("/backtest/start_backtest", None, &base).await.0, 401);
    assert_eq!(
        s.post("/backtest/validate", Some((DEMO_EMAIL, "bad")), &base)
            .await
            .0,
        401
    );
    // Nothing was queued by the refused submissions.
    assert_eq!(s.get("/backtest/tasks", DEMO).await.1["total"], json!(0));
    s.stop().await;
}

trait Pipe: Sized {
    fn pipe(self, f: impl FnOnce(Self) -> Self) -> Self {
        f(self)
    }
}
impl Pipe for Value {}

/// Ten CSV rows: closes 10 11 12 11 10 12 13 12 14 15, opens half a point lower.
fn csv_rows() -> Value {
    let closes = [10.0, 11.0, 12.0, 11.0, 10.0, 12.0, 13.0, 12.0, 14.0, 15.0];
    let rows: Vec<Value> = closes
        .iter()
        .enumerate()
        .map(|(i, c)| {
            json!({
                "Date": format!("2024-01-{:02}", i + 2), "Open": c - 0.5, "High": c + 1.0, "Low": c - 1.0, "Close": c, "Volume": 1000,
                "Entry1": if i == 1 || i == 5 { 1 } else { 0 }, "Exit1": if i == 3 || i == 8 { 1 } else { 0 }, "Note": "dropped"
            })
        })
        .collect();
    Value::Array(rows)
}

fn csv_strategy(extra: Value) -> Value {
    let mut b = json!({
        "symbol": "MYDATA", "csv_mode": true, "csv_data": csv_rows(), "risk_control": "//",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Entry1"}, "rule": {"type_name": ">", "comparison_value": "0.5"}}},
        "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Exit1"}, "rule": {"type_name": ">", "comparison_value": "0.5"}}}
    });
    for (k, v) in extra.as_object().unwrap() {
        if k == "entry_delay" {
            b["entry"]["delay_bars"] = v.clone();
        } else {
            b[k] = v.clone();
        }
    }
    b
}

#[tokio::test(flavor = "multi_thread")]
async fn csv_mode_trade_prices_direction_and_delay() {
    let (s, _dir) = TestServer::fresh().await;
    // trade_price 2 (default): 11 -> 11 (0%), 12 -> 14 (+16.67%).
    let r = run_to_result(&s, &csv_strategy(json!({}))).await;
    assert_eq!(returns(&r).len(), 2);
    assert!(
        close_to(&r["Each Return"][0], 0.0)
            && close_to(&r["Each Return"][1], (14.0 / 12.0 - 1.0) * 100.0)
    );
    assert_eq!(dates(&r, "EntryDate"), ["2024-01-03", "2024-01-07"]);
    assert_eq!(dates(&r, "ExitDate"), ["2024-01-05", "2024-01-10"]);
    assert_eq!(
        (
            r["Total Trades"].as_u64(),
            r["Total Positive"].as_u64(),
            r["Total Negative"].as_u64()
        ),
        (Some(2), Some(1), Some(0))
    );
    assert!(close_to(
        &r["Total Return (%)"],
        (14.0 / 12.0 - 1.0) * 100.0
    ));
    assert!(close_to(&r["BuyHoldGain"], 50.0));
    assert_eq!(
        (
            r["Last Entry Date"].as_str(),
            r["Last Exit Date"].as_str(),
            r["BT End Date"].as_str()
        ),
        (Some("2024-01-07"), Some("2024-01-10"), Some("2024-01-11"))
    );
    assert_eq!(r["Symbol"], "MYDATA");
    // Held at the closes of rows 1-2 and 5-7: 5 of 10 bars.
    assert!(close_to(&r["Time in Market"], 50.0));

    // trade_price 0: next open. Row 2 opens 11.5, row 4 9.5; row 6 12.5, row 9 14.5.
    let r = run_to_result(&s, &csv_strategy(json!({"trade_price": 0}))).await;
    assert!(
        close_to(&r["Each Return"][0], (9.5 / 11.5 - 1.0) * 100.0)
            && close_to(&r["Each Return"][1], (14.5 / 12.5 - 1.0) * 100.0)
    );
    assert_eq!(dates(&r, "EntryDate"), ["2024-01-04", "2024-01-08"]);
    assert_eq!(dates(&r, "ExitDate"), ["2024-01-06", "2024-01-11"]);

    // Short with trade_price 1: next close. 12 -> 10 (+16.67%), 13 -> 15 (-15.38%).
    let r = run_to_result(
        &s,
        &csv_strategy(json!({"trade_price": 1, "direction": "Short"})),
    )
    .await;
    assert!(
        close_to(&r["Each Return"][0], 2.0 / 12.0 * 100.0)
            && close_to(&r["Each Return"][1], -2.0 / 13.0 * 100.0)
    );
    assert_eq!(
        (r["Total Positive"].as_u64(), r["Total Negative"].as_u64()),
        (Some(1), Some(1))
    );
    assert!(close_to(&r["Win Rate"], 50.0));
    assert!(close_to(&r["Average Loss %"], -2.0 / 13.0 * 100.0));

    // delay_bars 1: entries on rows 2 and 6: 12 -> 11, 13 -> 14.
    let r = run_to_result(&s, &csv_strategy(json!({"entry_delay": 1}))).await;
    assert!(
        close_to(&r["Each Return"][0], (11.0 / 12.0 - 1.0) * 100.0)
            && close_to(&r["Each Return"][1], (14.0 / 13.0 - 1.0) * 100.0)
    );

    // Costs: commission and slippage per side, capital_alloc halves the compounding.
    let r = run_to_result(
        &s,
        &csv_strategy(json!({"commission": "0.001", "slippage": "0.002", "capital_alloc": "0.5"})),
    )
    .await;
    let net = |a: f64, b: f64| {
        let (e, x) = (a * 1.002, b * 0.998);
        (x - e) / e - 0.001 * (1.0 + x / e)
    };
    let (r1, r2) = (net(11.0, 11.0), net(12.0, 14.0));
    assert!(
        close_to(&r["Each Return"][0], r1 * 100.0) && close_to(&r["Each Return"][1], r2 * 100.0)
    );
    assert!(close_to(
        &r["Total Return (%)"],
        ((1.0 + 0.5 * r1) * (1.0 + 0.5 * r2) - 1.0) * 100.0
    ));
    assert!(close_to(
        &r["Final Capital"],
        100000.0 * (1.0 + 0.5 * r1) * (1.0 + 0.5 * r2)
    ));

    // A window with no bars runs and says so.
    let r = run_to_result(&s, &csv_strategy(json!({"start_date": "2025-01-01"}))).await;
    assert_eq!(r["Total Trades"], json!(0));
    assert!(
        r["warnings"]
            .to_string()
            .contains("no Daily bars of MYDATA between 2025-01-01"),
        "{}",
        r["warnings"]
    );

    // An open trade at the end is closed at the last bar and reported.
    let mut body = csv_strategy(json!({}));
    body["exit"]["condition"]["rule"]["comparison_value"] = json!("5");
    let r = run_to_result(&s, &body).await;
    assert_eq!(
        (r["Total Trades"].as_u64(), r["Open Trade"].as_bool()),
        (Some(1), Some(true))
    );
    assert!(close_to(&r["Each Return"][0], (15.0 / 11.0 - 1.0) * 100.0));
    assert!(r["warnings"].to_string().contains("still open"));
    s.stop().await;
}

/// The chart's trades in the glossary's columns, by hand: fills after
/// slippage, both sides' commissions, the return a fraction (2.11's `Each
/// Return` over 100), and the equity's drawdown a fraction.
#[tokio::test(flavor = "multi_thread")]
async fn a_backtest_s_chart_trades_are_the_fills_after_slippage_with_fees() {
    let (s, _dir) = TestServer::fresh().await;
    let body =
        csv_strategy(json!({"commission": "0.001", "slippage": "0.002", "capital_alloc": "0.5"}));
    let (status, r) = s.post("/backtest/start_backtest", DEMO, &body).await;
    assert_eq!(status, 202, "{r}");
    let id = r["task_id"].as_str().unwrap().to_string();
    let task = s.succeeded(&format!("/backtest/status/{id}"), DEMO).await;
    let result = &task["result"];
    let (status, chart) = s.get(&format!("/backtest/chart/{id}"), DEMO).await;
    assert_eq!(status, 200, "{chart}");
    let trades = chart["trades"].as_array().unwrap();
    assert_eq!(trades.len(), 2);
    // Long 11 -> 11, then 12 -> 14 (csv_mode_trade_prices_direction_and_delay).
    let mut committed = 100_000.0 * 0.5;
    for (k, (a, b)) in [(11.0, 11.0), (12.0, 14.0)].into_iter().enumerate() {
        let t = &trades[k];
        let (entry, exit) = (a * 1.002, b * 0.998);
        let ret = (exit - entry) / entry - 0.001 * (1.0 + exit / entry);
        let size = committed / entry;
        let fees = 0.001 * size * (entry + exit);
        assert_eq!(
            (&t["symbol"], &t["side"], &t["exit_reason"]),
            (&json!("MYDATA"), &json!("long"), &json!("Signal")),
            "{t}"
        );
        assert!(close_to(&t["entry_price"], entry), "{t}");
        assert!(close_to(&t["exit_price"], exit), "{t}");
        assert!(close_to(&t["size"], size), "{t}");
        assert!(close_to(&t["fees"], fees), "{t}");
        assert!(close_to(&t["profit"], size * (exit - entry) - fees), "{t}");
        assert!(close_to(&t["return"], ret), "{t}");
        assert!(close_to(
            &t["return"],
            result["Each Return"][k].as_f64().unwrap() / 100.0
        ));
        for gone in ["return_pct", "mae_pct", "mfe_pct"] {
            assert!(t.get(gone).is_none(), "{gone}: {t}");
        }
        assert!(t["mae"].as_f64().unwrap() <= 0.0 && t["mfe"].as_f64().unwrap() >= 0.0);
        committed *= 1.0 + 0.5 * ret;
    }
    // The drawdown: below the highest equity so far, a fraction.
    let mut peak = f64::MIN;
    for (e, d) in chart["equity"]
        .as_array()
        .unwrap()
        .iter()
        .zip(chart["drawdown"].as_array().unwrap())
    {
        let e = e.as_f64().unwrap();
        peak = peak.max(e);
        assert!(close_to(d, e / peak - 1.0), "{d} vs {e} / {peak}");
    }
    // The trades table has the same columns as CSV.
    let (status, csv) = s
        .get_text(&format!("/backtest/trades/{id}?format=csv"), DEMO)
        .await;
    assert_eq!(status, 200, "{csv}");
    assert_eq!(
        csv.lines().next().unwrap(),
        "entry_time,exit_time,symbol,side,size,entry_price,exit_price,fees,profit,return,bars_held,exit_reason,mae,mfe"
    );
    s.stop().await;
}

/// Close crossing its SMA, simulated here from the bars alone (trade on close).
fn expected_trades(b: &engine::Bars, n: usize, start: usize) -> Vec<(usize, usize, f64)> {
    let sma: Vec<f64> = (0..b.len())
        .map(|i| {
            if i + 1 >= n {
                b.close[i + 1 - n..=i].iter().sum::<f64>() / n as f64
            } else {
                f64::NAN
            }
        })
        .collect();
    let above = |i: usize| b.close[i] > sma[i];
    let cross_up = |i: usize| i > 0 && !sma[i - 1].is_nan() && !above(i - 1) && above(i);
    let cross_down = |i: usize| {
        i > 0 && !sma[i - 1].is_nan() && b.close[i - 1] >= sma[i - 1] && b.close[i] < sma[i]
    };
    let mut out = Vec::new();
    let mut t = start;
    while t < b.len() {
        if !cross_up(t) {
            t += 1;
            continue;
        }
        let e = (t + 1..b.len())
            .find(|&e| cross_down(e))
            .unwrap_or(b.len() - 1);
        out.push((t, e, (b.close[e] / b.close[t] - 1.0) * 100.0));
        t = e + 1;
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn price_crossing_its_average_at_every_frequency() {
    let (s, _dir) = TestServer::fresh().await;
    let cases = [
        ("Daily", Frequency::Daily, 50, "2015-01-01"),
        ("Weekly", Frequency::Weekly, 10, "2010-01-01"),
        ("Monthly", Frequency::Monthly, 6, "2000-01-01"),
        ("Hourly", Frequency::Min30, 5, "2000-01-01"),
    ];
    for (name, freq, n, start) in cases {
        let body = json!({
            "symbol": "SPX", "frequency": name, "start_date": start, "end_date": "2026-11-20", "risk_control": "//",
            "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Simple Moving Average"}, "rule": {"comparison_type": "MA", "type_name": "CrossAbove", "period": n.to_string()}}},
            "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "SMA"}, "rule": {"comparison_type": "MA", "type_name": "CrossBelow", "period": n}}}
        });
        let r = run_to_result(&s, &body).await;
        let bars = if name == "Hourly" {
            s.state
                .market
                .bars("SPX", freq, None, None)
                .await
                .unwrap()
                .resample(Frequency::Hourly)
        } else {
            s.state
                .market
                .bars("SPX", freq, None, NaiveDate::from_ymd_opt(2026, 11, 20))
                .await
                .unwrap()
        };
        let first = bars
            .time
            .partition_point(|t| t.date() < start.parse::<NaiveDate>().unwrap());
        let want = expected_trades(&bars, n, first);
        assert!(
            want.len() >= 2,
            "{name}: the test needs trades ({})",
            want.len()
        );
        let got = returns(&r);
        assert_eq!(got.len(), want.len(), "{name}: trade count");
        for (g, (e, x, w)) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-9, "{name}: {g} vs {w}");
            let _ = (e, x);
        }
        let entry_dates: Vec<String> = want
            .iter()
            .map(|(e, _, _)| bars.date(*e).to_string())
            .collect();
        assert_eq!(dates(&r, "EntryDate"), entry_dates, "{name}");
        assert_eq!(r["Frequency"], name);
        if name == "Hourly" {
            assert_eq!(r["EntryTime"].as_array().unwrap().len(), want.len());
        }
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn indicator_list_filters_and_metadata() {
    let (s, _dir) = TestServer::fresh().await;
    let (status, all) = s.get("/backtest/indicators/list", DEMO).await;
    assert_eq!(status, 200);
    let all = all.as_array().unwrap().clone();
    let catalog = s.state.market.indicator_catalog().await.unwrap();
    assert_eq!(all.len(), catalog.iter().filter(|m| !m.internal).count());
    assert_eq!(
        all[0]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>(),
        // The fields in the order of the spec's table (2.13).
        ["chart_name", "url", "market_symbol", "type", "updated"]
    );
    let (_, hits) = s
        .get(
            "/backtest/indicators/list?q=OPTIX&type=optix&symbol=spx",
            DEMO,
        )
        .await;
    assert_eq!(
        hits,
        json!([{"chart_name": "S&P 500 Index Optix", "url": "SPX_OPTIX", "market_symbol": "SPX", "type": "optix", "updated": "Daily"}])
    );
    let (_, weekly) = s.get("/backtest/indicators/list?q=bull", DEMO).await;
    assert!(
        weekly
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["url"] == "AAII_BULL")
    );
    let (status, v) = s.get("/backtest/indicators/list?type=fancy", DEMO).await;
    assert!(status == 400 && v["detail"].as_str().unwrap().contains("'type'"));
    let (status, meta) = s
        .get("/backtest/indicators/metadata?indicator=SPX_OPTIX", DEMO)
        .await;
    assert_eq!(status, 200);
    let m = &meta["SPX_OPTIX"];
    assert_eq!(
        (
            m["contrary"].as_str(),
            m["premium"].as_str(),
            m["updated"].as_str(),
            m["opt_extreme"].as_f64()
        ),
        (Some("1.0"), Some("0"), Some("Daily"), Some(75.0))
    );
    assert!(m["description"].as_str().unwrap().starts_with("<p>"));
    assert_eq!(
        s.get("/backtest/indicators/metadata?indicator=NOPE", DEMO)
            .await
            .0,
        404
    );
    assert_eq!(s.get("/backtest/indicators/metadata", DEMO).await.0, 400);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tutorial_is_public_and_its_strategy_runs() {
    let (s, _dir) = TestServer::fresh().await;
    let (status, t) = s.get("/backtest/tutorial", None).await;
    assert_eq!(status, 200);
    let r = run_to_result(&s, &t["strategy"]).await;
    assert!(r["Total Trades"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(r["BT End Date"], "2026-11-20");
    let (status, v) = s.post("/backtest/validate", DEMO, &t["strategy"]).await;
    assert_eq!(status, 200, "{v}");
    s.stop().await;
}
