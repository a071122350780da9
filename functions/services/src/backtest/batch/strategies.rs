//! A chunk's strategies run into their rows: prepared (a grid's points as
//! typed values where they can be), planned on the inputs they share, and
//! run by the engine on the blocking pool with one workspace per set of
//! bars.

use super::super::prepare::prepare;
use super::super::run::{Inputs, Planned, plan, plan_ready, report_keeping};
use super::{BatchRow, Item};
use engine::workspace::Workspace;
use platform::PortError;
use platform::marketdata::MarketData;
use platform::returns::ChunkReturns;
use platform::worker::{JobError, Progress};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// The moving averages a process's batch chunks share
/// ([`engine::workspace::SharedAverages`]): 128 MiB holds 1,700 averages of
/// SPX's 9,300 sessions, so the 1,000 slow averages a 1,000 x 1,000 grid's
/// chunks take turns with stay in, and the million-strategy grid's peak
/// memory under 2 GB.
pub static AVERAGES: std::sync::LazyLock<engine::workspace::SharedAverages> =
    std::sync::LazyLock::new(|| engine::workspace::SharedAverages::new(128 << 20));

/// Strategies' rows, the per-bar returns of those that ran and their
/// walk-forward picks.
pub struct Ran {
    pub rows: Vec<BatchRow>,
    pub returns: ChunkReturns,
    pub walk: Option<super::walk_forward::ChunkWalk>,
}

/// What a run keeps besides the rows: returns reduced in `blocks` for the
/// statistics (0: not reduced), the raw returns too (`raw`), and the
/// walk-forward's picks.
#[derive(Debug, Clone, Copy, Default)]
pub struct Keep {
    pub blocks: usize,
    pub raw: bool,
    pub walk_forward: Option<super::WalkForwardParams>,
}

/// A chunk's strategies: each as sent (a list batch), or a grid's base
/// with each point's values ([`super::typed`] prepares those it can from
/// the base prepared once).
pub enum Strategies {
    Listed(Vec<Item>),
    Grid {
        base: Value,
        /// The index of the first point in the batch.
        first: usize,
        varied: Vec<Map<String, Value>>,
    },
    /// A grid of portfolios: the base portfolio and each point's values.
    Portfolios {
        base: Value,
        first: usize,
        varied: Vec<Map<String, Value>>,
    },
}

