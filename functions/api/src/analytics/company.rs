//! Company detail routes (analytics 4.9) in the standard envelope
//! `{code, msg, data}`: thin handlers over `services::analytics::company`.

use super::{AnalyticsErrors, Standard};
use crate::auth::Tenant;
use crate::error::ApiError;
use crate::extract::{Params, Query};
use axum::Json;
use services::analytics::company::answers::*;
use services::analytics::company::{self, Answer, CompanyParams};

fn standard<T>(a: Answer<T>) -> Json<Standard<T>> {
    Json(Standard {
        code: 200,
        msg: a.msg,
        data: a.data,
    })
}

/// `GET /company_detail/market_pred`: profile, latest metrics, trading figures, ratings and price targets, each with a description.
#[utoipa::path(get, path = "/company_detail/market_pred", tag = "analytics",
    params(CompanyParams),
    responses((status = 200, description = "Profile, latest metrics, trading figures, ratings and price targets, each with a description", body = Standard<MarketPredData>),
        (status = 404, description = "Unknown symbol", body = crate::error::AnalyticsError), AnalyticsErrors))]
pub(crate) async fn market_pred(
    Tenant { state, .. }: Tenant,
    raw: Params,
) -> Result<Json<Standard<MarketPredData>>, ApiError> {
    let q = Query::<CompanyParams>::from_params(raw)?.0.validate()?;
    Ok(standard(
        company::market_pred(state.market.as_ref(), &q).await?,
    ))
}

/// `GET /company_detail/get_profile`: profile, latest metrics and trading figures.
#[utoipa::path(get, path = "/company_detail/get_profile", tag = "analytics",
    params(CompanyParams),
    responses((status = 200, description = "Profile, latest metrics and trading figures", body = Standard<ProfileData>),
        (status = 404, description = "Unknown symbol", body = crate::error::AnalyticsError), AnalyticsErrors))]
pub(crate) async fn get_profile(
    Tenant { state, .. }: Tenant,
    raw: Params,
) -> Result<Json<Standard<ProfileData>>, ApiError> {
    let q = Query::<CompanyParams>::from_params(raw)?.0.validate()?;
    Ok(standard(
        company::get_profile(state.market.as_ref(), &q).await?,
    ))
}

/// `GET /company_detail/get_analysis`: analyst ratings and price targets.
#[utoipa::path(get, path = "/company_detail/get_analysis", tag = "analytics",
    params(CompanyParams),
    responses((status = 200, description = "Analyst ratings and price targets", body = Standard<AnalysisData>),
        (status = 404, description = "Unknown symbol", body = crate::error::AnalyticsError), AnalyticsErrors))]
pub(crate) async fn get_analysis(
    Tenant { state, .. }: Tenant,
    raw: Params,
) -> Result<Json<Standard<AnalysisData>>, ApiError> {
    let q = Query::<CompanyParams>::from_params(raw)?.0.validate()?;
    Ok(standard(
        company::get_analysis(state.market.as_ref(), &q).await?,
    ))
}

/// `GET /company_detail/get_earning`: earnings history and upcoming estimates.
#[utoipa::path(get, path = "/company_detail/get_earning", tag = "analytics",
    params(CompanyParams),
    responses((status = 200, description = "Earnings history and upcoming estimates", body = Standard<EarningAnswer>),
        (status = 404, description = "Unknown symbol", body = crate::error::AnalyticsError), AnalyticsErrors))]
pub(crate) async fn get_earning(
    Tenant { state, .. }: Tenant,
    raw: Params,
) -> Result<Json<Standard<EarningAnswer>>, ApiError> {
    let q = Query::<CompanyParams>::from_params(raw)?.0.validate()?;
    Ok(standard(
        company::get_earning(state.market.as_ref(), &q).await?,
    ))
}

/// `GET /company_detail/get_income`: income statements of the most recent 5 years.
#[utoipa::path(get, path = "/company_detail/get_income", tag = "analytics",
    params(CompanyParams),
    responses((status = 200, description = "Income statements of the most recent 5 years", body = Standard<IncomeData>),
        (status = 404, description = "Unknown symbol", body = crate::error::AnalyticsError), AnalyticsErrors))]
pub(crate) async fn get_income(
    Tenant { state, .. }: Tenant,
    raw: Params,
) -> Result<Json<Standard<IncomeData>>, ApiError> {
    let q = Query::<CompanyParams>::from_params(raw)?.0.validate()?;
    Ok(standard(
        company::get_income(state.market.as_ref(), &q).await?,
    ))
}

