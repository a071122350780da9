//! Walk-forward analysis as a batch mode (`engine::backtest::walk_forward`):
//! each chunk ranks its strategies on every in-sample window and runs its
//! best out of sample on its worker; the first reader after the last chunk
//! keeps, per window, the best of the chunks' bests (the grid's best) and
//! chains their out-of-sample runs.

use crate::{Error, Result};
use engine::backtest::Metrics;
use engine::backtest::walk_forward::{self as wf, Layout, Pick, Step, Window};
use platform::PortError;
use platform::returns::ReturnStore;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// Windows a walk-forward may have: each runs every strategy once.
pub const MAX_WINDOWS: usize = 1_000;
/// Longest window, in bars (about 400 years of sessions).
const MAX_LENGTH: usize = 100_000;

/// The metric each in-sample window's best is picked by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum WalkMetric {
    #[default]
    Sharpe,
    Sortino,
    TotalReturn,
    Cagr,
    Calmar,
}

impl WalkMetric {
    /// What a score of the runs' metrics (percent for returns) is in the
    /// glossary's units (fractions): the factor a window's `score` takes.
    fn glossary_scale(self) -> f64 {
        match self {
            WalkMetric::TotalReturn | WalkMetric::Cagr => 0.01,
            WalkMetric::Sharpe | WalkMetric::Sortino | WalkMetric::Calmar => 1.0,
        }
    }

    fn pick(self) -> Pick {
        match self {
            WalkMetric::Sharpe => Pick::Sharpe,
            WalkMetric::Sortino => Pick::Sortino,
            WalkMetric::TotalReturn => Pick::TotalReturn,
            WalkMetric::Cagr => Pick::Cagr,
            WalkMetric::Calmar => Pick::Calmar,
        }
    }
}

/// A batch's walk-forward: window lengths in bars (sessions, for daily
/// bars), rolling or anchored, and the metric to pick by.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
pub struct WalkForwardParams {
    /// Bars of each in-sample window (the first starts at `start_date`).
    #[serde(deserialize_with = "crate::error::whole_number")]
    #[cfg_attr(feature = "openapi", schema(minimum = 2, maximum = 100000))]
    pub in_sample: usize,
    /// Bars of each out-of-sample window; they follow each other to the
    /// last bar (the last may be shorter).
    #[serde(deserialize_with = "crate::error::whole_number")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 100000))]
    pub out_of_sample: usize,
    /// In-sample windows all start at `start_date` (growing) instead of
    /// rolling forward.
    #[serde(default)]
    pub anchored: bool,
    /// What the in-sample best is the highest of.
    #[serde(default)]
    pub metric: WalkMetric,
}

impl WalkForwardParams {
    pub fn check(&self) -> Result<()> {
        if !(2..=MAX_LENGTH).contains(&self.in_sample) {
            return Err(Error::invalid(
                "walk_forward.in_sample",
                format!("must be 2 to {MAX_LENGTH} bars, got {}", self.in_sample),
            ));
        }
        if !(1..=MAX_LENGTH).contains(&self.out_of_sample) {
            return Err(Error::invalid(
                "walk_forward.out_of_sample",
                format!("must be 1 to {MAX_LENGTH} bars, got {}", self.out_of_sample),
            ));
        }
        Ok(())
    }

    /// A batch request's walk-forward (checked at its submit), if it has one.
    pub fn of_request(request: &Value) -> Option<Self> {
        request
            .get("walk_forward")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    }

    fn layout(&self) -> Layout {
        Layout {
            in_sample: self.in_sample,
            out_of_sample: self.out_of_sample,
            anchored: self.anchored,
        }
    }
}

/// A run's metrics as a chunk keeps them (all of `engine::backtest::Metrics`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct KeptMetrics {
    trades: usize,
    positive: usize,
    negative: usize,
    win_rate: f64,
    average_win: f64,
    average_loss: f64,
    total_return: f64,
    buy_hold: f64,
    cagr: f64,
    sharpe: f64,
    sortino: f64,
    annual_volatility: f64,
    calmar: f64,
    max_drawdown: f64,
    drawdown_period: usize,
    time_in_market: f64,
}

impl From<&Metrics> for KeptMetrics {
    fn from(m: &Metrics) -> Self {
        KeptMetrics {
            trades: m.total_trades,
            positive: m.positive,
            negative: m.negative,
            win_rate: m.win_rate,
            average_win: m.average_win,
            average_loss: m.average_loss,
            total_return: m.total_return,
            buy_hold: m.buy_hold,
            cagr: m.cagr,
            sharpe: m.sharpe,
            sortino: m.sortino,
            annual_volatility: m.annual_volatility,
            calmar: m.calmar,
            max_drawdown: m.max_drawdown,
            drawdown_period: m.drawdown_period,
            time_in_market: m.time_in_market,
        }
    }
}

