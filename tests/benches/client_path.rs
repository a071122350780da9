//! The client's own path against backtesting.py, in one run:
//! `cargo bench -p tests --bench client_path` (add `-- --write-docs` to put
//! the figures into docs/python.md).
//!
//! `Client.backtest(strategy, bars=GOOG).wait()` from the working tree's
//! Python package (its encoding, the submit, the long-poll and the answer's
//! parsing, over HTTP to the embedded server) against backtesting.py's
//! `Backtest.run` of the same SMA 10/20 crossover on the same 2,148 bars,
//! timed interleaved in one Python process. The client's share is the
//! process's CPU time across a call: the server is not in it.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::json;
use tests::server::{Options, TestServer};

fn main() {
    let write = std::env::args().any(|a| a == "--write-docs");
    if tests::reference::find().is_none() {
        println!("  skipped: the reference venv is missing (tests/run creates it)");
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let db = tempfile::tempdir().unwrap();
        let s = TestServer::start(Options::new(db.path().join("db.sqlite"))).await;
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../clients/python/src");
        let input = json!({
            "url": s.base, "user": DEMO_EMAIL, "password": DEMO_PASSWORD,
            "src": src, "runs": 300, "peer_runs": 20,
        });
        let r = tokio::task::spawn_blocking(move || {
            tests::reference::run("time_client_path.py", &input)
        })
        .await
        .unwrap();
        let f = |k: &str| r[k].as_f64().unwrap() * 1e3;
        assert_eq!(r["trades"], r["peer_trades"], "both runs trade alike");
        let (ours, peer) = (f("client_p50"), f("client_cpu_p50"));
        let line = format!(
            "SMA 10/20 on backtesting.py's {} GOOG bars: `Client.backtest(strategy, bars=df).wait()` p50 {:.2} ms (p90 {:.2} ms; the client's own CPU {:.2} ms of it, {:.0}%) vs `Backtest.run` p50 {:.1} ms (p90 {:.1} ms): **{:.1}x faster** ({} and {} runs, {} trades each)",
            r["bars"],
            ours,
            f("client_p90"),
            peer,
            100.0 * peer / ours,
            f("peer_p50"),
            f("peer_p90"),
            f("peer_p50") / ours,
            r["runs"],
            r["peer_runs"],
            r["trades"],
        );
        println!("client path, end to end (embedded server, release build)\n  {line}");
        if write {
            tests::bench::write_docs_block("python.md", "client-path", &[line]);
        }
        s.stop().await;
    });
}
