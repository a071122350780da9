//! The cost of the body-shape check (`api::shape`) against the JSON parse
//! that follows it on every body: `cargo bench -p tests --bench shape`.
//!
//! Two large bodies a client really sends: a backtest with 4.4 MB of
//! uploaded bars in `csv_data` (one long string), and a batch of 20,000
//! strategies (many small values). Each is checked and parsed in
//! alternating rounds; medians are reported, and the check's time as a share
//! of the parse's.

use serde_json::{Value, json};
use std::time::Instant;

const ROUNDS: usize = 30;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let mut csv = String::from("Date,Open,High,Low,Close,Volume\n");
    let mut day = chrono::NaiveDate::from_ymd_opt(1990, 1, 2).unwrap();
    while csv.len() < 4_400_000 {
        csv.push_str(&format!(
            "{day},{:.4},{:.4},{:.4},{:.4},{}\n",
            100.0 + (csv.len() % 97) as f64 / 7.0,
            101.5,
            99.25,
            100.125,
            1_000_000 + csv.len()
        ));
        day = day.succ_opt().unwrap();
    }
    let upload = json!({"symbol": "MINE", "csv_data": csv, "risk_control": "//21",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"}, "rule": {"type_name": ">", "comparison_value": "100"}}},
        "exit": {"rule_type": "RiskControlOnly"}});
    let strategy = json!({"symbol": "SPX", "start_date": "2005-01-01", "risk_control": "-8//63",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossBelow", "comparison_value": "30"}}},
        "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossAbove", "comparison_value": "70"}}}});
    let batch = json!({"strategies": vec![strategy; 20_000]});
    println!("| body | bytes | shape check (median) | JSON parse (median) | check / parse |");
    println!("|---|---|---|---|---|");
    for (name, body) in [
        ("backtest with 4.4 MB csv_data", upload),
        ("batch of 20,000 strategies", batch),
    ] {
        let bytes = serde_json::to_vec(&body).unwrap();
        let (mut check, mut parse) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let t = Instant::now();
            api::shape::check(&bytes).unwrap();
            check.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            let v: Value = serde_json::from_slice(&bytes).unwrap();
            parse.push(t.elapsed().as_secs_f64() * 1e3);
            drop(v);
        }
        let (c, p) = (median(check), median(parse));
        println!(
            "| {name} | {} | {c:.2} ms | {p:.2} ms | {:.1} % |",
            bytes.len(),
            100.0 * c / p
        );
    }
}
