//! Task store on DynamoDB: one item per task keyed by `id`, a GSI `by_owner`
//! (owner, created; projecting only kind and status) for an owner's tasks
//! newest first, conditional updates for every status change, and
//! idempotency keys as items `idem#...`, claimed by a conditional write
//! before the task they name is stored, and the outcomes counted to a
//! task as items `ends#...`.

use crate::{S3Blobs, conditional, sdk_error};
use async_trait::async_trait;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{AttributeValue, KeysAndAttributes, ReturnValue, Select};
use chrono::{NaiveDateTime, TimeDelta};
use platform::marketdata::BlobStore;
use platform::tasks::{
    Claim, Created, Finished, IDEMPOTENCY_WINDOW, NewTask, Outcome, Page, Task, TaskFilter,
    TaskPage, TaskStatus, TaskStore,
};
use platform::{PortError, PortResult};
use std::collections::HashMap;
use uuid::Uuid;

mod item;
mod outcome;
use item::{
    Item, Lost, corrupt, ends_item_id, filter_parts, from_item, key_item_id, n, s, status_of, time,
    to_item,
};
pub use platform::tasks::DAMAGED;

pub const OWNER_INDEX: &str = "by_owner";

/// Params or results larger than this go to S3 and the item keeps a
/// reference. Inline, every write of the item pays a write unit per KB of
/// it, every read a unit per 4 KB; past 8 KB one S3 PUT and GET cost less
/// (docs/deploy.md#cost). Items stop at 400 KB anyway.
pub const SPILL_BYTES: usize = 8 * 1024;

pub struct DynamoTaskStore {
    client: Client,
    table: String,
    spill: S3Blobs,
    /// When set, finished tasks get `expires_at` (epoch seconds) for DynamoDB TTL.
    ttl: Option<TimeDelta>,
}

/// The condition of every write by a RUNNING attempt (`:running`, `:attempt`).
const RUNNING_ATTEMPT: &str = "#status = :running AND attempts = :attempt";

impl DynamoTaskStore {
    /// An update of the task's RUNNING attempt `attempt`; false when the
    /// task is no longer that attempt's.
    async fn update_running(
        &self,
        id: Uuid,
        attempt: u32,
        expression: &str,
        (name, value): (&str, AttributeValue),
        what: &str,
    ) -> Result<bool, PortError> {
        let out = self
            .client
            .update_item()
            .table_name(&self.table)
            .key("id", s(id.to_string()))
            .update_expression(expression)
            .condition_expression(RUNNING_ATTEMPT)
            .expression_attribute_names("#status", "status")
            .expression_attribute_values(name, value)
            .expression_attribute_values(":running", s("RUNNING"))
            .expression_attribute_values(":attempt", n(attempt))
            .send()
            .await;
        crate::written(out, what)
    }

    /// `spill` is the bucket that holds oversized params and results.
    pub fn new(client: Client, table: impl Into<String>, spill: S3Blobs) -> Self {
        DynamoTaskStore {
            client,
            table: table.into(),
            spill,
            ttl: None,
        }
    }

    pub fn with_ttl(mut self, ttl: Option<TimeDelta>) -> Self {
        self.ttl = ttl;
        self
    }

    /// The JSON text, or a reference to an S3 object holding it when too large.
    async fn store_json(
        &self,
        id: Uuid,
        what: &str,
        json: String,
    ) -> Result<(&'static str, String), PortError> {
        if json.len() <= SPILL_BYTES {
            return Ok(("inline", json));
        }
        let key = format!("tasks/{id}/{what}.json");
        self.spill.put(&key, bytes::Bytes::from(json)).await?;
        Ok(("ref", key))
    }

    /// Reads back spilled values into the item so `from_item` sees them
    /// inline; a spilled object that is gone or not text is damage, not an
    /// outage.
    async fn load_spilled(&self, mut item: Item) -> Result<(Item, Vec<Lost>), PortError> {
        let mut lost = Vec::new();
        for field in ["params", "result"] {
            if let Some(key) = item
                .get(&format!("{field}_ref"))
                .and_then(|v| v.as_s().ok())
                .cloned()
            {
                let Some(data) = self.spill.get(&key).await? else {
                    lost.push((field, format!("{field} object {key} is missing")));
                    continue;
                };
                let Ok(text) = String::from_utf8(data.to_vec()) else {
                    lost.push((field, format!("{field} object {key} is not text")));
                    continue;
                };
                item.insert(field.into(), s(text));
            }
        }
        Ok((item, lost))
    }

    /// The task of an item, `None` (logged) when its id cannot be read.
    async fn task(&self, item: &Item) -> Result<Option<Task>, PortError> {
        let (item, lost) = self.load_spilled(item.clone()).await?;
        Ok(from_item(&item, &lost))
    }

