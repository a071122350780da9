//! The job handlers the embedded server runs: those of `services`, over this
//! deployment's market data.

use crate::state::AppState;
use platform::worker::JobRegistry;

pub fn registry(state: &AppState) -> JobRegistry {
    services::jobs::registry(
        state.market.clone(),
        state.scanner.clone(),
        state.tasks.clone(),
        state.queue.clone(),
        state.uploads.clone(),
    )
}
