//! The paths users touch every day, end to end over HTTP against the peer
//! they would otherwise use, in one run:
//! `cargo bench -p tests --bench user_paths` (add `-- --write-docs` to put
//! the figures into docs/backtest.md and docs/analytics.md).
//!
//! - CSV mode: backtesting.py's SMA 10/20 on its GOOG bars, sent as
//!   `csv_data`, submit to SUCCESS against `Backtest.run`; the status read.
//! - Correlation: SPX and 9 symbols over 20 years, matrix + rolling
//!   correlation + beta: the engine's computation against pandas' on the
//!   same closes, and the HTTP answers (JSON, and Arrow read into pandas)
//!   against pandas computing the same frames from the Parquet files.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tests::server::{Options, TestServer};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn p(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// Lines of a figures block, put between `<!-- name -->` and `<!-- /name -->`.
struct Figures {
    name: &'static str,
    doc: &'static str,
    lines: Vec<String>,
}

impl Figures {
    fn line(&mut self, s: String) {
        println!("  {s}");
        self.lines.push(format!("- {s}"));
    }

    /// Replaces the block in the doc (which must hold both markers).
    fn write(&self) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(self.doc);
        let text = std::fs::read_to_string(&path).expect("doc readable");
        let (open, close) = (
            format!("<!-- {} -->", self.name),
            format!("<!-- /{} -->", self.name),
        );
        let (a, b) = (
            text.find(&open).expect("opening marker"),
            text.find(&close).expect("closing marker"),
        );
        let out = format!(
            "{}{open}\n{}\n{}",
            &text[..a],
            self.lines.join("\n"),
            &text[b..]
        );
        std::fs::write(&path, out).expect("doc written");
        println!("  (written to {})", self.doc);
    }
}

/// Submits `body` 220 times, long-polling each task to SUCCESS; the last 200
/// times to SUCCESS and of the submit alone, and the last task's status URL.
async fn run_tasks(
    client: &reqwest::Client,
    s: &TestServer,
    body: &[u8],
) -> (Vec<Duration>, Vec<Duration>, String) {
    let auth = |rb: reqwest::RequestBuilder| rb.basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD));
    let (mut total, mut submit) = (Vec::new(), Vec::new());
    let mut last = String::new();
    for round in 0..220 {
        let t0 = Instant::now();
        let resp = auth(client.post(s.url("/backtest/start_backtest")))
            .header("content-type", "application/json")
            .body(body.to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 202);
        let id = resp.json::<Value>().await.unwrap()["task_id"]
            .as_str()
            .unwrap()
            .to_string();
        let submitted = t0.elapsed();
        let path = s.url(&format!("/backtest/status/{id}"));
        // As the Python client waits: a long-poll, answered when the task ends.
        let waiting = format!("{path}?wait=20");
        loop {
            let t: Value = auth(client.get(&waiting))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            match t["status"].as_str() {
                Some("SUCCESS") => break,
                Some("FAILED") => panic!("{t}"),
                _ => {}
            }
        }
        if round >= 20 {
            total.push(t0.elapsed());
            submit.push(submitted);
        }
        last = path;
    }
    (total, submit, last)
}

