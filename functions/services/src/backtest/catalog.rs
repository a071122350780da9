//! The indicator catalog found by name, as signals name its entries.

use platform::marketdata::IndicatorMeta;
use std::collections::HashMap;

/// The indicator catalog with its entries found by name: a grid resolves
/// the same few names for each of its strategies, and a search of the
/// catalog's hundreds of entries took a twentieth of a large grid's time.
#[derive(Debug, Clone)]
pub struct Catalog {
    list: std::sync::Arc<Vec<IndicatorMeta>>,
    /// The first entry of each chart name (ASCII lower case) and code.
    by_chart: HashMap<String, usize>,
    by_url: HashMap<String, usize>,
}

impl Catalog {
    pub fn new(list: std::sync::Arc<Vec<IndicatorMeta>>) -> Catalog {
        let (mut by_chart, mut by_url) = (HashMap::new(), HashMap::new());
        for (i, m) in list.iter().enumerate() {
            by_chart
                .entry(m.chart_name.to_ascii_lowercase())
                .or_insert(i);
            by_url.entry(m.url.clone()).or_insert(i);
        }
        Catalog {
            list,
            by_chart,
            by_url,
        }
    }

    /// The catalog's index, made once per catalog and kept in `memo`
    /// (the market data store's).
    pub fn of(
        memo: &platform::memo::Memo,
        list: std::sync::Arc<Vec<IndicatorMeta>>,
    ) -> std::sync::Arc<Catalog> {
        let source = list.clone();
        memo.get_or_make("signal names", &source, move || {
            let bytes = list
                .iter()
                .map(|m| m.chart_name.len() + m.url.len() + 96)
                .sum();
            (Catalog::new(list), bytes)
        })
    }

    /// The first entry whose chart name is `name` (ASCII case aside) or
    /// whose code is `name`.
    pub fn find(&self, name: &str) -> Option<&IndicatorMeta> {
        let chart = self.by_chart.get(&name.to_ascii_lowercase());
        let url = self.by_url.get(name);
        chart.into_iter().chain(url).min().map(|&i| &self.list[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backtest::signals::tests::meta;

    #[test]
    fn a_name_finds_the_first_entry_named_so_or_coded_so_as_a_search_does() {
        let list = vec![
            meta("A_CODE", "Alpha"),
            meta("alpha", "Beta"),
            meta("B_CODE", "ALPHA"),
            meta("C_CODE", "Gamma"),
            meta("Gamma", "Delta"),
        ];
        let catalog = Catalog::new(std::sync::Arc::new(list.clone()));
        for name in [
            "Alpha", "alpha", "ALPHA", "aLpHa", "Gamma", "gamma", "A_CODE", "a_code", "Beta",
            "Delta", "none", "",
        ] {
            let search = list
                .iter()
                .find(|m| m.chart_name.eq_ignore_ascii_case(name) || m.url == name);
            assert_eq!(catalog.find(name), search, "{name}");
        }
        // A code earlier in the list than the name's entry wins, as in a search.
        assert_eq!(catalog.find("alpha").unwrap().url, "A_CODE");
        assert_eq!(catalog.find("Gamma").unwrap().url, "C_CODE");
    }
}
