//! Batches started by a file: a JSON-lines file of strategies (one
//! strategy per line) dropped at `<inbox>/<account e-mail>/<name>.jsonl`
//! becomes a batch of that account; when it finishes, its table is written
//! beside the file as `<name>.results.csv` and `<name>.results.parquet`.
//!
//! A sweep is idempotent: a file's batch id is kept in `<name>.batch` (its
//! refusal in `<name>.error.txt`), so a sweep after a crash submits nothing
//! twice and writes the results once the batch is done. The embedded server
//! sweeps its inbox directory every few seconds; on AWS an S3 event on the
//! bucket's `batches/` prefix runs a sweep on the worker.

use super::batch::{self, BatchRow};
use crate::error::Result;
use crate::submit::{SubmitError, Submitter};
use bytes::Bytes;
use platform::PortError;
use platform::accounts::AccountStore;
use platform::marketdata::columns::{self, Column};
use platform::marketdata::{BlobStore, MarketData};
use platform::metering::Metering;
use platform::queue::JobQueue;
use platform::returns::ReturnStore;
use platform::tasks::{NewTask, TaskKind, TaskStore};
use serde_json::Value;

/// What a sweep needs.
pub struct Inbox<'a> {
    pub files: &'a dyn BlobStore,
    /// Key prefix of the inbox (`""` for a directory of its own, `batches/` in the bucket).
    pub prefix: &'a str,
    pub market: &'a dyn MarketData,
    pub tasks: &'a dyn TaskStore,
    pub queue: &'a dyn JobQueue,
    pub accounts: &'a dyn AccountStore,
    /// Admission against the month's compute, as for an HTTP submit.
    pub metering: Option<&'a Metering>,
    /// Where batches keep their returns (their statistics go beside the tables).
    pub returns: Option<&'a ReturnStore>,
}

/// What a sweep did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Swept {
    pub submitted: usize,
    pub refused: usize,
    pub written: usize,
}

/// A JSON-lines file as a list batch named after the file.
pub fn parse_lines(name: &str, text: &str) -> std::result::Result<Value, String> {
    let mut strategies = Vec::new();
    for (k, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .map_err(|e| format!("line {}: not a JSON strategy: {e}", k + 1))?;
        strategies.push(v);
    }
    Ok(serde_json::json!({"name": name, "strategies": strategies}))
}

/// The results table's columns: index, the grid's paths (typed by their
/// values in `rows`), the symbol, the metrics, the error.
pub fn table(paths: &[String], rows: &[BatchRow]) -> Vec<(String, Column)> {
    let typed: Vec<(String, batch::Kind)> = paths
        .iter()
        .map(|p| (p.clone(), batch::kind_of_rows(p, rows)))
        .collect();
    batch::table(&typed, rows)
}

/// The table's metadata: the batch's statistics as JSON, under
/// `marketlab.statistics` (Parquet and Arrow schema metadata).
pub fn summary(s: &batch::BatchStatus) -> std::collections::HashMap<String, String> {
    metadata(s.statistics.as_ref())
}

/// The metadata of a table with `statistics`.
pub fn metadata(
    statistics: Option<&batch::BatchStatistics>,
) -> std::collections::HashMap<String, String> {
    statistics
        .and_then(|st| serde_json::to_string(st).ok())
        .map(|json| (STATISTICS_KEY.to_string(), json))
        .into_iter()
        .collect()
}

/// The metadata key of a results table's statistics.
pub const STATISTICS_KEY: &str = "marketlab.statistics";

async fn text_of(files: &dyn BlobStore, key: &str) -> Result<Option<String>> {
    Ok(files
        .get(key)
        .await?
        .map(|b| String::from_utf8_lossy(&b).trim().to_string()))
}

/// Submits a file's batch, or explains why not.
async fn submit(
    inbox: &Inbox<'_>,
    key: &str,
    base: &str,
) -> Result<std::result::Result<String, String>> {
    let rest = &key[inbox.prefix.len()..];
    if key.len() > 240 {
        return Ok(Err("the file's path is longer than 240 characters".into()));
    }
    let Some((owner, file)) = rest.split_once('/') else {
        return Ok(Err(
            "a batch file belongs in a folder named after its account's e-mail".into(),
        ));
    };
    let owner = owner.to_ascii_lowercase();
    let Some(account) = inbox.accounts.get(&owner).await? else {
        return Ok(Err(format!("no account '{owner}'")));
    };
    let Some(plan) = platform::accounts::plan(&account.plan) else {
        return Ok(Err(format!("account '{owner}' has an unknown plan")));
    };
    let bytes = match inbox.files.get(key).await {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Ok(Err("the file vanished".into())),
        // Replaced by a link since it was listed: refused unread.
        Err(PortError::Invalid(why)) => return Ok(Err(why)),
        Err(e) => return Err(e.into()),
    };
    let name = file.trim_end_matches(".jsonl");
    let request = match parse_lines(name, &String::from_utf8_lossy(&bytes)) {
        Ok(r) => r,
        Err(e) => return Ok(Err(e)),
    };
    let cap = match inbox.metering {
        Some(m) => m.batch_size(plan).await,
        None => plan.max_batch,
    };
    let params = match batch::submission(inbox.market, request, cap).await {
        Ok(p) => p,
        Err(crate::Error::Port(p)) => return Err(p.into()),
        Err(mistake) => return Ok(Err(mistake.to_string())),
    };
    let new = NewTask {
        owner,
        kind: TaskKind::BatchBacktest,
        params: serde_json::to_value(params).map_err(PortError::internal)?,
    };
    // Keyed by the file: a sweep after a crash finds the batch it created.
    let submitter = Submitter {
        tasks: inbox.tasks,
        queue: inbox.queue,
        metering: inbox.metering,
    };
    let task = match submitter
        .submit(plan.code, new, Some(&format!("inbox:{key}")))
        .await
    {
        Ok(s) => s.task,
        // Refused like the same batch over HTTP.
        Err(e @ (SubmitError::OverLimit(_) | SubmitError::KeyReused { .. })) => {
            return Ok(Err(e.to_string()));
        }
        Err(
            SubmitError::StoreUnavailable(p) | SubmitError::NotQueued(p) | SubmitError::Store(p),
        ) => {
            return Err(p.into());
        }
    };
    inbox
        .files
        .put(&format!("{base}.batch"), Bytes::from(task.id.to_string()))
        .await?;
    Ok(Ok(task.id.to_string()))
}