async fn csv_mode(client: &reqwest::Client, s: &TestServer, figures: &mut Figures) {
    let Some(_) = tests::reference::find() else {
        println!("  peer skipped: the reference venv is missing (tests/run creates it)");
        return;
    };
    let r = tests::reference::run("time_backtesting.py", &json!({"runs": 15}));
    let peer = Duration::from_secs_f64(r["median_seconds"].as_f64().unwrap());
    let col = |k: &str| r[k].as_array().unwrap().clone();
    let (dates, o, h, l, c) = (
        col("dates"),
        col("open"),
        col("high"),
        col("low"),
        col("close"),
    );
    let rows: Vec<Value> = (0..dates.len())
        .map(|i| json!({"Date": dates[i], "Open": o[i], "High": h[i], "Low": l[i], "Close": c[i], "Volume": 0}))
        .collect();
    let body = json!({
        "symbol": "GOOG", "csv_mode": true, "csv_data": rows, "start_date": "2004-01-01", "risk_control": "//",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "SMA", "params": {"period": 10}}, "rule": {"comparison_type": "MA", "type_name": "CrossAbove", "period": 20}}},
        "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "SMA", "params": {"period": 10}}, "rule": {"comparison_type": "MA", "type_name": "CrossBelow", "period": 20}}}
    });
    let body = serde_json::to_vec(&body).unwrap();
    // Where a submit's own-data work goes, on the same body.
    let parse = tests::bench::median(Duration::from_millis(300), || {
        std::hint::black_box(services::backtest::csv::split_json(&body).unwrap());
    });
    let upload = services::backtest::csv::split_json(&body)
        .unwrap()
        .upload
        .unwrap()
        .unwrap();
    let encode = tests::bench::median(Duration::from_millis(300), || {
        std::hint::black_box(upload.to_parquet().unwrap());
    });
    let stored = upload.to_parquet().unwrap();
    let decode = tests::bench::median(Duration::from_millis(300), || {
        std::hint::black_box(platform::uploads::Upload::from_stored(stored.clone()).unwrap());
    });
    println!(
        "  (the upload: read from the JSON body {:.3} ms, stored form written {:.3} ms ({} KB), read back {:.3} ms)",
        ms(parse),
        ms(encode),
        stored.len() / 1000,
        ms(decode)
    );
    let auth = |rb: reqwest::RequestBuilder| rb.basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD));
    let (mut total, mut submit, last) = run_tasks(client, s, &body).await;
    // The same strategy on a stored symbol of as many bars.
    let spx = s.state.market.daily("SPX").await.unwrap();
    let mut stored: Value = serde_json::from_slice(&body).unwrap();
    let map = stored.as_object_mut().unwrap();
    for k in ["csv_mode", "csv_data"] {
        map.remove(k);
    }
    map.insert("symbol".into(), json!("SPX"));
    map.insert(
        "start_date".into(),
        json!(spx.date(spx.len() - dates.len()).to_string()),
    );
    let (mut on_stored, _, _) = run_tasks(client, s, &serde_json::to_vec(&stored).unwrap()).await;
    on_stored.sort();
    total.sort();
    submit.sort();
    let mut reads = Vec::new();
    let mut size = 0;
    for _ in 0..500 {
        let t0 = Instant::now();
        let b = auth(client.get(&last))
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        reads.push(t0.elapsed());
        size = b.len();
    }
    reads.sort();
    let p50 = p(&total, 0.5);
    figures.line(format!(
        "CSV mode, SMA 10/20 on backtesting.py's {} GOOG bars sent as `csv_data` ({} KB body): submit to SUCCESS p50 {:.2} ms (p99 {:.2} ms; the submit alone p50 {:.2} ms) vs backtesting.py `Backtest.run` {:.1} ms: **{:.1}x faster**",
        dates.len(),
        body.len() / 1000,
        ms(p50),
        ms(p(&total, 0.99)),
        ms(p(&submit, 0.5)),
        ms(peer),
        peer.as_secs_f64() / p50.as_secs_f64()
    ));
    figures.line(format!(
        "the same strategy on a stored symbol of as many bars: submit to SUCCESS p50 {:.2} ms",
        ms(p(&on_stored, 0.5))
    ));
    figures.line(format!(
        "status read of that task: p50 {:.3} ms, p99 {:.3} ms, {} bytes",
        ms(p(&reads, 0.5)),
        ms(p(&reads, 0.99)),
        size
    ));
}

