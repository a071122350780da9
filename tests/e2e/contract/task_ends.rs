//! What every task store promises about the outcomes counted to a task
//! (`TaskStore::count_end`, `ends`, `finish_counted`).

use super::tasks::{ended, new};
use super::unique;
use chrono::TimeDelta;
use platform::tasks::{Claim, Outcome, TaskKind, TaskStore, now};
use serde_json::json;
use std::sync::Arc;

/// Outcomes counted to a task start at 0 (an unknown id too), count each
/// child once however often it is counted, concurrent counts included,
/// apart for each task, and leave the task and the unfinished tasks as
/// they were; a finish that stores the outcome counts it, one that does
/// not store it counts nothing.
pub(super) async fn counted_ends(store: Arc<dyn TaskStore>) {
    let owner = unique("owner");
    let batch = store
        .create(new(&owner, TaskKind::BatchBacktest, 1))
        .await
        .unwrap();
    let other = store
        .create(new(&owner, TaskKind::BatchBacktest, 2))
        .await
        .unwrap();
    assert_eq!(store.ends(batch.id).await.unwrap(), 0);
    assert_eq!(store.ends(uuid::Uuid::new_v4()).await.unwrap(), 0);
    let first = uuid::Uuid::new_v4();
    store.count_end(batch.id, first).await.unwrap();
    store.count_end(batch.id, first).await.unwrap();
    assert_eq!(
        store.ends(batch.id).await.unwrap(),
        1,
        "a child counts once"
    );
    let counts: Vec<_> = (0..8)
        .map(|_| {
            let store = store.clone();
            tokio::spawn(async move { store.count_end(batch.id, uuid::Uuid::new_v4()).await })
        })
        .collect();
    for c in counts {
        c.await.unwrap().unwrap();
    }
    assert_eq!(store.ends(batch.id).await.unwrap(), 9);
    assert_eq!(store.ends(other.id).await.unwrap(), 0);
    assert_eq!(store.get(batch.id).await.unwrap().as_ref(), Some(&batch));
    let mut unfinished: Vec<_> = store
        .unfinished()
        .await
        .unwrap()
        .into_iter()
        .filter(|t| t.owner == owner)
        .map(|t| t.id)
        .collect();
    let mut created = vec![batch.id, other.id];
    unfinished.sort();
    created.sort();
    assert_eq!(unfinished, created);

    // A chunk's outcome, counted to its batch and itself as it is stored.
    let chunk = store
        .create(new(&owner, TaskKind::BatchChunk, 3))
        .await
        .unwrap();
    let Claim::Claimed(c) = store
        .claim(chunk.id, now(), TimeDelta::minutes(5))
        .await
        .unwrap()
    else {
        panic!("claimed")
    };
    let stored = store
        .finish_counted(
            chunk.id,
            ended(c.attempts, Outcome::Success(json!({"rows": 1}))),
            &[other.id, chunk.id],
        )
        .await
        .unwrap()
        .expect("stored");
    assert_eq!(stored.result, Some(json!({"rows": 1})));
    assert_eq!(
        (
            store.ends(other.id).await.unwrap(),
            store.ends(chunk.id).await.unwrap()
        ),
        (1, 1)
    );
    // An attempt that no longer owns the task stores and counts nothing.
    let late = store
        .finish_counted(
            chunk.id,
            ended(c.attempts, Outcome::Success(json!({"rows": 2}))),
            &[batch.id],
        )
        .await
        .unwrap();
    assert_eq!(late, None);
    assert_eq!(store.ends(batch.id).await.unwrap(), 9);
}
