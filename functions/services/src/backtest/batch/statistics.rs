//! How much of a batch's best row is selection: the Deflated Sharpe Ratio
//! and the Probability of Backtest Overfitting (`engine::overfitting`),
//! from the returns its chunks kept (`platform::returns`). Computed once,
//! by the first reader after the last chunk, and kept with the batch.

use super::Layout;
use crate::{Error, Result};
use engine::overfitting::{self, BlockSums, Moments, block_layout};
use futures::{FutureExt, StreamExt};
use platform::PortError;
use platform::returns::{ChunkReturns, Reduced, ReturnStore};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// The caller's settings for a batch's statistics.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
pub struct StatisticsParams {
    /// S, the blocks CSCV splits the returns into: even, 2 to 16 (16
    /// gives 12,870 splits).
    #[serde(default = "default_blocks", deserialize_with = "whole")]
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 2, maximum = 16, multiple_of = 2, default = 16)
    )]
    pub blocks: usize,
    /// N of the expected maximum Sharpe ratio: an effective number of
    /// independent trials (default: the strategies that ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 2, maximum = 1e12))]
    pub trials: Option<f64>,
}

pub(super) fn default_blocks() -> usize {
    16
}

/// A count written as any JSON number with no fraction (`4` or `4.0`).
fn whole<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<usize, D::Error> {
    let v = f64::deserialize(d)?;
    if v.fract() == 0.0 && (0.0..=1e6).contains(&v) {
        Ok(v as usize)
    } else {
        Err(serde::de::Error::custom(format!(
            "must be a whole number from 2 to 16, got {v}"
        )))
    }
}

impl Default for StatisticsParams {
    fn default() -> Self {
        StatisticsParams {
            blocks: default_blocks(),
            trials: None,
        }
    }
}

/// A batch request's `statistics`: settings (`true` or absent: the
/// defaults), or `false` for none, which also keeps no returns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(untagged)]
pub enum StatisticsSetting {
    /// `true` for the defaults, `false` for no statistics.
    Switch(bool),
    Settings(StatisticsParams),
}

impl<'de> Deserialize<'de> for StatisticsSetting {
    /// By hand, so that a mistake in the settings keeps serde's message
    /// (an unknown field, a wrong type) instead of "no variant matched".
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Bool(on) => Ok(StatisticsSetting::Switch(on)),
            other => serde_json::from_value(other)
                .map(StatisticsSetting::Settings)
                .map_err(serde::de::Error::custom),
        }
    }
}

impl StatisticsSetting {
    /// The settings, `None` when switched off.
    pub fn settings(self) -> Option<StatisticsParams> {
        match self {
            StatisticsSetting::Switch(false) => None,
            StatisticsSetting::Switch(true) => Some(StatisticsParams::default()),
            StatisticsSetting::Settings(p) => Some(p),
        }
    }
}

impl StatisticsParams {
    /// A batch request's settings (checked at its submit), the defaults
    /// when it gave none, `None` when it switched them off.
    pub fn of_request(request: &serde_json::Value) -> Option<Self> {
        match request.get("statistics") {
            None | Some(serde_json::Value::Null) => Some(StatisticsParams::default()),
            Some(v) => serde_json::from_value::<StatisticsSetting>(v.clone()).map_or(
                Some(StatisticsParams::default()),
                StatisticsSetting::settings,
            ),
        }
    }

    pub fn check(&self) -> Result<()> {
        if self.blocks < 2 || self.blocks > 16 || self.blocks % 2 == 1 {
            return Err(Error::invalid(
                "statistics.blocks",
                format!("must be an even number from 2 to 16, got {}", self.blocks),
            ));
        }
        if let Some(t) = self.trials
            && !(2.0..=1e12).contains(&t)
        {
            return Err(Error::invalid(
                "statistics.trials",
                format!("must be a number from 2 to 1e12, got {t}"),
            ));
        }
        Ok(())
    }
}

