//! Pattern-match benchmarks: `cargo bench -p tests --bench cpm`.
//!
//! The sliding correlation on 1,000,000 points with a 60-bar template (one
//! core), one symbol's 20 years of daily closes, and a universe search over
//! every stock of a full-universe sample set (1,500 stocks, 20 years, the
//! service's own threads), each against stumpy's MASS on the same closes in
//! the same run, and on 1,000,000 points also against a numpy sliding
//! Pearson with running sums. Corr is checked against a two-pass
//! computation.

use engine::cpm::{Template, sliding_corr_into};
use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
use platform::worker::Progress;
use serde_json::{Value, json};
use services::analytics::cpm::{self, requests::CpmParams, requests::Mode};
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tests::bench::median;

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// A random walk around 4000 with 1% daily moves (xorshift, Box-Muller).
fn walk(n: usize) -> Vec<f64> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut uniform = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let mut level = 4000.0f64;
    (0..n)
        .map(|_| {
            let z = (-2.0 * uniform().ln()).sqrt() * (std::f64::consts::TAU * uniform()).cos();
            level *= (0.01 * z).exp();
            level
        })
        .collect()
}

/// The largest difference, in Corr points, from a two-pass Pearson per window.
fn max_error(template: &[f64], x: &[f64], corr: &[f64]) -> f64 {
    (0..corr.len())
        .map(|i| {
            let r = engine::stats::pearson(template, &x[i..i + template.len()]).unwrap();
            (100.0 * (corr[i] - r)).abs()
        })
        .fold(0.0, f64::max)
}

/// stumpy (and numpy) on the same series, written one after another to a file.
fn peers(series: &[&[f64]], template: &[f64], runs: usize) -> Option<Value> {
    tests::reference::find()?;
    let mut file = tempfile::NamedTempFile::new().unwrap();
    for s in series {
        for v in *s {
            file.write_all(&v.to_le_bytes()).unwrap();
        }
    }
    file.flush().unwrap();
    Some(tests::reference::run(
        "stumpy_mass.py",
        &json!({"bench": {"file": file.path(), "lengths": series.iter().map(|s| s.len()).collect::<Vec<_>>(),
                          "template": template, "runs": runs}}),
    ))
}

