//! Screens (analytics 2.7, 4.7): fifteen predefined lists over the
//! indicators, prices and key metrics. docs/analytics.md#screens gives
//! every rule; the constants below are its thresholds.

use crate::analytics::company::tables::load;
use crate::error::{Error, Result};
use chrono::{Datelike, NaiveDate};
use engine::Bars;
use platform::PortError;
use platform::marketdata::{IndicatorMeta, IndicatorSeries, MarketData, SymbolInfo};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[cfg(feature = "openapi")]
use utoipa::{IntoParams, ToSchema};

/// Long ideas: close above its 200-day average and Optix at most this.
pub const LONG_MAX_OPTIX: f64 = 40.0;
/// Short ideas: close below its 200-day average and Optix at least this.
pub const SHORT_MIN_OPTIX: f64 = 60.0;
/// Sessions of the trend average.
pub const TREND_MA: usize = 200;
/// Readings of the hedger history the z-score compares with.
pub const HEDGER_YEARS: i32 = 3;

/// What a screen lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    SentimentSeasonality(Assets),
    SentimentTrend(Assets),
    Ideas { universe: &'static str, long: bool },
    HedgerExtremes,
    SectorMa,
    OptixExhaustion,
    Dividend(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Assets {
    Etfs,
    Commodities,
}

/// The keys, their category names and what they list.
const SCREENS: [(&str, &str, Kind); 15] = [
    (
        "etf-sentiment-seasonality",
        "ETF Sentiment and Seasonality Screen",
        Kind::SentimentSeasonality(Assets::Etfs),
    ),
    (
        "commod-sentiment-seasonality",
        "Commodity Sentiment and Seasonality Screen",
        Kind::SentimentSeasonality(Assets::Commodities),
    ),
    (
        "etf-sentiment-trend",
        "ETF Sentiment and Trend Screen",
        Kind::SentimentTrend(Assets::Etfs),
    ),
    (
        "commod-sentiment-trend",
        "Commodity Sentiment and Trend Screen",
        Kind::SentimentTrend(Assets::Commodities),
    ),
    (
        "stocks-long-ideas",
        "Stocks Long Ideas Screen",
        Kind::Ideas {
            universe: "sp1500",
            long: true,
        },
    ),
    (
        "stocks-short-ideas",
        "Stocks Short Ideas Screen",
        Kind::Ideas {
            universe: "sp1500",
            long: false,
        },
    ),
    (
        "nasdaq100-long-ideas",
        "Nasdaq 100 Long Ideas Screen",
        Kind::Ideas {
            universe: "nasdaq100",
            long: true,
        },
    ),
    (
        "nasdaq100-short-ideas",
        "Nasdaq 100 Short Ideas Screen",
        Kind::Ideas {
            universe: "nasdaq100",
            long: false,
        },
    ),
    (
        "russell3000-long-ideas",
        "Russell 3000 Long Ideas Screen",
        Kind::Ideas {
            universe: "russell3000",
            long: true,
        },
    ),
    (
        "russell3000-short-ideas",
        "Russell 3000 Short Ideas Screen",
        Kind::Ideas {
            universe: "russell3000",
            long: false,
        },
    ),
    (
        "commod-hedger-extremes",
        "Commodity Hedger Extremes Screen",
        Kind::HedgerExtremes,
    ),
    ("etf-sector-ma", "ETF Sector MA Screen", Kind::SectorMa),
    (
        "optix-exhaustion",
        "Optix Exhaustion Screen",
        Kind::OptixExhaustion,
    ),
    (
        "sp1500-dividend",
        "S&P 1500 Dividend Screen",
        Kind::Dividend("sp1500"),
    ),
    (
        "nasdaq100-dividend",
        "Nasdaq 100 Dividend Screen",
        Kind::Dividend("nasdaq100"),
    ),
];

/// A predefined screen.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ScreenInfo {
    pub key: &'static str,
    pub category: &'static str,
}

/// `data` of `get-predefined-screens`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ScreenList {
    pub screens: Vec<ScreenInfo>,
}

