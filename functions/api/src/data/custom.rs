//! Custom indicators (4.6): an account's definitions, and their calculation.

use super::routes::body;
use super::schemas::*;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::error::DataError;
use crate::extract::Params;
use crate::openapi::DataErrors;
use crate::state::AppState;
use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use services::data::format::{push_key, push_num, push_str};
use services::data::schemas::*;
use services::data::{catalog, full_range, indicator, series};

/// Longest a custom-indicator calculation may take before the answer is 504:
/// `MARKETLAB_CUSTOM_TIMEOUT_MS`, 10 seconds by default.
fn custom_timeout() -> std::time::Duration {
    let ms = std::env::var("MARKETLAB_CUSTOM_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    std::time::Duration::from_millis(ms)
}

fn custom_json(c: &platform::accounts::CustomIndicator) -> serde_json::Value {
    serde_json::json!({
        "indicator_1_url": c.indicator_1_url,
        "indicator_2_url": c.indicator_2_url,
        "name": c.name,
        "url": c.url,
        "upper_extreme_value": c.upper_extreme_value,
        "lower_extreme_value": c.lower_extreme_value,
        "timeframe": c.timeframe,
        "ma": c.ma,
        "calculate": c.calculate,
        "create_date": c.create_date.format("%Y-%m-%dT%H:%M:%S%.6f").to_string(),
        "indicator_weight": null,
        "mul_indicator": null,
        "combine_type": null,
        "benchmark": null,
        "next_process": null,
        "tech_code": null,
    })
}

/// The account's custom indicators.
#[utoipa::path(get, path = "/getUserIndicators", tag = "data", params(UserIndicatorsParams), responses((status = 200, description = "The account's custom indicators", body = UserIndicators), (status = 400, description = "`all` or `ordering` invalid", body = DataError), DataErrors))]
pub(crate) async fn user_indicators(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    params: Params,
) -> Result<Response, ApiError> {
    let mut list = caller.0.custom_indicators.clone();
    match params.get("ordering").unwrap_or("-create_date") {
        "-create_date" => list.sort_by_key(|c| std::cmp::Reverse(c.create_date)),
        "create_date" => list.sort_by_key(|c| c.create_date),
        other => {
            return Err(ApiError::bad_request(format!(
                "query parameter 'ordering': '{other}' is not create_date or -create_date"
            )));
        }
    }
    if let Some(all) = params.get("all")
        && !matches!(all, "true" | "false" | "True" | "False" | "1" | "0")
    {
        return Err(ApiError::bad_request(format!(
            "query parameter 'all': '{all}' is not true or false"
        )));
    }
    Ok(body(
        &state,
        serde_json::Value::Array(list.iter().map(custom_json).collect()).to_string(),
    ))
}

/// One custom indicator, calculated (504 if the calculation times out).
#[utoipa::path(get, path = "/getUserIndicatorData", tag = "data", params(CustomUrl), responses((status = 200, description = "One custom indicator, calculated", body = CustomSeries), (status = 400, description = "`url` missing, or the stored definition is invalid", body = DataError), (status = 504, description = "The calculation timed out; retry", body = DataError), DataErrors))]
pub(crate) async fn user_indicator_data(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    params: Params,
) -> Result<Response, ApiError> {
    let url = params.required("url")?;
    let def = caller
        .0
        .custom_indicators
        .iter()
        .find(|c| c.url == url)
        .ok_or_else(|| ApiError::not_found(format!("custom indicator '{url}' not found")))?
        .clone();
    let how = engine::custom::Combine::parse(&def.calculate).ok_or_else(|| ApiError::bad_request(format!("custom indicator '{url}': calculate '{}' is not ratio, difference, sum, product or average", def.calculate)))?;
    let freq = match def.timeframe.to_ascii_lowercase().as_str() {
        "daily" => engine::Frequency::Daily,
        "weekly" => engine::Frequency::Weekly,
        "monthly" => engine::Frequency::Monthly,
        other => {
            return Err(ApiError::bad_request(format!(
                "custom indicator '{url}': timeframe '{other}' is not Daily, Weekly or Monthly"
            )));
        }
    };
    let ma: usize = def.ma.trim().parse().map_err(|_| {
        ApiError::bad_request(format!(
            "custom indicator '{url}': ma '{}' is not a whole number",
            def.ma
        ))
    })?;
    let c = catalog(&*state.market).await?;
    indicator(&caller.0, &c, &def.indicator_1_url)?;
    indicator(&caller.0, &c, &def.indicator_2_url)?;
    let (a, b) = (
        series(&*state.market, &def.indicator_1_url).await?,
        series(&*state.market, &def.indicator_2_url).await?,
    );
    let limit = custom_timeout();
    let started = std::time::Instant::now();
    let timed_out = || {
        ApiError::new(
            504,
            format!("calculating custom indicator '{url}' timed out; retry shortly"),
        )
    };
    let work = tokio::task::spawn_blocking(move || {
        engine::custom::calculate((&a.time, &a.close), (&b.time, &b.close), how, freq, ma)
    });
    let (time, value) = tokio::time::timeout(limit, work)
        .await
        .map_err(|_| timed_out())?
        .map_err(|_| ApiError::internal())?;
    // A result that arrived past the limit is refused too, as a slow upstream would be.
    if started.elapsed() > limit {
        return Err(timed_out());
    }
    let mut out = String::with_capacity(time.len() * 70 + 2);
    out.push('[');
    let shown = full_range(&caller.0, time.len());
    for (i, (t, v)) in time[shown.clone()].iter().zip(&value[shown]).enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"DT\":\"");
        push_key(&mut out, *t);
        out.push_str("\",\"close\":");
        push_num(&mut out, *v);
        out.push_str(",\"symbol\":");
        push_str(&mut out, url);
        out.push('}');
    }
    out.push(']');
    Ok(body(&state, out))
}