/// `GET /company_detail/get_balance`: balance sheets of the most recent 5 years.
#[utoipa::path(get, path = "/company_detail/get_balance", tag = "analytics",
    params(CompanyParams),
    responses((status = 200, description = "Balance sheets of the most recent 5 years", body = Standard<BalanceData>),
        (status = 404, description = "Unknown symbol", body = crate::error::AnalyticsError), AnalyticsErrors))]
pub(crate) async fn get_balance(
    Tenant { state, .. }: Tenant,
    raw: Params,
) -> Result<Json<Standard<BalanceData>>, ApiError> {
    let q = Query::<CompanyParams>::from_params(raw)?.0.validate()?;
    Ok(standard(
        company::get_balance(state.market.as_ref(), &q).await?,
    ))
}

/// `GET /company_detail/get_cash`: cash flow statements of the most recent 5 years.
#[utoipa::path(get, path = "/company_detail/get_cash", tag = "analytics",
    params(CompanyParams),
    responses((status = 200, description = "Cash flow statements of the most recent 5 years", body = Standard<CashData>),
        (status = 404, description = "Unknown symbol", body = crate::error::AnalyticsError), AnalyticsErrors))]
pub(crate) async fn get_cash(
    Tenant { state, .. }: Tenant,
    raw: Params,
) -> Result<Json<Standard<CashData>>, ApiError> {
    let q = Query::<CompanyParams>::from_params(raw)?.0.validate()?;
    Ok(standard(
        company::get_cash(state.market.as_ref(), &q).await?,
    ))
}

/// `GET /company_detail/get_news`: the latest 50 news.
#[utoipa::path(get, path = "/company_detail/get_news", tag = "analytics",
    params(CompanyParams),
    responses((status = 200, description = "The latest 50 news", body = Standard<NewsData>),
        (status = 404, description = "Unknown symbol", body = crate::error::AnalyticsError), AnalyticsErrors))]
pub(crate) async fn get_news(
    Tenant { state, .. }: Tenant,
    raw: Params,
) -> Result<Json<Standard<NewsData>>, ApiError> {
    let q = Query::<CompanyParams>::from_params(raw)?.0.validate()?;
    Ok(standard(
        company::get_news(state.market.as_ref(), &q).await?,
    ))
}

/// `GET /company_detail/get_sec`: the latest 50 SEC filings.
#[utoipa::path(get, path = "/company_detail/get_sec", tag = "analytics",
    params(CompanyParams),
    responses((status = 200, description = "The latest 50 SEC filings", body = Standard<SecData>),
        (status = 404, description = "Unknown symbol", body = crate::error::AnalyticsError), AnalyticsErrors))]
pub(crate) async fn get_sec(
    Tenant { state, .. }: Tenant,
    raw: Params,
) -> Result<Json<Standard<SecData>>, ApiError> {
    let q = Query::<CompanyParams>::from_params(raw)?.0.validate()?;
    Ok(standard(company::get_sec(state.market.as_ref(), &q).await?))
}

/// `GET /company_detail/get_holder`: insider trades and the top 10 institutional and fund holders.
#[utoipa::path(get, path = "/company_detail/get_holder", tag = "analytics",
    params(CompanyParams),
    responses((status = 200, description = "Insider trades and the top 10 institutional and fund holders", body = Standard<HolderData>),
        (status = 404, description = "Unknown symbol", body = crate::error::AnalyticsError), AnalyticsErrors))]
pub(crate) async fn get_holder(
    Tenant { state, .. }: Tenant,
    raw: Params,
) -> Result<Json<Standard<HolderData>>, ApiError> {
    let q = Query::<CompanyParams>::from_params(raw)?.0.validate()?;
    Ok(standard(
        company::get_holder(state.market.as_ref(), &q).await?,
    ))
}

/// `GET /company_detail/get_pred`: every company's latest prediction (no symbol).
#[utoipa::path(get, path = "/company_detail/get_pred", tag = "analytics",
    responses((status = 200, description = "Predictions of every company on the latest date", body = Standard<PredData>), AnalyticsErrors))]
pub(crate) async fn get_pred(
    Tenant { state, .. }: Tenant,
) -> Result<Json<Standard<PredData>>, ApiError> {
    Ok(standard(company::get_pred(state.market.as_ref()).await?))
}
