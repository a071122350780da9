//! Monte Carlo of a backtest or of a batch row: the strategy is run again
//! (a few milliseconds, as for its chart), then its trades are bootstrapped
//! and its per-bar returns block-bootstrapped (`engine::backtest::monte_carlo`)
//! into percentile bands of CAGR, maximum drawdown (fractions, as the
//! glossary's) and final equity (money), and a fan of equity paths.
//! Seeded: the same query gives the same answer.

use super::chart::{run_again, stamp};
use super::params::{BtFrequency, StrategyParams};
use super::prepare::Prepared;
use super::run::Planned;
use crate::{FieldError, Result};
use engine::backtest::monte_carlo::{self as mc, Plan, Resampling};
use engine::backtest::{Report, bar_returns};
use platform::marketdata::MarketData;
use platform::pool::Stop;
use serde::{Deserialize, Serialize};
use serde_json::Value;
#[cfg(feature = "openapi")]
use utoipa::{IntoParams, ToSchema};

/// The percentiles every band is given at.
pub const PERCENTILES: [f64; 5] = [5.0, 25.0, 50.0, 75.0, 95.0];
pub const DEFAULT_DRAWS: usize = 1_000;
pub const MAX_DRAWS: usize = 10_000;
/// Draws times steps per method: what one answer may cost (about a second
/// of one core at the most).
pub const MAX_WORK: usize = 100_000_000;
/// Points of a fan chart at most.
pub const FAN_POINTS: usize = 250;

/// Query of `GET /backtest/monte-carlo/{task_id}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(IntoParams), into_params(parameter_in = Query))]
pub struct MonteCarloQuery {
    /// Paths per method (default 1,000, at most 10,000).
    #[cfg_attr(
        feature = "openapi",
        param(minimum = 1, maximum = 10000, example = 1000)
    )]
    pub draws: Option<i64>,
    /// The draws' seed (default 0): the same seed, the same answer.
    #[cfg_attr(
        feature = "openapi",
        param(minimum = 0, maximum = 4294967295_i64, example = 7)
    )]
    pub seed: Option<i64>,
    /// Bars per block of the returns' block bootstrap (default: the cube
    /// root of the number of returns, rounded; longer than the run: the run).
    #[cfg_attr(
        feature = "openapi",
        param(minimum = 1, maximum = 100000, example = 20)
    )]
    pub block: Option<i64>,
}

/// Checked settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub draws: usize,
    pub seed: u64,
    pub block: Option<usize>,
}

fn within(v: i64, field: &str, min: i64, max: i64) -> Result<i64, FieldError> {
    if (min..=max).contains(&v) {
        Ok(v)
    } else {
        Err(FieldError::new(
            field,
            format!("must be between {min} and {max}, got {v}"),
        ))
    }
}

impl MonteCarloQuery {
    pub fn check(&self) -> Result<Settings, FieldError> {
        let draws = within(
            self.draws.unwrap_or(DEFAULT_DRAWS as i64),
            "draws",
            1,
            MAX_DRAWS as i64,
        )?;
        let seed = within(self.seed.unwrap_or(0), "seed", 0, u32::MAX as i64)?;
        let block = self
            .block
            .map(|b| within(b, "block", 1, 100_000))
            .transpose()?;
        Ok(Settings {
            draws: draws as usize,
            seed: seed as u64,
            block: block.map(|b| b as usize),
        })
    }
}

/// The run's own figures, in the bands' units.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct MonteCarloFigures {
    /// A fraction a year (0.05 = 5 %), over calendar years (the backtest's
    /// `CAGR` over 100).
    pub cagr: f64,
    /// A fraction, 0 or negative (the backtest's `Max Drawdown` over 100).
    pub max_drawdown: f64,
    /// Capital at the end (the initial capital grown).
    pub final_equity: f64,
}

