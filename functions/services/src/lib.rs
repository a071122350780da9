//! The use cases between the ports and the HTTP layer: request models that
//! validate and name the offending field, and the jobs the worker runs. Both
//! the HTTP functions and the worker link this crate; it links no HTTP crate.

pub mod backtest;
pub mod jobs;
