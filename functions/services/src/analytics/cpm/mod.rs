//! Pattern matching (analytics 2.4, 2.8, 4.3): find the windows of a
//! symbol's closes, or of every stock of a universe, that correlate with a
//! template, and backtest holding after each match. Requests are checked
//! against the market data by [`prepare`]; [`run`] answers them, at once for
//! the synchronous forms and on the worker for tasks ([`CpmJob`]).

pub mod answers;
pub mod chart;
pub mod requests;

use crate::analytics::daily;
use crate::error::{Error, Result};
use answers::*;
use async_trait::async_trait;
use chrono::{Months, NaiveDate};
use engine::Bars;
use engine::cpm::{self, Criteria, MarketLabels, Match, Template};
use platform::PortError;
use platform::marketdata::{MarketData, codec};
use platform::tasks::Task;
use platform::worker::{JobError, JobHandler, Progress};
use requests::*;
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;

/// `msg` of a scan that found patterns.
pub const SCAN_MESSAGE: &str = "Found matching patterns!";
/// `msg` of a backtest.
pub const BACKTEST_MESSAGE: &str = "Finish CPM!";
/// Code of an answer without matches.
pub const NO_MATCHES: u16 = 407;
/// The benchmark whose trend labels the market of a trade.
pub const BENCHMARK: &str = "SPX";
/// The reference table of US recessions (peak and trough months).
pub const RECESSIONS_TABLE: &str = "us_recessions";
/// Symbols loaded and searched at a time in a universe search.
const CHUNK: usize = 64;

/// `GET /cpm/get-predefined-patterns`.
pub fn predefined_patterns() -> PatternList {
    PatternList {
        patterns: cpm::SHAPES.iter().map(|s| s.name).collect(),
    }
}

/// A request checked against the market data, with what it searches.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub query: CpmQuery,
    /// The symbol's bars at the timeframe.
    series: Arc<Bars>,
    /// Customize: the template's bars in `series`, inclusive.
    template_bars: Option<(usize, usize)>,
    /// The first date a window may start on (the lookback).
    lookback_start: Option<NaiveDate>,
    /// Universe searches: the symbols searched.
    universe: Vec<String>,
}

impl Prepared {
    /// Universe searches answer from many series; they run as tasks only.
    pub fn is_universe_search(&self) -> bool {
        self.query.universe.is_some()
    }
}

/// Bars of `symbol` at the query's timeframe (daily bars are shared, not copied).
async fn series(
    market: &dyn MarketData,
    symbol: &str,
    freq: engine::Frequency,
) -> Result<Arc<Bars>> {
    let d = daily(market, "symbol", symbol).await?;
    Ok(match freq {
        engine::Frequency::Daily => d,
        f => Arc::new(d.resample(f)),
    })
}

/// Validates `params` for `mode` and checks them against the data: the
/// symbol exists (404), the template's range holds enough bars that move, a
/// universe names known symbols.
pub async fn prepare(market: &dyn MarketData, params: &CpmParams, mode: Mode) -> Result<Prepared> {
    let query = params.validate(mode)?;
    let series = series(market, &query.symbol, query.freq).await?;
    let template_bars = match query.template {
        TemplateSpec::Range { start, end } => {
            let a = series.time.partition_point(|t| t.date() < start);
            let b = series.time.partition_point(|t| t.date() <= end);
            let bars = b.saturating_sub(a);
            let freq = query.freq.as_str();
            if bars < MIN_TEMPLATE_BARS {
                return Err(Error::invalid(
                    "start_date",
                    format!(
                        "the template from {start} to {end} holds {bars} {freq} bars of {}; at least {MIN_TEMPLATE_BARS} are needed",
                        query.symbol
                    ),
                ));
            }
            if bars > MAX_TEMPLATE_BARS {
                return Err(Error::invalid(
                    "start_date",
                    format!(
                        "the template from {start} to {end} holds {bars} {freq} bars; at most {MAX_TEMPLATE_BARS} are searched"
                    ),
                ));
            }
            if Template::new(&series.close[a..b]).is_none() {
                return Err(Error::invalid(
                    "start_date",
                    format!(
                        "the closes of {} from {start} to {end} do not move, so nothing can correlate with them",
                        query.symbol
                    ),
                ));
            }
            Some((a, b - 1))
        }
        TemplateSpec::Pattern(_) => None,
    };
    let lookback_start = match query.lookback_years {
        None => None,
        Some(years) => {
            let latest = market.latest_date().await?;
            Some(
                latest
                    .checked_sub_months(Months::new(12 * years))
                    .unwrap_or(NaiveDate::MIN),
            )
        }
    };
    let universe = match &query.universe {
        None => Vec::new(),
        Some(spec) => universe_symbols(market, spec).await?,
    };
    Ok(Prepared {
        query,
        series,
        template_bars,
        lookback_start,
        universe,
    })
}

