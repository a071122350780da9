//! Phase 9 of the soak: 200 MB files dropped in the market directory's
//! `incoming/` (the size limit raised to 1 GiB for them) while a tenant
//! reads prices: one streamed to its end (a new symbol's rows after 200 MB
//! of empty records), one refused past the rows a daily series can hold
//! (the same session repeated, the campaign's file). Reads keep their p99
//! under 100 ms and the server's memory rises by under 150 MiB.

use super::{Check, DEMO, Server, percentile};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SIZE: usize = 200_000_000;

/// A CSV of about [`SIZE`] bytes: the header, `filler` repeated, then `tail`.
fn write_csv(path: &Path, filler: &str, tail: &str) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    f.write_all(b"Date,Open,High,Low,Close,Volume\n").unwrap();
    let block = filler.repeat(64 * 1024 / filler.len());
    let mut written = 0;
    while written < SIZE {
        f.write_all(block.as_bytes()).unwrap();
        written += block.len();
    }
    f.write_all(tail.as_bytes()).unwrap();
    f.flush().unwrap();
}

pub(super) async fn big_files(bin: &Path, data: &Path, port: u16) -> Check {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(data.join("inbox.log"))
        .unwrap();
    let child = Command::new(bin)
        .args(["--data-dir", data.to_str().unwrap(), "serve", "--port"])
        .arg(port.to_string())
        .args([
            "--stocks",
            "12",
            "--no-scan",
            "--inbox-max-bytes",
            "1073741824",
        ])
        .env("RUST_LOG", "info")
        .stdout(log)
        .stderr(Stdio::null())
        .spawn()
        .expect("marketlab starts");
    let server = Server {
        child,
        base: format!("http://127.0.0.1:{port}"),
    };
    server.ready().await;
    let http = reqwest::Client::new();
    let read = || {
        let (http, url) = (
            http.clone(),
            format!("{}/ws/prices/SPX?start=2026-01-01", server.base),
        );
        async move {
            let t = Instant::now();
            let r = http
                .get(url)
                .basic_auth(DEMO.0, Some(DEMO.1))
                .send()
                .await
                .expect("the server answers");
            assert!(r.status().is_success(), "{}", r.status());
            r.bytes().await.unwrap();
            t.elapsed().as_secs_f64() * 1000.0
        }
    };
    // Warm: the series read, the reads' own p99 taken, the memory settled.
    let mut idle = Vec::new();
    for _ in 0..200 {
        idle.push(read().await);
    }
    idle.sort_by(f64::total_cmp);
    let before = super::uploads::settled(&server).await;
    let _ = std::fs::write(format!("/proc/{}/clear_refs", server.pid()), "5");
    // Written beside, then moved in whole.
    let market = data.join("market");
    let streamed = data.join("BIGFILE.csv");
    write_csv(
        &streamed,
        &format!("{},,,,,\n", " ".repeat(58)),
        "2024-01-08,10,11,9,10.5,100\n2024-01-09,10.5,11,10,10.8,100\n",
    );
    let repeated = data.join("SPX.csv");
    write_csv(&repeated, "2024-01-08,10,11,9,10.5,100\n", "");
    std::fs::create_dir_all(market.join("incoming")).unwrap();
    let started = Instant::now();
    std::fs::rename(&streamed, market.join("incoming/BIGFILE.csv")).unwrap();
    std::fs::rename(&repeated, market.join("incoming/SPX.csv")).unwrap();
    let reports = [
        market.join("ingested/BIGFILE.csv.report.json"),
        market.join("rejected/SPX.csv.report.json"),
    ];
    let mut took = Vec::new();
    // The reports are the event; the guard bounds a hang.
    while !reports.iter().all(|r| r.exists()) && started.elapsed() < Duration::from_secs(300) {
        took.push(read().await);
    }
    let imported = started.elapsed();
    let (peak, _) = server.memory();
    let done = reports.iter().all(|r| r.exists());
    let refusal = std::fs::read_to_string(&reports[1]).unwrap_or_default();
    let bars = http
        .get(format!("{}/ws/prices/BIGFILE", server.base))
        .basic_auth(DEMO.0, Some(DEMO.1))
        .send()
        .await
        .unwrap()
        .json::<serde_json::Value>()
        .await
        .unwrap_or_default()["bars"]
        .as_array()
        .map_or(0, Vec::len);
    server.stop();
    took.sort_by(f64::total_cmp);
    let p99 = percentile(&took, 0.99);
    let rise = peak - before;
    let ok = done
        && bars == 2
        && refusal.contains("more than 100000 rows")
        && took.len() >= 20
        && p99 < 100.0
        && rise < 150.0;
    Check {
        name: "200 MB inbox files streamed while prices are read",
        ok,
        detail: format!(
            "two {} MB files imported or refused in {:.1} s (the streamed one {bars} bars); {} price reads meanwhile (a year of SPX), p50 {:.1} ms, p99 {p99:.1} ms (under 100; idle p99 {:.1} ms); RSS {before:.0} MiB before, peak {peak:.0} MiB (+{rise:.0}, under 150)",
            SIZE / 1_000_000,
            imported.as_secs_f64(),
            took.len(),
            percentile(&took, 0.5),
            percentile(&idle, 0.99),
        ),
    }
}
