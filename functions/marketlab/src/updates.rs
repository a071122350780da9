//! The embedded server's side of market data updates: what is put in the
//! market directory's `incoming/` is imported (one import at a time, with
//! the command line's), a session is scanned once its data are complete,
//! and the data's lag behind the calendar is a gauge, logged as an error
//! once it passes the setting.

use platform::marketdata::{MarketData, ParquetMarketData};
use platform::scanner::ScannerStore;
use platform::webhooks::emit::Events;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How often `incoming/` is looked at.
pub const SWEEP: Duration = Duration::from_secs(2);
/// Past a missing session's close, how long before the data are stale by
/// default: the vendors' end-of-day files come within a few hours.
pub const STALE_AFTER: Duration = Duration::from_secs(6 * 3600);

pub struct Follower {
    pub market: Arc<ParquetMarketData>,
    pub market_dir: PathBuf,
    pub scanner: Arc<dyn ScannerStore>,
    pub events: Option<Events>,
    /// Scan the latest session first if it has no scan.
    pub scan_at_start: bool,
    /// Scan each session once its data are complete.
    pub follow: bool,
    pub stale_after: Duration,
    /// The largest file `incoming/` takes.
    pub inbox_max_bytes: u64,
}

/// Imports `incoming/` under the import lock; what it did, logged.
async fn sweep(f: &Follower) -> Result<usize, platform::PortError> {
    use sample::import::inbox::{Inbox, LocalInbox};
    let inbox = LocalInbox::new(&f.market_dir);
    if inbox.waiting().await?.is_empty() {
        return Ok(0);
    }
    let turn = turn(&f.market_dir).await?;
    // A sweep that failed part way left its files in incoming/ and what it
    // wrote aside in staging/: removed before they are taken again.
    sample::import::recover(&f.market).await?;
    let options = sample::import::Options {
        at: sample::import::At::from_env(),
        ..Default::default()
    };
    let taken = sample::import::inbox::sweep(&f.market, &inbox, f.inbox_max_bytes, &options).await;
    drop(turn);
    let taken = taken?;
    for t in &taken {
        if t.report.refused() {
            platform::telemetry::data_import("rejected");
            tracing::warn!(file = %t.name, moved_to = %t.moved_to, errors = t.report.errors,
                warnings = t.report.warnings, "market data: file refused");
        } else {
            platform::telemetry::data_import("ingested");
            tracing::info!(file = %t.name, sessions = t.added, warnings = t.report.warnings,
                generation = t.generation, "market data: file imported");
        }
    }
    Ok(taken.len())
}

/// The import turn of the market directory `dir` (taken off the async
/// threads: another process may hold it).
async fn turn(dir: &std::path::Path) -> Result<std::fs::File, platform::PortError> {
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || sample::import::lock(&dir))
        .await
        .map_err(platform::PortError::internal)?
}

/// Finishes or removes the imports a crash cut short, under the import
/// turn: before the server answers, so it never serves half an import.
pub async fn recover(
    market: &ParquetMarketData,
    dir: &std::path::Path,
) -> Result<(), platform::PortError> {
    let turn = turn(dir).await?;
    let done = sample::import::recover(market).await;
    drop(turn);
    done
}

/// Runs until dropped.
pub async fn follow_data(f: Follower) {
    use services::analytics::scanner::{follow, nightly};
    if f.scan_at_start {
        nightly::scan_missing(
            f.market.as_ref(),
            f.scanner.as_ref(),
            f.events.as_ref(),
            "the latest session had no scan",
        )
        .await;
    }
    let mut stale = false;
    loop {
        if let Err(e) = sweep(&f).await {
            tracing::warn!(error = %e, "market data: incoming/ not swept");
        }
        if f.follow
            && let Err(e) =
                follow::follow(f.market.as_ref(), f.scanner.as_ref(), f.events.as_ref()).await
        {
            tracing::error!(error = %e, "scanner: the completed session was not scanned");
        }
        if let Ok(latest) = f.market.latest_date().await {
            let lag = follow::lag(latest, chrono::Utc::now());
            platform::telemetry::data_lag(lag);
            // The sample set as generated is behind by design (said at the
            // start); real data imported since are judged as real.
            let now_stale =
                lag > f.stale_after && !crate::freshness::still_sample(&f.market, latest).await;
            if now_stale && !stale {
                tracing::error!(latest = %latest, lag_hours = lag.as_secs() / 3600,
                    "market data: stale, a session's bars are missing past the allowance");
            }
            stale = now_stale;
        }
        tokio::time::sleep(SWEEP).await;
    }
}