async fn universe_symbols(market: &dyn MarketData, spec: &UniverseSpec) -> Result<Vec<String>> {
    let catalog = market.symbols().await?;
    match spec {
        UniverseSpec::Named(name) => {
            let found: Vec<String> = catalog
                .iter()
                .filter(|s| s.universes.iter().any(|u| u == name))
                .map(|s| s.symbol.clone())
                .collect();
            if found.is_empty() {
                return Err(Error::invalid(
                    "universe",
                    format!("'{name}' has no symbols in the market data"),
                ));
            }
            Ok(found)
        }
        UniverseSpec::Tickers(tickers) => {
            for t in tickers {
                if !catalog.iter().any(|s| &s.symbol == t) {
                    return Err(Error::invalid(
                        "universe",
                        format!("ticker '{t}' is not in the market data"),
                    ));
                }
            }
            Ok(tickers.clone())
        }
    }
}

/// The answer of a scan or a backtest.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Answer {
    Scan(ScanAnswer),
    Backtest(BacktestAnswer),
}

impl Answer {
    pub fn code(&self) -> u16 {
        match self {
            Answer::Scan(a) => a.code,
            Answer::Backtest(a) => a.code,
        }
    }
}

/// What a search looks for in one series, shared by every symbol.
struct Search {
    /// One template per window length.
    templates: Vec<Template>,
    min_corr: f64,
    ma: Option<(usize, u8)>,
    lookback_start: Option<NaiveDate>,
}

impl Search {
    fn new(p: &Prepared) -> Search {
        let q = &p.query;
        let templates = match (q.template.clone(), p.template_bars) {
            (TemplateSpec::Pattern(shape), _) => cpm::window_lengths(q.freq)
                .iter()
                .filter_map(|m| Template::new(&shape.template(*m)))
                .collect(),
            (_, Some((a, b))) => Template::new(&p.series.close[a..=b]).into_iter().collect(),
            (TemplateSpec::Range { .. }, None) => Vec::new(),
        };
        Search {
            templates,
            min_corr: q.min_corr,
            ma: q.ma,
            lookback_start: p.lookback_start,
        }
    }

    /// Every matching window of `bars`, not yet selected; `exclude` is the
    /// template's own range when `bars` holds it.
    fn windows(&self, bars: &Bars, exclude: Option<(usize, usize)>) -> Vec<Match> {
        let criteria = Criteria {
            min_corr: self.min_corr,
            first_bar: self
                .lookback_start
                .map_or(0, |d| bars.time.partition_point(|t| t.date() < d)),
            exclude,
            end_ok: self
                .ma
                .and_then(|(period, c)| cpm::ma_filter(&bars.close, period, c)),
        };
        self.templates
            .iter()
            .flat_map(|t| cpm::windows(t, &bars.close, &criteria))
            .collect()
    }
}

fn date(bars: &Bars, i: usize) -> String {
    bars.date(i).format("%Y-%m-%d").to_string()
}

fn pattern(bars: &Bars, w: &Match, symbol: Option<&str>) -> PatternMatch {
    PatternMatch {
        Symbol: symbol.map(str::to_string),
        StartDate: date(bars, w.start),
        EndDate: date(bars, w.end),
        Corr: w.corr,
        Close: bars.close[w.end],
        BarsNum: w.bars(),
    }
}

fn none_found(q: &CpmQuery) -> String {
    format!(
        "No matching patterns found: no window of {} reached a correlation of {}",
        q.universe
            .as_ref()
            .map_or(q.symbol.as_str(), |_| "the universe"),
        q.min_corr
    )
}

