//! Usage and quotas as a deployment applies them: what each request and task
//! counts, and whether a plan's limits let it through.
//!
//! Requests never wait on the usage store: counts gather in a [`Meter`] and
//! are flushed every [`FLUSH_EVERY`]. Rate limits reserve a block of each
//! minute's requests at a time from the shared [`QuotaStore`], so most
//! requests decide in memory while every instance still draws on one count.
//!
//! Monthly compute is a ledger per account and month in the same store: a
//! submit reserves its task's estimate while the ledger is below the plan's
//! limit, and the worker settles each attempt's counted compute against it,
//! so work accepted at once overshoots the limit by at most one estimate.

#[cfg(all(test, feature = "sqlite"))]
mod allowance_tests;
mod compute;

pub use compute::Reserved;

use crate::PortError;
use crate::accounts::{AccountStore, Service};
use crate::clock::{Clock, SystemClock};
use crate::quota::{Hold, PlanLimits, QuotaStore, default_limits};
use crate::usage::{Meter, UsageDay, UsageStore};
use chrono::{DateTime, Datelike, NaiveDate, TimeDelta, Utc};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often gathered counts are written; a crash loses at most this much.
pub const FLUSH_EVERY: Duration = Duration::from_secs(2);
/// How long an instance uses a plan's limits (and a task owner's plan)
/// before reading them again: an operator's change reaches every instance
/// within this.
pub const PLAN_CACHE: Duration = Duration::from_secs(5);
/// How long a month's stored compute total is reused for submit checks.
const COMPUTE_CACHE: Duration = Duration::from_secs(5);

/// A limit a request or task is over, and when to try again.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct OverLimit {
    /// `requests_per_minute` or `monthly_compute_minutes`.
    pub limit: &'static str,
    pub value: u64,
    /// Seconds until the limit's window ends.
    pub retry_after: u64,
    pub message: String,
}

/// Held by the one request reserving a block for an account and service.
type Gate = Arc<tokio::sync::Mutex<()>>;

/// A minute's requests an instance reserved and how many it has used.
struct Window {
    minute: i64,
    granted: u32,
    used: u32,
    /// The shared counter had nothing left for this minute under `limit`.
    full: bool,
    limit: u32,
    /// The shared counter after this instance's last reservation.
    total: u64,
}

impl Window {
    /// Requests left this minute: the limit less what every instance has
    /// reserved, plus what this one reserved and has not used.
    fn remaining(&self) -> u32 {
        let unused = u64::from(self.granted - self.used);
        (u64::from(self.limit) + unused).saturating_sub(self.total) as u32
    }
}

/// What is left of a rate limit after an admitted request: the figures of
/// the `RateLimit` and `RateLimit-Policy` headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowance {
    /// Requests per window (a minute).
    pub limit: u32,
    /// Requests left in this window: exact on one instance; with several,
    /// as of this instance's last reservation (another's unused reservation
    /// counts as used, and its later ones are seen at the next).
    pub remaining: u32,
    /// Seconds until the window ends.
    pub reset: u64,
}

/// The window of the rate limits, in seconds.
pub const RATE_WINDOW_SECONDS: u64 = 60;

pub struct Metering {
    meter: Meter,
    usage: Arc<dyn UsageStore>,
    quotas: Arc<dyn QuotaStore>,
    /// Plans of task owners, for the worker's slot limits.
    accounts: Arc<dyn AccountStore>,
    /// Per account, a window per service (indexed as [`service_index`]).
    windows: Mutex<HashMap<String, [Option<Window>; 3]>>,
    /// Per account and service, held while a block is being reserved.
    reserving: Mutex<HashMap<(String, usize), Gate>>,
    plans: Mutex<HashMap<String, (Instant, PlanLimits)>>,
    owners: Mutex<HashMap<String, (Instant, String)>>,
    compute: Mutex<HashMap<(String, u32), (Instant, u64)>>,
    flushed: Mutex<Instant>,
    /// The calendar the minute windows and usage days are counted in.
    clock: Arc<dyn Clock>,
}

/// Counter names, shared by recording and reporting.
pub fn requests_counter(service: Service) -> &'static str {
    match service {
        Service::Backtest => "requests:backtest",
        Service::Analytics => "requests:analytics",
        Service::Data => "requests:data",
    }
}
pub const COMPUTE_PREFIX: &str = "compute_ms:";
/// What a key's share of a counter is kept under, beside the account's
/// own count (`/usage?by=key`).
pub const KEY_PREFIX: &str = "key:";

