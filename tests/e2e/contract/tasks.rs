//! What every task store promises.

use super::unique;
use chrono::TimeDelta;
use platform::tasks::{
    Claim, Created, Finished, NewTask, Outcome, Page, TaskFilter, TaskKind, TaskStatus, TaskStore,
    now,
};
use serde_json::json;
use std::sync::Arc;

/// How an attempt ended, now.
pub(super) fn ended(attempt: u32, outcome: Outcome) -> Finished {
    Finished {
        attempt,
        outcome,
        at: now(),
    }
}

/// Runs the suite; `large` is the size of the one large account (the AWS
/// emulator writes about a hundred items a second, so it takes fewer).
pub async fn run_all(store: Arc<dyn TaskStore>, large: usize) {
    create_and_get(store.as_ref()).await;
    listing(store.as_ref()).await;
    claims_and_finishing(store.as_ref()).await;
    statuses(store.as_ref()).await;
    release_and_failure(store.as_ref()).await;
    super::task_attempts::progress_and_leases(store.as_ref()).await;
    concurrent_claims(store.clone()).await;
    unfinished(store.as_ref()).await;
    super::task_ends::counted_ends(store.clone()).await;
    large_payloads(store.as_ref()).await;
    idempotent_creates(store.clone()).await;
    large_account(store.clone(), large).await;
}

/// A key names the first task it created, for its owner only, even when the
/// same submit arrives many times at once.
async fn idempotent_creates(store: Arc<dyn TaskStore>) {
    let (owner, other) = (unique("owner"), unique("owner"));
    let new = |owner: &str, n: i64| NewTask {
        owner: owner.to_string(),
        kind: TaskKind::StrategyBacktest,
        params: json!({"symbol": "SPX", "n": n}),
    };
    let Created::New(first) = store
        .create_idempotent(new(&owner, 1), "key-1")
        .await
        .unwrap()
    else {
        panic!("a fresh key creates a task")
    };
    assert_eq!(store.get(first.id).await.unwrap().as_ref(), Some(&first));
    match store
        .create_idempotent(new(&owner, 1), "key-1")
        .await
        .unwrap()
    {
        Created::Existing(t) => assert_eq!((t.id, &t.params), (first.id, &first.params)),
        Created::New(t) => panic!("the key was reused but {} was created", t.id),
    }
    let Created::Existing(t) = store
        .create_idempotent(new(&owner, 2), "key-1")
        .await
        .unwrap()
    else {
        panic!("a key answers with its task whatever the new params")
    };
    assert_eq!(
        t.params,
        json!({"symbol": "SPX", "n": 1}),
        "the first params are kept"
    );
    let Created::New(theirs) = store
        .create_idempotent(new(&other, 1), "key-1")
        .await
        .unwrap()
    else {
        panic!("another owner's key is their own")
    };
    assert_ne!(theirs.id, first.id);
    let Created::New(second) = store
        .create_idempotent(new(&owner, 1), "key-2")
        .await
        .unwrap()
    else {
        panic!("another key creates another task")
    };
    assert_ne!(second.id, first.id);

    // Sixteen copies of one submit at once: one task.
    let mut joins = tokio::task::JoinSet::new();
    for _ in 0..16 {
        let (store, owner) = (store.clone(), owner.clone());
        joins.spawn(async move {
            store
                .create_idempotent(new(&owner, 3), "key-burst")
                .await
                .unwrap()
        });
    }
    let mut ids = std::collections::HashSet::new();
    let mut created = 0;
    while let Some(r) = joins.join_next().await {
        let c = r.unwrap();
        created += matches!(c, Created::New(_)) as usize;
        ids.insert(c.task().id);
    }
    assert_eq!((created, ids.len()), (1, 1));
    let page = store
        .list(&owner, &TaskFilter::default(), Page::new(50, 0))
        .await
        .unwrap();
    assert_eq!(page.total, 3, "key-1, key-2 and key-burst");
}

