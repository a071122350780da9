//! The nightly scan: every stock's signals on one date, with the statistics
//! of each signal's own history there, written as that date's scanner file.
//! Re-running a date replaces its file; the answer depends only on the
//! market data up to that date.

use crate::analytics::cpm::BENCHMARK;
use crate::error::{Error, Result};
use chrono::NaiveDate;
use engine::Bars;
use engine::indicators::sma;
use engine::scanner::items::{Item, items};
use engine::scanner::{Inputs, SIGNALS};
use platform::PortError;
use platform::marketdata::{IndicatorSeries, MarketData};
use platform::scanner::{Reading, ScanDay, ScanRow, ScanTrade, ScannerStore};
use platform::webhooks::emit::Events;
use platform::worker::Progress;
use std::sync::Arc;

/// Stocks read at once: their decoding keeps every core busy.
pub(crate) const CHUNK: usize = 64;
/// Sessions of the benchmark average that labels the market's trend.
const MARKET_TREND: usize = 200;

/// What a scan did.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanSummary {
    pub date: NaiveDate,
    /// Stocks with a bar on the date.
    pub stocks: usize,
    /// Signals that fired (rows written).
    pub items: usize,
}

/// The benchmark's closes and its trend label on the date.
pub(crate) struct Benchmark {
    dates: Vec<NaiveDate>,
    close: Vec<f64>,
    market: &'static str,
}

impl Benchmark {
    /// The benchmark's close on each of `dates` (the last one on or before it;
    /// NaN before its history).
    pub(crate) fn aligned(&self, dates: &[NaiveDate]) -> Vec<f64> {
        let mut k = 0;
        dates
            .iter()
            .map(|d| {
                while k < self.dates.len() && self.dates[k] <= *d {
                    k += 1;
                }
                if k == 0 { f64::NAN } else { self.close[k - 1] }
            })
            .collect()
    }
}

/// The stock's Optix reading on each of its dates (NaN where there is none).
pub(crate) fn aligned_optix(dates: &[NaiveDate], series: &IndicatorSeries) -> Vec<f64> {
    let mut k = 0;
    dates
        .iter()
        .map(|d| {
            while k < series.time.len() && series.time[k].date() < *d {
                k += 1;
            }
            match series.time.get(k) {
                Some(t) if t.date() == *d => series.close[k],
                _ => f64::NAN,
            }
        })
        .collect()
}

/// A symbol's daily bars and its Optix reading, as the scanner reads them.
pub(crate) struct Stock {
    pub symbol: String,
    pub bars: Arc<Bars>,
    pub optix: Option<Arc<IndicatorSeries>>,
}

/// Reads `symbols` together (the store decodes on the blocking pool, every
/// core at once); a catalog symbol without prices is skipped, not fatal.
/// `once`: a sweep that reads each stock once (the nightly scan) leaves
/// the caches alone.
pub(crate) async fn read_stocks(
    market: &dyn MarketData,
    symbols: &[String],
    once: bool,
) -> Result<Vec<Stock>> {
    let reads = symbols.iter().map(|symbol| async move {
        let code = format!("{symbol}_OPTIX");
        if once {
            let (bars, optix) = futures::join!(
                market.daily_once(symbol),
                market.indicator_series_once(&code)
            );
            return (symbol, bars, optix);
        }
        let bars = market.daily(symbol).await;
        let optix = market.indicator_series(&code).await;
        (symbol, bars, optix)
    });
    let mut loaded = Vec::with_capacity(symbols.len());
    for (symbol, bars, optix) in futures::future::join_all(reads).await {
        let bars = match bars {
            Ok(b) => b,
            Err(PortError::NotFound(_)) => continue,
            Err(e) => return Err(e.into()),
        };
        let optix = match optix {
            Ok(o) => Some(o),
            Err(PortError::NotFound(_)) => None,
            Err(e) => return Err(e.into()),
        };
        loaded.push(Stock {
            symbol: symbol.clone(),
            bars,
            optix,
        });
    }
    Ok(loaded)
}

