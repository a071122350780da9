//! The smart stock scanner's 37 signals (analytics 2.5): each a documented
//! formula over a stock's daily bars (and, for the Optix category, its
//! sentiment reading), giving per bar whether it fired and on which side.
//! One file per category holds the formulas and their hand-made tests;
//! [`SIGNALS`] lists them with the spec's names.

pub mod candles;
pub mod fire;
pub mod highs_lows;
pub mod items;
pub mod optix;
pub mod patterns;
pub mod portfolio;
pub mod stats;
pub mod technical;
pub mod trend;

pub use fire::{Direction, Firings};

use highs_lows::Extreme;

/// What the signals read: a stock's daily columns, and its Optix reading on
/// the same bars (NaN where there is none).
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    pub open: &'a [f64],
    pub high: &'a [f64],
    pub low: &'a [f64],
    pub close: &'a [f64],
    pub optix: Option<&'a [f64]>,
}

/// The six categories, with the spec's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    Technical,
    Candlestick,
    Optix,
    Cpm,
    HighLow,
    TrendScore,
}

impl Category {
    pub const ALL: [Category; 6] = [
        Category::Technical,
        Category::Candlestick,
        Category::Optix,
        Category::Cpm,
        Category::HighLow,
        Category::TrendScore,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Category::Technical => "Technical Indicator",
            Category::Candlestick => "Candlestick Pattern",
            Category::Optix => "Optix Signal",
            Category::Cpm => "CPM Pattern",
            Category::HighLow => "High/Low Signal",
            Category::TrendScore => "Trend Score",
        }
    }
}

/// A signal: its name as the API writes it, its category, what it means,
/// and its formula.
#[derive(Clone, Copy)]
pub struct Signal {
    pub name: &'static str,
    pub category: Category,
    pub description: &'static str,
    pub fire: fn(&Inputs) -> Firings,
}

/// The scanner's two horizons: swing trades of a week, mid-term trades of a month.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Horizon {
    SwingAI,
    MidTermAI,
}

impl Horizon {
    pub fn name(self) -> &'static str {
        match self {
            Horizon::SwingAI => "SwingAI",
            Horizon::MidTermAI => "MidTermAI",
        }
    }

    pub fn parse(s: &str) -> Option<Horizon> {
        [Horizon::SwingAI, Horizon::MidTermAI]
            .into_iter()
            .find(|h| h.name() == s)
    }

    /// Sessions a trade on the signal is held at most.
    pub fn hold(self) -> usize {
        match self {
            Horizon::SwingAI => 5,
            Horizon::MidTermAI => 21,
        }
    }
}

impl Signal {
    /// Short-term price signals are swing trades; sentiment, extremes and
    /// trend scores move slower and are held a month.
    pub fn horizon(&self) -> Horizon {
        match self.category {
            Category::Technical | Category::Candlestick | Category::Cpm => Horizon::SwingAI,
            Category::Optix | Category::HighLow | Category::TrendScore => Horizon::MidTermAI,
        }
    }
}

impl std::fmt::Debug for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signal").field("name", &self.name).finish()
    }
}

fn candles<'a>(i: &Inputs<'a>) -> candles::Candles<'a> {
    candles::Candles {
        open: i.open,
        high: i.high,
        low: i.low,
        close: i.close,
    }
}

/// An Optix signal on a stock without a reading never fires.
fn with_optix(i: &Inputs, f: fn(&[f64], &[f64]) -> Firings) -> Firings {
    match i.optix {
        Some(o) => f(i.close, o),
        None => vec![None; i.close.len()],
    }
}

fn extreme(i: &Inputs, window: Option<usize>, e: Extreme) -> Firings {
    let flags = match window {
        Some(w) => highs_lows::rolling(i.close, w, e),
        None => highs_lows::all_time(i.close, e),
    };
    let side = match e {
        Extreme::High => Direction::Long,
        Extreme::Low => Direction::Short,
    };
    fire::only(&flags, side)
}

/// The registry from a table: under each category, `name = description =>
/// what fires it;`.
macro_rules! signals {
    ($($category:ident { $($name:literal = $description:literal => $fire:expr;)* })*) => {
        [$($(Signal {
            name: $name,
            category: Category::$category,
            description: $description,
            fire: $fire,
        },)*)*]
    };
}