/// Equity paths' percentiles along the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct MonteCarloFan {
    /// Steps of the paths: trades taken (trade bootstrap) or bars after
    /// the window's first (block bootstrap); at most 250, evenly spread.
    pub step: Vec<usize>,
    /// The bar's time at each step (block bootstrap; empty for trades).
    pub time: Vec<String>,
    /// Per percentile (in `percentiles`' order), the capital at each step.
    pub equity: Vec<Vec<f64>>,
}

/// One method's bands: each list has a value per percentile.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct MonteCarloBands {
    /// Steps of a path: the run's trades or its bar returns.
    pub steps: usize,
    /// The paths' CAGR, fractions a year over the run's calendar years.
    pub cagr: Vec<f64>,
    /// The paths' maximum drawdown, fractions, 0 or negative.
    pub max_drawdown: Vec<f64>,
    /// The paths' final equity, in capital.
    pub final_equity: Vec<f64>,
    /// Share of paths ending below the initial capital (0 to 1).
    pub probability_of_loss: f64,
    pub fan: MonteCarloFan,
}

/// `GET /backtest/monte-carlo/{task_id}` and the batch rows' equivalent.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct MonteCarlo {
    pub draws: usize,
    pub seed: u64,
    /// Bars per block of the returns' bootstrap (as used).
    pub block: usize,
    /// The percentiles of every band, 0 to 100.
    pub percentiles: Vec<f64>,
    pub actual: MonteCarloFigures,
    /// The trades drawn with replacement, as many as the run had, each
    /// compounding its return on the allocated capital. Null with fewer
    /// than 2 trades (see `notes`).
    pub trades: Option<MonteCarloBands>,
    /// The per-bar returns drawn in circular blocks, as many as the run
    /// had. Null with fewer than 2 returns or an equity that reached 0.
    pub returns: Option<MonteCarloBands>,
    pub notes: Vec<String>,
}

/// A run, loaded: what its Monte Carlo draws from. Loading reads the
/// market data (async); [`Loaded::monte_carlo`] is the CPU work, for the
/// compute pool.
pub struct Loaded {
    run: Run,
}

// One per request, never in a collection: its size is not worth a box.
#[allow(clippy::large_enum_variant)]
enum Run {
    Strategy {
        prepared: Prepared,
        planned: Planned,
    },
    /// A batch row of a grid of portfolios.
    Portfolio {
        prepared: super::portfolio::Prepared,
        blocks: Vec<(engine::strategy::Block, engine::strategy::Block)>,
    },
}

/// The strategy in `params` (a task's parameters or a batch row's
/// strategy), on `upload` in CSV mode, loaded.
pub async fn load(
    market: &dyn MarketData,
    params: &Value,
    upload: Option<std::sync::Arc<super::csv::Upload>>,
) -> Result<Loaded> {
    let (prepared, planned) = super::chart::load(market, params, upload).await?;
    Ok(Loaded {
        run: Run::Strategy { prepared, planned },
    })
}

/// Row `row` of a batch (its record), loaded: the row's strategy or
/// portfolio as the batch ran it.
pub async fn load_batch_row(
    market: &dyn MarketData,
    record: &platform::tasks::Task,
    row: i64,
) -> Result<Loaded> {
    let p: super::batch::BatchParams =
        serde_json::from_value(record.params.clone()).map_err(platform::PortError::internal)?;
    let expanded = super::batch::expand(&p.request, usize::MAX)?;
    let k = within(row, "row", 0, i64::MAX)? as usize;
    if k >= expanded.len() {
        return Err(crate::Error::NotFound(format!(
            "row {k}: the batch has {} rows (0 to {})",
            expanded.len(),
            expanded.len() - 1
        )));
    }
    let strategy = expanded
        .strategy(k)
        .map_err(|e| FieldError::new("row", e.to_string()))?;
    if expanded.portfolio {
        let prepared = super::portfolio::prepare(market, &strategy).await?;
        let blocks = super::portfolio::blocks(market, &prepared).await?;
        return Ok(Loaded {
            run: Run::Portfolio { prepared, blocks },
        });
    }
    load(market, &strategy, None).await
}

