//! Object keys of the market data layout, shared by the local directory and S3.
//! docs/data-layout.md is the reader's version of this file.

use crate::PortError;

pub const SYMBOLS: &str = "reference/symbols.parquet";
pub const INDICATOR_CATALOG: &str = "indicators/catalog.parquet";

pub fn daily_prices(symbol: &str) -> String {
    format!("prices/daily/{symbol}.parquet")
}

pub fn intraday_prices(symbol: &str) -> String {
    format!("prices/30min/{symbol}.parquet")
}

pub fn indicator_series(code: &str) -> String {
    format!("indicators/series/{code}.parquet")
}

pub fn indicator_intraday(code: &str) -> String {
    format!("indicators/30min/{code}.parquet")
}

pub fn table(name: &str) -> String {
    format!("tables/{name}.parquet")
}

/// Reference tables the platform knows; anything else is refused.
pub const TABLES: &[&str] = &[
    "option_chains",
    "profiles",
    "key_metrics",
    "income_statements",
    "balance_sheets",
    "cash_flows",
    "earnings",
    "news",
    "sec_filings",
    "institutional_holders",
    "fund_holders",
    "insider_trades",
    "analyst_ratings",
    "price_targets",
    "predictions",
    "reports",
    "fomc_dates",
    "us_recessions",
];

/// Symbols and indicator codes become object keys, so only a safe alphabet is
/// accepted: letters, digits and `. _ - ^ =`, not starting with a dot, 1-64 long.
pub fn check_name<'a>(what: &str, name: &'a str) -> Result<&'a str, PortError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-^=".contains(&b));
    if ok {
        Ok(name)
    } else {
        Err(PortError::Invalid(format!(
            "{what} '{name}' is not a valid name (letters, digits and . _ - ^ = only)"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_escape_the_layout_are_refused() {
        assert!(check_name("symbol", "BRK.B").is_ok());
        assert!(check_name("symbol", "^GSPC").is_ok());
        for bad in ["", "../etc", "a/b", ".hidden", "A B", &"X".repeat(65)] {
            assert!(check_name("symbol", bad).is_err(), "{bad}");
        }
    }
}
