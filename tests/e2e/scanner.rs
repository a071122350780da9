//! The smart stock scanner over HTTP.

use engine::scanner::{Inputs, signal, stats, trend};
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::scanner::ScannerStore;
use platform::worker::Progress;
use serde_json::{Value, json};
use services::analytics::scanner::nightly::{self, Schedule};
use std::time::Duration;
use tests::server::{Options, TestServer, eventually, private_market};

#[tokio::test(flavor = "multi_thread")]
async fn predefined_signals_flat_and_by_category() {
    let (s, _dir) = TestServer::fresh().await;
    let (status, body) = s
        .get(
            "/smart-stock-scanner/get-predefined-signals",
            Some((DEMO_EMAIL, DEMO_PASSWORD)),
        )
        .await;
    assert_eq!(
        (status, &body["code"], &body["msg"]),
        (200, &json!(200), &json!("Predefined signals"))
    );
    let signals = body["data"]["signals"].as_array().unwrap();
    assert_eq!(signals.len(), 37);
    let categories = body["data"]["categories"].as_object().unwrap();
    let mut names: Vec<&str> = categories.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            "CPM Pattern",
            "Candlestick Pattern",
            "High/Low Signal",
            "Optix Signal",
            "Technical Indicator",
            "Trend Score"
        ]
    );
    let counts: Vec<usize> = [
        "Technical Indicator",
        "Candlestick Pattern",
        "Optix Signal",
        "CPM Pattern",
        "High/Low Signal",
        "Trend Score",
    ]
    .iter()
    .map(|c| categories[*c].as_array().unwrap().len())
    .collect();
    assert_eq!(counts, vec![8, 4, 7, 8, 8, 2]);
    for name in [
        "MA",
        "Hammer",
        "Optix #7",
        "Triple Tap",
        "Symbol All-Time Low",
        "Trend Score Breakdown",
    ] {
        assert!(signals.iter().any(|x| x["name"] == name), "{name}");
    }
    assert!(
        signals
            .iter()
            .all(|x| x["description"].as_str().is_some_and(|d| !d.is_empty()))
    );
    let (status, body) = s
        .get("/smart-stock-scanner/get-predefined-signals", None)
        .await;
    assert_eq!((status, &body["code"]), (401, &json!(401)));
    s.stop().await;
}

pub(crate) const USER: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

