//! Analytics benchmarks: `cargo bench -p tests --bench analytics`.
//!
//! The all-in-one seasonality over 20 years of daily bars and a 10-symbol
//! correlation and beta over 20 years: engine medians, the pandas reference
//! implementations of the same computations timed in the same run (when the
//! reference venv exists), and the endpoints end to end over HTTP.

use chrono::{Datelike, NaiveDate};
use engine::correlation::{align, matrix, rolling_beta, rolling_corr};
use engine::event_days;
use engine::seasonality::{DayCategory, Seasonal};
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use std::hint::black_box;
use std::time::{Duration, Instant};
use tests::bench::median;
use tests::server::{Options, TestServer};

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// Median and p99 of `n` calls of `send`, which answers with the body length.
async fn latency<F, Fut>(n: usize, mut send: F) -> (Duration, Duration)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = usize>,
{
    let warm = send().await;
    let mut times: Vec<Duration> = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        assert_eq!(send().await, warm);
        times.push(t.elapsed());
    }
    times.sort();
    (times[n / 2], times[n * 99 / 100])
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let db = tempfile::tempdir().unwrap();
        let s = TestServer::start(Options::new(db.path().join("db.sqlite"))).await;
        let md = s.state.market.clone();
        let latest = md.latest_date().await.unwrap();
        let fomc = md.fomc_dates().await.unwrap();
        let years = latest.year() - 20..=latest.year();
        let spx = md.daily("SPX").await.unwrap();
        let dates: Vec<NaiveDate> = spx.time.iter().map(|t| t.date()).collect();
        println!("analytics benchmarks (median wall time; sample data, latest date {latest})");

        // All-in-one seasonality with the endpoint's defaults, every feature.
        let all_in_one = || {
            let s = Seasonal::new(dates.clone(), spx.close.clone());
            let (name, _) = event_days::next_event(latest, &fomc);
            let holiday = event_days::dates(event_days::parse(name).unwrap(), years.clone(), &fomc);
            let specific: Vec<NaiveDate> = years
                .clone()
                .filter_map(|y| NaiveDate::from_ymd_opt(y, latest.month(), latest.day()))
                .collect();
            let entry = s.trading_day_of(latest).unwrap();
            black_box((
                s.by_weekday(&years),
                s.by_month(&years),
                s.around(&holiday, 5),
                s.single_month(&years, latest.month(), DayCategory::Calendar),
                s.around(&specific, 5),
                s.by_day_of_month(&years),
                s.by_day_of_year(&years),
                s.one_dollar_curve(&years, entry, 63),
            ));
        };
        let ours = median(Duration::from_secs(2), all_in_one);
        println!(
            "  all-in-one seasonality, SPX {}-{} ({} bars loaded, 8 features): engine {}",
            years.start(),
            years.end(),
            dates.len(),
            ms(ours)
        );
        let peer_python = tests::reference::find().is_some();
        if peer_python {
            let (holiday, _) = event_days::next_event(latest, &fomc);
            let r = tests::reference::run(
                "pandas_seasonality.py",
                &json!({
                    "runs": 7,
                    "dates": dates.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
                    "close": spx.close, "fomc": fomc.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
                    "latest": latest.to_string(), "start_year": null, "end_year": null,
                    "holidays": [holiday], "shift": null,
                    "specific": [{"month": null, "day": null, "shift": null}],
                    "single": [{"month": null, "category": null}],
                    "curves": [{"entry": null, "holding": null, "exit": null}],
                }),
            );
            let peer = Duration::from_secs_f64(r["median_seconds"].as_f64().unwrap());
            println!(
                "    peer, the pandas reference implementation of the same views: {} -> engine {:.0}x faster",
                ms(peer),
                peer.as_secs_f64() / ours.as_secs_f64()
            );
        } else {
            println!("    peer skipped: the reference venv is missing (tests/run creates it)");
        }

        // 10 symbols over 20 years: alignment, returns, matrix, rolling correlation and beta.
        let symbols: Vec<String> = ["SPX", "NDX", "RUT", "IVV", "TLT", "GLD", "HYG", "EEM", "XLK", "USO"]
            .map(String::from)
            .to_vec();
        let start = NaiveDate::from_ymd_opt(latest.year() - 20, latest.month(), latest.day()).unwrap();
        let mut series = Vec::new();
        for sym in &symbols {
            let b = md.daily(sym).await.unwrap().slice_dates(Some(start), Some(latest));
            series.push((b.time.iter().map(|t| t.date()).collect::<Vec<_>>(), b.close.clone()));
        }
        let correlate = || {
            let views: Vec<(&[NaiveDate], &[f64])> =
                series.iter().map(|(d, c)| (d.as_slice(), c.as_slice())).collect();
            let (_, closes) = align(&views);
            let rets: Vec<Vec<f64>> = closes.iter().map(|c| engine::stats::returns(c)).collect();
            let cols: Vec<&[f64]> = rets.iter().map(Vec::as_slice).collect();
            let m = matrix(&cols);
            let roll: Vec<Vec<f64>> = cols[1..].iter().map(|c| rolling_corr(c, cols[0], 21)).collect();
            let beta: Vec<Vec<f64>> = cols[1..].iter().map(|c| rolling_beta(c, cols[0], 21)).collect();
            black_box((m, roll, beta));
        };
        let ours = median(Duration::from_secs(2), correlate);
        println!(
            "  10-symbol correlation matrix + rolling correlation and beta (window 21), {start} to {latest} ({} sessions): engine {}",
            series[0].0.len(),
            ms(ours)
        );
        if peer_python {
            let r = tests::reference::run(
                "pandas_correlation.py",
                &json!({
                    "runs": 7,
                    "series": symbols.iter().zip(&series).map(|(s, (d, c))| json!([s, d.iter().map(|d| d.to_string()).collect::<Vec<_>>(), c])).collect::<Vec<_>>(),
                    "start": start.to_string(), "end": latest.to_string(), "window": 21, "pattern": null,
                }),
            );
            let peer = Duration::from_secs_f64(r["median_seconds"].as_f64().unwrap());
            println!(
                "    peer, pandas (inner join, pct_change, corr, rolling corr/cov/var) on the same closes: {} -> engine {:.0}x faster",
                ms(peer),
                peer.as_secs_f64() / ours.as_secs_f64()
            );
        }

        // End to end over HTTP on 127.0.0.1.
        let client = reqwest::Client::new();
        let url = s.url("/seasonality?ticker=SPX");
        let (p50, p99) = latency(200, || async {
            let r = client.get(&url).basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD)).send().await.unwrap();
            r.bytes().await.unwrap().len()
        })
        .await;
        println!("  GET /seasonality?ticker=SPX (all features) over HTTP: p50 {}, p99 {} (200 requests)", ms(p50), ms(p99));
        let body: Value = json!({
            "benchmark": "SPX", "stock_comparison": symbols[1..],
            "start_date": start.to_string(), "end_date": latest.to_string(),
        });
        let url = s.url("/symbol_corr");
        let (p50, p99) = latency(200, || async {
            let r = client.post(&url).basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD)).json(&body).send().await.unwrap();
            r.bytes().await.unwrap().len()
        })
        .await;
        println!("  POST /symbol_corr (SPX + 9 symbols, 20 years) over HTTP: p50 {}, p99 {} (200 requests)", ms(p50), ms(p99));
        s.stop().await;
    });
}
