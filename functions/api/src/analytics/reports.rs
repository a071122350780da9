//! Report routes (analytics 4.8): thin handlers over `services::analytics::reports`.

use super::{AnalyticsErrors, Standard};
use crate::auth::Tenant;
use crate::error::ApiError;
use crate::extract::{Params, Query};
use axum::Json;
use services::analytics::reports::{self, ReportAnswer, ReportParams, ReportTypes};

/// `GET /reports/get-predefined-report-types`: the four report types.
#[utoipa::path(get, path = "/reports/get-predefined-report-types", tag = "analytics",
    responses((status = 200, description = "The report types", body = Standard<ReportTypes>), AnalyticsErrors))]
pub(crate) async fn report_types() -> Json<Standard<ReportTypes>> {
    Json(Standard {
        code: 200,
        msg: "Report types".into(),
        data: reports::report_types(),
    })
}

/// `GET /reports`: the latest reports, of one type or of all.
#[utoipa::path(get, path = "/reports", tag = "analytics",
    params(ReportParams),
    responses((status = 200, description = "Reports, newest first", body = ReportAnswer), AnalyticsErrors))]
pub(crate) async fn reports(
    Tenant { state, .. }: Tenant,
    raw: Params,
) -> Result<Json<ReportAnswer>, ApiError> {
    let q = Query::<ReportParams>::from_params(raw)?.0.validate()?;
    Ok(Json(reports::reports(state.market.as_ref(), &q).await?))
}
