//! What every usage store promises: counts add up exactly, per account and
//! day, under concurrent adds from many writers.

use super::unique;
use chrono::NaiveDate;
use platform::usage::{Count, UsageStore};
use std::sync::Arc;

fn count(account: &str, day: NaiveDate, counter: &str, n: u64) -> Count {
    Count {
        account: account.into(),
        day,
        counter: counter.into(),
        n,
    }
}

pub async fn run_all(store: Arc<dyn UsageStore>) {
    let (a, b) = (unique("a"), unique("b"));
    let d = |day: u32| NaiveDate::from_ymd_opt(2026, 11, day).unwrap();
    // A known mix: requests of two services, compute of a task kind, data
    // rows and bytes, over three days and two accounts.
    store
        .add(&[
            count(&a, d(1), "requests:backtest", 3),
            count(&a, d(1), "requests:data", 2),
            count(&a, d(1), "compute_ms:strategy_backtest", 1_250),
            count(&a, d(2), "rows:data", 90),
            count(&a, d(2), "bytes:data", 12_000_000_000),
            count(&b, d(1), "requests:backtest", 7),
        ])
        .await
        .unwrap();
    store
        .add(&[
            count(&a, d(1), "requests:backtest", 2),
            count(&a, d(4), "requests:analytics", 1),
        ])
        .await
        .unwrap();
    // Many writers at once: every count kept.
    let writers: Vec<_> = (0..8)
        .map(|_| {
            let (store, a) = (store.clone(), a.clone());
            tokio::spawn(async move {
                for _ in 0..25 {
                    store
                        .add(&[
                            count(&a, d(2), "requests:backtest", 1),
                            count(&a, d(2), "rows:data", 2),
                        ])
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.await.unwrap();
    }
    let days = store.days(&a, d(1)..=d(3)).await.unwrap();
    assert_eq!(days.iter().map(|x| x.day).collect::<Vec<_>>(), [d(1), d(2)]);
    assert_eq!(days[0].counters["requests:backtest"], 5);
    assert_eq!(days[0].counters["requests:data"], 2);
    assert_eq!(days[0].counters["compute_ms:strategy_backtest"], 1_250);
    assert_eq!(days[0].counters.len(), 3);
    assert_eq!(days[1].counters["requests:backtest"], 200);
    assert_eq!(days[1].counters["rows:data"], 490);
    assert_eq!(days[1].counters["bytes:data"], 12_000_000_000);
    // The range is inclusive and per account.
    let later = store.days(&a, d(4)..=d(30)).await.unwrap();
    assert_eq!(later.len(), 1);
    assert_eq!(later[0].counters["requests:analytics"], 1);
    let other = store.days(&b, d(1)..=d(30)).await.unwrap();
    assert_eq!(other.len(), 1);
    assert_eq!(other[0].counters.len(), 1);
    assert_eq!(other[0].counters["requests:backtest"], 7);
    assert!(
        store
            .days(&unique("nobody"), d(1)..=d(30))
            .await
            .unwrap()
            .is_empty()
    );
}
