//! Embedded task store on SQLite. Status changes are single conditional UPDATEs,
//! the same shape as the DynamoDB adapter's condition expressions.

use super::{
    Claim, Created, Finished, IDEMPOTENCY_WINDOW, NewTask, Outcome, Page, Task, TaskFilter,
    TaskPage, TaskStatus, TaskStore,
};
use crate::sqlite::{Database, TIME_FORMAT};
use crate::{PortError, PortResult};
use async_trait::async_trait;
use chrono::{NaiveDateTime, TimeDelta};
use rusqlite::{OptionalExtension, Row, params, params_from_iter, types::Value as SqlValue};
use uuid::Uuid;

pub struct SqliteTaskStore {
    db: Database,
}

impl SqliteTaskStore {
    pub fn new(db: Database) -> Self {
        SqliteTaskStore { db }
    }
}

const COLUMNS: &str = "id, owner, kind, status, params, result, error, attempts, created_at, started_at, finished_at, lease_until, progress";

fn fmt_time(t: NaiveDateTime) -> String {
    t.format(TIME_FORMAT).to_string()
}

fn parse_time(s: Option<String>) -> rusqlite::Result<Option<NaiveDateTime>> {
    s.map(|s| {
        NaiveDateTime::parse_from_str(&s, TIME_FORMAT).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, e.into())
        })
    })
    .transpose()
}

fn conversion(e: impl std::error::Error + Send + Sync + 'static) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
}

fn row_to_task(r: &Row<'_>) -> rusqlite::Result<Task> {
    let (mut task, result) = row_to_task_text(r)?;
    task.result = result
        .map(|s| serde_json::from_str(&s))
        .transpose()
        .map_err(conversion)?;
    Ok(task)
}

/// A row's task with its result left as the stored text.
fn row_to_task_text(r: &Row<'_>) -> rusqlite::Result<(Task, Option<String>)> {
    let id: String = r.get(0)?;
    let kind: String = r.get(2)?;
    let status: String = r.get(3)?;
    let params: String = r.get(4)?;
    let result: Option<String> = r.get(5)?;
    let task = Task {
        id: Uuid::parse_str(&id).map_err(conversion)?,
        owner: r.get(1)?,
        kind: kind.parse().map_err(conversion)?,
        status: status.parse().map_err(conversion)?,
        params: serde_json::from_str(&params).map_err(conversion)?,
        result: None,
        error: r.get(6)?,
        attempts: r.get(7)?,
        created_at: parse_time(r.get(8)?)?.unwrap_or_default(),
        started_at: parse_time(r.get(9)?)?,
        finished_at: parse_time(r.get(10)?)?,
        lease_until: parse_time(r.get(11)?)?,
        progress: r.get(12)?,
    };
    Ok((task, result))
}

fn select_one(conn: &rusqlite::Connection, id: &str) -> rusqlite::Result<Option<Task>> {
    conn.prepare_cached(&format!("SELECT {COLUMNS} FROM tasks WHERE id = ?1"))?
        .query_row([id], row_to_task)
        .optional()
}

fn insert(c: &rusqlite::Connection, t: &Task) -> rusqlite::Result<usize> {
    c.prepare_cached(
        "INSERT INTO tasks (id, owner, kind, status, params, attempts, created_at)
         VALUES (?1, ?2, ?3, 'PENDING', ?4, 0, ?5)",
    )?
    .execute(params![
        t.id.to_string(),
        t.owner,
        t.kind.as_str(),
        t.params.to_string(),
        fmt_time(t.created_at)
    ])
}

/// `WHERE` clause and arguments of an owner's listing.
fn listing_clause(owner: &str, filter: &TaskFilter) -> (String, Vec<SqlValue>) {
    let mut clause = String::from("owner = ?");
    let mut args: Vec<SqlValue> = vec![SqlValue::Text(owner.to_string())];
    if !filter.kinds.is_empty() {
        let marks = vec!["?"; filter.kinds.len()].join(", ");
        clause.push_str(&format!(" AND kind IN ({marks})"));
        args.extend(
            filter
                .kinds
                .iter()
                .map(|k| SqlValue::Text(k.as_str().into())),
        );
    }
    if let Some(s) = filter.status {
        clause.push_str(" AND status = ?");
        args.push(SqlValue::Text(s.as_str().into()));
    }
    (clause, args)
}

#[async_trait]
impl TaskStore for SqliteTaskStore {
    async fn create(&self, new: NewTask) -> Result<Task, PortError> {
        let task = new.into_pending();
        let t = task.clone();
        self.db.run(move |c| insert(c, &t)).await?;
        Ok(task)
    }

