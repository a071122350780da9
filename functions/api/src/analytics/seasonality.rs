//! Seasonality endpoints (analytics 4.1): nine views of one ticker's daily
//! returns, alone or together in `/seasonality`. "Current" dates come from the
//! latest date in the store, so answers are reproducible.

use super::docs::*;
use super::{envelope, load_daily};
use crate::error::ApiError;
use crate::extract::Params;
use crate::state::AppState;
use axum::extract::State;
use axum::response::Response;
use chrono::{Datelike, NaiveDate, Weekday};
use engine::event_days::{self, NAMES};
use engine::seasonality::{DayCategory, Seasonal, Stats, TRADING_DAYS, month_name, parse_month};
use serde_json::{Map, Value, json};
use std::ops::RangeInclusive;

/// The features of the all-in-one endpoint, in answer order, with their descriptions.
const FEATURES: [(&str, &str); 8] = [
    (
        "performance-by-week",
        "Average daily return and share of positive days by weekday",
    ),
    (
        "performance-by-month",
        "Average monthly return and share of positive months by month",
    ),
    (
        "performance-around-holiday",
        "Average daily return and share of positive days by session offset around a holiday",
    ),
    (
        "performance-by-day-of-single-month",
        "Average daily return and share of positive days by day of one month",
    ),
    (
        "performance-around-specific-days",
        "Average daily return and share of positive days by session offset around a calendar date",
    ),
    (
        "performance-by-day-of-month",
        "Average, maximum and minimum daily return and share of positive days by calendar day",
    ),
    (
        "performance-by-day-of-year",
        "Average, maximum and minimum daily return and share of positive days by trading day of year (1-252)",
    ),
    (
        "one-dollar-curve",
        "Growth of one dollar held every year over a window of trading days",
    ),
];

const MAX_SHIFT: i64 = 60;

/// What every seasonality view starts from: the ticker's series, the year
/// range, and the store's latest date.
struct Study {
    series: Seasonal,
    years: RangeInclusive<i32>,
    latest: NaiveDate,
}

impl Study {
    async fn load(state: &AppState, params: &Params) -> Result<Study, ApiError> {
        let ticker = params.required("ticker")?.trim().to_uppercase();
        let latest = state.market.latest_date().await?;
        let year = |name: &str, default: i32| -> Result<i32, ApiError> {
            Ok(params.int_in(name, default as i64, 1800, 2200)? as i32)
        };
        let start = year("start_year", latest.year() - 20)?;
        let end = year("end_year", latest.year())?;
        if start > end {
            return Err(ApiError::bad_request(format!(
                "query parameter 'start_year' ({start}) is after 'end_year' ({end})"
            )));
        }
        let bars = load_daily(state, &ticker).await?;
        let series = Seasonal::new(
            bars.time.iter().map(|t| t.date()).collect(),
            bars.close.clone(),
        );
        let years = start..=end;
        if !series.has_returns(&years) {
            return Err(ApiError::not_found(format!(
                "no data for ticker '{ticker}' between {start} and {end}"
            )));
        }
        Ok(Study {
            series,
            years,
            latest,
        })
    }
}

fn mean_rows(rows: Vec<(String, Stats)>, key: &str, mean: &str, pos: &str) -> Value {
    Value::Array(
        rows.into_iter()
            .map(|(k, s)| {
                let mut m = Map::new();
                m.insert(key.into(), Value::String(k));
                m.insert(mean.into(), json!(s.mean));
                m.insert(pos.into(), json!(s.positive_pct));
                Value::Object(m)
            })
            .collect(),
    )
}

fn full_row(mut row: Map<String, Value>, s: &Stats) -> Value {
    row.insert("AVG RET".into(), json!(s.mean));
    row.insert("MAX".into(), json!(s.max));
    row.insert("MIN".into(), json!(s.min));
    row.insert("% POS".into(), json!(s.positive_pct));
    Value::Object(row)
}

