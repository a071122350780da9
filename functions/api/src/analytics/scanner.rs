//! Smart stock scanner routes (analytics 4.4) in the standard envelope
//! `{code, msg, data}`. Thin handlers over `services::analytics::scanner`.

use super::{AnalyticsErrors, Standard};
use axum::Json;
use services::analytics::scanner::{self, answers::SignalList};

/// `GET /smart-stock-scanner/get-predefined-signals`: the 37 signals, flat
/// and by category, with their horizon and holding period.
#[utoipa::path(get, path = "/smart-stock-scanner/get-predefined-signals", tag = "analytics",
    responses((status = 200, description = "The scanner's signals", body = Standard<SignalList>), AnalyticsErrors))]
pub(crate) async fn predefined_signals() -> Json<Standard<SignalList>> {
    Json(Standard {
        code: 200,
        msg: "Predefined signals".into(),
        data: scanner::predefined_signals(),
    })
}
