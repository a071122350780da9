//! Portfolio backtests (`POST /backtest/portfolio`): a universe traded from
//! one pool of cash by signals or by target weights (docs/portfolios.md).
//!
//! [`prepare`] reads and checks a request against the data (each symbol
//! known, a window with sessions, a schedule that fires); the job then
//! evaluates the strategy once per symbol, runs the engine's simulator on
//! the universe's calendar and answers [`answers::PortfolioResult`].

pub mod answers;
pub mod chart;
pub mod compute;
mod handed;
pub mod own;
mod placement;
pub mod request;
pub mod stored;
pub mod tables;

use crate::backtest::prepare::{self as single, Block};
use crate::backtest::run::{Inputs, rule_blocks};
use crate::error::{Error, FieldError, Result};
use answers::PortfolioResult;
use async_trait::async_trait;
use chrono::NaiveDate;
use engine::Bars;
use engine::portfolio::schedule;
use platform::PortError;
use platform::marketdata::MarketData;
use platform::tasks::Task;
use platform::worker::{JobError, JobHandler, Progress};
use request::{PortfolioParams, ScoreParams, SelectParams, SizingParams, WeightingParams};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// A request read and checked against the data.
pub struct Prepared {
    pub params: PortfolioParams,
    pub defaults: Map<String, Value>,
    /// Signal mode: the strategy, resolved as `start_backtest` resolves it.
    pub strategy: Option<(Block, Block, engine::backtest::RiskControl)>,
    /// Per universe symbol, its whole daily history.
    pub bars: Vec<Arc<Bars>>,
    pub benchmark: Arc<Bars>,
    /// The universe's sessions (any symbol's) from the lookback before the
    /// window to its end.
    pub calendar: Vec<NaiveDate>,
    /// The window's first bar in `calendar`.
    pub start: usize,
    /// Weight mode: the decision bars.
    pub rebalance: Vec<usize>,
    pub warnings: Vec<String>,
    /// What its bars and calendar were read for, and its signal strategy
    /// (empty in weight mode): equal keys, equal data and rules.
    pub data_key: String,
    pub rules_key: String,
}

fn not_found(field: String, what: &str) -> impl FnOnce(PortError) -> Error + '_ {
    move |e| match e {
        PortError::NotFound(_) => {
            FieldError::new(field, format!("'{what}' is not a known symbol")).into()
        }
        PortError::Invalid(m) => FieldError::new(field, m).into(),
        e => Error::Port(e),
    }
}

/// The sessions of any of `bars` up to `end`, ascending: the longest
/// history's dates, with another's merged in only where it has a date the
/// calendar lacks (one walk each; most symbols share their sessions).
pub fn union_calendar(bars: &[Arc<Bars>], end: NaiveDate) -> Vec<NaiveDate> {
    let dates = |b: &Bars| -> Vec<NaiveDate> {
        let n = b.time.partition_point(|t| t.date() <= end);
        (0..n).map(|i| b.date(i)).collect()
    };
    let Some(longest) = bars.iter().max_by_key(|b| b.len()) else {
        return Vec::new();
    };
    let mut cal = dates(longest);
    for b in bars {
        let n = b.time.partition_point(|t| t.date() <= end);
        let mut j = 0;
        let covered = (0..n).all(|i| {
            let d = b.date(i);
            while j < cal.len() && cal[j] < d {
                j += 1;
            }
            j < cal.len() && cal[j] == d
        });
        if !covered {
            cal.extend(dates(b));
            cal.sort_unstable();
            cal.dedup();
        }
    }
    cal
}

/// The longest lookback, in bars, a figure of the request reads before
/// the window's first bar.
pub(crate) fn lookback(p: &PortfolioParams) -> usize {
    let mut l = 0;
    if let Some(s) = &p.signals {
        if let Some(r) = &s.rank_by {
            l = l.max(r.by.lookback());
        }
        if let Some(
            SizingParams::InverseVolatility { bars } | SizingParams::VolatilityTarget { bars, .. },
        ) = &s.sizing
        {
            l = l.max(*bars);
        }
    }
    if let Some(w) = &p.weights {
        if let Some(SelectParams::Top { by, .. } | SelectParams::Bottom { by, .. }) = &w.select {
            l = l.max(by.lookback());
        }
        if let Some(WeightingParams::InverseVolatility { bars }) = &w.weighting {
            l = l.max(*bars);
        }
    }
    l
}

/// The strategy body `start_backtest` would take for the request's rules.
fn strategy_body(body: &Value, p: &PortfolioParams, benchmark: &str) -> Value {
    let s = &body["signals"];
    json!({
        "symbol": p.universe[0],
        "benchmark": benchmark,
        "entry": s["entry"],
        "exit": s["exit"],
        "risk_control": s.get("risk_control").cloned().unwrap_or(json!("//")),
    })
}