/// Every signal, by category in the spec's order.
#[rustfmt::skip]
pub const SIGNALS: [Signal; 37] = signals! {
    Technical {
        "MA" = "The close crosses its 20-day average: above Long, below Short."
            => |i| technical::ma(i.close);
        "MAGap" = "The 20-day average's day-over-day change turns positive (Long) or negative (Short)."
            => |i| technical::ma_gap(i.close);
        "MACDHist" = "The MACD(12, 26, 9) histogram crosses zero: up Long, down Short."
            => |i| technical::macd_hist(i.close);
        "MACDHistGap" = "The MACD histogram turns up below zero (Long) or down above zero (Short)."
            => |i| technical::macd_hist_gap(i.close);
        "RSI" = "RSI(14) crosses above 35: Long."
            => |i| technical::rsi_cross(i.close);
        "PriceBreakout" = "The close ranks above 0 against the 21 closes before it after ranking 0 the day before: Long."
            => |i| technical::price_breakout(i.close);
        "HighPoints" = "The high ranks 100 against the 13 highs before it: Long."
            => |i| technical::high_points(i.high);
        "LowPoints" = "The low is below the 13 lows before it: Short."
            => |i| technical::low_points(i.low);
    }
    Candlestick {
        "Hammer" = "A hammer (TA-Lib CDLHAMMER) followed by a higher close: Long."
            => |i| fire::only(&candles::followed_by(&candles::hammer(&candles(i)), i.close, true), Direction::Long);
        "Shooting Star" = "A shooting star (TA-Lib CDLSHOOTINGSTAR) followed by a lower close: Short."
            => |i| fire::only(&candles::followed_by(&candles::shooting_star(&candles(i)), i.close, false), Direction::Short);
        "UpTrend Pattern" = "Three bars in a row with higher highs and higher lows: Long."
            => |i| patterns::up_trend(i.high, i.low);
        "DownTrend Pattern" = "Three bars in a row with lower highs and lower lows: Short."
            => |i| patterns::down_trend(i.high, i.low);
    }
    Optix {
        "Optix #1" = "Close above its 200-day average and the Optix 5-day average below 35: Long."
            => |i| with_optix(i, optix::optix_1);
        "Optix #2" = "Close above its 200-day average and Optix below 30: Long."
            => |i| with_optix(i, optix::optix_2);
        "Optix #3" = "The Optix 10-day average below 30 and Optix below 20: Long."
            => |i| with_optix(i, optix::optix_3);
        "Optix #4" = "Optix crosses below 0.5: Long."
            => |i| with_optix(i, optix::optix_4);
        "Optix #5" = "Close above its 200-day average; the Optix 5-day average crosses above 43 within 20 days of being below 35: Long."
            => |i| with_optix(i, optix::optix_5);
        "Optix #6" = "The same with the Optix 10-day average: Long."
            => |i| with_optix(i, optix::optix_6);
        "Optix #7" = "Close above its 200-day average; Optix crosses above 43 within 20 days of being below 30: Long."
            => |i| with_optix(i, optix::optix_7);
    }
    Cpm {
        "Head and Shoulders Top" = "The last 20 closes match the head-and-shoulders top at 85 or more: Short."
            => |i| patterns::shape_completed("head_and_shoulder_top", i.close);
        "Head and Shoulders Bottom" = "The last 20 closes match the head-and-shoulders bottom at 85 or more: Long."
            => |i| patterns::shape_completed("head_and_shoulder_bottom", i.close);
        "Double Top" = "The last 20 closes match the double top at 85 or more: Short."
            => |i| patterns::shape_completed("double_top", i.close);
        "Double Bottom" = "The last 20 closes match the double bottom at 85 or more: Long."
            => |i| patterns::shape_completed("double_bottom", i.close);
        "Triple Tap" = "The last 20 closes match the triple top at 85 or more: Short."
            => |i| patterns::shape_completed("triple_tap", i.close);
        "Rounding Bottom" = "The last 20 closes match the rounding bottom at 85 or more: Long."
            => |i| patterns::shape_completed("rounding_bottom", i.close);
        "Ascending Channel" = "The last 20 closes match the ascending channel at 85 or more: Long."
            => |i| patterns::shape_completed("ascending_channel", i.close);
        "Descending Channel" = "The last 20 closes match the descending channel at 85 or more: Short."
            => |i| patterns::shape_completed("descending_channel", i.close);
    }
    HighLow {
        "Symbol All-Time High" = "The highest close so far (after a year of history): Long."
            => |i| extreme(i, None, Extreme::High);
        "Symbol All-Time Low" = "The lowest close so far (after a year of history): Short."
            => |i| extreme(i, None, Extreme::Low);
        "Symbol 52-Week High" = "The highest close of the last 252 sessions: Long."
            => |i| extreme(i, Some(highs_lows::WEEKS_52), Extreme::High);
        "Symbol 52-Week Low" = "The lowest close of the last 252 sessions: Short."
            => |i| extreme(i, Some(highs_lows::WEEKS_52), Extreme::Low);
        "Symbol 4-Week High" = "The highest close of the last 20 sessions: Long."
            => |i| extreme(i, Some(highs_lows::WEEKS_4), Extreme::High);
        "Symbol 4-Week Low" = "The lowest close of the last 20 sessions: Short."
            => |i| extreme(i, Some(highs_lows::WEEKS_4), Extreme::Low);
        "Symbol 13-Week High" = "The highest close of the last 63 sessions: Long."
            => |i| extreme(i, Some(highs_lows::WEEKS_13), Extreme::High);
        "Symbol 13-Week Low" = "The lowest close of the last 63 sessions: Short."
            => |i| extreme(i, Some(highs_lows::WEEKS_13), Extreme::Low);
    }
    TrendScore {
        "Trend Score Breakout" = "The trend score rises above 7: Long."
            => |i| trend::breakout(i.close);
        "Trend Score Breakdown" = "The trend score falls below 3: Short."
            => |i| trend::breakdown(i.close);
    }
};

