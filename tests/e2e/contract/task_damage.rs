//! What every task store promises about a task item damaged outside it
//! (hand-edited, a spilled payload gone): every read shows it FAILED with
//! the damage named, its owner's listings show it too, a claim ends it for
//! good, each read logs its key and the damage and never its contents, and
//! a task whose owner cannot be read is shown to no tenant. Each store's
//! suite writes the damage its own way ([`Damager`]).

use super::tasks::ended;
use super::unique;
use chrono::TimeDelta;
use platform::tasks::{
    Claim, NewTask, Outcome, Page, Task, TaskFilter, TaskKind, TaskStatus, TaskStore, damaged, now,
};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex, OnceLock};
use uuid::Uuid;

/// A stored value as no store writes it.
#[derive(Debug, Clone)]
pub enum Raw {
    /// The field removed (SQL NULL).
    Missing,
    Text(String),
    Number(i64),
    /// Bytes: a DynamoDB binary, an SQLite blob.
    Binary,
}

/// How a store's suite damages a stored task.
#[async_trait::async_trait]
pub trait Damager: Send + Sync {
    /// Stores `raw` as `field` of task `id` (`id` itself: the item moved
    /// under that text); false when the store cannot hold such a value
    /// there (a NOT NULL column, a text column, an index key's type).
    async fn set(&self, id: Uuid, field: &str, raw: Raw) -> bool;
    /// Deletes the object `field` (params, result) of `id` was spilled to;
    /// false when the store keeps every payload inline.
    async fn lose_spilled(&self, id: Uuid, field: &str) -> bool;
}

/// One damage: a field, what is stored there, and how the task names it.
struct Case {
    field: &'static str,
    raw: Raw,
    damage: &'static str,
}

fn case(field: &'static str, raw: Raw, damage: &'static str) -> Case {
    Case { field, raw, damage }
}

fn cases() -> Vec<Case> {
    use Raw::{Binary, Missing, Number};
    let text = |s: &str| Raw::Text(s.into());
    vec![
        case("kind", Missing, "kind is missing"),
        case("kind", Number(7), "kind is a number, not a string"),
        case(
            "kind",
            text("no_such_kind"),
            "kind is not a known task kind",
        ),
        case("kind", Binary, "kind is binary, not a string"),
        case("status", Missing, "status is missing"),
        case("status", Number(5), "status is a number, not a string"),
        case(
            "status",
            text("DONE"),
            "status is not PENDING, RUNNING, SUCCESS or FAILED",
        ),
        case("status", Binary, "status is binary, not a string"),
        case("params", Missing, "params is missing"),
        case("params", Number(1), "params is a number, not a string"),
        case("params", text("{not json"), "params is not JSON"),
        case("result", text("[1, not json"), "result is not JSON"),
        case("created_at", Missing, "created_at is missing"),
        case("created_at", text("yesterday"), "created_at is not a time"),
        case(
            "attempts",
            text("twice"),
            "attempts is a string, not a number",
        ),
        case("error", Number(3), "error is a number, not a string"),
        case(
            "progress",
            text("half"),
            "progress is a string, not a number",
        ),
    ]
}

/// The stored values a log line must never carry.
const CONTENTS: [&str; 5] = ["no_such_kind", "DONE", "{not json", "yesterday", "twice"];

/// Runs every damage the store can hold: `expected` of them, so a suite
/// that damages less than its store allows fails.
pub async fn run_all(store: Arc<dyn TaskStore>, damager: &dyn Damager, expected: usize) {
    let log = captured();
    let mut ran = 0;
    for c in cases() {
        ran += usize::from(one_damage(store.as_ref(), damager, &c, log).await);
    }
    assert_eq!(ran, expected, "damages this store can hold");
    unreadable_owner(store.as_ref(), damager, log).await;
    unreadable_id(store.as_ref(), damager, log).await;
    spilled_payload_gone(store.as_ref(), damager, log).await;
}

/// A task of `kind` with the params of a strategy, stored PENDING.
async fn created(store: &dyn TaskStore, owner: &str, kind: TaskKind) -> Task {
    store
        .create(NewTask {
            owner: owner.into(),
            kind,
            params: json!({"symbol": "SPX", "name": "damaged"}),
        })
        .await
        .unwrap()
}