/// Whether the best row is luck: statistics over the bars every strategy
/// that ran has a return on (docs/backtest.md#overfitting).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct BatchStatistics {
    /// Strategies counted: those that ran.
    pub strategies: usize,
    /// Returns per strategy in the sample.
    pub observations: usize,
    /// The sample's first and last return's bar (a date, or a time for intraday bars).
    pub first: Option<String>,
    pub last: Option<String>,
    /// Bars per year, which annualises the per-bar Sharpe ratios.
    pub periods_per_year: f64,
    pub deflated_sharpe: Option<DeflatedSharpe>,
    pub overfitting: Option<Overfitting>,
    /// Why a statistic is missing, when one is.
    pub notes: Vec<String>,
}

/// The Deflated Sharpe Ratio of the best row (Bailey and López de Prado, 2014).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct DeflatedSharpe {
    /// The row with the highest Sharpe ratio over the sample.
    pub best_index: usize,
    /// Its Sharpe ratio per bar, and annualised.
    pub sharpe: f64,
    pub sharpe_annualized: f64,
    /// Its returns' skewness and kurtosis (3 for a normal).
    pub skewness: f64,
    pub kurtosis: f64,
    /// N: the strategies that ran, or the caller's effective number.
    pub trials: f64,
    /// The sample variance of the trials' per-bar Sharpe ratios.
    pub sharpe_variance: f64,
    /// The Sharpe ratio the best of N skill-less trials would show, per bar and annualised.
    pub expected_max_sharpe: f64,
    pub expected_max_sharpe_annualized: f64,
    /// The probability that the best's true Sharpe ratio exceeds 0.
    pub probabilistic_sharpe_ratio: Option<f64>,
    /// The probability that it exceeds the expected maximum: above 0.95,
    /// the best row is unlikely to be selection alone.
    pub deflated_sharpe_ratio: Option<f64>,
}

/// The Probability of Backtest Overfitting by combinatorially symmetric
/// cross-validation (Bailey, Borwein, López de Prado and Zhu, 2015).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Overfitting {
    /// The share of splits in which the in-sample best ranks in the lower
    /// half out of sample (logit <= 0).
    pub pbo: f64,
    /// S, the returns of each block, and the splits scored.
    pub blocks: usize,
    pub block_length: usize,
    pub splits: usize,
    /// Every split there is (S choose S/2). More than `splits` when the
    /// batch's strategies times its splits would pass
    /// [`CSCV_BUDGET`] (20,000 strategies with every split of 16 blocks):
    /// then a sample of splits is scored, each with its complement, drawn
    /// by a fixed seed (a million strategies: 256 of 12,870).
    pub splits_total: usize,
    /// The oldest returns left out so the blocks are equal.
    pub skipped: usize,
    /// Out-of-sample Sharpe ratio of the in-sample best regressed on its
    /// in-sample one over the splits (per bar): a negative slope is
    /// performance that degrades out of sample.
    pub degradation_slope: f64,
    pub degradation_intercept: f64,
    pub degradation_r_squared: f64,
    /// The share of splits whose in-sample best loses out of sample.
    pub probability_of_loss: f64,
    /// The mean logit of the out-of-sample relative rank.
    pub mean_logit: f64,
    /// The logits' distribution: half-unit bins from -4 to 4, the outer
    /// ones open.
    pub logit_histogram: Vec<LogitBin>,
}

/// A bin of the logit histogram; `null` bounds are open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct LogitBin {
    pub from: Option<f64>,
    pub to: Option<f64>,
    pub count: usize,
}

fn histogram(logits: &[f64]) -> Vec<LogitBin> {
    let edges: Vec<f64> = (-8..=8).map(|k| k as f64 / 2.0).collect();
    let mut bins: Vec<LogitBin> = (0..=edges.len())
        .map(|k| LogitBin {
            from: k.checked_sub(1).map(|k| edges[k]),
            to: edges.get(k).copied(),
            count: 0,
        })
        .collect();
    for &l in logits {
        bins[edges.partition_point(|&e| e <= l)].count += 1;
    }
    bins
}

pub(super) fn moment_of_time(t: i64) -> Option<String> {
    let at = chrono::DateTime::from_timestamp(t, 0)?.naive_utc();
    Some(if at.time() == chrono::NaiveTime::MIN {
        at.format("%Y-%m-%d").to_string()
    } else {
        at.format("%Y-%m-%dT%H:%M:%S").to_string()
    })
}

