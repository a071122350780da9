//! Custom indicators (4.6): thin handlers over `services::data::custom`,
//! with the calculation's time limit.

use super::routes::body;
use super::schemas::*;
use crate::auth::Tenant;
use crate::error::ApiError;
use crate::error::DataError;
use crate::error::Reply;
use crate::extract::Params;
use crate::openapi::DataErrors;
use services::data::custom;
use services::data::schemas::*;

/// The account's custom indicators.
#[utoipa::path(get, path = "/getUserIndicators", tag = "data", params(UserIndicatorsParams), responses((status = 200, description = "The account's custom indicators", body = Vec<custom::UserIndicator>), (status = 400, description = "`all` or `ordering` invalid", body = DataError), DataErrors))]
pub(crate) async fn user_indicators(t: Tenant, params: Params) -> Reply {
    let oldest_first = match params.get("ordering").unwrap_or("-create_date") {
        "-create_date" => false,
        "create_date" => true,
        other => {
            return Err(ApiError::field(
                "ordering",
                format!("'{other}' is not create_date or -create_date"),
            ));
        }
    };
    if let Some(all) = params.get("all")
        && !matches!(all, "true" | "false" | "True" | "False" | "1" | "0")
    {
        return Err(ApiError::field(
            "all",
            format!("'{all}' is not true or false"),
        ));
    }
    let list = custom::user_indicators(&t.caller.account, oldest_first);
    Ok(body(
        &t.state,
        serde_json::to_string(&list).expect("custom indicators serialize"),
    ))
}

/// One custom indicator, calculated (504 if the calculation times out).
#[utoipa::path(get, path = "/getUserIndicatorData", tag = "data", params(CustomUrl), responses((status = 200, description = "One custom indicator, calculated", body = CustomSeries), (status = 400, description = "`url` missing, or the stored definition is invalid", body = DataError), (status = 504, description = "The calculation timed out; retry", body = DataError), DataErrors))]
pub(crate) async fn user_indicator_data(t: Tenant, params: Params) -> Reply {
    let url = params.required("url")?;
    let calculation = custom::definition(&t.caller.account, url)?;
    let inputs = custom::inputs(&*t.state.market, &t.caller.account, &calculation).await?;
    let limit = t.state.limits.custom_timeout;
    let started = std::time::Instant::now();
    let timed_out = || {
        ApiError::new(
            504,
            format!("calculating custom indicator '{url}' timed out; retry shortly"),
        )
    };
    let work = tokio::task::spawn_blocking(move || custom::calculate(&calculation, &inputs));
    let calculated = tokio::time::timeout(limit, work)
        .await
        .map_err(|_| timed_out())?
        .map_err(|_| ApiError::internal())?;
    // A result that arrived past the limit is refused too, as a slow upstream would be.
    if started.elapsed() > limit {
        return Err(timed_out());
    }
    Ok(body(
        &t.state,
        custom::answer(&t.caller.account, url, calculated),
    ))
}
