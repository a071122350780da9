//! The job handlers this deployment serves, by task kind. Each service group
//! registers its handlers here; the worker dispatches on the task's kind.

use crate::state::AppState;
use platform::tasks::TaskKind;
use platform::worker::JobRegistry;
use std::sync::Arc;

pub fn registry(state: &AppState) -> JobRegistry {
    let mut r = JobRegistry::default();
    r.register(
        TaskKind::StrategyBacktest,
        Arc::new(crate::backtest::BacktestJob {
            market: state.market.clone(),
        }),
    );
    r
}