/// The task finished SUCCESS with a small result.
async fn succeeded(store: &dyn TaskStore, t: &Task) {
    let Claim::Claimed(c) = store
        .claim(t.id, now(), TimeDelta::minutes(5))
        .await
        .unwrap()
    else {
        panic!("claimable")
    };
    store
        .finish(t.id, ended(c.attempts, Outcome::Success(json!({"n": 1}))))
        .await
        .unwrap()
        .unwrap();
}

/// Asserts `t` reads FAILED with exactly `damage` named.
fn assert_damaged(t: &Task, damage: &str, read: &str) {
    assert_eq!(
        (t.status, t.error.as_deref()),
        (TaskStatus::Failed, Some(damaged(damage).as_str())),
        "{read}: {t:?}"
    );
    let d = t
        .damage
        .as_ref()
        .unwrap_or_else(|| panic!("{read}: the damage is kept: {t:?}"));
    assert_eq!(d.what, [damage], "{read}");
    assert_eq!((t.result.as_ref(), t.progress), (None, None), "{read}");
}

/// Returns whether the store could hold the damage.
async fn one_damage(store: &dyn TaskStore, damager: &dyn Damager, c: &Case, log: &Log) -> bool {
    let owner = unique("owner");
    // A whole task beside the damaged one, of another kind.
    let whole = created(store, &owner, TaskKind::CpmScan).await;
    let t = created(store, &owner, TaskKind::StrategyBacktest).await;
    if c.field == "result" {
        succeeded(store, &t).await;
    }
    if !damager.set(t.id, c.field, c.raw.clone()).await {
        return false;
    }
    let what = format!("{} as {:?}", c.field, c.raw);
    let got = store
        .get(t.id)
        .await
        .unwrap()
        .expect("a damaged task reads");
    assert_damaged(&got, c.damage, &what);
    assert_eq!(got.id, t.id);
    assert_eq!(got.owner, owner, "{what}: the owner reads");
    if c.field != "params" {
        assert_eq!(got.params, t.params, "{what}: what is whole reads whole");
    }
    let owned = store.get_owned(t.id, &owner).await.unwrap();
    assert_eq!(owned.as_ref(), Some(&got), "{what}: its owner reads it");
    assert_eq!(
        store.get_owned(t.id, &unique("other")).await.unwrap(),
        None,
        "{what}: no one else does"
    );
    logged(log, &t.id.to_string(), c.damage, &owner, &what);

    // Listed FAILED with the damage: among all its owner's tasks, under
    // every kind when its kind is what is damaged, under FAILED when its
    // status is.
    let listed = |filter: TaskFilter| {
        let owner = owner.clone();
        async move {
            store
                .list(&owner, &filter, Page::new(10, 0))
                .await
                .unwrap()
                .tasks
        }
    };
    let before = count_logged(log, &t.id.to_string());
    let all = listed(TaskFilter::default()).await;
    assert!(
        count_logged(log, &t.id.to_string()) > before,
        "{what}: the listing logs it too"
    );
    let ids: Vec<Uuid> = all.iter().map(|t| t.id).collect();
    assert_eq!(ids, [t.id, whole.id], "{what}: both listed, newest first");
    assert_damaged(&all[0], c.damage, &format!("{what}, listed"));
    assert_eq!(all[1].status, TaskStatus::Pending, "{what}");
    let scans = listed(TaskFilter {
        kinds: vec![TaskKind::CpmScan],
        status: None,
    })
    .await;
    let expect: Vec<Uuid> = match c.field {
        "kind" => vec![t.id, whole.id],
        _ => vec![whole.id],
    };
    assert_eq!(
        scans.iter().map(|t| t.id).collect::<Vec<_>>(),
        expect,
        "{what}: listed under another kind only when its kind is damaged"
    );
    if c.field == "status" {
        let failed = listed(TaskFilter {
            kinds: vec![],
            status: Some(TaskStatus::Failed),
        })
        .await;
        assert_eq!(
            failed.iter().map(|t| t.id).collect::<Vec<_>>(),
            [t.id],
            "{what}: listed under FAILED"
        );
        assert_eq!(
            store.statuses(&[t.id, whole.id]).await.unwrap(),
            [Some(TaskStatus::Failed), Some(TaskStatus::Pending)],
            "{what}: its status reads FAILED"
        );
    }

    // The result read as text: FAILED without one, or (a store that hands
    // the text over unchecked) the text as it is stored.
    let (as_text, text) = store.get_with_result_text(t.id).await.unwrap().unwrap();
    if c.field == "result" && as_text.status == TaskStatus::Success {
        assert_eq!(text.as_deref(), Some("[1, not json"), "{what}");
    } else {
        assert_damaged(
            &as_text,
            c.damage,
            &format!("{what}, with its result as text"),
        );
        assert_eq!(text, None, "{what}");
    }

    let claim = store
        .claim(t.id, now(), TimeDelta::minutes(5))
        .await
        .unwrap();
    if c.field == "progress" {
        // The claim rewrites the progress: the task is whole again, and runs.
        let Claim::Claimed(running) = claim else {
            panic!("{what}: {claim:?}")
        };
        assert_eq!((running.damage, running.progress), (None, None), "{what}");
        return true;
    }
    // Otherwise a claim ends it for good: no worker runs it, and it stays
    // FAILED with the damage as its error (stored by the claim, which
    // rewrites a damaged error).
    assert_eq!(claim, Claim::Finished, "{what}: claimed");
    let after = store.get(t.id).await.unwrap().unwrap();
    assert_eq!(
        (after.status, after.error.as_deref()),
        (TaskStatus::Failed, Some(damaged(c.damage).as_str())),
        "{what}, after a claim: {after:?}"
    );
    assert_eq!(
        store
            .claim(t.id, now(), TimeDelta::minutes(5))
            .await
            .unwrap(),
        Claim::Finished,
        "{what}: claimed again"
    );
    true
}