    async fn create_idempotent(&self, new: NewTask, key: &str) -> Result<Created, PortError> {
        let task = new.into_pending();
        let key = key.to_string();
        let cutoff = fmt_time(task.created_at - IDEMPOTENCY_WINDOW);
        self.db
            .run(move |c| {
                let tx = c.transaction()?;
                let earlier: Option<String> = tx
                    .query_row(
                        "SELECT task_id FROM idempotency_keys
                         WHERE owner = ?1 AND key = ?2 AND created_at > ?3",
                        params![task.owner, key, cutoff],
                        |r| r.get(0),
                    )
                    .optional()?;
                if let Some(id) = earlier
                    && let Some(t) = select_one(&tx, &id)?
                {
                    return Ok(Created::Existing(t));
                }
                insert(&tx, &task)?;
                tx.prepare_cached(
                    "DELETE FROM idempotency_keys WHERE owner = ?1 AND created_at <= ?2",
                )?
                .execute(params![task.owner, cutoff])?;
                tx.prepare_cached(
                    "INSERT OR REPLACE INTO idempotency_keys (owner, key, task_id, created_at)
                     VALUES (?1, ?2, ?3, ?4)",
                )?
                .execute(params![
                    task.owner,
                    key,
                    task.id.to_string(),
                    fmt_time(task.created_at)
                ])?;
                tx.commit()?;
                Ok(Created::New(task))
            })
            .await
    }

    async fn get(&self, id: Uuid) -> Result<Option<Task>, PortError> {
        let id = id.to_string();
        self.db.read(move |c| select_one(c, &id)).await
    }

    async fn get_with_result_text(
        &self,
        id: Uuid,
    ) -> Result<Option<(Task, Option<String>)>, PortError> {
        let id = id.to_string();
        self.db
            .read(move |c| {
                c.prepare_cached(&format!("SELECT {COLUMNS} FROM tasks WHERE id = ?1"))?
                    .query_row([id], row_to_task_text)
                    .optional()
            })
            .await
    }

    async fn statuses(&self, ids: &[Uuid]) -> Result<Vec<Option<TaskStatus>>, PortError> {
        let ids: Vec<String> = ids.iter().map(Uuid::to_string).collect();
        let found: Vec<Option<String>> = self
            .db
            .run(move |c| {
                let mut stmt = c.prepare_cached("SELECT status FROM tasks WHERE id = ?1")?;
                ids.iter()
                    .map(|id| stmt.query_row([id], |r| r.get(0)).optional())
                    .collect()
            })
            .await?;
        found
            .into_iter()
            .map(|s| s.map(|s| s.parse()).transpose())
            .collect()
    }

