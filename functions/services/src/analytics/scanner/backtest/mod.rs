//! The scanner backtest (analytics 2.6, 4.5): a portfolio traded on the
//! scanner's items of each session of a range, docs/scanner.md#scanner-backtest
//! gives the rules step by step.
//!
//! Items come from the nightly files where a session has one (stocks), and
//! are computed with the same engine otherwise (and always for ETFs, which
//! the nightly job does not scan).

pub mod answers;
pub mod chart;
pub mod requests;
mod result;

use super::history::scan_range;
use super::nightly::{CHUNK, benchmark, read_stocks};
use crate::analytics::cpm::BENCHMARK;
use crate::error::{Error, Result};
use answers::ScannerBacktestAnswer;
use async_trait::async_trait;
use chrono::NaiveDate;
use engine::Bars;
use engine::scanner::portfolio::{self, Candidate, Prices, Settings};
use engine::scanner::stats::Figures;
use engine::scanner::{Direction, SIGNALS};
use platform::PortError;
use platform::marketdata::MarketData;
use platform::scanner::{HistoryItem, ScannerStore, month_of};
use platform::tasks::Task;
use platform::worker::{JobError, JobHandler, Progress};
use requests::{Rank, ScannerBacktest, ScannerBacktestParams};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Arc;

/// A scanner item of a session, as the backtest reads it.
#[derive(Debug, Clone)]
pub struct Item {
    /// Index of its session in the range.
    pub day: usize,
    pub symbol: Arc<str>,
    /// Index into the signal registry.
    pub signal: usize,
    pub direction: Direction,
    pub close: f64,
    pub profit_target: f64,
    pub stop_loss: f64,
    pub hold: usize,
    pub figures: Figures,
    pub trend: Option<f64>,
    pub rel: Option<f64>,
    pub optix: Option<f64>,
}

impl Item {
    fn passes(&self, q: &ScannerBacktest) -> bool {
        let side = match self.direction {
            Direction::Long => q.long_share,
            Direction::Short => q.short_share,
        };
        let stakes = match q.allocation {
            portfolio::Allocation::Kelly => {
                portfolio::kelly(
                    self.figures.win_rate,
                    self.figures.avg_win,
                    self.figures.avg_loss,
                ) > 0.0
            }
            portfolio::Allocation::Fixed(_) => true,
        };
        side > 0.0
            && stakes
            && q.signals.binary_search(&self.signal).is_ok()
            && q.profit_target
                .is_none_or(|s| s.holds(Some(self.profit_target)))
            && q.stop_loss.is_none_or(|s| s.holds(Some(self.stop_loss)))
            && q.time_in_market
                .is_none_or(|s| s.holds(Some(self.hold as f64)))
            && q.trend.is_none_or(|s| s.holds(self.trend))
            && q.reltrend.is_none_or(|s| s.holds(self.rel))
            && q.optix.is_none_or(|s| s.holds(self.optix))
    }

    /// The ranking value, higher first.
    fn score(&self, rank: Rank) -> f64 {
        let f = &self.figures;
        let v = match rank {
            Rank::WinRate => f.win_rate,
            Rank::ZScore => f.z_score,
            Rank::StdDev => f.std_dev,
            Rank::ExpectedReturn => f.expected_return,
            Rank::SharpeRatio => f.sharpe_ratio,
        };
        if rank.lower_is_better() { -v } else { v }
    }
}

impl Item {
    /// A history item on session `day` of the range.
    fn of(day: usize, symbol: Arc<str>, it: &HistoryItem) -> Item {
        Item {
            day,
            symbol,
            signal: it.signal as usize,
            direction: it.direction,
            close: it.close,
            profit_target: it.profit_target,
            stop_loss: it.stop_loss,
            hold: it.time_in_market as usize,
            figures: it.figures,
            trend: it.trend_score,
            rel: it.rel_trend_score,
            optix: it.optix,
        }
    }
}

