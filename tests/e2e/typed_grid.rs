//! A grid's points prepared as typed values (`batch::typed`) run exactly as
//! the same points written into the base strategy and parsed whole: the
//! same rows, errors and kept returns.

use platform::marketdata::{LocalDir, ParquetMarketData};
use serde_json::json;
use services::backtest::batch::{self, Keep, Strategies, typed::TypedGrid};
use std::sync::Arc;
use tests::server::market_dir;

#[tokio::test(flavor = "multi_thread")]
async fn typed_points_run_as_the_points_written_in_and_parsed() {
    let md = ParquetMarketData::new(Arc::new(LocalDir::new(market_dir())));
    let side = |op: &str| {
        json!({"rule_type": "SingleCondition", "condition": {
            "signal": {"name": "Simple Moving Average", "params": {"period": "10"}},
            "rule": {"comparison_type": "MA", "type_name": op, "period": "50"}}})
    };
    // Among the values, ones the parser refuses: a zero period, text, a
    // malformed risk control.
    let body = json!({"strategy": {"symbol": "SPX", "start_date": "2015-01-02", "risk_control": "//",
            "entry": side("CrossAbove"), "exit": side("CrossBelow")},
        "grid": {
            "entry.condition.signal.params.period,exit.condition.signal.params.period": ["5", 10, "0", "20"],
            "entry.condition.rule.period,exit.condition.rule.period": ["30", "60", "abc"],
            "risk_control": ["//", "-5/10/21", "//x"]}});
    let e = batch::expand(&body, 1_000).unwrap();
    let varied: Vec<_> = (0..e.len()).map(|k| e.varied.get(k)).collect();
    let base = e.base.clone().unwrap();
    let grid = TypedGrid::new(&md, &base, varied[0].keys())
        .await
        .unwrap()
        .expect("every path is a typed leaf");
    let typed = varied.iter().filter(|v| grid.point(v).is_some()).count();
    assert_eq!((typed, varied.len()), (3 * 2 * 2, 36));

    let keep = Keep {
        blocks: 8,
        raw: true,
        walk_forward: None,
    };
    let fast = Strategies::Grid {
        base,
        first: 0,
        varied,
    };
    let fast = batch::run_strategies(&md, fast, keep, &Default::default())
        .await
        .unwrap();
    let items = (0..e.len())
        .map(|k| (k, e.strategy(k).unwrap(), e.varied.get(k)))
        .collect();
    let slow = batch::run_strategies(&md, Strategies::Listed(items), keep, &Default::default())
        .await
        .unwrap();
    assert_eq!(fast.rows, slow.rows);
    assert_eq!(fast.returns, slow.returns);
    let failed: Vec<&str> = fast
        .rows
        .iter()
        .filter_map(|r| r.error.as_deref())
        .collect();
    assert_eq!(failed.len(), 36 - 12);
    assert!(
        failed.iter().any(|m| m.contains("must be at least 1"))
            && failed.iter().any(|m| m.contains("risk_control")),
        "{failed:?}"
    );
    assert!(
        fast.rows
            .iter()
            .filter(|r| r.error.is_none())
            .all(|r| r.total_trades.unwrap() > 0)
    );
}
