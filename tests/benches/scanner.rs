//! Scanner benchmark: `cargo bench -p tests --bench scanner`.
//!
//! The engine's share of the nightly job over a full-universe sample set
//! (1,500 stocks from 1990): all 37 signals on every stock's whole history,
//! and the statistics of each signal that fired on the latest day, with the
//! bars and Optix readings already in memory.

use engine::scanner::{Inputs, SIGNALS, stats};
use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let config = sample::SampleConfig {
            stocks: 1500,
            intraday_days: 5,
            ..Default::default()
        };
        sample::generate(&config, &LocalDir::new(dir.path())).unwrap();
        let md = ParquetMarketData::new(Arc::new(LocalDir::new(dir.path())));
        let mut stocks = Vec::new();
        for s in md.symbols().await.unwrap().iter().filter(|s| s.asset_class == "stock") {
            let bars = md.daily(&s.symbol).await.unwrap();
            let optix = md.indicator_series(&format!("{}_OPTIX", s.symbol)).await.ok();
            // The reading on each bar's date (NaN where there is none).
            let aligned: Option<Vec<f64>> = optix.map(|o| {
                bars.time
                    .iter()
                    .map(|t| match o.time.binary_search(t) {
                        Ok(k) => o.close[k],
                        Err(_) => f64::NAN,
                    })
                    .collect()
            });
            stocks.push((bars, aligned));
        }
        let sessions: usize = stocks.iter().map(|(b, _)| b.len()).sum();
        let t0 = Instant::now();
        let (mut fired_today, mut trades) = (0usize, 0usize);
        let results: Vec<(usize, usize)> = std::thread::scope(|s| {
            let per = stocks.len().div_ceil(2);
            let handles: Vec<_> = stocks
                .chunks(per)
                .map(|part| {
                    s.spawn(move || {
                        let (mut fired, mut traded) = (0, 0);
                        for (b, optix) in part {
                            let inputs = Inputs {
                                open: &b.open,
                                high: &b.high,
                                low: &b.low,
                                close: &b.close,
                                optix: optix.as_deref(),
                            };
                            let last = b.len() - 1;
                            for signal in &SIGNALS {
                                let f = (signal.fire)(&inputs);
                                if f[last].is_some() {
                                    fired += 1;
                                    let h = stats::history(&b.close, &f, signal.horizon().hold(), last);
                                    traded += h.len();
                                    std::hint::black_box(stats::figures(&h));
                                }
                            }
                        }
                        (fired, traded)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (f, t) in results {
            fired_today += f;
            trades += t;
        }
        println!(
            "scanner engine pass: {} stocks ({sessions} sessions), 37 signals each, statistics of the {fired_today} firings of the latest day ({trades} historical trades): {:.2} s on 2 threads",
            stocks.len(),
            t0.elapsed().as_secs_f64()
        );
    });
}