/// The counter of key `id`'s share of `counter`.
pub fn key_counter(id: &str, counter: &str) -> String {
    format!("{KEY_PREFIX}{id}:{counter}")
}
/// Whether a request answered with `status` is billed: not when it was
/// refused by its credentials or a scope (401, 403), by a limit or a fair
/// share (429: the requests per minute, the month's compute, the compute
/// pool, long-polls), or because the server could not take it (503).
pub fn billed(status: u16) -> bool {
    !matches!(status, 401 | 403 | 429 | 503)
}

/// The least compute an attempt is counted for. A task's fixed costs (its
/// submit, queue message, task-store writes and result read) are those of
/// about half a second of worker time (docs/deploy.md#cost), so a month's
/// compute limit bounds what a plan can cost only if short tasks count at
/// least this.
pub const MIN_ATTEMPT_COMPUTE_MS: u64 = 1_000;
pub const DATA_ROWS: &str = "rows:data";
pub const DATA_BYTES: &str = "bytes:data";

fn service_index(service: Service) -> usize {
    match service {
        Service::Backtest => 0,
        Service::Analytics => 1,
        Service::Data => 2,
    }
}

/// A month as `year * 12 + month0`, for cache keys.
fn month_index(d: NaiveDate) -> u32 {
    (d.year() as u32) * 12 + d.month0()
}

/// The first and last day of `day`'s month.
pub fn month_bounds(day: NaiveDate) -> (NaiveDate, NaiveDate) {
    let first = day.with_day(1).expect("day 1 exists");
    let next = first
        .checked_add_months(chrono::Months::new(1))
        .expect("in range");
    (first, next.pred_opt().expect("in range"))
}

impl Metering {
    pub fn new(
        usage: Arc<dyn UsageStore>,
        quotas: Arc<dyn QuotaStore>,
        accounts: Arc<dyn AccountStore>,
    ) -> Self {
        Metering {
            meter: Meter::default(),
            usage,
            quotas,
            accounts,
            windows: Mutex::default(),
            reserving: Mutex::default(),
            plans: Mutex::default(),
            owners: Mutex::default(),
            compute: Mutex::default(),
            flushed: Mutex::new(Instant::now()),
            clock: Arc::new(SystemClock),
        }
    }

    /// Counts minutes and days on `clock` instead of the system's.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The time on the metering clock: what a request is admitted at.
    pub fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    pub fn usage_store(&self) -> &Arc<dyn UsageStore> {
        &self.usage
    }

    pub fn quota_store(&self) -> &Arc<dyn QuotaStore> {
        &self.quotas
    }

    /// Adds `n` to an account's counter for today (UTC).
    pub fn record(&self, account: &str, counter: &str, n: u64) {
        self.meter
            .record(account, self.clock.now().date_naive(), counter, n);
    }

    /// Strategies one batch of `plan` may hold: an operator's limit, else the plan's own.
    pub async fn batch_size(&self, plan: &crate::accounts::Plan) -> usize {
        self.limits(plan.code).await.batch_size(plan)
    }

    /// A plan's limits: an operator's, else the defaults; cached per instance.
    pub async fn limits(&self, plan: &str) -> PlanLimits {
        if let Some((at, l)) = self.plans.lock().get(plan)
            && at.elapsed() < PLAN_CACHE
        {
            return *l;
        }
        let limits = match self.quotas.plan_limits(plan).await {
            Ok(set) => set.unwrap_or_else(|| default_limits(plan)),
            Err(e) => {
                tracing::warn!(plan, error = %e, "plan limits unreadable; using the defaults");
                default_limits(plan)
            }
        };
        self.plans
            .lock()
            .insert(plan.to_string(), (Instant::now(), limits));
        limits
    }