    /// The item of a new task, its params spilled to S3 when too large.
    async fn new_item(&self, task: &Task) -> Result<Item, PortError> {
        let mut item = to_item(task);
        if let ("ref", key) = self
            .store_json(task.id, "params", task.params.to_string())
            .await?
        {
            item.remove("params");
            item.insert("params_ref".into(), s(key));
        }
        Ok(item)
    }

    /// An unexpired idempotency key: the task id it names and when it was
    /// claimed (epoch ms).
    async fn read_key(&self, key_id: &str, now_s: i64) -> Result<Option<(Uuid, i64)>, PortError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .key("id", s(key_id))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| sdk_error("read idempotency key", e))?;
        let Some(item) = out.item() else {
            return Ok(None);
        };
        let number = |k: &str| {
            item.get(k)
                .and_then(|v| v.as_n().ok())
                .and_then(|v| v.parse::<i64>().ok())
                .unwrap_or(0)
        };
        let task_id = item
            .get("task_id")
            .and_then(|v| v.as_s().ok())
            .and_then(|v| Uuid::parse_str(v).ok());
        Ok(task_id
            .filter(|_| number("expires_at") >= now_s)
            .map(|id| (id, number("claimed_ms"))))
    }

    /// Points the key at `task` if `condition` holds; false when it does not.
    async fn claim_key(
        &self,
        key_id: &str,
        task: &Task,
        now_ms: i64,
        condition: &str,
        value: (&str, AttributeValue),
    ) -> Result<bool, PortError> {
        let expires = (task.created_at + IDEMPOTENCY_WINDOW).and_utc().timestamp();
        let put = self
            .client
            .put_item()
            .table_name(&self.table)
            .item("id", s(key_id))
            .item("task_id", s(task.id.to_string()))
            .item("claimed_ms", n(now_ms))
            .item("expires_at", n(expires))
            .condition_expression(condition)
            .expression_attribute_values(value.0, value.1)
            .send()
            .await;
        crate::written(put, "claim an idempotency key")
    }

    /// The items of `ids` by id (BatchGetItem, 100 keys a call); with
    /// `status_only` just their id and status.
    async fn items(
        &self,
        ids: &[String],
        status_only: bool,
    ) -> Result<HashMap<String, Item>, PortError> {
        let mut found: HashMap<String, Item> = HashMap::new();
        for chunk in ids.chunks(100) {
            let keys: Vec<Item> = chunk
                .iter()
                .map(|id| HashMap::from([("id".to_string(), s(id))]))
                .collect();
            let mut request = Some({
                let mut k = KeysAndAttributes::builder()
                    .set_keys(Some(keys))
                    .consistent_read(true);
                if status_only {
                    k = k
                        .projection_expression("id, #status")
                        .expression_attribute_names("#status", "status");
                }
                k.build().map_err(PortError::internal)?
            });
            while let Some(r) = request.take() {
                let out = self
                    .client
                    .batch_get_item()
                    .request_items(&self.table, r)
                    .send()
                    .await
                    .map_err(|e| sdk_error("read a page of tasks", e))?;
                for item in out
                    .responses()
                    .and_then(|m| m.get(&self.table))
                    .into_iter()
                    .flatten()
                {
                    if let Some(id) = item.get("id").and_then(|v| v.as_s().ok()) {
                        found.insert(id.clone(), item.clone());
                    }
                }
                request = out
                    .unprocessed_keys()
                    .and_then(|m| m.get(&self.table))
                    .filter(|k| !k.keys().is_empty())
                    .cloned();
            }
        }
        Ok(found)
    }

    /// Whole items for `ids`, in that order (BatchGetItem, 100 keys a call).
    async fn fetch(&self, ids: &[String]) -> Result<Vec<Task>, PortError> {
        let found = self.items(ids, false).await?;
        let mut tasks = Vec::with_capacity(ids.len());
        for id in ids {
            // A task deleted (expired) between the index read and now is
            // skipped; a damaged one lists FAILED, and one whose id cannot
            // be read is left out with a log line.
            if let Some(item) = found.get(id) {
                tasks.extend(self.task(item).await?);
            }
        }
        Ok(tasks)
    }
}

#[async_trait]
impl TaskStore for DynamoTaskStore {
    async fn create(&self, new: NewTask) -> Result<Task, PortError> {
        let task = new.into_pending();
        let item = self.new_item(&task).await?;
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(id)")
            .send()
            .await
            .map_err(|e| sdk_error("create task", e))?;
        Ok(task)
    }

