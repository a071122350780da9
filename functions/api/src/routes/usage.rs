//! `GET /usage` (and `/ws/usage` in the data service's envelope): the
//! caller's own usage this month or another, with the plan's limits beside
//! it. Open to every account, whatever its plan's services.

use crate::auth::{Caller, Tenant};
use crate::error::ApiError;
use crate::extract::Params;
use crate::scopes::scoped;
use crate::state::AppState;
use axum::Json;
use services::usage::UsageReport;
use utoipa_axum::router::OpenApiRouter;

/// The month to report.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct MonthParam {
    /// `YYYY-MM` (UTC); the current month by default.
    #[param(
        pattern = "^(18|19|20|21)[0-9]{2}-(0[1-9]|1[0-2])$",
        example = "2026-11"
    )]
    month: Option<String>,
    /// `key`: break the month down by the account's keys (of the caller's mode).
    #[param(example = "key", pattern = "^key$")]
    by: Option<String>,
}

async fn report(
    state: &AppState,
    caller: &Caller,
    params: &Params,
) -> Result<UsageReport, ApiError> {
    let month = match params.get("month") {
        Some(m) => services::usage::parse_month(m).map_err(ApiError::bad_request)?,
        None => chrono::Utc::now().date_naive(),
    };
    let Some(metering) = &state.metering else {
        return Err(ApiError::not_found(
            "usage is not metered in this deployment",
        ));
    };
    let keys = match params.get("by") {
        None => None,
        Some("key") => match state.auth.keys() {
            Some(k) => Some(k.store().list(&caller.account.email).await?),
            None => Some(Vec::new()),
        },
        Some(other) => {
            return Err(ApiError::field(
                "by",
                format!("must be 'key' (got '{other}')"),
            ));
        }
    };
    Ok(services::usage::for_account(
        metering,
        &caller.account,
        &caller.owner(),
        month,
        keys.as_deref(),
    )
    .await?)
}

/// The caller's usage of a month, per day and in total, per service, with
/// the plan's limits. Counts arrive within `delay_seconds`.
#[utoipa::path(get, path = "/usage", tag = "backtest", params(MonthParam), responses((status = 200, description = "The caller's usage and plan limits", body = UsageReport), (status = 400, description = "`month` is not YYYY-MM", body = crate::openapi::ErrorDetail)))]
pub async fn usage(
    Tenant { state, caller }: Tenant,
    params: Params,
) -> Result<Json<UsageReport>, ApiError> {
    Ok(Json(report(&state, &caller, &params).await?))
}

/// The caller's usage, as `/usage`, in the data service's envelope.
#[utoipa::path(get, path = "/usage", tag = "data", params(MonthParam), responses((status = 200, description = "The caller's usage and plan limits", body = UsageReport), (status = 400, description = "`month` is not YYYY-MM", body = crate::openapi::DataError)))]
pub async fn data_usage(
    Tenant { state, caller }: Tenant,
    params: Params,
) -> Result<Json<UsageReport>, ApiError> {
    Ok(Json(report(&state, &caller, &params).await?))
}

pub fn backtest_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(scoped!(Read: usage))
}

pub fn data_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(scoped!(Read: data_usage))
}
