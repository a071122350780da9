//! A task as a DynamoDB item and back: attribute encoding, the reading of
//! damaged items, and the filter expressions of a listing.

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::NaiveDateTime;
use platform::PortError;
use platform::tasks::{Field, Task, TaskFilter, TaskKind, TaskReader, TaskStatus, unreadable_id};
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

/// An attribute as a task field: what it holds, or the type it is.
fn field(v: Option<&AttributeValue>) -> Field<'_> {
    match v {
        None | Some(AttributeValue::Null(_)) => Field::Missing,
        Some(AttributeValue::S(s)) => Field::Text(s),
        Some(AttributeValue::N(n)) => Field::Number(n.as_str().into()),
        Some(AttributeValue::B(_)) => Field::Other("binary"),
        Some(AttributeValue::Bool(_)) => Field::Other("a boolean"),
        Some(AttributeValue::L(_)) => Field::Other("a list"),
        Some(AttributeValue::M(_)) => Field::Other("a map"),
        Some(_) => Field::Other("a set"),
    }
}

/// A status as stored (a projection holding it alone), FAILED and logged
/// when it cannot be read.
pub(super) fn status_of(id: &str, v: Option<&AttributeValue>) -> TaskStatus {
    let mut read = TaskReader::new();
    let status = read.status(field(v));
    if let Some(d) = read.damage() {
        tracing::error!(key = id, damage = %d, "task item damaged: its status reads as FAILED");
    }
    status
}

/// A spilled field whose object could not be read, and why.
pub(super) type Lost = (&'static str, String);

/// A task from its item, `None` (logged) when its id cannot be read. Any
/// other field that cannot be read (hand-edited, or `lost` with its
/// spilled object) makes it FAILED with the damage named ([`TaskReader`]),
/// so it lists and reads like any failed task and the worker fails it for
/// good instead of retrying it.
pub(super) fn from_item(i: &Item, lost: &[Lost]) -> Option<Task> {
    let key = match i.get("id") {
        Some(AttributeValue::S(s)) => s.as_str(),
        _ => "(no id)",
    };
    let Ok(id) = Uuid::parse_str(key) else {
        unreadable_id(key, "id is not a task id");
        return None;
    };
    let mut read = TaskReader::new();
    for (_, what) in lost {
        read.note(what.as_str());
    }
    let gone = |k: &str| lost.iter().any(|(f, _)| *f == k);
    let f = |k: &str| field(i.get(k));
    let owner = read.owner(f("owner"));
    let kind = read.kind(f("kind"));
    let status = read.status(f("status"));
    // A field whose spilled object is lost is named by that alone.
    let params = (!gone("params"))
        .then(|| read.json("params", f("params"), true))
        .flatten();
    let result = (!gone("result"))
        .then(|| read.json("result", f("result"), false))
        .flatten();
    let error = read.optional_string("error", f("error"));
    let attempts = read.number("attempts", f("attempts")).unwrap_or(0);
    let created_at = read
        .time("created_at", f("created_at"), TIME, true)
        .unwrap_or_default();
    let started_at = read.time("started_at", f("started_at"), TIME, false);
    let finished_at = read.time("finished_at", f("finished_at"), TIME, false);
    let lease_until = read.time("lease_until", f("lease_until"), TIME, false);
    let progress = read.number("progress", f("progress"));
    let task = Task {
        id,
        owner,
        kind,
        status,
        params: params.unwrap_or_default(),
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
    Some(read.finish(task, key))
}

/// Filter expression, the attribute names it uses, and its values, for kinds
/// and status (on top of the owner key). An item whose kind is damaged
/// (missing, not a string, unknown) is of every kind; one whose status is
/// damaged is FAILED, as they read.
pub(super) fn filter_parts(
    f: &TaskFilter,
) -> (Option<String>, Vec<(&'static str, &'static str)>, Item) {
    let mut clauses = Vec::new();
    let mut names = Vec::new();
    let mut values = Item::new();
    let mut list = |prefix: &str, items: &mut dyn Iterator<Item = &str>| {
        let names: Vec<String> = items
            .enumerate()
            .map(|(k, v)| {
                let name = format!(":{prefix}{k}");
                values.insert(name.clone(), s(v));
                name
            })
            .collect();
        names.join(", ")
    };
    if !f.kinds.is_empty() {
        let wanted = list("k", &mut f.kinds.iter().map(|k| k.as_str()));
        let known = list("kk", &mut TaskKind::ALL.iter().map(|k| k.as_str()));
        clauses.push(format!("(#kind IN ({wanted}) OR NOT (#kind IN ({known})))"));
        names.push(("#kind", "kind"));
    }
    if let Some(st) = f.status {
        let wanted = list("st", &mut std::iter::once(st.as_str()));
        if st == TaskStatus::Failed {
            let known = list(
                "ks",
                &mut [
                    TaskStatus::Pending,
                    TaskStatus::Running,
                    TaskStatus::Success,
                    TaskStatus::Failed,
                ]
                .iter()
                .map(|s| s.as_str()),
            );
            clauses.push(format!(
                "(#status = {wanted} OR NOT (#status IN ({known})))"
            ));
        } else {
            clauses.push(format!("#status = {wanted}"));
        }
        names.push(("#status", "status"));
    }
    (
        (!clauses.is_empty()).then(|| clauses.join(" AND ")),
        names,
        values,
    )
}
