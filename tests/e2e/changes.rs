//! Operator changes on a running server: plan limits, custom indicators
//! and an account's plan, made with the `marketlab` commands, apply within
//! seconds without a restart.

use crate::usage::TRIAL;
use marketlab::server::TRIAL_EMAIL;
use std::sync::Arc;
use std::time::Duration;
use tests::server::{Options, TestServer, eventually};

/// The operator's commands, run as the `marketlab` CLI runs them against the
/// server's own database, take effect on the running server within seconds:
/// a raised rate limit lets a refused tenant back in the same minute, a new
/// custom indicator is served, a plan change ends the trial's truncation.
#[tokio::test(flavor = "multi_thread")]
async fn operator_changes_reach_a_running_server_within_seconds() {
    use clap::Parser;
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("state").join("marketlab.sqlite");
    std::fs::create_dir_all(database.parent().unwrap()).unwrap();
    // Metering's minute stands still: the refused tenant stays refused
    // until the raised limit, not until the minute turns.
    let mut opts = Options::new(database);
    opts.clock = Arc::new(platform::clock::ManualClock::into_this_minute(5));
    let server = TestServer::start(opts).await;
    let cli = |args: &[&str]| {
        let mut all = vec!["marketlab", "--data-dir", dir.path().to_str().unwrap()];
        all.extend_from_slice(args);
        marketlab::cli::run(marketlab::cli::Cli::parse_from(all))
    };
    let trial = Some(TRIAL);
    let within = Duration::from_secs(platform::metering::PLAN_CACHE.as_secs() + 3);
    cli(&["plans", "set", "trial", "--requests-per-minute", "3"])
        .await
        .unwrap();
    // The server reads the new limit within its plan cache.
    assert!(
        eventually(within, || async {
            server.get("/ws/getAllSymbols", trial).await.0 == 429
        })
        .await
    );
    cli(&["plans", "set", "trial", "--requests-per-minute", "1000"])
        .await
        .unwrap();
    let started = std::time::Instant::now();
    assert!(
        eventually(within, || async {
            server.get("/ws/getAllSymbols", trial).await.0 == 200
        })
        .await,
        "a raised limit admits a refused tenant in the same minute"
    );
    let raised_after = started.elapsed();

    // A custom indicator added while the server runs (the trial is signed in, cached).
    assert_eq!(
        server
            .get("/ws/getUserIndicatorData?url=MINE", trial)
            .await
            .0,
        404
    );
    cli(&[
        "accounts",
        "add-indicator",
        "--email",
        TRIAL_EMAIL,
        "--url",
        "MINE",
        "--name",
        "Optix over AAII",
        "--indicator-1",
        "SPX_OPTIX",
        "--indicator-2",
        "AAII_BULL",
        "--calculate",
        "ratio",
        "--timeframe",
        "Daily",
        "--ma",
        "1",
        "--upper",
        "2",
        "--lower",
        "0.5",
    ])
    .await
    .unwrap();
    let started = std::time::Instant::now();
    assert!(
        eventually(within, || async {
            server
                .get("/ws/getUserIndicatorData?url=MINE", trial)
                .await
                .0
                == 200
        })
        .await,
        "the new indicator is served without a restart"
    );
    let indicator_after = started.elapsed();

    // The trial's plan changed to pro: full history within seconds.
    let (_, before) = server.get("/ws/getSymbolData/SPX_OPTIX", trial).await;
    assert_eq!(before.as_object().unwrap().len(), 90);
    cli(&[
        "accounts",
        "set-plan",
        "--email",
        TRIAL_EMAIL,
        "--plan",
        "pro",
    ])
    .await
    .unwrap();
    assert!(
        eventually(within, || async {
            let (_, h) = server.get("/ws/getSymbolData/SPX_OPTIX", trial).await;
            h.as_object().is_some_and(|h| h.len() > 90)
        })
        .await,
        "a plan change reaches the signed-in account"
    );
    println!(
        "operator changes: raised limit seen after {raised_after:?}, new indicator after {indicator_after:?}"
    );
    server.stop().await;
}