fn offset_rows(rows: Vec<(i64, Stats)>) -> Value {
    rows.into_iter()
        .map(
            |(k, s)| json!({"DayOffset": k, "Mean_Return": s.mean, "Positive_Pct": s.positive_pct}),
        )
        .collect()
}

fn weekday_name(w: Weekday) -> &'static str {
    match w {
        Weekday::Mon => "Monday",
        Weekday::Tue => "Tuesday",
        Weekday::Wed => "Wednesday",
        Weekday::Thu => "Thursday",
        Weekday::Fri => "Friday",
        Weekday::Sat => "Saturday",
        Weekday::Sun => "Sunday",
    }
}

/// One feature's `data`. `combined` selects the all-in-one row names.
async fn feature(
    state: &AppState,
    study: &Study,
    params: &Params,
    name: &str,
    combined: bool,
) -> Result<Value, ApiError> {
    let (s, years) = (&study.series, &study.years);
    let (mean, pos) = if combined {
        ("Mean_Return", "Positive_Pct")
    } else {
        ("Return", "Positive")
    };
    Ok(match name {
        "performance-by-week" => mean_rows(
            s.by_weekday(years)
                .into_iter()
                .map(|(w, st)| (weekday_name(w).to_string(), st))
                .collect(),
            "Weekday",
            mean,
            pos,
        ),
        "performance-by-month" => mean_rows(
            s.by_month(years)
                .into_iter()
                .map(|(m, st)| (month_name(m).to_string(), st))
                .collect(),
            if combined { "MonthName" } else { "Month" },
            mean,
            pos,
        ),
        "performance-by-day-of-month" => s
            .by_day_of_month(years)
            .iter()
            .map(|((m, d), st)| {
                let mut row = Map::new();
                row.insert("Month".into(), json!(format!("{m:02}")));
                row.insert("Day".into(), json!(format!("{d:02}")));
                full_row(row, st)
            })
            .collect(),
        "performance-by-day-of-year" => s
            .by_day_of_year(years)
            .iter()
            .map(|(d, st)| {
                let mut row = Map::new();
                row.insert("Day".into(), json!(d));
                full_row(row, st)
            })
            .collect(),
        "performance-around-holiday" => {
            let fomc = state.market.fomc_dates().await?;
            let (name, event) = match params.get("holiday_name") {
                Some(given) => {
                    let event = event_days::parse(given).ok_or_else(|| {
                        ApiError::bad_request(format!(
                            "query parameter 'holiday_name': '{given}' is not a predefined holiday (see /seasonality/get-predefined-holidays)"
                        ))
                    })?;
                    let name = NAMES.iter().find(|(_, e)| *e == event).expect("named").0;
                    (name, event)
                }
                None => {
                    let name = event_days::next_event(study.latest, &fomc).0;
                    (name, event_days::parse(name).expect("a predefined name"))
                }
            };
            let shift = params.int_in("shift", 5, 0, MAX_SHIFT)?;
            let dates = event_days::dates(event, years.clone(), &fomc);
            json!({
                "holiday_name": name,
                "shift": shift,
                "data": offset_rows(s.around(&dates, shift as usize)),
            })
        }
        "performance-around-specific-days" => {
            let month = params.int_in("month", study.latest.month() as i64, 1, 12)? as u32;
            let day = params.int_in("day", study.latest.day() as i64, 1, 31)? as u32;
            // 2000 is a leap year: every day that exists in some year exists in it.
            if NaiveDate::from_ymd_opt(2000, month, day).is_none() {
                return Err(ApiError::bad_request(format!(
                    "query parameter 'day': {day} does not exist in month {month}"
                )));
            }
            let shift = params.int_in("shift", 5, 0, MAX_SHIFT)?;
            let dates: Vec<NaiveDate> = years
                .clone()
                .filter_map(|y| NaiveDate::from_ymd_opt(y, month, day))
                .collect();
            json!({
                "target_date": format!("{month:02}-{day:02}"),
                "shift": shift,
                "data": offset_rows(s.around(&dates, shift as usize)),
            })
        }
        "performance-by-day-of-single-month" => {
            let month = match params.get("target_month") {
                None => study.latest.month(),
                Some(m) => parse_month(m).ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "query parameter 'target_month': '{m}' is not a month name (January-December)"
                    ))
                })?,
            };
            let category = match params.get("category").map(str::trim) {
                None | Some("calendar_day") => DayCategory::Calendar,
                Some("trading_day") => DayCategory::Trading,
                Some(other) => {
                    return Err(ApiError::bad_request(format!(
                        "query parameter 'category': '{other}' is not calendar_day or trading_day"
                    )));
                }
            };
            let rows: Value = s
                .single_month(years, month, category)
                .into_iter()
                .map(|(d, st)| json!({"Day": format!("{d:02}"), "Mean_Return": st.mean, "Positive_Pct": st.positive_pct}))
                .collect();
            json!({
                "month_name": month_name(month),
                "category": match category {
                    DayCategory::Calendar => "calendar_day",
                    DayCategory::Trading => "trading_day",
                },
                "data": rows,
            })
        }
        "one-dollar-curve" => {
            let today = s
                .trading_day_of(study.latest)
                .unwrap_or(1)
                .min(TRADING_DAYS);
            let max = TRADING_DAYS as i64;
            let entry = params.int_in("entry_day", today as i64, 1, max)?;
            let holding = match params.get("exit_day") {
                Some(_) => params.int_in("exit_day", entry + 1, entry + 1, entry + max)? - entry,
                None => params.int_in("holding_days", 63, 1, max)?,
            };
            let curve: Value = s
                .one_dollar_curve(years, entry as u16, holding as usize)
                .into_iter()
                .map(|(d, e)| json!({"Date": d.format("%Y-%m-%d").to_string(), "Equity": e}))
                .collect();
            json!({
                "entry_trading_day": entry,
                "exit_trading_day": entry + holding,
                "holding_days": holding,
                "data": curve,
            })
        }
        other => {
            return Err(ApiError::not_found(format!(
                "no such seasonality feature '{other}'"
            )));
        }
    })
}