/// An owner that cannot be read: the task is no tenant's, not even the
/// one it was created by, and it is listed for none.
async fn unreadable_owner(store: &dyn TaskStore, damager: &dyn Damager, log: &Log) {
    let mut held = 0;
    for (raw, damage) in [
        (Raw::Missing, "owner is missing"),
        (Raw::Binary, "owner is binary, not a string"),
        (Raw::Text(String::new()), "owner is empty"),
    ] {
        let owner = unique("owner");
        let t = created(store, &owner, TaskKind::StrategyBacktest).await;
        let what = format!("owner as {raw:?}");
        if !damager.set(t.id, "owner", raw).await {
            continue;
        }
        held += 1;
        let got = store.get(t.id).await.unwrap().expect("a worker reads it");
        assert_damaged(&got, damage, &what);
        assert!(got.damage.as_ref().unwrap().owner_unread, "{what}");
        for anyone in [owner.as_str(), ""] {
            assert_eq!(
                store.get_owned(t.id, anyone).await.unwrap(),
                None,
                "{what}: shown to no tenant"
            );
        }
        logged(log, &t.id.to_string(), damage, &owner, &what);
        let listed = store
            .list(&owner, &TaskFilter::default(), Page::new(10, 0))
            .await
            .unwrap();
        assert!(listed.tasks.is_empty(), "{what}: {:?}", listed.tasks);
        assert_eq!(
            store
                .claim(t.id, now(), TimeDelta::minutes(5))
                .await
                .unwrap(),
            Claim::Finished,
            "{what}"
        );
    }
    assert!(held >= 1, "every store can lose an owner");
}

/// An item whose id is not a task's cannot be named to anyone: its
/// owner's listing leaves it out, logged, and lists the rest.
async fn unreadable_id(store: &dyn TaskStore, damager: &dyn Damager, log: &Log) {
    let owner = unique("owner");
    let whole = created(store, &owner, TaskKind::StrategyBacktest).await;
    let t = created(store, &owner, TaskKind::StrategyBacktest).await;
    let key = format!("not-a-task-{}", t.id.simple());
    assert!(damager.set(t.id, "id", Raw::Text(key.clone())).await);
    let listed = store
        .list(&owner, &TaskFilter::default(), Page::new(10, 0))
        .await
        .unwrap();
    assert_eq!(
        listed.tasks.iter().map(|t| t.id).collect::<Vec<_>>(),
        [whole.id]
    );
    assert_eq!(store.get(t.id).await.unwrap(), None);
    let line = find_logged(log, |l| l.contains(&key));
    assert!(line.contains("id is not a task id"), "{line}");
    assert!(!line.contains(&owner), "no contents logged: {line}");
}

