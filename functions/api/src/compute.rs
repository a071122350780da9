//! Request-time CPU work on the server's one compute pool
//! (`platform::pool`), counted against the caller's monthly compute like a
//! task's attempt and refused once the month's compute is spent. A refusal
//! by the pool is 429 (the tenant's share) or 503 (the pool is full), both
//! with `Retry-After`.

use crate::auth::Tenant;
use crate::error::ApiError;
use platform::metering::COMPUTE_PREFIX;
use platform::pool::{ComputeError, ComputePool, Stop};

/// The caller's place on the compute pool for one `kind` of computation,
/// taken before its inputs are read: refused at once (429/503) when the
/// caller or the pool is at its share, or the caller's month is spent.
pub struct Admitted<'a> {
    t: &'a Tenant,
    kind: &'static str,
    place: platform::shares::Share,
    now: chrono::DateTime<chrono::Utc>,
}

/// A place for `kind` on the compute pool for the caller. The place is
/// taken first, in memory: a flood past the caller's share is refused
/// without a call to the quota store, whose connection every tenant's
/// requests share.
pub async fn admit<'a>(t: &'a Tenant, kind: &'static str) -> Result<Admitted<'a>, ApiError> {
    let account = &t.caller.account;
    // Test mode has its own share and books.
    let owner = t.caller.owner();
    let place = t.state.compute.admit(&owner)?;
    let now = chrono::Utc::now();
    // A millisecond is held while it runs: enough to refuse a caller whose
    // month is spent, and nothing to give back if the client leaves.
    if let Some(m) = &t.state.metering {
        m.reserve_compute(&owner, account.plan.code, 1, now)
            .await
            .map_err(crate::auth::over_limit)?;
    }
    Ok(Admitted {
        t,
        kind,
        place,
        now,
    })
}

impl Admitted<'_> {
    /// Runs `f` on the pool; its run time is recorded as the caller's
    /// `kind` compute (`/usage`: `compute_ms.<kind>`).
    pub async fn run<R, F>(self, f: F) -> Result<R, ApiError>
    where
        R: Send + 'static,
        F: FnOnce(&Stop) -> R + Send + 'static,
    {
        let done = ComputePool::run_admitted(self.place, f).await;
        let ran = done
            .as_ref()
            .map_or(0, |d| (d.took.as_millis() as u64).max(1));
        settle(self.t, self.kind, ran, self.now).await;
        match done {
            Ok(d) => Ok(d.value),
            Err(ComputeError::Refused(r)) => Err(r.into()),
            Err(ComputeError::Panicked(why)) => {
                tracing::error!(kind = %self.kind, panic = %why, "computation panicked");
                platform::telemetry::panic_caught();
                Err(ApiError::internal())
            }
        }
    }
}

/// Records `ran` ms of `kind` and settles the millisecond held since `now`.
async fn settle(t: &Tenant, kind: &str, ran: u64, now: chrono::DateTime<chrono::Utc>) {
    let Some(m) = &t.state.metering else { return };
    let email = &t.caller.owner();
    if ran > 0 {
        m.record(email, &format!("{COMPUTE_PREFIX}{kind}"), ran);
    }
    m.settle_compute(email, ran, 1, now.date_naive(), chrono::Utc::now())
        .await;
}