impl Loaded {
    /// The run again, and its Monte Carlo; `None` when `stop` was set
    /// (its client has gone) before the draws were done.
    pub fn monte_carlo(&self, settings: Settings, stop: &Stop) -> Result<Option<MonteCarlo>> {
        Ok(match &self.run {
            Run::Strategy { prepared, planned } => {
                let r = run_again(planned);
                strategy_draws(prepared.params(), planned, &r, settings, stop)?
            }
            Run::Portfolio { prepared, blocks } => {
                portfolio_draws(prepared, blocks, settings, stop)?
            }
        })
    }
}

/// What a Monte Carlo draws from: the trades' growth factors (none for a
/// portfolio), the per-bar returns and the run's own figures.
struct Drawn<'a> {
    trades: Option<Vec<f64>>,
    returns: Vec<f64>,
    years: f64,
    capital: f64,
    /// The bar time of step `k` of the returns.
    time: &'a dyn Fn(usize) -> String,
    actual: MonteCarloFigures,
    notes: Vec<String>,
}

fn strategy_draws(
    p: &StrategyParams,
    planned: &Planned,
    r: &Report,
    settings: Settings,
    stop: &Stop,
) -> Result<Option<MonteCarlo>, FieldError> {
    let bars = &planned.bars;
    let s = &planned.settings;
    let start = s.start.min(bars.len());
    let years = if bars.len() > start {
        (bars.date(bars.len() - 1) - bars.date(start)).num_days() as f64 / 365.25
    } else {
        0.0
    };
    let trades: Vec<f64> = r
        .trades
        .iter()
        .map(|t| 1.0 + s.capital_alloc * t.ret)
        .collect();
    let mut returns = Vec::new();
    bar_returns(bars, &r.trades, s, &mut returns);
    let intraday = p.frequency == BtFrequency::Hourly;
    let time = |k: usize| stamp(bars.time[start + k], intraday);
    let m = &r.metrics;
    draw(
        Drawn {
            trades: Some(trades),
            returns,
            years,
            capital: p.capital,
            time: &time,
            // The backtest's metrics are 2.11's percent; the answer's
            // figures fractions, as the bands the engine draws.
            actual: MonteCarloFigures {
                cagr: m.cagr / 100.0,
                max_drawdown: m.max_drawdown / 100.0,
                final_equity: p.capital * (1.0 + m.total_return / 100.0),
            },
            notes: Vec::new(),
        },
        settings,
        stop,
    )
}

/// A portfolio's Monte Carlo: its session returns block-bootstrapped. Its
/// trades overlap in time and share one account, so they are not drawn
/// as a sequence.
fn portfolio_draws(
    p: &super::portfolio::Prepared,
    blocks: &[(engine::strategy::Block, engine::strategy::Block)],
    settings: Settings,
    stop: &Stop,
) -> Result<Option<MonteCarlo>, FieldError> {
    use super::portfolio::compute::{self, Firing, Laid};
    let laid = Laid::new(p);
    let firing = p.strategy.as_ref().map(|_| Firing::new(p, &laid, blocks));
    let out = compute::simulate(p, &laid, firing.as_ref(), false);
    let (m, _, returns) = compute::figures(p, &out);
    let window = &p.calendar[p.start..];
    let years = match (window.first(), window.last()) {
        (Some(a), Some(b)) => (*b - *a).num_days() as f64 / 365.25,
        _ => 0.0,
    };
    let capital = p.params.capital.unwrap_or(100_000.0);
    let time = |k: usize| window[k].to_string();
    draw(
        Drawn {
            trades: None,
            returns,
            years,
            capital,
            time: &time,
            // The portfolio's figures are fractions, as the answer's.
            actual: MonteCarloFigures {
                cagr: m.cagr,
                max_drawdown: m.max_drawdown,
                final_equity: capital * (1.0 + m.total_return),
            },
            notes: vec![
                "a portfolio's trades overlap and share one account: only its session returns are drawn".into(),
            ],
        },
        settings,
        stop,
    )
}

