//! What every job queue promises: each enqueued message is delivered.

use platform::queue::{JobMessage, JobQueue};
use platform::tasks::TaskKind;
use std::collections::HashSet;
use std::future::Future;
use std::time::Duration;

pub async fn run_all<F, Fut>(queue: &dyn JobQueue, mut receive: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<JobMessage>>,
{
    let sent: Vec<JobMessage> = TaskKind::ALL
        .iter()
        .map(|k| JobMessage {
            task_id: uuid::Uuid::new_v4(),
            kind: *k,
            owner: None,
            trace: None,
        })
        .collect();
    for m in &sent {
        queue.enqueue(m.clone()).await.unwrap();
    }
    let mut got = HashSet::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while got.len() < sent.len() && tokio::time::Instant::now() < deadline {
        if let Some(m) = receive().await {
            got.insert((m.task_id, m.kind));
        }
    }
    let want: HashSet<_> = sent.iter().map(|m| (m.task_id, m.kind)).collect();
    assert_eq!(got, want, "every message arrives, with its kind");
    // Messages are small: the task record holds the parameters.
    let encoded = serde_json::to_string(&sent[0]).unwrap();
    assert!(encoded.len() < 100, "{encoded}");
}
