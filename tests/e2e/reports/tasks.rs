//! Task reports: a strategy backtest, pattern-match tasks (a universe scan
//! and a backtest), a scanner backtest, a batch and a portfolio, each page
//! against the task's own JSON.

use super::*;
use serde_json::json;
use services::glossary;
use tests::server::Options;

/// A name that tries to be markup; every page must show it as text.
const HOSTILE: &str = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>";
const HOSTILE_SHOWN: &str =
    "&lt;script&gt;document.title='pwned'&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;";

fn assert_escaped(page: &Rendered, name: &str) {
    assert!(page.dom.contains(HOSTILE_SHOWN), "{name}: the name as text");
    assert!(!page.dom.contains("<img src=\"x\""), "{name}: no markup");
    assert!(!page.dom.contains("<title>pwned"), "{name}: no script");
}

fn canvases(page: &Rendered, at_least: usize, name: &str) {
    let n = page.dom.matches("<canvas").count();
    assert!(n >= at_least, "{name}: {n} canvases, charts drawn");
}

/// The text of the first cell keyed `key`, and its `data-unit`.
fn shown_text<'a>(dom: &'a str, key: &str) -> (&'a str, &'a str) {
    *shown_texts(dom, key)
        .first()
        .unwrap_or_else(|| panic!("{key}: no cell"))
}

/// The text of every cell keyed `key`, and its `data-unit`, in page order.
fn shown_texts<'a>(dom: &'a str, key: &str) -> Vec<(&'a str, &'a str)> {
    let mark = format!("data-key=\"{key}\"");
    dom.match_indices(&mark)
        .map(|(at, _)| {
            let td = &dom[at..at + dom[at..].find("</td>").unwrap()];
            let unit = between(td, "data-unit=\"", "\"").unwrap_or("");
            (&td[td.find('>').unwrap() + 1..], unit)
        })
        .collect()
}