/// The range's sessions and every item that passes the filters (steps 1-3),
/// unranked: what the portfolio rules start from.
pub async fn filtered_items(
    market: &dyn MarketData,
    store: &dyn ScannerStore,
    q: &ScannerBacktest,
) -> Result<(Vec<NaiveDate>, Vec<Item>)> {
    let (spx, range) = sessions(market, q).await?;
    let calendar: Vec<NaiveDate> = range.map(|i| spx.date(i)).collect();
    let mut found = Orders::new(None, q.rank, calendar.len());
    items(
        market,
        store,
        q,
        &calendar,
        &Progress::default(),
        &mut found,
    )
    .await?;
    Ok((calendar, found.into_items()))
}

/// Where a range's items go: all of them, or only each session's orders
/// (its best `keep` items, one per symbol, best first).
struct Orders {
    keep: Option<usize>,
    rank: Rank,
    days: Vec<Vec<Item>>,
}

impl Orders {
    fn new(keep: Option<usize>, rank: Rank, sessions: usize) -> Self {
        Orders {
            keep,
            rank,
            days: vec![Vec::new(); sessions],
        }
    }

    fn better(&self, a: &Item, b: &Item) -> bool {
        b.score(self.rank)
            .total_cmp(&a.score(self.rank))
            .then(a.symbol.cmp(&b.symbol))
            .then(a.signal.cmp(&b.signal))
            .is_lt()
    }

    fn push(&mut self, it: Item) {
        let Some(keep) = self.keep else {
            self.days[it.day].push(it);
            return;
        };
        let day = it.day;
        if let Some(k) = self.days[day].iter().position(|x| x.symbol == it.symbol) {
            if !self.better(&it, &self.days[day][k]) {
                return;
            }
            self.days[day].remove(k);
        }
        let at = self.days[day].partition_point(|x| self.better(x, &it));
        if at < keep {
            self.days[day].insert(at, it);
            self.days[day].truncate(keep);
        }
    }

    fn is_empty(&self) -> bool {
        self.days.iter().all(Vec::is_empty)
    }

    fn into_items(self) -> Vec<Item> {
        self.days.into_iter().flatten().collect()
    }
}

/// Months of history decoded at once: decoding one while filtering another
/// keeps both cores busy.
const MONTHS_AT_ONCE: usize = 3;

/// The stock items of the range's sessions the history holds, each
/// month's filtered and cut to its orders on the blocking pool; which
/// sessions it covered.
async fn from_history(
    store: &dyn ScannerStore,
    q: &ScannerBacktest,
    calendar: &[NaiveDate],
    keep: Option<usize>,
    out: &mut Orders,
) -> Result<Vec<bool>> {
    use futures::{StreamExt, TryStreamExt};
    let mut months: Vec<NaiveDate> = calendar.iter().map(|d| month_of(*d)).collect();
    months.dedup();
    let calendar: Arc<Vec<NaiveDate>> = Arc::new(calendar.to_vec());
    let q = Arc::new(q.clone());
    let (rank, sessions) = (out.rank, calendar.len());
    let found: Vec<(Vec<usize>, Orders)> = futures::stream::iter(months)
        .map(|m| {
            let (calendar, q) = (calendar.clone(), q.clone());
            async move {
                let Some(month) = store.history(m).await? else {
                    return Ok::<_, Error>((Vec::new(), Orders::new(keep, rank, 0)));
                };
                tokio::task::spawn_blocking(move || {
                    // The month's sessions as sessions of the range.
                    let day: Vec<Option<usize>> = month
                        .sessions
                        .iter()
                        .map(|d| calendar.binary_search(d).ok())
                        .collect();
                    let mut orders = Orders::new(keep, rank, sessions);
                    for it in &month.items {
                        let Some(k) = day[it.session as usize] else {
                            continue;
                        };
                        let item = Item::of(k, month.symbols[it.symbol as usize].clone(), it);
                        if item.passes(&q) {
                            orders.push(item);
                        }
                    }
                    (day.into_iter().flatten().collect(), orders)
                })
                .await
                .map_err(|e| Error::Port(PortError::fault("scanner backtest failed", e)))
            }
        })
        .buffered(MONTHS_AT_ONCE)
        .try_collect()
        .await?;
    let mut covered = vec![false; calendar.len()];
    for (days, orders) in found {
        for k in days {
            covered[k] = true;
        }
        for it in orders.into_items() {
            out.push(it);
        }
    }
    Ok(covered)
}

