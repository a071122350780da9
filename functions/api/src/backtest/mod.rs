//! The backtest service's routes; the request model and the job live in
//! `services::backtest`.

pub mod batch;
pub mod report;
pub mod routes;

use crate::error::ApiError;
use services::backtest::prepare::PrepareError;

impl From<PrepareError> for ApiError {
    fn from(e: PrepareError) -> Self {
        match e {
            PrepareError::Invalid(m) => ApiError::bad_request(m),
            PrepareError::Port(p) => p.into(),
        }
    }
}