/// What the points of a grid share when they ask for the same (each read
/// once per chunk): the universe's bars and calendar, and the signal
/// strategy resolved.
#[derive(Default)]
pub struct Reuse {
    data: Option<(String, Arc<Data>)>,
    strategy: Option<(String, Resolved)>,
    /// Sessions kept before the window at least: a grid's longest lookback,
    /// so that its points share one calendar. Earlier sessions change no
    /// figure: every rolling figure reads its own window of bars.
    pub lookback: usize,
}

/// A universe's daily bars, its benchmark's and their sessions to `end`.
struct Data {
    bars: Vec<Arc<Bars>>,
    benchmark: Arc<Bars>,
    calendar: Vec<NaiveDate>,
}

/// A signal strategy resolved as `start_backtest` resolves it.
type Resolved = (Block, Block, engine::backtest::RiskControl, Vec<String>);

/// Reads `body` and checks it against the market data.
pub async fn prepare(market: &dyn MarketData, body: &Value) -> Result<Prepared> {
    prepare_with(market, body, &mut Reuse::default()).await
}

/// [`prepare`], taking what `reuse` holds when the request asks for the same.
pub async fn prepare_with(
    market: &dyn MarketData,
    body: &Value,
    reuse: &mut Reuse,
) -> Result<Prepared> {
    let params: PortfolioParams = crate::error::from_json(body.clone())?;
    let defaults = params.check()?;
    let traded = platform::marketdata::AsTraded(market);
    let market: &dyn MarketData = if params.adjusted.unwrap_or(true) {
        market
    } else {
        &traded
    };
    let benchmark_name = params.benchmark.clone().unwrap_or_else(|| "SPX".into());
    let latest = market.latest_date().await?;
    let end = params.end_date.unwrap_or(latest);
    let data_key =
        serde_json::to_string(&(&params.universe, &benchmark_name, end, params.adjusted))
            .map_err(PortError::internal)?;
    let data = match &reuse.data {
        Some((key, data)) if *key == data_key => data.clone(),
        _ => {
            let data = Arc::new(read(market, &params, &benchmark_name, end).await?);
            reuse.data = Some((data_key.clone(), data.clone()));
            data
        }
    };
    let mut calendar = data.calendar.clone();
    let first = params.start_date.or(calendar.first().copied());
    let mut start = first.map_or(0, |d| calendar.partition_point(|x| *x < d));
    if start >= calendar.len() {
        let from = first.map_or_else(String::new, |d| format!(" from {d}"));
        return Err(FieldError::new(
            "start_date",
            format!("the universe has no sessions{from} to {end}"),
        )
        .into());
    }
    // Keep only the bars the lookbacks read before the window.
    let cut = start.saturating_sub(lookback(&params).max(reuse.lookback) + 1);
    calendar.drain(..cut);
    start -= cut;
    let mut warnings = Vec::new();
    let window = (calendar[start], calendar[calendar.len() - 1]);
    let idle: Vec<&str> = params
        .universe
        .iter()
        .zip(&data.bars)
        .filter(|(_, b)| {
            let d = b.time.partition_point(|t| t.date() < window.0);
            d >= b.len() || b.date(d) > window.1
        })
        .map(|(s, _)| s.as_str())
        .collect();
    if !idle.is_empty() {
        warnings.push(format!(
            "{} of the universe have no bars between {} and {}: {}",
            idle.len(),
            window.0,
            window.1,
            idle.join(", ")
        ));
    }
    let rebalance = match &params.weights {
        Some(w) => {
            let every = match w.schedule.every {
                request::Every::Day => schedule::Every::Day,
                request::Every::Week => schedule::Every::Week,
                request::Every::Month => schedule::Every::Month,
                request::Every::Quarter => schedule::Every::Quarter,
            };
            let on = match w.schedule.on.unwrap_or(request::On::First) {
                request::On::First => schedule::On::First,
                request::On::Last => schedule::On::Last,
            };
            // The universe's session after the window: the window's last
            // one closes its period when the data goes on into another.
            let next = data
                .bars
                .iter()
                .filter_map(|b| {
                    let i = b.time.partition_point(|t| t.date() <= window.1);
                    (i < b.len()).then(|| b.date(i))
                })
                .min();
            let r = schedule::bars_followed_by(&calendar, start, every, on, next);
            if r.is_empty() {
                return Err(FieldError::new(
                    "weights.schedule",
                    format!("fires on no session between {} and {}", window.0, window.1),
                )
                .into());
            }
            let fill = params.trade_price.unwrap_or(request::Fill::CurrentClose);
            if fill != request::Fill::CurrentClose && r.last() == Some(&(calendar.len() - 1)) {
                let at = if fill == request::Fill::NextOpen {
                    "next_open"
                } else {
                    "next_close"
                };
                warnings.push(format!(
                    "weights.schedule: the rebalance decided on {}, the window's last session, \
                     would fill ({at}) after the window and is not traded",
                    window.1
                ));
            }
            r
        }
        None => Vec::new(),
    };
    let mut rules_key = String::new();
    let strategy = match &params.signals {
        Some(_) => {
            let sent = strategy_body(body, &params, &benchmark_name);
            rules_key = sent.to_string();
            let (entry, exit, risk, notes) = match &reuse.strategy {
                Some((key, resolved)) if *key == rules_key => resolved.clone(),
                _ => {
                    let s = single::prepare(market, &sent).await.map_err(|e| match e {
                        Error::Invalid(f) | Error::Unknown(f) => {
                            Error::Invalid(f.within("signals"))
                        }
                        e => e,
                    })?;
                    let notes: Vec<String> =
                        s.warnings.iter().map(|w| format!("signals.{w}")).collect();
                    let risk = s.params().risk;
                    let resolved = (s.entry, s.exit, risk, notes);
                    reuse.strategy = Some((rules_key.clone(), resolved.clone()));
                    resolved
                }
            };
            warnings.extend(notes);
            Some((entry, exit, risk))
        }
        None => None,
    };
    Ok(Prepared {
        params,
        defaults,
        strategy,
        bars: data.bars.clone(),
        benchmark: data.benchmark.clone(),
        calendar,
        start,
        rebalance,
        warnings,
        data_key,
        rules_key,
    })
}

