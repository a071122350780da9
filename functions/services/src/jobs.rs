//! The task kinds of a deployment: for each, the compute a task reserves
//! when it is submitted and the job the worker runs it with. Adding a kind
//! is its `platform::tasks::TaskKind` variant and one entry of [`KINDS`]; a
//! test checks that every variant has exactly one.

use crate::analytics::cpm::{CpmJob, requests::Mode};
use crate::compute;
use chrono::NaiveDate;
use platform::marketdata::MarketData;
use platform::metering::Reserved;
use platform::queue::JobQueue;
use platform::scanner::ScannerStore;
use platform::tasks::{TaskKind, TaskStore};
use platform::worker::{JobHandler, JobRegistry};
use serde_json::Value;
use std::sync::Arc;

/// What the jobs are built from. `tasks` and `queue` let the batch job fan
/// a batch out into chunk tasks.
pub struct Deps {
    pub market: Arc<dyn MarketData>,
    pub scanner: Arc<dyn ScannerStore>,
    pub tasks: Arc<dyn TaskStore>,
    pub queue: Arc<dyn JobQueue>,
    /// CSV mode's stored bars.
    pub uploads: platform::uploads::Uploads,
}

/// One task kind: what a task of it with these parameters, created on that
/// day, reserves, and its job.
pub struct Kind {
    pub kind: TaskKind,
    pub reserved: fn(&Value, NaiveDate) -> Reserved,
    pub job: fn(&Deps) -> Arc<dyn JobHandler>,
}

pub const KINDS: [Kind; 7] = [
    Kind {
        kind: TaskKind::StrategyBacktest,
        reserved: compute::strategy_backtest,
        job: |d| {
            Arc::new(crate::backtest::BacktestJob {
                market: d.market.clone(),
                uploads: d.uploads.clone(),
            })
        },
    },
    Kind {
        kind: TaskKind::CpmBacktest,
        reserved: compute::cpm_backtest,
        job: |d| {
            Arc::new(CpmJob {
                market: d.market.clone(),
                mode: Mode::Backtest,
            })
        },
    },
    Kind {
        kind: TaskKind::CpmScan,
        reserved: compute::cpm_scan,
        job: |d| {
            Arc::new(CpmJob {
                market: d.market.clone(),
                mode: Mode::Scan,
            })
        },
    },
    Kind {
        kind: TaskKind::ScannerBacktest,
        reserved: compute::scanner_backtest,
        job: |d| {
            Arc::new(crate::analytics::scanner::backtest::ScannerBacktestJob {
                market: d.market.clone(),
                store: d.scanner.clone(),
            })
        },
    },
    Kind {
        kind: TaskKind::PortfolioBacktest,
        reserved: compute::portfolio_backtest,
        job: |d| {
            Arc::new(crate::backtest::portfolio::PortfolioJob {
                market: d.market.clone(),
                uploads: d.uploads.clone(),
            })
        },
    },
    Kind {
        kind: TaskKind::BatchBacktest,
        reserved: compute::batch_backtest,
        job: |d| {
            Arc::new(crate::backtest::batch::BatchJob {
                tasks: d.tasks.clone(),
                queue: d.queue.clone(),
            })
        },
    },
    Kind {
        kind: TaskKind::BatchChunk,
        reserved: compute::batch_chunk,
        job: |d| {
            Arc::new(crate::backtest::batch::BatchChunkJob {
                market: d.market.clone(),
                returns: platform::returns::ReturnStore::new(d.uploads.blobs().clone()),
            })
        },
    },
];

/// The sample set test-mode tasks run on.
pub struct TestPorts {
    pub market: Arc<dyn MarketData>,
    pub scanner: Arc<dyn ScannerStore>,
}

/// Every kind's job over these ports; with `test`, a test-mode owner's
/// tasks run on its sample set.
pub fn registry(
    market: Arc<dyn MarketData>,
    scanner: Arc<dyn ScannerStore>,
    tasks: Arc<dyn TaskStore>,
    queue: Arc<dyn JobQueue>,
    uploads: platform::uploads::Uploads,
    test: Option<TestPorts>,
) -> JobRegistry {
    let live = Deps {
        market,
        scanner,
        tasks,
        queue,
        uploads,
    };
    let test = test.map(|t| Deps {
        market: t.market,
        scanner: t.scanner,
        tasks: live.tasks.clone(),
        queue: live.queue.clone(),
        uploads: live.uploads.clone(),
    });
    let mut r = JobRegistry::default();
    for k in &KINDS {
        let job = (k.job)(&live);
        match &test {
            Some(t) => r.register(
                k.kind,
                Arc::new(ByMode {
                    live: job,
                    test: (k.job)(t),
                }),
            ),
            None => r.register(k.kind, job),
        }
    }
    r
}

/// A kind's job on live data and on the sample set, picked by the task's owner.
struct ByMode {
    live: Arc<dyn JobHandler>,
    test: Arc<dyn JobHandler>,
}

impl ByMode {
    fn of(&self, task: &platform::tasks::Task) -> &Arc<dyn JobHandler> {
        match platform::keys::account_of(&task.owner).1 {
            platform::keys::Mode::Live => &self.live,
            platform::keys::Mode::Test => &self.test,
        }
    }
}

#[async_trait::async_trait]
impl JobHandler for ByMode {
    async fn run(
        &self,
        task: platform::tasks::Task,
        progress: platform::worker::Progress,
    ) -> Result<Value, platform::worker::JobError> {
        self.of(&task).clone().run(task, progress).await
    }

    fn reserved(&self, task: &platform::tasks::Task) -> Reserved {
        self.of(task).reserved(task)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_kind_is_registered_once() {
        for kind in TaskKind::ALL {
            let entries = KINDS.iter().filter(|k| k.kind == kind).count();
            assert_eq!(entries, 1, "{kind}");
        }
        assert_eq!(KINDS.len(), TaskKind::ALL.len());
    }
}
