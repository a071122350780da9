//! What the overfitting statistics add to a finished batch:
//! `cargo bench -p tests --bench overfitting [-- --write-docs]`.
//!
//! 10,000 strategies x 5,040 daily returns (20 years), half of each
//! strategy's bars flat (return 0) as a crossover grid's are:
//! - the chunk side: each chunk's returns gathered and kept in the return
//!   store (40 chunks of 250, as the workers write them; a worker does one);
//! - the read side: `statistics::compute` over that store (two passes over
//!   the chunk objects, moments and block sums, the DSR and CSCV with
//!   S = 16: 12,870 splits x 10,000 strategies), on 2 cores;
//! - the engine's CSCV alone on the block sums.
//!
//! The target: under 1 s in all.

use engine::overfitting::{BlockSums, Moments, block_layout, cscv, deflated};
use platform::marketdata::LocalDir;
use platform::returns::ReturnStore;
use services::backtest::batch::statistics::{self, StatisticsParams, chunk_returns};
use std::sync::Arc;
use std::time::{Duration, Instant};

const STRATEGIES: usize = 10_000;
const RETURNS: usize = 5_040;
const CHUNK: usize = services::backtest::batch::CHUNK;

/// splitmix64 noise: returns of 1% a day while in the market, in and out
/// in stretches of about 20 bars, half the time.
fn returns(k: usize) -> Vec<f64> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(k as u64 + 1);
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut held = false;
    (0..RETURNS)
        .map(|_| {
            if next() < 0.05 {
                held = !held;
            }
            if held { (next() - 0.5) * 0.035 } else { 0.0 }
        })
        .collect()
}

fn main() {
    let write_docs = std::env::args().any(|a| a == "--write-docs");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let times: Arc<Vec<i64>> = Arc::new(
        (0..RETURNS as i64)
            .map(|d| 1_104_537_600 + d * 86_400)
            .collect(),
    );
    let series: Vec<Vec<f64>> = (0..STRATEGIES).map(returns).collect();
    let dir = tempfile::tempdir().unwrap();
    let store = ReturnStore::new(Arc::new(LocalDir::new(dir.path())));

    // Chunk side: what each worker adds to its chunk (the series as its
    // run hands them over, gathered and reduced, then encoded and written:
    // the reduction alone when the batch's strategies share their bars, as
    // a grid's do, or with the raw returns when they may not).
    let (mut gathering, mut keeping, mut keeping_raw) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    rt.block_on(async {
        for first in (0..STRATEGIES).step_by(CHUNK) {
            let part = (first..STRATEGIES.min(first + CHUNK))
                .map(|k| (k as u32, times.clone(), series[k].clone()))
                .collect();
            let t = Instant::now();
            let r = chunk_returns(part, 252.0, 16);
            gathering += t.elapsed();
            let t = Instant::now();
            store.put("raw", first, r.clone()).await.unwrap();
            keeping_raw += t.elapsed();
            let t = Instant::now();
            store.put("bench", first, r.reduction_only()).await.unwrap();
            keeping += t.elapsed();
        }
    });
    let chunks = STRATEGIES.div_ceil(CHUNK) as u32;
    let bytes = |batch: &str| -> u64 {
        std::fs::read_dir(dir.path().join("batch-results").join(batch))
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum()
    };
    let (kept, kept_raw) = (bytes("bench"), bytes("raw"));
    let (gathering, keeping, keeping_raw) =
        (gathering / chunks, keeping / chunks, keeping_raw / chunks);
    let per_chunk = gathering + keeping;

    // Read side: the first read of the finished batch computes them.
    let params = StatisticsParams::default();
    let mut runs: Vec<Duration> = (0..5)
        .map(|_| {
            let t = Instant::now();
            let s = rt
                .block_on(statistics::compute(
                    &store,
                    "bench",
                    services::backtest::batch::Layout {
                        total: STRATEGIES,
                        chunk: CHUNK,
                    },
                    &params,
                ))
                .unwrap();
            assert_eq!(s.overfitting.as_ref().unwrap().splits, 12_870);
            t.elapsed()
        })
        .collect();
    runs.sort();
    let compute = runs[runs.len() / 2];

    // The engine alone on the same sample.
    let (skip, len) = block_layout(RETURNS, 16);
    let mut sums = BlockSums::new(STRATEGIES, 16, len);
    let mut moments = Vec::with_capacity(STRATEGIES);
    for (k, s) in series.iter().enumerate() {
        sums.set(k, &s[skip..]);
        moments.push(Moments::of(s));
    }
    let mut engine_runs: Vec<(Duration, Duration)> = (0..5)
        .map(|_| {
            let t = Instant::now();
            let p = cscv(&sums, 2).unwrap();
            let one = t.elapsed();
            let t = Instant::now();
            let d = deflated(&moments, None).unwrap();
            assert!(p.pbo >= 0.0 && d.dsr.is_some());
            (one, t.elapsed())
        })
        .collect();
    engine_runs.sort();
    let (engine_cscv, engine_dsr) = engine_runs[2];
    let two = cscv(&sums, 1).unwrap();
    let t = Instant::now();
    let _ = cscv(&sums, 1).unwrap();
    let engine_one_thread = t.elapsed();
    let _ = two;

    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
    let lines = vec![
        format!(
            "`cargo bench -p tests --bench overfitting` (release, 2 cores): 10,000 strategies x 5,040 daily returns (20 years, in the market half the time), S = 16 (12,870 splits); {:.1} MB kept as reductions, {} MB with the raw returns ({} MB dense)",
            kept as f64 / (1u64 << 20) as f64,
            kept_raw >> 20,
            (STRATEGIES * RETURNS * 8) >> 20
        ),
        format!(
            "each chunk (250 strategies) gathers and reduces its returns in {} and keeps the reduction in {}: {} of work on the chunk's worker (keeping the raw returns too, for strategies on different bars: {})",
            ms(gathering),
            ms(keeping),
            ms(per_chunk),
            ms(keeping_raw)
        ),
        format!(
            "the statistics from the kept reductions (heads, then 40 reductions, DSR, CSCV): **{}** median of 5",
            ms(compute)
        ),
        format!(
            "of which the engine's CSCV: {} on 2 threads ({} on 1), the DSR {}",
            ms(engine_cscv),
            ms(engine_one_thread),
            ms(engine_dsr)
        ),
    ];
    for l in &lines {
        println!("{l}");
    }
    if write_docs {
        tests::bench::write_docs_block("batches.md", "overfitting", &lines);
    }
}
