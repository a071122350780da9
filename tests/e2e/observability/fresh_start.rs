//! A new user's first start on the sample set, as the real binary logs it:
//! the data's age said once at INFO with what to do, and no line at ERROR
//! (the campaign saw `market data: stale ... lag_hours 331`, which a new
//! user can do nothing about).

use super::log_lines;
use serde_json::Value;
use std::time::Duration;
use tests::spawned::Spawned;

/// The lag gauge on `metrics`, once the data follower has set it.
async fn lag_seconds(metrics: &str) -> Option<f64> {
    let text = reqwest::get(metrics).await.ok()?.text().await.ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("market_data_lag_seconds "))
        .and_then(|v| v.trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fresh_start_on_the_sample_set_logs_its_age_at_info_and_no_error() {
    let dir = tempfile::tempdir().unwrap();
    let binary = tests::runtime_api::workspace_binaries(["marketlab"]).await[0].clone();
    // An empty data directory: the sample set is made, then scanned.
    let s = Spawned::start(
        &binary,
        dir.path(),
        &["--stocks", "12", "--metrics-addr", "127.0.0.1:0"],
        "info",
    );
    let metrics = s.metrics.clone().expect("the metrics address is printed");
    // The follower's first look sets the gauge; a stale error would be
    // logged in the same look, right after.
    let looked = tests::server::eventually(Duration::from_secs(60), || async {
        lag_seconds(&metrics).await.is_some_and(|lag| lag > 0.0)
    })
    .await;
    assert!(looked, "the sample set is behind the calendar");
    // A request logged after that look: every line before it has been read.
    let probe = "fresh-start-probe";
    let r = reqwest::Client::new()
        .get(format!("{}/health", s.base))
        .header("x-request-id", probe)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let logged = tests::server::eventually(Duration::from_secs(10), || {
        let seen = s.lines().iter().any(|l| l.contains(probe));
        async move { seen }
    })
    .await;
    assert!(logged);

    let logs = log_lines(&s.lines());
    let errors: Vec<&Value> = logs.iter().filter(|l| l["level"] == "ERROR").collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let age: Vec<&Value> = logs
        .iter()
        .filter(|l| {
            l["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("generated sample set"))
        })
        .collect();
    assert_eq!(age.len(), 1, "said once: {age:#?}");
    assert_eq!(age[0]["level"], "INFO");
    assert_eq!(age[0]["fields"]["latest"], "2026-11-20");
    assert!(age[0]["fields"]["age_days"].as_i64().unwrap() > 0);
    assert!(
        age[0]["fields"]["message"]
            .as_str()
            .unwrap()
            .contains("docs/data-updates.md"),
        "{}",
        age[0]
    );
}

/// The same data without the sample set's mark are real data as far as the
/// server knows: behind the calendar, they are logged stale at ERROR.
#[tokio::test(flavor = "multi_thread")]
async fn real_data_behind_the_calendar_are_logged_stale_at_error() {
    let dir = tempfile::tempdir().unwrap();
    let market = dir.path().join("market");
    tests::server::sample_into(&market);
    std::fs::remove_file(market.join(sample::mark::KEY)).unwrap();
    let binary = tests::runtime_api::workspace_binaries(["marketlab"]).await[0].clone();
    let s = Spawned::start(
        &binary,
        dir.path(),
        &["--stocks", "12", "--no-scan"],
        "info",
    );
    let stale = |lines: &[String]| {
        log_lines(lines).into_iter().any(|l| {
            l["level"] == "ERROR"
                && l["fields"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("market data: stale"))
        })
    };
    let logged = tests::server::eventually(Duration::from_secs(60), || {
        let seen = stale(&s.lines());
        async move { seen }
    })
    .await;
    assert!(logged, "{:#?}", s.lines());
    assert!(
        !s.lines().iter().any(|l| l.contains("generated sample set")),
        "no sample set to speak of"
    );
}
