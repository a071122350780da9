//! The seasonality requests: query parameters as typed structs, documented
//! with their bounds and examples.

use serde::{Deserialize, Serialize};

#[cfg(feature = "openapi")]
use engine::{event_days::NAMES, seasonality::month_name};

#[cfg(feature = "openapi")]
use utoipa::{IntoParams, ToSchema};

/// The ticker and years of every seasonality view.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(IntoParams), into_params(parameter_in = Query))]
pub struct Years {
    /// Ticker (any case).
    #[cfg_attr(
        feature = "openapi",
        param(example = "SPX", pattern = "^[A-Za-z0-9._^-]{1,32}$")
    )]
    pub ticker: String,
    /// First year; default the latest year in the data - 20. At most `end_year`.
    #[cfg_attr(
        feature = "openapi",
        param(minimum = 1800, maximum = 2200, example = 2006)
    )]
    pub start_year: Option<i32>,
    /// Last year; default the latest year in the data.
    #[cfg_attr(
        feature = "openapi",
        param(minimum = 1800, maximum = 2200, example = 2025)
    )]
    pub end_year: Option<i32>,
}

/// Sessions before and after the day of the two offset views.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(IntoParams), into_params(parameter_in = Query))]
pub struct Shift {
    /// 0-60 (default 5).
    #[cfg_attr(feature = "openapi", param(minimum = 0, maximum = 60, example = 5))]
    pub shift: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(IntoParams), into_params(parameter_in = Query))]
pub struct Holiday {
    /// One of `get-predefined-holidays` (any case); default the next one after the latest date.
    #[cfg_attr(feature = "openapi", param(schema_with = holiday_names, example = "Thanksgiving Day"))]
    pub holiday_name: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(IntoParams), into_params(parameter_in = Query))]
pub struct SpecificDay {
    /// 1-12, default the latest date's month.
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 12, example = 7))]
    pub month: Option<i64>,
    /// 1-31 and a day of `month` (29 for February), default the latest date's day.
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 31, example = 4))]
    pub day: Option<i64>,
}

/// Calendar or trading days of the single-month view.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DayCategory {
    #[default]
    CalendarDay,
    TradingDay,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(IntoParams), into_params(parameter_in = Query))]
pub struct SingleMonth {
    /// Month name (any case, or its number); default the latest date's month.
    #[cfg_attr(feature = "openapi", param(schema_with = month_names, example = "December"))]
    pub target_month: Option<String>,
    /// `calendar_day` (default) or `trading_day`.
    pub category: Option<DayCategory>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(IntoParams), into_params(parameter_in = Query))]
pub struct Curve {
    /// Trading day of year to buy at the close of, 1-252; default the latest date's.
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 252, example = 100))]
    pub entry_day: Option<i64>,
    /// Sessions held, 1-252 (default 63).
    #[cfg_attr(feature = "openapi", param(minimum = 1, maximum = 252, example = 63))]
    pub holding_days: Option<i64>,
    /// Overrides `holding_days` as `exit_day - entry_day`: from `entry_day + 1`
    /// to `entry_day + 252`.
    #[cfg_attr(feature = "openapi", param(minimum = 2, maximum = 504, example = 163))]
    pub exit_day: Option<i64>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(IntoParams), into_params(parameter_in = Query))]
pub struct Features {
    /// Comma-separated feature names; default all eight.
    #[cfg_attr(
        feature = "openapi",
        param(
            pattern = "^(performance-by-week|performance-by-month|performance-around-holiday|performance-by-day-of-single-month|performance-around-specific-days|performance-by-day-of-month|performance-by-day-of-year|one-dollar-curve)(,(performance-by-week|performance-by-month|performance-around-holiday|performance-by-day-of-single-month|performance-around-specific-days|performance-by-day-of-month|performance-by-day-of-year|one-dollar-curve))*$",
            example = "performance-by-week,one-dollar-curve"
        )
    )]
    pub features: Option<String>,
}

/// Every parameter of the all-in-one answer.
#[derive(Debug, Clone)]
pub struct AllInOneRequest {
    pub years: Years,
    pub features: Features,
    pub shift: Shift,
    pub holiday: Holiday,
    pub specific: SpecificDay,
    pub single: SingleMonth,
    pub curve: Curve,
}

#[cfg(feature = "openapi")]
fn holiday_names() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(NAMES.iter().map(|(n, _)| *n)))
        .build()
}

#[cfg(feature = "openapi")]
fn month_names() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some((1..=12).map(month_name)))
        .build()
}
