//! The monthly compute ledger of each account: reservations at submit,
//! settlements after each attempt (see the module above).

use super::{Metering, OverLimit, month_bounds};
use crate::quota::Reservation;
use chrono::{DateTime, Datelike, NaiveDate, TimeDelta, Utc};

impl Metering {
    /// Reserves `ms` of `account`'s task compute this month for a task
    /// about to be submitted: taken while the month's ledger is below the
    /// plan's limit (a ledger not started yet starts at the usage stored so
    /// far). A quota store that cannot answer lets the task through (logged).
    pub async fn reserve_compute(
        &self,
        account: &str,
        plan: &str,
        ms: u64,
        now: DateTime<Utc>,
    ) -> Result<(), OverLimit> {
        let minutes = self.limits(plan).await.monthly_compute_minutes;
        let limit = minutes.saturating_mul(60_000);
        let today = now.date_naive();
        let key = compute_key(account, today);
        if limit > 0 {
            let start = self.month_compute_ms(account, today).await;
            match self
                .quotas
                .reserve(
                    &key,
                    Reservation {
                        n: ms,
                        limit,
                        start,
                        expires_s: compute_expiry(today),
                    },
                )
                .await
            {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "compute ledger unavailable; admitting the task");
                    return Ok(());
                }
            }
        }
        let used = match self.quotas.count(&key).await {
            Ok(Some(n)) => n.max(0) as u64,
            _ => self.month_compute_ms(account, today).await,
        };
        let (_, last) = month_bounds(today);
        let next = last
            .succ_opt()
            .expect("in range")
            .and_time(chrono::NaiveTime::MIN);
        let retry_after = (next - now.naive_utc()).num_seconds().max(1) as u64;
        crate::telemetry::quota_rejected(plan, "monthly_compute_minutes");
        Err(OverLimit {
            limit: "monthly_compute_minutes",
            value: minutes,
            retry_after,
            message: format!(
                "monthly compute used up: the '{plan}' plan includes {minutes} minutes of task compute a month (limit monthly_compute_minutes = {minutes}) and {:.1} are used; new tasks are accepted again next month",
                used as f64 / 60_000.0
            ),
        })
    }

    /// Gives back a reservation whose task was not created (a replayed
    /// submit, a store that failed), made on `reserved_on`.
    pub async fn release_compute(&self, account: &str, ms: u64, reserved_on: NaiveDate) {
        self.settle_compute(account, 0, ms, reserved_on, self.now())
            .await;
    }

    /// Settles one attempt: its `counted_ms` are added to this month's
    /// ledger and `given_back_ms` of the task's reservation (made on
    /// `reserved_on`) taken off, so the ledger ends at the compute used.
    pub async fn settle_compute(
        &self,
        account: &str,
        counted_ms: u64,
        given_back_ms: u64,
        reserved_on: NaiveDate,
        now: DateTime<Utc>,
    ) {
        let today = now.date_naive();
        let (now_key, then_key) = (
            compute_key(account, today),
            compute_key(account, reserved_on),
        );
        let mut moves = vec![(now_key.clone(), counted_ms as i64, compute_expiry(today))];
        if then_key == now_key {
            moves[0].1 -= given_back_ms as i64;
        } else {
            moves.push((
                then_key,
                -(given_back_ms as i64),
                compute_expiry(reserved_on),
            ));
        }
        for (key, delta, expires) in moves.into_iter().filter(|m| m.1 != 0) {
            if let Err(e) = self.quotas.adjust(&key, delta, expires).await {
                tracing::warn!(error = %e, delta, "compute ledger not settled");
            }
        }
    }
}

/// What a task's submit reserved of its owner's month of compute, as the
/// task's job handler works it out again from the task (so nothing about it
/// is stored): the first attempt gives back `own_ms`, and a task that fails
/// gives back `children_ms`, reserved for the tasks it would have created.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reserved {
    pub own_ms: u64,
    pub children_ms: u64,
}

impl Reserved {
    pub fn total(&self) -> u64 {
        self.own_ms + self.children_ms
    }
}

/// The ledger of an account's month of task compute, in the quota store.
fn compute_key(account: &str, day: NaiveDate) -> String {
    format!("compute#{account}#{:04}-{:02}", day.year(), day.month())
}

/// A ledger is kept 40 days past its month's end.
fn compute_expiry(day: NaiveDate) -> i64 {
    let (_, last) = month_bounds(day);
    (last + TimeDelta::days(40))
        .and_time(chrono::NaiveTime::MIN)
        .and_utc()
        .timestamp()
}

#[cfg(all(test, feature = "sqlite"))]
mod tests {
    use super::*;
    use crate::metering::tests::metering;
    use crate::quota::PlanLimits;
    use crate::sqlite::Database;
    use std::sync::Arc;

    /// The trial plan with one minute of compute a month.
    async fn one_minute_trial(m: &Metering) {
        let limits = PlanLimits {
            requests_per_minute: 10,
            concurrent_tasks: 1,
            monthly_compute_minutes: 1,
            max_batch: None,
        };
        m.quota_store()
            .set_plan_limits("trial", limits)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn monthly_compute_counts_stored_and_pending_time() {
        let db = Database::in_memory().unwrap();
        let m = metering(&db);
        one_minute_trial(&m).await;
        let now = Utc::now();
        // A ledger starts at the month's stored and pending use.
        m.record("t@y", "compute_ms:cpm_scan", 59_000);
        assert!(m.reserve_compute("t@y", "trial", 1_000, now).await.is_ok());
        let over = m
            .reserve_compute("t@y", "trial", 1_000, now)
            .await
            .unwrap_err();
        assert_eq!((over.limit, over.value), ("monthly_compute_minutes", 1));
        assert!(over.retry_after <= 31 * 86_400);
        assert!(over.message.contains("1.0 are used"), "{}", over.message);
        // The attempt used less than reserved: the rest is given back.
        m.settle_compute("t@y", 400, 1_000, now.date_naive(), now)
            .await;
        assert!(m.reserve_compute("t@y", "trial", 1_000, now).await.is_ok());
        m.release_compute("t@y", 1_000, now.date_naive()).await;
        let key = compute_key("t@y", now.date_naive());
        assert_eq!(m.quota_store().count(&key).await.unwrap(), Some(59_400));
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn concurrent_reservations_pass_the_limit_by_at_most_one() {
        let db = Database::in_memory().unwrap();
        let m = Arc::new(metering(&db));
        one_minute_trial(&m).await;
        let now = Utc::now();
        let tries: Vec<_> = (0..150)
            .map(|_| {
                let m = m.clone();
                tokio::spawn(async move { m.reserve_compute("c@y", "trial", 1_700, now).await })
            })
            .collect();
        let mut taken = 0;
        for t in tries {
            taken += u64::from(t.await.unwrap().is_ok());
        }
        let ledger = m
            .quota_store()
            .count(&compute_key("c@y", now.date_naive()))
            .await
            .unwrap()
            .unwrap() as u64;
        assert_eq!(taken, 36, "0, 1.7 s, ... 59.5 s were below the minute");
        assert_eq!(ledger, taken * 1_700);
        assert!(ledger < 60_000 + 1_700);
    }
}