/// A payload spilled out of the item and gone since: the task reads FAILED
/// naming the object, not an outage.
async fn spilled_payload_gone(store: &dyn TaskStore, damager: &dyn Damager, log: &Log) {
    let owner = unique("owner");
    let big: Vec<Value> = (0..2_000).map(|i| json!({"row": i, "x": "y"})).collect();
    let t = store
        .create(NewTask {
            owner: owner.clone(),
            kind: TaskKind::StrategyBacktest,
            params: json!({"symbol": "MYDATA", "csv_data": big}),
        })
        .await
        .unwrap();
    if !damager.lose_spilled(t.id, "params").await {
        return;
    }
    let got = store.get_owned(t.id, &owner).await.unwrap().unwrap();
    let d = got.damage.as_ref().expect("damaged");
    assert_eq!(d.what.len(), 1);
    let what = &d.what[0];
    assert!(
        what.starts_with("params object ") && what.ends_with(" is missing"),
        "{what}"
    );
    assert_damaged(&got, what, "spilled params gone");
    logged(log, &t.id.to_string(), what, &owner, "spilled params gone");
    let listed = store
        .list(&owner, &TaskFilter::default(), Page::new(10, 0))
        .await
        .unwrap();
    assert_damaged(&listed.tasks[0], what, "spilled params gone, listed");
}

/// The JSON log lines of this process's damaged reads.
type Log = Mutex<Vec<u8>>;

/// Lines the stores log at ERROR, captured from here on (one subscriber
/// for the process: the suites of both stores share it).
fn captured() -> &'static Log {
    static LOG: OnceLock<Arc<Log>> = OnceLock::new();
    LOG.get_or_init(|| {
        use tracing_subscriber::layer::SubscriberExt;
        use tracing_subscriber::util::SubscriberInitExt;
        use tracing_subscriber::{Layer, filter::Targets};
        let log = Arc::new(Log::default());
        let sink = log.clone();
        let targets = Targets::new()
            .with_target("platform::tasks", tracing::Level::ERROR)
            .with_target("aws_adapters::tasks", tracing::Level::ERROR);
        let layer = tracing_subscriber::fmt::layer()
            .json()
            .with_writer(move || Sink(sink.clone()))
            .with_filter(targets);
        tracing_subscriber::registry()
            .with(layer)
            .try_init()
            .expect("no other subscriber in the test process");
        log
    })
}

struct Sink(Arc<Log>);

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The first line captured that `wanted` accepts: a read logs before it
/// returns, so the line is there once the read has answered.
fn find_logged(log: &Log, wanted: impl Fn(&str) -> bool) -> String {
    let bytes = log.lock().unwrap().clone();
    String::from_utf8_lossy(&bytes)
        .lines()
        .find(|l| wanted(l))
        .map(str::to_string)
        .unwrap_or_else(|| panic!("no such log line in:\n{}", String::from_utf8_lossy(&bytes)))
}

/// How many lines captured name `key`.
fn count_logged(log: &Log, key: &str) -> usize {
    let bytes = log.lock().unwrap().clone();
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter(|l| serde_json::from_str::<Value>(l).is_ok_and(|v| v["fields"]["key"] == key))
        .count()
}

/// Asserts a line names `key` and `damage`, and carries neither the owner
/// nor any stored value.
fn logged(log: &Log, key: &str, damage: &str, owner: &str, what: &str) {
    let line = find_logged(log, |l| {
        serde_json::from_str::<Value>(l).is_ok_and(|v| {
            v["fields"]["key"] == key
                && v["fields"]["damage"]
                    .as_str()
                    .is_some_and(|d| d.contains(damage))
        })
    });
    assert!(
        !line.contains(owner),
        "{what}: the owner is not logged: {line}"
    );
    for stored in CONTENTS {
        assert!(
            !line.contains(stored),
            "{what}: no stored value logged: {line}"
        );
    }
}