/// Answers a prepared request. Universe searches report `progress` as they
/// go through the symbols.
pub async fn run(market: &dyn MarketData, p: Prepared, progress: &Progress) -> Result<Answer> {
    if p.is_universe_search() {
        return universe_scan(market, p, progress).await;
    }
    let labels = match p.query.mode {
        Mode::Backtest => Some(market_labels(market).await?),
        Mode::Scan => None,
    };
    tokio::task::spawn_blocking(move || {
        let found = cpm::select(
            Search::new(&p).windows(&p.series, p.template_bars),
            p.query.exclude_overlap,
        );
        match labels {
            Some(labels) => Answer::Backtest(backtest_answer(&p, &found, &labels)),
            None => Answer::Scan(scan_answer(
                &p.query,
                found.iter().map(|w| pattern(&p.series, w, None)).collect(),
            )),
        }
    })
    .await
    .map_err(|e| Error::Port(PortError::fault("pattern search failed", e)))
}

/// The matches found, best first, or 407 without any.
fn scan_answer(q: &CpmQuery, patterns: Vec<PatternMatch>) -> ScanAnswer {
    if patterns.is_empty() {
        return ScanAnswer {
            code: NO_MATCHES,
            msg: none_found(q),
            data: None,
        };
    }
    ScanAnswer {
        code: 200,
        msg: SCAN_MESSAGE.into(),
        data: Some(ScanData {
            count: patterns.len(),
            patterns,
            warnings: q.warnings.clone(),
        }),
    }
}

/// The matches of the symbol's own series and the trades after them.
fn backtest_answer(p: &Prepared, found: &[Match], labels: &MarketLabels) -> BacktestAnswer {
    let q = &p.query;
    let bars = p.series.as_ref();
    if found.is_empty() {
        return BacktestAnswer {
            code: NO_MATCHES,
            msg: none_found(q),
            data: None,
        };
    }
    let first_bar = p
        .lookback_start
        .map_or(0, |d| bars.time.partition_point(|t| t.date() < d));
    let mut trades: Vec<cpm::Trade> = found
        .iter()
        .filter_map(|w| cpm::trade(&bars.close, w, q.hold, q.short))
        .collect();
    trades.sort_by_key(|t| (t.entry, t.found.start));
    let s = cpm::summary(&trades, &bars.close, first_bar);
    let trades = trades
        .iter()
        .map(|t| TradeItem {
            StartDate: date(bars, t.found.start),
            EndDate: date(bars, t.entry),
            correlation_percentage: (t.found.corr * 1e4).round() / 1e4,
            Close: bars.close[t.entry],
            BarsNum: t.found.bars(),
            EachReturn: t.ret,
            ExitDate: date(bars, t.exit),
            ExitPrice: bars.close[t.exit],
            MaxGain: t.max_gain,
            MaxLoss: t.max_loss,
            MarketCondition: labels.labels(bars.date(t.entry)),
        })
        .collect();
    BacktestAnswer {
        code: 200,
        msg: BACKTEST_MESSAGE.into(),
        data: Some(BacktestData {
            count: found.len(),
            patterns: found.iter().map(|w| pattern(bars, w, None)).collect(),
            backtest_info: BacktestInfo {
                stats: TradeStats::new(s.total_return, &s.returns),
                buy_and_hold: s.buy_and_hold,
                time_in_market: s.time_in_market,
                trades,
            },
            warnings: q.warnings.clone(),
        }),
    }
}