/// What the engine reads of a stock up to its bar `to` (exclusive): its
/// Optix reading and the benchmark's close on each of those bars.
pub(crate) struct Upto {
    pub optix: Option<Vec<f64>>,
    pub benchmark: Option<Vec<f64>>,
}

impl Upto {
    /// `dates`: the stock's bars' dates up to `to`.
    pub(crate) fn new(stock: &Stock, dates: &[NaiveDate], bench: Option<&Benchmark>) -> Self {
        Upto {
            optix: stock.optix.as_ref().map(|s| aligned_optix(dates, s)),
            benchmark: bench.map(|bm| bm.aligned(dates)),
        }
    }

    /// The engine's inputs: the bars before `to` with the Optix readings.
    pub(crate) fn inputs<'a>(&'a self, b: &'a Bars, to: usize) -> Inputs<'a> {
        Inputs {
            open: &b.open[..to],
            high: &b.high[..to],
            low: &b.low[..to],
            close: &b.close[..to],
            optix: self.optix.as_deref(),
        }
    }
}

/// The rows of one stock on `date`, if it has a bar there.
/// What an item says, as the scanner stores it: its trade, its figures
/// and the stock's scores (a score that could not be computed is none).
pub(super) fn reading(it: &Item, close: f64) -> Reading {
    let number = |x: f64| (!x.is_nan()).then_some(x);
    Reading {
        direction: it.direction,
        close,
        profit_target: it.profit_target,
        stop_loss: it.stop_loss,
        time_in_market: it.hold as u32,
        figures: it.figures,
        trend_score: number(it.trend_score),
        rel_trend_score: number(it.rel_trend_score),
        optix: number(it.optix),
    }
}

fn stock_rows(stock: &Stock, date: NaiveDate, bench: Option<&Benchmark>) -> Option<Vec<ScanRow>> {
    let b = &stock.bars;
    let dates: Vec<NaiveDate> = (0..b.len()).map(|i| b.date(i)).collect();
    let asof = dates.binary_search(&date).ok()?;
    let dates = &dates[..=asof];
    let upto = Upto::new(stock, dates, bench);
    let inputs = upto.inputs(b, asof + 1);
    let market = bench.map_or("Unknown", |bm| bm.market);
    let row = |it: Item| ScanRow {
        symbol: stock.symbol.clone(),
        signal: SIGNALS[it.signal].name.to_string(),
        horizon: SIGNALS[it.signal].horizon(),
        reading: reading(&it, b.close[it.bar]),
        market: market.to_string(),
        trades: it
            .trades
            .iter()
            .map(|t| ScanTrade {
                entry_date: dates[t.entry],
                exit_date: dates[t.exit],
                entry_price: b.close[t.entry],
                exit_price: b.close[t.exit],
                ret: t.ret,
                reason: t.reason,
            })
            .collect(),
    };
    Some(
        items(&inputs, upto.benchmark.as_deref(), asof..asof + 1)
            .into_iter()
            .map(row)
            .collect(),
    )
}