/// The category names of each kind of record, in [`ScreenRecords`]' order:
/// an answer's `type` tells which records its `data` holds.
pub fn categories_by_records() -> [Vec<&'static str>; 7] {
    let mut out: [Vec<&'static str>; 7] = Default::default();
    for (_, category, kind) in SCREENS {
        let k = match kind {
            Kind::SentimentSeasonality(_) => 0,
            Kind::SentimentTrend(_) => 1,
            Kind::Ideas { .. } => 2,
            Kind::HedgerExtremes => 3,
            Kind::SectorMa => 4,
            Kind::OptixExhaustion => 5,
            Kind::Dividend(_) => 6,
        };
        out[k].push(category);
    }
    out
}

pub fn predefined() -> ScreenList {
    ScreenList {
        screens: SCREENS
            .iter()
            .map(|(key, category, _)| ScreenInfo { key, category })
            .collect(),
    }
}

/// Query of `GET /screens`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(IntoParams), into_params(parameter_in = Query))]
pub struct ScreenParams {
    /// One of the fifteen keys of `get-predefined-screens`.
    #[cfg_attr(feature = "openapi", param(value_type = String, pattern = "^(etf-sentiment-seasonality|commod-sentiment-seasonality|etf-sentiment-trend|commod-sentiment-trend|stocks-long-ideas|stocks-short-ideas|nasdaq100-long-ideas|nasdaq100-short-ideas|russell3000-long-ideas|russell3000-short-ideas|commod-hedger-extremes|etf-sector-ma|optix-exhaustion|sp1500-dividend|nasdaq100-dividend)$", example = "etf-sector-ma"))]
    pub key: Option<String>,
    /// YYYY-MM-DD; read by the long/short ideas screens only (default the latest session).
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, format = Date, example = "2026-11-20"))]
    pub date: Option<String>,
}

/// A checked query.
#[derive(Debug, Clone)]
pub struct ScreenQuery {
    pub key: &'static str,
    pub category: &'static str,
    kind: Kind,
    date: Option<NaiveDate>,
}

impl ScreenParams {
    pub fn validate(&self) -> Result<ScreenQuery> {
        let keys = || SCREENS.iter().map(|s| s.0).collect::<Vec<_>>().join(", ");
        let key = self
            .key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .ok_or_else(|| Error::invalid("key", format!("is required: one of {}", keys())))?;
        let (key, category, kind) = SCREENS
            .iter()
            .find(|s| s.0.eq_ignore_ascii_case(key))
            .copied()
            .ok_or_else(|| {
                Error::invalid("key", format!("must be one of {}, got '{key}'", keys()))
            })?;
        let date = self
            .date
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| crate::dates::field("date", d))
            .transpose()?;
        Ok(ScreenQuery {
            key,
            category,
            kind,
            date,
        })
    }
}

mod records;

pub use records::*;