    async fn list(&self, owner: &str, filter: &TaskFilter, page: Page) -> PortResult<TaskPage> {
        let Page { limit, offset } = page;
        let (clause, args) = listing_clause(owner, filter);
        let (count_clause, count_args) = listing_clause(owner, filter);
        // A status filter walks the owner's tasks of that status only.
        let index = if filter.status.is_some() {
            "tasks_by_owner_status"
        } else {
            "tasks_by_owner_created"
        };
        self.db
            .run(move |c| {
                // The total from the trigger-kept counts; the page walks the
                // (owner, created) index newest first and stops after it.
                let total: i64 = c
                    .prepare_cached(&format!(
                        "SELECT COALESCE(SUM(n), 0) FROM task_counts WHERE {count_clause}"
                    ))?
                    .query_row(params_from_iter(count_args.iter()), |r| r.get(0))?;
                let mut page_args = args;
                page_args.push(SqlValue::Integer(limit as i64));
                page_args.push(SqlValue::Integer(offset as i64));
                let mut stmt = c.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM tasks INDEXED BY {index}
                     WHERE {clause} ORDER BY created_at DESC, seq DESC LIMIT ? OFFSET ?"
                ))?;
                let tasks = stmt
                    .query_map(params_from_iter(page_args.iter()), row_to_task)?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                Ok(TaskPage {
                    tasks,
                    total: total.max(0) as u64,
                })
            })
            .await
    }

    async fn claim(&self, id: Uuid, now: NaiveDateTime, lease: TimeDelta) -> PortResult<Claim> {
        let id = id.to_string();
        let (now_s, until_s) = (fmt_time(now), fmt_time(now + lease));
        self.db
            .run(move |c| {
                let changed = c
                    .prepare_cached(
                        "UPDATE tasks SET status = 'RUNNING', attempts = attempts + 1,
                         started_at = ?2, lease_until = ?3, progress = NULL
                     WHERE id = ?1 AND (status = 'PENDING'
                         OR (status = 'RUNNING' AND (lease_until IS NULL OR lease_until < ?2)))",
                    )?
                    .execute(params![id, now_s, until_s])?;
                let task = select_one(c, &id)?;
                Ok(match (changed, task) {
                    (_, None) => Claim::Missing,
                    (1, Some(t)) => Claim::Claimed(Box::new(t)),
                    (_, Some(t)) if t.status.is_finished() => Claim::Finished,
                    _ => Claim::Busy,
                })
            })
            .await
    }

    async fn finish(&self, id: Uuid, done: Finished) -> PortResult<Option<Task>> {
        let (attempt, outcome, now) = (done.attempt, done.outcome, done.at);
        let id = id.to_string();
        let (status, kept, result, error) = match outcome {
            Outcome::Success(v) => {
                let text = v.to_string();
                ("SUCCESS", Some(v), Some(text), None)
            }
            Outcome::Failed(m) => ("FAILED", None, None, Some(m)),
        };
        let now_s = fmt_time(now);
        // The stored task comes back from the update itself, its result the
        // value just written rather than its text parsed again (a batch
        // chunk's rows): the outcome is announced that much sooner.
        let stored = self
            .db
            .run(move |c| {
                c.prepare_cached(
                    "UPDATE tasks SET status = ?3, result = ?4, error = ?5, finished_at = ?6,
                         lease_until = NULL, progress = NULL
                     WHERE id = ?1 AND status = 'RUNNING' AND attempts = ?2
                     RETURNING id, owner, kind, status, params, NULL, error, attempts,
                         created_at, started_at, finished_at, lease_until, progress",
                )?
                .query_row(
                    params![id, attempt, status, result, error, now_s],
                    row_to_task,
                )
                .optional()
            })
            .await?;
        Ok(stored.map(|task| Task {
            result: kept,
            ..task
        }))
    }

    async fn release(&self, id: Uuid, attempt: u32) -> Result<bool, PortError> {
        let id = id.to_string();
        self.db
            .run(move |c| {
                c.prepare_cached(
                    "UPDATE tasks SET status = 'PENDING', lease_until = NULL
                     WHERE id = ?1 AND status = 'RUNNING' AND attempts = ?2",
                )?
                .execute(params![id, attempt])
                .map(|n| n == 1)
            })
            .await
    }

    async fn set_progress(&self, id: Uuid, attempt: u32, percent: u8) -> Result<bool, PortError> {
        let id = id.to_string();
        self.db
            .run(move |c| {
                c.prepare_cached(
                    "UPDATE tasks SET progress = ?3
                     WHERE id = ?1 AND status = 'RUNNING' AND attempts = ?2",
                )?
                .execute(params![id, attempt, percent.min(100)])
                .map(|n| n == 1)
            })
            .await
    }

    async fn renew(&self, id: Uuid, attempt: u32, until: NaiveDateTime) -> Result<bool, PortError> {
        let (id, until) = (id.to_string(), fmt_time(until));
        self.db
            .run(move |c| {
                c.prepare_cached(
                    "UPDATE tasks SET lease_until = ?3
                     WHERE id = ?1 AND status = 'RUNNING' AND attempts = ?2",
                )?
                .execute(params![id, attempt, until])
                .map(|n| n == 1)
            })
            .await
    }

    async fn unfinished(&self) -> Result<Vec<Task>, PortError> {
        self.db
            .run(|c| {
                let mut stmt = c.prepare(&format!(
                    "SELECT {COLUMNS} FROM tasks WHERE status IN ('PENDING', 'RUNNING') ORDER BY seq"
                ))?;
                stmt.query_map([], row_to_task)?.collect()
            })
            .await
    }

    async fn count_end(&self, id: Uuid, child: Uuid) -> Result<(), PortError> {
        let (id, child) = (id.to_string(), child.to_string());
        self.db
            .run(move |c| {
                c.prepare_cached("INSERT OR IGNORE INTO task_ends (id, child) VALUES (?1, ?2)")?
                    .execute([id, child])
                    .map(drop)
            })
            .await
    }

    async fn ends(&self, id: Uuid) -> Result<u64, PortError> {
        let id = id.to_string();
        let n: i64 = self
            .db
            .read(move |c| {
                c.prepare_cached("SELECT count(*) FROM task_ends WHERE id = ?1")?
                    .query_row([id], |r| r.get(0))
            })
            .await?;
        Ok(n.max(0) as u64)
    }
}
