//! Seasonality routes (analytics 4.1): thin handlers over
//! `services::analytics::seasonality`, whose request and answer types are
//! also the documented schemas.

use super::{AnalyticsErrors, Envelope, envelope};
use crate::auth::Tenant;
use crate::error::Reply;
use crate::extract::Query;
use services::analytics::seasonality::*;

/// `GET /seasonality/get-predefined-holidays`: the 16 event names (no ticker needed).
#[utoipa::path(get, path = "/seasonality/get-predefined-holidays", tag = "analytics",
    responses((status = 200, description = "The 16 names", body = Envelope<HolidayList>), AnalyticsErrors))]
pub(crate) async fn predefined_holidays() -> Reply {
    envelope(200, services::analytics::seasonality::predefined_holidays())
}

/// Daily returns by weekday.
#[utoipa::path(get, path = "/seasonality/performance-by-week", tag = "analytics", params(Years),
    responses((status = 200, description = "code 200", body = Envelope<Vec<WeekRow>>), AnalyticsErrors))]
pub(crate) async fn by_week(Tenant { state, .. }: Tenant, Query(years): Query<Years>) -> Reply {
    envelope(200, Study::load(&*state.market, &years).await?.by_week())
}

/// Monthly returns by month (complete months).
#[utoipa::path(get, path = "/seasonality/performance-by-month", tag = "analytics", params(Years),
    responses((status = 200, description = "code 200", body = Envelope<Vec<MonthRow>>), AnalyticsErrors))]
pub(crate) async fn by_month(Tenant { state, .. }: Tenant, Query(years): Query<Years>) -> Reply {
    envelope(200, Study::load(&*state.market, &years).await?.by_month())
}

/// Daily returns by calendar day of each month.
#[utoipa::path(get, path = "/seasonality/performance-by-day-of-month", tag = "analytics", params(Years),
    responses((status = 200, description = "code 200", body = Envelope<Vec<DayOfMonthRow>>), AnalyticsErrors))]
pub(crate) async fn by_day_of_month(
    Tenant { state, .. }: Tenant,
    Query(years): Query<Years>,
) -> Reply {
    envelope(
        200,
        Study::load(&*state.market, &years).await?.by_day_of_month(),
    )
}

/// Daily returns by trading day of year, 1-252.
#[utoipa::path(get, path = "/seasonality/performance-by-day-of-year", tag = "analytics", params(Years),
    responses((status = 200, description = "code 200", body = Envelope<Vec<DayOfYearRow>>), AnalyticsErrors))]
pub(crate) async fn by_day_of_year(
    Tenant { state, .. }: Tenant,
    Query(years): Query<Years>,
) -> Reply {
    envelope(
        200,
        Study::load(&*state.market, &years).await?.by_day_of_year(),
    )
}

/// Daily returns by session offset around a predefined holiday.
#[utoipa::path(get, path = "/seasonality/performance-around-holiday", tag = "analytics", params(Years, Holiday, Shift),
    responses((status = 200, description = "code 200", body = Envelope<HolidayData>), AnalyticsErrors))]
pub(crate) async fn around_holiday(
    Tenant { state, .. }: Tenant,
    Query(years): Query<Years>,
    Query(holiday): Query<Holiday>,
    Query(shift): Query<Shift>,
) -> Reply {
    let study = Study::load(&*state.market, &years).await?;
    envelope(
        200,
        study
            .around_holiday(&*state.market, &holiday, &shift)
            .await?,
    )
}

/// Daily returns by session offset around a calendar date.
#[utoipa::path(get, path = "/seasonality/performance-around-specific-days", tag = "analytics", params(Years, SpecificDay, Shift),
    responses((status = 200, description = "code 200", body = Envelope<SpecificData>), AnalyticsErrors))]
pub(crate) async fn around_specific_days(
    Tenant { state, .. }: Tenant,
    Query(years): Query<Years>,
    Query(day): Query<SpecificDay>,
    Query(shift): Query<Shift>,
) -> Reply {
    let study = Study::load(&*state.market, &years).await?;
    envelope(200, study.around_specific_days(&day, &shift)?)
}

/// Daily returns of one month by calendar or trading day.
#[utoipa::path(get, path = "/seasonality/performance-by-day-of-single-month", tag = "analytics", params(Years, SingleMonth),
    responses((status = 200, description = "code 200", body = Envelope<SingleMonthData>), AnalyticsErrors))]
pub(crate) async fn by_day_of_single_month(
    Tenant { state, .. }: Tenant,
    Query(years): Query<Years>,
    Query(month): Query<SingleMonth>,
) -> Reply {
    let study = Study::load(&*state.market, &years).await?;
    envelope(200, study.by_day_of_single_month(&month)?)
}

/// Growth of one dollar held every year over a window of trading days.
#[utoipa::path(get, path = "/seasonality/one-dollar-curve", tag = "analytics", params(Years, Curve),
    responses((status = 200, description = "code 200", body = Envelope<CurveData>), AnalyticsErrors))]
pub(crate) async fn one_dollar_curve(
    Tenant { state, .. }: Tenant,
    Query(years): Query<Years>,
    Query(curve): Query<Curve>,
) -> Reply {
    let study = Study::load(&*state.market, &years).await?;
    envelope(200, study.one_dollar_curve(&curve)?)
}

/// `GET /seasonality`: the requested `features` (default all), each as
/// `{meta: {description}, data}`.
#[utoipa::path(get, path = "/seasonality", tag = "analytics", params(Years, Features, Shift, Holiday, SpecificDay, SingleMonth, Curve),
    responses((status = 200, description = "code 200; the requested features", body = Envelope<AllInOne>), AnalyticsErrors))]
#[allow(clippy::too_many_arguments)]
pub(crate) async fn all_in_one(
    Tenant { state, .. }: Tenant,
    Query(years): Query<Years>,
    Query(features): Query<Features>,
    Query(shift): Query<Shift>,
    Query(holiday): Query<Holiday>,
    Query(specific): Query<SpecificDay>,
    Query(single): Query<SingleMonth>,
    Query(curve): Query<Curve>,
) -> Reply {
    let request = AllInOneRequest {
        years,
        features,
        shift,
        holiday,
        specific,
        single,
        curve,
    };
    envelope(200, all_in_one_answer(&*state.market, &request).await?)
}
