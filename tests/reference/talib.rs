//! Every technical indicator of the engine equals TA-Lib's to 1e-9 after warm-up.

use engine::Bars;
use engine::indicators as ta;
use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
use serde_json::{Value, json};
use std::sync::Arc;
use tests::server::market_dir;

fn reference(b: &Bars, params: Value) -> Value {
    tests::reference::run(
        "talib_values.py",
        &json!({"open": b.open, "high": b.high, "low": b.low, "close": b.close, "volume": b.volume, "params": params}),
    )
}

/// Same warm-up (NaN exactly where TA-Lib has null) and values within 1e-9
/// (relative above 1).
fn assert_matches(name: &str, ours: &[f64], theirs: &Value) {
    let theirs = theirs
        .as_array()
        .unwrap_or_else(|| panic!("{name}: no reference output"));
    assert_eq!(ours.len(), theirs.len(), "{name}: length");
    let mut compared = 0;
    for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
        match b.as_f64() {
            None => assert!(
                a.is_nan(),
                "{name}[{i}]: TA-Lib is still warming up, we gave {a}"
            ),
            Some(b) => {
                let tol = 1e-9 * b.abs().max(1.0);
                assert!((a - b).abs() <= tol, "{name}[{i}]: {a} vs TA-Lib {b}");
                compared += 1;
            }
        }
    }
    assert!(
        compared > ours.len() / 2,
        "{name}: only {compared} values compared"
    );
}

#[allow(clippy::too_many_arguments)]
fn check_all(
    b: &Bars,
    sma: usize,
    ema: usize,
    rsi: usize,
    macd: (usize, usize, usize),
    bb: (usize, f64, f64),
    stoch: (usize, usize, usize),
    n: usize,
) {
    let r = reference(
        b,
        json!({
            "sma": sma, "ema": ema, "rsi": rsi, "atr": n, "adx": n, "cci": n, "willr": n, "roc": n, "mfi": n,
            "macd": [macd.0, macd.1, macd.2], "bbands": [bb.0, bb.1, bb.2], "stoch": [stoch.0, stoch.1, stoch.2],
        }),
    );
    let (h, l, c, v) = (&b.high, &b.low, &b.close, &b.volume);
    assert_matches("SMA", &ta::sma(c, sma), &r["sma"]);
    assert_matches("EMA", &ta::ema(c, ema), &r["ema"]);
    assert_matches("RSI", &ta::rsi(c, rsi), &r["rsi"]);
    assert_matches("ATR", &ta::atr(h, l, c, n), &r["atr"]);
    assert_matches("ADX", &ta::adx(h, l, c, n), &r["adx"]);
    assert_matches("CCI", &ta::cci(h, l, c, n), &r["cci"]);
    assert_matches("WILLR", &ta::willr(h, l, c, n), &r["willr"]);
    assert_matches("ROC", &ta::roc(c, n), &r["roc"]);
    assert_matches("MFI", &ta::mfi(h, l, c, v, n), &r["mfi"]);
    assert_matches("OBV", &ta::obv(c, v), &r["obv"]);
    let (m, s, hist) = ta::macd(c, macd.0, macd.1, macd.2);
    assert_matches("MACD", &m, &r["macd"]);
    assert_matches("MACD signal", &s, &r["macd_signal"]);
    assert_matches("MACD histogram", &hist, &r["macd_hist"]);
    let (up, mid, low) = ta::bbands(c, bb.0, bb.1, bb.2);
    assert_matches("BBANDS upper", &up, &r["bb_upper"]);
    assert_matches("BBANDS middle", &mid, &r["bb_middle"]);
    assert_matches("BBANDS lower", &low, &r["bb_lower"]);
    let (k, d) = ta::stoch(h, l, c, stoch.0, stoch.1, stoch.2);
    assert_matches("STOCH %K", &k, &r["stoch_k"]);
    assert_matches("STOCH %D", &d, &r["stoch_d"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn indicators_equal_talib_on_daily_series() {
    let md = ParquetMarketData::new(Arc::new(LocalDir::new(market_dir())));
    for symbol in ["SPX", "AAPL", "TLT", "NG"] {
        let bars = md.daily(symbol).await.unwrap();
        // Defaults of the technical-indicator map, then other periods.
        check_all(
            &bars,
            20,
            20,
            14,
            (12, 26, 9),
            (20, 2.0, 2.0),
            (14, 3, 3),
            14,
        );
        check_all(
            &bars.slice_dates(chrono::NaiveDate::from_ymd_opt(2019, 1, 1), None),
            50,
            9,
            7,
            (5, 35, 5),
            (10, 1.5, 2.5),
            (5, 3, 3),
            21,
        );
    }
}

#[test]
fn indicators_equal_talib_on_flat_and_gapping_prices() {
    // Flat stretches (zero ranges and zero changes) and gaps test TA-Lib's edge rules.
    let mut b = Bars::default();
    let t0 = chrono::NaiveDate::from_ymd_opt(2020, 1, 1)
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap();
    for i in 0..120 {
        let base = if i < 30 {
            50.0
        } else if i < 60 {
            50.0 + (i - 30) as f64
        } else if i < 70 {
            40.0
        } else {
            40.0 + ((i * 7) % 11) as f64
        };
        let (o, c) = if i < 30 || (60..70).contains(&i) {
            (base, base)
        } else {
            (base - 0.5, base + 0.25)
        };
        let (h, l) = if i < 30 || (60..70).contains(&i) {
            (base, base)
        } else {
            (base + 1.0, base - 1.0)
        };
        b.push(
            t0 + chrono::TimeDelta::days(i),
            o,
            h,
            l,
            c,
            if i % 9 == 0 { 0.0 } else { 1000.0 + i as f64 },
        );
    }
    check_all(&b, 20, 20, 14, (12, 26, 9), (20, 2.0, 2.0), (14, 3, 3), 14);
}
