//! A chunk task's parameters: what a chunk of a batch runs.

use super::Points;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A chunk task's parameters: its strategies (a list batch), or the grid's
/// base strategy and axes with the chunk's count of points (a grid batch:
/// the grid's lists, not a map per strategy, nor a whole copy of each).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChunkParams {
    pub batch: String,
    /// Index of its first strategy in the batch.
    pub first: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub strategies: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<Value>,
    /// Each strategy's grid values, as chunks were written before `axes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub varied: Vec<Map<String, Value>>,
    /// The grid's paths and values, the first path slowest: the chunk's
    /// strategies are its points `first..first + count`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axes: Option<Vec<(String, Vec<Value>)>>,
    #[serde(default)]
    pub count: usize,
    /// The batch's estimate of one strategy's engine time and whether its
    /// submit reserved compute for it (`crate::compute`).
    #[serde(default)]
    pub strategy_us: u64,
    #[serde(default)]
    pub reserved: bool,
    /// S of the batch's statistics, to reduce the chunk's returns in.
    #[serde(default = "super::statistics::default_blocks")]
    pub blocks: usize,
    /// The batch's walk-forward, run on the chunk's strategies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walk_forward: Option<super::WalkForwardParams>,
    /// Whether the chunk keeps its raw returns besides their reduction:
    /// only when the batch's strategies may run on different bars (the
    /// statistics then reduce the raw returns on the bars all share).
    #[serde(default = "kept")]
    pub raw_returns: bool,
    /// Whether `base` is a portfolio rather than a strategy.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub portfolio: bool,
}

fn kept() -> bool {
    true
}

/// A strategy of a batch: its index, itself, and the grid's values for it.
pub type Item = (usize, Value, Map<String, Value>);

impl ChunkParams {
    /// How many strategies the chunk runs.
    pub fn len(&self) -> usize {
        match self.axes {
            Some(_) => self.count,
            None => self.varied.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each strategy's grid values, in order.
    pub(super) fn varied(&mut self) -> Vec<Map<String, Value>> {
        match self.axes.take() {
            Some(axes) => Points::Grid(axes).range(self.first..self.first + self.count),
            None => std::mem::take(&mut self.varied),
        }
    }

    /// The chunk's strategies with their index and varied values.
    pub(super) fn strategies(mut self) -> super::Strategies {
        let first = self.first;
        let varied = self.varied();
        match self.base {
            None => super::Strategies::Listed(
                self.strategies
                    .into_iter()
                    .zip(varied)
                    .enumerate()
                    .map(|(k, (s, v))| (first + k, s, v))
                    .collect(),
            ),
            Some(base) if self.portfolio => super::Strategies::Portfolios {
                base,
                first,
                varied,
            },
            Some(base) => super::Strategies::Grid {
                base,
                first,
                varied,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_grid_chunk_is_its_axes_and_count_and_runs_the_points_a_list_of_them_did() {
        let base = json!({"symbol": "SPY", "start_date": "2010-01-04"});
        let axes = vec![
            (
                "entry.condition.rule.period".to_string(),
                vec![json!("10"), json!("20"), json!("30")],
            ),
            ("risk_control".to_string(), vec![json!("//"), json!("//21")]),
        ];
        let points = Points::Grid(axes.clone());
        let chunk = |varied: Vec<Map<String, Value>>, axes, count| ChunkParams {
            batch: "b".into(),
            first: 2,
            strategies: Vec::new(),
            base: Some(base.clone()),
            varied,
            axes,
            count,
            strategy_us: 0,
            reserved: false,
            blocks: 16,
            walk_forward: None,
            raw_returns: false,
            portfolio: false,
        };
        let by_axes = chunk(Vec::new(), Some(axes), 3);
        let stored = serde_json::to_value(&by_axes).unwrap();
        assert!(stored.get("varied").is_none(), "no map per point: {stored}");
        let by_axes: ChunkParams = serde_json::from_value(stored).unwrap();
        // As chunks were written before: a map per point.
        let by_list: ChunkParams = serde_json::from_value(
            serde_json::to_value(chunk(points.range(2..5), None, 0)).unwrap(),
        )
        .unwrap();
        assert_eq!((by_axes.len(), by_list.len()), (3, 3));
        let grid = |c: ChunkParams| match c.strategies() {
            super::super::Strategies::Grid {
                base,
                first,
                varied,
            } => (base, first, varied),
            _ => panic!("a grid chunk runs its points"),
        };
        let (a, b) = (grid(by_axes), grid(by_list));
        assert_eq!((&a.0, a.1), (&base, 2));
        assert_eq!(a, b);
        assert_eq!(
            a.2[0],
            json!({"entry.condition.rule.period": "20", "risk_control": "//"})
                .as_object()
                .unwrap()
                .clone()
        );
        assert_eq!(a.2[1]["risk_control"], "//21");
    }
}
