//! Embedded task store on SQLite. Status changes are single conditional UPDATEs,
//! the same shape as the DynamoDB adapter's condition expressions.

use super::{
    Claim, Created, Field, Finished, IDEMPOTENCY_WINDOW, NewTask, Outcome, Page, Task, TaskFilter,
    TaskKind, TaskPage, TaskReader, TaskStatus, TaskStore, unreadable_id,
};
use crate::sqlite::{Database, TIME_FORMAT};
use crate::{PortError, PortResult};
use async_trait::async_trait;
use chrono::{NaiveDateTime, TimeDelta};
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{OptionalExtension, Row, params, params_from_iter};
use uuid::Uuid;

pub struct SqliteTaskStore {
    db: Database,
}

impl SqliteTaskStore {
    pub fn new(db: Database) -> Self {
        SqliteTaskStore { db }
    }
}

/// The columns a task is read from, its row number last (the key a row
/// without a readable id is logged by).
const COLUMNS: &str = "id, owner, kind, status, params, result, error, attempts, created_at, started_at, finished_at, lease_until, progress, seq";

fn fmt_time(t: NaiveDateTime) -> String {
    t.format(TIME_FORMAT).to_string()
}

/// A column's value as a task field.
fn field(v: ValueRef<'_>) -> Field<'_> {
    match v {
        ValueRef::Null => Field::Missing,
        ValueRef::Integer(n) => Field::Number(n.to_string().into()),
        ValueRef::Real(x) => Field::Number(x.to_string().into()),
        ValueRef::Text(t) => {
            std::str::from_utf8(t).map_or(Field::Other("text that is not UTF-8"), Field::Text)
        }
        ValueRef::Blob(_) => Field::Other("binary"),
    }
}

fn row_to_task(r: &Row<'_>) -> rusqlite::Result<Option<Task>> {
    read_row(r, true).map(|t| t.map(|(t, _)| t))
}

/// A row's task, its result parsed (`parse_result`) or left as the stored
/// text; a damaged row reads FAILED ([`TaskReader`]), and one without a
/// readable id as `None`, logged.
fn read_row(r: &Row<'_>, parse_result: bool) -> rusqlite::Result<Option<(Task, Option<String>)>> {
    let (id, key) = match field(r.get_ref(0)?) {
        Field::Text(s) => (Uuid::parse_str(s).ok(), s.to_string()),
        _ => (None, format!("tasks row {}", r.get::<_, i64>(13)?)),
    };
    let Some(id) = id else {
        unreadable_id(&key, "id is not a task id");
        return Ok(None);
    };
    let mut read = TaskReader::new();
    let owner = read.owner(field(r.get_ref(1)?));
    let kind = read.kind(field(r.get_ref(2)?));
    let status = read.status(field(r.get_ref(3)?));
    let params = read
        .json("params", field(r.get_ref(4)?), true)
        .unwrap_or_default();
    let (result, text) = if parse_result {
        (read.json("result", field(r.get_ref(5)?), false), None)
    } else {
        (None, read.optional_string("result", field(r.get_ref(5)?)))
    };
    let error = read.optional_string("error", field(r.get_ref(6)?));
    let attempts = read.number("attempts", field(r.get_ref(7)?)).unwrap_or(0);
    let mut time = |name: &str, i: usize, required: bool| -> rusqlite::Result<_> {
        Ok(read.time(name, field(r.get_ref(i)?), TIME_FORMAT, required))
    };
    let created_at = time("created_at", 8, true)?.unwrap_or_default();
    let started_at = time("started_at", 9, false)?;
    let finished_at = time("finished_at", 10, false)?;
    let lease_until = time("lease_until", 11, false)?;
    let progress = read.number("progress", field(r.get_ref(12)?));
    let task = Task {
        id,
        owner,
        kind,
        status,
        params,
        result,
        error,
        attempts,
        created_at,
        started_at,
        finished_at,
        lease_until,
        progress,
        damage: None,
    };
    let damaged = read.damage().is_some();
    let task = read.finish(task, &key);
    Ok(Some((task, text.filter(|_| !damaged))))
}

fn select_one(conn: &rusqlite::Connection, id: &str) -> rusqlite::Result<Option<Task>> {
    Ok(conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM tasks WHERE id = ?1"))?
        .query_row([id], row_to_task)
        .optional()?
        .flatten())
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

/// `SQL IN` list of every kind as stored: a kind outside it is damage.
fn known_kinds() -> String {
    TaskKind::ALL
        .iter()
        .map(|k| format!("'{}'", k.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The statuses a row may hold; any other is damage.
const KNOWN_STATUSES: &str = "'PENDING', 'RUNNING', 'SUCCESS', 'FAILED'";

/// `WHERE` clause and arguments of an owner's listing. A row whose kind
/// is damaged is of every kind; with `damaged_statuses`, a row whose
/// status is damaged is FAILED.
fn listing_clause(
    owner: &str,
    filter: &TaskFilter,
    damaged_statuses: bool,
) -> (String, Vec<SqlValue>) {
    let mut clause = String::from("owner = ?");
    let mut args: Vec<SqlValue> = vec![SqlValue::Text(owner.to_string())];
    if !filter.kinds.is_empty() {
        let marks = vec!["?"; filter.kinds.len()].join(", ");
        clause.push_str(&format!(
            " AND (kind IN ({marks}) OR kind NOT IN ({}))",
            known_kinds()
        ));
        args.extend(
            filter
                .kinds
                .iter()
                .map(|k| SqlValue::Text(k.as_str().into())),
        );
    }
    match filter.status {
        Some(TaskStatus::Failed) if damaged_statuses => {
            clause.push_str(&format!(
                " AND (status = 'FAILED' OR status NOT IN ({KNOWN_STATUSES}))"
            ));
        }
        Some(s) => {
            clause.push_str(" AND status = ?");
            args.push(SqlValue::Text(s.as_str().into()));
        }
        None => {}
    }
    (clause, args)
}

/// Whether any of `owner`'s rows holds a damaged status (from the
/// trigger-kept counts, which follow every status write).
fn has_damaged_statuses(c: &rusqlite::Connection, owner: &str) -> rusqlite::Result<bool> {
    c.prepare_cached(&format!(
        "SELECT EXISTS (SELECT 1 FROM task_counts
         WHERE owner = ?1 AND n > 0 AND status NOT IN ({KNOWN_STATUSES}))"
    ))?
    .query_row([owner], |r| r.get(0))
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
                Ok(
                    c.prepare_cached(&format!("SELECT {COLUMNS} FROM tasks WHERE id = ?1"))?
                        .query_row([id], |r| read_row(r, false))
                        .optional()?
                        .flatten(),
                )
            })
            .await
    }

    async fn statuses(&self, ids: &[Uuid]) -> Result<Vec<Option<TaskStatus>>, PortError> {
        let ids: Vec<String> = ids.iter().map(Uuid::to_string).collect();
        self.db
            .run(move |c| {
                let mut stmt = c.prepare_cached("SELECT status FROM tasks WHERE id = ?1")?;
                ids.iter()
                    .map(|id| {
                        stmt.query_row([id], |r| {
                            let mut read = TaskReader::new();
                            let status = read.status(field(r.get_ref(0)?));
                            if let Some(d) = read.damage() {
                                tracing::error!(key = %id, damage = %d, "task item damaged: its status reads as FAILED");
                            }
                            Ok(status)
                        })
                        .optional()
                    })
                    .collect()
            })
            .await
    }

    async fn list(&self, owner: &str, filter: &TaskFilter, page: Page) -> PortResult<TaskPage> {
        let Page { limit, offset } = page;
        let (owner, filter) = (owner.to_string(), filter.clone());
        self.db
            .run(move |c| {
                // A FAILED filter takes in damaged statuses only when there
                // are some: the clause for them walks all the owner's tasks.
                let damaged =
                    filter.status == Some(TaskStatus::Failed) && has_damaged_statuses(c, &owner)?;
                let (clause, args) = listing_clause(&owner, &filter, damaged);
                // A status filter walks the owner's tasks of that status only.
                let index = if filter.status.is_some() && !damaged {
                    "tasks_by_owner_status"
                } else {
                    "tasks_by_owner_created"
                };
                // The total from the trigger-kept counts; the page walks the
                // (owner, created) index newest first and stops after it.
                let total: i64 = c
                    .prepare_cached(&format!(
                        "SELECT COALESCE(SUM(n), 0) FROM task_counts WHERE {clause}"
                    ))?
                    .query_row(params_from_iter(args.iter()), |r| r.get(0))?;
                let mut page_args = args;
                page_args.push(SqlValue::Integer(limit as i64));
                page_args.push(SqlValue::Integer(offset as i64));
                let mut stmt = c.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM tasks INDEXED BY {index}
                     WHERE {clause} ORDER BY created_at DESC, seq DESC LIMIT ? OFFSET ?"
                ))?;
                let tasks = stmt
                    .query_map(params_from_iter(page_args.iter()), row_to_task)?
                    .filter_map(Result::transpose)
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
                // Attempts that are not a number cannot be counted: the
                // task is damaged and not claimed (DynamoDB refuses the
                // same update).
                let changed = c
                    .prepare_cached(
                        "UPDATE tasks SET status = 'RUNNING', attempts = attempts + 1,
                         started_at = ?2, lease_until = ?3, progress = NULL
                     WHERE id = ?1 AND typeof(attempts) = 'integer' AND (status = 'PENDING'
                         OR (status = 'RUNNING' AND (lease_until IS NULL OR lease_until < ?2)))",
                    )?
                    .execute(params![id, now_s, until_s])?;
                let task = select_one(c, &id)?;
                Ok(match (changed, task) {
                    (_, None) => Claim::Missing,
                    // Damaged: no job can run it, so this claim fails it
                    // for good rather than leave it to be delivered again.
                    (1, Some(t)) if t.damage.is_some() => {
                        c.prepare_cached(
                            "UPDATE tasks SET status = 'FAILED', error = ?2, finished_at = ?3,
                                 lease_until = NULL, progress = NULL
                             WHERE id = ?1 AND status = 'RUNNING'",
                        )?
                        .execute(params![id, t.error, now_s])?;
                        Claim::Finished
                    }
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
                         created_at, started_at, finished_at, lease_until, progress, seq",
                )?
                .query_row(
                    params![id, attempt, status, result, error, now_s],
                    row_to_task,
                )
                .optional()
                .map(Option::flatten)
            })
            .await?;
        Ok(stored.map(|task| match task.damage {
            Some(_) => task,
            None => Task {
                result: kept,
                ..task
            },
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

    /// A damaged task among them reads FAILED; delivered again, its claim
    /// ends it.
    async fn unfinished(&self) -> Result<Vec<Task>, PortError> {
        self.db
            .run(|c| {
                let mut stmt = c.prepare(&format!(
                    "SELECT {COLUMNS} FROM tasks WHERE status IN ('PENDING', 'RUNNING') ORDER BY seq"
                ))?;
                stmt.query_map([], row_to_task)?
                    .filter_map(Result::transpose)
                    .collect()
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