/// Every item of the range that passes the filters, into `out`: stock items
/// from the history, else a day file, else computed; ETF items computed.
async fn items(
    market: &dyn MarketData,
    store: &dyn ScannerStore,
    q: &ScannerBacktest,
    calendar: &[NaiveDate],
    progress: &Progress,
    out: &mut Orders,
) -> Result<()> {
    let mut from_file = vec![false; calendar.len()];
    if q.stocks {
        from_file = from_history(store, q, calendar, out.keep, out).await?;
        let scanned = store.dates().await?;
        for (k, d) in calendar.iter().enumerate() {
            if from_file[k] || scanned.binary_search(d).is_err() {
                continue;
            }
            let Some(day) = store.day(*d).await? else {
                continue;
            };
            from_file[k] = true;
            let mut symbol: Option<Arc<str>> = None;
            for r in &day.rows {
                let Some(signal) = SIGNALS.iter().position(|s| s.name == r.signal) else {
                    continue;
                };
                let name = match &symbol {
                    Some(s) if **s == *r.symbol => s.clone(),
                    _ => symbol.insert(Arc::from(r.symbol.as_str())).clone(),
                };
                let it = Item {
                    day: k,
                    symbol: name,
                    signal,
                    direction: r.direction,
                    close: r.close,
                    profit_target: r.profit_target,
                    stop_loss: r.stop_loss,
                    hold: r.time_in_market as usize,
                    figures: r.figures,
                    trend: r.trend_score,
                    rel: r.rel_trend_score,
                    optix: r.optix,
                };
                if it.passes(q) {
                    out.push(it);
                }
            }
        }
    }
    let symbols = market.symbols().await?;
    let (first, last) = (calendar[0], calendar[calendar.len() - 1]);
    let stocks_missing = q.stocks && from_file.iter().any(|f| !f);
    let universe: Vec<(String, bool)> = symbols
        .iter()
        .filter(|s| s.first_date <= last && first <= s.last_date)
        .filter_map(|s| match s.asset_class.as_str() {
            "stock" if stocks_missing => Some((s.symbol.clone(), true)),
            "etf" if q.etfs => Some((s.symbol.clone(), false)),
            _ => None,
        })
        .collect();
    let bench = benchmark(market, last).await?.map(Arc::new);
    let total = universe.len();
    let from_file = Arc::new(from_file);
    for (k, chunk) in universe.chunks(CHUNK).enumerate() {
        let names: Vec<String> = chunk.iter().map(|(s, _)| s.clone()).collect();
        let loaded = read_stocks(market, &names, false).await?;
        let stock_set: HashSet<String> = chunk
            .iter()
            .filter(|(_, stock)| *stock)
            .map(|(s, _)| s.clone())
            .collect();
        let (b, cal, files, q2) = (
            bench.clone(),
            calendar.to_vec(),
            from_file.clone(),
            q.clone(),
        );
        let found = tokio::task::spawn_blocking(move || {
            crate::analytics::on_cores(&loaded, |st| {
                // Stocks only on sessions without a file; ETFs always.
                let stock = stock_set.contains(&st.symbol);
                let wanted = |day: usize| !stock || !files[day];
                let name: Arc<str> = Arc::from(st.symbol.as_str());
                scan_range(st, b.as_deref(), &cal, &wanted)
                    .iter()
                    .map(|it| Item::of(it.session as usize, name.clone(), it))
                    .filter(|it| it.passes(&q2))
                    .collect::<Vec<_>>()
            })
        })
        .await
        .map_err(|e| Error::Port(PortError::fault("scanner backtest failed", e)))?;
        for it in found.into_iter().flatten() {
            out.push(it);
        }
        progress.steps((k * CHUNK + chunk.len()).min(total), total);
    }
    Ok(())
}

