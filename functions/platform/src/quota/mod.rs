//! Plan limits and the shared counters that enforce them: requests per
//! minute per service, task slots held at once, monthly task compute.
//!
//! Every instance of every function (and every embedded process on one
//! database) sees the same counters: a store grants or refuses atomically,
//! so two instances never both take the last unit of a limit.

use crate::{PortError, PortResult};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

#[cfg(feature = "sqlite")]
mod sqlite;

#[cfg(feature = "sqlite")]
pub use sqlite::SqliteQuotaStore;

/// What a plan allows. Each service counts its own requests against
/// `requests_per_minute`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanLimits {
    /// Authenticated requests per calendar minute (UTC), per service.
    pub requests_per_minute: u32,
    /// Tasks of the account running at once; more wait in PENDING.
    pub concurrent_tasks: u32,
    /// Task compute per calendar month (UTC), in minutes; submits past it are refused.
    pub monthly_compute_minutes: u64,
    /// Strategies one batch may hold, when an operator set it; else the
    /// plan's own (`accounts::Plan::max_batch`). At most [`MAX_BATCH`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_batch: Option<usize>,
}

/// The most strategies an operator may let one batch hold: the
/// million-strategy grid measured in docs/batches.md (memory and time grow
/// with it).
pub const MAX_BATCH: usize = 1_000_000;

impl PlanLimits {
    /// Strategies one batch of `plan` may hold.
    pub fn batch_size(&self, plan: &crate::accounts::Plan) -> usize {
        self.max_batch.unwrap_or(plan.max_batch).min(MAX_BATCH)
    }
}

/// The limits of each plan unless an operator set others (`marketlab plans set`).
pub fn default_limits(plan: &str) -> PlanLimits {
    let (requests_per_minute, concurrent_tasks, monthly_compute_minutes) = match plan {
        "pro" => (12_000, 8, 6_000),
        "backtest" | "analytics" => (6_000, 4, 3_000),
        "premium-data-yearly" | "data" => (3_000, 2, 600),
        "light-data-yearly" => (1_200, 2, 300),
        // The trial is not billed: its rate is the lowest a paid-for
        // plan's evaluation needs (docs/usage.md#what-a-plan-can-cost).
        "trial" => (60, 2, 60),
        _ => (60, 1, 0),
    };
    PlanLimits {
        requests_per_minute,
        concurrent_tasks,
        monthly_compute_minutes,
        max_batch: None,
    }
}

/// `n` more on a counter below `limit`; an absent counter starts at `start`
/// and may be forgotten after `expires_s` (epoch seconds).
#[derive(Debug, Clone, Copy)]
pub struct Reservation {
    pub n: u64,
    pub limit: u64,
    pub start: u64,
    pub expires_s: i64,
}

/// One holder's claim on a slot, at `now_ms` until `until_ms` (epoch
/// milliseconds).
#[derive(Debug, Clone, Copy)]
pub struct Hold<'a> {
    pub holder: &'a str,
    pub now_ms: i64,
    pub until_ms: i64,
}

#[async_trait]
pub trait QuotaStore: Send + Sync {
    /// Adds up to `n` to counter `key` while it stays at most `limit`, and
    /// answers how many it added (0 when the counter is full). The counter
    /// may be forgotten after `expires_s` (epoch seconds); keys name their
    /// window, so an old window never limits a new one.
    async fn take(&self, key: &str, n: u32, limit: u64, expires_s: i64) -> Result<u32, PortError>;

    /// Holds one of `limit` slots of `key` for the hold's holder until its
    /// end; a hold past its time frees its slot, so a crashed worker's slot
    /// comes back. Holding again extends the hold. False when every slot is
    /// held by others.
    async fn hold(&self, key: &str, limit: u32, hold: Hold<'_>) -> PortResult<bool>;

    /// Frees `holder`'s slot of `key` (nothing when it holds none).
    async fn release(&self, key: &str, holder: &str) -> Result<(), PortError>;

    /// Limits an operator set for a plan, if any.
    async fn plan_limits(&self, plan: &str) -> Result<Option<PlanLimits>, PortError>;

    /// Sets a plan's limits for every instance (each picks them up within
    /// its cache time, [`crate::metering::PLAN_CACHE`]).
    async fn set_plan_limits(&self, plan: &str, limits: PlanLimits) -> Result<(), PortError>;

    /// Adds `n` to counter `key` if it is below `limit`, an absent counter
    /// starting at `start`; false, adding nothing, when it is not below.
    /// Concurrent reservations are decided one at a time, so a counter passes
    /// its limit by at most one reservation.
    async fn reserve(&self, key: &str, r: Reservation) -> PortResult<bool>;

    /// Adds `delta` (negative to give back) to counter `key`, an absent one
    /// starting at 0.
    async fn adjust(&self, key: &str, delta: i64, expires_s: i64) -> Result<(), PortError>;

    /// The counter's value, if it exists.
    async fn count(&self, key: &str) -> Result<Option<i64>, PortError>;
}
