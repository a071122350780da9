//! Screen routes (analytics 4.7): thin handlers over `services::analytics::screens`.

use super::{AnalyticsErrors, Standard};
use crate::auth::Tenant;
use crate::error::ApiError;
use crate::extract::{Params, Query};
use axum::Json;
use services::analytics::screens::{self, ScreenAnswer, ScreenList, ScreenParams};

/// `GET /screens/get-predefined-screens`: the fifteen screens and their categories.
#[utoipa::path(get, path = "/screens/get-predefined-screens", tag = "analytics",
    responses((status = 200, description = "The screens", body = Standard<ScreenList>), AnalyticsErrors))]
pub(crate) async fn predefined_screens() -> Json<Standard<ScreenList>> {
    Json(Standard {
        code: 200,
        msg: "Predefined screens".into(),
        data: screens::predefined(),
    })
}

/// `GET /screens`: one screen's records; `type` names its category.
#[utoipa::path(get, path = "/screens", tag = "analytics",
    params(ScreenParams),
    responses((status = 200, description = "The screen's records", body = ScreenAnswer), AnalyticsErrors))]
pub(crate) async fn screen(
    Tenant { state, .. }: Tenant,
    raw: Params,
) -> Result<Json<ScreenAnswer>, ApiError> {
    let q = Query::<ScreenParams>::from_params(raw)?.0.validate()?;
    Ok(Json(screens::screen(state.market.as_ref(), &q).await?))
}
