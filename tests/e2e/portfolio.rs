//! Portfolio backtests over HTTP on the sample data: signal mode equals
//! vectorbt and target-weight mode equals bt on the same bars and signals
//! (the equity curve to 1e-9, every order), and bad requests are 400s
//! naming their field.

use chrono::NaiveDate;
use engine::Bars;
use engine::indicators::sma;
use engine::rules::{Op, Target, evaluate};
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use std::sync::Arc;
use tests::server::TestServer;

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

/// The test sample's stocks.
const STOCKS: [&str; 12] = [
    "AAPL", "MSFT", "NVDA", "AMZN", "GOOGL", "META", "TSLA", "JPM", "V", "JNJ", "XOM", "PG",
];

async fn run(s: &TestServer, body: &Value) -> Value {
    let (status, r) = s.post("/backtest/portfolio", DEMO, body).await;
    assert_eq!(status, 202, "{r}");
    let id = r["task_id"].as_str().unwrap();
    let task = s
        .succeeded(&format!("/backtest/portfolio/{id}"), DEMO)
        .await;
    assert_eq!(task["params"], *body, "the record echoes the request");
    task["result"].clone()
}

/// The symbols' bars and the window's calendar `from` `lookback` + 1
/// sessions before `start` to `end` (the sample's symbols share sessions).
async fn history(
    s: &TestServer,
    symbols: &[&str],
    start: &str,
    end: &str,
    lookback: usize,
) -> (Vec<Arc<Bars>>, Vec<NaiveDate>, usize) {
    let mut bars = Vec::new();
    for sym in symbols {
        bars.push(s.state.market.daily(sym).await.unwrap());
    }
    let (start, end): (NaiveDate, NaiveDate) = (start.parse().unwrap(), end.parse().unwrap());
    let all: Vec<NaiveDate> = (0..bars[0].len()).map(|i| bars[0].date(i)).collect();
    for b in &bars {
        assert_eq!(
            b.len(),
            bars[0].len(),
            "the sample's symbols share sessions"
        );
    }
    let first = all.partition_point(|d| *d < start);
    let last = all.partition_point(|d| *d <= end);
    let from = first - (lookback + 1);
    (bars, all[from..last].to_vec(), lookback + 1)
}

