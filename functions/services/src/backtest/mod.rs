//! The backtest service (backtest-service.md): request model, signal
//! resolution, validate encoding, and the job that runs a strategy.

pub mod answers;
pub mod batch;
pub mod batch_files;
mod catalog;
pub mod chart;
pub mod csv;
pub mod encode;
pub mod indicators;
pub mod monte_carlo;
pub mod params;
pub mod portfolio;
pub mod prepare;
pub mod request;
pub mod rules;
pub mod run;
pub mod signals;
mod values;

use async_trait::async_trait;
use platform::marketdata::MarketData;
use platform::tasks::Task;
use platform::uploads::Uploads;
use platform::worker::{JobError, JobHandler, Progress};
use prepare::prepare_with;
use serde_json::Value;
use std::sync::Arc;

/// Runs strategy backtest tasks.
pub struct BacktestJob {
    pub market: Arc<dyn MarketData>,
    /// CSV mode's bars, stored once at submit.
    pub uploads: Uploads,
}

/// The digest of a task's stored upload (`params.csv_upload.sha256`).
pub fn upload_digest(params: &Value) -> Option<&str> {
    params.get(UPLOAD_FIELD)?.get("sha256")?.as_str()
}

/// Where a task's params summarise its stored upload.
pub const UPLOAD_FIELD: &str = "csv_upload";

/// The task's uploaded bars, when it has some stored. `take` hands the
/// in-process copy to the job that runs the task; a page or a chart leaves it.
pub async fn task_upload(
    uploads: &Uploads,
    task: &Task,
    take: bool,
) -> crate::Result<Option<Arc<csv::Upload>>> {
    let Some(digest) = upload_digest(&task.params) else {
        return Ok(None);
    };
    let found = if take {
        uploads.take(&task.owner, digest).await?
    } else {
        uploads.get(&task.owner, digest).await?
    };
    found.map(Some).ok_or_else(|| {
        crate::Error::NotFound("the uploaded bars of this task are gone; submit it again".into())
    })
}

#[async_trait]
impl JobHandler for BacktestJob {
    fn reserved(&self, task: &Task) -> platform::metering::Reserved {
        crate::compute::reserved(task.kind, &task.params, task.created_at.date())
    }

    async fn run(&self, task: Task, _progress: Progress) -> Result<Value, JobError> {
        let upload = task_upload(&self.uploads, &task, true).await?;
        let prepared = prepare_with(self.market.as_ref(), &task.params, upload)
            .await
            .map_err(JobError::from)?;
        run::execute(self.market.as_ref(), &prepared).await
    }
}
