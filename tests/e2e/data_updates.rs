//! Market data that stays current: a session appended by `marketlab import`
//! (another reader of the directory than the server) is answered by a warm
//! server within its check interval, by the data service and by a
//! portfolio backtest; a file whose overlapping session differs is refused
//! naming the row and writes nothing.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::generation::Generation;
use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tests::market_files;
use tests::server::{Options, TestServer, eventually};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));
/// The sample set's latest session (a Friday) and the session after it.
const LAST: &str = "2026-11-20";
const NEXT: &str = "2026-11-23";
const CHECK: Duration = Duration::from_millis(1500);

/// A server over the data directory `data` (its `market/` and a database
/// beside it), looking for imports every [`CHECK`].
fn options_over(data: &Path) -> Options {
    let mut opts = Options::new(data.join("db.sqlite"));
    opts.market_dir = data.join("market");
    opts.data_check = CHECK;
    opts
}

async fn import(data: &Path, args: &[&str]) -> anyhow::Result<()> {
    use clap::Parser;
    let mut argv = vec![
        "marketlab".to_string(),
        "--data-dir".into(),
        data.display().to_string(),
        "import".into(),
    ];
    argv.extend(args.iter().map(|a| a.to_string()));
    marketlab::cli::run(marketlab::cli::Cli::parse_from(argv)).await
}

/// An Alpaca multi-symbol bars answer: each symbol's stored bar of `LAST`
/// as it is, and a bar of `NEXT` moved from it by `step` (prices times it).
async fn alpaca_answer(market: &ParquetMarketData, symbols: &[&str], step: f64) -> Value {
    let mut bars = serde_json::Map::new();
    for s in symbols {
        let b = market.daily(s).await.unwrap();
        let i = b.len() - 1;
        assert_eq!(b.date(i).to_string(), LAST);
        let bar = |day: &str, k: f64| {
            json!({"t": format!("{day}T05:00:00Z"), "o": b.open[i] * k, "h": b.high[i] * k,
                   "l": b.low[i] * k, "c": b.close[i] * k, "v": b.volume[i], "n": 1000, "vw": b.close[i] * k})
        };
        bars.insert(s.to_string(), json!([bar(LAST, 1.0), bar(NEXT, step)]));
    }
    json!({"bars": bars, "next_page_token": null})
}

async fn last_price_date(s: &TestServer, symbol: &str) -> String {
    let (status, body) = s.get(&format!("/ws/prices/{symbol}"), DEMO).await;
    assert_eq!(status, 200, "{body}");
    body["bars"].as_array().unwrap().last().unwrap()["Date"]
        .as_str()
        .unwrap()
        .to_string()
}