/// One pass over the inbox: new files are submitted, finished batches'
/// tables written beside their files.
pub async fn sweep(inbox: &Inbox<'_>) -> Result<Swept> {
    let mut done = Swept::default();
    let keys = inbox.files.list(inbox.prefix).await?;
    for key in keys.iter().filter(|k| k.ends_with(".jsonl")) {
        let base = key.trim_end_matches(".jsonl");
        let has = |suffix: &str| keys.iter().any(|k| *k == format!("{base}{suffix}"));
        if has(".error.txt") || has(".batch") {
            continue;
        }
        // A link or a special file is refused unread, by its name.
        let size = match inbox.files.size(key).await {
            Ok(size) => size,
            Err(PortError::Invalid(why)) => {
                refuse(inbox, base, &why).await?;
                done.refused += 1;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        // An empty file is one being written (created, its bytes not yet
        // in): a later sweep reads it whole.
        if size == Some(0) {
            continue;
        }
        if let Some(n) = size.filter(|n| *n > MAX_FILE_BYTES) {
            let why = format!("{n} bytes, over the batch inbox's limit of {MAX_FILE_BYTES} bytes");
            refuse(inbox, base, &why).await?;
            done.refused += 1;
            continue;
        }
        match submit(inbox, key, base).await? {
            Ok(_) => done.submitted += 1,
            Err(why) => {
                refuse(inbox, base, &why).await?;
                done.refused += 1;
            }
        }
    }
    done.written = write_finished(inbox.files, inbox.prefix, inbox.tasks, inbox.returns).await?;
    Ok(done)
}

/// The largest batch file read: a 100,000-strategy batch of typical
/// strategies is under half of it.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Writes why a file was refused beside it (`<name>.error.txt`).
async fn refuse(inbox: &Inbox<'_>, base: &str, why: &str) -> Result<()> {
    inbox
        .files
        .put(
            &format!("{base}.error.txt"),
            Bytes::from(format!("{why}\n")),
        )
        .await?;
    Ok(())
}

/// Writes the tables of the inbox's finished batches that have none yet;
/// answers how many it wrote.
pub async fn write_finished(
    files: &dyn BlobStore,
    prefix: &str,
    tasks: &dyn TaskStore,
    returns: Option<&ReturnStore>,
) -> Result<usize> {
    let keys = files.list(prefix).await?;
    let mut written = 0;
    for key in keys.iter().filter(|k| k.ends_with(".batch")) {
        let base = key.trim_end_matches(".batch");
        if keys.iter().any(|k| *k == format!("{base}.results.parquet")) {
            continue;
        }
        let Some(id) = text_of(files, key).await? else {
            continue;
        };
        let Ok(uuid) = id.parse::<uuid::Uuid>() else {
            continue;
        };
        let Some(record) = tasks.get(uuid).await? else {
            continue;
        };
        let s = batch::status(tasks, returns, &record, batch::Rows::Read).await?;
        let Some(rows) = &s.rows else { continue };
        files
            .put(
                &format!("{base}.results.csv"),
                Bytes::from(batch::to_csv(&s.paths, rows)),
            )
            .await?;
        if let Some(st) = &s.statistics {
            let json = serde_json::to_vec_pretty(st).map_err(platform::PortError::internal)?;
            files
                .put(&format!("{base}.statistics.json"), Bytes::from(json))
                .await?;
        }
        // The Parquet table last: its presence marks the file done.
        let parquet = columns::to_parquet_with(table(&s.paths, rows), summary(&s))?;
        files
            .put(&format!("{base}.results.parquet"), parquet)
            .await?;
        written += 1;
    }
    Ok(written)
}

/// After a chunk ends, writes the tables of the file batches it finished,
/// so results appear as soon as the last chunk is in.
pub struct FileResults {
    pub files: std::sync::Arc<dyn BlobStore>,
    pub prefix: String,
    pub tasks: std::sync::Arc<dyn TaskStore>,
    pub returns: Option<ReturnStore>,
}

#[async_trait::async_trait]
impl platform::worker::AfterJob for FileResults {
    async fn finished(&self, task: &platform::tasks::Task) {
        if task.kind != TaskKind::BatchChunk {
            return;
        }
        if let Err(e) = write_finished(
            self.files.as_ref(),
            &self.prefix,
            self.tasks.as_ref(),
            self.returns.as_ref(),
        )
        .await
        {
            tracing::warn!(error = %e, "batch results not written yet");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_strategies() {
        let v = parse_lines("grid", "{\"symbol\": \"SPX\"}\n\n{\"symbol\": \"NDX\"}\n").unwrap();
        assert_eq!(v["strategies"].as_array().unwrap().len(), 2);
        assert_eq!(v["name"], "grid");
        let e = parse_lines("x", "{\"symbol\": \"SPX\"}\nnot json\n").unwrap_err();
        assert!(e.starts_with("line 2"), "{e}");
    }
}
