//! Smart option scanner route (analytics 4.6): a thin handler over
//! `services::analytics::options`.

use super::AnalyticsErrors;
use crate::auth::Tenant;
use crate::error::ApiError;
use crate::extract::{Params, Query};
use axum::Json;
use services::analytics::options::{self, OptionAnswer, OptionParams};

/// `GET /smart-option-scanner/options`: short puts worth selling on a day
/// of chains (default the latest), best first.
#[utoipa::path(get, path = "/smart-option-scanner/options", tag = "analytics",
    params(OptionParams),
    responses((status = 200, description = "The listed puts, or code 407 without data when the date has no chains or nothing passes", body = OptionAnswer), AnalyticsErrors))]
pub(crate) async fn options(
    Tenant { state, .. }: Tenant,
    raw: Params,
) -> Result<Json<OptionAnswer>, ApiError> {
    let q = Query::<OptionParams>::from_params(raw)?.0.validate()?;
    Ok(Json(options::options(state.market.as_ref(), &q).await?))
}
