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

/// Replaces the lines between `<!-- bench:NAME -->` and `<!-- /bench:NAME -->`
/// in `docs/<doc>` with `lines` as a list.
pub fn write_docs_block(doc: &str, name: &str, lines: &[String]) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../docs")
        .join(doc);
    let text = std::fs::read_to_string(&path).unwrap();
    let (open, close) = (
        format!("<!-- bench:{name} -->"),
        format!("<!-- /bench:{name} -->"),
    );
    let (a, b) = (
        text.find(&open).expect("the opening marker"),
        text.find(&close).expect("the closing marker"),
    );
    let block: Vec<String> = lines.iter().map(|l| format!("- {l}")).collect();
    let out = format!("{}{open}\n{}\n{}", &text[..a], block.join("\n"), &text[b..]);
    std::fs::write(&path, out).unwrap();
    println!("  (written to docs/{doc})");
}

/// Submits `body` (a strategy, JSON) as the demo account to the server at
/// `base` and long-polls its task to SUCCESS: the task id and the time taken,
/// submit to answer, as a user's script sees it.
pub async fn backtest_to_success(
    client: &reqwest::Client,
    base: &str,
    body: &[u8],
) -> (String, Duration) {
    use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
    let t0 = Instant::now();
    let r: serde_json::Value = client
        .post(format!("{base}/backtest/start_backtest"))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .header("content-type", "application/json")
        .body(body.to_vec())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = r["task_id"].as_str().unwrap().to_string();
    let url = format!("{base}/backtest/status/{id}?wait=20");
    loop {
        let t: serde_json::Value = client
            .get(&url)
            .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if t["status"] == "SUCCESS" {
            return (id, t0.elapsed());
        }
        assert_ne!(t["status"], "FAILED", "{t}");
    }
}
