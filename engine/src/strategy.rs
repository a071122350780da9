//! A strategy's rule blocks, resolved to data, evaluated into entry and exit
//! signals. Names, JSON and data loading are the caller's; this is the math.

use crate::Bars;
use crate::indicators as ta;
use crate::rules::{MaKind, Op, Transform};
use crate::workspace::Workspace;
use std::sync::Arc;

/// Price columns a Symbol signal can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    Open,
    High,
    Low,
    Close,
    Volume,
}

/// Technical indicators of the traded symbol, with their parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Technical {
    Rsi(usize),
    Sma(usize),
    Ema(usize),
    MacdLine(usize, usize, usize),
    MacdSignal(usize, usize, usize),
    MacdHistogram(usize, usize, usize),
    BollingerUpper(usize, f64),
    BollingerMiddle(usize, f64),
    BollingerLower(usize, f64),
    StochK(usize, usize, usize),
    StochD(usize, usize, usize),
    Atr(usize),
    Adx(usize),
    Cci(usize),
    WilliamsR(usize),
    Roc(usize),
    Mfi(usize),
    Obv,
}

impl Technical {
    /// The same indicator over `n` bars, when it has one period to set.
    pub fn with_period(self, n: usize) -> Option<Technical> {
        use Technical::*;
        Some(match self {
            Rsi(_) => Rsi(n),
            Sma(_) => Sma(n),
            Ema(_) => Ema(n),
            BollingerUpper(_, k) => BollingerUpper(n, k),
            BollingerMiddle(_, k) => BollingerMiddle(n, k),
            BollingerLower(_, k) => BollingerLower(n, k),
            Atr(_) => Atr(n),
            Adx(_) => Adx(n),
            Cci(_) => Cci(n),
            WilliamsR(_) => WilliamsR(n),
            Roc(_) => Roc(n),
            Mfi(_) => Mfi(n),
            MacdLine(..) | MacdSignal(..) | MacdHistogram(..) | StochK(..) | StochD(..) | Obv => {
                return None;
            }
        })
    }

    /// The indicator and its parameters as plain numbers, for hashing.
    pub fn key(self) -> (u8, [u64; 3]) {
        use Technical::*;
        let n = |x: usize| x as u64;
        match self {
            Rsi(a) => (0, [n(a), 0, 0]),
            Sma(a) => (1, [n(a), 0, 0]),
            Ema(a) => (2, [n(a), 0, 0]),
            MacdLine(a, b, c) => (3, [n(a), n(b), n(c)]),
            MacdSignal(a, b, c) => (4, [n(a), n(b), n(c)]),
            MacdHistogram(a, b, c) => (5, [n(a), n(b), n(c)]),
            BollingerUpper(a, k) => (6, [n(a), k.to_bits(), 0]),
            BollingerMiddle(a, k) => (7, [n(a), k.to_bits(), 0]),
            BollingerLower(a, k) => (8, [n(a), k.to_bits(), 0]),
            StochK(a, b, c) => (9, [n(a), n(b), n(c)]),
            StochD(a, b, c) => (10, [n(a), n(b), n(c)]),
            Atr(a) => (11, [n(a), 0, 0]),
            Adx(a) => (12, [n(a), 0, 0]),
            Cci(a) => (13, [n(a), 0, 0]),
            WilliamsR(a) => (14, [n(a), 0, 0]),
            Roc(a) => (15, [n(a), 0, 0]),
            Mfi(a) => (16, [n(a), 0, 0]),
            Obv => (17, [0, 0, 0]),
        }
    }

    pub fn compute(self, b: &Bars) -> Vec<f64> {
        let (h, l, c, v) = (&b.high, &b.low, &b.close, &b.volume);
        match self {
            Technical::Rsi(n) => ta::rsi(c, n),
            Technical::Sma(n) => ta::sma(c, n),
            Technical::Ema(n) => ta::ema(c, n),
            Technical::MacdLine(f, s, g) => ta::macd(c, f, s, g).0,
            Technical::MacdSignal(f, s, g) => ta::macd(c, f, s, g).1,
            Technical::MacdHistogram(f, s, g) => ta::macd(c, f, s, g).2,
            Technical::BollingerUpper(n, k) => ta::bbands(c, n, k, k).0,
            Technical::BollingerMiddle(n, k) => ta::bbands(c, n, k, k).1,
            Technical::BollingerLower(n, k) => ta::bbands(c, n, k, k).2,
            Technical::StochK(f, s, d) => ta::stoch(h, l, c, f, s, d).0,
            Technical::StochD(f, s, d) => ta::stoch(h, l, c, f, s, d).1,
            Technical::Atr(n) => ta::atr(h, l, c, n),
            Technical::Adx(n) => ta::adx(h, l, c, n),
            Technical::Cci(n) => ta::cci(h, l, c, n),
            Technical::WilliamsR(n) => ta::willr(h, l, c, n),
            Technical::Roc(n) => ta::roc(c, n),
            Technical::Mfi(n) => ta::mfi(h, l, c, v, n),
            Technical::Obv => ta::obv(c, v),
        }
    }
}

/// Where a condition's signal values come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    Column(Column),
    Technical(Technical),
    /// Values already aligned to the bars (sentiment readings, CSV columns);
    /// strategies that share one allocation share its signals.
    Series(Arc<Vec<f64>>),
}