pub(crate) async fn benchmark(
    market: &dyn MarketData,
    date: NaiveDate,
) -> Result<Option<Benchmark>> {
    let bars = match market.daily(BENCHMARK).await {
        Ok(b) => b,
        Err(PortError::NotFound(_)) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let dates: Vec<NaiveDate> = (0..bars.len())
        .map(|i| bars.date(i))
        .take_while(|d| *d <= date)
        .collect();
    let close = bars.close[..dates.len()].to_vec();
    let average = sma(&close, MARKET_TREND);
    let market = match (close.last(), average.last()) {
        (Some(c), Some(a)) if !a.is_nan() && c > a => "Uptrend",
        (Some(_), Some(a)) if !a.is_nan() => "Downtrend",
        _ => "Unknown",
    };
    Ok(Some(Benchmark {
        dates,
        close,
        market,
    }))
}

/// Scans every stock on `date` (default: the latest session in the store)
/// and writes the date's scanner file.
pub async fn run(
    market: &dyn MarketData,
    store: &dyn ScannerStore,
    date: Option<NaiveDate>,
    progress: &Progress,
) -> Result<ScanSummary> {
    let latest = market.latest_date().await?;
    let date = date.unwrap_or(latest);
    if date > latest {
        return Err(Error::invalid(
            "date",
            format!("is after the latest session in the store ({latest})"),
        ));
    }
    let bench = benchmark(market, date).await?;
    if let Some(b) = &bench
        && b.dates.last() != Some(&date)
    {
        return Err(Error::invalid(
            "date",
            format!("{date} is not a session of the benchmark {BENCHMARK}"),
        ));
    }
    let bench = bench.map(Arc::new);
    let symbols = market.symbols().await?;
    let universe: Vec<String> = symbols
        .iter()
        .filter(|s| s.asset_class == "stock" && s.first_date <= date && date <= s.last_date)
        .map(|s| s.symbol.clone())
        .collect();
    let total = universe.len();
    let (mut rows, mut stocks) = (Vec::new(), 0);
    // Each chunk is read while the one before it is computed; at most two
    // chunks are held, and nothing stays in the caches.
    let chunks: Vec<&[String]> = universe.chunks(CHUNK).collect();
    let mut next = match chunks.first() {
        Some(c) => Some(read_stocks(market, c, true).await?),
        None => None,
    };
    for (k, chunk) in chunks.iter().enumerate() {
        let loaded = next.take().unwrap_or_default();
        let b = bench.clone();
        let compute = tokio::task::spawn_blocking(move || {
            crate::analytics::on_cores(&loaded, |s| stock_rows(s, date, b.as_deref()))
        });
        let ahead = async {
            match chunks.get(k + 1) {
                Some(c) => read_stocks(market, c, true).await.map(Some),
                None => Ok(None),
            }
        };
        let (found, ahead) = tokio::join!(compute, ahead);
        next = ahead?;
        let found = found.map_err(|e| Error::Port(PortError::fault("scan failed", e)))?;
        for r in found.into_iter().flatten() {
            stocks += 1;
            rows.extend(r);
        }
        progress.steps((k * CHUNK + chunk.len()).min(total), total);
    }
    if stocks == 0 {
        return Err(Error::invalid(
            "date",
            format!("{date}: no stock has a session on that date"),
        ));
    }
    rows.sort_by(|a, b| a.symbol.cmp(&b.symbol));
    let items = rows.len();
    store.put(ScanDay { date, rows }).await?;
    Ok(ScanSummary {
        date,
        stocks,
        items,
    })
}

/// When the embedded server scans on its own (times in UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    /// Scan at start-up when the latest session has no scan yet.
    pub at_start: bool,
    /// Scan the latest session every day at this time (unless it was
    /// scanned): the deadline for a session some symbol never completes.
    pub daily_at: Option<chrono::NaiveTime>,
    /// Scan a session as soon as its data are complete
    /// ([`super::follow::follow`]).
    pub follow: bool,
}

impl Default for Schedule {
    /// 04:40 UTC is 11:40 PM in New York in winter (00:40 in summer): after
    /// the close and the day's data, as the original's nightly update.
    fn default() -> Self {
        Schedule {
            at_start: true,
            daily_at: chrono::NaiveTime::from_hms_opt(4, 40, 0),
            follow: true,
        }
    }
}

/// How long from `now` until the next `at` (tomorrow's when today's has passed).
pub fn until_next(now: chrono::NaiveDateTime, at: chrono::NaiveTime) -> std::time::Duration {
    let today = now.date().and_time(at);
    let next = if today > now {
        today
    } else {
        today + chrono::TimeDelta::days(1)
    };
    (next - now).to_std().unwrap_or_default()
}