/// The chunk's returns on the bars all its strategies share: `series` is
/// (batch index, bar times, returns) per strategy that ran. With `blocks`
/// (S, not 0) they are also reduced over those bars, which is all the
/// statistics read when every chunk of the batch shares them.
pub fn chunk_returns(
    series: Vec<(u32, Arc<Vec<i64>>, Vec<f64>)>,
    periods_per_year: f64,
    blocks: usize,
) -> ChunkReturns {
    let mut common: Option<Arc<Vec<i64>>> = None;
    for (_, times, _) in &series {
        common = Some(match common {
            None => times.clone(),
            Some(c) if Arc::ptr_eq(&c, times) || c == *times => c,
            Some(c) => Arc::new(intersect(&c, times)),
        });
    }
    let common = common.unwrap_or_default();
    let mut values = Vec::with_capacity(series.len() * common.len());
    let mut indices = Vec::with_capacity(series.len());
    for (index, own, returns) in series {
        indices.push(index);
        if Arc::ptr_eq(&own, &common) {
            values.extend_from_slice(&returns);
        } else {
            gather(&own, &returns, &common, &mut values);
        }
    }
    let mut r = ChunkReturns {
        indices,
        times: common.to_vec(),
        values,
        periods_per_year,
        reduced: None,
    };
    let t = r.times.len();
    if blocks > 0 && t >= 2 * blocks {
        let (skip, mut reduced) = reduction(r.indices.len(), t, blocks);
        for k in 0..r.indices.len() {
            reduce(&mut reduced, k, skip, r.series(k));
        }
        r.reduced = Some(reduced);
    }
    r
}

/// An empty reduction of `strategies` over `observations` returns in
/// `blocks` blocks, and the oldest returns its blocks leave out.
pub(super) fn reduction(strategies: usize, observations: usize, blocks: usize) -> (usize, Reduced) {
    let (skip, len) = block_layout(observations, blocks);
    let r = Reduced {
        moments: Vec::with_capacity(strategies),
        sums: BlockSums::new(strategies, blocks, len),
    };
    (skip, r)
}

/// Strategy `k`'s sample into the reduction: on a chunk's worker and,
/// when chunks' bars differ, on the batch's shared ones, the same way.
fn reduce(r: &mut Reduced, k: usize, skip: usize, sample: &[f64]) {
    r.moments.push(Moments::of(sample));
    r.sums.set(k, &sample[skip..]);
}

/// Sorted times in both.
fn intersect(a: &[i64], b: &[i64]) -> Vec<i64> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// Appends the values of `own` times that are in `wanted` (a subset, sorted).
fn gather(own: &[i64], values: &[f64], wanted: &[i64], out: &mut Vec<f64>) {
    if own == wanted {
        out.extend_from_slice(values);
        return;
    }
    let mut j = 0;
    for (t, v) in own.iter().zip(values) {
        if j < wanted.len() && *t == wanted[j] {
            out.push(*v);
            j += 1;
        }
    }
}

/// The note the statistics are kept under.
const NOTE: &str = "statistics-v2.json";

/// The batch's statistics: kept ones, or computed from its chunks' returns
/// and kept. `None` for a batch of one strategy.
pub async fn of(
    store: &ReturnStore,
    batch: &str,
    layout: Layout,
    params: &StatisticsParams,
) -> std::result::Result<Option<BatchStatistics>, PortError> {
    if layout.total < 2 {
        return Ok(None);
    }
    let kept = || async {
        Ok::<_, PortError>(
            store
                .note(batch, NOTE)
                .await?
                .and_then(|kept| serde_json::from_slice::<BatchStatistics>(&kept).ok()),
        )
    };
    if let Some(s) = kept().await? {
        return Ok(Some(s));
    }
    // One computation per batch in this process: readers polling a batch
    // that has just finished wait for it and read what it kept.
    let flight = {
        let mut running = IN_FLIGHT.lock();
        running.entry(batch.to_string()).or_default().clone()
    };
    let _turn = flight.lock().await;
    let answer = match kept().await? {
        Some(s) => Ok(Some(s)),
        None => compute_and_keep(store, batch, layout, params).await,
    };
    let mut running = IN_FLIGHT.lock();
    if Arc::strong_count(&flight) <= 2 {
        running.remove(batch);
    }
    answer
}

/// Batches whose statistics are being computed here, each with its turn.
static IN_FLIGHT: std::sync::LazyLock<
    parking_lot::Mutex<std::collections::HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