/// The benchmark's trend and the recession months, for trade labels; either
/// missing from the store leaves its labels out.
async fn market_labels(market: &dyn MarketData) -> Result<MarketLabels> {
    let bench = match market.daily(BENCHMARK).await {
        Ok(b) => Some(b),
        Err(PortError::NotFound(_)) => None,
        Err(e) => return Err(e.into()),
    };
    let recessions = match market.table(RECESSIONS_TABLE).await {
        Ok(t) => codec::date_values(&t, "peak")?
            .into_iter()
            .zip(codec::date_values(&t, "trough")?)
            .collect(),
        Err(PortError::NotFound(_)) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let (dates, closes): (Vec<NaiveDate>, Vec<f64>) = match &bench {
        Some(b) => ((0..b.len()).map(|i| b.date(i)).collect(), b.close.clone()),
        None => (Vec::new(), Vec::new()),
    };
    Ok(MarketLabels::new(&dates, &closes, &recessions))
}

/// The template searched across the universe's symbols, best matches first
/// across symbols, at most `max_matches`.
async fn universe_scan(
    market: &dyn MarketData,
    p: Prepared,
    progress: &Progress,
) -> Result<Answer> {
    let p = Arc::new(p);
    let search = Arc::new(Search::new(&p));
    let total = p.universe.len();
    let mut found: Vec<(Match, String, Arc<Bars>)> = Vec::new();
    for (k, chunk) in p.universe.chunks(CHUNK).enumerate() {
        // Read together: the store decodes on the blocking pool, every core at once.
        let freq = p.query.freq;
        let reads = chunk
            .iter()
            .map(|symbol| async move { (symbol, series(market, symbol, freq).await) });
        let mut loaded = Vec::with_capacity(chunk.len());
        for (symbol, read) in futures::future::join_all(reads).await {
            match read {
                Ok(bars) => loaded.push((symbol.clone(), bars)),
                // A catalog symbol without prices is skipped, not fatal.
                Err(Error::Unknown(_)) => {}
                Err(e) => return Err(e),
            }
        }
        let (p2, s2) = (p.clone(), search.clone());
        let hits = tokio::task::spawn_blocking(move || search_symbols(&p2, &s2, loaded))
            .await
            .map_err(|e| Error::Port(PortError::fault("universe search failed", e)))?;
        found.extend(hits);
        // Keep only what can still make the cut.
        if found.len() > 4 * p.query.max_matches {
            keep_best(&mut found, p.query.max_matches);
        }
        progress.steps((k * CHUNK + chunk.len()).min(total), total);
    }
    keep_best(&mut found, p.query.max_matches);
    let patterns = found
        .iter()
        .map(|(w, symbol, bars)| pattern(bars, w, Some(symbol)))
        .collect();
    Ok(Answer::Scan(scan_answer(&p.query, patterns)))
}

/// Best first across symbols (ties: symbol, then the earlier window).
fn keep_best(found: &mut Vec<(Match, String, Arc<Bars>)>, n: usize) {
    found.sort_by(|(a, sa, _), (b, sb, _)| {
        b.corr
            .total_cmp(&a.corr)
            .then(sa.cmp(sb))
            .then(a.start.cmp(&b.start))
    });
    found.truncate(n);
}

/// Each symbol's selected matches, the symbols shared among the cores.
fn search_symbols(
    p: &Prepared,
    search: &Search,
    loaded: Vec<(String, Arc<Bars>)>,
) -> Vec<(Match, String, Arc<Bars>)> {
    let one = |(symbol, bars): &(String, Arc<Bars>)| {
        let exclude = if *symbol == p.query.symbol {
            p.template_bars
        } else {
            None
        };
        cpm::select(search.windows(bars, exclude), p.query.exclude_overlap)
            .into_iter()
            .map(|w| (w, symbol.clone(), bars.clone()))
            .collect::<Vec<_>>()
    };
    crate::analytics::on_cores(&loaded, one)
        .into_iter()
        .flatten()
        .collect()
}

/// Runs the pattern-match tasks of one mode: the stored parameters are
/// checked again (the data may have changed since the submit), then answered.
pub struct CpmJob {
    pub market: Arc<dyn MarketData>,
    pub mode: Mode,
}

#[async_trait]
impl JobHandler for CpmJob {
    fn reserved(&self, task: &Task) -> platform::metering::Reserved {
        crate::compute::reserved(task.kind, &task.params, task.created_at.date())
    }

    async fn run(&self, task: Task, progress: Progress) -> Result<Value, JobError> {
        let params: CpmParams = serde_json::from_value(task.params.clone())
            .map_err(|e| JobError::Permanent(format!("invalid parameters: {e}")))?;
        let prepared = prepare(self.market.as_ref(), &params, self.mode).await?;
        let answer = run(self.market.as_ref(), prepared, &progress).await?;
        serde_json::to_value(answer)
            .map_err(|e| JobError::Permanent(format!("result not serializable: {e}")))
    }
}
