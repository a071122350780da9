//! The scanner's High/Low signals equal pandas' rolling and expanding
//! max/min of closes, and its Hammer and Shooting Star candles equal
//! TA-Lib's CDLHAMMER and CDLSHOOTINGSTAR, bar for bar on the sample data.

use engine::scanner::candles::{Candles, hammer, shooting_star};
use engine::scanner::highs_lows::{
    ALL_TIME_MIN_HISTORY, Extreme, WEEKS_4, WEEKS_13, WEEKS_52, all_time, rolling,
};
use serde_json::{Value, json};
use tests::server::market_dir;

fn indices(flags: &[bool]) -> Value {
    json!(
        flags
            .iter()
            .enumerate()
            .filter(|(_, f)| **f)
            .map(|(i, _)| i)
            .collect::<Vec<_>>()
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn highs_lows_and_candles_equal_pandas_and_talib() {
    use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
    let md = ParquetMarketData::new(std::sync::Arc::new(LocalDir::new(market_dir())));
    let mut symbols: Vec<String> = md
        .symbols()
        .await
        .unwrap()
        .iter()
        .filter(|s| s.asset_class == "stock")
        .take(6)
        .map(|s| s.symbol.clone())
        .collect();
    symbols.extend(["SPX", "TLT", "GLD"].map(String::from));
    let mut series = Vec::new();
    let mut bars = Vec::new();
    for s in &symbols {
        let b = md.daily(s).await.unwrap();
        series.push(json!({"open": b.open, "high": b.high, "low": b.low, "close": b.close}));
        bars.push(b);
    }
    let windows = [("4w", WEEKS_4), ("13w", WEEKS_13), ("52w", WEEKS_52)];
    let want = tests::reference::run(
        "scanner_signals.py",
        &json!({"series": series, "windows": windows.iter().map(|(k, w)| (k.to_string(), json!(w))).collect::<serde_json::Map<_, _>>(),
                "all_time_min_history": ALL_TIME_MIN_HISTORY}),
    );
    let (mut candles, mut highs) = (0, 0);
    for ((symbol, b), want) in symbols.iter().zip(&bars).zip(want.as_array().unwrap()) {
        let mut ours = serde_json::Map::new();
        for (name, w) in windows {
            ours.insert(
                format!("high_{name}"),
                indices(&rolling(&b.close, w, Extreme::High)),
            );
            ours.insert(
                format!("low_{name}"),
                indices(&rolling(&b.close, w, Extreme::Low)),
            );
        }
        ours.insert(
            "high_all".into(),
            indices(&all_time(&b.close, Extreme::High)),
        );
        ours.insert("low_all".into(), indices(&all_time(&b.close, Extreme::Low)));
        let c = Candles {
            open: &b.open,
            high: &b.high,
            low: &b.low,
            close: &b.close,
        };
        ours.insert("hammer".into(), indices(&hammer(&c)));
        ours.insert("shooting_star".into(), indices(&shooting_star(&c)));
        for (name, theirs) in want.as_object().unwrap() {
            assert_eq!(&ours[name], theirs, "{symbol} {name}");
        }
        candles += ours["hammer"].as_array().unwrap().len()
            + ours["shooting_star"].as_array().unwrap().len();
        highs += ours["high_52w"].as_array().unwrap().len();
    }
    assert!(
        candles > 20 && highs > 100,
        "the sample has candles ({candles}) and highs ({highs}) to compare"
    );
}