/// `GET /seasonality/get-predefined-holidays`: the 16 event names (no ticker needed).
#[utoipa::path(get, path = "/seasonality/get-predefined-holidays", tag = "analytics",
    responses((status = 200, description = "The 16 names", body = Envelope<HolidayList>), AnalyticsErrors))]
pub(crate) async fn predefined_holidays() -> Result<Response, ApiError> {
    envelope(
        200,
        json!({"holidays": NAMES.iter().map(|(n, _)| *n).collect::<Vec<_>>()}),
    )
}

/// One standalone view.
async fn standalone(state: &AppState, params: &Params, view: &str) -> Result<Response, ApiError> {
    let study = Study::load(state, params).await?;
    envelope(200, feature(state, &study, params, view, false).await?)
}

/// Daily returns by weekday.
#[utoipa::path(get, path = "/seasonality/performance-by-week", tag = "analytics", params(Years),
    responses((status = 200, description = "code 200", body = Envelope<Vec<WeekRow>>), AnalyticsErrors))]
pub(crate) async fn by_week(
    State(state): State<AppState>,
    params: Params,
) -> Result<Response, ApiError> {
    standalone(&state, &params, "performance-by-week").await
}

/// Monthly returns by month (complete months).
#[utoipa::path(get, path = "/seasonality/performance-by-month", tag = "analytics", params(Years),
    responses((status = 200, description = "code 200", body = Envelope<Vec<MonthRow>>), AnalyticsErrors))]
pub(crate) async fn by_month(
    State(state): State<AppState>,
    params: Params,
) -> Result<Response, ApiError> {
    standalone(&state, &params, "performance-by-month").await
}

/// Daily returns by calendar day of each month.
#[utoipa::path(get, path = "/seasonality/performance-by-day-of-month", tag = "analytics", params(Years),
    responses((status = 200, description = "code 200", body = Envelope<Vec<DayOfMonthRow>>), AnalyticsErrors))]
