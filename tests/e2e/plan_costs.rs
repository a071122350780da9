//! What a plan's month of task compute may cost at most: the budgets the
//! plans' compute limits are set against (docs/usage.md#what-a-plan-can-cost).
//!
//! An attempt is counted for at least `MIN_ATTEMPT_COMPUTE_MS`, so a counted
//! minute holds at most a minute of the worker's time and 60 tasks' fixed
//! costs (submit, queue, task-store writes, result read, the worker's time
//! outside the handler). The cost benchmark checks each measured task kind
//! against that bound.

use platform::metering::MIN_ATTEMPT_COMPUTE_MS;

/// A task's cost beyond its counted compute, at most (the cost benchmark
/// measures $0.000012-0.000021 per kind).
pub const FIXED_TASK_COST_USD: f64 = 0.000_03;

/// Each plan's monthly compute limit may cost this much at most.
pub const MONTHLY_COMPUTE_BUDGET_USD: &[(&str, f64)] = &[
    ("pro", 25.0),
    ("backtest", 12.5),
    ("analytics", 12.5),
    ("data", 2.5),
    ("premium-data-yearly", 2.5),
    ("light-data-yearly", 1.25),
    ("trial", 0.25),
    ("none", 0.0),
];

/// The most a counted minute of task compute can cost: a minute of a
/// worker of `worker_mb` at `gb_second` dollars, and 60 tasks' fixed costs.
pub fn counted_minute_at_most(worker_mb: u32, gb_second: f64) -> f64 {
    worker_mb as f64 / 1024.0 * 60.0 * gb_second
        + 60_000.0 / MIN_ATTEMPT_COMPUTE_MS as f64 * FIXED_TASK_COST_USD
}

/// The list price of a Lambda GB-second (arm64) in infra/prices.json.
pub fn lambda_gb_second_price() -> f64 {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../infra/prices.json");
    let prices: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    prices["lambda_arm64_per_gb_second"].as_f64().unwrap()
}
