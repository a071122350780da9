//! Splits and cash dividends from CSV: `symbol,date,kind,value`, where
//! `kind` is `split` or `dividend` and `value` is a split's new shares per
//! old (`2`, or `2:1` as vendors write it; `1:10` for a reverse split) or a
//! dividend's cash per share.

use super::ImportError;
use chrono::NaiveDate;
use platform::marketdata::actions::{Action, ActionKind};
use platform::marketdata::layout;

fn ratio(text: &str) -> Option<f64> {
    let r = match text.split_once([':', '/']) {
        Some((new, old)) => new.trim().parse::<f64>().ok()? / old.trim().parse::<f64>().ok()?,
        None => text.parse::<f64>().ok()?,
    };
    (r.is_finite() && r > 0.0).then_some(r)
}

pub fn read_actions_csv(file: &str, data: &[u8]) -> Result<Vec<Action>, ImportError> {
    let fail = super::failing(file);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .from_reader(data);
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| fail(1, None, format!("unreadable header: {e}")))?
        .iter()
        .map(|h| h.trim_start_matches('\u{feff}').to_ascii_lowercase())
        .collect();
    let mut idx = [0usize; 4];
    for (k, col) in ["symbol", "date", "kind", "value"].iter().enumerate() {
        idx[k] = header
            .iter()
            .position(|h| h == col)
            .ok_or_else(|| fail(1, Some(col), format!("missing column '{col}'")))?;
    }
    let mut out = Vec::new();
    for (n, record) in reader.records().enumerate() {
        let line = n + 2;
        let record = record.map_err(|e| fail(line, None, format!("unreadable row: {e}")))?;
        let field = |k: usize| record.get(idx[k]).unwrap_or("");
        let symbol = layout::check_name("symbol", field(0))
            .map_err(|e| fail(line, Some("symbol"), e.to_string()))?
            .to_ascii_uppercase();
        let date = NaiveDate::parse_from_str(field(1), "%Y-%m-%d").map_err(|_| {
            fail(
                line,
                Some("date"),
                format!("'{}' is not a date (YYYY-MM-DD)", field(1)),
            )
        })?;
        let value = field(3);
        let kind = match field(2).to_ascii_lowercase().as_str() {
            "split" => ActionKind::Split {
                ratio: ratio(value).ok_or_else(|| {
                    fail(
                        line,
                        Some("value"),
                        format!("'{value}' is not a split ratio (2, 2:1 or 1:10)"),
                    )
                })?,
            },
            "dividend" => ActionKind::Dividend {
                amount: value
                    .parse::<f64>()
                    .ok()
                    .filter(|a| a.is_finite() && *a >= 0.0)
                    .ok_or_else(|| {
                        fail(
                            line,
                            Some("value"),
                            format!("'{value}' is not an amount of cash per share"),
                        )
                    })?,
            },
            other => {
                return Err(fail(
                    line,
                    Some("kind"),
                    format!("'{other}' is neither split nor dividend"),
                ));
            }
        };
        out.push(Action { symbol, date, kind });
    }
    if out.is_empty() {
        return Err(fail(1, None, "no data rows".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_read_as_vendors_write_them() {
        assert_eq!(ratio("2"), Some(2.0));
        assert_eq!(ratio("2:1"), Some(2.0));
        assert_eq!(ratio("1:10"), Some(0.1));
        assert_eq!(ratio("3/2"), Some(1.5));
        assert_eq!(ratio("0"), None);
        assert_eq!(ratio("1:0"), None);
        let e = read_actions_csv(
            "a.csv",
            b"symbol,date,kind,value\nAAPL,2020-08-31,bonus,4\n",
        )
        .unwrap_err();
        assert_eq!(e.line, 2);
        assert_eq!(e.column.as_deref(), Some("kind"));
    }
}
