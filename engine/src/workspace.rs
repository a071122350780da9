//! Signals of one set of bars, each computed once. A grid of strategies over
//! the same bars asks for the same moving averages and comparisons again
//! and again; here the second ask is a lookup.

use crate::Bars;
use crate::fired::{Fired, Sides};
use crate::rules::{self, MaKind, Op, Target, Transform};
use crate::strategy::{Block, BlockKind, Column, Comparison, Condition, Source};
use std::cmp::Ordering;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;
use std::sync::{Arc, Mutex};

/// A source by identity: a series supplied by the caller is the same source
/// when it is the same allocation (the caller shares it with `Arc`).
#[derive(Debug, Clone)]
enum SourceKey {
    Column(Column),
    /// The indicator with its parameters.
    Technical((u8, [u64; 3])),
    Series(Arc<Vec<f64>>),
}

impl PartialEq for SourceKey {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (SourceKey::Column(a), SourceKey::Column(b)) => a == b,
            (SourceKey::Technical(a), SourceKey::Technical(b)) => a == b,
            (SourceKey::Series(a), SourceKey::Series(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for SourceKey {}

impl std::hash::Hash for SourceKey {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        match self {
            SourceKey::Column(c) => (0u8, *c as u8).hash(h),
            SourceKey::Technical(t) => (1u8, t).hash(h),
            SourceKey::Series(s) => (2u8, Arc::as_ptr(s) as usize).hash(h),
        }
    }
}

/// A signal's values: its source after its qualifier.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ValuesKey {
    source: SourceKey,
    transform: Option<Transform>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum TargetKey {
    /// A constant, by its bits.
    Value(u64),
    OwnAverage(MaKind, usize, u64),
    CloseAverage(MaKind, usize, u64),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ConditionKey {
    values: ValuesKey,
    op: Op,
    target: TargetKey,
}

/// The signal against its target series, bar by bar.
type SidesKey = (ValuesKey, TargetKey);

/// An average's key: what it averages, how, over how many bars.
type AverageKey = (ValuesKey, MaKind, usize);

/// Moving averages shared by the workspaces of one process over the same
/// bars: a grid's chunks, run one after another, each ask for the averages
/// the others computed (a 1,000 x 1,000 grid of two periods needs 2,000;
/// chunks of 250 consecutive points computed 251 each). At most
/// `max_bytes` of series, the oldest out first. Each chunk reads its own
/// copy of the bars, so a workspace first finds the copy the cache holds
/// with the same values ([`SharedAverages::canonical`]); averages are keyed
/// by that copy's allocation, which the cache keeps alive while it holds
/// averages of it, so a key never names other bars. A caller's own series
/// (keyed by allocation too) are not shared.
pub struct SharedAverages {
    max_bytes: usize,
    inner: Mutex<Shared>,
}

#[derive(Default)]
struct Shared {
    /// Per set of bars: the bars, kept alive, and its averages held.
    bars: HashMap<usize, (Arc<Bars>, usize)>,
    averages: HashMap<(usize, AverageKey), Arc<Vec<f64>>>,
    order: VecDeque<(usize, AverageKey)>,
    bytes: usize,
}

impl SharedAverages {
    pub fn new(max_bytes: usize) -> Self {
        SharedAverages {
            max_bytes,
            inner: Mutex::new(Shared::default()),
        }
    }

    /// Averages held, and their bytes.
    pub fn held(&self) -> (usize, usize) {
        let s = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        (s.averages.len(), s.bytes)
    }

    /// The bars the cache holds with the same values as `bars` (another
    /// chunk's copy), or `bars` itself. Compared in full, outside the lock.
    pub fn canonical(&self, bars: &Arc<Bars>) -> Arc<Bars> {
        let print = |b: &Bars| {
            (
                b.len(),
                b.time.first().copied(),
                b.time.last().copied(),
                b.close.last().map(|c| c.to_bits()),
            )
        };
        let candidates: Vec<Arc<Bars>> = {
            let s = self.inner.lock().unwrap_or_else(|p| p.into_inner());
            s.bars
                .values()
                .map(|(held, _)| held)
                .filter(|held| print(held) == print(bars))
                .cloned()
                .collect()
        };
        candidates
            .into_iter()
            .find(|held| Arc::ptr_eq(held, bars) || **held == **bars)
            .unwrap_or_else(|| bars.clone())
    }

    fn get(&self, bars: &Arc<Bars>, key: &AverageKey) -> Option<Arc<Vec<f64>>> {
        let s = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        s.averages
            .get(&(Arc::as_ptr(bars) as usize, key.clone()))
            .cloned()
    }

    fn put(&self, bars: &Arc<Bars>, key: AverageKey, v: Arc<Vec<f64>>) {
        let size = v.len() * std::mem::size_of::<f64>();
        if size > self.max_bytes {
            return;
        }
        let at = Arc::as_ptr(bars) as usize;
        let mut s = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if s.averages.insert((at, key.clone()), v).is_some() {
            return;
        }
        s.bars.entry(at).or_insert_with(|| (bars.clone(), 0)).1 += 1;
        s.order.push_back((at, key));
        s.bytes += size;
        while s.bytes > self.max_bytes {
            let Some(old) = s.order.pop_front() else {
                break;
            };
            if let Some(gone) = s.averages.remove(&old) {
                s.bytes -= gone.len() * std::mem::size_of::<f64>();
            }
            if let Some(entry) = s.bars.get_mut(&old.0) {
                entry.1 -= 1;
                if entry.1 == 0 {
                    s.bars.remove(&old.0);
                }
            }
        }
    }
}

/// The series and firings computed so far over one set of bars.
pub struct Workspace<'a> {
    bars: &'a Bars,
    /// The process's averages, and the copy of the bars they are kept for.
    shared: Option<(&'a SharedAverages, Arc<Bars>)>,
    values: HashMap<ValuesKey, Rc<Vec<f64>>>,
    averages: HashMap<AverageKey, Arc<Vec<f64>>>,
    sides: HashMap<SidesKey, Rc<Sides>>,
    fired: HashMap<ConditionKey, Rc<Fired>>,
    /// The first bar whose firing is read ([`Workspace::from_bar`]).
    from: usize,
}

fn close_key() -> ValuesKey {
    ValuesKey {
        source: SourceKey::Column(Column::Close),
        transform: None,
    }
}

impl<'a> Workspace<'a> {
    pub fn new(bars: &'a Bars) -> Self {
        Workspace {
            bars,
            shared: None,
            values: HashMap::new(),
            averages: HashMap::new(),
            sides: HashMap::new(),
            fired: HashMap::new(),
            from: 0,
        }
    }

    /// A workspace whose firings are read from bar `from` on only (a
    /// backtest's window, less its blocks' delays): comparisons and
    /// crossings are computed from there ([`Sides::of_from`]) and never
    /// fire before it.
    pub fn from_bar(mut self, from: usize) -> Self {
        self.from = from;
        self
    }

    /// A workspace whose averages come from, and go to, `shared`.
    pub fn sharing(bars: &'a Arc<Bars>, shared: &'a SharedAverages) -> Self {
        Workspace {
            shared: Some((shared, shared.canonical(bars))),
            ..Workspace::new(bars)
        }
    }

    pub fn bars(&self) -> &'a Bars {
        self.bars
    }

    fn values_key(source: &Source, transform: Option<Transform>) -> ValuesKey {
        ValuesKey {
            source: match source {
                Source::Column(c) => SourceKey::Column(*c),
                Source::Technical(t) => SourceKey::Technical(t.key()),
                Source::Series(s) => SourceKey::Series(s.clone()),
            },
            transform,
        }
    }

    fn values(&mut self, source: &Source, transform: Option<Transform>) -> Rc<Vec<f64>> {
        let key = Self::values_key(source, transform);
        if let Some(v) = self.values.get(&key) {
            return v.clone();
        }
        let raw = source.values(self.bars);
        let v = Rc::new(match transform {
            Some(t) => rules::transform(&raw, t),
            None => raw,
        });
        self.values.insert(key, v.clone());
        v
    }

    /// The moving average of the values under `key`.
    fn average(&mut self, key: ValuesKey, x: &[f64], kind: MaKind, period: usize) -> Arc<Vec<f64>> {
        let k = (key, kind, period);
        if let Some(v) = self.averages.get(&k) {
            return v.clone();
        }
        let shared = self
            .shared
            .as_ref()
            .filter(|_| !matches!(k.0.source, SourceKey::Series(_)));
        let v = match shared.and_then(|(cache, bars)| cache.get(bars, &k)) {
            Some(v) => v,
            None => {
                let v = Arc::new(rules::moving_average(x, kind, period));
                if let Some((cache, bars)) = shared {
                    cache.put(bars, k.clone(), v.clone());
                }
                v
            }
        };
        self.averages.insert(k, v.clone());
        v
    }

    /// Computes the sides the blocks' comparisons and crossings read, one
    /// compared-with series at a time: a grid's chunk compares a few
    /// signals with each of many averages, and visited in their own order
    /// each average would be read from memory once per signal (the sides
    /// are most of a grid's engine time, and they wait on memory). Later
    /// asks for these blocks find their sides computed.
    pub fn warm<'b>(&mut self, blocks: impl IntoIterator<Item = &'b Block>) {
        let mut by_target: HashMap<TargetKey, Vec<&Condition>> = HashMap::new();
        for c in blocks.into_iter().flat_map(|b| &b.conditions) {
            if Self::side(c.op).is_some() {
                by_target.entry(Self::target_key(c)).or_default().push(c);
            }
        }
        for c in by_target.into_values().flatten() {
            let values = Self::values_key(&c.source, c.transform);
            self.sides(c, values, Self::target_key(c));
        }
    }

    fn side(op: Op) -> Option<Ordering> {
        match op {
            Op::Gt | Op::CrossAbove => Some(Ordering::Greater),
            Op::Lt | Op::CrossBelow => Some(Ordering::Less),
            _ => None,
        }
    }

    fn target_key(c: &Condition) -> TargetKey {
        match &c.comparison {
            Comparison::Value(v) => TargetKey::Value(v.to_bits()),
            Comparison::OwnAverage {
                kind,
                period,
                offset_pct,
            } => TargetKey::OwnAverage(*kind, *period, offset_pct.to_bits()),
            Comparison::CloseAverage {
                kind,
                period,
                offset_pct,
            } => TargetKey::CloseAverage(*kind, *period, offset_pct.to_bits()),
        }
    }

    /// Where the condition holds.
    pub fn condition(&mut self, c: &Condition) -> Rc<Fired> {
        let values = Self::values_key(&c.source, c.transform);
        let target = Self::target_key(c);
        if let Some(want) = Self::side(c.op) {
            // A few word operations on the shared sides: not worth keeping.
            let sides = self.sides(c, values, target);
            return Rc::new(if matches!(c.op, Op::Gt | Op::Lt) {
                sides.compare(want)
            } else {
                sides.cross(want)
            });
        }
        let key = ConditionKey {
            values: values.clone(),
            op: c.op,
            target,
        };
        if let Some(f) = self.fired.get(&key) {
            return f.clone();
        }
        let x = self.values(&c.source, c.transform);
        let y = self.target(c, values, &x);
        let f = Rc::new(Fired::from_bools(&rules::evaluate(
            &x,
            c.op,
            &Target::Series(y.to_vec()),
        )));
        self.fired.insert(key, f.clone());
        f
    }

    /// The series the condition's signal is compared with.
    fn target(&mut self, c: &Condition, values: ValuesKey, x: &[f64]) -> Arc<Vec<f64>> {
        let shifted = |ma: Arc<Vec<f64>>, offset_pct: f64| {
            if offset_pct == 0.0 {
                ma
            } else {
                Arc::new(ma.iter().map(|m| m * (1.0 + offset_pct / 100.0)).collect())
            }
        };
        match &c.comparison {
            Comparison::Value(v) => Arc::new(vec![*v; x.len()]),
            Comparison::OwnAverage {
                kind,
                period,
                offset_pct,
            } => shifted(self.average(values, x, *kind, *period), *offset_pct),
            Comparison::CloseAverage {
                kind,
                period,
                offset_pct,
            } => shifted(
                self.average(close_key(), &self.bars.close, *kind, *period),
                *offset_pct,
            ),
        }
    }

    /// The signal's sides of its target (shared by the crossover's rules).
    fn sides(&mut self, c: &Condition, values: ValuesKey, target: TargetKey) -> Rc<Sides> {
        let key = (values.clone(), target);
        if let Some(s) = self.sides.get(&key) {
            return s.clone();
        }
        let x = self.values(&c.source, c.transform);
        let y = self.target(c, values, &x);
        let s = Rc::new(Sides::of_from(&x, &y, self.from));
        self.sides.insert(key, s.clone());
        s
    }

    /// Where the block's rule fires, after its delay.
    pub fn block(&mut self, b: &Block) -> Rc<Fired> {
        let n = self.bars.len();
        let votes = |ws: &mut Self| -> Vec<Vec<bool>> {
            b.conditions
                .iter()
                .map(|c| ws.condition(c).to_bools())
                .collect()
        };
        let fired = match &b.kind {
            BlockKind::Never => Rc::new(Fired::none(n)),
            BlockKind::Single => match b.conditions.first() {
                Some(c) => self.condition(c),
                None => Rc::new(Fired::none(n)),
            },
            BlockKind::Scoring { threshold } => {
                Rc::new(Fired::from_bools(&rules::scoring(&votes(self), *threshold)))
            }
            BlockKind::TimeOrder { window } => {
                Rc::new(Fired::from_bools(&rules::time_order(&votes(self), *window)))
            }
        };
        match b.delay_bars {
            0 => fired,
            d => Rc::new(fired.delayed(d)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::indicators::sma;
    use crate::strategy::Technical;

    fn bars(n: usize) -> Bars {
        let mut b = Bars::default();
        let d0 = chrono::NaiveDate::from_ymd_opt(2020, 1, 1)
            .unwrap()
            .and_hms_opt(0, 0, 0)
            .unwrap();
        for i in 0..n {
            let c = 100.0 + 10.0 * (i as f64 * 0.21).sin() + (i % 13) as f64 * 0.5;
            b.push(
                d0 + chrono::TimeDelta::days(i as i64),
                c,
                c + 1.0,
                c - 1.0,
                c,
                1e6,
            );
        }
        b
    }

    #[test]
    fn every_operator_agrees_with_the_rule_definitions() {
        let b = bars(300);
        let mut ws = Workspace::new(&b);
        let ops = [
            Op::Gt,
            Op::Lt,
            Op::Eq,
            Op::Ge,
            Op::Le,
            Op::CrossAbove,
            Op::CrossBelow,
            Op::AllTimeHigh,
            Op::AllTimeLow,
            Op::ConsecutiveAbove(3),
            Op::ConsecutiveBelow(2),
        ];
        let rsi = Source::Technical(Technical::Rsi(14));
        for op in ops {
            for (comparison, target) in [
                (Comparison::Value(55.0), Target::Value(55.0)),
                (
                    Comparison::OwnAverage {
                        kind: MaKind::Simple,
                        period: 9,
                        offset_pct: 2.0,
                    },
                    Target::OwnAverage {
                        kind: MaKind::Simple,
                        period: 9,
                        offset_pct: 2.0,
                    },
                ),
            ] {
                let c = Condition {
                    source: rsi.clone(),
                    transform: None,
                    op,
                    comparison,
                };
                let want = rules::evaluate(&rsi.values(&b), op, &target);
                assert_eq!(ws.condition(&c).to_bools(), want, "{op:?}");
            }
        }
    }

    #[test]
    fn a_two_average_crossover_shares_its_averages() {
        let b = bars(500);
        let mut ws = Workspace::new(&b);
        for fast in [5, 10] {
            for slow in [20, 30, 40] {
                let c = Condition {
                    source: Source::Technical(Technical::Sma(fast)),
                    transform: None,
                    op: Op::CrossAbove,
                    comparison: Comparison::CloseAverage {
                        kind: MaKind::Simple,
                        period: slow,
                        offset_pct: 0.0,
                    },
                };
                let (f, s) = (sma(&b.close, fast), sma(&b.close, slow));
                let want = rules::evaluate(&f, Op::CrossAbove, &Target::Series(s.clone()));
                assert!(want.iter().any(|x| *x), "the case crosses");
                assert_eq!(ws.condition(&c).to_bools(), want);
                // The exit reads the same comparison of the two series.
                let exit = Condition {
                    op: Op::CrossBelow,
                    ..c
                };
                let want = rules::evaluate(&f, Op::CrossBelow, &Target::Series(s));
                assert_eq!(ws.condition(&exit).to_bools(), want);
            }
        }
        // Two fast series, three slow averages, six comparisons: each once.
        assert_eq!((ws.values.len(), ws.averages.len()), (2, 3));
        assert_eq!((ws.sides.len(), ws.fired.len()), (6, 0));
    }

    #[test]
    fn warmed_from_a_bar_a_grid_fires_as_a_plain_workspace_does_from_there() {
        let b = bars(500);
        let block = |fast: usize, slow: usize, op: Op, delay_bars: usize| Block {
            kind: BlockKind::Single,
            conditions: vec![Condition {
                source: Source::Technical(Technical::Sma(fast)),
                transform: None,
                op,
                comparison: Comparison::CloseAverage {
                    kind: MaKind::Simple,
                    period: slow,
                    offset_pct: 0.0,
                },
            }],
            delay_bars,
        };
        let grid: Vec<Block> = [3, 5, 8]
            .into_iter()
            .flat_map(|f| [12, 20, 31].map(move |s| (f, s)))
            .flat_map(|(f, s)| {
                [
                    block(f, s, Op::CrossAbove, 0),
                    block(f, s, Op::CrossBelow, 2),
                    block(f, s, Op::Gt, 0),
                ]
            })
            .collect();
        for from in [0usize, 1, 64, 130, 257, 470] {
            let mut plain = Workspace::new(&b);
            let mut warmed = Workspace::new(&b).from_bar(from.saturating_sub(2));
            warmed.warm(&grid);
            // Each pair of series compared once, by all three blocks.
            assert_eq!(warmed.sides.len(), 9);
            let mut fired = 0;
            for g in &grid {
                let (want, got) = (plain.block(g).to_bools(), warmed.block(g).to_bools());
                assert_eq!(got[from..], want[from..], "from {from}: {g:?}");
                fired += want[from..].iter().filter(|f| **f).count();
            }
            assert!(fired > 0, "the case fires after {from}");
            assert_eq!(warmed.sides.len(), 9, "the blocks found their sides");
        }
    }

    #[test]
    fn workspaces_sharing_averages_compute_each_once_and_stay_within_their_bytes() {
        let b = Arc::new(bars(500));
        let shared = SharedAverages::new(3 * 500 * 8);
        let crossing = |fast: usize, slow: usize| Condition {
            source: Source::Technical(Technical::Sma(fast)),
            transform: None,
            op: Op::CrossAbove,
            comparison: Comparison::CloseAverage {
                kind: MaKind::Simple,
                period: slow,
                offset_pct: 0.0,
            },
        };
        for fast in [5, 10] {
            // A chunk of its own per fast period, reading its own copy of
            // the bars: the slow averages are the first chunk's.
            let copy = Arc::new((*b).clone());
            let mut ws = Workspace::sharing(&copy, &shared);
            for slow in [20, 30, 40] {
                let want = rules::evaluate(
                    &sma(&b.close, fast),
                    Op::CrossAbove,
                    &Target::Series(sma(&b.close, slow)),
                );
                assert_eq!(ws.condition(&crossing(fast, slow)).to_bools(), want);
            }
        }
        assert_eq!(shared.held(), (3, 3 * 500 * 8));
        let held = shared.canonical(&b);
        assert!(!Arc::ptr_eq(&held, &b), "the first chunk's copy");
        let first = shared
            .get(&held, &(close_key(), MaKind::Simple, 20))
            .expect("held");
        let mut ws = Workspace::sharing(&b, &shared);
        ws.condition(&crossing(5, 20));
        assert!(Arc::ptr_eq(
            &ws.averages[&(close_key(), MaKind::Simple, 20)],
            &first
        ));
        // A fourth average pushes the oldest out; other bars never read these.
        let mut ws = Workspace::sharing(&b, &shared);
        ws.condition(&crossing(5, 50));
        assert_eq!(shared.held(), (3, 3 * 500 * 8));
        assert!(
            shared
                .get(&held, &(close_key(), MaKind::Simple, 20))
                .is_none()
        );
        // Bars that differ in one value are other bars.
        let mut other = (*b).clone();
        other.close[499] += 1.0;
        let other = Arc::new(other);
        assert!(Arc::ptr_eq(&shared.canonical(&other), &other));
        assert!(
            shared
                .get(&other, &(close_key(), MaKind::Simple, 30))
                .is_none()
        );
    }
}
