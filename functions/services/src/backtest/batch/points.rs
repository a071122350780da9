//! What each strategy of a batch varies, computed from the grid's lists
//! when asked rather than held per strategy: a million-point grid is its
//! lists, not a million maps.

use serde_json::{Map, Value};
use std::ops::Range;

/// A batch's points: a list batch's (nothing varies) or a grid's.
#[derive(Debug, Clone, PartialEq)]
pub enum Points {
    /// A list of this many strategies, each run as given.
    List(usize),
    /// Every combination of the paths' values, the first path slowest.
    Grid(Vec<(String, Vec<Value>)>),
}

impl Points {
    pub fn len(&self) -> usize {
        match self {
            Points::List(n) => *n,
            Points::Grid(axes) => axes.iter().map(|(_, v)| v.len()).product(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The grid's keys, in order (none for a list).
    pub fn paths(&self) -> Vec<String> {
        match self {
            Points::List(_) => Vec::new(),
            Points::Grid(axes) => axes.iter().map(|(k, _)| k.clone()).collect(),
        }
    }

    /// Each path's value index at point `k` (mixed radix, the first path slowest).
    pub fn picks(&self, k: usize) -> Vec<usize> {
        let Points::Grid(axes) = self else {
            return Vec::new();
        };
        let mut rest = k;
        let mut picks = vec![0; axes.len()];
        for (a, (_, values)) in axes.iter().enumerate().rev() {
            picks[a] = rest % values.len();
            rest /= values.len();
        }
        picks
    }

    /// The point whose paths take the values at `picks`.
    pub fn point_of(&self, picks: &[usize]) -> usize {
        let Points::Grid(axes) = self else {
            return 0;
        };
        axes.iter()
            .zip(picks)
            .fold(0, |k, ((_, values), &p)| k * values.len() + p)
    }

    /// Point `k`'s values by grid key (empty for a list).
    pub fn get(&self, k: usize) -> Map<String, Value> {
        let Points::Grid(axes) = self else {
            return Map::new();
        };
        axes.iter()
            .zip(self.picks(k))
            .map(|((path, values), p)| (path.clone(), values[p].clone()))
            .collect()
    }

    /// The values of the points in `range`.
    pub fn range(&self, range: Range<usize>) -> Vec<Map<String, Value>> {
        range.map(|k| self.get(k)).collect()
    }

    /// Points that show every value of every path: each path's values with
    /// the other paths at their first, and the last point. In order, once
    /// each.
    pub fn probes(&self) -> Vec<usize> {
        let Points::Grid(axes) = self else {
            return (0..self.len()).collect();
        };
        let mut out = std::collections::BTreeSet::new();
        for (a, (_, values)) in axes.iter().enumerate() {
            for v in 0..values.len() {
                let mut picks = vec![0; axes.len()];
                picks[a] = v;
                out.insert(self.point_of(&picks));
            }
        }
        out.insert(self.len().saturating_sub(1));
        out.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn grid() -> Points {
        Points::Grid(vec![
            ("a".into(), vec![json!(1), json!(2), json!(3)]),
            ("b,c".into(), vec![json!("x"), json!("y")]),
        ])
    }

    #[test]
    fn points_are_the_combinations_first_path_slowest() {
        let g = grid();
        assert_eq!(g.len(), 6);
        assert_eq!(g.paths(), vec!["a", "b,c"]);
        assert_eq!(
            g.get(3),
            json!({"a": 2, "b,c": "y"}).as_object().unwrap().clone()
        );
        for k in 0..6 {
            assert_eq!(g.point_of(&g.picks(k)), k);
        }
        assert_eq!(g.range(4..6), vec![g.get(4), g.get(5)]);
        assert_eq!(Points::List(2).get(1), Map::new());
        assert_eq!(Points::List(2).len(), 2);
    }

    #[test]
    fn probes_show_every_value_of_every_path() {
        // a = 1, 2, 3 with b,c = x; b,c = y with a = 1; the last point.
        assert_eq!(grid().probes(), vec![0, 1, 2, 4, 5]);
        assert_eq!(Points::List(3).probes(), vec![0, 1, 2]);
    }
}
