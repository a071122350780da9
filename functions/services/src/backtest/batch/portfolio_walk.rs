//! A walk-forward over a grid of portfolios, on a chunk's worker. On each
//! window every point of the chunk runs again from flat over the in-sample
//! sessions, as the same portfolio runs alone with those start and end
//! dates (earlier sessions feed its lookbacks only); the best by the
//! chosen metric runs over the out-of-sample sessions the same way. The
//! batch's reader merges the chunks' bests as it does for strategies.

use super::walk_forward::{self, ChunkWalk, PortfolioStep, WalkForwardParams, portfolio_metrics};
use crate::backtest::portfolio::compute::{self, Firing, Laid};
use crate::backtest::portfolio::{self, Prepared, Reuse};
use chrono::NaiveDate;
use engine::backtest::Metrics;
use platform::PortError;
use platform::marketdata::MarketData;
use platform::worker::{JobError, Progress};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;

pub(super) type Blocks = Arc<Vec<(engine::strategy::Block, engine::strategy::Block)>>;

/// A point of the chunk that ran: its batch index, its body, its run
/// over the whole window and its rules built on each symbol.
pub(super) struct Candidate<'a> {
    pub index: usize,
    pub body: Value,
    pub prepared: &'a Prepared,
    pub blocks: Blocks,
}

/// The chunk's picks on every window of `params`.
pub(super) async fn walk(
    market: &dyn MarketData,
    candidates: &[Candidate<'_>],
    params: &WalkForwardParams,
    reuse: &mut Reuse,
    progress: &Progress,
) -> Result<ChunkWalk, JobError> {
    let Some(first) = candidates.first() else {
        return Ok(ChunkWalk::noted("no portfolio of the chunk ran"));
    };
    let p0 = first.prepared;
    let same = |c: &Candidate| {
        let p = c.prepared;
        p.data_key == p0.data_key
            && p.calendar.first() == p0.calendar.first()
            && p.calendar.len() == p0.calendar.len()
            && p.start == p0.start
    };
    if let Some(other) = candidates.iter().find(|c| !same(c)) {
        return Ok(ChunkWalk::noted(format!(
            "portfolios {} and {} run on different universes or dates; a walk-forward needs one universe and window for all",
            first.index, other.index
        )));
    }
    let sessions = p0.calendar[p0.start..].to_vec();
    let windows = match params.windows(sessions.len()) {
        Ok(w) => w,
        Err(why) => return Ok(ChunkWalk::noted(why)),
    };
    let mut steps = Vec::with_capacity(windows.len());
    for window in windows {
        let span = |r: &std::ops::Range<usize>| (sessions[r.start], sessions[r.end - 1]);
        let mut runs = Vec::with_capacity(candidates.len());
        for c in candidates {
            if let Some(p) = dated(market, &c.body, span(&window.in_sample), reuse).await? {
                runs.push((c.index, p, c.blocks.clone()));
            }
        }
        let beat = progress.clone();
        let scored = off_the_reactor(move || {
            let mut laid: Option<(String, Laid)> = None;
            let mut firing: HashMap<String, Firing> = HashMap::new();
            runs.iter()
                .map(|(index, p, blocks)| {
                    let key = format!("{}|{}|{}", p.data_key, p.calendar.len(), p.start);
                    if laid.as_ref().is_none_or(|(k, _)| *k != key) {
                        laid = Some((key.clone(), Laid::new(p)));
                        firing.clear();
                    }
                    let l = &laid.as_ref().expect("laid above").1;
                    let f = p.strategy.as_ref().map(|_| {
                        &*firing
                            .entry(p.rules_key.clone())
                            .or_insert_with(|| Firing::new(p, l, blocks))
                    });
                    // A run is a report: the chunk is alive.
                    beat.beat();
                    (*index, run(p, l, f).0)
                })
                .collect::<Vec<_>>()
        })
        .await?;
        let best = scored
            .into_iter()
            .map(|(index, m)| (index, params.score(&m), m))
            .filter(|(_, s, _)| s.is_finite())
            .fold(None, |best: Option<(usize, f64, Metrics)>, c| match best {
                Some(b) if b.1 >= c.1 => Some(b),
                _ => Some(c),
            });
        let out = match &best {
            Some((index, _, _)) => {
                let c = candidates
                    .iter()
                    .find(|c| c.index == *index)
                    .expect("a candidate");
                match dated(market, &c.body, span(&window.out_of_sample), reuse).await? {
                    Some(p) => {
                        let blocks = c.blocks.clone();
                        Some(
                            off_the_reactor(move || {
                                let l = Laid::new(&p);
                                let f = p.strategy.as_ref().map(|_| Firing::new(&p, &l, &blocks));
                                run(&p, &l, f.as_ref())
                            })
                            .await?,
                        )
                    }
                    None => None,
                }
            }
            None => None,
        };
        steps.push(PortfolioStep { window, best, out });
    }
    let times = sessions
        .iter()
        .map(|d| d.and_time(chrono::NaiveTime::MIN).and_utc().timestamp())
        .collect();
    Ok(walk_forward::portfolio_walk(
        times,
        compute::BARS_PER_YEAR,
        steps,
    ))
}

/// `body` over the sessions `from` to `to`, prepared; `None` when it
/// cannot run there (a schedule that fires on no session of the window).
async fn dated(
    market: &dyn MarketData,
    body: &Value,
    (from, to): (NaiveDate, NaiveDate),
    reuse: &mut Reuse,
) -> Result<Option<Prepared>, JobError> {
    let mut b = body.clone();
    b["start_date"] = json!(from.to_string());
    b["end_date"] = json!(to.to_string());
    match portfolio::prepare_with(market, &b, reuse).await {
        Ok(p) => Ok(Some(p)),
        Err(crate::Error::Port(e @ PortError::Unavailable { .. })) => Err(e.into()),
        Err(_) => Ok(None),
    }
}

/// A run's metrics and its equity from 1.
fn run(p: &Prepared, laid: &Laid, firing: Option<&Firing>) -> (Metrics, Vec<f64>) {
    let out = compute::simulate(p, laid, firing, false);
    let (m, rel, _) = compute::figures(p, &out);
    let capital = p.params.capital.unwrap_or(100_000.0);
    (
        portfolio_metrics(&m, rel.benchmark_return),
        out.equity.iter().map(|e| e / capital).collect(),
    )
}

async fn off_the_reactor<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, JobError> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        JobError::Permanent(format!(
            "internal error while walking the portfolios forward: {e}"
        ))
    })
}