impl From<&KeptMetrics> for Metrics {
    fn from(m: &KeptMetrics) -> Self {
        Metrics {
            total_trades: m.trades,
            positive: m.positive,
            negative: m.negative,
            win_rate: m.win_rate,
            average_win: m.average_win,
            average_loss: m.average_loss,
            total_return: m.total_return,
            buy_hold: m.buy_hold,
            cagr: m.cagr,
            sharpe: m.sharpe,
            sortino: m.sortino,
            annual_volatility: m.annual_volatility,
            calmar: m.calmar,
            max_drawdown: m.max_drawdown,
            drawdown_period: m.drawdown_period,
            time_in_market: m.time_in_market,
        }
    }
}

/// A window's pick in a chunk: its batch index, score and runs, and its
/// out-of-sample equity from 1.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct KeptStep {
    in_sample: [usize; 2],
    out_of_sample: [usize; 2],
    best: Option<usize>,
    score: Option<f64>,
    in_run: Option<KeptMetrics>,
    out_run: Option<KeptMetrics>,
    efficiency: Option<f64>,
    equity: Vec<f64>,
}

/// What a chunk keeps for the walk-forward: its picks, the bar times the
/// windows cover (from the first in-sample bar), or why it has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ChunkWalk {
    first_bar: usize,
    times: Vec<i64>,
    bars_per_year: f64,
    steps: Vec<KeptStep>,
    note: Option<String>,
}

impl ChunkWalk {
    pub(super) fn noted(why: impl Into<String>) -> Self {
        ChunkWalk {
            note: Some(why.into()),
            ..ChunkWalk::default()
        }
    }
}

/// A strategy of a chunk as the walk-forward takes it.
pub struct Ran<'a> {
    pub index: usize,
    pub bars: &'a engine::Bars,
    pub entry: &'a engine::fired::Fired,
    pub exit: &'a engine::fired::Fired,
    pub settings: &'a engine::backtest::Settings,
}

/// The chunk's picks over its strategies (those that ran, in batch order).
pub fn chunk_walk(ran: &[Ran], params: &WalkForwardParams) -> ChunkWalk {
    let Some(first) = ran.first() else {
        return ChunkWalk::noted("no strategy of the chunk ran");
    };
    let same =
        |r: &Ran| std::ptr::eq(r.bars, first.bars) && r.settings.start == first.settings.start;
    if let Some(other) = ran.iter().find(|r| !same(r)) {
        return ChunkWalk::noted(format!(
            "strategies {} and {} run on different bars or dates; a walk-forward needs one symbol, frequency and window for all",
            first.index, other.index
        ));
    }
    let (bars, start) = (first.bars, first.settings.start);
    let windows = wf::windows(start, bars.len(), params.layout());
    if windows.is_empty() {
        return ChunkWalk::noted(format!(
            "{} bars from the start date leave no out-of-sample bar after {} in-sample ones",
            bars.len().saturating_sub(start),
            params.in_sample
        ));
    }
    if windows.len() > MAX_WINDOWS {
        return ChunkWalk::noted(format!(
            "{} windows; at most {MAX_WINDOWS} (lengthen out_of_sample)",
            windows.len()
        ));
    }
    let candidates: Vec<wf::Candidate> = ran
        .iter()
        .map(|r| wf::Candidate {
            entry: r.entry,
            exit: r.exit,
            settings: r.settings,
        })
        .collect();
    let steps = wf::steps(bars, &candidates, &windows, params.metric.pick(), 1);
    ChunkWalk {
        first_bar: start,
        times: bars.time[start..]
            .iter()
            .map(|t| t.and_utc().timestamp())
            .collect(),
        bars_per_year: first.settings.bars_per_year,
        steps: steps
            .into_iter()
            .map(|(s, equity)| KeptStep {
                in_sample: [s.window.in_sample.start, s.window.in_sample.end],
                out_of_sample: [s.window.out_of_sample.start, s.window.out_of_sample.end],
                best: s.best.map(|k| ran[k].index),
                score: s.best.map(|_| s.score),
                in_run: s.in_sample.as_ref().map(KeptMetrics::from),
                out_run: s.out_of_sample.as_ref().map(KeptMetrics::from),
                efficiency: s.efficiency,
                equity,
            })
            .collect(),
        note: None,
    }
}

