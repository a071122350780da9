//! Pure, synchronous market computation.
//!
//! Nothing here knows about HTTP, tasks, storage or JSON envelopes: functions take
//! columns and return plain structs, so the same numbers come out of every runtime.

pub mod backtest;
pub mod bars;
pub mod calendar;
pub mod correlation;
pub mod cpm;
pub mod custom;
pub mod event_days;
pub mod fired;
pub mod indicators;
mod lanes;
pub mod options;
pub mod overfitting;
pub mod patterns;
pub mod portfolio;
pub mod rules;
pub mod scanner;
pub mod seasonality;
pub mod stats;
pub mod strategy;
pub mod workspace;

pub use bars::{Bars, BarsError, Frequency};