pub(crate) async fn by_day_of_month(
    State(state): State<AppState>,
    params: Params,
) -> Result<Response, ApiError> {
    standalone(&state, &params, "performance-by-day-of-month").await
}

/// Daily returns by trading day of year, 1-252.
#[utoipa::path(get, path = "/seasonality/performance-by-day-of-year", tag = "analytics", params(Years),
    responses((status = 200, description = "code 200", body = Envelope<Vec<DayOfYearRow>>), AnalyticsErrors))]
pub(crate) async fn by_day_of_year(
    State(state): State<AppState>,
    params: Params,
) -> Result<Response, ApiError> {
    standalone(&state, &params, "performance-by-day-of-year").await
}

/// Daily returns by session offset around a predefined holiday.
#[utoipa::path(get, path = "/seasonality/performance-around-holiday", tag = "analytics", params(Years, HolidayParams),
    responses((status = 200, description = "code 200", body = Envelope<HolidayData>), AnalyticsErrors))]
pub(crate) async fn around_holiday(
    State(state): State<AppState>,
    params: Params,
) -> Result<Response, ApiError> {
    standalone(&state, &params, "performance-around-holiday").await
}

/// Daily returns by session offset around a calendar date.
#[utoipa::path(get, path = "/seasonality/performance-around-specific-days", tag = "analytics", params(Years, SpecificParams),
    responses((status = 200, description = "code 200", body = Envelope<SpecificData>), AnalyticsErrors))]
pub(crate) async fn around_specific_days(
    State(state): State<AppState>,
    params: Params,
) -> Result<Response, ApiError> {
    standalone(&state, &params, "performance-around-specific-days").await
}

/// Daily returns of one month by calendar or trading day.
#[utoipa::path(get, path = "/seasonality/performance-by-day-of-single-month", tag = "analytics", params(Years, SingleMonthParams),
    responses((status = 200, description = "code 200", body = Envelope<SingleMonthData>), AnalyticsErrors))]
pub(crate) async fn by_day_of_single_month(
    State(state): State<AppState>,
    params: Params,
) -> Result<Response, ApiError> {
    standalone(&state, &params, "performance-by-day-of-single-month").await
}

/// Growth of one dollar held every year over a window of trading days.
#[utoipa::path(get, path = "/seasonality/one-dollar-curve", tag = "analytics", params(Years, CurveParams),
    responses((status = 200, description = "code 200", body = Envelope<CurveData>), AnalyticsErrors))]
pub(crate) async fn one_dollar_curve(
    State(state): State<AppState>,
    params: Params,
) -> Result<Response, ApiError> {
    standalone(&state, &params, "one-dollar-curve").await
}

/// `GET /seasonality`: the requested `features` (default all), each as
/// `{meta: {description}, data}`.
#[utoipa::path(get, path = "/seasonality", tag = "analytics", params(Years, AllInOneParams),
    responses((status = 200, description = "code 200; the requested features", body = Envelope<AllInOne>), AnalyticsErrors))]
pub(crate) async fn all_in_one(
    State(state): State<AppState>,
    params: Params,
) -> Result<Response, ApiError> {
    let wanted: Vec<&str> = match params.get("features") {
        None => FEATURES.iter().map(|(n, _)| *n).collect(),
        Some(list) => {
            let mut v = Vec::new();
            for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                let (known, _) = FEATURES.iter().find(|(n, _)| *n == name).ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "query parameter 'features': unknown feature '{name}' (known: {})",
                        FEATURES.map(|(n, _)| n).join(", ")
                    ))
                })?;
                if !v.contains(known) {
                    v.push(*known);
                }
            }
            v
        }
    };
    let study = Study::load(&state, &params).await?;
    let mut out = Map::new();
    for (name, description) in FEATURES.iter().filter(|(n, _)| wanted.contains(n)) {
        let data = feature(&state, &study, &params, name, true).await?;
        out.insert(
            name.to_string(),
            json!({"meta": {"description": description}, "data": data}),
        );
    }
    envelope(200, Value::Object(out))
}