/// A page's Monte Carlo section shows `mc` (an endpoint's answer): every
/// band and share of losses keyed as the page keys them (data-value: the
/// answer's number), CAGR and drawdown, fractions in the answer, shown in
/// percent, the run's own figures, and both fans drawn before the element
/// `next`.
fn monte_carlo_shown(page: &Rendered, cells: &[(String, Value)], mc: &Value, next: &str) {
    assert!(
        mc["returns"].is_object() && mc["trades"].is_object(),
        "{mc}"
    );
    for m in ["trades", "returns"] {
        for f in ["cagr", "max_drawdown", "final_equity"] {
            for (i, q) in [5, 25, 50, 75, 95].iter().enumerate() {
                let key = format!("{m}.{f}.{q}");
                assert_same(one(cells, &key), mc[m][f][i].clone(), &key);
            }
        }
        let key = format!("{m}.probability_of_loss");
        assert_same(one(cells, &key), mc[m]["probability_of_loss"].clone(), &key);
    }
    for f in ["cagr", "max_drawdown", "final_equity"] {
        let key = format!("actual.{f}");
        assert_same(column(cells, &key), vec![mc["actual"][f].clone(); 2], &key);
        for key in [key, format!("returns.{f}.50")] {
            let (text, unit) = shown_text(&page.dom, &key);
            let value = column(cells, &key)[0].as_f64().unwrap();
            let (want, want_unit) = if f == "final_equity" {
                (value, "money")
            } else {
                (value * 100.0, "fraction")
            };
            assert_eq!(unit, want_unit, "{key}");
            let shown: f64 = text
                .replace(',', "")
                .parse()
                .unwrap_or_else(|_| panic!("{key}: {text}"));
            assert!(
                (shown - want).abs() <= 0.005 + 1e-9 * want.abs(),
                "{key}: shows {text} for {want}"
            );
        }
    }
    for (fan, end) in [
        ("id=\"fan-returns\"", "id=\"fan-trades\""),
        ("id=\"fan-trades\"", next),
    ] {
        let at = page.dom.find(fan).unwrap();
        let to = at + page.dom[at..].find(end).unwrap();
        assert!(page.dom[at..to].contains("<canvas"), "{fan}: drawn");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backtest_report_shows_the_tasks_numbers_in_a_browser() {
    let (server, _dir) = TestServer::fresh().await;
    // Thirty years of daily SPX.
    let id = submit(&server, "/backtest/start_backtest", &{
        let mut s = tests::server::optix_strategy();
        s["name"] = json!(HOSTILE);
        s["start_date"] = json!("1995-01-03");
        s
    })
    .await;
    let task = finished(&server, &format!("/backtest/status/{id}")).await;
    let result = &task["result"];
    // The task links its page.
    assert_eq!(task["report_url"], format!("/backtest/report/{id}"));
    let page = render_ready(
        &server.base,
        task["report_url"].as_str().unwrap(),
        "backtest",
    );
    let bars = page
        .dom
        .split("<span id=\"points\">")
        .nth(1)
        .and_then(|r| r.split('<').next())
        .unwrap_or("?")
        .to_string();
    println!(
        "backtest report: {bars} daily bars, {} trades",
        result["Total Trades"]
    );
    assert_escaped(&page, "backtest");
    // Every metric and every trade on the page is the task's own.
    let cells = cells(&page.dom);
    for key in [
        "Total Return (%)",
        "CAGR",
        "Sharpe Ratio",
        "Max Drawdown",
        "Win Rate",
        "Total Trades",
        "Final Capital",
    ] {
        assert_same(one(&cells, key), result[key].clone(), key);
    }
    for key in ["EntryDate", "ExitDate", "Each Return", "Exit Reason"] {
        assert_same(column(&cells, key), result[key].clone(), key);
    }
    assert!(result["Total Trades"].as_u64().unwrap() > 5);
    // In the glossary's words and units, in the portfolio page's order:
    // the spec's `Total Return (%)` (percent) as "Total Return", a fraction
    // shown in percent; no spec key as a label.
    metrics_in_the_glossary_s_words(
        &page.dom,
        glossary::Kind::Backtest,
        result,
        &[
            "total_return",
            "cagr",
            "sharpe",
            "sortino",
            "annual_volatility",
            "max_drawdown",
            "calmar",
            "drawdown_period",
            "time_in_market",
            "total_trades",
            "winning_trades",
            "losing_trades",
            "win_rate",
            "average_win",
            "average_loss",
            "buy_hold_return",
            "initial_capital",
            "final_capital",
            "benchmark_return",
        ],
    );
    for raw in [
        "Total Return (%)",
        "BuyHoldGain",
        "Total Positive",
        "DrawDown Period",
    ] {
        assert!(
            !page.dom.contains(&format!(">{raw}</th>")),
            "{raw} as a label"
        );
    }
    // The Monte Carlo bands are the endpoint's with the page's settings.
    let (status, mc) = server
        .get(
            &format!("/backtest/monte-carlo/{id}?draws=1000&seed=0"),
            DEMO,
        )
        .await;
    assert_eq!(status, 200, "{mc}");
    monte_carlo_shown(&page, &cells, &mc, "id=\"trades\"");
    canvases(&page, 4, "backtest");
    hidden_from_others(&server, &format!("/backtest/report/{id}")).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unfinished_tasks_report_shows_its_status_and_reloads() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::new(dir.path().join("db.sqlite"));
    options.workers = 0;
    let server = TestServer::start(options).await;
    let id = submit(
        &server,
        "/backtest/start_backtest",
        &json!({
            "symbol": "SPX", "risk_control": "//10",
            "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Relative Strength Index"}, "rule": {"type_name": "CrossBelow", "comparison_value": "30"}}},
            "exit": {"rule_type": "RiskControlOnly"}
        }),
    )
    .await;
    let cpm = submit(
        &server,
        "/cpm/backtest/start",
        &json!({"symbol": "SPX", "system_pattern": "double_bottom", "corr_per": 80, "time_in_market": 10}),
    )
    .await;
    let batch = submit(
        &server,
        "/backtest/batch",
        &json!({"strategy": tests::server::optix_strategy(), "grid": {"risk_control": ["//5", "//10"]}}),
    )
    .await;
    for (path, name) in [
        (format!("/backtest/report/{id}"), "backtest-pending"),
        (format!("/cpm/report/{cpm}"), "cpm-pending"),
        (format!("/backtest/batch/{batch}/report"), "batch-pending"),
    ] {
        let page = render(&server.base, &path, name, 1_000);
        assert_clean(&page, name);
        assert!(
            page.dom.contains(r#"<span id="status">PENDING</span>"#),
            "{}",
            page.dom
        );
        assert!(page.dom.contains(r#"http-equiv="refresh""#));
    }
    server.stop().await;
}

/// The matches table of a pattern-match page against the answer's
/// `patterns`; the drawn windows' correlation with the drawn template is
/// the answer's `Corr`.
fn assert_matches(cells: &[(String, Value)], data: &Value, universe: bool, name: &str) {
    let patterns = data["patterns"].as_array().unwrap();
    let mut keys = vec!["StartDate", "EndDate", "Corr", "Close", "BarsNum"];
    if universe {
        keys.push("Symbol");
    }
    for key in keys {
        let want: Vec<Value> = patterns.iter().map(|p| p[key].clone()).collect();
        assert_same(column(cells, key), want, &format!("{name}: {key}"));
    }
    let drawn = column(cells, "drawn-corr");
    assert_eq!(drawn.len(), patterns.len());
    let overlaid = drawn.iter().filter(|v| !v.is_null()).count();
    assert_eq!(overlaid, patterns.len().min(10), "{name}: matches overlaid");
    for (d, p) in drawn.iter().zip(patterns).take(overlaid) {
        near(d, &p["Corr"], 1e-9, "the drawn window's correlation");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn pattern_match_reports_lay_the_matches_over_the_template() {
    let (server, _dir) = TestServer::fresh().await;
    // A universe scan with a Customize template, and a backtest of a shape.
    let scan = submit(
        &server,
        "/cpm/scan/start",
        &json!({"symbol": "SPX", "start_date": "2024-03-01", "end_date": "2024-05-31", "corr_per": 80,
            "time_in_market": 10, "universe": "sp500", "name": HOSTILE}),
    )
    .await;
    let backtest = submit(
        &server,
        "/cpm/backtest/start",
        &json!({"symbol": "SPX", "system_pattern": "double_bottom", "corr_per": 80, "time_in_market": 10}),
    )
    .await;

    let task = finished(&server, &format!("/cpm/status/{scan}")).await;
    assert_eq!(task["report_url"], format!("/cpm/report/{scan}"));
    let data = &task["result"]["data"];
    assert!(data["count"].as_u64().unwrap() > 10, "{data}");
    let page = render_ready(&server.base, &format!("/cpm/report/{scan}"), "cpm-scan");
    assert_escaped(&page, "cpm-scan");
    assert_matches(&cells(&page.dom), data, true, "cpm-scan");
    canvases(&page, 2, "cpm-scan");

    let task = finished(&server, &format!("/cpm/status/{backtest}")).await;
    let data = &task["result"]["data"];
    let page = render_ready(
        &server.base,
        task["report_url"].as_str().unwrap(),
        "cpm-backtest",
    );
    let cells = cells(&page.dom);
    assert_matches(&cells, data, false, "cpm-backtest");
    let info = &data["backtest_info"];
    for key in [
        "TOTAL RETURN",
        "MEDIAN RETURN",
        "AVERAGE RETURN",
        "WIN RATE",
        "TOTAL TRADES",
        "BUY & HOLD",
        "TIME IN MARKET",
    ] {
        assert_same(one(&cells, key), info[key].clone(), key);
    }
    let trades = info["trades"].as_array().unwrap();
    assert!(trades.len() > 3, "{info}");
    for key in [
        "StartDate",
        "EndDate",
        "ExitDate",
        "EachReturn",
        "ExitPrice",
        "MaxGain",
    ] {
        let want: Vec<Value> = trades.iter().map(|t| t[key].clone()).collect();
        assert_same(column(&cells, &format!("trade:{key}")), want, key);
    }
    // The equity line compounds the trades to the task's total return.
    near(
        &one(&cells, "compounded-return"),
        &info["TOTAL RETURN"],
        1e-9,
        "compounded on the chart",
    );
    canvases(&page, 6, "cpm-backtest");
    hidden_from_others(&server, &format!("/cpm/report/{scan}")).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_scanner_backtest_report_marks_the_trades_of_its_portfolio() {
    let (server, _dir) = TestServer::fresh().await;
    let id = submit(
        &server,
        "/smart-scanner-backtest/start",
        &json!({"name": HOSTILE, "start_date": "2026-06-01", "end_date": "2026-11-20",
            "find_type": "stock/etf", "signals": ["All"], "total_capital": 100000,
            "long_short_ratio": "0.7/0.3", "commission": 0.05, "daily_limit": 3}),
    )
    .await;
    let task = finished(&server, &format!("/smart-scanner-backtest/status/{id}")).await;
    assert_eq!(
        task["report_url"],
        format!("/smart-scanner-backtest/report/{id}")
    );
    let data = &task["result"]["data"];
    let page = render_ready(
        &server.base,
        task["report_url"].as_str().unwrap(),
        "scanner-backtest",
    );
    assert_escaped(&page, "scanner-backtest");
    let cells = cells(&page.dom);
    for key in [
        "TOTAL RETURN",
        "WIN RATE",
        "MAX RISK",
        "TOTAL TRADES",
        "TIME IN MARKET",
        "Z-SCORE",
        "BUY and HOLD",
        "skipped_trades",
    ] {
        assert_same(one(&cells, key), data[key].clone(), key);
    }
    let arrays = &data["result"];
    assert!(data["TOTAL TRADES"].as_u64().unwrap() > 10, "{data}");
    for key in [
        "Start Date",
        "Exit Date",
        "Symbol",
        "Signal",
        "Direction",
        "Shares",
        "Price",
        "Close",
        "FloatProfit",
        "OrderStatus",
    ] {
        assert_same(column(&cells, key), arrays[key].clone(), key);
    }
    // The drawdown drawn from the daily equity is the task's MAX RISK (a
    // positive percent) as the glossary's max drawdown (a negative fraction).
    near(
        &one(&cells, "drawn-max-drawdown"),
        &json!(data["MAX RISK"].as_f64().unwrap() / -100.0),
        1e-9,
        "drawdown on the chart",
    );
    // In the glossary's words and units: `MAX RISK` 27.7 is "Max Drawdown"
    // -27.70 %, `skipped_trades` "Skipped Trades".
    metrics_in_the_glossary_s_words(
        &page.dom,
        glossary::Kind::ScannerBacktest,
        data,
        &[
            "total_return",
            "max_drawdown",
            "time_in_market",
            "average_position",
            "total_trades",
            "winning_trades",
            "losing_trades",
            "win_rate",
            "average_win",
            "average_loss",
            "average_trade_return",
            "median_trade_return",
            "trade_return_std",
            "z_score",
            "skipped_trades",
            "benchmark_return",
        ],
    );
    assert!(data["MAX RISK"].as_f64().unwrap() > 0.0, "a fall: {data}");
    let (text, unit) = shown_text(&page.dom, "MAX RISK");
    assert!(text.starts_with('-') && unit == "fraction", "{text} {unit}");
    for raw in ["MAX RISK", "skipped_trades", "TOTAL RETURN", "BUY and HOLD"] {
        assert!(
            !page.dom.contains(&format!(">{raw}</th>")),
            "{raw} as a label"
        );
    }
    // The symbol chosen first is the most traded, its trades marked.
    let symbols = arrays["Symbol"].as_array().unwrap();
    let count = |s: &Value| symbols.iter().filter(|x| *x == s).count();
    let most = symbols.iter().map(count).max().unwrap();
    let first = page
        .dom
        .split("<option value=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap();
    assert_eq!(count(&json!(first)), most, "{first} first");
    let exits = (0..symbols.len())
        .filter(|i| symbols[*i] == first && !arrays["Exit Date"][*i].is_null())
        .count();
    assert!(
        page.dom
            .contains(&format!("data-markers=\"{}\"", most + exits)),
        "entries and exits of {first} marked"
    );
    canvases(&page, 6, "scanner-backtest");
    hidden_from_others(&server, &format!("/smart-scanner-backtest/report/{id}")).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_report_sorts_the_results_table() {
    let (server, _dir) = TestServer::fresh().await;
    let mut strategy = tests::server::optix_strategy();
    strategy["name"] = json!(HOSTILE);
    let id = submit(
        &server,
        "/backtest/batch",
        &json!({"name": HOSTILE, "strategy": strategy,
            "grid": {"risk_control": ["//5", "//10", "//15", "//20"], "symbol": ["SPX", "NDX"]}}),
    )
    .await;
    let batch = finished(&server, &format!("/backtest/batch/{id}")).await;
    assert_eq!(batch["report_url"], format!("/backtest/batch/{id}/report"));
    let (status, rows) = server
        .get(&format!("/backtest/batch/{id}/results"), DEMO)
        .await;
    assert_eq!(status, 200);
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 8);
    let page = render_ready(
        &server.base,
        &format!("/backtest/batch/{id}/report"),
        "batch",
    );
    assert_escaped(&page, "batch");
    let cells = cells(&page.dom);
    // Sorted by total return, best first; each row's cells are its own.
    let mut order: Vec<&Value> = rows.iter().collect();
    order.sort_by(|a, b| {
        b["Total Return (%)"]
            .as_f64()
            .unwrap()
            .total_cmp(&a["Total Return (%)"].as_f64().unwrap())
    });
    assert_eq!(
        column(&cells, "index"),
        order.iter().map(|r| r["index"].clone()).collect::<Vec<_>>()
    );
    for key in [
        "Symbol",
        "Total Return (%)",
        "Sharpe Ratio",
        "Max Drawdown",
        "Total Trades",
    ] {
        let want: Vec<Value> = order.iter().map(|r| r[key].clone()).collect();
        assert_same(column(&cells, key), want, key);
    }
    for path in ["risk_control", "symbol"] {
        let want: Vec<Value> = order.iter().map(|r| r["params"][path].clone()).collect();
        assert_same(column(&cells, &format!("param:{path}")), want, path);
    }
    // The metric columns in the glossary's words and units, in the pages'
    // order: 2.11's `Total Return (%)` headed "Total Return", its values
    // shown as percents of a fraction.
    batch_in_the_glossary_s_words(
        &page.dom,
        rows,
        &[
            "total_return",
            "cagr",
            "sharpe",
            "sortino",
            "annual_volatility",
            "max_drawdown",
            "calmar",
            "drawdown_period",
            "time_in_market",
            "total_trades",
            "win_rate",
            "average_win",
            "average_loss",
            "buy_hold_return",
        ],
    );
    // The statistics table shows the batch's own numbers.
    let st = &batch["statistics"];
    for (key, want) in [
        ("Best row", &st["deflated_sharpe"]["best_index"]),
        (
            "Deflated Sharpe Ratio",
            &st["deflated_sharpe"]["deflated_sharpe_ratio"],
        ),
        (
            "Probabilistic Sharpe Ratio",
            &st["deflated_sharpe"]["probabilistic_sharpe_ratio"],
        ),
        (
            "Probability of Backtest Overfitting",
            &st["overfitting"]["pbo"],
        ),
        (
            "Probability of loss out of sample",
            &st["overfitting"]["probability_of_loss"],
        ),
    ] {
        assert!(!want.is_null(), "{key}: {st}");
        assert_eq!(one(&cells, &format!("stat:{key}")), *want, "{key}");
    }
    // The heat map: risk controls down, symbols across, each cell the best
    // Sharpe ratio of its rows (here one row each).
    for r in rows {
        let key = format!(
            "heat:{}|{}",
            r["params"]["risk_control"], r["params"]["symbol"]
        );
        assert_eq!(one(&cells, &key), r["Sharpe Ratio"], "{key}");
    }
    assert_eq!(
        cells.iter().filter(|(k, _)| k.starts_with("heat:")).count(),
        8
    );
    canvases(&page, 3, "batch");
    // The best row's Monte Carlo: the endpoint's bands, and both fans drawn.
    let best = order[0]["index"].as_u64().unwrap();
    let (status, mc) = server
        .get(
            &format!("/backtest/batch/{id}/monte-carlo?row={best}&draws=1000&seed=0"),
            DEMO,
        )
        .await;
    assert_eq!(status, 200, "{mc}");
    assert!(
        page.dom
            .contains(&format!("<span id=\"monte-carlo-row\">#{best}</span>"))
    );
    monte_carlo_shown(&page, &cells, &mc, "id=\"rows\"");
    hidden_from_others(&server, &format!("/backtest/batch/{id}/report")).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_walk_forward_page_shows_each_window_s_pick_and_the_stitched_run() {
    let (server, _dir) = TestServer::fresh().await;
    let mut strategy = tests::server::optix_strategy();
    strategy["name"] = json!(HOSTILE);
    let id = submit(
        &server,
        "/backtest/batch",
        &json!({"name": HOSTILE, "strategy": strategy,
            "grid": {"risk_control": ["-8//63", "//21", "-5/10/42"], "entry.condition.rule.comparison_value": ["20", "30", "40"]},
            "walk_forward": {"in_sample": 756, "out_of_sample": 252, "metric": "total_return"}}),
    )
    .await;
    let batch = finished(&server, &format!("/backtest/batch/{id}")).await;
    let w = &batch["walk_forward"];
    let windows = w["windows"].as_array().unwrap();
    assert!(windows.len() >= 10, "{w}");
    let page = render_ready(
        &server.base,
        &format!("/backtest/batch/{id}/walk-forward"),
        "walk-forward",
    );
    assert_escaped(&page, "walk-forward");
    let cells = cells(&page.dom);
    assert_eq!(
        one(&cells, "wf:Walk-forward efficiency"),
        w["efficiency"],
        "efficiency"
    );
    assert_eq!(one(&cells, "wf:Picked by"), "Total Return");
    // The stitched run's figures (fractions in the answer) in the
    // glossary's words, in percent.
    metrics_in_the_glossary_s_words(
        &page.dom,
        glossary::Kind::WalkForward,
        w,
        &["total_return", "cagr", "sharpe", "max_drawdown"],
    );
    // Each window's values are the answer's (data-value), its score, picked
    // by total return, a fraction shown in percent as the returns beside it.
    for key in [
        "best_index",
        "efficiency",
        "score",
        "in_sample_return",
        "out_of_sample_return",
    ] {
        let want: Vec<Value> = windows.iter().map(|x| x[key].clone()).collect();
        assert_same(column(&cells, key), want, key);
    }
    assert!(
        page.dom.contains(">Score: Total Return</th>")
            && page.dom.contains(">In-sample Total Return</th>"),
        "the windows' headings"
    );
    for key in ["score", "in_sample_return", "out_of_sample_return"] {
        let shown = shown_texts(&page.dom, key);
        assert_eq!(shown.len(), windows.len(), "{key}");
        for (k, ((text, unit), x)) in shown.iter().zip(windows).enumerate() {
            assert_eq!(*unit, "fraction", "{key} of window {k}");
            in_unit(&format!("{key} of window {k}"), text, &x[key], unit, 1.0);
        }
    }
    // A score picked by total return is the in-sample run's total return.
    for x in windows.iter().filter(|x| !x["score"].is_null()) {
        near(&x["score"], &x["in_sample_return"], 1e-9, "score");
    }
    canvases(&page, 1, "walk-forward");
    // The batch's own page links it; a batch without one has none (404).
    let report = render_ready(
        &server.base,
        &format!("/backtest/batch/{id}/report"),
        "batch-walk-forward",
    );
    assert!(report.dom.contains("walk-forward-link"));
    let plain = submit(
        &server,
        "/backtest/batch",
        &json!({"strategies": [tests::server::optix_strategy()]}),
    )
    .await;
    finished(&server, &format!("/backtest/batch/{plain}")).await;
    let (status, _) = server
        .get(&format!("/backtest/batch/{plain}/walk-forward"), DEMO)
        .await;
    assert_eq!(status, 404);
    hidden_from_others(&server, &format!("/backtest/batch/{id}/walk-forward")).await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_portfolio_report_shows_its_figures_weights_and_contributions_in_a_browser() {
    let (server, _dir) = TestServer::fresh().await;
    let stocks = [
        "AAPL", "MSFT", "NVDA", "AMZN", "GOOGL", "META", "TSLA", "JPM", "V", "JNJ", "XOM", "PG",
    ];
    // Monthly, the top 11 of 12 by momentum: more layers than the chart's 10.
    let id = submit(
        &server,
        "/backtest/portfolio",
        &json!({"name": HOSTILE, "universe": stocks, "start_date": "2014-01-02", "end_date": "2023-12-29",
            "weights": {"schedule": {"every": "month"}, "select": {"method": "top", "k": 11, "by": {"momentum": 63}},
                "weighting": {"method": "inverse_volatility", "bars": 60}}}),
    )
    .await;
    let task = finished(&server, &format!("/backtest/portfolio/{id}")).await;
    let result = &task["result"];
    assert_eq!(
        task["report_url"],
        format!("/backtest/portfolio/{id}/report")
    );

    // The chart's data: the drawdown from the equity by hand, the layers
    // summing to each month end's weights.
    let (status, chart) = server
        .get(&format!("/backtest/portfolio/{id}/chart"), DEMO)
        .await;
    assert_eq!(status, 200, "{chart}");
    assert_eq!(chart["date"], result["series"]["date"]);
    assert_eq!(chart["equity"], result["series"]["equity"]);
    let mut peak = result["initial_capital"].as_f64().unwrap();
    for (k, e) in result["series"]["equity"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let e = e.as_f64().unwrap();
        peak = peak.max(e);
        near(
            &chart["drawdown"][k],
            &json!(e / peak - 1.0),
            1e-12,
            "drawdown, a fraction",
        );
    }
    let layers = &chart["weights"];
    assert_eq!(layers["symbols"].as_array().unwrap().len(), 11);
    assert_eq!(layers["symbols"][10], "others");
    for (m, at) in result["weights"].as_array().unwrap().iter().enumerate() {
        let held: f64 = at["weights"]
            .as_object()
            .unwrap()
            .values()
            .map(|w| w.as_f64().unwrap())
            .sum();
        let stacked: f64 = layers["weight"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w[m].as_f64().unwrap())
            .sum();
        near(&json!(stacked), &json!(held), 1e-12, "a month end's layers");
    }
    assert_eq!(chart["contributions"], result["contributions"]);

    // The page shows the task's own numbers.
    let page = render_ready(
        &server.base,
        task["report_url"].as_str().unwrap(),
        "portfolio",
    );
    assert_escaped(&page, "portfolio");
    let cells = cells(&page.dom);
    for key in [
        "total_return",
        "cagr",
        "sharpe",
        "max_drawdown",
        "annual_turnover",
        "total_trades",
        "final_capital",
    ] {
        assert_same(one(&cells, key), result[key].clone(), key);
    }
    for key in ["alpha", "beta", "information_ratio", "benchmark_return"] {
        assert_same(
            one(&cells, &format!("relative.{key}")),
            result["relative"][key].clone(),
            key,
        );
    }
    metrics_in_the_glossary_s_words(
        &page.dom,
        glossary::Kind::Portfolio,
        result,
        &[
            "total_return",
            "cagr",
            "sharpe",
            "sortino",
            "annual_volatility",
            "max_drawdown",
            "calmar",
            "drawdown_period",
            "time_in_market",
            "average_exposure",
            "annual_turnover",
            "total_trades",
            "winning_trades",
            "losing_trades",
            "win_rate",
            "average_win",
            "average_loss",
            "crowded_out",
            "initial_capital",
            "final_capital",
            "alpha",
            "beta",
            "tracking_error",
            "information_ratio",
            "up_capture",
            "down_capture",
            "benchmark_return",
        ],
    );
    weights_stacked(&page.dom, layers);
    let shot = out_dir().join("portfolio.png");
    let size = std::fs::metadata(&shot).map_or(0, |m| m.len());
    assert!(size > 20_000, "{}: {size} bytes", shot.display());
    let contributions = result["contributions"].as_array().unwrap();
    assert!(contributions.len() >= 11, "{}", contributions.len());
    assert_same(
        column(&cells, "symbol"),
        contributions
            .iter()
            .map(|c| c["symbol"].clone())
            .collect::<Vec<_>>(),
        "contributions",
    );
    assert_same(
        column(&cells, "profit"),
        contributions
            .iter()
            .map(|c| c["profit"].clone())
            .collect::<Vec<_>>(),
        "profits",
    );
    canvases(&page, 3, "portfolio");
    hidden_from_others(&server, &format!("/backtest/portfolio/{id}/report")).await;
    let (status, _) = server
        .get(&format!("/backtest/portfolio/{id}/chart"), Some(OTHER))
        .await;
    assert_eq!(status, 404, "another tenant's chart");
    server.stop().await;
}

/// The text between `from` and the next `to` after it, in `s`.
fn between<'a>(s: &'a str, from: &str, to: &str) -> Option<&'a str> {
    let at = s.find(from)? + from.len();
    Some(&s[at..at + s[at..].find(to)?])
}

/// A value as a page shows it in the glossary's `unit`: `value` is the
/// JSON's, the glossary's times `scale`; a fraction reads as a percent
/// ("3.30 %"), counts whole, the rest to two places; none is "–".
fn in_unit(what: &str, text: &str, value: &Value, unit: &str, scale: f64) {
    let Some(value) = value.as_f64() else {
        assert!(value.is_null(), "{what}: {value}");
        assert_eq!(text, "–", "{what}: none");
        return;
    };
    let (number, want) = match unit {
        "fraction" => (
            text.strip_suffix(" %")
                .unwrap_or_else(|| panic!("{what}: {text} in percent")),
            value / scale * 100.0,
        ),
        _ => (text, value / scale),
    };
    let shown: f64 = number
        .replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("{what}: {text}"));
    let digits = if matches!(unit, "count" | "sessions") {
        0.5
    } else {
        0.005
    };
    assert!(
        (shown - want).abs() <= digits + 1e-9 * want.abs(),
        "{what}: shows {text} for {value} ({unit}, scale {scale})"
    );
}

/// A page's metric rows read back from the DOM (every result page lists
/// them alike): each is labelled as the glossary labels it ("Total
/// Return", not `total_return` nor the spec's `Total Return (%)`), carries
/// the glossary's unit, is read where `kind` answers it, and shows the
/// answer's value in that unit (a fraction as a percent, the spec's
/// percent and `MAX RISK` over their scale); the rows are `want`, in order.
fn metrics_in_the_glossary_s_words(dom: &str, kind: glossary::Kind, result: &Value, want: &[&str]) {
    let mut names = Vec::new();
    for row in dom.split("<tr data-name=\"").skip(1) {
        let row = &row[..row.find("</tr>").unwrap()];
        let name = &row[..row.find('"').unwrap()];
        let entry =
            glossary::metric_entry(name).unwrap_or_else(|| panic!("{name}: not in the glossary"));
        let label = between(row, "<th title=\"", "</th>").unwrap();
        let label = unescape(&label[label.find('>').unwrap() + 1..]);
        assert_eq!(
            label, entry.label,
            "{name}: labelled as the glossary labels it"
        );
        assert_ne!(label, name, "{name}: not the raw key");
        let unit = between(row, "data-unit=\"", "\"").unwrap();
        assert_eq!(unit, entry.unit.as_str(), "{name}: its unit");
        let field = entry
            .field(kind)
            .unwrap_or_else(|| panic!("{name}: not answered by a {}", kind.as_str()));
        let key = unescape(between(row, "data-key=\"", "\"").unwrap());
        assert_eq!(key, field.field, "{name}: read where the kind answers it");
        // A key of its own (the scanner's `STD.DEV`) or a dotted path.
        let value = result
            .get(field.field)
            .unwrap_or_else(|| field.field.split('.').fold(result, |v, k| &v[k]));
        assert!(value.is_number(), "{name}: no number in the result");
        let td = between(row, "<td", "</td>").unwrap();
        let text = &td[td.find('>').unwrap() + 1..];
        in_unit(name, text, value, unit, field.scale);
        names.push(name.to_string());
    }
    assert_eq!(names, want, "the metrics, in the page's order");
}

/// A batch page's results table read back from the DOM: each metric
/// column is headed with the glossary's label (its name as the heading's
/// title, sorted by the field a batch row answers it under), the columns are
/// `want` in order, and every row's cell shows the row's value in the
/// glossary's unit.
fn batch_in_the_glossary_s_words(dom: &str, rows: &[Value], want: &[&str]) {
    let table = between(dom, "<table id=\"rows\"", "</table>").expect("the results table");
    let head = between(table, "<thead>", "</thead>").unwrap();
    let mut columns = Vec::new();
    for th in head.split("<th ").skip(1) {
        let th = &th[..th.find("</th>").unwrap()];
        let Some(name) = between(th, "title=\"", "\"") else {
            continue;
        };
        let entry =
            glossary::metric_entry(name).unwrap_or_else(|| panic!("{name}: not in the glossary"));
        let field = entry.field(glossary::Kind::BatchRow).unwrap();
        let sort = unescape(between(th, "data-sort=\"", "\"").unwrap());
        assert_eq!(sort, field.field, "{name}: a batch row's field");
        let label = unescape(th[th.find('>').unwrap() + 1..].trim_end_matches([' ', '▼', '▲']));
        assert_eq!(label, entry.label, "{name}: headed with its label");
        columns.push((name, entry, field));
    }
    let names: Vec<&str> = columns.iter().map(|c| c.0).collect();
    assert_eq!(names, want, "the metric columns, in the pages' order");
    let body = between(table, "<tbody>", "</tbody>").unwrap();
    let mut seen = 0;
    for tr in body.split("<tr data-row=\"").skip(1) {
        let index: u64 = tr[..tr.find('"').unwrap()].parse().unwrap();
        let row = rows.iter().find(|r| r["index"] == index).unwrap();
        for (name, entry, field) in &columns {
            let at = tr
                .find(&format!("data-key=\"{}\"", field.field))
                .unwrap_or_else(|| panic!("{name} of row {index}"));
            let td = &tr[at..at + tr[at..].find("</td>").unwrap()];
            let unit = between(td, "data-unit=\"", "\"").unwrap();
            assert_eq!(unit, entry.unit.as_str(), "{name}: its unit");
            let text = &td[td.find('>').unwrap() + 1..];
            let what = format!("{name} of row {index}");
            in_unit(&what, text, &row[field.field], unit, field.scale);
        }
        seen += 1;
    }
    assert_eq!(seen, rows.len(), "every row shown");
}

/// The weights chart stacks: one band per layer of the chart's data, in
/// its order from the bottom; each band starts where the one under it ends
/// (the first at 0), is as tall as its symbol's weight, and has the colour
/// of its entry in the legend, no two alike.
fn weights_stacked(dom: &str, layers: &Value) {
    let svg = between(dom, "<div id=\"weights\"", "</svg>").expect("the weights drawn as SVG");
    let attr = |s: &str, name: &str| -> String {
        between(s, &format!(" {name}=\""), "\"")
            .unwrap_or_else(|| panic!("{name} in {s}"))
            .to_string()
    };
    let head = between(svg, "<svg", ">").unwrap();
    let base: f64 = attr(head, "data-base").parse().unwrap();
    let unit: f64 = attr(head, "data-unit").parse().unwrap();
    assert!(unit > 50.0, "a tall enough chart: {unit} px per 100 %");
    let symbols: Vec<&str> = layers["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    let months = layers["date"].as_array().unwrap().len();
    let point = |p: &str| -> (f64, f64) {
        let (x, y) = p.split_once(',').unwrap();
        (x.parse().unwrap(), y.parse().unwrap())
    };
    let mut under: Vec<String> = Vec::new();
    let mut fills = Vec::new();
    let bands: Vec<&str> = svg.split("<polygon").skip(1).collect();
    assert_eq!(bands.len(), symbols.len(), "one band per layer");
    for (k, band) in bands.iter().enumerate() {
        assert_eq!(
            attr(band, "data-symbol"),
            symbols[k],
            "band {k} from the bottom"
        );
        let all = attr(band, "points");
        let points: Vec<&str> = all.split(' ').collect();
        assert_eq!(
            points.len(),
            2 * months,
            "{}: upper and lower edges",
            symbols[k]
        );
        let upper = &points[..months];
        let mut lower: Vec<&str> = points[months..].to_vec();
        lower.reverse();
        for m in 0..months {
            let (xu, yu) = point(upper[m]);
            let (xl, yl) = point(lower[m]);
            assert_eq!(xu, xl, "{} at month {m}", symbols[k]);
            // Stacked: this band's lower edge is the upper edge of the one under it.
            match under.get(m) {
                Some(edge) => assert_eq!(
                    lower[m], edge,
                    "{} at month {m}: on the band under it",
                    symbols[k]
                ),
                None => assert!(
                    (yl - base).abs() < 0.006,
                    "{} at month {m}: from 0",
                    symbols[k]
                ),
            }
            let weight = layers["weight"][k][m].as_f64().unwrap();
            assert!(
                ((yl - yu) - weight * unit).abs() <= 0.011,
                "{} at month {m}: {} px for a weight of {weight}",
                symbols[k],
                yl - yu
            );
        }
        under = upper.iter().map(|p| p.to_string()).collect();
        fills.push(attr(band, "fill"));
    }
    let distinct: std::collections::BTreeSet<&String> = fills.iter().collect();
    assert_eq!(distinct.len(), fills.len(), "a colour per band: {fills:?}");
    let legend = between(dom, "<ul id=\"weights-legend\"", "</ul>").expect("a legend");
    let entries: Vec<(String, String)> = legend
        .split("<li ")
        .skip(1)
        .map(|li| {
            (
                attr(&format!(" {li}"), "data-symbol"),
                attr(&format!(" {li}"), "data-color"),
            )
        })
        .collect();
    let mut want: Vec<(String, String)> = symbols
        .iter()
        .zip(&fills)
        .map(|(s, f)| (s.to_string(), f.clone()))
        .collect();
    want.reverse();
    assert_eq!(
        entries, want,
        "the legend names each band's colour, top first"
    );
}
