//! The smart stock scanner (analytics 2.5, 4.4): its signals, from the
//! engine's registry. The nightly job and the day's signals are to come.

pub mod answers;

use answers::{SignalInfo, SignalList};
use engine::scanner::{Category, SIGNALS};
use std::collections::BTreeMap;

/// `GET /smart-stock-scanner/get-predefined-signals`: every signal, flat and
/// by category (categories in the spec's order).
pub fn predefined_signals() -> SignalList {
    let info = |s: &engine::scanner::Signal| SignalInfo {
        name: s.name,
        category: s.category.name(),
        description: s.description,
        horizon: s.horizon().name(),
        time_in_market: s.horizon().hold(),
    };
    let mut categories = BTreeMap::new();
    for c in Category::ALL {
        categories.insert(
            c.name(),
            SIGNALS
                .iter()
                .filter(|s| s.category == c)
                .map(info)
                .collect(),
        );
    }
    SignalList {
        signals: SIGNALS.iter().map(info).collect(),
        categories,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_signal_listed_flat_and_by_category() {
        let list = predefined_signals();
        assert_eq!(list.signals.len(), 37);
        assert_eq!(list.categories.len(), 6);
        assert_eq!(list.categories["Optix Signal"].len(), 7);
        assert_eq!(list.categories.values().map(Vec::len).sum::<usize>(), 37);
        let hammer = list.signals.iter().find(|s| s.name == "Hammer").unwrap();
        assert_eq!(
            (hammer.category, hammer.horizon, hammer.time_in_market),
            ("Candlestick Pattern", "SwingAI", 5)
        );
    }
}
