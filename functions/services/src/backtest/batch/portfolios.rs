//! A chunk of a grid of portfolios run into its rows: each point prepared
//! as `POST /backtest/portfolio` prepares it, and what points share read
//! or computed once per chunk (the universe's bars and sessions, the signal
//! strategy built and evaluated on each symbol, the bars laid on the
//! sessions). A point's row has the portfolio's metrics; its returns on
//! each session feed the batch's statistics as a strategy's do.

use super::strategies::{Keep, Ran};
use super::{BatchRow, Gather};
use crate::backtest::portfolio::compute::{self, Firing, Laid};
use crate::backtest::portfolio::{self, Prepared, Reuse};
use platform::PortError;
use platform::marketdata::MarketData;
use platform::worker::{JobError, Progress};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

use super::portfolio_walk::{self, Blocks, Candidate};
/// A point: its index, its grid values, and itself ready to run or why not.
type Point = (
    usize,
    Map<String, Value>,
    Result<(Prepared, Blocks), String>,
);

/// Runs the points `first..` of a grid of portfolios on `base`.
pub async fn run(
    market: &dyn MarketData,
    base: &Value,
    first: usize,
    varied: Vec<Map<String, Value>>,
    keep: Keep,
    progress: &Progress,
) -> Result<Ran, JobError> {
    // Every point keeps the sessions the longest lookback reads, so that
    // they all lay their bars on one calendar.
    let mut reuse = Reuse::default();
    reuse.lookback = varied
        .iter()
        .filter_map(|v| super::apply(base, v).ok())
        .filter_map(|body| serde_json::from_value(body).ok())
        .map(|p| portfolio::lookback(&p))
        .max()
        .unwrap_or(0);
    let mut built: HashMap<String, Blocks> = HashMap::new();
    let mut points: Vec<Point> = Vec::with_capacity(varied.len());
    for (k, v) in varied.into_iter().enumerate() {
        let index = first + k;
        let body = match super::apply(base, &v) {
            Ok(body) => body,
            Err(e) => {
                points.push((index, v, Err(e.to_string())));
                continue;
            }
        };
        let p = match portfolio::prepare_with(market, &body, &mut reuse).await {
            Ok(p) => p,
            Err(crate::Error::Port(e @ PortError::Unavailable { .. })) => return Err(e.into()),
            Err(e) => {
                points.push((index, v, Err(e.to_string())));
                continue;
            }
        };
        let key = format!("{}|{}", p.data_key, p.rules_key);
        let blocks = match built.get(&key) {
            Some(b) => b.clone(),
            None => {
                let b: Blocks = Arc::new(portfolio::blocks(market, &p).await?);
                built.insert(key, b.clone());
                b
            }
        };
        points.push((index, v, Ok((p, blocks))));
    }
    drop(built);
    let walk = match &keep.walk_forward {
        Some(params) => {
            let candidates: Vec<Candidate> = points
                .iter()
                .filter_map(|(index, v, ready)| {
                    let (prepared, blocks) = ready.as_ref().ok()?;
                    Some(Candidate {
                        index: *index,
                        body: super::apply(base, v).ok()?,
                        prepared,
                        blocks: blocks.clone(),
                    })
                })
                .collect();
            Some(portfolio_walk::walk(market, &candidates, params, &mut reuse, progress).await?)
        }
        None => None,
    };
    let progress = progress.clone();
    let mut ran = tokio::task::spawn_blocking(move || rows(&points, keep, &progress))
        .await
        .map_err(|e| {
            JobError::Permanent(format!("internal error while running the portfolios: {e}"))
        })??;
    ran.walk = walk;
    Ok(ran)
}

/// The last value computed under a key: what consecutive points share,
/// one at a time (a universe's laid bars are tens of MB; a chunk whose
/// points each have their own window holds one).
struct Last<T>(Option<(String, Arc<T>)>);

impl<T> Last<T> {
    fn get(&mut self, key: String, make: impl FnOnce() -> T) -> Arc<T> {
        match &self.0 {
            Some((k, v)) if *k == key => v.clone(),
            _ => {
                let v = Arc::new(make());
                self.0 = Some((key, v.clone()));
                v
            }
        }
    }
}

/// The points' rows and returns, the laid calendar and the firing computed
/// once for consecutive points that share them.
fn rows(points: &[Point], keep: Keep, progress: &Progress) -> Result<Ran, JobError> {
    let n = points.len();
    let keeps = keep.blocks > 0 || keep.raw;
    let mut gather = Gather::new(keep.blocks, keep.raw);
    let mut laid: Last<Laid> = Last(None);
    let mut firing: Last<Firing> = Last(None);
    let mut axes: Last<Vec<i64>> = Last(None);
    let mut rows = Vec::with_capacity(n);
    for (k, (index, varied, ready)) in points.iter().enumerate() {
        rows.push(match ready {
            Ok((p, blocks)) => {
                // One calendar: the universe's sessions and the window's start.
                let calendar = format!(
                    "{}|{:?}|{}|{}",
                    p.data_key,
                    p.calendar.first(),
                    p.calendar.len(),
                    p.start
                );
                let l = laid.get(calendar.clone(), || Laid::new(p));
                let f = p.strategy.as_ref().map(|_| {
                    firing.get(format!("{calendar}|{}", p.rules_key), || {
                        Firing::new(p, &l, blocks)
                    })
                });
                let out = compute::simulate(p, &l, f.as_deref(), false);
                let (m, rel, mut returns) = compute::figures(p, &out);
                if keeps {
                    let times = axes.get(calendar, || {
                        p.calendar[(p.start + 1).min(p.calendar.len())..]
                            .iter()
                            .map(|d| d.and_time(chrono::NaiveTime::MIN).and_utc().timestamp())
                            .collect()
                    });
                    gather
                        .push(*index as u32, &times, &mut returns)
                        .map_err(JobError::Permanent)?;
                }
                BatchRow::portfolio(*index, varied.clone(), &m, &rel)
            }
            Err(m) => BatchRow::failed(*index, varied.clone(), m.clone()),
        });
        progress.steps(k + 1, n);
    }
    Ok(Ran {
        rows,
        returns: gather.finish(compute::BARS_PER_YEAR),
        walk: None,
    })
}