> = std::sync::LazyLock::new(Default::default);

async fn compute_and_keep(
    store: &ReturnStore,
    batch: &str,
    layout: Layout,
    params: &StatisticsParams,
) -> std::result::Result<Option<BatchStatistics>, PortError> {
    let s = match compute(store, batch, layout, params).await {
        Ok(s) => s,
        // Damaged returns leave the rows readable: the statistics say why
        // they are missing (and are not kept, so a repair shows).
        Err(e @ PortError::Internal { .. }) => {
            tracing::error!(batch, error = %platform::error::chain(&e), "batch statistics");
            return Ok(Some(BatchStatistics {
                strategies: 0,
                observations: 0,
                first: None,
                last: None,
                periods_per_year: 252.0,
                deflated_sharpe: None,
                overfitting: None,
                notes: vec![format!("the batch's kept returns could not be read: {e}")],
            }));
        }
        Err(e) => return Err(e),
    };
    let json = serde_json::to_vec(&s).map_err(PortError::internal)?;
    store.put_note(batch, NOTE, json.into()).await?;
    Ok(Some(s))
}

/// Chunks read at once: bounded memory, overlapped reads.
const READ_AHEAD: usize = 4;

/// Strategies times splits CSCV scores at most (each is a score in and
/// out of sample): every split of 16 blocks for 20,000 strategies.
pub const CSCV_BUDGET: usize = 20_000 * 12_870;

/// The splits a sampled CSCV scores at least.
const MIN_SPLITS: usize = 64;

/// The most splits CSCV scores for `strategies`.
fn max_splits(strategies: usize) -> usize {
    (CSCV_BUDGET / strategies.max(1)).max(MIN_SPLITS)
}

