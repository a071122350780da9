//! Dates as clients send them, held to years market data can have: the
//! backtest spec's own default start is 1800-10-01, and nothing is dated past
//! 2199. A date outside is refused naming its field, as a malformed one is,
//! so a typo such as year 0081 never reaches a search or a calendar.

use chrono::NaiveDate;

pub const EARLIEST: NaiveDate = NaiveDate::from_ymd_opt(1800, 1, 1).expect("a date");
pub const LATEST: NaiveDate = NaiveDate::from_ymd_opt(2199, 12, 31).expect("a date");

/// Why `text` is not a date in range, written after the field's name.
pub fn why_not(text: &str, d: Option<NaiveDate>, form: &str) -> Option<String> {
    match d {
        None => Some(format!("must be a date {form}, got '{text}'")),
        Some(d) if !(EARLIEST..=LATEST).contains(&d) => Some(format!(
            "must be a date between {EARLIEST} and {LATEST}, got '{text}'"
        )),
        Some(_) => None,
    }
}

/// A `form` (chrono's) date within [`EARLIEST`]..=[`LATEST`], or why not.
pub fn parse_in(text: &str, form: &str, shown: &str) -> Result<NaiveDate, String> {
    let text = text.trim();
    let d = NaiveDate::parse_from_str(text, form).ok();
    match why_not(text, d, shown) {
        Some(why) => Err(why),
        None => Ok(d.expect("checked")),
    }
}

/// A `YYYY-MM-DD` date within range, or why not.
pub fn parse(text: &str) -> Result<NaiveDate, String> {
    parse_in(text, "%Y-%m-%d", "YYYY-MM-DD")
}

/// [`parse`] for a use case's field: an error naming it.
pub fn field(name: &str, text: &str) -> crate::Result<NaiveDate> {
    parse(text).map_err(|why| crate::Error::invalid(name, why))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_in_range_only() {
        assert_eq!(parse(" 2024-02-29 ").unwrap().to_string(), "2024-02-29");
        assert_eq!(parse("1800-10-01").unwrap().to_string(), "1800-10-01");
        assert!(parse("2199-12-31").is_ok());
        for (bad, why) in [
            ("0081-01-05", "between 1800-01-01 and 2199-12-31"),
            ("2200-01-01", "between"),
            ("2023-02-29", "YYYY-MM-DD"),
            ("20240102", "YYYY-MM-DD"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(why) && e.contains(bad), "{bad}: {e}");
        }
        assert!(
            parse_in("00810105", "%Y%m%d", "YYYYMMDD")
                .unwrap_err()
                .contains("between")
        );
        let e = field("start_date", "0081-01-01").unwrap_err().to_string();
        assert!(
            e.starts_with("parameter 'start_date': must be a date between"),
            "{e}"
        );
    }
}
