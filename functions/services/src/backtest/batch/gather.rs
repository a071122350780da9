//! A chunk's returns kept as its strategies run.

use super::statistics::{chunk_returns, reduction};
use engine::overfitting;
use platform::returns::{ChunkReturns, Reduced};
use std::sync::Arc;

/// A chunk's returns gathered strategy by strategy into the object
/// [`chunk_returns`] makes. Kept raw, every series is held until the end. Reduced only (the
/// strategies of a batch on one set of bars, which all share their bar
/// times), each series is reduced as it comes and its buffer given back,
/// so a chunk's memory does not grow with its strategies' returns.
pub struct Gather {
    blocks: usize,
    raw: bool,
    series: Vec<(u32, Arc<Vec<i64>>, Vec<f64>)>,
    streamed: Option<Streamed>,
}

struct Streamed {
    times: Arc<Vec<i64>>,
    indices: Vec<u32>,
    skip: usize,
    reduced: Reduced,
}

impl Gather {
    /// Reduced in `blocks` (0: not), and kept `raw` too or not.
    pub fn new(blocks: usize, raw: bool) -> Self {
        Gather {
            blocks,
            raw,
            series: Vec::new(),
            streamed: None,
        }
    }

    /// Strategy `index`'s returns on `times`; `returns` is left empty, to
    /// be filled again.
    pub fn push(
        &mut self,
        index: u32,
        times: &Arc<Vec<i64>>,
        returns: &mut Vec<f64>,
    ) -> std::result::Result<(), String> {
        let t = times.len();
        let streams = !self.raw && self.blocks > 0 && t >= 2 * self.blocks;
        if streams && self.series.is_empty() && self.streamed.is_none() {
            let (skip, reduced) = reduction(0, t, self.blocks);
            self.streamed = Some(Streamed {
                times: times.clone(),
                indices: Vec::new(),
                skip,
                reduced,
            });
        }
        match &mut self.streamed {
            Some(s) => {
                if !(Arc::ptr_eq(&s.times, times) || s.times == *times) {
                    return Err("strategies of one set of bars ran on different bars".into());
                }
                s.indices.push(index);
                s.reduced.moments.push(overfitting::Moments::of(returns));
                s.reduced.sums.add(&returns[s.skip..]);
                returns.clear();
            }
            None => self
                .series
                .push((index, times.clone(), std::mem::take(returns))),
        }
        Ok(())
    }

    /// The chunk's object: as [`chunk_returns`] makes it, reduced alone
    /// unless kept raw.
    pub fn finish(self, periods_per_year: f64) -> ChunkReturns {
        match self.streamed {
            Some(s) => ChunkReturns {
                indices: s.indices,
                times: s.times.to_vec(),
                values: Vec::new(),
                periods_per_year,
                reduced: Some(s.reduced),
            },
            None => {
                let r = chunk_returns(self.series, periods_per_year, self.blocks);
                if self.raw { r } else { r.reduction_only() }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduced_as_they_come_the_returns_equal_the_chunk_s_reduction_of_them_all() {
        let times = Arc::new((0..100).map(|t| t * 86_400).collect::<Vec<i64>>());
        let series: Vec<(u32, Arc<Vec<i64>>, Vec<f64>)> = (0..5u32)
            .map(|k| {
                let r = (0..100)
                    .map(|t| ((t * 7 + k as i64 * 13) % 11) as f64 / 1000.0 - 0.004)
                    .collect();
                (k + 250, times.clone(), r)
            })
            .collect();
        for raw in [false, true] {
            let mut g = Gather::new(4, raw);
            let mut buffer = Vec::new();
            for (index, t, r) in &series {
                buffer.extend_from_slice(r);
                g.push(*index, t, &mut buffer).unwrap();
                assert!(buffer.is_empty(), "the buffer is given back empty");
            }
            let whole = chunk_returns(series.clone(), 252.0, 4);
            let want = if raw { whole } else { whole.reduction_only() };
            assert_eq!(g.finish(252.0), want, "raw {raw}");
        }
        // Other bars among bars that were to be shared: refused, not mixed.
        let mut g = Gather::new(4, false);
        let mut r = vec![0.0; 100];
        g.push(0, &times, &mut r).unwrap();
        let other = Arc::new((1..101).map(|t| t * 86_400).collect::<Vec<i64>>());
        let mut r = vec![0.0; 100];
        assert!(g.push(1, &other, &mut r).is_err());
    }
}
