//! The allowance an admitted request is told: one less per request, and
//! nothing left exactly where the refusals start, however many ask at once.

use super::tests::metering;
use super::*;
use crate::quota::PlanLimits;
use crate::sqlite::Database;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn remaining_falls_by_one_per_request_and_reaches_zero_at_the_refusal() {
    let db = Database::in_memory().unwrap();
    let m = Arc::new(metering(&db));
    let limits = PlanLimits {
        requests_per_minute: 100,
        concurrent_tasks: 1,
        monthly_compute_minutes: 1,
        max_batch: None,
    };
    m.quota_store()
        .set_plan_limits("pro", limits)
        .await
        .unwrap();
    let minute = Utc::now().timestamp().div_euclid(60) * 60;
    let at = DateTime::from_timestamp(minute + 20, 0).unwrap();
    // 32 clients, each asking until refused.
    let clients = (0..32).map(|_| {
        let m = m.clone();
        tokio::spawn(async move {
            let mut seen = Vec::new();
            while let Ok(a) = m.admit("x@y", "pro", Service::Data, at).await {
                assert_eq!((a.limit, a.reset), (100, 40));
                seen.push(a.remaining);
            }
            seen
        })
    });
    let mut remaining: Vec<u32> = Vec::new();
    for c in clients {
        let seen = c.await.unwrap();
        assert!(
            seen.windows(2).all(|w| w[0] > w[1]),
            "falls per client: {seen:?}"
        );
        remaining.extend(seen);
    }
    remaining.sort_unstable();
    assert_eq!(
        remaining,
        (0..100).collect::<Vec<u32>>(),
        "each count once, 0 last"
    );
}

#[tokio::test]
async fn an_instance_counts_what_others_reserved_before_its_own_reservation() {
    let db = Database::in_memory().unwrap();
    let (a, b) = (metering(&db), metering(&db));
    let limits = PlanLimits {
        requests_per_minute: 40,
        concurrent_tasks: 1,
        monthly_compute_minutes: 1,
        max_batch: None,
    };
    a.quota_store()
        .set_plan_limits("pro", limits)
        .await
        .unwrap();
    let minute = Utc::now().timestamp().div_euclid(60) * 60;
    let at = DateTime::from_timestamp(minute + 5, 0).unwrap();
    // Blocks of 2: `a` reserves 2 and uses 1; `b` then reserves 2 more and
    // counts `a`'s unused one as used; `a` learns of `b`'s block at its
    // next reservation.
    assert_eq!(left(&a, at).await, 39);
    assert_eq!(left(&b, at).await, 37);
    assert_eq!(left(&a, at).await, 38, "as of a's own reservation");
    assert_eq!(left(&a, at).await, 35, "a's next block: 6 reserved, 5 used");
}

async fn left(m: &Metering, at: DateTime<Utc>) -> u32 {
    m.admit("x@y", "pro", Service::Data, at)
        .await
        .unwrap()
        .remaining
}