/// The signal of that name.
pub fn signal(name: &str) -> Option<&'static Signal> {
    SIGNALS.iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registry_has_the_spec_s_counts_and_unique_names() {
        let counts: Vec<usize> = Category::ALL
            .iter()
            .map(|c| SIGNALS.iter().filter(|s| s.category == *c).count())
            .collect();
        assert_eq!(counts, vec![8, 4, 7, 8, 8, 2]);
        let names: std::collections::HashSet<&str> = SIGNALS.iter().map(|s| s.name).collect();
        assert_eq!(names.len(), 37);
        assert!(signal("Symbol 52-Week High").is_some() && signal("Nope").is_none());
        assert_eq!(signal("MA").unwrap().horizon().hold(), 5);
        assert_eq!(signal("Optix #2").unwrap().horizon(), Horizon::MidTermAI);
    }

    #[test]
    fn every_signal_runs_on_any_series_and_optix_needs_a_reading() {
        let n = 400;
        let close: Vec<f64> = (0..n)
            .map(|i| 100.0 + 10.0 * (i as f64 / 9.0).sin() + i as f64 * 0.05)
            .collect();
        let high: Vec<f64> = close.iter().map(|c| c + 1.0).collect();
        let low: Vec<f64> = close.iter().map(|c| c - 1.0).collect();
        let open: Vec<f64> = close.iter().map(|c| c - 0.3).collect();
        let optix: Vec<f64> = (0..n)
            .map(|i| 50.0 + 45.0 * (i as f64 / 13.0).sin())
            .collect();
        let with = Inputs {
            open: &open,
            high: &high,
            low: &low,
            close: &close,
            optix: Some(&optix),
        };
        let without = Inputs {
            optix: None,
            ..with
        };
        let mut fired = 0;
        for s in &SIGNALS {
            let f = (s.fire)(&with);
            assert_eq!(f.len(), n, "{}", s.name);
            fired += f.iter().flatten().count();
            if s.category == Category::Optix {
                assert!((s.fire)(&without).iter().all(Option::is_none), "{}", s.name);
            }
        }
        assert!(fired > 0);
        assert!(
            (SIGNALS[0].fire)(&Inputs {
                open: &[],
                high: &[],
                low: &[],
                close: &[],
                optix: None
            })
            .is_empty()
        );
    }
}
