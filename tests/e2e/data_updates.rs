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
use tests::server::{Options, TestServer, eventually};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));
/// The sample set's latest session (a Friday) and the session after it.
const LAST: &str = "2026-11-20";
const NEXT: &str = "2026-11-23";
const CHECK: Duration = Duration::from_millis(1500);

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
    let mut opts = Options::new(data.path().join("db.sqlite"));
    opts.market_dir = market_dir.clone();
    opts.data_check = CHECK;
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
