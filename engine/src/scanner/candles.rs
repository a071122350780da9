//! Hammer and Shooting Star with TA-Lib's rules and default candle settings
//! (CDLHAMMER, CDLSHOOTINGSTAR): the averages of earlier candles are running
//! sums updated as TA-Lib updates them, so the same candles qualify to the
//! last bit. The scanner's signals add the follow-through their names state.

/// What a candle setting measures.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Range {
    RealBody,
    HighLow,
}

/// A TA-Lib candle setting: the average `range` of the `period` candles
/// before (the candle itself when `period` is 0), times `factor`.
#[derive(Debug, Clone, Copy)]
struct Setting {
    range: Range,
    period: usize,
    factor: f64,
}

const BODY_SHORT: Setting = Setting {
    range: Range::RealBody,
    period: 10,
    factor: 1.0,
};
const SHADOW_LONG: Setting = Setting {
    range: Range::RealBody,
    period: 0,
    factor: 1.0,
};
const SHADOW_VERY_SHORT: Setting = Setting {
    range: Range::HighLow,
    period: 10,
    factor: 0.1,
};
const NEAR: Setting = Setting {
    range: Range::HighLow,
    period: 5,
    factor: 0.2,
};

/// Candles before the first that can qualify (TA-Lib's lookback).
pub const LOOKBACK: usize = 11;

/// Open, high, low and close columns.
#[derive(Debug, Clone, Copy)]
pub struct Candles<'a> {
    pub open: &'a [f64],
    pub high: &'a [f64],
    pub low: &'a [f64],
    pub close: &'a [f64],
}

impl Candles<'_> {
    fn range(&self, r: Range, i: usize) -> f64 {
        match r {
            Range::RealBody => (self.close[i] - self.open[i]).abs(),
            Range::HighLow => self.high[i] - self.low[i],
        }
    }

    fn body(&self, i: usize) -> f64 {
        (self.close[i] - self.open[i]).abs()
    }

    fn upper_shadow(&self, i: usize) -> f64 {
        self.high[i] - self.close[i].max(self.open[i])
    }

    fn lower_shadow(&self, i: usize) -> f64 {
        self.close[i].min(self.open[i]) - self.low[i]
    }
}

/// A setting's running total over the candles `trailing..end`, moved one
/// candle at a time as TA-Lib moves it.
struct Running {
    setting: Setting,
    total: f64,
    trailing: usize,
}

impl Running {
    /// The total over the `period` candles before `end`.
    fn new(c: &Candles, setting: Setting, end: usize) -> Running {
        let trailing = end - setting.period;
        let mut total = 0.0;
        for i in trailing..end {
            total += c.range(setting.range, i);
        }
        Running {
            setting,
            total,
            trailing,
        }
    }

    /// The average the setting compares candle `i` with.
    fn average(&self, c: &Candles, i: usize) -> f64 {
        let s = self.setting;
        let base = if s.period == 0 {
            c.range(s.range, i)
        } else {
            self.total / s.period as f64
        };
        s.factor * base
    }

    /// Adds candle `i` and drops the trailing one.
    fn advance(&mut self, c: &Candles, i: usize) {
        self.total += c.range(self.setting.range, i) - c.range(self.setting.range, self.trailing);
        self.trailing += 1;
    }
}

/// The averages a candle is compared with.
struct Averages {
    body: f64,
    long_shadow: f64,
    very_short_shadow: f64,
    /// Of the candle before.
    near_before: f64,
}

/// Each candle from [`LOOKBACK`] on tested by `test` against its averages,
/// the running totals moved as TA-Lib moves them.
fn each_candle(c: &Candles, test: impl Fn(usize, &Averages) -> bool) -> Vec<bool> {
    let n = c.close.len();
    let mut out = vec![false; n];
    if n <= LOOKBACK {
        return out;
    }
    let start = LOOKBACK;
    let mut body = Running::new(c, BODY_SHORT, start);
    let mut long = Running::new(c, SHADOW_LONG, start);
    let mut very_short = Running::new(c, SHADOW_VERY_SHORT, start);
    let mut near = Running::new(c, NEAR, start - 1);
    for (i, hit) in out.iter_mut().enumerate().skip(start) {
        let averages = Averages {
            body: body.average(c, i),
            long_shadow: long.average(c, i),
            very_short_shadow: very_short.average(c, i),
            near_before: near.average(c, i - 1),
        };
        *hit = test(i, &averages);
        body.advance(c, i);
        long.advance(c, i);
        very_short.advance(c, i);
        near.advance(c, i - 1);
    }
    out
}

