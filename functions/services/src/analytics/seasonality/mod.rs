//! Seasonality (analytics 4.1): nine views of one ticker's daily returns,
//! alone or together in the all-in-one answer. "Current" dates come from the
//! latest date in the store, so answers are reproducible.

use super::{daily, ticker};
use crate::error::{Error, Result};
use chrono::{Datelike, NaiveDate, Weekday};
use engine::event_days::{self, NAMES};
use engine::seasonality::{self as season, Seasonal, Stats, TRADING_DAYS, month_name, parse_month};
use platform::marketdata::MarketData;
use std::ops::RangeInclusive;

mod answers;
mod requests;

pub use answers::*;
pub use requests::*;

const MAX_SHIFT: i64 = 60;
const MIN_YEAR: i32 = 1800;
const MAX_YEAR: i32 = 2200;

/// The features of the all-in-one answer, in answer order, with their descriptions.
pub const FEATURES: [(&str, &str); 8] = [
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

/// The 16 event names; no ticker needed.
pub fn predefined_holidays() -> HolidayList {
    HolidayList {
        holidays: NAMES.iter().map(|(n, _)| *n).collect(),
    }
}

/// What every view starts from: the ticker's series, the years, and the
/// store's latest date.
pub struct Study {
    series: Seasonal,
    years: RangeInclusive<i32>,
    latest: NaiveDate,
}

impl Study {
    pub async fn load(market: &dyn MarketData, q: &Years) -> Result<Study> {
        let ticker = ticker(&q.ticker);
        if ticker.is_empty() {
            return Err(Error::invalid("ticker", "is required"));
        }
        // Years the client gave are checked before any data is read.
        let year = |name: &str, given: Option<i32>| -> Result<Option<i32>> {
            given
                .map(|y| Error::check_range(name, y.into(), MIN_YEAR.into(), MAX_YEAR.into()))
                .transpose()
                .map(|y| y.map(|y| y as i32))
        };
        let (start, end) = (
            year("start_year", q.start_year)?,
            year("end_year", q.end_year)?,
        );
        let latest = market.latest_date().await?;
        let start = start.unwrap_or(latest.year() - 20);
        let end = end.unwrap_or(latest.year());
        if start > end {
            return Err(Error::invalid(
                "start_year",
                format!("({start}) is after 'end_year' ({end})"),
            ));
        }
        let bars = daily(market, "ticker", &ticker).await?;
        let series = Seasonal::new(
            bars.time.iter().map(|t| t.date()).collect(),
            bars.close.clone(),
        );
        let years = start..=end;
        if !series.has_returns(&years) {
            return Err(Error::NotFound(format!(
                "no data for ticker '{ticker}' between {start} and {end}"
            )));
        }
        Ok(Study {
            series,
            years,
            latest,
        })
    }

    pub fn by_week(&self) -> Vec<WeekRow> {
        self.weekdays()
            .map(|(w, s)| WeekRow {
                Weekday: w,
                Return: s.mean,
                Positive: s.positive_pct,
            })
            .collect()
    }

    fn weekdays(&self) -> impl Iterator<Item = (&'static str, Stats)> {
        self.series
            .by_weekday(&self.years)
            .into_iter()
            .map(|(w, s)| (weekday_name(w), s))
    }

    pub fn by_month(&self) -> Vec<MonthRow> {
        self.months()
            .map(|(m, s)| MonthRow {
                Month: m,
                Return: s.mean,
                Positive: s.positive_pct,
            })
            .collect()
    }

    fn months(&self) -> impl Iterator<Item = (&'static str, Stats)> {
        self.series
            .by_month(&self.years)
            .into_iter()
            .map(|(m, s)| (month_name(m), s))
    }

    pub fn by_day_of_month(&self) -> Vec<DayOfMonthRow> {
        self.series
            .by_day_of_month(&self.years)
            .iter()
            .map(|((m, d), s)| DayOfMonthRow {
                Month: format!("{m:02}"),
                Day: format!("{d:02}"),
                stats: s.into(),
            })
            .collect()
    }

    pub fn by_day_of_year(&self) -> Vec<DayOfYearRow> {
        self.series
            .by_day_of_year(&self.years)
            .iter()
            .map(|(d, s)| DayOfYearRow {
                Day: *d,
                stats: s.into(),
            })
            .collect()
    }

    pub async fn around_holiday(
        &self,
        market: &dyn MarketData,
        holiday: &Holiday,
        shift: &Shift,
    ) -> Result<HolidayData> {
        let fomc = market.fomc_dates().await?;
        let name = match holiday.holiday_name.as_deref() {
            Some(given) => {
                let event = event_days::parse(given).ok_or_else(|| {
                    Error::invalid(
                        "holiday_name",
                        format!(
                            "'{given}' is not a predefined holiday (see /seasonality/get-predefined-holidays)"
                        ),
                    )
                })?;
                NAMES.iter().find(|(_, e)| *e == event).expect("named").0
            }
            None => event_days::next_event(self.latest, &fomc).0,
        };
        let event = event_days::parse(name).expect("a predefined name");
        let shift = shift_of(shift)?;
        let dates = event_days::dates(event, self.years.clone(), &fomc);
        Ok(HolidayData {
            holiday_name: name,
            shift,
            data: offset_rows(self.series.around(&dates, shift as usize)),
        })
    }

    pub fn around_specific_days(&self, q: &SpecificDay, shift: &Shift) -> Result<SpecificData> {
        let month = Error::check_range(
            "month",
            q.month.unwrap_or(self.latest.month().into()),
            1,
            12,
        )? as u32;
        let day =
            Error::check_range("day", q.day.unwrap_or(self.latest.day().into()), 1, 31)? as u32;
        // 2000 is a leap year: every day that exists in some year exists in it.
        if NaiveDate::from_ymd_opt(2000, month, day).is_none() {
            return Err(Error::invalid(
                "day",
                format!("{day} does not exist in month {month}"),
            ));
        }
        let shift = shift_of(shift)?;
        let dates: Vec<NaiveDate> = self
            .years
            .clone()
            .filter_map(|y| NaiveDate::from_ymd_opt(y, month, day))
            .collect();
        Ok(SpecificData {
            target_date: format!("{month:02}-{day:02}"),
            shift,
            data: offset_rows(self.series.around(&dates, shift as usize)),
        })
    }

    pub fn by_day_of_single_month(&self, q: &SingleMonth) -> Result<SingleMonthData> {
        let month = match q.target_month.as_deref() {
            None => self.latest.month(),
            Some(m) => parse_month(m).ok_or_else(|| {
                Error::invalid(
                    "target_month",
                    format!("'{m}' is not a month name (January-December)"),
                )
            })?,
        };
        let category = q.category.unwrap_or_default();
        let engine_category = match category {
            DayCategory::CalendarDay => season::DayCategory::Calendar,
            DayCategory::TradingDay => season::DayCategory::Trading,
        };
        Ok(SingleMonthData {
            month_name: month_name(month),
            category,
            data: self
                .series
                .single_month(&self.years, month, engine_category)
                .into_iter()
                .map(|(d, s)| SingleMonthRow {
                    Day: format!("{d:02}"),
                    stats: (&s).into(),
                })
                .collect(),
        })
    }

    pub fn one_dollar_curve(&self, q: &Curve) -> Result<CurveData> {
        let today = self
            .series
            .trading_day_of(self.latest)
            .unwrap_or(1)
            .min(TRADING_DAYS);
        let max = TRADING_DAYS as i64;
        let entry = Error::check_range("entry_day", q.entry_day.unwrap_or(today.into()), 1, max)?;
        let holding = match q.exit_day {
            Some(exit) => Error::check_range("exit_day", exit, entry + 1, entry + max)? - entry,
            None => Error::check_range("holding_days", q.holding_days.unwrap_or(63), 1, max)?,
        };
        Ok(CurveData {
            entry_trading_day: entry,
            exit_trading_day: entry + holding,
            holding_days: holding,
            data: self
                .series
                .one_dollar_curve(&self.years, entry as u16, holding as usize)
                .into_iter()
                .map(|(d, e)| CurvePoint {
                    Date: d.format("%Y-%m-%d").to_string(),
                    Equity: e,
                })
                .collect(),
        })
    }
}

/// The all-in-one answer: the requested features (default all eight).
pub async fn all_in_one_answer(market: &dyn MarketData, q: &AllInOneRequest) -> Result<AllInOne> {
    let wanted = wanted_features(q.features.features.as_deref())?;
    let study = Study::load(market, &q.years).await?;
    let meta = |name: &str| FeatureMeta {
        description: FEATURES
            .iter()
            .find(|(n, _)| *n == name)
            .expect("a feature")
            .1,
    };
    let want = |name: &str| wanted.contains(&name);
    let mut out = AllInOne::default();
    for (name, _) in FEATURES {
        if !want(name) {
            continue;
        }
        let meta = meta(name);
        match name {
            "performance-by-week" => {
                let data = study
                    .weekdays()
                    .map(|(w, s)| WeekRowCombined {
                        Weekday: w,
                        stats: (&s).into(),
                    })
                    .collect();
                out.performance_by_week = Some(Feature { meta, data });
            }
            "performance-by-month" => {
                let data = study
                    .months()
                    .map(|(m, s)| MonthRowCombined {
                        MonthName: m,
                        stats: (&s).into(),
                    })
                    .collect();
                out.performance_by_month = Some(Feature { meta, data });
            }
            "performance-around-holiday" => {
                let data = study.around_holiday(market, &q.holiday, &q.shift).await?;
                out.performance_around_holiday = Some(Feature { meta, data });
            }
            "performance-by-day-of-single-month" => {
                let data = study.by_day_of_single_month(&q.single)?;
                out.performance_by_day_of_single_month = Some(Feature { meta, data });
            }
            "performance-around-specific-days" => {
                let data = study.around_specific_days(&q.specific, &q.shift)?;
                out.performance_around_specific_days = Some(Feature { meta, data });
            }
            "performance-by-day-of-month" => {
                let data = study.by_day_of_month();
                out.performance_by_day_of_month = Some(Feature { meta, data });
            }
            "performance-by-day-of-year" => {
                let data = study.by_day_of_year();
                out.performance_by_day_of_year = Some(Feature { meta, data });
            }
            _ => {
                let data = study.one_dollar_curve(&q.curve)?;
                out.one_dollar_curve = Some(Feature { meta, data });
            }
        }
    }
    Ok(out)
}

/// The feature names of a comma-separated list, known and without repeats.
fn wanted_features(list: Option<&str>) -> Result<Vec<&'static str>> {
    let Some(list) = list.filter(|l| !l.trim().is_empty()) else {
        return Ok(FEATURES.iter().map(|(n, _)| *n).collect());
    };
    let mut v = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let (known, _) = FEATURES.iter().find(|(n, _)| *n == name).ok_or_else(|| {
            Error::invalid(
                "features",
                format!(
                    "has an unknown feature '{name}' (known: {})",
                    FEATURES.map(|(n, _)| n).join(", ")
                ),
            )
        })?;
        if !v.contains(known) {
            v.push(*known);
        }
    }
    Ok(v)
}

fn shift_of(q: &Shift) -> Result<i64> {
    Error::check_range("shift", q.shift.unwrap_or(5), 0, MAX_SHIFT)
}

fn offset_rows(rows: Vec<(i64, Stats)>) -> Vec<OffsetRow> {
    rows.into_iter()
        .map(|(k, s)| OffsetRow {
            DayOffset: k,
            stats: (&s).into(),
        })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_are_known_once_in_answer_order() {
        assert_eq!(wanted_features(None).unwrap().len(), 8);
        assert_eq!(
            wanted_features(Some(
                "one-dollar-curve, performance-by-week,one-dollar-curve"
            ))
            .unwrap(),
            vec!["one-dollar-curve", "performance-by-week"]
        );
        let e = wanted_features(Some("performance-by-week,by-moon")).unwrap_err();
        assert_eq!(e.field(), Some("features"));
        assert!(e.to_string().contains("'by-moon'"), "{e}");
    }

    #[test]
    fn ranges_name_the_field() {
        let e = shift_of(&Shift { shift: Some(61) }).unwrap_err();
        assert_eq!(
            e.to_string(),
            "parameter 'shift': must be between 0 and 60, got 61"
        );
        assert_eq!(shift_of(&Shift::default()).unwrap(), 5);
    }
}
