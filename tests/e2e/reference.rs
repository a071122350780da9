//! Running the Python reference scripts of tests/reference.

use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The reference interpreter, if there is one: `MARKETLAB_PYTHON`, else the
/// venv tests/run makes.
pub fn find() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("MARKETLAB_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let home = std::env::var("HOME").unwrap_or_default();
    Some(PathBuf::from(home).join(".cache/marketlab/venv/bin/python")).filter(|p| p.exists())
}

/// The reference interpreter; a missing venv fails the test with what to run.
pub fn python() -> PathBuf {
    find().expect(
        "the reference venv is missing: run tests/run, which installs tests/reference/requirements.txt",
    )
}

/// Runs `tests/reference/<script>` with `input` as JSON on stdin; returns its JSON output.
pub fn run(script: &str, input: &Value) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("reference")
        .join(script);
    let mut child = Command::new(python())
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("reference python starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{script} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("reference output is JSON")
}

/// Bars written by a reference script as `{dates, open, high, low, close, volume}`.
pub fn bars_from(v: &Value) -> engine::Bars {
    let f = |k: &str| -> Vec<f64> {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let (o, h, l, c, vol) = (f("open"), f("high"), f("low"), f("close"), f("volume"));
    let mut b = engine::Bars::default();
    for (i, d) in v["dates"].as_array().unwrap().iter().enumerate() {
        let d: chrono::NaiveDate = d.as_str().unwrap().parse().unwrap();
        b.push(
            d.and_hms_opt(0, 0, 0).unwrap(),
            o[i],
            h[i],
            l[i],
            c[i],
            vol[i],
        );
    }
    b
}

/// One rule of an SMA crossover as the service compiles it: SMA(fast)
/// against the close's SMA(slow), crossing with `op`.
pub fn crossover_rule(fast: usize, slow: usize, op: engine::rules::Op) -> engine::strategy::Block {
    use engine::strategy::{Block, BlockKind, Comparison, Condition, Source, Technical};
    Block {
        kind: BlockKind::Single,
        conditions: vec![Condition {
            source: Source::Technical(Technical::Sma(fast)),
            transform: None,
            op,
            comparison: Comparison::CloseAverage {
                kind: engine::rules::MaKind::Simple,
                period: slow,
                offset_pct: 0.0,
            },
        }],
        delay_bars: 0,
    }
}

/// Long, filled at the signal bar's close, no costs, no risk control, daily:
/// how the peers (backtesting.py, vectorbt) are run for comparison.
pub fn close_fills(start: usize) -> engine::backtest::Settings {
    use engine::backtest::{Direction, RiskControl, Settings, TradePrice};
    Settings {
        direction: Direction::Long,
        trade_price: TradePrice::CurrentClose,
        capital_alloc: 1.0,
        commission: 0.0,
        slippage: 0.0,
        risk: RiskControl::default(),
        bars_per_year: 252.0,
        start,
    }
}
