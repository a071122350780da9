//! The scanner's answers, serialized from these types.

use serde::Serialize;
use std::collections::BTreeMap;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// A signal as the scanner lists it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct SignalInfo {
    /// The signal's name, as scanner items carry it in `_Signal`.
    pub name: &'static str,
    /// One of the six categories.
    pub category: &'static str,
    /// What makes it fire, and on which side.
    pub description: &'static str,
    /// `SwingAI` or `MidTermAI`: the `category` filter of `latest-day-all`.
    pub horizon: &'static str,
    /// Sessions a trade on it is held at most.
    pub time_in_market: usize,
}

/// `data` of `get-predefined-signals`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct SignalList {
    pub signals: Vec<SignalInfo>,
    /// Category name -> its signals.
    pub categories: BTreeMap<&'static str, Vec<SignalInfo>>,
}