fn draw(d: Drawn, settings: Settings, stop: &Stop) -> Result<Option<MonteCarlo>, FieldError> {
    let Drawn {
        trades,
        returns,
        years,
        capital,
        time,
        actual,
        mut notes,
    } = d;
    let steps = trades
        .as_ref()
        .map_or(0, Vec::len)
        .max(returns.len())
        .max(1);
    if settings.draws.saturating_mul(steps) > MAX_WORK {
        return Err(FieldError::new(
            "draws",
            format!(
                "{} draws of this run's {steps} steps pass the {MAX_WORK} allowed: ask for at most {}",
                settings.draws,
                MAX_WORK / steps
            ),
        ));
    }
    let default_block = ((returns.len() as f64).cbrt().round() as usize).max(1);
    let mut block = settings.block.unwrap_or(default_block);
    if block > returns.len() && !returns.is_empty() {
        notes.push(format!(
            "block {block} is longer than the run's {} returns: one block of all of them",
            returns.len()
        ));
        block = returns.len();
    }
    let go_on = || !stop.stopped();
    let run = |growth: &[f64],
               how: Resampling,
               time: Option<&dyn Fn(usize) -> String>|
     -> Option<MonteCarloBands> {
        let plan = Plan {
            how,
            draws: settings.draws,
            seed: settings.seed,
            years,
            max_points: FAN_POINTS,
        };
        let sim = mc::simulate(growth, &plan, &go_on)?;
        let b = mc::bands(&sim, &PERCENTILES);
        let losses = sim.outcomes.iter().filter(|o| o.final_equity < 1.0).count();
        Some(MonteCarloBands {
            steps: growth.len(),
            cagr: b.cagr,
            max_drawdown: b.max_drawdown,
            final_equity: b.final_equity.iter().map(|v| v * capital).collect(),
            probability_of_loss: losses as f64 / settings.draws as f64,
            fan: MonteCarloFan {
                time: time
                    .map(|f| sim.points.iter().map(|k| f(*k)).collect())
                    .unwrap_or_default(),
                step: sim.points,
                equity: b
                    .fan
                    .iter()
                    .map(|band| band.iter().map(|v| v * capital).collect())
                    .collect(),
            },
        })
    };
    let trades = match trades {
        None => None,
        Some(trades) if trades.len() >= 2 => {
            let Some(bands) = run(&trades, Resampling::Independent, None) else {
                return Ok(None);
            };
            Some(bands)
        }
        Some(trades) => {
            notes.push(format!(
                "{} trade(s): the trade bootstrap needs at least 2",
                trades.len()
            ));
            None
        }
    };
    let returns = if returns.len() < 2 {
        notes.push("fewer than 2 bar returns: no block bootstrap".into());
        None
    } else if returns.iter().any(|r| !r.is_finite()) {
        notes.push("the equity reached 0: its returns cannot be drawn again".into());
        None
    } else {
        let growth: Vec<f64> = returns.iter().map(|r| 1.0 + r).collect();
        let Some(bands) = run(&growth, Resampling::Blocks(block), Some(time)) else {
            return Ok(None);
        };
        Some(bands)
    };
    Ok(Some(MonteCarlo {
        draws: settings.draws,
        seed: settings.seed,
        block,
        percentiles: PERCENTILES.to_vec(),
        actual,
        trades,
        returns,
        notes,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_checked_by_field() {
        let ok = MonteCarloQuery::default().check().unwrap();
        assert_eq!((ok.draws, ok.seed, ok.block), (1_000, 0, None));
        for (q, field) in [
            (
                MonteCarloQuery {
                    draws: Some(0),
                    ..Default::default()
                },
                "draws",
            ),
            (
                MonteCarloQuery {
                    draws: Some(10_001),
                    ..Default::default()
                },
                "draws",
            ),
            (
                MonteCarloQuery {
                    seed: Some(-1),
                    ..Default::default()
                },
                "seed",
            ),
            (
                MonteCarloQuery {
                    block: Some(0),
                    ..Default::default()
                },
                "block",
            ),
        ] {
            assert_eq!(q.check().unwrap_err().field, field);
        }
    }
}
