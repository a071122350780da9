//! The trade statistics the pattern backtest and the scanner backtest both
//! answer with, under the spec's names: one type, one computation
//! ([`engine::stats::TradeReturns`]), so the two cannot count differently.

use engine::stats::TradeReturns;
use serde::Serialize;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// Percentages unless a count. A zero return is neither positive nor negative.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct TradeStats {
    /// The pattern backtest's trades compounded in order of entry; the
    /// scanner backtest's final equity over its capital, less 1.
    #[serde(rename = "TOTAL RETURN")]
    pub total_return: f64,
    #[serde(rename = "MEDIAN RETURN")]
    pub median_return: f64,
    #[serde(rename = "AVERAGE RETURN")]
    pub average_return: f64,
    /// Share of trades with a positive return.
    #[serde(rename = "WIN RATE")]
    pub win_rate: f64,
    #[serde(rename = "AVERAGE WIN")]
    pub average_win: f64,
    #[serde(rename = "AVERAGE LOSS")]
    pub average_loss: f64,
    #[serde(rename = "TOTAL TRADES")]
    pub total_trades: usize,
    #[serde(rename = "TOTAL POSITIVE")]
    pub total_positive: usize,
    #[serde(rename = "TOTAL NEGATIVE")]
    pub total_negative: usize,
}

impl TradeStats {
    pub fn new(total_return: f64, r: &TradeReturns) -> TradeStats {
        TradeStats {
            total_return,
            median_return: r.median,
            average_return: r.average,
            win_rate: r.win_rate,
            average_win: r.average_win,
            average_loss: r.average_loss,
            total_trades: r.trades,
            total_positive: r.positive,
            total_negative: r.negative,
        }
    }
}
