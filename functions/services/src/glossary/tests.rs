use super::*;
use std::collections::BTreeSet;

#[test]
fn names_are_one_each_and_labels_title_case() {
    for g in GROUPS {
        let names: BTreeSet<&str> = g.entries.iter().map(|e| e.name).collect();
        assert_eq!(names.len(), g.entries.len(), "{}: a name twice", g.title);
        for e in g.entries {
            assert!(!e.definition.is_empty() && e.definition.ends_with('.'));
            assert!(
                e.label.starts_with(|c: char| c.is_ascii_uppercase()),
                "{}",
                e.label
            );
            let kinds: BTreeSet<&str> = e.fields.iter().map(|f| f.kind.as_str()).collect();
            assert_eq!(kinds.len(), e.fields.len(), "{}: a kind twice", e.name);
        }
    }
    assert_eq!(label("total_return"), "Total Return");
    assert_eq!(label("cagr"), "CAGR");
    assert_eq!(label("max_drawdown"), "Max Drawdown");
    assert_eq!(label("information_ratio"), "Information Ratio");
    assert_eq!(label("sharpe"), "Sharpe Ratio");
    assert_eq!(label("not_a_metric"), "not_a_metric");
}

#[test]
fn a_page_reads_each_metric_where_its_kind_answers_it() {
    let s = shown(
        Kind::Portfolio,
        &["total_return", "alpha", "nothing", "skipped_trades"],
    );
    assert_eq!(
        s,
        [
            Shown {
                name: "total_return",
                label: "Total Return",
                unit: "fraction",
                field: "total_return",
                scale: 1.0
            },
            Shown {
                name: "alpha",
                label: "Alpha",
                unit: "fraction",
                field: "relative.alpha",
                scale: 1.0
            },
        ]
    );
    let b = shown(Kind::Backtest, &["total_return", "drawdown_period"]);
    assert_eq!((b[0].field, b[0].scale), ("Total Return (%)", 100.0));
    assert_eq!((b[1].field, b[1].unit), ("DrawDown Period", "sessions"));
}

/// Metrics are float64; a fraction read from the spec's JSON is
/// percent there, from own JSON as it is.
#[test]
fn units_and_scales_agree() {
    for e in METRICS {
        assert_eq!(e.dtype, Dtype::Float64, "{}", e.name);
        for f in e.fields {
            let spec = matches!(
                f.kind,
                Kind::Backtest | Kind::BatchRow | Kind::PortfolioGridRow | Kind::ScannerBacktest
            );
            let want = match (e.unit, spec) {
                (Unit::Fraction, true) if f.field == "MAX RISK" => -100.0,
                (Unit::Fraction, true) => 100.0,
                _ => 1.0,
            };
            assert_eq!(f.scale, want, "{} in {}", e.name, f.kind.as_str());
        }
    }
    for e in TRADES.iter().chain(ORDERS).chain(EQUITY) {
        for f in e.fields {
            assert_eq!(f.scale, 1.0, "{} in {}", e.name, f.kind.as_str());
        }
    }
}

/// The spec's fields are named as the answers serialize them: every
/// field the glossary reads from a batch row, a 2.11 result or a
/// scanner backtest is a key of that answer.
#[test]
fn legacy_names_are_the_answers_own() {
    use crate::analytics::scanner::backtest::answers::{
        ScannerBacktestData, TradeArrays, TradeStats,
    };
    let row: crate::backtest::batch::BatchRow =
        serde_json::from_value(serde_json::json!({"index": 0, "params": {}, "error": null}))
            .unwrap();
    let row = serde_json::to_value(row).unwrap();
    let backtest = serde_json::to_value(crate::backtest::answers::BacktestResult {
        symbol: "SPX".into(),
        frequency: "daily",
        total_trades: 0,
        total_positive: 0,
        total_negative: 0,
        win_rate: 0.0,
        average_win: 0.0,
        average_loss: 0.0,
        each_return: Vec::new(),
        total_return: 0.0,
        buy_hold_gain: 0.0,
        cagr: 0.0,
        sharpe: 0.0,
        sortino: 0.0,
        annual_volatility: 0.0,
        calmar: 0.0,
        max_drawdown: 0.0,
        drawdown_period: 0,
        time_in_market: 0.0,
        entry_date: Vec::new(),
        exit_date: Vec::new(),
        last_entry_date: None,
        last_exit_date: None,
        bt_end_date: String::new(),
        exit_reason: Vec::new(),
        open_trade: false,
        initial_capital: 0.0,
        final_capital: 0.0,
        benchmark: "SPX".into(),
        benchmark_return: 0.0,
        defaults_applied: Default::default(),
        warnings: Vec::new(),
        entry_time: None,
        exit_time: None,
    })
    .unwrap();
    let scanner = serde_json::to_value(ScannerBacktestData {
        stats: TradeStats::new(0.0, &engine::stats::TradeReturns::default()),
        max_risk: 0.0,
        time_in_market: 0.0,
        std_dev: 0.0,
        z_score: 0.0,
        buy_and_hold: 0.0,
        average_position: 0.0,
        trade_list: "[]".into(),
        result: TradeArrays::default(),
        dates: Vec::new(),
        equity: Vec::new(),
        cash: Vec::new(),
        skipped_trades: 0,
    })
    .unwrap();
    let mut checked = 0;
    for e in METRICS {
        for f in e.fields {
            let answer = match f.kind {
                Kind::BatchRow | Kind::PortfolioGridRow => &row,
                Kind::Backtest => &backtest,
                Kind::ScannerBacktest => &scanner,
                _ => continue,
            };
            assert!(
                answer.get(f.field).is_some(),
                "{} of a {}",
                f.field,
                f.kind.as_str()
            );
            checked += 1;
        }
    }
    for e in TRADES {
        if let Some(f) = e.field(Kind::ScannerBacktest) {
            let key = f.field.strip_prefix("result.").unwrap();
            assert!(
                scanner["result"].get(key).is_some(),
                "{key} of a scanner backtest"
            );
            checked += 1;
        }
    }
    assert!(checked > 50, "{checked}");
}

#[test]
fn the_published_page_is_the_generated_one() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/results.md");
    let generated = markdown();
    if std::env::var_os("MARKETLAB_UPDATE_DOCS").is_some() {
        std::fs::write(path, &generated).expect("docs/results.md written");
        return;
    }
    let published = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        published == generated,
        "docs/results.md is out of date: run MARKETLAB_UPDATE_DOCS=1 cargo test -p services glossary"
    );
}