async fn correlation(s: &TestServer, figures: &mut Figures) {
    use engine::correlation::{corr_and_beta, matrix};
    if tests::reference::find().is_none() {
        println!("  peer skipped: the reference venv is missing (tests/run creates it)");
        return;
    }
    let md = s.state.market.clone();
    let end = md.latest_date().await.unwrap();
    let start = end - chrono::Days::new(365 * 20);
    let mut symbols = vec!["SPX".to_string()];
    for info in md.symbols().await.unwrap().iter() {
        if symbols.len() < 10 && info.asset_class == "stock" && info.first_date < start {
            symbols.push(info.symbol.clone());
        }
    }
    assert_eq!(symbols.len(), 10, "10 symbols with 20 years of bars");
    let mut bars = Vec::new();
    for sym in &symbols {
        bars.push(md.daily(sym).await.unwrap());
    }
    // The computation, as pandas' frames() does it: join, returns, matrix,
    // rolling correlation and beta.
    let window = 21;
    let ours = tests::bench::median(Duration::from_secs(1), || {
        let (_, closes) = services::analytics::correlation::aligned(&bars, start, end);
        let rets: Vec<Vec<f64>> = closes.iter().map(|c| engine::stats::returns(c)).collect();
        let cols: Vec<&[f64]> = rets.iter().map(Vec::as_slice).collect();
        std::hint::black_box((matrix(&cols), corr_and_beta(cols[0], &cols[1..], window)));
    });
    let r = tests::reference::run(
        "correlation_paths.py",
        &json!({"base": s.base, "user": DEMO_EMAIL, "password": DEMO_PASSWORD,
            "market_dir": tests::server::market_dir(), "symbols": symbols,
            "start": start.to_string(), "end": end.to_string(), "window": window, "runs": 15}),
    );
    let f = |k: &str| Duration::from_secs_f64(r[k].as_f64().unwrap());
    let (computation, from_parquet) = (f("pandas_computation"), f("pandas_from_parquet"));
    let x = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    figures.line(format!(
        "correlation, SPX + 9 stocks over 20 years ({} rolling rows, window {window}), matrix + rolling correlation + beta: the computation {:.2} ms vs pandas {:.1} ms on the same closes: **{:.0}x faster**; the Arrow answers differ from pandas' frames by at most {:.1e}",
        r["rows"],
        ms(ours),
        ms(computation),
        x(computation, ours),
        r["largest_difference"].as_f64().unwrap()
    ));
    figures.line(format!(
        "over HTTP from Python, `/symbol_corr` + `/symbol_beta`: JSON answers received ({:.1} MB) {:.1} ms, **{:.1}x** pandas computing the same frames from the Parquet files ({:.1} ms); JSON parsed into DataFrames {:.1} ms ({:.1}x); Arrow answers ({:.1} MB) read into pandas {:.1} ms: **{:.1}x**",
        r["json_bytes"].as_f64().unwrap() / 1e6,
        ms(f("http_json_received")),
        x(from_parquet, f("http_json_received")),
        ms(from_parquet),
        ms(f("http_json_frames")),
        x(from_parquet, f("http_json_frames")),
        r["arrow_bytes"].as_f64().unwrap() / 1e6,
        ms(f("http_arrow_frames")),
        x(from_parquet, f("http_arrow_frames")),
    ));
}

fn main() {
    let write = std::env::args().any(|a| a == "--write-docs");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let db = tempfile::tempdir().unwrap();
        let s = TestServer::start(Options::new(db.path().join("db.sqlite"))).await;
        let client = reqwest::Client::new();
        println!("user paths, end to end over HTTP (embedded server, release build)");
        let mut backtest = Figures {
            name: "bench:user-paths",
            doc: "docs/backtest.md",
            lines: Vec::new(),
        };
        csv_mode(&client, &s, &mut backtest).await;
        let mut analytics = Figures {
            name: "bench:user-paths",
            doc: "docs/analytics.md",
            lines: Vec::new(),
        };
        correlation(&s, &mut analytics).await;
        for figures in [&backtest, &analytics] {
            if write && !figures.lines.is_empty() {
                figures.write();
            }
        }
        s.stop().await;
    });
}
