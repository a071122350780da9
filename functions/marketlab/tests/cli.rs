//! The `marketlab` binary as a user runs it.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn marketlab(data: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_marketlab"));
    c.arg("--data-dir").arg(data).env("RUST_LOG", "warn");
    c
}

#[test]
fn serve_creates_sample_data_answers_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = marketlab(dir.path())
        .args(["serve", "--port", "0", "--stocks", "8"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let started = Instant::now();
    let base = loop {
        let line = lines.next().expect("server printed its address").unwrap();
        if let Some(rest) = line.strip_prefix("marketlab listening on ") {
            break rest.split_whitespace().next().unwrap().to_string();
        }
        assert!(started.elapsed() < Duration::from_secs(120));
    };
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");
    assert!(
        dir.path().join("market/reference/symbols.parquet").exists(),
        "sample data created on first start"
    );

    let rt = tokio::runtime::Runtime::new().unwrap();
    let (status, body) = rt.block_on(async {
        let r = reqwest::Client::new()
            .get(format!("{base}/health"))
            .basic_auth("demo@marketlab.local", Some("demo-password"))
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.text().await.unwrap())
    });
    assert_eq!((status, body.as_str()), (200, r#"{"status":"ok"}"#));
    let auth = rt.block_on(async {
        reqwest::Client::new()
            .get(format!("{base}/auth-info"))
            .basic_auth("demo@marketlab.local", Some("demo-password"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    });
    assert!(auth.contains(r#""authenticated":true"#), "{auth}");

    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "server did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "graceful shutdown exits 0: {status}");
}

/// `marketlab` with space-separated arguments: success and all it printed.
fn cli(data: &std::path::Path, args: &str) -> (bool, String) {
    run(marketlab(data).args(args.split_whitespace()))
}

fn run(cmd: &mut Command) -> (bool, String) {
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn accounts_import_and_plans_commands() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, out) = cli(
        dir.path(),
        "accounts add --email Quant@Example.test --password long-enough --plan data --select SPX_OPTIX,AAII_BULL",
    );
    assert!(ok, "{out}");
    let (ok, out) = cli(dir.path(), "accounts list");
    assert!(
        ok && out.contains("quant@example.test")
            && out.contains("data")
            && out.contains("SPX_OPTIX,AAII_BULL"),
        "{out}"
    );
    let (ok, out) = cli(
        dir.path(),
        "accounts add --email x@example.test --password long-enough --plan gold",
    );
    assert!(!ok && out.contains("unknown plan 'gold'"), "{out}");
    let (ok, out) = cli(
        dir.path(),
        "accounts add --email x@example.test --password short --plan pro",
    );
    assert!(!ok && out.contains("at least 8 characters"), "{out}");
    let (ok, out) = run(marketlab(dir.path()).args([
        "accounts",
        "add-indicator",
        "--email",
        "quant@example.test",
        "--url",
        "MY_RATIO",
        "--name",
        "Optix over AAII",
        "--indicator-1",
        "SPX_OPTIX",
        "--indicator-2",
        "AAII_BULL",
        "--timeframe",
        "Weekly",
        "--ma",
        "4",
    ]));
    assert!(
        ok && out.contains("custom indicator MY_RATIO saved"),
        "{out}"
    );
    let (ok, out) = cli(
        dir.path(),
        "accounts add-indicator --email quant@example.test --url X --name x --indicator-1 A --indicator-2 B --calculate log",
    );
    assert!(!ok && out.contains("--calculate 'log'"), "{out}");
    let (ok, out) = run(marketlab(dir.path()).arg("plans"));
    assert!(
        ok && out.contains("premium-data-yearly") && out.contains("trial"),
        "{out}"
    );

    let good = dir.path().join("abc.csv");
    std::fs::write(&good, "Date,Open,High,Low,Close,Adj Close,Volume\n2024-01-02,10,11,9,10.5,10.4,1000\n2024-01-03,10.5,12,10,11.5,11.4,2000\n").unwrap();
    let (ok, out) = run(marketlab(dir.path())
        .args(["import", "csv", "--symbol", "abc"])
        .arg(&good));
    assert!(
        ok && out
            .contains("imported 2 new session(s) of 1 symbol(s): ABC (2024-01-02 to 2024-01-03)"),
        "{out}"
    );
    assert!(dir.path().join("market/prices/daily/ABC.parquet").exists());
    let bad = dir.path().join("bad.csv");
    std::fs::write(&bad, "Date,Open,High,Low,Close,Volume\n2024-01-02,10,11,9,10.5,1000\n2024-01-03,10.5,9,10,9.5,2000\n").unwrap();
    let (ok, out) = run(marketlab(dir.path())
        .args(["import", "csv", "--symbol", "abc"])
        .arg(&bad));
    assert!(
        !ok && out
            .contains("error [high_below_low] ABC line 3 column High: High 9 is below Low 10")
            && out.contains("bad.csv was refused: 1 error(s); nothing was written"),
        "{out}"
    );
}

/// `marketlab usage --csv | head`: a reader that stops early ends the
/// command quietly, with success.
#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = marketlab(dir.path())
        .args(["usage", "--csv"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The read end is closed before anything is written.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
}