/// A portfolio's run as the walk-forward counts it: its figures
/// (fractions) as a backtest's metrics (percent, but for the annual
/// volatility: a fraction there too), `buy_hold` the benchmark's change.
pub fn portfolio_metrics(
    m: &engine::portfolio::metrics::Metrics,
    benchmark_return: f64,
) -> Metrics {
    let pct = |x: f64| x * 100.0;
    Metrics {
        total_trades: m.total_trades,
        positive: m.winning_trades,
        negative: m.losing_trades,
        win_rate: pct(m.win_rate),
        average_win: pct(m.average_win),
        average_loss: pct(m.average_loss),
        total_return: pct(m.total_return),
        buy_hold: pct(benchmark_return),
        cagr: pct(m.cagr),
        sharpe: m.sharpe,
        sortino: m.sortino,
        annual_volatility: m.annual_volatility,
        calmar: m.calmar,
        max_drawdown: pct(m.max_drawdown),
        drawdown_period: m.drawdown_period,
        time_in_market: pct(m.time_in_market),
    }
}

/// A window of a grid of portfolios as a chunk ran it: the in-sample
/// best (its batch index, score and metrics) and the best's out-of-sample
/// metrics and equity from 1 (a run of its own over those sessions).
pub struct PortfolioStep {
    pub window: Window,
    pub best: Option<(usize, f64, Metrics)>,
    pub out: Option<(Metrics, Vec<f64>)>,
}

impl WalkForwardParams {
    /// The windows over `n` sessions from the start, or why there are none
    /// to run.
    pub fn windows(&self, n: usize) -> std::result::Result<Vec<Window>, String> {
        let windows = wf::windows(0, n, self.layout());
        if windows.is_empty() {
            return Err(format!(
                "{n} sessions from the start date leave no out-of-sample session after {} in-sample ones",
                self.in_sample
            ));
        }
        if windows.len() > MAX_WINDOWS {
            return Err(format!(
                "{} windows; at most {MAX_WINDOWS} (lengthen out_of_sample)",
                windows.len()
            ));
        }
        Ok(windows)
    }

    /// The score a window's best is the highest of.
    pub fn score(&self, m: &Metrics) -> f64 {
        self.metric.pick().score(m)
    }
}

/// A chunk's walk-forward over portfolios: `times` are the sessions from
/// the window's start (the steps' bar indices count from it).
pub fn portfolio_walk(times: Vec<i64>, bars_per_year: f64, steps: Vec<PortfolioStep>) -> ChunkWalk {
    ChunkWalk {
        first_bar: 0,
        times,
        bars_per_year,
        steps: steps
            .into_iter()
            .map(|s| {
                let (in_run, out_run) = (s.best.as_ref().map(|b| &b.2), s.out.as_ref());
                let efficiency = match (in_run, out_run) {
                    (Some(i), Some((o, _))) if i.cagr > 0.0 => Some(o.cagr / i.cagr),
                    _ => None,
                };
                KeptStep {
                    in_sample: [s.window.in_sample.start, s.window.in_sample.end],
                    out_of_sample: [s.window.out_of_sample.start, s.window.out_of_sample.end],
                    best: s.best.as_ref().map(|b| b.0),
                    score: s.best.as_ref().map(|b| b.1),
                    in_run: in_run.map(KeptMetrics::from),
                    out_run: out_run.map(|(m, _)| KeptMetrics::from(m)),
                    efficiency,
                    equity: match s.out {
                        Some((_, equity)) => equity,
                        None => vec![1.0; s.window.out_of_sample.len()],
                    },
                }
            })
            .collect(),
        note: None,
    }
}

/// A window of the answer: its dates, its pick and the pick's runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct WalkForwardWindow {
    /// First and last bar of each window (a date, or a time for intraday bars).
    pub in_sample_start: String,
    pub in_sample_end: String,
    pub out_of_sample_start: String,
    pub out_of_sample_end: String,
    /// The in-sample best's row (`null` when no strategy scored a number),
    /// its grid values and its score (the metric it was picked by, in the
    /// glossary's units: a return as a fraction).
    pub best_index: Option<usize>,
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub params: Map<String, Value>,
    pub score: Option<f64>,
    /// The pick in sample and out of sample: return, CAGR and max
    /// drawdown as fractions (0.05 is 5 %).
    pub in_sample_return: Option<f64>,
    pub in_sample_cagr: Option<f64>,
    pub in_sample_sharpe: Option<f64>,
    pub out_of_sample_return: Option<f64>,
    pub out_of_sample_cagr: Option<f64>,
    pub out_of_sample_sharpe: Option<f64>,
    pub out_of_sample_max_drawdown: Option<f64>,
    pub out_of_sample_trades: Option<usize>,
    /// Out-of-sample CAGR over in-sample CAGR (`null` when the latter is
    /// not positive).
    pub efficiency: Option<f64>,
}