fn column(
    bars: &[Arc<Bars>],
    calendar: &[NaiveDate],
    f: impl Fn(&Bars, usize) -> f64,
) -> Vec<Vec<f64>> {
    bars.iter()
        .map(|b| {
            let at = b.time.partition_point(|t| t.date() < calendar[0]);
            (0..calendar.len()).map(|i| f(b, at + i)).collect()
        })
        .collect()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// An order's units, bought positive and sold negative (its `size` is
/// positive and its `side` says which).
fn signed(o: &Value) -> f64 {
    let size = o["size"].as_f64().unwrap();
    assert!(size > 0.0, "{o}");
    match o["side"].as_str() {
        Some("buy") => size,
        Some("sell") => -size,
        _ => panic!("a side: {o}"),
    }
}

/// Our orders against `[bar, symbol, units, price, fee]` on `calendar`.
fn same_orders(ours: &Value, theirs: &[Vec<f64>], calendar: &[NaiveDate], symbols: &[&str]) {
    let ours = ours.as_array().unwrap();
    assert_eq!(ours.len(), theirs.len(), "order count");
    for (o, t) in ours.iter().zip(theirs) {
        assert_eq!(
            o["time"],
            calendar[t[0] as usize].to_string(),
            "{o} vs {t:?}"
        );
        assert!(near(o["fees"].as_f64().unwrap(), t[4]), "{o} vs {t:?}");
        assert_eq!(o["symbol"], symbols[t[1] as usize], "{o} vs {t:?}");
        assert!(near(signed(o), t[2]), "{o} vs {t:?}");
        assert!(near(o["price"].as_f64().unwrap(), t[3]), "{o} vs {t:?}");
    }
}

/// Each trade from its symbol's orders: the orders from its entry until
/// the symbol is flat again are its own; its fees are theirs, its size the
/// most units held, its profit what the sales got less what the buys paid
/// (commissions counted; an open one's units at the last close), its
/// return that over the buys' value at their fills, its bars the sessions of `window`
/// between entry and exit (the last session while open).
fn trades_add_up(r: &Value, window: &[NaiveDate]) {
    let orders = r["orders"].as_array().unwrap();
    let at = |d: &Value| {
        let d: NaiveDate = d.as_str().unwrap().parse().unwrap();
        window.binary_search(&d).unwrap()
    };
    let mut used = vec![false; orders.len()];
    let (mut fees, mut checked) = (0.0, 0);
    for t in r["trades"].as_array().unwrap() {
        assert_eq!(t["side"], "long", "{t}");
        let (mut held, mut most, mut paid, mut got, mut fee) = (0.0f64, 0.0f64, 0.0, 0.0, 0.0);
        let mut cost = 0.0;
        let mut last = None;
        for (k, o) in orders.iter().enumerate() {
            if used[k] || o["symbol"] != t["symbol"] || at(&o["time"]) < at(&t["entry_time"]) {
                continue;
            }
            used[k] = true;
            let (size, price, f) = (
                o["size"].as_f64().unwrap(),
                o["price"].as_f64().unwrap(),
                o["fees"].as_f64().unwrap(),
            );
            held += signed(o);
            most = most.max(held);
            fee += f;
            if o["side"] == "buy" {
                paid += size * price + f;
                cost += size * price;
            } else {
                got += size * price - f;
            }
            last = Some(o["time"].clone());
            if held.abs() <= 1e-9 * most {
                break;
            }
        }
        assert!(near(t["fees"].as_f64().unwrap(), fee), "{t}: fees {fee}");
        assert!(near(t["size"].as_f64().unwrap(), most), "{t}: size {most}");
        let open = t["exit_reason"] == "Open";
        if open {
            assert_eq!(t["exit_time"], Value::Null, "{t}");
            got += held * t["exit_price"].as_f64().unwrap();
        } else {
            assert_eq!(Some(t["exit_time"].clone()), last, "{t}");
        }
        let profit = got - paid;
        assert!(
            near(t["profit"].as_f64().unwrap(), profit),
            "{t}: profit {profit}"
        );
        assert!(near(t["return"].as_f64().unwrap(), profit / cost), "{t}");
        let exit = if open {
            window.len() - 1
        } else {
            at(&t["exit_time"])
        };
        assert_eq!(t["bars_held"], exit - at(&t["entry_time"]), "{t}");
        fees += fee;
        checked += 1;
    }
    assert!(used.iter().all(|u| *u), "every order is a trade's");
    let all: f64 = orders.iter().map(|o| o["fees"].as_f64().unwrap()).sum();
    assert!(near(fees, all), "{fees} vs {all}");
    assert!(checked > 5, "{checked} trades");
}

#[tokio::test(flavor = "multi_thread")]
async fn signal_mode_over_http_equals_vectorbt_on_the_same_signals() {
    let (s, _dir) = TestServer::fresh().await;
    let (start, end) = ("2018-01-02", "2022-12-30");
    let body = json!({
        "universe": STOCKS, "start_date": start, "end_date": end,
        "capital": 100000, "commission": 0.001, "slippage": 0.0005, "trade_price": "next_open",
        "signals": {
            "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Simple Moving Average"}, "rule": {"comparison_type": "MA", "type_name": "CrossAbove", "period": 20}}},
            "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "SMA"}, "rule": {"comparison_type": "MA", "type_name": "CrossBelow", "period": 20}}},
            "max_positions": 4, "rank_by": {"by": {"momentum": 20}},
            "sizing": {"method": "fixed_fraction", "fraction": 0.3}
        }
    });
    let r = run(&s, &body).await;
    let (bars, calendar, first) = history(&s, &STOCKS, start, end, 20).await;
    assert_eq!(r["series"]["date"][0], start);
    assert_eq!(
        r["series"]["equity"].as_array().unwrap().len(),
        calendar.len() - first
    );
    // The signals: close crossing its 20-session average, on each symbol's
    // whole history, read on the calendar.
    let signal = |op: Op| -> Vec<Vec<bool>> {
        bars.iter()
            .map(|b| {
                let fired = evaluate(&b.close, op, &Target::Series(sma(&b.close, 20)));
                let at = b.time.partition_point(|t| t.date() < calendar[0]);
                fired[at..at + calendar.len()].to_vec()
            })
            .collect()
    };
    let reference = tests::reference::run(
        "portfolio_vectorbt.py",
        &json!({
            "open": column(&bars, &calendar, |b, i| b.open[i]),
            "close": column(&bars, &calendar, |b, i| b.close[i]),
            "entries": signal(Op::CrossAbove), "exits": signal(Op::CrossBelow),
            "start": first, "lag": 1, "price": "open", "max_positions": 4,
            "sizing": {"kind": "fraction", "fraction": 0.3}, "rank_bars": 20,
            "capital": 100000.0, "fees": 0.001, "slippage": 0.0005, "whole": false,
        }),
    );
    let theirs = floats(&reference["value"]);
    let ours = floats(&r["series"]["equity"]);
    for (i, (a, b)) in ours.iter().zip(&theirs[first..]).enumerate() {
        assert!(
            near(*a, *b),
            "equity on {}: {a} vs {b}",
            calendar[first + i]
        );
    }
    let orders: Vec<Vec<f64>> = reference["orders"]
        .as_array()
        .unwrap()
        .iter()
        .map(floats)
        .collect();
    same_orders(&r["orders"], &orders, &calendar, &STOCKS);
    assert_eq!(r["crowded_out"], reference["crowded_out"]);
    assert!(orders.len() > 100, "{} orders", orders.len());
    // The books balance: each symbol's profit adds up to the gain.
    let gain: f64 = r["contributions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["profit"].as_f64().unwrap())
        .sum();
    assert!(near(gain, r["final_capital"].as_f64().unwrap() - 100_000.0));
    trades_add_up(&r, &calendar[first..]);
    assert!(
        orders.iter().all(|o| o[4] > 0.0),
        "commission on every order"
    );
    assert_eq!(r["defaults_applied"]["fractional"], true);
    s.stop().await;
}

