//! The backtest service (backtest-service.md): request model, signal
//! resolution, validate encoding, and the job that runs a strategy.

pub mod answers;
pub mod batch;
pub mod batch_files;
pub mod chart;
pub mod csv;
pub mod encode;
pub mod indicators;
pub mod params;
pub mod prepare;
pub mod rules;
pub mod run;
#[cfg(feature = "openapi")]
pub mod schema;
pub mod signals;
mod values;

use async_trait::async_trait;
use platform::marketdata::MarketData;
use platform::tasks::Task;
use platform::worker::{JobError, JobHandler, Progress};
use prepare::prepare;
use serde_json::Value;
use std::sync::Arc;

/// Runs strategy backtest tasks.
pub struct BacktestJob {
    pub market: Arc<dyn MarketData>,
}

#[async_trait]
impl JobHandler for BacktestJob {
    fn reserved(&self, task: &Task) -> platform::metering::Reserved {
        crate::compute::reserved(task.kind, &task.params, task.created_at.date())
    }

    async fn run(&self, task: Task, _progress: Progress) -> Result<Value, JobError> {
        let prepared = prepare(self.market.as_ref(), &task.params)
            .await
            .map_err(JobError::from)?;
        run::execute(self.market.as_ref(), &prepared).await
    }
}
