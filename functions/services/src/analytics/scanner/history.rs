//! The scanner's history: every session's items, month by month, without
//! trade lists. The nightly job records its day; a backfill records a range
//! of past sessions in one engine pass per stock. The scanner backtest reads
//! it rather than scanning ten years again.

use super::nightly::{Benchmark, CHUNK, Stock, Upto, benchmark, read_stocks, reading};
use crate::analytics::cpm::BENCHMARK;
use crate::error::{Error, Result};
use chrono::NaiveDate;
use engine::scanner::items::summaries;
use platform::PortError;
use platform::marketdata::MarketData;
use platform::scanner::{HistoryItem, HistoryMonth, ScannerStore, month_of};
use platform::worker::Progress;
use std::collections::BTreeMap;
use std::sync::Arc;

/// A stock's items on the sessions of `calendar` for which `wanted` holds,
/// from one pass over its history up to the last of them: `session` indexes
/// `calendar`, `symbol` is 0. Equal to the nightly job's rows of each date,
/// to the bit.
pub(crate) fn scan_range(
    stock: &Stock,
    bench: Option<&Benchmark>,
    calendar: &[NaiveDate],
    wanted: &dyn Fn(usize) -> bool,
) -> Vec<HistoryItem> {
    let bars = &stock.bars;
    let dates: Vec<NaiveDate> = (0..bars.len()).map(|i| bars.date(i)).collect();
    let (first, last) = (calendar[0], calendar[calendar.len() - 1]);
    let from = dates.partition_point(|d| *d < first);
    let to = dates.partition_point(|d| *d <= last);
    if from >= to {
        return Vec::new();
    }
    let upto = Upto::new(stock, &dates[..to], bench);
    let inputs = upto.inputs(bars, to);
    summaries(&inputs, upto.benchmark.as_deref(), from..to)
        .into_iter()
        .filter_map(|it| {
            let day = calendar.binary_search(&dates[it.bar]).ok()?;
            wanted(day).then(|| HistoryItem {
                session: day as u32,
                symbol: 0,
                signal: it.signal as u16,
                reading: reading(&it, bars.close[it.bar]),
            })
        })
        .collect()
}

/// What a backfill recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct BackfillSummary {
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub sessions: usize,
    pub months: usize,
    pub items: usize,
}

/// Records the history of every session of the benchmark from `from` to
/// `to` (default: the latest), replacing those sessions, without day files.
pub async fn backfill(
    market: &dyn MarketData,
    store: &dyn ScannerStore,
    from: NaiveDate,
    to: Option<NaiveDate>,
    progress: &Progress,
) -> Result<BackfillSummary> {
    let latest = market.latest_date().await?;
    let to = to.unwrap_or(latest);
    if to > latest {
        return Err(Error::invalid(
            "to",
            format!("is after the latest session in the store ({latest})"),
        ));
    }
    if from > to {
        return Err(Error::invalid("from", format!("is after {to}")));
    }
    let spx = crate::analytics::daily(market, "benchmark", BENCHMARK).await?;
    let calendar: Vec<NaiveDate> = (0..spx.len())
        .map(|i| spx.date(i))
        .filter(|d| from <= *d && *d <= to)
        .collect();
    if calendar.is_empty() {
        return Err(Error::invalid(
            "from",
            format!("no session of {BENCHMARK} from {from} to {to}"),
        ));
    }
    let bench = benchmark(market, to).await?.map(Arc::new);
    let symbols = market.symbols().await?;
    let universe: Vec<String> = symbols
        .iter()
        .filter(|s| s.asset_class == "stock" && s.first_date <= to && from <= s.last_date)
        .map(|s| s.symbol.clone())
        .collect();
    // Items per calendar session, with their symbol's name.
    let mut by_session: Vec<Vec<(Arc<str>, HistoryItem)>> = vec![Vec::new(); calendar.len()];
    let total = universe.len();
    for (k, chunk) in universe.chunks(CHUNK).enumerate() {
        let loaded = read_stocks(market, chunk, false).await?;
        let (b, cal) = (bench.clone(), calendar.clone());
        let found = tokio::task::spawn_blocking(move || {
            crate::analytics::on_cores(&loaded, |st| {
                let name: Arc<str> = Arc::from(st.symbol.as_str());
                scan_range(st, b.as_deref(), &cal, &|_| true)
                    .into_iter()
                    .map(|it| (name.clone(), it))
                    .collect::<Vec<_>>()
            })
        })
        .await
        .map_err(|e| Error::Port(PortError::fault("backfill failed", e)))?;
        for (name, it) in found.into_iter().flatten() {
            by_session[it.session as usize].push((name, it));
        }
        progress.steps((k * CHUNK + chunk.len()).min(total), total);
    }
    // A day file's order: by symbol, then signal.
    for v in &mut by_session {
        v.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.signal.cmp(&b.1.signal)));
    }
    let mut months: BTreeMap<NaiveDate, Vec<usize>> = BTreeMap::new();
    for (k, d) in calendar.iter().enumerate() {
        months.entry(month_of(*d)).or_default().push(k);
    }
    let (mut items, count) = (0, months.len());
    for sessions in months.into_values() {
        let mut month = HistoryMonth {
            sessions: sessions.iter().map(|k| calendar[*k]).collect(),
            ..Default::default()
        };
        let mut index: std::collections::HashMap<Arc<str>, u32> = Default::default();
        for (s, k) in sessions.iter().enumerate() {
            for (name, it) in std::mem::take(&mut by_session[*k]) {
                let symbol = *index.entry(name.clone()).or_insert_with(|| {
                    month.symbols.push(name);
                    (month.symbols.len() - 1) as u32
                });
                month.items.push(HistoryItem {
                    session: s as u32,
                    symbol,
                    ..it
                });
            }
        }
        items += month.items.len();
        store.put_history(month).await?;
    }
    Ok(BackfillSummary {
        from: calendar[0],
        to: calendar[calendar.len() - 1],
        sessions: calendar.len(),
        months: count,
        items,
    })
}
