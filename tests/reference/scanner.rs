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

/// The scanner backtest's portfolio rules recomputed in Python over the same
/// filtered items, for two parameter sets: identical trade arrays, every
/// metric and the daily equity and cash to 1e-9.
#[tokio::test(flavor = "multi_thread")]
async fn scanner_backtest_equals_an_independent_simulation() {
    use platform::marketdata::{LocalDir, ParquetMarketData};
    use platform::scanner::{ParquetScannerStore, READ_TTL};
    use services::analytics::scanner::backtest::{self, requests::ScannerBacktestParams};
    let blobs = std::sync::Arc::new(LocalDir::new(market_dir()));
    let md = ParquetMarketData::new(blobs.clone());
    let store = ParquetScannerStore::new(blobs, READ_TTL);
    let sets = [
        json!({"start_date": "2024-01-02", "end_date": "2026-11-20", "find_type": "stock/etf",
            "signals": ["All"], "total_capital": 100000, "long_short_ratio": "0.7/0.3",
            "commission": 0.1, "daily_limit": 3}),
        json!({"start_date": "2022-06-01", "end_date": "2025-12-31", "find_type": "stock",
            "signals": ["MA", "MACDHist", "Symbol 13-Week High", "Symbol 4-Week Low", "UpTrend Pattern", "Trend Score Breakout"],
            "total_capital": 25000, "long_short_ratio": "0.5/0.5", "capital_allocate": "0.3",
            "daily_limit": 2, "rank_condition": "WinRate", "trend_range": "2-10"}),
    ];
    for (n, body) in sets.iter().enumerate() {
        let q = serde_json::from_value::<ScannerBacktestParams>(body.clone())
            .unwrap()
            .validate()
            .unwrap();
        let (calendar, items) = backtest::filtered_items(&md, &store, &q).await.unwrap();
        let ours = backtest::run(&md, &store, &q, &platform::worker::Progress::default())
            .await
            .unwrap();
        let ours = serde_json::to_value(ours.data.unwrap()).unwrap();
        let rank = match q.rank {
            backtest::requests::Rank::WinRate => "WinRate",
            backtest::requests::Rank::ZScore => "Z_Score",
            backtest::requests::Rank::StdDev => "StdDev",
            backtest::requests::Rank::ExpectedReturn => "ExpectedReturn",
            backtest::requests::Rank::SharpeRatio => "SharpeRatio",
        };
        let allocation = match q.allocation {
            engine::scanner::portfolio::Allocation::Kelly => json!("Kelly"),
            engine::scanner::portfolio::Allocation::Fixed(f) => json!(f),
        };
        let input = json!({
            "market": market_dir(),
            "calendar": calendar.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
            "items": items.iter().map(|it| json!({
                "day": it.day, "symbol": it.symbol, "signal": it.signal,
                "signal_name": engine::scanner::SIGNALS[it.signal].name,
                "direction": it.direction.as_str(), "profit_target": it.profit_target,
                "stop_loss": it.stop_loss, "hold": it.hold, "win_rate": it.figures.win_rate,
                "avg_win": it.figures.avg_win, "avg_loss": it.figures.avg_loss,
                "std_dev": it.figures.std_dev, "z_score": it.figures.z_score,
                "expected_return": it.figures.expected_return, "sharpe_ratio": it.figures.sharpe_ratio,
            })).collect::<Vec<_>>(),
            "params": {"capital": q.capital, "long": q.long_share, "short": q.short_share,
                "commission": q.commission, "allocation": allocation,
                "daily_limit": q.daily_limit, "rank": rank},
        });
        let want = tests::reference::run("scanner_backtest.py", &input);
        let close = |a: &Value, b: &Value, what: &str| {
            let (x, y) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            assert!(
                (x - y).abs() <= 1e-9 * y.abs().max(1.0),
                "set {n} {what}: {x} vs {y}"
            );
        };
        let trades = want["TOTAL TRADES"].as_u64().unwrap();
        assert!(trades >= 10, "set {n}: {trades} trades");
        for key in [
            "TOTAL RETURN",
            "MEDIAN RETURN",
            "AVERAGE RETURN",
            "WIN RATE",
            "AVERAGE WIN",
            "AVERAGE LOSS",
            "MAX RISK",
            "TIME IN MARKET",
            "STD.DEV",
            "Z-SCORE",
            "BUY and HOLD",
            "AVERAGE POSITION",
        ] {
            close(&ours[key], &want[key], key);
        }
        for key in [
            "TOTAL TRADES",
            "TOTAL POSITIVE",
            "TOTAL NEGATIVE",
            "skipped_trades",
        ] {
            assert_eq!(ours[key], want[key], "set {n} {key}");
        }
        for key in ["equity", "cash"] {
            let (a, b) = (ours[key].as_array().unwrap(), want[key].as_array().unwrap());
            assert_eq!(a.len(), b.len());
            for (x, y) in a.iter().zip(b) {
                close(x, y, key);
            }
        }
        for (key, theirs) in want["result"].as_object().unwrap() {
            let mine = ours["result"][key].as_array().unwrap();
            let theirs = theirs.as_array().unwrap();
            assert_eq!(mine.len(), theirs.len(), "set {n} {key}");
            for (x, y) in mine.iter().zip(theirs) {
                if y.is_string() || y.is_null() {
                    assert_eq!(x, y, "set {n} {key}");
                } else {
                    close(x, y, key);
                }
            }
        }
        println!(
            "scanner backtest, set {n}: {trades} trades, {} skipped, total return {:.2}% (equal to the independent simulation)",
            want["skipped_trades"],
            want["TOTAL RETURN"].as_f64().unwrap()
        );
    }
}