/// One logged scan of the latest session, then its events.
async fn scan_logged(
    market: &dyn MarketData,
    store: &dyn ScannerStore,
    events: Option<&Events>,
    why: &str,
) {
    let started = std::time::Instant::now();
    match run(market, store, None, &Progress::default()).await {
        Ok(s) => {
            tracing::info!(
                date = %s.date, stocks = s.stocks, items = s.items,
                seconds = started.elapsed().as_secs_f64(), why, "scanner: day scanned"
            );
            if let Some(events) = events {
                tell(events, store, s.date).await;
            }
        }
        Err(e) => tracing::error!(error = %e, why, "scanner: scan failed"),
    }
}

/// The scanned day's webhook events (`scan.completed`, alerts); a failure
/// is logged, the scan stands.
pub async fn tell(events: &Events, store: &dyn ScannerStore, date: NaiveDate) {
    let told = match store.day(date).await {
        Ok(Some(day)) => crate::webhooks::scan_events(events, &day).await,
        Ok(None) => Ok(0),
        Err(e) => Err(e.into()),
    };
    match told {
        Ok(n) => tracing::info!(%date, deliveries = n, "scanner: events recorded"),
        Err(e) => tracing::warn!(%date, error = %e, "scanner: events not recorded"),
    }
}

/// Scans the latest session if it has no scan yet.
pub async fn scan_missing(
    market: &dyn MarketData,
    store: &dyn ScannerStore,
    events: Option<&Events>,
    why: &str,
) {
    let missing = match (market.latest_date().await, store.dates().await) {
        (Ok(latest), Ok(dates)) => !dates.contains(&latest),
        (Err(e), _) | (_, Err(e)) => {
            tracing::error!(error = %e, "scanner: cannot tell whether the latest session was scanned");
            false
        }
    };
    if missing {
        scan_logged(market, store, events, why).await;
    }
}

/// Runs the schedule until dropped (the server aborts it at shutdown; a
/// scan cut short writes nothing): at start, then daily, each time only
/// when the latest session has no scan yet.
pub async fn scheduled(
    market: Arc<dyn MarketData>,
    store: Arc<dyn ScannerStore>,
    schedule: Schedule,
    events: Option<Events>,
) {
    if schedule.at_start {
        scan_missing(
            market.as_ref(),
            store.as_ref(),
            events.as_ref(),
            "the latest session had no scan",
        )
        .await;
    }
    let Some(at) = schedule.daily_at else {
        return;
    };
    loop {
        tokio::time::sleep(until_next(chrono::Utc::now().naive_utc(), at)).await;
        scan_missing(
            market.as_ref(),
            store.as_ref(),
            events.as_ref(),
            "daily schedule: the latest session had no scan",
        )
        .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_run_is_today_or_tomorrow() {
        let t = |s: &str| chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap();
        let at = chrono::NaiveTime::from_hms_opt(4, 40, 0).unwrap();
        assert_eq!(
            until_next(t("2026-11-24 04:00:00"), at),
            std::time::Duration::from_secs(40 * 60)
        );
        assert_eq!(
            until_next(t("2026-11-24 04:40:00"), at),
            std::time::Duration::from_secs(24 * 3600)
        );
        assert_eq!(
            until_next(t("2026-11-24 23:40:00"), at),
            std::time::Duration::from_secs(5 * 3600)
        );
    }

    #[test]
    fn benchmark_closes_follow_the_stock_s_dates() {
        let d = |s: &str| s.parse::<NaiveDate>().unwrap();
        let b = Benchmark {
            dates: vec![d("2026-01-05"), d("2026-01-06"), d("2026-01-08")],
            close: vec![1.0, 2.0, 3.0],
            market: "Uptrend",
        };
        let got = b.aligned(&[
            d("2026-01-02"),
            d("2026-01-06"),
            d("2026-01-07"),
            d("2026-01-09"),
        ]);
        assert!(got[0].is_nan());
        assert_eq!(&got[1..], &[2.0, 2.0, 3.0]);
    }
}