/// `n` tasks (a multiple of 10, at least 1,000) in one account: totals by
/// kind and status, the first and the last page, newest first, and nothing
/// of another owner's.
async fn large_account(store: Arc<dyn TaskStore>, n: usize) {
    assert!(n >= 1_000 && n.is_multiple_of(10));
    let (strategy_tasks, scans) = (n / 10 * 9, n / 10);
    let (owner, other) = (unique("big"), unique("owner"));
    let mut joins = tokio::task::JoinSet::new();
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        let (store, owner) = (store.clone(), owner.clone());
        joins.spawn(async move {
            let kind = if i % 10 == 9 {
                TaskKind::CpmScan
            } else {
                TaskKind::StrategyBacktest
            };
            let t = store
                .create(NewTask {
                    owner,
                    kind,
                    params: json!({"i": i}),
                })
                .await
                .unwrap();
            (i, t.id)
        });
        if joins.len() >= 32 {
            ids.push(joins.join_next().await.unwrap().unwrap());
        }
    }
    while let Some(r) = joins.join_next().await {
        ids.push(r.unwrap());
    }
    ids.sort();
    // The first 100 backtests finish.
    let backtests: Vec<_> = ids.iter().filter(|(i, _)| i % 10 != 9).take(100).collect();
    for (_, id) in &backtests {
        let Claim::Claimed(t) = store
            .claim(*id, now(), TimeDelta::minutes(5))
            .await
            .unwrap()
        else {
            panic!("claim")
        };
        store
            .finish(t.id, ended(t.attempts, Outcome::Success(json!(1))))
            .await
            .unwrap()
            .unwrap();
    }
    for _ in 0..3 {
        store
            .create(NewTask {
                owner: other.clone(),
                kind: TaskKind::StrategyBacktest,
                params: json!({}),
            })
            .await
            .unwrap();
    }
    let total = |kinds: Vec<TaskKind>, status: Option<TaskStatus>| {
        let store = store.clone();
        let owner = owner.clone();
        async move {
            store
                .list(&owner, &TaskFilter { kinds, status }, Page::new(1, 0))
                .await
                .unwrap()
                .total
        }
    };
    assert_eq!(total(vec![], None).await, n as u64);
    assert_eq!(
        total(vec![TaskKind::StrategyBacktest], None).await,
        strategy_tasks as u64
    );
    assert_eq!(
        total(vec![TaskKind::CpmScan, TaskKind::CpmBacktest], None).await,
        scans as u64
    );
    assert_eq!(total(vec![], Some(TaskStatus::Success)).await, 100);
    assert_eq!(
        total(vec![TaskKind::StrategyBacktest], Some(TaskStatus::Pending)).await,
        strategy_tasks as u64 - 100
    );
    assert_eq!(
        total(vec![TaskKind::CpmScan], Some(TaskStatus::Success)).await,
        0
    );

    let filter = TaskFilter {
        kinds: vec![TaskKind::StrategyBacktest],
        status: None,
    };
    let first = store.list(&owner, &filter, Page::new(20, 0)).await.unwrap();
    assert_eq!(
        (first.total, first.tasks.len()),
        (strategy_tasks as u64, 20)
    );
    assert!(
        first
            .tasks
            .iter()
            .all(|t| t.owner == owner && t.kind == TaskKind::StrategyBacktest)
    );
    assert!(
        first
            .tasks
            .windows(2)
            .all(|w| w[0].created_at >= w[1].created_at),
        "newest first"
    );
    let last = store
        .list(&owner, &filter, Page::new(20, strategy_tasks as u32 - 10))
        .await
        .unwrap();
    assert_eq!(last.tasks.len(), 10, "the last page holds the rest");
    let newest_of_last = last.tasks[0].created_at;
    assert!(first.tasks[19].created_at >= newest_of_last);
    let everything: std::collections::HashSet<_> = ids.iter().map(|(_, id)| *id).collect();
    assert!(last.tasks.iter().all(|t| everything.contains(&t.id)));
    let theirs = store
        .list(&other, &TaskFilter::default(), Page::new(200, 0))
        .await
        .unwrap();
    assert_eq!((theirs.total, theirs.tasks.len()), (3, 3));
}