fn main() {
    println!("pattern-match benchmarks (median wall time)");
    let n = 1_000_000;
    let m = 60;
    let x = walk(n);
    let template = &x[n / 3..n / 3 + m];
    let t = Template::new(template).unwrap();
    let mut out = vec![0.0; n - m + 1];
    let ours = median(Duration::from_secs(3), || {
        sliding_corr_into(&t, &x, &mut out);
    });
    let err = max_error(template, &x, &out);
    println!(
        "  1,000,000 points, m = {m}: ours {} on one core, Corr within {err:.1e} of a two-pass computation",
        ms(ours)
    );
    assert!(err <= 1e-9, "Corr drifted {err} from the two-pass values");
    match peers(&[&x], template, 5) {
        Some(p) => {
            let mass = p["mass_seconds"].as_f64().unwrap();
            let np = p["numpy_seconds"].as_f64().unwrap();
            println!(
                "    peers: stumpy.mass {:.1} ms ({:.1}x ours, its Corr within {:.1e}), numpy running sums + np.convolve {:.1} ms ({:.1}x ours, off by up to {:.1e}, {} windows NaN)",
                mass * 1e3,
                mass / ours.as_secs_f64(),
                p["mass_max_error"].as_f64().unwrap(),
                np * 1e3,
                np / ours.as_secs_f64(),
                p["numpy_max_error"].as_f64().unwrap(),
                p["numpy_nan_windows"],
            );
        }
        None => println!("    peers skipped: the reference venv is missing (tests/run creates it)"),
    }

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let t0 = Instant::now();
        let config = sample::SampleConfig {
            stocks: 1500,
            intraday_days: 5,
            ..Default::default()
        };
        sample::generate(&config, &LocalDir::new(dir.path())).unwrap();
        println!(
            "  (full-universe sample set of {} stocks generated in {:.1} s)",
            config.stocks,
            t0.elapsed().as_secs_f64()
        );
        let md: Arc<dyn MarketData> =
            Arc::new(ParquetMarketData::new(Arc::new(LocalDir::new(dir.path()))));
        let latest = md.latest_date().await.unwrap();
        let from = latest.checked_sub_months(chrono::Months::new(240)).unwrap();

        // One symbol, 20 years of daily closes, a 60-bar template.
        let spx = md.daily("SPX").await.unwrap();
        let first = spx.time.partition_point(|t| t.date() < from);
        let closes = &spx.close[first..];
        let template = closes[closes.len() - 300..closes.len() - 240].to_vec();
        let t = Template::new(&template).unwrap();
        let mut out = vec![0.0; closes.len() - m + 1];
        let ours = median(Duration::from_secs(2), || {
            sliding_corr_into(&t, closes, &mut out);
        });
        println!(
            "  SPX, 20 years ({} daily closes), m = {m}: ours {}",
            closes.len(),
            ms(ours)
        );
        if let Some(p) = peers(&[closes], &template, 20) {
            let mass = p["mass_seconds"].as_f64().unwrap();
            println!(
                "    peer: stumpy.mass {:.2} ms ({:.1}x ours)",
                mass * 1e3,
                mass / ours.as_secs_f64()
            );
        }

        // Every stock: the service's universe search, as a task runs it.
        let stock = md
            .symbols()
            .await
            .unwrap()
            .iter()
            .find(|s| s.asset_class == "stock")
            .unwrap()
            .symbol
            .clone();
        let params: CpmParams = serde_json::from_value(json!({
            "symbol": stock, "corr_per": 80, "time_in_market": 21,
            "start_date": "2026-05-01", "end_date": "2026-07-28", "universe": "sp1500",
        }))
        .unwrap();
        let run = || async {
            let p = cpm::prepare(md.as_ref(), &params, Mode::Scan).await.unwrap();
            cpm::run(md.as_ref(), p, &Progress::default()).await.unwrap()
        };
        let t0 = Instant::now();
        let answer = run().await;
        let cold = t0.elapsed();
        let mut times = Vec::new();
        for _ in 0..7 {
            let t0 = Instant::now();
            std::hint::black_box(run().await);
            times.push(t0.elapsed());
        }
        times.sort();
        let warm = times[times.len() / 2];
        let stocks: Vec<Arc<engine::Bars>> = {
            let mut v = Vec::new();
            for s in md.symbols().await.unwrap().iter() {
                if s.universes.iter().any(|u| u == "sp1500") {
                    v.push(md.daily(&s.symbol).await.unwrap());
                }
            }
            v
        };
        let bars: usize = stocks
            .iter()
            .map(|b| b.len() - b.time.partition_point(|t| t.date() < from))
            .sum();
        let answer = serde_json::to_value(answer).unwrap();
        println!(
            "  universe search, {} stocks x 20 years ({bars} closes), {}-bar template, corr_per 80: ours {} warm, {} with the Parquet reads ({} matches kept)",
            stocks.len(),
            params_bars(&answer),
            ms(warm),
            ms(cold),
            answer["data"]["count"]
        );
        let slices: Vec<&[f64]> = stocks
            .iter()
            .map(|b| &b.close[b.time.partition_point(|t| t.date() < from)..])
            .collect();
        let (a, z) = {
            let s = md.daily(&stock).await.unwrap();
            let d = |y: &str| chrono::NaiveDate::parse_from_str(y, "%Y-%m-%d").unwrap();
            (
                s.time.partition_point(|t| t.date() < d("2026-05-01")),
                s.time.partition_point(|t| t.date() <= d("2026-07-28")),
            )
        };
        let template = md.daily(&stock).await.unwrap().close[a..z].to_vec();
        if let Some(p) = peers(&slices, &template, 3) {
            let mass = p["mass_seconds"].as_f64().unwrap();
            println!(
                "    peer: stumpy.mass over the same closes {:.0} ms ({:.1}x ours)",
                mass * 1e3,
                mass / warm.as_secs_f64()
            );
        }
    });
}

fn params_bars(answer: &Value) -> String {
    answer["data"]["patterns"][0]["BarsNum"]
        .as_u64()
        .map_or("?".into(), |b| b.to_string())
}
