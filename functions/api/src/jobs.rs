//! The job handlers this deployment serves, by task kind. Each service group
//! registers its handlers here; the worker dispatches on the task's kind.

use crate::state::AppState;
use platform::worker::JobRegistry;

pub fn registry(_state: &AppState) -> JobRegistry {
    JobRegistry::default()
}