/// The benchmark and the range of its sessions the request covers; a range
/// without a session is refused, naming `start_date` (checked at the submit too).
pub async fn sessions(
    market: &dyn MarketData,
    q: &ScannerBacktest,
) -> Result<(Arc<Bars>, std::ops::Range<usize>)> {
    let spx = super::super::daily(market, "benchmark", BENCHMARK).await?;
    let from = spx.time.partition_point(|t| t.date() < q.start);
    let to = spx.time.partition_point(|t| t.date() <= q.end);
    if from >= to {
        return Err(Error::invalid(
            "start_date",
            format!(
                "no session from {} to {} (the data run from {} to {})",
                q.start,
                q.end,
                spx.date(0),
                spx.date(spx.len().saturating_sub(1))
            ),
        ));
    }
    Ok((spx, from..to))
}

/// Runs the backtest of a checked request.
pub async fn run(
    market: &dyn MarketData,
    store: &dyn ScannerStore,
    q: &ScannerBacktest,
    progress: &Progress,
) -> Result<ScannerBacktestAnswer> {
    let (spx, range) = sessions(market, q).await?;
    let (from, to) = (range.start, range.end);
    let calendar: Vec<NaiveDate> = (from..to).map(|i| spx.date(i)).collect();
    let mut orders = Orders::new(Some(q.daily_limit), q.rank, calendar.len());
    items(market, store, q, &calendar, progress, &mut orders).await?;
    if orders.is_empty() {
        return Ok(ScannerBacktestAnswer {
            code: 407,
            msg: "No scanner item passed the filters in the range".into(),
            data: None,
        });
    }
    let found = orders.into_items();
    let names: Vec<String> = {
        let set: std::collections::BTreeSet<&str> = found.iter().map(|i| &*i.symbol).collect();
        set.into_iter().map(str::to_string).collect()
    };
    // The traded symbols' bars, decoded on every core at once.
    let read: Vec<Arc<Bars>> = {
        use futures::{StreamExt, TryStreamExt};
        futures::stream::iter(names.iter().cloned())
            .map(|name| async move { market.daily(&name).await })
            .buffered(CHUNK)
            .try_collect()
            .await?
    };
    let mut prices = Vec::with_capacity(names.len());
    for bars in read {
        let mut p = Prices {
            open: vec![f64::NAN; calendar.len()],
            close: vec![f64::NAN; calendar.len()],
        };
        for i in 0..bars.len() {
            if let Ok(k) = calendar.binary_search(&bars.date(i)) {
                p.open[k] = bars.open[i];
                p.close[k] = bars.close[i];
            }
        }
        prices.push(p);
    }
    let candidates: Vec<Candidate> = found
        .iter()
        .map(|it| Candidate {
            day: it.day,
            symbol: names
                .binary_search_by(|n| n.as_str().cmp(&it.symbol))
                .expect("named"),
            direction: it.direction,
            profit_target: it.profit_target,
            stop_loss: it.stop_loss,
            hold: it.hold,
            win_rate: it.figures.win_rate,
            avg_win: it.figures.avg_win,
            avg_loss: it.figures.avg_loss,
        })
        .collect();
    let mut by_day: Vec<Vec<usize>> = vec![Vec::new(); calendar.len()];
    for (k, c) in candidates.iter().enumerate() {
        by_day[c.day].push(k);
    }
    let settings = Settings {
        capital: q.capital,
        long_share: q.long_share,
        short_share: q.short_share,
        commission: q.commission,
        allocation: q.allocation,
        daily_limit: q.daily_limit,
    };
    let o = portfolio::simulate(calendar.len(), &prices, &candidates, &by_day, &settings);
    Ok(result::answer(
        q,
        &calendar,
        &spx.close[from..to],
        &found,
        &o,
    ))
}

/// Runs scanner backtest tasks on the worker; the stored request is checked again.
pub struct ScannerBacktestJob {
    pub market: Arc<dyn MarketData>,
    pub store: Arc<dyn ScannerStore>,
}

#[async_trait]
impl JobHandler for ScannerBacktestJob {
    fn reserved(&self, task: &Task) -> platform::metering::Reserved {
        crate::compute::reserved(task.kind, &task.params, task.created_at.date())
    }