    async fn create_idempotent(&self, new: NewTask, key: &str) -> Result<Created, PortError> {
        // The key is claimed first (a conditional put), then the task stored.
        // A key whose task is missing is a creator still at work, or one that
        // died in between: after STALE_KEY_MS the key is taken over.
        const STALE_KEY_MS: i64 = 10_000;
        let key_id = key_item_id(&new.owner, key);
        for _ in 0..40 {
            let now_ms = chrono::Utc::now().timestamp_millis();
            let claimed = match self.read_key(&key_id, now_ms / 1000).await? {
                Some((task_id, claimed_ms)) => {
                    if let Some(t) = self.get(task_id).await? {
                        return Ok(Created::Existing(t));
                    }
                    if now_ms - claimed_ms < STALE_KEY_MS {
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                    let task = new.clone().into_pending();
                    let stale = (":stale", s(task_id.to_string()));
                    let won = self
                        .claim_key(&key_id, &task, now_ms, "task_id = :stale", stale)
                        .await?;
                    won.then_some(task)
                }
                None => {
                    let task = new.clone().into_pending();
                    let now = (":now", n(now_ms / 1000));
                    let won = self
                        .claim_key(
                            &key_id,
                            &task,
                            now_ms,
                            "attribute_not_exists(id) OR expires_at < :now",
                            now,
                        )
                        .await?;
                    won.then_some(task)
                }
            };
            if let Some(task) = claimed {
                self.client
                    .put_item()
                    .table_name(&self.table)
                    .set_item(Some(self.new_item(&task).await?))
                    .condition_expression("attribute_not_exists(id)")
                    .send()
                    .await
                    .map_err(|e| sdk_error("create task", e))?;
                return Ok(Created::New(task));
            }
        }
        Err(PortError::unavailable(
            "a submit with this idempotency key is still being stored; retry shortly",
        ))
    }

    async fn statuses(&self, ids: &[Uuid]) -> Result<Vec<Option<TaskStatus>>, PortError> {
        let keys: Vec<String> = ids.iter().map(Uuid::to_string).collect();
        let found = self.items(&keys, true).await?;
        Ok(keys
            .iter()
            .map(|id| found.get(id).map(|i| status_of(id, i.get("status"))))
            .collect())
    }

    async fn get(&self, id: Uuid) -> Result<Option<Task>, PortError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .key("id", s(id.to_string()))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| sdk_error("get task", e))?;
        match out.item() {
            Some(i) => self.task(i).await,
            None => Ok(None),
        }
    }

    async fn list(&self, owner: &str, filter: &TaskFilter, page: Page) -> PortResult<TaskPage> {
        let Page { limit, offset } = page;
        let (expr, names, mut values) = filter_parts(filter);
        values.insert(":o".into(), s(owner));
        let query = |count_only: bool| {
            let mut q = self
                .client
                .query()
                .table_name(&self.table)
                .index_name(OWNER_INDEX)
                .key_condition_expression("#owner = :o")
                .expression_attribute_names("#owner", "owner")
                .set_expression_attribute_values(Some(values.clone()))
                .scan_index_forward(false);
            if count_only {
                q = q.select(Select::Count);
            }
            if let Some(e) = &expr {
                q = q.filter_expression(e);
                for (alias, name) in &names {
                    q = q.expression_attribute_names(*alias, *name);
                }
            }
            q
        };
        // The index holds keys, kind and status only: walk it newest first,
        // note the page's ids, count the rest without reading items, then
        // fetch just the page's items whole.
        let want = offset as u64 + limit as u64;
        let (mut ids, mut total, mut start) = (Vec::new(), 0u64, None);
        loop {
            let count_only = total >= want;
            let out = query(count_only)
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| sdk_error("list tasks", e))?;
            if count_only {
                total += out.count().max(0) as u64;
            } else {
                for item in out.items() {
                    if total >= offset as u64
                        && (ids.len() as u64) < limit as u64
                        && let Some(id) = item.get("id").and_then(|v| v.as_s().ok())
                    {
                        ids.push(id.clone());
                    }
                    total += 1;
                }
            }
            match out.last_evaluated_key() {
                Some(k) if !k.is_empty() => start = Some(k.clone()),
                _ => break,
            }
        }
        Ok(TaskPage {
            tasks: self.fetch(&ids).await?,
            total,
        })
    }

    async fn claim(&self, id: Uuid, now: NaiveDateTime, lease: TimeDelta) -> PortResult<Claim> {
        let out = self
            .client
            .update_item()
            .table_name(&self.table)
            .key("id", s(id.to_string()))
            .update_expression("SET #status = :running, attempts = attempts + :one, started_at = :now, lease_until = :until REMOVE progress")
            .condition_expression("attribute_exists(id) AND (#status = :pending OR (#status = :running AND (attribute_not_exists(lease_until) OR lease_until < :now)))")
            .expression_attribute_names("#status", "status")
            .expression_attribute_values(":running", s("RUNNING"))
            .expression_attribute_values(":pending", s("PENDING"))
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":now", s(time(now)))
            .expression_attribute_values(":until", s(time(now + lease)))
            .return_values(ReturnValue::AllNew)
            .send()
            .await;
        match out {
            Ok(o) => {
                let item = o
                    .attributes()
                    .ok_or_else(|| corrupt("no attributes returned"))?;
                let task = self
                    .task(item)
                    .await?
                    .ok_or_else(|| corrupt("a claimed task's id is unreadable"))?;
                if task.damage.is_none() {
                    return Ok(Claim::Claimed(Box::new(task)));
                }
                // Damaged: no job can run it, so this attempt fails it for
                // good rather than leave it to be delivered again.
                let failed = Finished {
                    attempt: task.attempts,
                    outcome: Outcome::Failed(task.error.unwrap_or_default()),
                    at: now,
                };
                self.finish(id, failed).await?;
                Ok(Claim::Finished)
            }
            Err(e) if conditional(&e) => Ok(match self.get(id).await? {
                None => Claim::Missing,
                Some(t) if t.status.is_finished() => Claim::Finished,
                Some(_) => Claim::Busy,
            }),
            // An update the item's own types refuse (`attempts` not a
            // number): a damaged task, ended as it stands.
            Err(e) => match self.get(id).await {
                Ok(Some(t)) if t.damage.is_some() => Ok(Claim::Finished),
                _ => Err(sdk_error("claim task", e)),
            },
        }
    }

    async fn finish(&self, id: Uuid, done: Finished) -> PortResult<Option<Task>> {
        self.finish_counted(id, done, &[]).await
    }

    /// Counts to other tasks (a chunk's to its batch, whose readers wait on
    /// it) are written with the outcome, in one transaction: a reader sees
    /// both or neither, one request sooner. A task's own count follows the
    /// outcome, before the task is read back (a large params object is one
    /// more S3 read).
    async fn finish_counted(
        &self,
        id: Uuid,
        done: Finished,
        count_to: &[Uuid],
    ) -> PortResult<Option<Task>> {
        let others: Vec<Uuid> = count_to.iter().copied().filter(|&to| to != id).collect();
        let Some(item) = self.write_outcome(id, done, &others).await? else {
            return Ok(None);
        };
        if count_to.contains(&id) {
            platform::tasks::uncounted(self.count_end(id, id).await, id);
        }
        self.task(&item).await
    }

    async fn release(&self, id: Uuid, attempt: u32) -> Result<bool, PortError> {
        self.update_running(
            id,
            attempt,
            "SET #status = :pending REMOVE lease_until",
            (":pending", s("PENDING")),
            "release task",
        )
        .await
    }

    async fn set_progress(&self, id: Uuid, attempt: u32, percent: u8) -> Result<bool, PortError> {
        self.update_running(
            id,
            attempt,
            "SET progress = :progress",
            (":progress", n(percent.min(100))),
            "record task progress",
        )
        .await
    }

    async fn renew(&self, id: Uuid, attempt: u32, until: NaiveDateTime) -> Result<bool, PortError> {
        self.update_running(
            id,
            attempt,
            "SET lease_until = :until",
            (":until", s(time(until))),
            "renew task lease",
        )
        .await
    }

    async fn unfinished(&self) -> Result<Vec<Task>, PortError> {
        let scan = self
            .client
            .scan()
            .table_name(&self.table)
            .filter_expression("#status IN (:p, :r)")
            .expression_attribute_names("#status", "status")
            .expression_attribute_values(":p", s("PENDING"))
            .expression_attribute_values(":r", s("RUNNING"))
            .consistent_read(true);
        let mut out = Vec::new();
        for item in crate::scan_all(scan, "scan unfinished tasks").await? {
            out.extend(self.task(&item).await?);
        }
        out.sort_by_key(|t| (t.created_at, t.id));
        Ok(out)
    }

    async fn count_end(&self, id: Uuid, child: Uuid) -> Result<(), PortError> {
        let u = self
            .count_update(id, child)
            .build()
            .map_err(|e| PortError::internal(format!("count a task's outcome: {e}")))?;
        self.client
            .update_item()
            .table_name(u.table_name)
            .set_key(Some(u.key))
            .update_expression(u.update_expression)
            .set_expression_attribute_values(u.expression_attribute_values)
            .send()
            .await
            .map_err(|e| sdk_error("count a task's outcome", e))?;
        Ok(())
    }

    async fn ends(&self, id: Uuid) -> Result<u64, PortError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .key("id", s(ends_item_id(id)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| sdk_error("read a task's outcomes", e))?;
        Ok(out
            .item()
            .and_then(|i| i.get("children"))
            .and_then(|v| v.as_ss().ok())
            .map_or(0, |c| c.len() as u64))
    }
}