/// Half-megabyte params (a CSV submission) and results (a long trade list)
/// round-trip exactly, whatever the backing store's item limits.
async fn large_payloads(store: &dyn TaskStore) {
    let rows: Vec<serde_json::Value> = (0..6000)
        .map(|i| json!({"Date": format!("2000-01-{:02}", i % 28 + 1), "Open": 10.0 + i as f64, "High": 11.5, "Low": 9.25, "Close": 10.5, "Volume": 1000 + i}))
        .collect();
    let params = json!({"symbol": "MYDATA", "csv_mode": true, "csv_data": rows});
    assert!(params.to_string().len() > 400 * 1024);
    let t = store
        .create(NewTask {
            owner: unique("owner"),
            kind: TaskKind::StrategyBacktest,
            params: params.clone(),
        })
        .await
        .unwrap();
    assert!(
        store.get(t.id).await.unwrap().unwrap().params == params,
        "create keeps the full params"
    );
    let Claim::Claimed(c) = store
        .claim(t.id, now(), TimeDelta::minutes(5))
        .await
        .unwrap()
    else {
        panic!()
    };
    assert!(c.params == params, "claim returns the full params");
    let result = json!({"Each Return": (0..40000).map(|i| i as f64 * 0.125).collect::<Vec<_>>()});
    let done = store
        .finish(t.id, ended(c.attempts, Outcome::Success(result.clone())))
        .await
        .unwrap()
        .unwrap();
    assert!(
        done.result.as_ref() == Some(&result),
        "finish returns the full result"
    );
    let back = store.get(t.id).await.unwrap().unwrap();
    assert!(
        back.params == params && back.result == Some(result.clone()),
        "both read back whole"
    );
    let (task, text) = store.get_with_result_text(t.id).await.unwrap().unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&text.expect("a result")).unwrap();
    assert!(
        task.result.is_none() && task.params == params && parsed == result,
        "the result read back as its text"
    );
    let pending = store
        .create(new(&unique("owner"), TaskKind::StrategyBacktest, 1))
        .await
        .unwrap();
    let (task, text) = store
        .get_with_result_text(pending.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((task.status, text), (TaskStatus::Pending, None));
    assert!(
        store
            .get_with_result_text(uuid::Uuid::new_v4())
            .await
            .unwrap()
            .is_none()
    );
}

pub(super) fn new(owner: &str, kind: TaskKind, n: i64) -> NewTask {
    NewTask {
        owner: owner.into(),
        kind,
        params: json!({ "symbol": "SPX", "n": n, "nested": { "a": [1, 2.5, "x"] } }),
    }
}

async fn create_and_get(store: &dyn TaskStore) {
    let owner = unique("owner");
    let t = store
        .create(new(&owner, TaskKind::StrategyBacktest, 1))
        .await
        .unwrap();
    assert_eq!(
        (t.status, t.attempts, t.owner.as_str()),
        (TaskStatus::Pending, 0, owner.as_str())
    );
    assert!(t.result.is_none() && t.started_at.is_none() && t.finished_at.is_none());
    let got = store.get(t.id).await.unwrap().expect("stored");
    assert_eq!(got, t, "a task reads back exactly as created");
    assert_eq!(
        store.get_owned(t.id, &owner).await.unwrap(),
        Some(t.clone())
    );
    assert_eq!(
        store.get_owned(t.id, &unique("other")).await.unwrap(),
        None,
        "foreign tasks are invisible"
    );
    assert_eq!(store.get(uuid::Uuid::new_v4()).await.unwrap(), None);
}