/// Runs strategies into their rows, sharing what they read: each is
/// prepared and planned (the bars, readings and benchmark loaded once for
/// all), then the engine runs them on the blocking pool with one workspace
/// per set of bars, so a grid computes each crossing once and each average
/// once per process ([`AVERAGES`]). A
/// strategy's own mistake is its row's error; a dependency failing fails
/// the whole run (a chunk is then retried).
pub async fn run_strategies(
    market: &dyn MarketData,
    strategies: Strategies,
    keep: Keep,
    progress: &Progress,
) -> Result<Ran, JobError> {
    let mut inputs = Inputs::default();
    let (typed, base, items) = match strategies {
        Strategies::Listed(items) => (
            None,
            None,
            items.into_iter().map(|(k, s, v)| (k, Some(s), v)).collect(),
        ),
        Strategies::Portfolios {
            base,
            first,
            varied,
        } => {
            return super::portfolios::run(market, &base, first, varied, keep, progress).await;
        }
        Strategies::Grid {
            base,
            first,
            varied,
        } => {
            let keys = varied.first().map(|v| v.keys()).into_iter().flatten();
            let typed = super::typed::TypedGrid::new(market, &base, keys).await?;
            let items: Vec<_> = varied
                .into_iter()
                .enumerate()
                .map(|(k, v)| (first + k, None, v))
                .collect();
            (typed, Some(base), items)
        }
    };
    let mut planned = Vec::with_capacity(items.len());
    for (index, s, varied) in items {
        if let Some(point) = typed.as_ref().and_then(|t| t.point(&varied)) {
            let ready = match plan_ready(market, point.ready(), &mut inputs).await {
                Ok(pl) => Ok((point.params.symbol, pl)),
                Err(e @ PortError::Unavailable { .. }) => return Err(e.into()),
                Err(e) => Err(e.to_string()),
            };
            planned.push((index, varied, ready));
            continue;
        }
        let s = match (s, &base) {
            (Some(s), _) => Ok(s),
            (None, Some(base)) => super::apply(base, &varied),
            (None, None) => unreachable!("a listed strategy is sent whole"),
        };
        let ready = match s {
            Err(e) => Err(e.to_string()),
            Ok(s) => match prepare(market, &s).await {
                Ok(p) => match plan(market, &p, &mut inputs).await {
                    Ok(pl) => Ok((p.params().symbol.clone(), pl)),
                    Err(e @ PortError::Unavailable { .. }) => return Err(e.into()),
                    Err(e) => Err(e.to_string()),
                },
                Err(crate::Error::Port(e @ PortError::Unavailable { .. })) => {
                    return Err(e.into());
                }
                Err(e) => Err(e.to_string()),
            },
        };
        planned.push((index, varied, ready));
    }
    drop(inputs);
    let progress = progress.clone();
    tokio::task::spawn_blocking(move || {
        let n = planned.len();
        let mut spaces = workspaces(planned.iter().filter_map(|(_, _, r)| r.as_ref().ok()));
        let mut rows = Vec::with_capacity(n);
        let mut gather = super::Gather::new(keep.blocks, keep.raw);
        // One buffer for the returns of every strategy reduced as it ran.
        let mut scratch = Vec::new();
        // Bar times once per set of bars and window start.
        let mut axes: HashMap<(usize, usize), Arc<Vec<i64>>> = HashMap::new();
        let mut periods_per_year = 252.0;
        for (k, (index, varied, ready)) in planned.iter().enumerate() {
            rows.push(match ready {
                Ok((symbol, pl)) => {
                    let ws = spaces
                        .get_mut(&space(pl))
                        .expect("a workspace per set of bars and window");
                    let keeps = keep.blocks > 0 || keep.raw;
                    if keeps {
                        scratch.reserve(pl.bars.len().saturating_sub(pl.settings.start));
                    }
                    let r = report_keeping(pl, ws, keeps.then_some(&mut scratch));
                    let times = axes
                        .entry((Arc::as_ptr(&pl.bars) as usize, pl.settings.start))
                        .or_insert_with(|| {
                            let from = (pl.settings.start + 1).min(pl.bars.len());
                            Arc::new(
                                pl.bars.time[from..]
                                    .iter()
                                    .map(|t| t.and_utc().timestamp())
                                    .collect(),
                            )
                        })
                        .clone();
                    if keeps {
                        gather
                            .push(*index as u32, &times, &mut scratch)
                            .map_err(JobError::Permanent)?;
                    }
                    periods_per_year = pl.settings.bars_per_year;
                    BatchRow::ran(*index, varied.clone(), symbol, &r.metrics)
                }
                Err(m) => BatchRow::failed(*index, varied.clone(), m.clone()),
            });
            progress.steps(k + 1, n);
        }
        let walk = keep.walk_forward.map(|params| {
            let ran: Vec<_> = planned
                .iter()
                .filter_map(|(index, _, ready)| ready.as_ref().ok().map(|(_, pl)| (*index, pl)))
                .map(|(index, pl)| {
                    let ws = spaces
                        .get_mut(&space(pl))
                        .expect("a workspace per set of bars and window");
                    (index, pl, ws.block(&pl.entry), ws.block(&pl.exit))
                })
                .collect();
            let ran: Vec<super::walk_forward::Ran> = ran
                .iter()
                .map(|(index, pl, entry, exit)| super::walk_forward::Ran {
                    index: *index,
                    bars: &pl.bars,
                    entry,
                    exit,
                    settings: &pl.settings,
                })
                .collect();
            super::walk_forward::chunk_walk(&ran, &params)
        });
        Ok(Ran {
            rows,
            returns: gather.finish(periods_per_year),
            walk,
        })
    })
    .await
    .map_err(|e| JobError::Permanent(format!("internal error while running the batch: {e}")))?
}

/// A workspace's strategies: their bars, and the first bar whose firing
/// they read (their window's start less their blocks' delays).
fn space(pl: &Planned) -> (usize, usize) {
    let delay = pl.entry.delay_bars.max(pl.exit.delay_bars);
    (
        Arc::as_ptr(&pl.bars) as usize,
        pl.settings.start.saturating_sub(delay),
    )
}

/// One workspace per set of bars and window, its sides computed for all
/// the strategies at once ([`Workspace::warm`]: averages read once each).
fn workspaces<'a>(
    ready: impl Iterator<Item = &'a (String, Planned)> + Clone,
) -> HashMap<(usize, usize), Workspace<'a>> {
    let mut spaces = HashMap::new();
    for (_, pl) in ready.clone() {
        spaces
            .entry(space(pl))
            .or_insert_with(|| Workspace::sharing(&pl.bars, &AVERAGES).from_bar(space(pl).1));
    }
    for (key, ws) in &mut spaces {
        ws.warm(
            ready
                .clone()
                .filter(|(_, pl)| space(pl) == *key)
                .flat_map(|(_, pl)| [&pl.entry, &pl.exit]),
        );
    }
    spaces
}
