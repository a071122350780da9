//! One session of 1,500 symbols imported: `cargo bench -p tests --bench
//! ingest` (`-- --write-docs` to put the figures into
//! docs/data-updates.md).
//!
//! A market directory of 1,500 symbols with 20 years of daily bars each;
//! the next session of all of them as one Polygon grouped-daily answer,
//! imported by `marketlab import json` (validation, merge, catalog and
//! generation), against the same append done by a pandas script with
//! pyarrow (read, check the overlap, append, write; nothing else), each on a
//! fresh copy of the directory, median of three.

use chrono::NaiveDate;
use clap::Parser;
use platform::marketdata::{LocalDir, ParquetMarketData, SymbolInfo};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SYMBOLS: usize = 1_500;
const TARGET: Duration = Duration::from_secs(10);

fn copy_dir(from: &Path, to: &Path) {
    for entry in walk(from) {
        let rel = entry.strip_prefix(from).unwrap();
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&entry, &dest).unwrap();
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let write = std::env::args().any(|a| a == "--write-docs");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let base = tempfile::tempdir().unwrap();
        let source = base.path().join("source");
        let market = ParquetMarketData::new(Arc::new(LocalDir::new(&source)));
        let last = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        let sessions = engine::calendar::sessions(NaiveDate::from_ymd_opt(2006, 11, 20).unwrap(), last);
        let next = NaiveDate::from_ymd_opt(2026, 11, 23).unwrap();
        let t = next.and_hms_opt(21, 0, 0).unwrap().and_utc().timestamp_millis();
        let mut infos = Vec::new();
        let mut results = Vec::new();
        for k in 0..SYMBOLS {
            let symbol = format!("S{k:04}");
            let mut bars = engine::Bars::with_capacity(sessions.len());
            let mut price = 20.0 + k as f64 % 80.0;
            for (i, d) in sessions.iter().enumerate() {
                let step = ((i * 7919 + k * 104729) % 1000) as f64 / 1000.0 - 0.5;
                price *= 1.0 + step * 0.02;
                bars.push(d.and_hms_opt(0, 0, 0).unwrap(), price, price * 1.01, price * 0.99, price, 1e6);
            }
            market.write_daily(&symbol, &bars).await.unwrap();
            results.push(json!({"T": symbol, "o": price, "h": price * 1.02, "l": price * 0.98,
                                "c": price * 1.01, "v": 1.2e6, "t": t, "n": 100}));
            infos.push(SymbolInfo {
                symbol,
                name: format!("Stock {k}"),
                asset_class: "stock".into(),
                sector: None,
                industry: None,
                exchange: None,
                universes: vec![],
                first_date: sessions[0],
                last_date: last,
                has_intraday: false,
            });
        }
        market.upsert_symbols(infos).await.unwrap();
        let file = base.path().join("2026-11-23.json");
        std::fs::write(
            &file,
            serde_json::to_vec(&json!({"status": "OK", "adjusted": false, "resultsCount": SYMBOLS, "results": results}))
                .unwrap(),
        )
        .unwrap();
        println!("ingest: {SYMBOLS} symbols of {} sessions each, one new session", sessions.len());

        let mut ours = Vec::new();
        let mut theirs = Vec::new();
        for run in 0..3 {
            let data = base.path().join(format!("ours-{run}"));
            copy_dir(&source, &data.join("market"));
            let started = Instant::now();
            marketlab::cli::run(marketlab::cli::Cli::parse_from([
                "marketlab",
                "--data-dir",
                data.to_str().unwrap(),
                "import",
                "json",
                file.to_str().unwrap(),
            ]))
            .await
            .unwrap();
            ours.push(started.elapsed());
            let check = ParquetMarketData::new(Arc::new(LocalDir::new(data.join("market"))));
            let b = check.daily_stored("S0042").await.unwrap();
            assert_eq!(b.date(b.len() - 1), next);

            let peer = base.path().join(format!("pandas-{run}"));
            copy_dir(&source, &peer);
            let answer = tests::reference::run(
                "time_ingest_pandas.py",
                &json!({"dir": peer, "file": file}),
            );
            theirs.push(Duration::from_secs_f64(answer["seconds"].as_f64().unwrap()));
        }
        let (ours, theirs) = (median(ours), median(theirs));
        let lines = vec![
            format!(
                "one session of {SYMBOLS} symbols (20 years of bars each) imported by `marketlab import json` in **{:.2} s** (target under {} s: {:.1}x under), validation report, catalog and generation included",
                ours.as_secs_f64(),
                TARGET.as_secs(),
                TARGET.as_secs_f64() / ours.as_secs_f64()
            ),
            format!(
                "the same append by a pandas script with pyarrow (read, check, append, write; no rules, no catalog): {:.2} s, **{:.1}x** the import's time",
                theirs.as_secs_f64(),
                theirs.as_secs_f64() / ours.as_secs_f64()
            ),
        ];
        for l in &lines {
            println!("  {l}");
        }
        if write {
            tests::bench::write_docs_block("data-updates.md", "ingest-speed", &lines);
        }
    });
}
