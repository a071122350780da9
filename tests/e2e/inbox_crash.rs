//! One import, one generation: `marketlab import` of a many-symbol file is
//! killed with SIGKILL at three points of its commit (every symbol written
//! aside; the commit marker written; half of the symbols moved into
//! place); after the restart every symbol has the new session, or none
//! does, and nothing is left aside. The campaign's reproducer: a link to the
//! API-key pepper dropped in `incoming/` is refused and its bytes land
//! nowhere under the data directory.

use chrono::NaiveDate;
use platform::marketdata::{LocalDir, ParquetMarketData};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tests::market_files;
use tests::spawned::Spawned;

/// The sample set's latest session (a Friday) and the session after it.
const LAST: NaiveDate = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
const NEXT: NaiveDate = NaiveDate::from_ymd_opt(2026, 11, 23).unwrap();

/// The server over `data`, test mode on its market itself (no copy of
/// the market at the start); answers once it listens.
fn serve(binary: &Path, data: &Path) -> Spawned {
    let same = data.join("market").display().to_string();
    Spawned::start(
        binary,
        data,
        &["--no-scan", "--test-market-dir", &same],
        "warn",
    )
}

/// How many of `symbols` have the session `NEXT`, read as a fresh process
/// would.
async fn with_next(market: &Path, symbols: &[String]) -> usize {
    let md = ParquetMarketData::new(Arc::new(LocalDir::new(market)));
    let mut n = 0;
    for s in symbols {
        let b = md.daily_stored(s).await.unwrap();
        if b.date(b.len() - 1) == NEXT {
            n += 1;
        }
    }
    n
}

#[tokio::test(flavor = "multi_thread")]
async fn an_import_killed_at_any_step_is_served_whole_or_not_at_all_after_the_restart() {
    let binary = tests::runtime_api::workspace_binaries(["marketlab"]).await[0].clone();
    for (step, finished) in [("staged", false), ("committed", true), ("half-moved", true)] {
        let data = tempfile::tempdir().unwrap();
        let market = data.path().join("market");
        tests::server::sample_into(&market);
        let md = ParquetMarketData::new(Arc::new(LocalDir::new(&market)));
        let (mut symbols, _) = market_files::ending_on(&md, LAST).await;
        symbols.truncate(40);
        let file = data.path().join("grouped.json");
        std::fs::write(
            &file,
            market_files::grouped_daily(&md, &symbols, NEXT).await,
        )
        .unwrap();
        let mut import = std::process::Command::new(&binary);
        import
            .arg("--data-dir")
            .arg(data.path())
            .args(["import", "json"])
            .arg(&file)
            .env("MARKETLAB_IMPORT_KILL_AT", step)
            .stdout(std::process::Stdio::null());
        let status = tokio::task::spawn_blocking(move || import.status())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{step}: {status:?}");
        if step != "half-moved" {
            // Before the moves nothing of the import is served.
            assert_eq!(with_next(&market, &symbols).await, 0, "{step}");
        }
        assert!(market.join("staging").exists(), "{step}");
        // The restart finishes or removes it before it answers.
        drop(serve(&binary, data.path()));
        let n = with_next(&market, &symbols).await;
        assert_eq!(n, if finished { symbols.len() } else { 0 }, "{step}");
        assert!(!market.join("staging").exists(), "{step}");
        // The generation names them when finished: a warm process reads them again.
        let g = platform::marketdata::generation::Generation::read(&LocalDir::new(&market))
            .await
            .unwrap();
        let named = symbols
            .iter()
            .filter(|s| {
                g.changed
                    .contains_key(&platform::marketdata::layout::daily_prices(s))
            })
            .count();
        assert_eq!(named, n, "{step}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_link_to_the_key_pepper_in_incoming_is_refused_and_copied_nowhere() {
    let binary = tests::runtime_api::workspace_binaries(["marketlab"]).await[0].clone();
    let data = tempfile::tempdir().unwrap();
    let market = data.path().join("market");
    tests::server::sample_into(&market);
    let since = std::time::SystemTime::now();
    let server = serve(&binary, data.path());
    let pepper = data.path().join("state/api-keys.key");
    let secret = std::fs::read(&pepper).unwrap();
    assert!(secret.len() >= 16);
    std::fs::create_dir_all(market.join("incoming")).unwrap();
    std::os::unix::fs::symlink(&pepper, market.join("incoming/PEPPER.csv")).unwrap();
    let report = market.join("rejected/PEPPER.csv.report.json");
    // The sweep's report is the event; the guard only bounds a hang.
    assert!(
        tests::server::eventually(Duration::from_secs(60), || async { report.exists() }).await,
        "no report"
    );
    drop(server);
    let text = std::fs::read_to_string(&report).unwrap();
    assert!(
        text.contains("not_a_file") && text.contains("symbolic link"),
        "{text}"
    );
    assert!(std::fs::symlink_metadata(market.join("rejected/PEPPER.csv")).is_err());
    assert!(std::fs::symlink_metadata(market.join("incoming/PEPPER.csv")).is_err());
    // No file under the market directory written since the start holds the
    // pepper (the sample set's are older).
    let mut stack = vec![market.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let meta = std::fs::symlink_metadata(e.path()).unwrap();
            if meta.is_dir() {
                stack.push(e.path());
            } else if meta.is_file() && meta.modified().unwrap() >= since {
                let body = std::fs::read(e.path()).unwrap();
                assert!(
                    !body.windows(secret.len()).any(|w| w == secret),
                    "{} holds the pepper",
                    e.path().display()
                );
            }
        }
    }
}
