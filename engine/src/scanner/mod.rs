//! Formulas of the smart stock scanner's signals (analytics 2.5), each a
//! flag per bar saying whether the signal fires on that bar's close.

pub mod candles;
pub mod highs_lows;
