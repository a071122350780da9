//! What every task store promises.

use super::unique;
use chrono::TimeDelta;
use platform::tasks::{Claim, NewTask, Outcome, TaskFilter, TaskKind, TaskStatus, TaskStore, now};
use serde_json::json;
use std::sync::Arc;

pub async fn run_all(store: Arc<dyn TaskStore>) {
    create_and_get(store.as_ref()).await;
    listing(store.as_ref()).await;
    claims_and_finishing(store.as_ref()).await;
    release_and_failure(store.as_ref()).await;
    concurrent_claims(store.clone()).await;
    unfinished(store.as_ref()).await;
    large_payloads(store.as_ref()).await;
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
        .finish(t.id, c.attempts, Outcome::Success(result.clone()), now())
        .await
        .unwrap()
        .unwrap();
    assert!(
        done.result.as_ref() == Some(&result),
        "finish returns the full result"
    );
    let back = store.get(t.id).await.unwrap().unwrap();
    assert!(
        back.params == params && back.result == Some(result),
        "both read back whole"
    );
}

fn new(owner: &str, kind: TaskKind, n: i64) -> NewTask {
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
        .list(&owner, &TaskFilter::default(), 10, 0)
        .await
        .unwrap();
    assert_eq!(all.total, 5);
    let listed: Vec<_> = all.tasks.iter().map(|t| t.id).collect();
    let newest_first: Vec<_> = ids.iter().rev().cloned().collect();
    assert_eq!(listed, newest_first, "newest first");
    let page = store
        .list(&owner, &TaskFilter::default(), 2, 1)
        .await
        .unwrap();
    assert_eq!((page.total, page.tasks.len()), (5, 2));
    assert_eq!(page.tasks[0].id, ids[3]);
    assert_eq!(page.tasks[1].id, ids[2]);
    let beyond = store
        .list(&owner, &TaskFilter::default(), 10, 7)
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
            10,
            0,
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
            10,
            0,
        )
        .await
        .unwrap();
    assert_eq!(
        running.tasks.iter().map(|t| t.id).collect::<Vec<_>>(),
        vec![ids[0]]
    );
    let none = store
        .list(&unique("nobody"), &TaskFilter::default(), 10, 0)
        .await
        .unwrap();
    assert_eq!((none.total, none.tasks.len()), (0, 0));
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
            .finish(t.id, 1, Outcome::Success(json!({"stale": true})), now())
            .await
            .unwrap(),
        None
    );
    let done = store
        .finish(
            t.id,
            2,
            Outcome::Success(json!({"Total Trades": 3, "Each Return": [1.5, -0.25]})),
            now(),
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
            .finish(t.id, 2, Outcome::Failed("again".into()), now())
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
            2,
            Outcome::Failed("symbol 'XYZ' not found".into()),
            now(),
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
        .finish(done.id, c.attempts, Outcome::Success(json!(1)), now())
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
