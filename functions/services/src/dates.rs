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

/// A `YYYY-MM-DD` date within range, or why not. The exact form is read
/// digit by digit (uploads hold one per row); anything else goes through
/// chrono, which says what is wrong.
pub fn parse(text: &str) -> Result<NaiveDate, String> {
    if let Some(d) = exact(text.as_bytes())
        && (EARLIEST..=LATEST).contains(&d)
    {
        return Ok(d);
    }
    parse_in(text, "%Y-%m-%d", "YYYY-MM-DD")
}

/// Exactly `YYYY-MM-DD` as a valid date.
fn exact(b: &[u8]) -> Option<NaiveDate> {
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| {
        b[r].iter().try_fold(0u32, |n, c| {
            c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0'))
        })
    };
    NaiveDate::from_ymd_opt(num(0..4)? as i32, num(5..7)?, num(8..10)?)
}

/// [`parse`] for a use case's field: an error naming it.
pub fn field(name: &str, text: &str) -> crate::Result<NaiveDate> {
    parse(text).map_err(|why| crate::Error::invalid(name, why))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exact_form_reads_as_chrono_reads_it() {
        let mut d = NaiveDate::from_ymd_opt(1999, 12, 25).unwrap();
        for _ in 0..800 {
            let text = d.to_string();
            assert_eq!(exact(text.as_bytes()), Some(d));
            d = d.succ_opt().unwrap();
        }
        for bad in ["2024-02-30", "2024-13-01", "2024/01/01", "20x4-01-01"] {
            assert_eq!(exact(bad.as_bytes()), None, "{bad}");
            assert!(parse(bad).is_err(), "{bad}");
        }
        // Other spellings chrono takes still parse, by chrono.
        assert_eq!(exact(b"2024-1-05"), None);
        assert_eq!(parse("2024-1-05").unwrap().to_string(), "2024-01-05");
    }

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