async fn portfolio_last_date(s: &TestServer) -> String {
    let body = json!({
        "universe": ["AAPL", "MSFT"], "start_date": "2026-09-01",
        "weights": {"schedule": {"every": "month"}, "select": {"method": "all"}}
    });
    let (status, r) = s.post("/backtest/portfolio", DEMO, &body).await;
    assert_eq!(status, 202, "{r}");
    let id = r["task_id"].as_str().unwrap().to_string();
    let task = s
        .succeeded(&format!("/backtest/portfolio/{id}"), DEMO)
        .await;
    let dates = task["result"]["series"]["date"].as_array().unwrap().clone();
    dates.last().unwrap().as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_warm_server_answers_an_appended_session_within_its_check_interval() {
    let data = tempfile::tempdir().unwrap();
    let market_dir = data.path().join("market");
    tests::server::sample_into(&market_dir);
    let mut opts = options_over(data.path());
    opts.scan.at_start = false;
    let s = TestServer::start(opts).await;

    // Warm: the latest session is the sample's, for both readers.
    assert_eq!(last_price_date(&s, "AAPL").await, LAST);
    assert_eq!(portfolio_last_date(&s).await, LAST);

    let reader = ParquetMarketData::new(Arc::new(LocalDir::new(&market_dir)));
    let file = data.path().join("bars.json");
    let answer = alpaca_answer(&reader, &["AAPL", "MSFT", "SPX"], 1.01).await;
    std::fs::write(&file, serde_json::to_vec(&answer).unwrap()).unwrap();
    import(data.path(), &["json", file.to_str().unwrap()])
        .await
        .unwrap();
    let imported = Instant::now();
    let fresh = ParquetMarketData::new(Arc::new(LocalDir::new(&market_dir)));
    let aapl = fresh.daily("AAPL").await.unwrap();
    assert_eq!(aapl.date(aapl.len() - 1).to_string(), NEXT);
    let symbols = fresh.symbols().await.unwrap();
    let info = symbols.iter().find(|i| i.symbol == "AAPL").unwrap();
    assert_eq!(info.last_date.to_string(), NEXT);

    // The warm server answers the new session within its interval (and a
    // margin for the request itself), without a restart.
    let seen = eventually(CHECK + Duration::from_secs(2), || async {
        last_price_date(&s, "AAPL").await == NEXT
    })
    .await;
    assert!(seen, "not seen {:?} after the import", imported.elapsed());
    assert!(imported.elapsed() <= CHECK + Duration::from_secs(2));
    assert_eq!(portfolio_last_date(&s).await, NEXT);

    // The same session with another close: refused, naming the symbol,
    // row and column with both values; nothing written, no new generation.
    let before = std::fs::read(market_dir.join("prices/daily/AAPL.parquet")).unwrap();
    let generation = Generation::read(&LocalDir::new(&market_dir)).await.unwrap();
    let mut changed = alpaca_answer(&reader, &["AAPL"], 1.01).await;
    changed["bars"]["AAPL"][1]["c"] = json!(aapl.close[aapl.len() - 1] + 0.5);
    changed["bars"]["AAPL"][1]["h"] = json!(aapl.high[aapl.len() - 1] + 0.5);
    std::fs::write(&file, serde_json::to_vec(&changed).unwrap()).unwrap();
    let e = import(data.path(), &["json", file.to_str().unwrap()])
        .await
        .unwrap_err();
    assert!(e.to_string().contains("refused"), "{e}");
    assert_eq!(
        std::fs::read(market_dir.join("prices/daily/AAPL.parquet")).unwrap(),
        before
    );
    assert_eq!(
        Generation::read(&LocalDir::new(&market_dir)).await.unwrap(),
        generation
    );
    s.stop().await;
}

/// A price-crossing strategy on MSFT over the year around `ex`.
fn crossing(start: &str, adjusted: Option<bool>) -> Value {
    let mut body = json!({
        "symbol": "MSFT", "start_date": start,
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Simple Moving Average"}, "rule": {"comparison_type": "MA", "type_name": "CrossAbove", "period": 20}}},
        "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "SMA"}, "rule": {"comparison_type": "MA", "type_name": "CrossBelow", "period": 20}}}
    });
    if let Some(a) = adjusted {
        body["adjusted"] = json!(a);
    }
    body
}

async fn trades(s: &TestServer, body: &Value) -> Value {
    let (status, r) = s.post("/backtest/start_backtest", DEMO, body).await;
    assert_eq!(status, 202, "{r}");
    let id = r["task_id"].as_str().unwrap().to_string();
    let task = s.succeeded(&format!("/backtest/status/{id}"), DEMO).await;
    let r = &task["result"];
    json!({"entry": r["EntryDate"], "exit": r["ExitDate"], "returns": r["Each Return"],
           "defaults": task["result"]["defaults_applied"]["adjusted"]})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recorded_split_adjusts_reads_as_pandas_does_and_backtests_trade_on_the_adjusted_series()
{
    use sample::import::{Options as Import, SymbolRows, csv_rows, ingest};
    let data = tempfile::tempdir().unwrap();
    let market_dir = data.path().join("market");
    tests::server::sample_into(&market_dir);
    let market = ParquetMarketData::new(Arc::new(LocalDir::new(&market_dir)));
    // The bars as traded around a 2:1 split 60 sessions before the end:
    // before it, twice the sample's prices and half its volume.
    let adjusted = market.daily_stored("MSFT").await.unwrap();
    let ex = adjusted.date(adjusted.len() - 60);
    let mut csv = String::from("Date,Open,High,Low,Close,Volume\n");
    for i in 0..adjusted.len() {
        let k = if adjusted.date(i) < ex { 2.0 } else { 1.0 };
        csv.push_str(&format!(
            "{},{},{},{},{},{}\n",
            adjusted.date(i),
            adjusted.open[i] * k,
            adjusted.high[i] * k,
            adjusted.low[i] * k,
            adjusted.close[i] * k,
            adjusted.volume[i] / k
        ));
    }
    let rows = || {
        vec![SymbolRows {
            symbol: "MSFT".into(),
            rows: csv_rows("msft.csv", csv.as_bytes(), None).unwrap(),
        }]
    };
    let replace = Import {
        replace: true,
        ..Default::default()
    };
    // Without the split recorded, the halving is reported, not refused.
    let done = ingest(&market, "msft.csv", rows(), Vec::new(), &replace)
        .await
        .unwrap();
    let jumps: Vec<&str> = done
        .report
        .findings
        .iter()
        .filter(|f| f.rule == "unexplained_jump")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(jumps.len(), 1, "{}", done.report);
    assert!(jumps[0].starts_with(&ex.to_string()), "{}", jumps[0]);
    // Recorded (as vendors write it), the same file is explained.
    let actions = data.path().join("actions.csv");
    std::fs::write(
        &actions,
        format!("symbol,date,kind,value\nmsft,{ex},split,2:1\nMSFT,{ex},dividend,0.83\n"),
    )
    .unwrap();
    import(data.path(), &["actions", actions.to_str().unwrap()])
        .await
        .unwrap();
    let market = ParquetMarketData::new(Arc::new(LocalDir::new(&market_dir)));
    let done = ingest(&market, "msft.csv", rows(), Vec::new(), &replace)
        .await
        .unwrap();
    assert!(done.report.findings.is_empty(), "{}", done.report);

    let mut opts = options_over(data.path());
    opts.scan.at_start = false;
    let s = TestServer::start(opts).await;
    let read = |adjusted: bool| {
        let s = &s;
        async move {
            let (status, body) = s
                .get(&format!("/ws/prices/MSFT?adjusted={adjusted}"), DEMO)
                .await;
            assert_eq!(status, 200, "{body}");
            assert_eq!(body["adjusted"], adjusted);
            body["bars"].as_array().unwrap().clone()
        }
    };
    let (adj, raw) = (read(true).await, read(false).await);
    let column =
        |rows: &[Value], k: &str| -> Vec<Value> { rows.iter().map(|r| r[k].clone()).collect() };
    let want = tests::reference::run(
        "pandas_splits.py",
        &json!({
            "dates": column(&raw, "Date"), "open": column(&raw, "Open"), "high": column(&raw, "High"),
            "low": column(&raw, "Low"), "close": column(&raw, "Close"), "volume": column(&raw, "Volume"),
            "splits": [[ex.to_string(), 2.0]]
        }),
    );
    for (ours, theirs) in [
        ("Open", "open"),
        ("High", "high"),
        ("Low", "low"),
        ("Close", "close"),
        ("Volume", "volume"),
    ] {
        let ours = column(&adj, ours);
        let theirs = want[theirs].as_array().unwrap();
        assert_eq!(ours.len(), theirs.len());
        for (a, b) in ours.iter().zip(theirs) {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            assert!((a - b).abs() <= 1e-12 * a.abs().max(1.0), "{a} {b}");
        }
    }
    // The adjusted series is the sample's own, and the raw one halves on the ex-date.
    assert_eq!(
        column(&adj, "Close").last().unwrap().as_f64(),
        adjusted.close.last().copied()
    );
    let k = raw
        .iter()
        .position(|r| r["Date"] == ex.to_string())
        .unwrap();
    assert_eq!(
        raw[k - 1]["Close"].as_f64().unwrap(),
        adjusted.close[adjusted.len() - 61] * 2.0
    );

    // A backtest across the split trades as on the adjusted series (the
    // sample's, on a server of the untouched set), says it defaulted to it,
    // and trades otherwise on the bars as traded.
    let start = adjusted.date(adjusted.len() - 250).to_string();
    let (sample, _db) = TestServer::fresh().await;
    let on_adjusted = trades(&s, &crossing(&start, None)).await;
    let reference = trades(&sample, &crossing(&start, None)).await;
    assert_eq!(on_adjusted, reference);
    assert_eq!(on_adjusted["defaults"], true);
    assert!(on_adjusted["entry"].as_array().unwrap().len() > 2);
    let as_traded = trades(&s, &crossing(&start, Some(false))).await;
    assert_ne!(as_traded["returns"], on_adjusted["returns"]);
    assert_eq!(as_traded["defaults"], Value::Null);
    sample.stop().await;
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn files_put_in_incoming_are_imported_or_rejected_and_a_completed_session_is_scanned() {
    use services::analytics::scanner::follow;
    let data = tempfile::tempdir().unwrap();
    let market_dir = data.path().join("market");
    tests::server::sample_into(&market_dir);
    let mut opts = options_over(data.path());
    opts.scan.follow = true;
    let s = TestServer::start(opts).await;
    let reader = ParquetMarketData::new(Arc::new(LocalDir::new(&market_dir)));
    let next: chrono::NaiveDate = NEXT.parse().unwrap();
    let (most, last_stock) = market_files::ending_on(&reader, LAST.parse().unwrap()).await;
    let incoming = market_dir.join("incoming");
    std::fs::create_dir_all(&incoming).unwrap();
    // As a file should arrive: written beside, then renamed in whole.
    let put = |name: &str, data: &[u8]| {
        let hidden = incoming.join(format!(".{name}.part"));
        std::fs::write(&hidden, data).unwrap();
        std::fs::rename(&hidden, incoming.join(name)).unwrap();
    };
    let arrived = |name: &str| {
        let report = market_dir.join(name);
        async move { eventually(Duration::from_secs(20), || async { report.exists() }).await }
    };

    // Every symbol but one stock: imported, not yet a complete session.
    put(
        "2026-11-23.json",
        &market_files::grouped_daily(&reader, &most, next).await,
    );
    assert!(arrived("ingested/2026-11-23.json.report.json").await);
    let report: Value = serde_json::from_slice(
        &std::fs::read(market_dir.join("ingested/2026-11-23.json.report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["errors"], 0, "{report}");
    assert!(!incoming.join("2026-11-23.json").exists());
    let fresh = ParquetMarketData::new(Arc::new(LocalDir::new(&market_dir)));
    assert_eq!(follow::complete_session(&fresh).await.unwrap(), None);

    // The last stock completes the session: it is scanned.
    put(
        "2026-11-23-rest.json",
        &market_files::grouped_daily(&reader, std::slice::from_ref(&last_stock), next).await,
    );
    assert!(arrived("ingested/2026-11-23-rest.json.report.json").await);
    let fresh = ParquetMarketData::new(Arc::new(LocalDir::new(&market_dir)));
    assert_eq!(follow::complete_session(&fresh).await.unwrap(), Some(next));
    let scanned = eventually(Duration::from_secs(60), || async {
        s.state.scanner.dates().await.unwrap().contains(&next)
    })
    .await;
    assert!(scanned, "the completed session was not scanned");
    // Once: a session scanned is not scanned again.
    let store = tests::server::scanner_store(&market_dir);
    assert_eq!(
        follow::follow(&fresh, store.as_ref(), None).await.unwrap(),
        None
    );

    // A bad file: moved to rejected/ with its report, nothing written.
    let before = std::fs::read(market_dir.join("prices/daily/SPX.parquet")).unwrap();
    put(
        "SPX.csv",
        b"Date,Open,High,Low,Close,Volume\n2026-11-24,10,9,11,10,100\n",
    );
    assert!(arrived("rejected/SPX.csv.report.json").await);
    let report: Value = serde_json::from_slice(
        &std::fs::read(market_dir.join("rejected/SPX.csv.report.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(report["findings"][0]["rule"], "high_below_low", "{report}");
    assert_eq!(report["findings"][0]["line"], 2);
    assert!(market_dir.join("rejected/SPX.csv").exists());
    assert_eq!(
        std::fs::read(market_dir.join("prices/daily/SPX.parquet")).unwrap(),
        before
    );
    s.stop().await;
}