/// The universe's and benchmark's bars, and the universe's sessions to `end`.
async fn read(
    market: &dyn MarketData,
    params: &PortfolioParams,
    benchmark_name: &str,
    end: NaiveDate,
) -> Result<Data> {
    let mut bars = Vec::with_capacity(params.universe.len());
    for (i, sym) in params.universe.iter().enumerate() {
        let b = market
            .daily(sym)
            .await
            .map_err(not_found(format!("universe[{i}]"), sym))?;
        bars.push(b);
    }
    let benchmark = market
        .daily(benchmark_name)
        .await
        .map_err(not_found("benchmark".into(), benchmark_name))?;
    let calendar = union_calendar(&bars, end);
    Ok(Data {
        bars,
        benchmark,
        calendar,
    })
}

/// Each symbol's entry and exit rules built on its own bars (signal mode;
/// none in weight mode), their readings loaded here.
pub async fn blocks(
    market: &dyn MarketData,
    p: &Prepared,
) -> Result<Vec<(engine::strategy::Block, engine::strategy::Block)>, PortError> {
    let mut blocks = Vec::new();
    if let Some((entry, exit, _)) = &p.strategy {
        let mut inputs = Inputs::default();
        for b in &p.bars {
            blocks.push(rule_blocks(market, entry, exit, b, &mut inputs).await?);
        }
    }
    Ok(blocks)
}

/// Runs a prepared portfolio: the strategy's rules built for each symbol
/// (their readings loaded here), the simulation off the reactor.
pub async fn execute(
    market: &dyn MarketData,
    p: impl Into<Arc<Prepared>>,
) -> Result<PortfolioResult, JobError> {
    let p: Arc<Prepared> = p.into();
    let blocks = blocks(market, &p).await?;
    tokio::task::spawn_blocking(move || compute::run(&p, &blocks))
        .await
        .map_err(|e| {
            JobError::Permanent(format!("internal error while running the portfolio: {e}"))
        })
}

/// Runs portfolio tasks.
pub struct PortfolioJob {
    pub market: Arc<dyn MarketData>,
    /// Own bars sent with a portfolio, stored once at submit.
    pub uploads: platform::uploads::Uploads,
}

#[async_trait]
impl JobHandler for PortfolioJob {
    fn reserved(&self, task: &Task) -> platform::metering::Reserved {
        crate::compute::reserved(task.kind, &task.params, task.created_at.date())
    }

    async fn run(&self, task: Task, _progress: Progress) -> std::result::Result<Value, JobError> {
        let id = task.id;
        if let Some(prepared) = handed::taken(self.market.memo(), &task.owner, &task.params) {
            let result = execute(self.market.as_ref(), prepared).await?;
            return stored::keep(self.uploads.blobs().as_ref(), &id, result)
                .await
                .map_err(JobError::from);
        }
        let mut params = task.params;
        let own = own::OwnBars::load(&self.uploads, &task.owner, &mut params)
            .await
            .map_err(JobError::from)?;
        let market = own::WithOwn {
            market: self.market.as_ref(),
            own: &own,
        };
        let prepared = prepare(&market, &params).await.map_err(JobError::from)?;
        let result = execute(&market, prepared).await?;
        stored::keep(self.uploads.blobs().as_ref(), &id, result)
            .await
            .map_err(JobError::from)
    }
}

/// The technical signal a figure names (None for momentum and
/// volatility, which are read from the panel); it is computed on each
/// symbol's own bars.
pub(crate) fn technical(score: &ScoreParams) -> Option<engine::strategy::Technical> {
    let ScoreParams::Technical(t) = score else {
        return None;
    };
    let entry = crate::backtest::signals::technical(&t.name)?;
    match t.period {
        Some(n) => entry.indicator.with_period(n),
        None => Some(entry.indicator),
    }
}