/// A bar of the stitched out-of-sample equity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct EquityPoint {
    pub time: String,
    pub equity: f64,
}

/// The batch's walk-forward: each window's pick run out of sample, chained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct WalkForwardResult {
    pub settings: WalkForwardParams,
    pub windows: Vec<WalkForwardWindow>,
    /// Equity on every out-of-sample bar, from 1 (each window's run starts
    /// flat with the last one's equity).
    pub equity: Vec<EquityPoint>,
    /// The stitched run: return, CAGR and max drawdown as fractions (the
    /// Sharpe ratio annualised).
    pub total_return: f64,
    pub cagr: f64,
    pub sharpe: f64,
    pub max_drawdown: f64,
    /// Walk-forward efficiency: the stitched CAGR over the mean in-sample
    /// CAGR of the picks (`null` when that mean is not positive).
    pub efficiency: Option<f64>,
    /// Windows whose pick made money out of sample, of those with a pick.
    pub profitable_windows: usize,
    pub windows_with_pick: usize,
    /// Why there is no analysis, or what limits it.
    pub notes: Vec<String>,
}

/// The object a chunk's walk-forward is kept under.
fn part(first: usize) -> String {
    format!("walk-forward-{first:06}.json")
}

/// v2: returns in fractions (v1 kept them in percent; read again).
const NOTE: &str = "walk-forward-v2.json";

/// Keeps a chunk's picks beside its returns.
pub async fn keep(
    store: &ReturnStore,
    batch: &str,
    first: usize,
    w: &ChunkWalk,
) -> Result<(), PortError> {
    let json = serde_json::to_vec(w).map_err(PortError::internal)?;
    store.put_note(batch, &part(first), json.into()).await
}

fn moment(t: i64) -> String {
    super::statistics::moment_of_time(t).unwrap_or_default()
}

/// The batch's walk-forward: kept, or merged from its chunks' picks and kept.
/// `varied` gives a row's grid values.
pub async fn of(
    store: &ReturnStore,
    batch: &str,
    layout: super::Layout,
    params: &WalkForwardParams,
    varied: impl Fn(usize) -> Map<String, Value>,
) -> Result<WalkForwardResult, PortError> {
    if let Some(kept) = store.note(batch, NOTE).await?
        && let Ok(r) = serde_json::from_slice::<WalkForwardResult>(&kept)
    {
        return Ok(r);
    }
    let mut parts = Vec::new();
    let mut notes = Vec::new();
    for first in layout.firsts() {
        let Some(data) = store.note(batch, &part(first)).await? else {
            continue;
        };
        let Ok(w) = serde_json::from_slice::<ChunkWalk>(&data) else {
            // Not kept: a repaired part shows at the next read.
            let mut r = merged(Vec::new(), Vec::new(), params, &varied)?;
            r.notes = vec![format!(
                "the walk-forward of strategies from {first} could not be read"
            )];
            return Ok(r);
        };
        match &w.note {
            Some(n) if !notes.contains(n) => notes.push(n.clone()),
            _ => {}
        }
        if !w.steps.is_empty() {
            parts.push(w);
        }
    }
    let r = merged(parts, notes, params, &varied)?;
    let json = serde_json::to_vec(&r).map_err(PortError::internal)?;
    store.put_note(batch, NOTE, json.into()).await?;
    Ok(r)
}

