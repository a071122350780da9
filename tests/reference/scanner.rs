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

/// Two symbol/signal pairs: the same trades and every figure to 1e-9.
#[tokio::test(flavor = "multi_thread")]
async fn signal_statistics_equal_an_independent_computation() {
    use engine::scanner::{Inputs, signal, stats};
    use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
    let md = ParquetMarketData::new(std::sync::Arc::new(LocalDir::new(market_dir())));
    let stock = super::analytics::stocks(&md, 1).await.remove(0);
    let pairs = [("MA", "SPX".to_string()), ("Symbol 52-Week High", stock)];
    let mut cases = Vec::new();
    let mut ours = Vec::new();
    for (name, symbol) in &pairs {
        let b = md.daily(symbol).await.unwrap();
        let s = signal(name).unwrap();
        let hold = s.horizon().hold();
        let asof = b.len() - 1;
        let inputs = Inputs {
            open: &b.open,
            high: &b.high,
            low: &b.low,
            close: &b.close,
            optix: None,
        };
        let history = stats::history(&b.close, &(s.fire)(&inputs), hold, asof);
        cases.push(json!({"signal": name, "close": b.close, "hold": hold, "asof": asof}));
        ours.push((format!("{name} on {symbol}"), history));
    }
    let want = tests::reference::run("scanner_statistics.py", &json!({"cases": cases}));
    for ((what, history), want) in ours.iter().zip(want.as_array().unwrap()) {
        let theirs = want["trades"].as_array().unwrap();
        assert_eq!(history.len(), theirs.len(), "{what}: trades");
        assert!(history.len() > 20, "{what}: {} trades", history.len());
        for (t, w) in history.iter().zip(theirs) {
            assert_eq!(
                (
                    json!(t.entry),
                    json!(t.exit),
                    json!(t.direction.as_str()),
                    json!(t.reason.as_str())
                ),
                (w[0].clone(), w[1].clone(), w[2].clone(), w[4].clone()),
                "{what}"
            );
            assert!(
                (t.ret - w[3].as_f64().unwrap()).abs() <= 1e-9,
                "{what}: {t:?} vs {w}"
            );
        }
        let f = stats::figures(history);
        let figures = [
            ("trade_number", f.trade_number as f64),
            ("win_rate", f.win_rate),
            ("avg_win", f.avg_win),
            ("avg_loss", f.avg_loss),
            ("avg_return", f.avg_return),
            ("median_return", f.median_return),
            ("std_dev", f.std_dev),
            ("annual_return", f.annual_return),
            ("max_risk", f.max_risk),
            ("sharpe_ratio", f.sharpe_ratio),
            ("z_score", f.z_score),
            ("expected_return", f.expected_return),
            ("avg_hold", f.avg_hold),
        ];
        for (name, ours) in figures {
            let theirs = want["figures"][name].as_f64().unwrap();
            assert!(
                (ours - theirs).abs() <= 1e-9 * theirs.abs().max(1.0),
                "{what} {name}: {ours} vs {theirs}"
            );
        }
    }
}