async fn listing(store: &dyn TaskStore) {
    let (owner, other) = (unique("owner"), unique("other"));
    let mut ids = Vec::new();
    for n in 0..5 {
        let kind = if n % 2 == 0 {
            TaskKind::CpmScan
        } else {
            TaskKind::CpmBacktest
        };
        ids.push(store.create(new(&owner, kind, n)).await.unwrap().id);
    }
    store
        .create(new(&other, TaskKind::CpmScan, 99))
        .await
        .unwrap();
    let all = store
        .list(&owner, &TaskFilter::default(), Page::new(10, 0))
        .await
        .unwrap();
    assert_eq!(all.total, 5);
    let listed: Vec<_> = all.tasks.iter().map(|t| t.id).collect();
    let newest_first: Vec<_> = ids.iter().rev().cloned().collect();
    assert_eq!(listed, newest_first, "newest first");
    let page = store
        .list(&owner, &TaskFilter::default(), Page::new(2, 1))
        .await
        .unwrap();
    assert_eq!((page.total, page.tasks.len()), (5, 2));
    assert_eq!(page.tasks[0].id, ids[3]);
    assert_eq!(page.tasks[1].id, ids[2]);
    let beyond = store
        .list(&owner, &TaskFilter::default(), Page::new(10, 7))
        .await
        .unwrap();
    assert_eq!((beyond.total, beyond.tasks.len()), (5, 0));
    let scans = store
        .list(
            &owner,
            &TaskFilter {
                kinds: vec![TaskKind::CpmScan],
                status: None,
            },
            Page::new(10, 0),
        )
        .await
        .unwrap();
    assert_eq!(scans.total, 3);
    assert!(
        scans
            .tasks
            .iter()
            .all(|t| t.kind == TaskKind::CpmScan && t.owner == owner)
    );
    store
        .claim(ids[0], now(), TimeDelta::minutes(5))
        .await
        .unwrap();
    let running = store
        .list(
            &owner,
            &TaskFilter {
                kinds: vec![],
                status: Some(TaskStatus::Running),
            },
            Page::new(10, 0),
        )
        .await
        .unwrap();
    assert_eq!(
        running.tasks.iter().map(|t| t.id).collect::<Vec<_>>(),
        vec![ids[0]]
    );
    let none = store
        .list(&unique("nobody"), &TaskFilter::default(), Page::new(10, 0))
        .await
        .unwrap();
    assert_eq!((none.total, none.tasks.len()), (0, 0));
}

/// Statuses of many tasks at once, in the order asked, unknown ids as none.
async fn statuses(store: &dyn TaskStore) {
    let owner = unique("owner");
    let mut ids = Vec::new();
    for k in 0..130 {
        ids.push(
            store
                .create(new(&owner, TaskKind::BatchChunk, k))
                .await
                .unwrap()
                .id,
        );
    }
    let Claim::Claimed(_) = store
        .claim(ids[3], now(), TimeDelta::seconds(60))
        .await
        .unwrap()
    else {
        panic!("claimable")
    };
    let Claim::Claimed(_) = store
        .claim(ids[120], now(), TimeDelta::seconds(60))
        .await
        .unwrap()
    else {
        panic!("claimable")
    };
    store
        .finish(
            ids[120],
            ended(1, Outcome::Success(json!({"rows": [1, 2]}))),
        )
        .await
        .unwrap()
        .unwrap();
    let mut asked = ids.clone();
    asked.insert(7, uuid::Uuid::new_v4());
    let got = store.statuses(&asked).await.unwrap();
    assert_eq!(got.len(), 131);
    assert_eq!(got[7], None);
    assert_eq!(got[3], Some(TaskStatus::Running));
    assert_eq!(got[121], Some(TaskStatus::Success));
    let pending = got
        .iter()
        .filter(|s| **s == Some(TaskStatus::Pending))
        .count();
    assert_eq!(pending, 128);
    assert!(store.statuses(&[]).await.unwrap().is_empty());
}

async fn claims_and_finishing(store: &dyn TaskStore) {
    let t = store
        .create(new(&unique("owner"), TaskKind::StrategyBacktest, 1))
        .await
        .unwrap();
    let t0 = now();
    let Claim::Claimed(c) = store.claim(t.id, t0, TimeDelta::seconds(60)).await.unwrap() else {
        panic!("first claim wins")
    };
    assert_eq!((c.status, c.attempts), (TaskStatus::Running, 1));
    assert_eq!(c.lease_until, Some(t0 + TimeDelta::seconds(60)));
    assert_eq!(
        store
            .claim(t.id, t0 + TimeDelta::seconds(30), TimeDelta::seconds(60))
            .await
            .unwrap(),
        Claim::Busy
    );
    // Lease passed: another worker may take over; the first can no longer finish.
    let Claim::Claimed(c2) = store
        .claim(t.id, t0 + TimeDelta::seconds(61), TimeDelta::seconds(60))
        .await
        .unwrap()
    else {
        panic!("expired lease is claimable")
    };
    assert_eq!(c2.attempts, 2);
    assert_eq!(
        store
            .finish(t.id, ended(1, Outcome::Success(json!({"stale": true}))))
            .await
            .unwrap(),
        None
    );
    let done = store
        .finish(
            t.id,
            ended(
                2,
                Outcome::Success(json!({"Total Trades": 3, "Each Return": [1.5, -0.25]})),
            ),
        )
        .await
        .unwrap()
        .expect("current attempt finishes");
    assert_eq!(done.status, TaskStatus::Success);
    assert_eq!(
        done.result,
        Some(json!({"Total Trades": 3, "Each Return": [1.5, -0.25]}))
    );
    assert!(done.finished_at.is_some() && done.lease_until.is_none());
    assert_eq!(store.get(t.id).await.unwrap().unwrap(), done);
    assert_eq!(
        store
            .claim(t.id, now(), TimeDelta::seconds(60))
            .await
            .unwrap(),
        Claim::Finished
    );
    assert_eq!(
        store
            .finish(t.id, ended(2, Outcome::Failed("again".into())))
            .await
            .unwrap(),
        None,
        "finished once only"
    );
    assert_eq!(
        store
            .claim(uuid::Uuid::new_v4(), now(), TimeDelta::seconds(60))
            .await
            .unwrap(),
        Claim::Missing
    );
}