pub(crate) fn close_to(a: &Value, b: f64) -> bool {
    let a = a.as_f64().unwrap();
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

/// A server over a private market directory with this scanner schedule.
async fn server(market: &std::path::Path, scan: Schedule) -> (TestServer, tempfile::TempDir) {
    let db = tempfile::tempdir().unwrap();
    let mut opts = Options::new(db.path().join("db.sqlite"));
    opts.market_dir = market.to_path_buf();
    opts.scan = scan;
    (TestServer::start(opts).await, db)
}

/// An item's figures recomputed from the bars with the engine's parts.
async fn check_item(s: &TestServer, it: &Value) {
    let symbol = it["Symbol"].as_str().unwrap();
    let bars = s.state.market.daily(symbol).await.unwrap();
    let last = bars.len() - 1;
    assert_eq!(it["Date"], bars.date(last).to_string());
    assert_eq!(it["Close"].as_f64(), Some(bars.close[last]));
    let sig = signal(it["_Signal"].as_str().unwrap()).unwrap();
    assert_eq!(it["Category"], sig.horizon().name());
    let optix = s
        .state
        .market
        .indicator_series(&format!("{symbol}_OPTIX"))
        .await
        .unwrap();
    assert_eq!(
        optix.time.len(),
        bars.len(),
        "the sample's Optix follows the bars"
    );
    let inputs = Inputs {
        open: &bars.open,
        high: &bars.high,
        low: &bars.low,
        close: &bars.close,
        optix: Some(&optix.close),
    };
    let firings = (sig.fire)(&inputs);
    assert_eq!(
        firings[last].map(|d| d.as_str()),
        it["Direction"].as_str(),
        "{symbol} {}",
        sig.name
    );
    let hold = sig.horizon().hold();
    let (target, stop) = stats::levels(&bars.close, last, hold).unwrap();
    assert_eq!(it["ProfitTarget"], format!("{target:.2}%"));
    assert_eq!(it["StopLoss"], format!("{stop:.2}%"));
    assert_eq!(it["TimeInMarket"], hold.to_string());
    let trades = stats::history(&bars.close, &firings, hold, last);
    let f = stats::figures(&trades);
    assert_eq!(it["TradeNumber"], f.trade_number);
    assert_eq!(it["WinRate"], format!("{:.2}%", f.win_rate));
    for (key, want) in [
        ("AvgWin", f.avg_win),
        ("AvgLoss", f.avg_loss),
        ("AvgReturn", f.avg_return),
        ("MedianReturn", f.median_return),
        ("AnnualReturn", f.annual_return),
        ("StdDev", f.std_dev),
        ("MaxRisk", f.max_risk),
        ("SharpeRatio", f.sharpe_ratio),
        ("Z_Score", f.z_score),
        ("ExpectedReturn", f.expected_return),
    ] {
        assert!(close_to(&it[key], want), "{key}: {} vs {want}", it[key]);
    }
    assert_eq!(
        it["TrendScore"].as_f64(),
        Some(trend::score(&bars.close)[last])
    );
    assert_eq!(it["Optix"].as_f64(), Some(optix.close[last]));
    let score = it["RelTrendScore"].as_f64().unwrap();
    assert!((0.0..=10.0).contains(&score) && score.fract() == 0.0);
    if let Some(info) = it.get("backtest_info") {
        let n = f.trade_number;
        for key in [
            "EachReturn",
            "EntryTradeDate",
            "ExitTradeDate",
            "EntryTradePrice",
            "ExitTradePrice",
            "ExitReason",
        ] {
            assert_eq!(info[key].as_array().unwrap().len(), n, "{key}");
        }
        for (k, t) in trades.iter().enumerate() {
            assert!(close_to(&info["EachReturn"][k], t.ret));
            assert_eq!(info["EntryTradeDate"][k], bars.date(t.entry).to_string());
            assert_eq!(info["ExitTradeDate"][k], bars.date(t.exit).to_string());
            assert_eq!(
                info["EntryTradePrice"][k].as_f64(),
                Some(bars.close[t.entry])
            );
            assert_eq!(info["ExitTradePrice"][k].as_f64(), Some(bars.close[t.exit]));
            assert_eq!(info["ExitReason"][k], t.reason.as_str());
        }
        assert!(close_to(&info["WinRate"], f.win_rate));
        assert!(close_to(&info["TimeInMarket"], f.avg_hold));
        assert_eq!(info["_Signal"], it["_Signal"]);
        assert_eq!(info["date"], it["Date"]);
        let spx = s.state.market.daily("SPX").await.unwrap();
        let avg = engine::indicators::sma(&spx.close, 200);
        let up = spx.close[spx.len() - 1] > avg[spx.len() - 1];
        assert_eq!(info["Market"], if up { "Uptrend" } else { "Downtrend" });
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_nightly_scan_runs_at_start_and_the_endpoints_read_its_file() {
    let market = private_market();
    let (s, _db) = server(
        market.path(),
        Schedule {
            at_start: true,
            daily_at: None,
            follow: false,
        },
    )
    .await;
    let latest = s.state.market.latest_date().await.unwrap();
    assert!(
        eventually(Duration::from_secs(60), || async {
            s.state.scanner.dates().await.unwrap().contains(&latest)
        })
        .await,
        "the start-up scan wrote the latest session"
    );
    let file = market.path().join(format!("scanner/{latest}.parquet"));
    let written = std::fs::read(&file).unwrap();

    let mut all = Vec::new();
    for category in ["SwingAI", "MidTermAI"] {
        let (status, body) = s
            .get(
                &format!("/smart-stock-scanner/latest-day-all?category={category}"),
                USER,
            )
            .await;
        assert_eq!((status, &body["code"]), (200, &json!(200)), "{body}");
        let data = &body["data"];
        assert_eq!(data["as_of_date"], latest.to_string());
        let items = data["scanner_data"].as_array().unwrap();
        assert_eq!(data["count"], items.len());
        assert!(items.iter().all(|i| i["Category"] == category));
        assert!(items.iter().all(|i| i.get("backtest_info").is_none()));
        let mut tickers: Vec<&str> = items
            .iter()
            .map(|i| i["Symbol"].as_str().unwrap())
            .collect();
        tickers.dedup();
        assert_eq!(data["tickers"], json!(tickers));
        all.extend(items.iter().cloned());
    }
    assert!(all.len() >= 5, "{} items", all.len());
    // The default category is SwingAI.
    let (_, swing) = s.get("/smart-stock-scanner/latest-day-all", USER).await;
    assert!(
        swing["data"]["scanner_data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|i| i["Category"] == "SwingAI")
    );

    // Every item's numbers, recomputed from the bars; trade lists too.
    for it in &all {
        check_item(&s, it).await;
    }
    let symbol = all[0]["Symbol"].as_str().unwrap().to_lowercase();
    let (_, with) = s
        .get(
            &format!("/smart-stock-scanner/single/{symbol}?include_backtest=true"),
            USER,
        )
        .await;
    assert_eq!(with["code"], 200, "{with}");
    let single = with["data"]["scanner_data"].as_array().unwrap();
    assert_eq!(with["data"]["ticker"], symbol.to_uppercase());
    assert_eq!(
        single.len(),
        all.iter()
            .filter(|i| i["Symbol"] == symbol.to_uppercase())
            .count()
    );
    for it in single {
        assert!(it["backtest_info"].is_object());
        check_item(&s, it).await;
    }
    // The same items without trade lists, and by ticker on latest-day-all.
    let (_, plain) = s
        .get(&format!("/smart-stock-scanner/single/{symbol}"), USER)
        .await;
    let mut stripped = with["data"].clone();
    for it in stripped["scanner_data"].as_array_mut().unwrap() {
        it.as_object_mut().unwrap().remove("backtest_info");
    }
    assert_eq!(plain["data"], stripped);
    let (_, by_ticker) = s
        .get(
            &format!(
                "/smart-stock-scanner/latest-day-all?ticker={symbol}&category={}&include_backtest=true",
                all[0]["Category"].as_str().unwrap()
            ),
            USER,
        )
        .await;
    assert_eq!(by_ticker["data"]["tickers"], json!([symbol.to_uppercase()]));
    assert_eq!(by_ticker["data"]["scanner_data"][0], single[0]);

    // Pages: limit and offset over the day's items; count is the day's.
    let (_, day) = s.get("/smart-stock-scanner/latest-day-all", USER).await;
    let items = day["data"]["scanner_data"].as_array().unwrap().clone();
    let (_, page) = s
        .get("/smart-stock-scanner/latest-day-all?limit=2&offset=1", USER)
        .await;
    assert_eq!(page["data"]["count"], items.len());
    assert_eq!(
        page["data"]["scanner_data"],
        json!(items[1..3.min(items.len())])
    );
    let (_, bt) = s
        .get(
            "/smart-stock-scanner/latest-day-all?include_backtest=true",
            USER,
        )
        .await;
    assert_eq!(
        bt["data"]["scanner_data"].as_array().unwrap().len(),
        items.len().min(20)
    );

    // Errors: unknown tickers 404, nothing fired 407 (in an HTTP 200), bad values 400.
    let (status, body) = s.get("/smart-stock-scanner/single/NOPE", USER).await;
    assert_eq!((status, &body["code"]), (404, &json!(404)), "{body}");
    let (status, body) = s
        .get("/smart-stock-scanner/latest-day-all?ticker=NOPE", USER)
        .await;
    assert_eq!((status, &body["code"]), (404, &json!(404)), "{body}");
    let (status, body) = s.get("/smart-stock-scanner/single/SPX", USER).await;
    assert_eq!(
        (status, &body["code"], &body["data"]),
        (200, &json!(407), &Value::Null),
        "{body}"
    );
    let (status, body) = s
        .get("/smart-stock-scanner/latest-day-all?date=2001-01-02", USER)
        .await;
    assert_eq!((status, &body["code"]), (200, &json!(407)), "{body}");
    for (path, field) in [
        (
            "/smart-stock-scanner/latest-day-all?category=Weekly",
            "category",
        ),
        (
            "/smart-stock-scanner/latest-day-all?date=2026-02-30",
            "date",
        ),
        (
            "/smart-stock-scanner/latest-day-all?include_backtest=perhaps",
            "include_backtest",
        ),
        (
            "/smart-stock-scanner/latest-day-all?include_backtest=true&limit=51",
            "limit",
        ),
        ("/smart-stock-scanner/latest-day-all?offset=-1", "offset"),
        ("/smart-stock-scanner/latest-day-all?limit=ten", "limit"),
        (
            "/smart-stock-scanner/single/AAPL?start_date=2026-11-20&end_date=2026-11-01",
            "start_date",
        ),
        (
            "/smart-stock-scanner/single/AAPL?end_date=tomorrow",
            "end_date",
        ),
    ] {
        let (status, body) = s.get(path, USER).await;
        assert_eq!(
            (status, &body["code"]),
            (400, &json!(400)),
            "{path}: {body}"
        );
        assert!(
            body["msg"].as_str().unwrap().contains(field),
            "{path}: {body}"
        );
    }

    // Idempotent per date: running it again writes the same bytes and
    // answers the same; an earlier session gets its own file.
    let again = nightly::run(
        s.state.market.as_ref(),
        s.state.scanner.as_ref(),
        Some(latest),
        &Progress::default(),
    )
    .await
    .unwrap();
    assert_eq!(again.items, all.len());
    assert_eq!(std::fs::read(&file).unwrap(), written);
    let (_, day_again) = s.get("/smart-stock-scanner/latest-day-all", USER).await;
    assert_eq!(day_again, day);
    let spx = s.state.market.daily("SPX").await.unwrap();
    let before = spx.date(spx.len() - 2);
    nightly::run(
        s.state.market.as_ref(),
        s.state.scanner.as_ref(),
        Some(before),
        &Progress::default(),
    )
    .await
    .unwrap();
    let (_, earlier) = s
        .get(
            &format!("/smart-stock-scanner/latest-day-all?date={before}&category=MidTermAI"),
            USER,
        )
        .await;
    assert!(
        matches!(earlier["code"].as_u64(), Some(200 | 407)),
        "{earlier}"
    );
    if earlier["code"] == 200 {
        assert_eq!(earlier["data"]["as_of_date"], before.to_string());
        assert!(
            earlier["data"]["scanner_data"]
                .as_array()
                .unwrap()
                .iter()
                .all(|i| i["Date"] == before.to_string())
        );
    }
    // single over both dates: the earlier one's items first.
    let (_, both) = s
        .get(
            &format!("/smart-stock-scanner/single/{symbol}?start_date={before}"),
            USER,
        )
        .await;
    let dates: Vec<&str> = both["data"]["scanner_data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["Date"].as_str().unwrap())
        .collect();
    assert!(dates.is_sorted() && dates.last() == Some(&latest.to_string().as_str()));
    // A date after the data, or not a session, is refused, naming it.
    for bad in [
        latest + chrono::Days::new(30),
        chrono::NaiveDate::from_ymd_opt(2026, 11, 22).unwrap(),
    ] {
        let e = nightly::run(
            s.state.market.as_ref(),
            s.state.scanner.as_ref(),
            Some(bad),
            &Progress::default(),
        )
        .await
        .unwrap_err();
        assert!(e.to_string().contains("'date'"), "{e}");
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_daily_run_scans_at_its_time() {
    let market = private_market();
    let at = (chrono::Utc::now() + chrono::TimeDelta::seconds(2)).time();
    let (s, _db) = server(
        market.path(),
        Schedule {
            at_start: false,
            daily_at: Some(at),
            follow: false,
        },
    )
    .await;
    assert!(
        s.state.scanner.dates().await.unwrap().is_empty(),
        "no scan at start"
    );
    let (_, body) = s.get("/smart-stock-scanner/latest-day-all", USER).await;
    assert_eq!((&body["code"], &body["data"]), (&json!(407), &Value::Null));
    let latest = s.state.market.latest_date().await.unwrap();
    let fresh = platform::scanner::ParquetScannerStore::new(
        std::sync::Arc::new(platform::marketdata::LocalDir::new(market.path())),
        Duration::ZERO,
    );
    assert!(
        eventually(Duration::from_secs(60), || async {
            fresh.dates().await.unwrap().contains(&latest)
        })
        .await,
        "the daily run wrote the latest session"
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn marketlab_scan_by_hand() {
    use clap::Parser;
    let data = tempfile::tempdir().unwrap();
    let market = data.path().join("market");
    tests::server::sample_into(&market);
    let run = |args: &[&str]| {
        let mut argv = vec![
            "marketlab",
            "--data-dir",
            data.path().to_str().unwrap(),
            "scan",
        ];
        argv.extend_from_slice(args);
        marketlab::cli::run(marketlab::cli::Cli::parse_from(argv))
    };
    run(&[]).await.unwrap();
    run(&["--date", "2026-11-19"]).await.unwrap();
    let listing = |dir: &str| {
        let mut files: Vec<String> = std::fs::read_dir(market.join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .collect();
        files.sort();
        files
    };
    assert_eq!(
        listing("scanner"),
        vec!["2026-11-19.parquet", "2026-11-20.parquet", "history"]
    );
    // A backfill records past sessions' history, writing no day file.
    run(&["--from", "2026-09-15", "--date", "2026-10-30"])
        .await
        .unwrap();
    assert_eq!(listing("scanner").len(), 3);
    assert_eq!(
        listing("scanner/history"),
        vec!["2026-09.parquet", "2026-10.parquet", "2026-11.parquet"]
    );
    let e = run(&["--from", "2026-11-20", "--date", "2026-11-19"])
        .await
        .unwrap_err();
    assert!(e.to_string().contains("from"), "{e}");
    let e = run(&["--date", "2026-11-21"]).await.unwrap_err();
    assert!(e.to_string().contains("date"), "{e}");
    let empty = tempfile::tempdir().unwrap();
    let e = marketlab::cli::run(marketlab::cli::Cli::parse_from([
        "marketlab",
        "--data-dir",
        empty.path().to_str().unwrap(),
        "scan",
    ]))
    .await
    .unwrap_err();
    assert!(e.to_string().contains("no market data"), "{e}");
}
