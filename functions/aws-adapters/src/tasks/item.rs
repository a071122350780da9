//! A task as a DynamoDB item and back: attribute encoding, the reading of
//! damaged items, and the filter expressions of a listing.

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::NaiveDateTime;
use platform::PortError;
use platform::tasks::{Task, TaskFilter, TaskStatus};
use std::collections::HashMap;
use uuid::Uuid;

const TIME: &str = "%Y-%m-%dT%H:%M:%S%.6f";

pub(super) type Item = HashMap<String, AttributeValue>;

/// The item id of an owner's idempotency key (length-prefixed, so no owner
/// and key pair can spell another's).
pub(super) fn key_item_id(owner: &str, key: &str) -> String {
    format!("idem#{}#{owner}#{key}", owner.len())
}

/// The item id of the outcomes counted to a task (`TaskStore::count_end`):
/// the set of children counted, apart from the task's own item, which may
/// be large, so a long-poll's frequent read costs a read unit per 100
/// chunks counted (one for a task).
pub(super) fn ends_item_id(id: uuid::Uuid) -> String {
    format!("ends#{id}")
}

/// How long a count of outcomes is kept: long past any long-poll on it.
pub(super) const ENDS_KEPT: chrono::TimeDelta = chrono::TimeDelta::days(1);

pub(super) fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

pub(super) fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

pub(super) fn time(t: NaiveDateTime) -> String {
    t.format(TIME).to_string()
}

pub(super) fn to_item(t: &Task) -> Item {
    let mut i = Item::new();
    i.insert("id".into(), s(t.id.to_string()));
    i.insert("owner".into(), s(&t.owner));
    i.insert("kind".into(), s(t.kind.as_str()));
    i.insert("status".into(), s(t.status.as_str()));
    i.insert("params".into(), s(t.params.to_string()));
    i.insert("attempts".into(), n(t.attempts));
    i.insert("created_at".into(), s(time(t.created_at)));
    // Sorts an owner's tasks by creation, the id breaking ties.
    i.insert(
        "created".into(),
        s(format!("{}#{}", time(t.created_at), t.id)),
    );
    i
}

pub(super) fn corrupt(what: &str) -> PortError {
    PortError::internal(format!("task item: {what}"))
}

/// What the owner of a damaged task item reads as its error.
pub const DAMAGED: &str = "the stored task is damaged and cannot run; submit it again";

/// A task from its item. Without a readable id, owner, kind and creation
/// time an item is no task (an error); with them, an item whose other fields
/// cannot be read (hand-edited, or `damage` from its spilled objects) is the
/// task FAILED with [`DAMAGED`], so it lists and reads like any failed task
/// and the worker fails it for good instead of retrying it.
pub(super) fn from_item(i: &Item, damage: Option<String>) -> Result<Task, PortError> {
    let text = |k: &str| i.get(k).and_then(|v| v.as_s().ok()).cloned();
    let req = |k: &str| text(k).ok_or_else(|| format!("missing {k}"));
    let when = |k: &str| {
        text(k)
            .map(|v| NaiveDateTime::parse_from_str(&v, TIME).map_err(|_| k.to_string()))
            .transpose()
    };
    let json = |k: &str| {
        text(k)
            .map(|v| serde_json::from_str(&v).map_err(|_| k.to_string()))
            .transpose()
    };
    let number = |k: &str| i.get(k).and_then(|v| v.as_n().ok()).map(String::as_str);
    let identity = || -> Result<_, String> {
        Ok((
            Uuid::parse_str(&req("id")?).map_err(|_| "id".to_string())?,
            req("owner")?,
            req("kind")?.parse().map_err(|_| "kind".to_string())?,
            when("created_at")?.ok_or("missing created_at")?,
        ))
    };
    let (id, owner, kind, created_at) = identity().map_err(|what| corrupt(&what))?;
    let mut task = Task {
        id,
        owner,
        kind,
        status: TaskStatus::Pending,
        params: serde_json::Value::Null,
        result: None,
        error: text("error"),
        attempts: number("attempts").and_then(|v| v.parse().ok()).unwrap_or(0),
        created_at,
        started_at: None,
        finished_at: None,
        lease_until: None,
        progress: number("progress").and_then(|v| v.parse().ok()),
    };
    let rest = (|| -> Result<(), String> {
        if let Some(what) = damage {
            return Err(what);
        }
        task.status = req("status")?.parse().map_err(|_| "status".to_string())?;
        task.params = json("params")?.unwrap_or_default();
        task.result = json("result")?;
        task.started_at = when("started_at")?;
        task.finished_at = when("finished_at")?;
        task.lease_until = when("lease_until")?;
        Ok(())
    })();
    if let Err(what) = rest {
        tracing::error!(task_id = %id, field = %what, "task item damaged; it reads as FAILED");
        task.status = TaskStatus::Failed;
        task.params = serde_json::Value::Null;
        task.result = None;
        task.error = Some(DAMAGED.into());
        task.progress = None;
    }
    Ok(task)
}

/// Filter expression, the attribute names it uses, and its values, for kinds
/// and status (on top of the owner key).
pub(super) fn filter_parts(
    f: &TaskFilter,
) -> (Option<String>, Vec<(&'static str, &'static str)>, Item) {
    let mut clauses = Vec::new();
    let mut names = Vec::new();
    let mut values = Item::new();
    if !f.kinds.is_empty() {
        let value_names: Vec<String> = (0..f.kinds.len()).map(|k| format!(":k{k}")).collect();
        for (name, kind) in value_names.iter().zip(&f.kinds) {
            values.insert(name.clone(), s(kind.as_str()));
        }
        clauses.push(format!("#kind IN ({})", value_names.join(", ")));
        names.push(("#kind", "kind"));
    }
    if let Some(st) = f.status {
        values.insert(":st".into(), s(st.as_str()));
        clauses.push("#status = :st".into());
        names.push(("#status", "status"));
    }
    (
        (!clauses.is_empty()).then(|| clauses.join(" AND ")),
        names,
        values,
    )
}
