//! Timing helpers the benchmark binaries share.

use std::time::{Duration, Instant};

/// Median wall time of `f` over enough runs to fill about `budget`.
pub fn median<F: FnMut()>(budget: Duration, mut f: F) -> Duration {
    f();
    let probe = Instant::now();
    f();
    let one = probe.elapsed().max(Duration::from_nanos(50));
    let runs = ((budget.as_secs_f64() / one.as_secs_f64()) as usize).clamp(5, 20_000);
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}
