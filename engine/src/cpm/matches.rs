//! Which windows match: at or above the minimum correlation, inside the
//! lookback, clear of the template's own bars, passing the moving-average
//! filter at their last bar; then best first, optionally without overlaps.

use super::search::{Template, sliding_corr};
use std::collections::BTreeMap;

/// A window of bars `start..=end` whose closes correlate `corr` percent
/// (100 x Pearson) with the template.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Match {
    pub start: usize,
    pub end: usize,
    pub corr: f64,
}

impl Match {
    pub fn bars(&self) -> usize {
        self.end - self.start + 1
    }

    fn overlaps(&self, start: usize, end: usize) -> bool {
        self.start <= end && start <= self.end
    }
}

/// What a window must satisfy, besides its correlation.
#[derive(Debug, Clone, Default)]
pub struct Criteria {
    /// Percent, 0-100: `corr >= min_corr` matches.
    pub min_corr: f64,
    /// The first bar a window may start at (the lookback's first bar).
    pub first_bar: usize,
    /// Bars no window may share (the template's own range), inclusive.
    pub exclude: Option<(usize, usize)>,
    /// Per bar, whether a window may end there (the moving-average filter);
    /// `None` lets every bar end a window.
    pub end_ok: Option<Vec<bool>>,
}

/// Every window of the template's length that meets `criteria`, in bar order.
/// Only the bars from `criteria.first_bar` on are searched.
pub fn windows(template: &Template, closes: &[f64], criteria: &Criteria) -> Vec<Match> {
    let m = template.len();
    let from = criteria.first_bar.min(closes.len());
    let corr = sliding_corr(template, &closes[from..]);
    corr.iter()
        .enumerate()
        .filter_map(|(k, r)| {
            let w = Match {
                start: from + k,
                end: from + k + m - 1,
                corr: 100.0 * r,
            };
            // NaN (flat windows) fails the comparison.
            let keep = w.corr >= criteria.min_corr
                && criteria.exclude.is_none_or(|(a, b)| !w.overlaps(a, b))
                && criteria.end_ok.as_ref().is_none_or(|ok| ok[w.end]);
            keep.then_some(w)
        })
        .collect()
}

/// Best first (higher `corr`, then the earlier window). With
/// `exclude_overlap`, a window is kept only when it shares no bar with a
/// better one already kept.
pub fn select(mut found: Vec<Match>, exclude_overlap: bool) -> Vec<Match> {
    found.sort_by(|a, b| {
        b.corr
            .total_cmp(&a.corr)
            .then(a.start.cmp(&b.start))
            .then(a.end.cmp(&b.end))
    });
    if !exclude_overlap {
        return found;
    }
    // Kept windows never overlap, so ordered by start they are ordered by end
    // too: only the neighbours on either side of a new start can overlap it.
    let mut kept: BTreeMap<usize, Match> = BTreeMap::new();
    let mut out = Vec::new();
    for w in found {
        let before = kept.range(..=w.start).next_back().map(|(_, k)| *k);
        let after = kept.range(w.start..).next().map(|(_, k)| *k);
        let clash = [before, after]
            .iter()
            .flatten()
            .any(|k| k.overlaps(w.start, w.end));
        if !clash {
            kept.insert(w.start, w);
            out.push(w);
        }
    }
    out
}

/// Where a window may end under the moving-average filter: `condition` 1
/// keeps bars whose close is above the `period`-bar simple average of
/// closes, 2 below; 0 keeps every bar. Bars before the average exists fail
/// a filter.
pub fn ma_filter(closes: &[f64], period: usize, condition: u8) -> Option<Vec<bool>> {
    if condition == 0 {
        return None;
    }
    let ma = crate::indicators::sma(closes, period);
    Some(
        closes
            .iter()
            .zip(&ma)
            .map(|(c, a)| if condition == 1 { c > a } else { c < a })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(start: usize, end: usize, corr: f64) -> Match {
        Match { start, end, corr }
    }

    #[test]
    fn best_first_without_overlaps() {
        let found = vec![
            m(0, 4, 80.0),
            m(3, 7, 95.0),
            m(5, 9, 90.0),
            m(8, 12, 85.0),
            m(13, 17, 85.0),
        ];
        // 95 (3-7) first; 90 (5-9) overlaps it; 85 (8-12) is clear of 3-7;
        // 85 (13-17) is clear; 80 (0-4) overlaps 3-7.
        assert_eq!(
            select(found.clone(), true),
            vec![m(3, 7, 95.0), m(8, 12, 85.0), m(13, 17, 85.0)]
        );
        let all = select(found, false);
        assert_eq!(all.len(), 5);
        assert_eq!(all[0], m(3, 7, 95.0));
        assert_eq!(all[4], m(0, 4, 80.0));
        // Windows of different lengths.
        let mixed = vec![m(0, 19, 90.0), m(10, 12, 99.0), m(20, 25, 70.0)];
        assert_eq!(select(mixed, true), vec![m(10, 12, 99.0), m(20, 25, 70.0)]);
    }

    #[test]
    fn windows_respect_threshold_lookback_template_and_filter() {
        // A zigzag: every window of 3 starting at an even bar rises then falls.
        let closes = [1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0];
        let t = Template::new(&[1.0, 3.0, 1.0]).unwrap();
        let all = windows(
            &t,
            &closes,
            &Criteria {
                min_corr: 99.0,
                ..Default::default()
            },
        );
        assert_eq!(
            all.iter().map(|w| w.start).collect::<Vec<_>>(),
            vec![0, 2, 4, 6]
        );
        assert!(
            all.iter()
                .all(|w| (w.corr - 100.0).abs() < 1e-12 && w.bars() == 3)
        );
        // Odd starts are [3,1,3]: correlation -1, never above a threshold of 0.
        let any = windows(&t, &closes, &Criteria::default());
        assert_eq!(any.len(), 4);
        let c = Criteria {
            min_corr: 99.0,
            first_bar: 1,
            exclude: Some((4, 4)),
            end_ok: Some(vec![
                true, true, true, true, true, true, true, true, false, true,
            ]),
        };
        // Start 0 is before the lookback, 2 and 4 touch bar 4, 6 ends on bar 8.
        assert!(windows(&t, &closes, &c).is_empty());
    }

    #[test]
    fn moving_average_filter() {
        let closes = [1.0, 2.0, 3.0, 2.0, 1.0];
        // 2-bar averages: -, 1.5, 2.5, 2.5, 1.5.
        assert_eq!(ma_filter(&closes, 2, 0), None);
        assert_eq!(
            ma_filter(&closes, 2, 1).unwrap(),
            vec![false, true, true, false, false]
        );
        assert_eq!(
            ma_filter(&closes, 2, 2).unwrap(),
            vec![false, false, false, true, true]
        );
    }
}