    /// Counts one request of `account` to `service` against the plan's
    /// requests per minute, unless they are used up, and says what is left of
    /// them. A quota store that cannot answer lets the request through (and
    /// logs it): a limit must not become an outage. The minute's count takes
    /// every admitted request; the bill only those [`Self::count_request`]
    /// is told of once their answers are known.
    pub async fn admit(
        &self,
        account: &str,
        plan: &str,
        service: Service,
        now: DateTime<Utc>,
    ) -> Result<Allowance, OverLimit> {
        let limit = self.limits(plan).await.requests_per_minute;
        let minute = now.timestamp().div_euclid(60);
        let slot = service_index(service);
        let reset = (60 - now.timestamp().rem_euclid(60)).max(1) as u64;
        // A reservation's verdict, once there is one to use.
        let verdict = |used: Option<Option<u32>>| {
            used.map(|left| match left {
                Some(remaining) => Ok(Allowance {
                    limit,
                    remaining,
                    reset,
                }),
                None => Err(Self::over_rate(plan, limit, service, now)),
            })
        };
        if let Some(v) = verdict(self.use_reserved(account, slot, minute, limit)) {
            return v;
        }
        // One reservation at a time per account and service: a burst on
        // an empty window waits for one block instead of each request
        // taking a block of its own (and the last ones finding none).
        let gate = self
            .reserving
            .lock()
            .entry((account.to_string(), slot))
            .or_default()
            .clone();
        let _turn = gate.lock().await;
        if let Some(v) = verdict(self.use_reserved(account, slot, minute, limit)) {
            return v;
        }
        // A twentieth of the minute at a time: one store call per block,
        // and at most that much held back from other instances.
        let block = (limit / 20).clamp(1, 1_000);
        let counter = format!("rate#{account}#{service}#{minute}");
        let (granted, total) = match self
            .quotas
            .take(&counter, block, u64::from(limit), (minute + 2) * 60)
            .await
        {
            // What every instance has reserved so far: the rest is what the
            // answer's `RateLimit` header reports.
            Ok(n) => match self.quotas.count(&counter).await {
                Ok(total) => (n, total.unwrap_or(0).max(0) as u64),
                Err(_) => (n, u64::from(n)),
            },
            Err(e) => {
                tracing::warn!(error = %e, "rate limit store unavailable; admitting");
                (1, 1)
            }
        };
        let mut windows = self.windows.lock();
        let entry = &mut windows.entry(account.to_string()).or_default()[slot];
        if entry.as_ref().is_none_or(|w| w.minute != minute) {
            *entry = Some(Window {
                minute,
                granted: 0,
                used: 0,
                full: false,
                limit,
                total: 0,
            });
        }
        let w = entry.as_mut().expect("set above");
        w.limit = limit;
        w.full = granted == 0;
        w.total = total;
        if granted == 0 {
            drop(windows);
            return Err(Self::over_rate(plan, limit, service, now));
        }
        w.granted += granted;
        w.used += 1;
        let remaining = w.remaining();
        drop(windows);
        Ok(Allowance {
            limit,
            remaining,
            reset,
        })
    }

    /// Bills one request of `account` to `service` (and its share to the key
    /// `key`, if it came with one) whose answer had `status`, unless that
    /// answer was a refusal ([`billed`]).
    pub fn count_request(&self, account: &str, service: Service, key: Option<&str>, status: u16) {
        if !billed(status) {
            return;
        }
        let counter = requests_counter(service);
        self.record(account, counter, 1);
        if let Some(id) = key {
            self.record(account, &key_counter(id, counter), 1);
        }
    }

    /// Uses one request of the instance's reservation for this minute, if
    /// any is left, and says how many remain after it (`None` inside: the
    /// minute is used up); `None` when the store must be asked.
    fn use_reserved(
        &self,
        account: &str,
        slot: usize,
        minute: i64,
        limit: u32,
    ) -> Option<Option<u32>> {
        let mut windows = self.windows.lock();
        match windows.get_mut(account).and_then(|w| w[slot].as_mut()) {
            Some(w) if w.minute == minute && w.used < w.granted => {
                w.used += 1;
                Some(Some(w.remaining()))
            }
            // A full counter stays full until its minute ends, unless the
            // plan's limit was raised since: refused here, without a store
            // call per refused request.
            Some(w) if w.minute == minute && w.full && limit <= w.limit => Some(None),
            _ => None,
        }
    }

    fn over_rate(plan: &str, limit: u32, service: Service, now: DateTime<Utc>) -> OverLimit {
        crate::telemetry::quota_rejected(plan, "requests_per_minute");
        let retry_after = (60 - now.timestamp().rem_euclid(60)).max(1) as u64;
        OverLimit {
            limit: "requests_per_minute",
            value: u64::from(limit),
            retry_after,
            message: format!(
                "rate limit reached: the '{plan}' plan allows {limit} requests per minute to the {service} service (limit requests_per_minute = {limit}); retry in {retry_after} s"
            ),
        }
    }

    /// The account's task compute this month, in milliseconds: stored
    /// (cached briefly) plus what this instance has not flushed yet.
    pub async fn month_compute_ms(&self, account: &str, today: NaiveDate) -> u64 {
        let key = (account.to_string(), month_index(today));
        let cached = self
            .compute
            .lock()
            .get(&key)
            .filter(|(at, _)| at.elapsed() < COMPUTE_CACHE)
            .map(|(_, n)| *n);
        let stored = match cached {
            Some(n) => n,
            None => {
                let (first, last) = month_bounds(today);
                let n = match self.usage.days(account, first..=last).await {
                    Ok(days) => compute_ms(&days),
                    Err(e) => {
                        tracing::warn!(error = %e, "usage unreadable; compute quota not checked");
                        0
                    }
                };
                self.compute.lock().insert(key, (Instant::now(), n));
                n
            }
        };
        stored + self.meter.pending(account, today, COMPUTE_PREFIX)
    }