fn merged(
    parts: Vec<ChunkWalk>,
    mut notes: Vec<String>,
    params: &WalkForwardParams,
    varied: &impl Fn(usize) -> Map<String, Value>,
) -> Result<WalkForwardResult, PortError> {
    let mut r = WalkForwardResult {
        settings: *params,
        windows: Vec::new(),
        equity: Vec::new(),
        total_return: 0.0,
        cagr: 0.0,
        sharpe: 0.0,
        max_drawdown: 0.0,
        efficiency: None,
        profitable_windows: 0,
        windows_with_pick: 0,
        notes: Vec::new(),
    };
    let Some(head) = parts.first() else {
        if notes.is_empty() {
            notes.push("no strategy ran".into());
        }
        r.notes = notes;
        return Ok(r);
    };
    let same_windows = |w: &ChunkWalk| {
        w.first_bar == head.first_bar
            && w.times == head.times
            && w.steps.len() == head.steps.len()
            && w.steps
                .iter()
                .zip(&head.steps)
                .all(|(a, b)| (a.in_sample, a.out_of_sample) == (b.in_sample, b.out_of_sample))
    };
    if !parts.iter().all(same_windows) {
        notes.push("the batch's chunks ran on different bars or dates; a walk-forward needs one symbol, frequency and window for all".into());
        r.notes = notes;
        return Ok(r);
    }
    let (first_bar, times, per_year) = (head.first_bar, head.times.clone(), head.bars_per_year);
    let steps = |w: ChunkWalk| -> Vec<wf::Walked> {
        w.steps
            .into_iter()
            .map(|s| {
                let step = Step {
                    window: Window {
                        in_sample: s.in_sample[0]..s.in_sample[1],
                        out_of_sample: s.out_of_sample[0]..s.out_of_sample[1],
                    },
                    best: s.best,
                    score: s.score.unwrap_or(f64::NAN),
                    in_sample: s.in_run.as_ref().map(Metrics::from),
                    out_of_sample: s.out_run.as_ref().map(Metrics::from),
                    efficiency: s.efficiency,
                };
                (step, s.equity)
            })
            .collect()
    };
    // Picks carry batch indices already: every part at offset 0.
    let done = wf::merge(parts.into_iter().map(|p| (0, steps(p))).collect());
    let at = |i: usize| times[i - first_bar];
    let day = |i: usize| {
        chrono::DateTime::from_timestamp(at(i), 0)
            .map_or(chrono::NaiveDate::MIN, |t| t.date_naive())
    };
    let walk = wf::stitch(done, per_year, day);
    // The runs' metrics are the backtest's, in percent.
    let fraction = |x: f64| x / 100.0;
    r.windows = walk
        .steps
        .iter()
        .map(|s| {
            let (i, o) = (&s.window.in_sample, &s.window.out_of_sample);
            let (is, os) = (s.in_sample.as_ref(), s.out_of_sample.as_ref());
            WalkForwardWindow {
                in_sample_start: moment(at(i.start)),
                in_sample_end: moment(at(i.end - 1)),
                out_of_sample_start: moment(at(o.start)),
                out_of_sample_end: moment(at(o.end - 1)),
                best_index: s.best,
                params: s.best.map(varied).unwrap_or_default(),
                score: s.best.map(|_| s.score * params.metric.glossary_scale()),
                in_sample_return: is.map(|m| fraction(m.total_return)),
                in_sample_cagr: is.map(|m| fraction(m.cagr)),
                in_sample_sharpe: is.map(|m| m.sharpe),
                out_of_sample_return: os.map(|m| fraction(m.total_return)),
                out_of_sample_cagr: os.map(|m| fraction(m.cagr)),
                out_of_sample_sharpe: os.map(|m| m.sharpe),
                out_of_sample_max_drawdown: os.map(|m| fraction(m.max_drawdown)),
                out_of_sample_trades: os.map(|m| m.total_trades),
                efficiency: s.efficiency,
            }
        })
        .collect();
    r.equity = walk
        .bars
        .iter()
        .zip(&walk.equity)
        .map(|(&i, &e)| EquityPoint {
            time: moment(at(i)),
            equity: e,
        })
        .collect();
    let sm = walk.summary;
    (r.total_return, r.cagr, r.sharpe, r.max_drawdown) =
        (sm.total_return, sm.cagr, sm.sharpe, sm.max_drawdown);
    r.efficiency = sm.efficiency;
    r.profitable_windows = sm.profitable;
    r.windows_with_pick = sm.picked;
    r.notes = notes;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_lengths_are_bounded_and_named() {
        let p = |i, o| WalkForwardParams {
            in_sample: i,
            out_of_sample: o,
            anchored: false,
            metric: WalkMetric::Sharpe,
        };
        assert!(
            p(1, 5)
                .check()
                .unwrap_err()
                .to_string()
                .contains("walk_forward.in_sample")
        );
        assert!(
            p(5, 0)
                .check()
                .unwrap_err()
                .to_string()
                .contains("walk_forward.out_of_sample")
        );
        assert!(p(100_001, 5).check().is_err());
        assert!(p(2, 1).check().is_ok());
        let read: WalkForwardParams = serde_json::from_value(
            serde_json::json!({"in_sample": 250, "out_of_sample": 21, "metric": "total_return"}),
        )
        .unwrap();
        assert_eq!(
            (read.anchored, read.metric),
            (false, WalkMetric::TotalReturn)
        );
        assert!(
            serde_json::from_value::<WalkForwardParams>(
                serde_json::json!({"in_sample": 250, "out_of_sample": 21, "metric": "luck"})
            )
            .is_err()
        );
    }
}