    async fn run(&self, task: Task, progress: Progress) -> Result<Value, JobError> {
        let params: ScannerBacktestParams = serde_json::from_value(task.params.clone())
            .map_err(|e| JobError::Permanent(format!("invalid parameters: {e}")))?;
        let q = params.validate()?;
        let answer = run(self.market.as_ref(), self.store.as_ref(), &q, &progress).await?;
        serde_json::to_value(answer)
            .map_err(|e| JobError::Permanent(format!("result not serializable: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(day: usize, symbol: &str, signal: usize, win_rate: f64, std_dev: f64) -> Item {
        Item {
            day,
            symbol: symbol.into(),
            signal,
            direction: Direction::Long,
            close: 10.0,
            profit_target: 5.0,
            stop_loss: 4.0,
            hold: 5,
            figures: Figures {
                win_rate,
                std_dev,
                avg_win: 2.0,
                avg_loss: -1.0,
                ..Figures::default()
            },
            trend: Some(7.0),
            rel: None,
            optix: Some(30.0),
        }
    }

    fn orders(v: &[Item], rank: Rank, keep: usize) -> Vec<(usize, String, usize)> {
        let mut o = Orders::new(Some(keep), rank, 2);
        for it in v {
            o.push(it.clone());
        }
        o.into_items()
            .into_iter()
            .map(|i| (i.day, i.symbol.to_string(), i.signal))
            .collect()
    }

    #[test]
    fn each_session_s_orders_best_first_one_per_symbol_with_ties() {
        let v = vec![
            item(1, "B", 0, 60.0, 2.0),
            item(0, "C", 3, 50.0, 1.0),
            item(0, "D", 4, 40.0, 0.5),
            item(0, "A", 5, 70.0, 3.0),
            item(0, "A", 2, 50.0, 1.0),
            item(0, "B", 1, 50.0, 1.0),
        ];
        let s = |x: &str| x.to_string();
        // WinRate: A's best (70), then the 50s by symbol; D is fourth, cut.
        assert_eq!(
            orders(&v, Rank::WinRate, 3),
            vec![
                (0, s("A"), 5),
                (0, s("B"), 1),
                (0, s("C"), 3),
                (1, s("B"), 0)
            ]
        );
        // StdDev, lowest first: D, then the 1.0s by symbol, then signal (A's 2 beats its 5).
        assert_eq!(
            orders(&v, Rank::StdDev, 3),
            vec![
                (0, s("D"), 4),
                (0, s("A"), 2),
                (0, s("B"), 1),
                (1, s("B"), 0)
            ]
        );
        assert_eq!(
            orders(&v, Rank::StdDev, 1),
            vec![(0, s("D"), 4), (1, s("B"), 0)]
        );
    }

    #[test]
    fn filters_by_signal_side_and_ranges() {
        let q = serde_json::from_value::<ScannerBacktestParams>(serde_json::json!({
            "start_date": "2025-01-02", "end_date": "2025-12-31", "find_type": "stock",
            "signals": ["MA", "Optix #3"], "total_capital": 1000, "long_short_ratio": "1/0",
            "optix_range": "20-40", "trend_range": "5-10"}))
        .unwrap()
        .validate()
        .unwrap();
        let mut it = item(0, "A", 0, 50.0, 1.0);
        assert!(it.passes(&q));
        it.optix = Some(41.0);
        assert!(!it.passes(&q));
        it.optix = None;
        assert!(!it.passes(&q), "a range needs a reading");
        let mut short = item(0, "A", 0, 50.0, 1.0);
        short.direction = Direction::Short;
        assert!(!short.passes(&q), "no short side");
        assert!(!item(0, "A", 1, 50.0, 1.0).passes(&q), "MAGap not asked");
        // No edge in its history: no Kelly stake, so no order; a fixed one trades it.
        let mut edgeless = item(0, "A", 0, 30.0, 1.0);
        assert!(!edgeless.passes(&q));
        let mut fixed = q.clone();
        fixed.allocation = portfolio::Allocation::Fixed(0.2);
        assert!(edgeless.passes(&fixed));
        edgeless.figures.win_rate = 0.0;
        assert!(edgeless.passes(&fixed));
    }
}