impl Source {
    pub fn values(&self, b: &Bars) -> Vec<f64> {
        match self {
            Source::Column(Column::Open) => b.open.clone(),
            Source::Column(Column::High) => b.high.clone(),
            Source::Column(Column::Low) => b.low.clone(),
            Source::Column(Column::Close) => b.close.clone(),
            Source::Column(Column::Volume) => b.volume.clone(),
            Source::Technical(t) => t.compute(b),
            Source::Series(s) => s.to_vec(),
        }
    }
}

/// What the (transformed) signal is compared with.
#[derive(Debug, Clone, PartialEq)]
pub enum Comparison {
    /// SV: a constant.
    Value(f64),
    /// SVMA / SVEMA: the signal's own average, shifted by a percent offset.
    OwnAverage {
        kind: MaKind,
        period: usize,
        offset_pct: f64,
    },
    /// MA: the traded symbol's close's moving average of `period` bars,
    /// shifted by a percent offset. The signal is the close itself for the
    /// classic price-crosses-average rule, or a faster average of the close
    /// for a two-average crossover.
    CloseAverage {
        kind: MaKind,
        period: usize,
        offset_pct: f64,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    pub source: Source,
    pub transform: Option<Transform>,
    pub op: Op,
    pub comparison: Comparison,
}

impl Condition {
    pub fn evaluate(&self, b: &Bars) -> Vec<bool> {
        Workspace::new(b).condition(self).to_bools()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum BlockKind {
    Single,
    Scoring {
        threshold: usize,
    },
    TimeOrder {
        window: usize,
    },
    /// RiskControlOnly: no signal ever fires; risk control alone exits.
    Never,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub kind: BlockKind,
    pub conditions: Vec<Condition>,
    pub delay_bars: usize,
}

impl Block {
    /// Where the block's rule fires, after its delay.
    pub fn signal(&self, b: &Bars) -> Vec<bool> {
        Workspace::new(b).block(self).to_bools()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bars(close: &[f64]) -> Bars {
        let mut b = Bars::default();
        let d0 = chrono::NaiveDate::from_ymd_opt(2024, 1, 1)
            .unwrap()
            .and_hms_opt(0, 0, 0)
            .unwrap();
        for (i, c) in close.iter().enumerate() {
            b.push(
                d0 + chrono::TimeDelta::days(i as i64),
                *c,
                c + 1.0,
                c - 1.0,
                *c,
                100.0 * (i + 1) as f64,
            );
        }
        b
    }

    fn cond(source: Source, op: Op, comparison: Comparison) -> Condition {
        Condition {
            source,
            transform: None,
            op,
            comparison,
        }
    }

    #[test]
    fn close_versus_average_compares_price_with_its_ma() {
        // SMA(2) of close: [NaN, 2.5, 1.5, 2.0, 3.0]; close crosses above on bar 3 only
        // (bar 4 closes equal to its average).
        let b = bars(&[3.0, 2.0, 1.0, 3.0, 3.0]);
        let c = cond(
            Source::Column(Column::Close),
            Op::CrossAbove,
            Comparison::CloseAverage {
                kind: MaKind::Simple,
                period: 2,
                offset_pct: 0.0,
            },
        );
        assert_eq!(c.evaluate(&b), [false, false, false, true, false]);
        let c = cond(
            Source::Column(Column::Close),
            Op::Lt,
            Comparison::CloseAverage {
                kind: MaKind::Simple,
                period: 2,
                offset_pct: 0.0,
            },
        );
        assert_eq!(c.evaluate(&b), [false, true, true, false, false]);
    }

    #[test]
    fn blocks_combine_and_delay() {
        let b = bars(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        let above = |v| cond(Source::Column(Column::Close), Op::Gt, Comparison::Value(v));
        let single = Block {
            kind: BlockKind::Single,
            conditions: vec![above(3.5)],
            delay_bars: 1,
        };
        assert_eq!(single.signal(&b), [false, false, false, false, true]);
        let vote = Block {
            kind: BlockKind::Scoring { threshold: 2 },
            conditions: vec![above(1.5), above(2.5), above(10.0)],
            delay_bars: 0,
        };
        assert_eq!(vote.signal(&b), [false, false, true, true, true]);
        let volume = cond(
            Source::Column(Column::Volume),
            Op::Gt,
            Comparison::Value(250.0),
        );
        assert_eq!(volume.evaluate(&b), [false, false, true, true, true]);
        let never = Block {
            kind: BlockKind::Never,
            conditions: vec![],
            delay_bars: 0,
        };
        assert_eq!(never.signal(&b), [false; 5]);
        let seq = Block {
            kind: BlockKind::TimeOrder { window: 10 },
            conditions: vec![above(1.5), above(3.5)],
            delay_bars: 0,
        };
        assert_eq!(seq.signal(&b), [false, false, false, true, false]);
    }

    #[test]
    fn qualifier_transforms_before_comparing() {
        let b = bars(&[10.0, 11.0, 12.1, 12.1, 13.31]);
        let c = Condition {
            source: Source::Column(Column::Close),
            transform: Some(Transform::RateOfChange(1)),
            op: Op::Gt,
            comparison: Comparison::Value(9.0),
        };
        // +10%, +10%, 0%, +10%.
        assert_eq!(c.evaluate(&b), [false, true, true, false, true]);
    }
}