/// Two passes over the chunks: their bar times, to find the sample every
/// strategy shares; then their returns, one chunk at a time, reduced to
/// moments and block sums.
pub async fn compute(
    store: &ReturnStore,
    batch: &str,
    layout: Layout,
    params: &StatisticsParams,
) -> std::result::Result<BatchStatistics, PortError> {
    let firsts: Vec<usize> = layout.firsts().collect();
    // Streams of owned futures: borrowing ones are not `Send` for every lifetime.
    let (own_store, own_batch) = (store.clone(), batch.to_string());
    let mut heads = futures::stream::iter(firsts.clone().into_iter().map(move |f| {
        let (store, batch) = (own_store.clone(), own_batch.clone());
        async move { store.head(&batch, f).await }.boxed()
    }))
    .buffered(READ_AHEAD);
    let mut present = Vec::new();
    let mut common: Option<Vec<i64>> = None;
    let mut strategies = 0;
    // Whether every chunk has the same bars and kept their reduction in S blocks.
    let mut shared = true;
    let mut k = 0;
    while let Some(head) = heads.next().await {
        if let Some(head) = head? {
            present.push(firsts[k]);
            strategies += head.strategies;
            shared &= head.blocks == params.blocks;
            common = Some(match common {
                None => head.times,
                Some(c) if c == head.times => c,
                Some(c) => {
                    shared = false;
                    intersect(&c, &head.times)
                }
            });
        }
        k += 1;
    }
    drop(heads);
    let common = Arc::new(common.unwrap_or_default());
    let mut s = BatchStatistics {
        strategies,
        observations: common.len(),
        first: common.first().and_then(|&t| moment_of_time(t)),
        last: common.last().and_then(|&t| moment_of_time(t)),
        periods_per_year: 252.0,
        deflated_sharpe: None,
        overfitting: None,
        notes: Vec::new(),
    };
    if strategies < 2 {
        s.notes.push(format!(
            "{strategies} strategies ran; the statistics compare two or more"
        ));
        return Ok(s);
    }
    if common.len() < 2 * params.blocks {
        s.notes.push(format!(
            "the strategies share {} returns; {} blocks need at least {}",
            common.len(),
            params.blocks,
            2 * params.blocks
        ));
        return Ok(s);
    }
    let (skip, len) = block_layout(common.len(), params.blocks);
    let blocks = params.blocks;
    // Each chunk's reduction: as its worker kept it when every chunk shares
    // its bars, or else its returns read and reduced on the bars all share,
    // on a blocking thread; a few chunks at once.
    let (own_store, own_batch, own_common) = (store.clone(), batch.to_string(), common.clone());
    let mut chunks = futures::stream::iter(present.into_iter().map(move |f| {
        let (store, batch, common) = (own_store.clone(), own_batch.clone(), own_common.clone());
        async move {
            if shared {
                return store.reduced(&batch, f).await;
            }
            let Some(chunk) = store.get(&batch, f).await? else {
                return Ok::<_, PortError>(None);
            };
            tokio::task::spawn_blocking(move || {
                let n = chunk.indices.len();
                let (_, mut reduced) = reduction(n, common.len(), blocks);
                let mut sample = Vec::with_capacity(common.len());
                for k in 0..n {
                    sample.clear();
                    gather(&chunk.times, chunk.series(k), &common, &mut sample);
                    reduce(&mut reduced, k, skip, &sample);
                }
                Some((chunk.indices, chunk.periods_per_year, reduced))
            })
            .await
            .map_err(PortError::internal)
        }
        .boxed()
    }))
    .buffered(READ_AHEAD);
    // Appended as they come, into one allocation (a million strategies'
    // block sums are 256 MB).
    let mut sums = BlockSums::new(0, blocks, len);
    sums.reserve(strategies);
    let mut indices = Vec::with_capacity(strategies);
    let mut moments = Vec::with_capacity(strategies);
    while let Some(reduced) = chunks.next().await {
        let Some((ix, ppy, part)) = reduced? else {
            continue;
        };
        if (part.sums.blocks, part.sums.len) != (blocks, len) || part.moments.len() != ix.len() {
            return Err(PortError::internal(format!(
                "batch returns object: a reduction of {} blocks of {}, the batch has {blocks} of {len}",
                part.sums.blocks, part.sums.len
            )));
        }
        s.periods_per_year = ppy;
        indices.extend(ix);
        moments.extend(part.moments);
        sums.append(&part.sums);
    }
    drop(chunks);
    let trials = params.trials;
    let threads = rayon::current_num_threads();
    let max_splits = max_splits(strategies);
    let (dsr, pbo) = tokio::task::spawn_blocking(move || {
        (
            overfitting::deflated(&moments, trials),
            overfitting::cscv_sampled(&sums, threads, max_splits),
        )
    })
    .await
    .map_err(PortError::internal)?;
    let annual = s.periods_per_year.sqrt();
    s.deflated_sharpe = dsr.map(|d| DeflatedSharpe {
        best_index: indices[d.best] as usize,
        sharpe: d.sharpe,
        sharpe_annualized: d.sharpe * annual,
        skewness: d.skew,
        kurtosis: d.kurtosis,
        trials: d.trials,
        sharpe_variance: d.sharpe_variance,
        expected_max_sharpe: d.expected_max_sharpe,
        expected_max_sharpe_annualized: d.expected_max_sharpe * annual,
        probabilistic_sharpe_ratio: d.psr,
        deflated_sharpe_ratio: d.dsr,
    });
    if s.deflated_sharpe
        .as_ref()
        .is_some_and(|d| d.deflated_sharpe_ratio.is_none())
    {
        s.notes.push(
            "the best row's skewness and kurtosis leave the Sharpe ratio's variance undefined"
                .into(),
        );
    }
    if let Some(p) = pbo.as_ref().filter(|p| p.logits.len() < p.splits_total) {
        s.notes.push(format!(
            "PBO from {} of the {} splits (each with its complement, a fixed draw): {} strategies are too many to score every split",
            p.logits.len(),
            p.splits_total,
            strategies
        ));
    }
    s.overfitting = pbo.map(|p| Overfitting {
        pbo: p.pbo,
        blocks: p.blocks,
        block_length: p.block_len,
        splits: p.logits.len(),
        splits_total: p.splits_total,
        skipped: skip,
        degradation_slope: p.degradation.slope,
        degradation_intercept: p.degradation.intercept,
        degradation_r_squared: p.degradation.r_squared,
        probability_of_loss: p.prob_loss,
        mean_logit: p.logits.iter().sum::<f64>() / p.logits.len() as f64,
        logit_histogram: histogram(&p.logits),
    });
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_keeps_the_bars_its_strategies_share() {
        let r = chunk_returns(
            vec![
                (3, Arc::new(vec![1, 2, 3, 4]), vec![0.1, 0.2, 0.3, 0.4]),
                (4, Arc::new(vec![2, 3, 4, 5]), vec![1.2, 1.3, 1.4, 1.5]),
            ],
            252.0,
            0,
        );
        assert_eq!(r.times, vec![2, 3, 4]);
        assert_eq!(r.indices, vec![3, 4]);
        assert_eq!(r.values, vec![0.2, 0.3, 0.4, 1.2, 1.3, 1.4]);
        assert_eq!(r.reduced, None);
    }

    #[test]
    fn a_chunk_reduces_its_shared_bars_when_they_fill_the_blocks() {
        let times = Arc::new((0..7).collect::<Vec<i64>>());
        let a = vec![0.1, -0.2, 0.3, 0.0, 0.5, -0.1, 0.2];
        let b = vec![0.0, 0.1, 0.1, -0.3, 0.2, 0.0, 0.4];
        let series = vec![(0, times.clone(), a.clone()), (1, times.clone(), b.clone())];
        let r = chunk_returns(series.clone(), 252.0, 2).reduced.unwrap();
        // 7 returns in 2 blocks of 3: the oldest is left out.
        assert_eq!((r.sums.blocks, r.sums.len), (2, 3));
        assert_eq!(r.moments, vec![Moments::of(&a), Moments::of(&b)]);
        let (sum, sumsq) = r.sums.row(1);
        assert!((sum[0] - (0.1 + 0.1 - 0.3)).abs() < 1e-15 && (sum[1] - 0.6).abs() < 1e-15);
        assert!((sumsq[1] - (0.04 + 0.16)).abs() < 1e-15);
        // Too few bars for the blocks: the returns alone.
        assert_eq!(chunk_returns(series, 252.0, 4).reduced, None);
    }

    #[test]
    fn a_plan_sized_batch_scores_every_split_and_a_million_a_sample() {
        let scored = |n: usize| overfitting::sampled_splits(16, max_splits(n)).len();
        assert_eq!(scored(20_000), 12_870);
        assert_eq!(scored(20_001), 12_868);
        assert_eq!(scored(1_000_000), 256);
        assert_eq!(scored(100_000_000), 64);
    }

    #[test]
    fn logits_fall_in_half_unit_bins_with_open_ends() {
        let h = histogram(&[-9.0, -4.0, -0.1, 0.0, 0.2, 4.0, 7.5]);
        assert_eq!(h.len(), 18);
        assert_eq!((h[0].from, h[0].to, h[0].count), (None, Some(-4.0), 1));
        assert_eq!(h[1].count, 1); // -4 in [-4, -3.5)
        assert_eq!(h[8].count, 1); // -0.1 in [-0.5, 0)
        assert_eq!(h[9].count, 2); // 0 and 0.2 in [0, 0.5)
        assert_eq!((h[17].from, h[17].to, h[17].count), (Some(4.0), None, 2));
        assert_eq!(h.iter().map(|b| b.count).sum::<usize>(), 7);
    }

    #[test]
    fn blocks_are_even_and_bounded_and_trials_at_least_two() {
        let bad = |b, t| {
            StatisticsParams {
                blocks: b,
                trials: t,
            }
            .check()
            .unwrap_err()
            .to_string()
        };
        assert!(bad(15, None).contains("statistics.blocks"));
        assert!(bad(18, None).contains("statistics.blocks"));
        assert!(bad(0, None).contains("statistics.blocks"));
        assert!(bad(16, Some(1.0)).contains("statistics.trials"));
        assert!(bad(16, Some(f64::INFINITY)).contains("statistics.trials"));
        assert!(
            StatisticsParams {
                blocks: 2,
                trials: Some(50.0)
            }
            .check()
            .is_ok()
        );
        // Counts as JSON numbers without a fraction.
        let read = |v: serde_json::Value| serde_json::from_value::<StatisticsParams>(v);
        assert_eq!(read(serde_json::json!({"blocks": 4.0})).unwrap().blocks, 4);
        assert!(read(serde_json::json!({"blocks": 4.5})).is_err());
        assert!(read(serde_json::json!({"blocks": -2})).is_err());
    }
}
