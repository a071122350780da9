//! What every quota store promises: a counter never passes its limit however
//! many instances take from it at once; slots are held by at most `limit`
//! holders, an expired hold frees its slot; a reservation is taken only
//! below its limit, so concurrent ones pass it by at most one, and
//! settlements move the counter both ways; plan limits read back as set.

use super::unique;
use platform::quota::{Hold, PlanLimits, QuotaStore, Reservation};
use std::sync::Arc;

pub async fn run_all(store: Arc<dyn QuotaStore>) {
    let far = chrono::Utc::now().timestamp() + 600;
    // Blocks until the counter is full: every grant is within the block,
    // and together they are exactly the limit.
    let key = unique("rate");
    let mut total = 0;
    loop {
        let got = store.take(&key, 4, 10, far).await.unwrap();
        assert!(got <= 4, "a grant never exceeds the block: {got}");
        if got == 0 {
            break;
        }
        total += got;
    }
    assert_eq!(total, 10);
    assert_eq!(store.take(&unique("rate"), 5, 0, far).await.unwrap(), 0);
    assert_eq!(store.take(&unique("rate"), 5, 3, far).await.unwrap(), 3);

    // Twenty instances at once on a limit of 7: exactly 7 granted.
    let key = unique("rate");
    let takes = (0..20).map(|_| {
        let (store, key) = (store.clone(), key.clone());
        tokio::spawn(async move { store.take(&key, 1, 7, far).await.unwrap() })
    });
    let mut granted = 0;
    for t in takes {
        granted += t.await.unwrap();
    }
    assert_eq!(granted, 7, "concurrent takes never pass the limit");

    // Slots.
    let now = chrono::Utc::now().timestamp_millis();
    let until = now + 60_000;
    let at = move |holder, until_ms| Hold {
        holder,
        now_ms: now,
        until_ms,
    };
    let slots = unique("slots");
    assert!(store.hold(&slots, 2, at("t1", until)).await.unwrap());
    assert!(store.hold(&slots, 2, at("t2", until)).await.unwrap());
    assert!(
        !store.hold(&slots, 2, at("t3", until)).await.unwrap(),
        "both held"
    );
    assert!(
        store.hold(&slots, 2, at("t1", until + 1)).await.unwrap(),
        "a holder holds again (extends)"
    );
    store.release(&slots, "t1").await.unwrap();
    store.release(&slots, "t1").await.unwrap();
    store.release(&unique("slots"), "nobody").await.unwrap();
    assert!(
        store.hold(&slots, 2, at("t3", until)).await.unwrap(),
        "released slot"
    );
    assert!(!store.hold(&slots, 2, at("t4", until)).await.unwrap());
    // Past the holds' time, their slots are free (a crashed worker's come back).
    let later = until + 10;
    let at_later = move |holder| Hold {
        holder,
        now_ms: later,
        until_ms: later + 1_000,
    };
    assert!(store.hold(&slots, 2, at_later("t4")).await.unwrap());
    assert!(store.hold(&slots, 2, at_later("t5")).await.unwrap());
    assert!(!store.hold(&slots, 2, at_later("t6")).await.unwrap());

    // Ten workers at once for three slots: exactly three hold one.
    let slots = unique("slots");
    let holds = (0..10).map(|k| {
        let (store, slots) = (store.clone(), slots.clone());
        tokio::spawn(async move {
            let holder = format!("w{k}");
            let hold = Hold {
                holder: &holder,
                now_ms: now,
                until_ms: until,
            };
            store.hold(&slots, 3, hold).await.unwrap()
        })
    });
    let mut held = 0;
    for h in holds {
        held += u32::from(h.await.unwrap());
    }
    assert_eq!(held, 3, "concurrent holds never pass the limit");

    // Plan limits.
    let plan = unique("plan");
    assert_eq!(store.plan_limits(&plan).await.unwrap(), None);
    let set = PlanLimits {
        requests_per_minute: 77,
        concurrent_tasks: 3,
        monthly_compute_minutes: 1_234,
        max_batch: Some(250_000),
    };
    store.set_plan_limits(&plan, set).await.unwrap();
    assert_eq!(store.plan_limits(&plan).await.unwrap(), Some(set));
    let changed = PlanLimits {
        requests_per_minute: 5,
        ..set
    };
    store.set_plan_limits(&plan, changed).await.unwrap();
    assert_eq!(store.plan_limits(&plan).await.unwrap(), Some(changed));

    // Compute reservations: taken while the counter is below the limit.
    let of = move |n, start| Reservation {
        n,
        limit: 1_000,
        start,
        expires_s: far,
    };
    let month = unique("compute");
    assert!(store.reserve(&month, of(700, 0)).await.unwrap());
    assert!(
        store.reserve(&month, of(700, 0)).await.unwrap(),
        "700 is below 1,000: taken whole"
    );
    assert!(!store.reserve(&month, of(1, 0)).await.unwrap());
    assert_eq!(store.count(&month).await.unwrap(), Some(1_400));
    store.adjust(&month, -500, far).await.unwrap();
    assert_eq!(store.count(&month).await.unwrap(), Some(900));
    assert!(store.reserve(&month, of(10, 0)).await.unwrap());
    store.adjust(&month, 90, far).await.unwrap();
    assert!(!store.reserve(&month, of(10, 0)).await.unwrap());
    assert_eq!(store.count(&month).await.unwrap(), Some(1_000));
    // An absent counter starts where the caller says (the month's stored use).
    let fresh = unique("compute");
    assert!(!store.reserve(&fresh, of(5, 1_000)).await.unwrap());
    assert_eq!(store.count(&fresh).await.unwrap(), None);
    assert!(store.reserve(&fresh, of(5, 999)).await.unwrap());
    assert_eq!(store.count(&fresh).await.unwrap(), Some(1_004));
    let settled = unique("compute");
    store.adjust(&settled, 250, far).await.unwrap();
    assert_eq!(store.count(&settled).await.unwrap(), Some(250));
    // Twenty at once, 100 each, on 1,000: ten are taken, the counter ends at 1,000.
    let month = unique("compute");
    let reserves = (0..20).map(|_| {
        let (store, month) = (store.clone(), month.clone());
        tokio::spawn(async move { store.reserve(&month, of(100, 0)).await.unwrap() })
    });
    let mut taken = 0;
    for r in reserves {
        taken += u32::from(r.await.unwrap());
    }
    assert_eq!(taken, 10, "concurrent reservations stop at the limit");
    assert_eq!(store.count(&month).await.unwrap(), Some(1_000));
}
