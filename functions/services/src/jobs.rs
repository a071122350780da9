//! The job handlers of a deployment, by task kind. Each service area
//! registers its handlers here; the worker dispatches on the task's kind.

use crate::analytics::cpm::{CpmJob, requests::Mode};
use platform::marketdata::MarketData;
use platform::queue::JobQueue;
use platform::scanner::ScannerStore;
use platform::tasks::{TaskKind, TaskStore};
use platform::worker::JobRegistry;
use std::sync::Arc;

/// `tasks` and `queue` let the batch job fan a batch out into chunk tasks.
pub fn registry(
    market: Arc<dyn MarketData>,
    scanner: Arc<dyn ScannerStore>,
    tasks: Arc<dyn TaskStore>,
    queue: Arc<dyn JobQueue>,
) -> JobRegistry {
    let mut r = JobRegistry::default();
    r.register(
        TaskKind::BatchBacktest,
        Arc::new(crate::backtest::batch::BatchJob { tasks, queue }),
    );
    r.register(
        TaskKind::BatchChunk,
        Arc::new(crate::backtest::batch::BatchChunkJob {
            market: market.clone(),
        }),
    );
    r.register(
        TaskKind::ScannerBacktest,
        Arc::new(crate::analytics::scanner::backtest::ScannerBacktestJob {
            market: market.clone(),
            store: scanner,
        }),
    );
    r.register(
        TaskKind::StrategyBacktest,
        Arc::new(crate::backtest::BacktestJob {
            market: market.clone(),
        }),
    );
    r.register(
        TaskKind::CpmScan,
        Arc::new(CpmJob {
            market: market.clone(),
            mode: Mode::Scan,
        }),
    );
    r.register(
        TaskKind::CpmBacktest,
        Arc::new(CpmJob {
            market,
            mode: Mode::Backtest,
        }),
    );
    r
}