/// Without costs and with a commission of 0.1 % (bt's commission function
/// |quantity| x price x 0.001). A rotation's whole sales pay their
/// commission with negative cash in bt: with commission it runs with room
/// to borrow it (`max_leverage` 1.01), the one convention apart
/// (docs/portfolios.md); at `max_leverage` 1, where ours takes it from the
/// buys, the curves stay within 6e-4 of each other.
#[tokio::test(flavor = "multi_thread")]
async fn weight_mode_over_http_equals_bt_monthly_equal_and_top_three_momentum() {
    let (s, _dir) = TestServer::fresh().await;
    let (start, end) = ("2016-01-04", "2021-12-31");
    let universe = &STOCKS[..10];
    let all = json!({"method": "all"});
    let top = json!({"method": "top", "k": 3, "by": {"momentum": 63}});
    for (select, lookback, commission, max_leverage) in [
        (all.clone(), 0, 0.0, 1.0),
        (top.clone(), 63, 0.0, 1.0),
        (all, 0, 0.001, 1.0),
        (top.clone(), 63, 0.001, 1.01),
        (top, 63, 0.001, 1.0),
    ] {
        let body = json!({
            "universe": universe, "benchmark": "SPX", "start_date": start, "end_date": end, "capital": 1000000,
            "commission": commission, "max_leverage": max_leverage,
            "weights": {"schedule": {"every": "month"}, "select": select}
        });
        let select = format!("{select}, commission {commission}");
        let r = run(&s, &body).await;
        let (bars, calendar, first) = history(&s, universe, start, end, lookback).await;
        let reference = tests::reference::run(
            "portfolio_bt.py",
            &json!({
                "dates": calendar.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
                "close": column(&bars, &calendar, |b, i| b.close[i]), "capital": 1000000.0,
                "select": if lookback == 0 { "all" } else { "top" }, "k": 3, "lookback": lookback, "from": first,
                "commission": commission,
            }),
        );
        let ours = floats(&r["series"]["equity"]);
        let theirs = floats(&reference["value"]);
        assert_eq!(ours.len(), theirs.len());
        if lookback > 0 && commission > 0.0 && max_leverage == 1.0 {
            let worst = ours
                .iter()
                .zip(&theirs)
                .fold(0.0_f64, |w, (a, b)| w.max((a / b - 1.0).abs()));
            assert!(worst > 1e-5 && worst <= 6e-4, "{select}: {worst:e}");
            continue;
        }
        for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
            assert!(
                near(*a, *b),
                "{select}: equity on {}: {a} vs {b}",
                calendar[first + i]
            );
        }
        // bt lists a day's trades by symbol; ours sell first, then buy.
        let mut theirs: Vec<Vec<f64>> = reference["transactions"]
            .as_array()
            .unwrap()
            .iter()
            .map(floats)
            .filter(|t| (t[2] * t[3]).abs() > 1e-6)
            .collect();
        theirs.sort_by(|a, b| (a[0], a[1]).partial_cmp(&(b[0], b[1])).unwrap());
        let mut ours: Vec<Value> = r["orders"].as_array().unwrap().clone();
        let index = |o: &Value| universe.iter().position(|s| *s == o["symbol"]).unwrap();
        ours.sort_by_key(|o| (o["time"].as_str().unwrap().to_string(), index(o)));
        assert_eq!(ours.len(), theirs.len(), "{select}: orders");
        for (o, t) in ours.iter().zip(&theirs) {
            assert_eq!(
                o["time"],
                calendar[first + t[0] as usize].to_string(),
                "{select}"
            );
            assert_eq!(index(o), t[1] as usize);
            assert!(near(signed(o), t[2]) && near(o["price"].as_f64().unwrap(), t[3]));
            assert!(
                near(o["fees"].as_f64().unwrap(), t[4]),
                "{select}: {o} vs {t:?}"
            );
        }
        // Monthly weights sum to the invested share (all of it, less what
        // bt's convention borrows).
        let w = &r["weights"][5];
        let total: f64 = w["weights"]
            .as_object()
            .unwrap()
            .values()
            .map(|x| x.as_f64().unwrap())
            .sum();
        assert!(total > 0.99 && total <= max_leverage + 1e-9, "{w}");
        assert!(r["relative"]["beta"].as_f64().unwrap().is_finite());
        assert_eq!(r["mode"], "weights");
        trades_add_up(&r, &calendar[first..]);
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_portfolios_are_refused_naming_the_field() {
    let (s, _dir) = TestServer::fresh().await;
    let weights = json!({"schedule": {"every": "month"}});
    let cases = [
        (
            json!({"universe": ["AAPL", "NOPE"], "weights": weights}),
            "universe[1]",
        ),
        (
            json!({"universe": ["AAPL", "MSFT"], "weights": {"schedule": {"every": "month"}, "weighting": {"method": "fixed", "weights": {"AAPL": 0.5, "MSFT": 0.4}}}}),
            "weights.weighting.weights",
        ),
        (
            json!({"universe": (0..501).map(|i| format!("S{i}")).collect::<Vec<_>>(), "weights": weights}),
            "universe",
        ),
        (
            json!({"universe": ["AAPL"], "start_date": "2024-01-08", "end_date": "2024-03-20", "weights": {"schedule": {"every": "quarter", "on": "last"}}}),
            "weights.schedule",
        ),
        (
            json!({"universe": ["AAPL"], "weights": weights, "leverage": 2}),
            "leverage",
        ),
        (
            json!({"universe": ["AAPL"], "benchmark": "NOPE", "weights": weights}),
            "benchmark",
        ),
        (json!({"universe": ["AAPL"]}), "signals"),
    ];
    for (body, field) in cases {
        let (status, r) = s.post("/backtest/portfolio", DEMO, &body).await;
        assert_eq!(status, 400, "{field}: {r}");
        assert!(
            r.to_string().contains(&format!("'{field}'")),
            "{field}: {r}"
        );
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_finished_portfolio_s_tables_come_as_json_rows_csv_and_arrow() {
    use platform::marketdata::columns::Column;
    let (s, _dir) = TestServer::fresh().await;
    let body = json!({
        "universe": &STOCKS[..6], "start_date": "2019-01-02", "end_date": "2020-12-31",
        "weights": {"schedule": {"every": "quarter"}, "weighting": {"method": "inverse_volatility", "bars": 40}}
    });
    let (_, r) = s.post("/backtest/portfolio", DEMO, &body).await;
    let id = r["task_id"].as_str().unwrap().to_string();
    let task = s
        .succeeded(&format!("/backtest/portfolio/{id}"), DEMO)
        .await;
    let result = &task["result"];
    // A summary read: the figures, without what the tables hold.
    let (status, summary) = s
        .get(&format!("/backtest/portfolio/{id}?view=summary"), DEMO)
        .await;
    assert_eq!(status, 200, "{summary}");
    let mut figures = result.as_object().unwrap().clone();
    for table in ["series", "trades", "orders", "weights", "contributions"] {
        assert!(figures.remove(table).is_some(), "{table}");
    }
    assert_eq!(summary["result"], Value::Object(figures.clone()));
    // Kept so: the record holds the figures, the blob store the tables.
    let uuid: uuid::Uuid = id.parse().unwrap();
    let record = s.state.tasks.get(uuid).await.unwrap().unwrap();
    assert_eq!(record.result, Some(Value::Object(figures)));
    let key = services::backtest::portfolio::stored::key(&uuid);
    let kept = s.state.uploads.blobs().get(&key).await.unwrap().unwrap();
    let tables: Value = serde_json::from_slice(&kept).unwrap();
    assert_eq!(tables["orders"], result["orders"]);
    let (status, refused) = s
        .get(&format!("/backtest/portfolio/{id}?view=tables"), DEMO)
        .await;
    assert_eq!(status, 400, "{refused}");
    assert!(refused.to_string().contains("'view'"), "{refused}");
    let (status, rows) = s
        .get(&format!("/backtest/portfolio/{id}/equity"), DEMO)
        .await;
    assert_eq!(status, 200, "{rows}");
    let rows = rows.as_array().unwrap();
    assert_eq!(
        rows.len(),
        result["series"]["date"].as_array().unwrap().len()
    );
    assert_eq!(rows[3]["equity"], result["series"]["equity"][3]);
    assert_eq!(rows[3]["date"], result["series"]["date"][3]);
    let (_, orders) = s
        .get(&format!("/backtest/portfolio/{id}/orders"), DEMO)
        .await;
    assert_eq!(orders, result["orders"]);
    // The trades and orders in the glossary's columns, in every format.
    for (table, header) in [
        (
            "trades",
            "entry_time,exit_time,symbol,side,size,entry_price,exit_price,fees,profit,return,bars_held,exit_reason",
        ),
        ("orders", "time,symbol,side,size,price,fees"),
    ] {
        let (status, csv) = s
            .get_text(
                &format!("/backtest/portfolio/{id}/{table}?format=csv"),
                DEMO,
            )
            .await;
        assert_eq!(status, 200, "{csv}");
        assert_eq!(csv.lines().next().unwrap(), header, "{table}");
        assert_eq!(
            csv.lines().count(),
            result[table].as_array().unwrap().len() + 1
        );
    }
    let (status, csv) = s
        .get_text(
            &format!("/backtest/portfolio/{id}/weights?format=csv"),
            DEMO,
        )
        .await;
    assert_eq!(status, 200);
    let header = csv.lines().next().unwrap().to_string();
    assert_eq!(
        header,
        format!(
            "date,{}",
            STOCKS[..6]
                .iter()
                .copied()
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
                .join(",")
        )
    );
    assert_eq!(
        csv.lines().count(),
        result["weights"].as_array().unwrap().len() + 1
    );
    let (status, arrow) = s
        .get_raw(
            &format!("/backtest/portfolio/{id}/contributions?format=arrow"),
            DEMO,
        )
        .await;
    assert_eq!(status, 200);
    let (table, _) = platform::marketdata::interchange::from_arrow_stream(&arrow).unwrap();
    let profit = table
        .iter()
        .find(|(n, _)| n == "profit")
        .map(|(_, c)| c.clone());
    let Some(Column::Number(profit)) = profit else {
        panic!("a profit column: {table:?}");
    };
    let gain: f64 = profit.iter().map(|p| p.unwrap()).sum();
    let final_capital = result["final_capital"].as_f64().unwrap();
    assert!((gain - (final_capital - 100_000.0)).abs() < 1e-6);
    let (status, e) = s
        .get(&format!("/backtest/portfolio/{id}/trades?format=xml"), DEMO)
        .await;
    assert_eq!(status, 400, "{e}");
    s.stop().await;
}

/// Where a window ends does not move its schedule: a window ending on
/// January's last session, the data going on into February, rebalances on
/// it at that close as a longer window does. With `next_open` that
/// rebalance would fill after the window: it is not traded, and a warning
/// says so.
#[tokio::test(flavor = "multi_thread")]
async fn a_window_ending_on_a_month_last_session_rebalances_on_it() {
    let (s, _dir) = TestServer::fresh().await;
    let body = |end: &str, fill: &str| {
        json!({"universe": ["AAPL", "MSFT", "NVDA"], "start_date": "2023-11-01", "end_date": end,
            "commission": 0.001, "trade_price": fill,
            "weights": {"schedule": {"every": "month", "on": "last"}}})
    };
    let days = |r: &Value| -> Vec<String> {
        let mut d: Vec<String> = r["orders"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["time"].as_str().unwrap()[..10].to_string())
            .collect();
        d.dedup();
        d
    };
    let on = |r: &Value, day: &str| -> Vec<Value> {
        r["orders"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["time"].as_str().unwrap().starts_with(day))
            .cloned()
            .collect()
    };
    let short = run(&s, &body("2024-01-31", "current_close")).await;
    let long = run(&s, &body("2024-02-29", "current_close")).await;
    assert_eq!(days(&short), ["2023-11-30", "2023-12-29", "2024-01-31"]);
    assert_eq!(days(&long)[..3], days(&short)[..]);
    let jan = on(&short, "2024-01-31");
    assert!(!jan.is_empty());
    assert_eq!(jan, on(&long, "2024-01-31"));
    let warned = |r: &Value| {
        r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().starts_with("weights.schedule"))
    };
    assert!(!warned(&short), "{}", short["warnings"]);
    // Decided on each month's last close, filled at the next open: the
    // window's last decision has no session left to fill on.
    let lagged = run(&s, &body("2024-01-31", "next_open")).await;
    assert_eq!(days(&lagged), ["2023-12-01", "2024-01-02"]);
    assert!(warned(&lagged), "{}", lagged["warnings"]);
    let w = lagged["warnings"].to_string();
    assert!(w.contains("2024-01-31") && w.contains("next_open"), "{w}");
    s.stop().await;
}