async fn bars(market: &dyn MarketData, symbol: &str) -> Result<Option<Arc<Bars>>> {
    match market.daily(symbol).await {
        Ok(b) if !b.is_empty() => Ok(Some(b)),
        Ok(_) | Err(PortError::NotFound(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

async fn series(market: &dyn MarketData, code: &str) -> Result<Option<Arc<IndicatorSeries>>> {
    match market.indicator_series(code).await {
        Ok(s) if !s.close.is_empty() => Ok(Some(s)),
        Ok(_) | Err(PortError::NotFound(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The mean of the last `n` values (fewer at the start).
fn tail_mean(x: &[f64], n: usize) -> f64 {
    let t = &x[x.len().saturating_sub(n)..];
    t.iter().sum::<f64>() / t.len() as f64
}

/// The `n`-session simple average of the closes up to `last` (inclusive).
fn ma_at(b: &Bars, last: usize, n: usize) -> Option<f64> {
    (last + 1 >= n).then(|| b.close[last + 1 - n..=last].iter().sum::<f64>() / n as f64)
}

/// Percent: the average return of calendar month `month` over the years
/// before `year` (month-end close over the previous month-end close).
pub fn month_average(b: &Bars, month: u32, year: i32) -> Option<f64> {
    // The last close of each calendar month.
    let mut ends: Vec<(i32, u32, f64)> = Vec::new();
    for i in 0..b.len() {
        let d = b.date(i);
        match ends.last_mut() {
            Some(e) if e.0 == d.year() && e.1 == d.month() => e.2 = b.close[i],
            _ => ends.push((d.year(), d.month(), b.close[i])),
        }
    }
    let r: Vec<f64> = ends
        .windows(2)
        .filter(|w| w[1].1 == month && w[1].0 < year)
        .map(|w| (w[1].2 / w[0].2 - 1.0) * 100.0)
        .collect();
    (!r.is_empty()).then(|| r.iter().sum::<f64>() / r.len() as f64)
}

/// The sample z-score of `x` against `v`.
pub fn z_score(x: f64, v: &[f64]) -> Option<f64> {
    let n = v.len() as f64;
    if v.len() < 2 {
        return None;
    }
    let mean = v.iter().sum::<f64>() / n;
    let sd = (v.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    (sd > 0.0).then(|| (x - mean) / sd)
}

/// Percent change of the close over `n` sessions to the latest.
fn perf(b: &Bars, n: usize) -> Option<f64> {
    let last = b.len() - 1;
    last.checked_sub(n)
        .map(|k| (b.close[last] / b.close[k] - 1.0) * 100.0)
}

fn asset_class(symbols: &[SymbolInfo], s: &str) -> Option<String> {
    symbols
        .iter()
        .find(|x| x.symbol == s)
        .map(|x| x.asset_class.clone())
}

fn name_of(symbols: &[SymbolInfo], s: &str) -> String {
    symbols
        .iter()
        .find(|x| x.symbol == s)
        .map_or_else(|| s.to_string(), |x| x.name.clone())
}

/// Public Optix indicators, by code.
fn optix(catalog: &[IndicatorMeta]) -> Vec<&IndicatorMeta> {
    catalog
        .iter()
        .filter(|m| m.kind == "optix" && !m.internal)
        .collect()
}

fn first_group(m: &IndicatorMeta) -> String {
    m.groups.first().cloned().unwrap_or_default()
}

/// `GET /screens`.
pub async fn screen(market: &dyn MarketData, q: &ScreenQuery) -> Result<ScreenAnswer> {
    let symbols = market.symbols().await?;
    let catalog = market.indicator_catalog().await?;
    let data = match q.kind {
        Kind::SentimentSeasonality(a) | Kind::SentimentTrend(a) => {
            let class = match a {
                Assets::Etfs => "etf",
                Assets::Commodities => "commodity",
            };
            let mut seasonal = Vec::new();
            let mut trend = Vec::new();
            for m in optix(&catalog) {
                if asset_class(&symbols, &m.market_symbol).as_deref() != Some(class) {
                    continue;
                }
                let (Some(s), Some(b)) = (
                    series(market, &m.url).await?,
                    bars(market, &m.market_symbol).await?,
                ) else {
                    continue;
                };
                let k = s.close.len() - 1;
                let when = s.time[k].date();
                if matches!(q.kind, Kind::SentimentSeasonality(_)) {
                    seasonal.push(SentimentSeasonality {
                        symbol: m.market_symbol.clone(),
                        name: name_of(&symbols, &m.market_symbol),
                        group: first_group(m),
                        last_value: s.close[k],
                        last_update: when.to_string(),
                        AvgReturn: month_average(&b, when.month(), when.year()),
                    });
                } else {
                    let last = b.len() - 1;
                    trend.push(SentimentTrend {
                        symbol: m.market_symbol.clone(),
                        chart_name: m.chart_name.clone(),
                        name: name_of(&symbols, &m.market_symbol),
                        group: first_group(m),
                        last_value: s.close[k],
                        last_update: when.to_string(),
                        close: b.close[last],
                        MA: ma_at(&b, last, TREND_MA),
                    });
                }
            }
            seasonal.sort_by(|a, b| a.symbol.cmp(&b.symbol));
            trend.sort_by(|a, b| a.symbol.cmp(&b.symbol));
            if matches!(q.kind, Kind::SentimentSeasonality(_)) {
                ScreenRecords::SentimentSeasonality(seasonal)
            } else {
                ScreenRecords::SentimentTrend(trend)
            }
        }
        Kind::Ideas { universe, long } => {
            ScreenRecords::Ideas(ideas(market, &symbols, &catalog, universe, long, q.date).await?)
        }
        Kind::HedgerExtremes => {
            ScreenRecords::HedgerExtremes(hedgers(market, &symbols, &catalog).await?)
        }
        Kind::SectorMa => ScreenRecords::SectorMa(sectors(market, &symbols, &catalog).await?),
        Kind::OptixExhaustion => {
            let mut out = Vec::new();
            for m in optix(&catalog) {
                let Some(s) = series(market, &m.url).await? else {
                    continue;
                };
                let k = s.close.len() - 1;
                let v = s.close[k];
                if v < m.opt_extreme && v > m.pess_extreme {
                    continue;
                }
                out.push(Exhaustion {
                    chart_name: m.chart_name.clone(),
                    last_value: v,
                    last_update: s.time[k].date().to_string(),
                    group: first_group(m),
                    ma10: tail_mean(&s.close, 10),
                });
            }
            // The most extreme first.
            out.sort_by(|a, b| {
                (b.last_value - 50.0)
                    .abs()
                    .total_cmp(&(a.last_value - 50.0).abs())
                    .then_with(|| a.chart_name.cmp(&b.chart_name))
            });
            ScreenRecords::OptixExhaustion(out)
        }
        Kind::Dividend(universe) => {
            ScreenRecords::Dividend(dividends(market, &symbols, universe).await?)
        }
    };
    Ok(ScreenAnswer {
        code: 200,
        data,
        r#type: q.category,
    })
}

async fn ideas(
    market: &dyn MarketData,
    symbols: &[SymbolInfo],
    catalog: &[IndicatorMeta],
    universe: &str,
    long: bool,
    date: Option<NaiveDate>,
) -> Result<Vec<Idea>> {
    let date = match date {
        Some(d) => d,
        None => market.latest_date().await?,
    };
    let mut out = Vec::new();
    for s in symbols
        .iter()
        .filter(|s| s.asset_class == "stock" && s.universes.iter().any(|u| u == universe))
    {
        let code = format!("{}_OPTIX", s.symbol);
        let (Some(o), Some(b)) = (series(market, &code).await?, bars(market, &s.symbol).await?)
        else {
            continue;
        };
        let k = o.time.partition_point(|t| t.date() <= date);
        let last = (0..b.len()).rev().find(|i| b.date(*i) <= date);
        let (Some(k), Some(last)) = (k.checked_sub(1), last) else {
            continue;
        };
        let Some(ma) = ma_at(&b, last, TREND_MA) else {
            continue;
        };
        let (v, close) = (o.close[k], b.close[last]);
        let pass = if long {
            close > ma && v <= LONG_MAX_OPTIX
        } else {
            close < ma && v >= SHORT_MIN_OPTIX
        };
        if !pass {
            continue;
        }
        let chart_name = catalog
            .iter()
            .find(|m| m.url == code)
            .map_or_else(|| format!("{} Optix", s.name), |m| m.chart_name.clone());
        out.push(Idea {
            symbol: s.symbol.clone(),
            chart_name,
            date: date.to_string(),
            last_value: v,
            five_ma: tail_mean(&o.close[..=k], 5),
            equity_close: close,
            ma_200: ma,
        });
    }
    // The most pessimistic longs first, the most optimistic shorts first.
    out.sort_by(|a, b| {
        let o = a.last_value.total_cmp(&b.last_value);
        (if long { o } else { o.reverse() }).then_with(|| a.symbol.cmp(&b.symbol))
    });
    Ok(out)
}

async fn hedgers(
    market: &dyn MarketData,
    symbols: &[SymbolInfo],
    catalog: &[IndicatorMeta],
) -> Result<Vec<HedgerExtreme>> {
    let mut out = Vec::new();
    for m in catalog
        .iter()
        .filter(|m| !m.internal && m.groups.iter().any(|g| g == "Hedgers"))
    {
        if asset_class(symbols, &m.market_symbol).as_deref() != Some("commodity") {
            continue;
        }
        let Some(s) = series(market, &m.url).await? else {
            continue;
        };
        let k = s.close.len() - 1;
        let when = s.time[k].date();
        let from = when
            .with_year(when.year() - HEDGER_YEARS)
            .unwrap_or(when - chrono::Duration::days(365 * HEDGER_YEARS as i64));
        let window: Vec<f64> = (0..=k)
            .filter(|i| s.time[*i].date() >= from)
            .map(|i| s.close[i])
            .collect();
        out.push(HedgerExtreme {
            symbol: m.market_symbol.clone(),
            name: name_of(symbols, &m.market_symbol),
            last_value: s.close[k],
            last_update: when.to_string(),
            three_year_max: window.iter().copied().fold(f64::MIN, f64::max),
            three_year_min: window.iter().copied().fold(f64::MAX, f64::min),
            net_position: z_score(s.close[k], &window),
        });
    }
    // The most extreme first.
    out.sort_by(|a, b| {
        let z = |x: &HedgerExtreme| x.net_position.map_or(0.0, f64::abs);
        z(b).total_cmp(&z(a)).then_with(|| a.symbol.cmp(&b.symbol))
    });
    Ok(out)
}

async fn sectors(
    market: &dyn MarketData,
    symbols: &[SymbolInfo],
    catalog: &[IndicatorMeta],
) -> Result<Vec<SectorMa>> {
    let mut out = Vec::new();
    for etf in symbols
        .iter()
        .filter(|s| s.asset_class == "etf" && s.sector.is_some())
    {
        let sector = etf.sector.as_deref().unwrap_or_default();
        let code = format!("{}_OPTIX", etf.symbol);
        let Some(o) = series(market, &code).await? else {
            continue;
        };
        let (mut over10, mut over200, mut n10, mut n200) = (0, 0, 0, 0);
        for st in symbols
            .iter()
            .filter(|s| s.asset_class == "stock" && s.sector.as_deref() == Some(sector))
        {
            let Some(b) = bars(market, &st.symbol).await? else {
                continue;
            };
            let last = b.len() - 1;
            if let Some(m) = ma_at(&b, last, 10) {
                n10 += 1;
                over10 += (b.close[last] > m) as usize;
            }
            if let Some(m) = ma_at(&b, last, 200) {
                n200 += 1;
                over200 += (b.close[last] > m) as usize;
            }
        }
        let pct = |a: usize, n: usize| (n > 0).then(|| a as f64 / n as f64 * 100.0);
        let k = o.close.len() - 1;
        out.push(SectorMa {
            symbol: etf.symbol.clone(),
            chart_name: catalog
                .iter()
                .find(|m| m.url == code)
                .map_or_else(|| format!("{} Optix", etf.name), |m| m.chart_name.clone()),
            name: etf.name.clone(),
            last_value: o.close[k],
            last_update: o.time[k].date().to_string(),
            over_10: pct(over10, n10),
            over_200: pct(over200, n200),
        });
    }
    out.sort_by(|a, b| a.symbol.cmp(&b.symbol));
    Ok(out)
}

async fn dividends(
    market: &dyn MarketData,
    symbols: &[SymbolInfo],
    universe: &str,
) -> Result<Vec<Dividend>> {
    let metrics = load(market, "key_metrics", "symbol").await?;
    let mut out = Vec::new();
    for s in symbols
        .iter()
        .filter(|s| s.asset_class == "stock" && s.universes.iter().any(|u| u == universe))
    {
        let Some(r) = metrics
            .rows_of(&s.symbol)
            .iter()
            .copied()
            .max_by_key(|r| metrics.date("date", *r))
        else {
            continue;
        };
        let Some(divyield) = metrics.num("dividend_yield", r).filter(|y| *y > 0.0) else {
            continue;
        };
        let Some(b) = bars(market, &s.symbol).await? else {
            continue;
        };
        out.push(Dividend {
            name: s.name.clone(),
            symbol: s.symbol.clone(),
            report_date: metrics
                .date("date", r)
                .map(|d| d.to_string())
                .unwrap_or_default(),
            divyield,
            pe_ratio: metrics.num("pe_ratio", r),
            onemonthperf: perf(&b, 21),
            threemonthperf: perf(&b, 63),
            sixmonthperf: perf(&b, 126),
            oneyearperf: perf(&b, 252),
            twoyearperf: perf(&b, 504),
            eps_growth: metrics.num("eps_growth", r),
            payout_ratio: metrics.num("payout_ratio", r),
        });
    }
    // The highest yield first.
    out.sort_by(|a, b| {
        b.divyield
            .total_cmp(&a.divyield)
            .then_with(|| a.symbol.cmp(&b.symbol))
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_refusals() {
        assert_eq!(predefined().screens.len(), 15);
        let q = ScreenParams {
            key: Some("ETF-Sector-MA".into()),
            date: None,
        }
        .validate()
        .unwrap();
        assert_eq!(
            (q.key, q.category),
            ("etf-sector-ma", "ETF Sector MA Screen")
        );
        let e = ScreenParams {
            key: Some("nope".into()),
            date: None,
        }
        .validate()
        .unwrap_err();
        assert!(
            e.to_string().contains("key") && e.to_string().contains("optix-exhaustion"),
            "{e}"
        );
        let e = ScreenParams::default().validate().unwrap_err();
        assert!(e.to_string().contains("key"));
        let e = ScreenParams {
            key: Some("stocks-long-ideas".into()),
            date: Some("2026-02-30".into()),
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("date"));
    }

    #[test]
    fn z_scores_by_hand() {
        // mean 2.5, sample sd sqrt(5/3).
        let z = z_score(4.0, &[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert!((z - 1.5 / (5.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert_eq!(z_score(1.0, &[1.0]), None);
        assert_eq!(z_score(1.0, &[2.0, 2.0]), None);
    }
}