/// TA-Lib's CDLHAMMER: a small real body, a lower shadow longer than the
/// body, almost no upper shadow, and the body at or near the prior candle's
/// low.
pub fn hammer(c: &Candles) -> Vec<bool> {
    each_candle(c, |i, a| {
        c.body(i) < a.body
            && c.lower_shadow(i) > a.long_shadow
            && c.upper_shadow(i) < a.very_short_shadow
            && c.close[i].min(c.open[i]) <= c.low[i - 1] + a.near_before
    })
}

/// TA-Lib's CDLSHOOTINGSTAR: a small real body, an upper shadow longer than
/// the body, almost no lower shadow, and the body gapping up from the prior
/// candle's body.
pub fn shooting_star(c: &Candles) -> Vec<bool> {
    each_candle(c, |i, a| {
        c.body(i) < a.body
            && c.upper_shadow(i) > a.long_shadow
            && c.lower_shadow(i) < a.very_short_shadow
            && c.close[i].min(c.open[i]) > c.close[i - 1].max(c.open[i - 1])
    })
}

/// Fires on the bar after a `pattern` bar whose close is above (`rise`) or
/// below the pattern bar's close: "Hammer followed by a rise", "Shooting
/// Star followed by a fall".
pub fn followed_by(pattern: &[bool], closes: &[f64], rise: bool) -> Vec<bool> {
    let mut out = vec![false; closes.len()];
    for i in 1..closes.len() {
        out[i] = pattern[i - 1]
            && if rise {
                closes[i] > closes[i - 1]
            } else {
                closes[i] < closes[i - 1]
            };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eleven plain candles (body 1, range 2), then the candle under test.
    fn with_last(o: f64, h: f64, l: f64, c: f64) -> (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) {
        let mut open: Vec<f64> = vec![10.0; 11];
        let mut close: Vec<f64> = vec![11.0; 11];
        let mut high: Vec<f64> = vec![11.5; 11];
        let mut low: Vec<f64> = vec![9.5; 11];
        open.push(o);
        high.push(h);
        low.push(l);
        close.push(c);
        (open, high, low, close)
    }

    fn last(f: fn(&Candles) -> Vec<bool>, o: f64, h: f64, l: f64, c: f64) -> bool {
        let (open, high, low, close) = with_last(o, h, l, c);
        let v = f(&Candles {
            open: &open,
            high: &high,
            low: &low,
            close: &close,
        });
        assert!(v[..11].iter().all(|x| !x), "nothing before the lookback");
        v[11]
    }

    #[test]
    fn hammers_by_hand() {
        // Averages: body 1, high-low 2 (very short shadow < 0.2), near the
        // prior low: <= 9.5 + 0.2 x 2 = 9.9.
        assert!(last(hammer, 9.8, 9.9, 8.0, 9.9)); // body 0.1, lower 1.8, upper 0
        assert!(
            !last(hammer, 9.8, 10.2, 8.0, 9.9),
            "upper shadow 0.3 is not very short"
        );
        assert!(
            !last(hammer, 9.8, 9.9, 9.75, 9.9),
            "lower shadow 0.05 is not longer than the body"
        );
        assert!(
            !last(hammer, 10.8, 10.9, 8.0, 10.9),
            "body above the prior candle's low"
        );
        assert!(!last(hammer, 8.5, 9.6, 8.0, 9.6), "body 1.1 is not small");
    }

    #[test]
    fn shooting_stars_by_hand() {
        // Gap up: the body's low above the prior body's top (11).
        assert!(last(shooting_star, 11.2, 13.0, 11.15, 11.3));
        assert!(!last(shooting_star, 10.9, 13.0, 10.85, 11.0), "no gap up");
        assert!(
            !last(shooting_star, 11.2, 13.0, 10.9, 11.3),
            "lower shadow 0.3 is not very short"
        );
        assert!(
            !last(shooting_star, 11.2, 11.35, 11.15, 11.3),
            "upper shadow 0.05 is not long"
        );
    }

    #[test]
    fn follow_through() {
        let pattern = [false, true, false, true, false];
        let closes = [10.0, 9.0, 9.5, 9.4, 9.3];
        assert_eq!(
            followed_by(&pattern, &closes, true),
            vec![false, false, true, false, false]
        );
        assert_eq!(
            followed_by(&pattern, &closes, false),
            vec![false, false, false, false, true]
        );
    }
}
