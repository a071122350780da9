//! What every handler can reach: the ports, injected once at start-up.

use platform::accounts::Authenticator;
use platform::marketdata::MarketData;
use platform::queue::JobQueue;
use platform::scanner::ScannerStore;
use platform::tasks::TaskStore;
use std::sync::Arc;

/// The state as a handler takes it.
pub type Shared = axum::extract::State<AppState>;

#[derive(Clone)]
pub struct AppState {
    pub tasks: Arc<dyn TaskStore>,
    pub queue: Arc<dyn JobQueue>,
    pub market: Arc<dyn MarketData>,
    /// The nightly scanner's day files, in the market data store.
    pub scanner: Arc<dyn ScannerStore>,
    pub auth: Arc<Authenticator>,
    /// Data service: answer with the legacy double-encoded body (a JSON
    /// string holding the JSON) for old clients. Off by default.
    pub data_legacy_json: bool,
    /// Body size and time limits of every request.
    pub limits: crate::limits::Limits,
    /// CSV mode's uploaded bars, stored once per owner and content.
    pub uploads: platform::uploads::Uploads,
    /// Usage counting and plan quotas; none serves every request unmetered.
    pub metering: Option<Arc<platform::metering::Metering>>,
    /// Webhook endpoints, their deliveries and scanner alerts; none answers
    /// those routes with 404 (a deployment without them).
    pub webhooks: Option<platform::webhooks::Hooks>,
    /// Admission to the one compute pool that request-time CPU work runs on.
    pub compute: platform::pool::ComputePool,
    /// Long-polled status reads held at once, per tenant and overall.
    pub long_polls: platform::shares::Shares,
    /// Batch status answers, built once per wake-up for all their waiters.
    pub batch_reads: Arc<crate::shared_reads::SharedReads<crate::shared_reads::Built>>,
    /// The sample data set test-mode keys work on; none refuses them.
    pub test_data: Option<TestData>,
}

/// Market data and scanner days of test mode: the sample set, with caches
/// of its own.
#[derive(Clone)]
pub struct TestData {
    pub market: Arc<dyn MarketData>,
    pub scanner: Arc<dyn ScannerStore>,
}

impl AppState {
    /// The state a caller in `mode` works with: test mode reads the sample set.
    pub fn in_mode(&self, mode: platform::keys::Mode) -> Result<AppState, crate::ApiError> {
        match mode {
            platform::keys::Mode::Live => Ok(self.clone()),
            platform::keys::Mode::Test => {
                let test = self.test_data.as_ref().ok_or_else(|| {
                    crate::ApiError::new(503, "test mode is not available in this deployment")
                })?;
                Ok(AppState {
                    market: test.market.clone(),
                    scanner: test.scanner.clone(),
                    ..self.clone()
                })
            }
        }
    }
}

/// Long-polls one tenant may hold at once (a notebook waiting on many
/// tasks), and all tenants together.
pub const LONG_POLLS: platform::shares::Limits = platform::shares::Limits {
    per_tenant: 100,
    overall: 2_000,
};

/// The long-poll places of a new server.
pub fn long_polls(limits: &crate::limits::Limits) -> platform::shares::Shares {
    platform::shares::Shares::new("long-polls", limits.long_polls)
}
