//! The job handlers the embedded server runs: those of `services`, over this
//! deployment's market data (and its sample set for test mode).

use crate::state::AppState;
use platform::worker::JobRegistry;

pub fn registry(state: &AppState) -> JobRegistry {
    services::jobs::registry(
        state.market.clone(),
        state.scanner.clone(),
        state.tasks.clone(),
        state.queue.clone(),
        state.uploads.clone(),
        state.test_data.as_ref().map(|t| services::jobs::TestPorts {
            market: t.market.clone(),
            scanner: t.scanner.clone(),
        }),
    )
}
