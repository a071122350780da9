//! Request-time CPU work on the server's one compute pool
//! (`platform::pool`), counted against the caller's monthly compute like a
//! task's attempt and refused once the month's compute is spent. A refusal
//! by the pool is 429 (the tenant's share) or 503 (the pool is full), both
//! with `Retry-After`.

use crate::auth::Tenant;
use crate::error::ApiError;
use platform::metering::COMPUTE_PREFIX;
use platform::pool::{ComputeError, Refused, Stop};

/// Seconds a refused request is told to wait: computations take seconds.
const RETRY_AFTER_S: u64 = 1;

/// Runs `f` for the caller on the compute pool; its run time is recorded
/// as `kind`'s compute (`/usage`: `compute_ms.<kind>`).
pub async fn metered<R, F>(t: &Tenant, kind: &'static str, f: F) -> Result<R, ApiError>
where
    R: Send + 'static,
    F: FnOnce(&Stop) -> R + Send + 'static,
{
    let account = &t.caller.0;
    let now = chrono::Utc::now();
    // A millisecond is held while it runs: enough to refuse a caller whose
    // month is spent, and nothing to give back if the client leaves.
    if let Some(m) = &t.state.metering {
        m.reserve_compute(&account.email, account.plan.code, 1, now)
            .await
            .map_err(crate::auth::over_limit)?;
    }
    let done = t.state.compute.run(&account.email, f).await;
    let ran = done
        .as_ref()
        .map_or(0, |d| (d.took.as_millis() as u64).max(1));
    if let Some(m) = &t.state.metering {
        if ran > 0 {
            m.record(&account.email, &format!("{COMPUTE_PREFIX}{kind}"), ran);
        }
        m.settle_compute(&account.email, ran, 1, now.date_naive(), chrono::Utc::now())
            .await;
    }
    match done {
        Ok(d) => Ok(d.value),
        Err(ComputeError::Refused(r @ Refused::Tenant { .. })) => {
            Err(ApiError::new(429, r.to_string()).with_retry_after(RETRY_AFTER_S))
        }
        Err(ComputeError::Refused(r @ Refused::Full { .. })) => {
            tracing::warn!(%kind, "compute pool full");
            Err(ApiError::new(503, r.to_string()).with_retry_after(RETRY_AFTER_S))
        }
        Err(ComputeError::Panicked(why)) => {
            tracing::error!(%kind, panic = %why, "computation panicked");
            platform::telemetry::panic_caught();
            Err(ApiError::internal())
        }
    }
}