    /// The plan code of a task owner, cached like plan limits.
    async fn plan_of(&self, owner: &str) -> Result<String, PortError> {
        if let Some((at, p)) = self.owners.lock().get(owner)
            && at.elapsed() < PLAN_CACHE
        {
            return Ok(p.clone());
        }
        // A test-mode owner has its account's plan.
        let plan = self
            .accounts
            .get(crate::keys::account_of(owner).0)
            .await?
            .map_or_else(|| "none".to_string(), |a| a.plan);
        self.owners
            .lock()
            .insert(owner.to_string(), (Instant::now(), plan.clone()));
        Ok(plan)
    }

    /// Takes one of the owner's running-task slots for `task` for `lease`;
    /// false while the plan's concurrent tasks are all running.
    pub async fn hold_slot(
        &self,
        owner: &str,
        task: uuid::Uuid,
        lease: TimeDelta,
    ) -> Result<bool, PortError> {
        let plan = self.plan_of(owner).await?;
        let limit = self.limits(&plan).await.concurrent_tasks;
        let now = self.clock.now().timestamp_millis();
        self.quotas
            .hold(
                &format!("slots#{owner}"),
                limit,
                Hold {
                    holder: &task.to_string(),
                    now_ms: now,
                    until_ms: now + lease.num_milliseconds(),
                },
            )
            .await
    }

    pub async fn release_slot(&self, owner: &str, task: uuid::Uuid) -> Result<(), PortError> {
        self.quotas
            .release(&format!("slots#{owner}"), &task.to_string())
            .await
    }

    /// Writes the gathered counts to the usage store.
    pub async fn flush(&self) -> Result<usize, PortError> {
        *self.flushed.lock() = Instant::now();
        self.meter.flush(self.usage.as_ref()).await
    }

    /// Flushes when the last flush is [`FLUSH_EVERY`] old: for runtimes
    /// that freeze between requests (Lambda), at the end of a request.
    pub async fn flush_if_due(&self) {
        let due = self.flushed.lock().elapsed() >= FLUSH_EVERY;
        if due && let Err(e) = self.flush().await {
            tracing::warn!(error = %e, "usage not written; kept for the next flush");
        }
    }

    /// Flushes every [`FLUSH_EVERY`] until dropped (a spawned task's body).
    pub async fn flush_forever(self: Arc<Self>) {
        loop {
            tokio::time::sleep(FLUSH_EVERY).await;
            if let Err(e) = self.flush().await {
                tracing::warn!(error = %e, "usage not written; kept for the next flush");
            }
        }
    }

    /// The account's days of usage in `day`'s month.
    pub async fn month(&self, account: &str, day: NaiveDate) -> Result<Vec<UsageDay>, PortError> {
        let (first, last) = month_bounds(day);
        self.usage.days(account, first..=last).await
    }
}

/// Task compute in `days`, in milliseconds.
pub fn compute_ms(days: &[UsageDay]) -> u64 {
    days.iter()
        .flat_map(|d| d.counters.iter())
        .filter(|(k, _)| k.starts_with(COMPUTE_PREFIX))
        .map(|(_, n)| *n)
        .sum()
}

#[cfg(all(test, feature = "sqlite"))]
mod tests {
    use super::*;
    use crate::accounts::SqliteAccountStore;
    use crate::quota::SqliteQuotaStore;
    use crate::sqlite::Database;
    use crate::usage::SqliteUsageStore;

    pub(super) fn metering(db: &Database) -> Metering {
        Metering::new(
            Arc::new(SqliteUsageStore::new(db.clone())),
            Arc::new(SqliteQuotaStore::new(db.clone())),
            Arc::new(SqliteAccountStore::new(db.clone())),
        )
    }