async fn release_and_failure(store: &dyn TaskStore) {
    let t = store
        .create(new(&unique("owner"), TaskKind::ScannerBacktest, 1))
        .await
        .unwrap();
    let Claim::Claimed(c) = store
        .claim(t.id, now(), TimeDelta::minutes(5))
        .await
        .unwrap()
    else {
        panic!()
    };
    assert!(
        !store.release(t.id, c.attempts + 1).await.unwrap(),
        "wrong attempt cannot release"
    );
    assert!(store.release(t.id, c.attempts).await.unwrap());
    let back = store.get(t.id).await.unwrap().unwrap();
    assert_eq!(
        (back.status, back.attempts, back.lease_until),
        (TaskStatus::Pending, 1, None)
    );
    let Claim::Claimed(c) = store
        .claim(t.id, now(), TimeDelta::minutes(5))
        .await
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(c.attempts, 2);
    let failed = store
        .finish(
            t.id,
            ended(2, Outcome::Failed("symbol 'XYZ' not found".into())),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            failed.status,
            failed.error.as_deref(),
            failed.result.clone()
        ),
        (TaskStatus::Failed, Some("symbol 'XYZ' not found"), None)
    );
    assert!(
        !store.release(t.id, 2).await.unwrap(),
        "finished tasks are not released"
    );
}

async fn concurrent_claims(store: Arc<dyn TaskStore>) {
    let t = store
        .create(new(&unique("owner"), TaskKind::StrategyBacktest, 1))
        .await
        .unwrap();
    let at = now();
    let claims = (0..8).map(|_| {
        let s = store.clone();
        tokio::spawn(async move { s.claim(t.id, at, TimeDelta::minutes(5)).await.unwrap() })
    });
    let mut won = 0;
    for c in claims {
        if matches!(c.await.unwrap(), Claim::Claimed(_)) {
            won += 1;
        }
    }
    assert_eq!(won, 1, "exactly one of concurrent claims wins");
}

async fn unfinished(store: &dyn TaskStore) {
    let owner = unique("owner");
    let pending = store
        .create(new(&owner, TaskKind::CpmScan, 1))
        .await
        .unwrap();
    let running = store
        .create(new(&owner, TaskKind::CpmScan, 2))
        .await
        .unwrap();
    let done = store
        .create(new(&owner, TaskKind::CpmScan, 3))
        .await
        .unwrap();
    store
        .claim(running.id, now(), TimeDelta::minutes(5))
        .await
        .unwrap();
    let Claim::Claimed(c) = store
        .claim(done.id, now(), TimeDelta::minutes(5))
        .await
        .unwrap()
    else {
        panic!()
    };
    store
        .finish(done.id, ended(c.attempts, Outcome::Success(json!(1))))
        .await
        .unwrap();
    let ids: Vec<_> = store
        .unfinished()
        .await
        .unwrap()
        .into_iter()
        .filter(|t| t.owner == owner)
        .map(|t| t.id)
        .collect();
    assert_eq!(
        ids,
        vec![pending.id, running.id],
        "pending and running, oldest first"
    );
}