    #[tokio::test]
    async fn two_instances_share_one_minute_of_requests() {
        let db = Database::in_memory().unwrap();
        let quotas = SqliteQuotaStore::new(db.clone());
        let limits = PlanLimits {
            requests_per_minute: 45,
            concurrent_tasks: 1,
            monthly_compute_minutes: 1,
            max_batch: None,
        };
        quotas.set_plan_limits("pro", limits).await.unwrap();
        let (a, b) = (metering(&db), metering(&db));
        // Five seconds into the current minute (stored windows expire by the clock).
        let minute = Utc::now().timestamp().div_euclid(60) * 60;
        let at = DateTime::from_timestamp(minute + 5, 0).unwrap();
        let mut admitted = 0;
        for k in 0..60 {
            let m = if k % 2 == 0 { &a } else { &b };
            if m.admit("x@y", "pro", Service::Data, at).await.is_ok() {
                m.count_request("x@y", Service::Data, None, 200);
                admitted += 1;
            }
        }
        assert_eq!(admitted, 45, "blocks of 2 reserved by each, never past 45");
        let over = a.admit("x@y", "pro", Service::Data, at).await.unwrap_err();
        assert_eq!(
            (over.limit, over.value, over.retry_after),
            ("requests_per_minute", 45, 55)
        );
        assert!(
            a.admit("x@y", "pro", Service::Backtest, at).await.is_ok(),
            "per service"
        );
        a.count_request("x@y", Service::Backtest, Some("0a1b2c3d4e5f"), 200);
        let later = at + TimeDelta::seconds(60);
        assert!(
            a.admit("x@y", "pro", Service::Data, later).await.is_ok(),
            "next minute"
        );
        a.count_request("x@y", Service::Data, None, 200);
        // Admitted, then refused by a limit or a share: not billed.
        for refused in [401, 403, 429, 503] {
            a.count_request("x@y", Service::Data, None, refused);
        }
        a.flush().await.unwrap();
        b.flush().await.unwrap();
        let day = at.date_naive();
        let days = a.month("x@y", day).await.unwrap();
        assert_eq!(days[0].counters["requests:data"], 46);
        assert_eq!(days[0].counters["requests:backtest"], 1);
        assert_eq!(days[0].counters["key:0a1b2c3d4e5f:requests:backtest"], 1);
    }

    #[tokio::test]
    async fn a_limit_raised_mid_minute_lets_a_refused_tenant_through() {
        let db = Database::in_memory().unwrap();
        let m = metering(&db);
        let set = |n| PlanLimits {
            requests_per_minute: n,
            concurrent_tasks: 1,
            monthly_compute_minutes: 1,
            max_batch: None,
        };
        m.quota_store()
            .set_plan_limits("pro", set(3))
            .await
            .unwrap();
        let minute = Utc::now().timestamp().div_euclid(60) * 60;
        let at = DateTime::from_timestamp(minute + 5, 0).unwrap();
        for _ in 0..3 {
            m.admit("x@y", "pro", Service::Data, at).await.unwrap();
        }
        let over = m.admit("x@y", "pro", Service::Data, at).await.unwrap_err();
        assert_eq!(over.value, 3);
        m.quota_store()
            .set_plan_limits("pro", set(5))
            .await
            .unwrap();
        // Until the plan cache passes, the old limit holds...
        assert_eq!(
            m.admit("x@y", "pro", Service::Data, at)
                .await
                .unwrap_err()
                .value,
            3
        );
        // ...then the new one, in the same minute.
        m.plans.lock().clear();
        m.admit("x@y", "pro", Service::Data, at).await.unwrap();
        m.admit("x@y", "pro", Service::Data, at).await.unwrap();
        let over = m.admit("x@y", "pro", Service::Data, at).await.unwrap_err();
        assert_eq!(over.value, 5);
        assert!(
            over.message.contains("allows 5 requests"),
            "{}",
            over.message
        );
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_burst_on_an_empty_window_reserves_one_block_not_one_each() {
        let db = Database::in_memory().unwrap();
        let m = Arc::new(metering(&db));
        // pro: 12,000 a minute in blocks of 600; 64 at once all pass.
        let now = Utc::now();
        let burst: Vec<_> = (0..64)
            .map(|_| {
                let m = m.clone();
                tokio::spawn(async move { m.admit("x@y", "pro", Service::Backtest, now).await })
            })
            .collect();
        for b in burst {
            assert!(b.await.unwrap().is_ok());
        }
        let minute = now.timestamp().div_euclid(60);
        let taken = m
            .quota_store()
            .take(
                &format!("rate#x@y#backtest#{minute}"),
                12_000,
                12_000,
                i64::MAX,
            )
            .await
            .unwrap();
        assert_eq!(taken, 12_000 - 600, "one block reserved");
    }

    #[test]
    fn month_bounds_cover_the_calendar_month() {
        let d = |s: &str| s.parse::<NaiveDate>().unwrap();
        assert_eq!(
            month_bounds(d("2028-02-10")),
            (d("2028-02-01"), d("2028-02-29"))
        );
        assert_eq!(
            month_bounds(d("2026-12-31")),
            (d("2026-12-01"), d("2026-12-31"))
        );
    }
}
