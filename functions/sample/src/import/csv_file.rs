//! Daily bars from CSV: Yahoo (`Date,Open,High,Low,Close,Adj Close,Volume`),
//! Stooq (`<TICKER>,<PER>,<DATE>,<TIME>,<OPEN>,<HIGH>,<LOW>,<CLOSE>,<VOL>,<OPENINT>`)
//! and plain (`Date,Open,High,Low,Close,Volume`).

use super::{COLUMNS, ImportError, MAX_ROWS, RawRow, build_bars};
use chrono::NaiveDate;
use engine::Bars;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CsvLayout {
    Yahoo,
    Stooq,
    Plain,
}

impl FromStr for CsvLayout {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "yahoo" => Ok(CsvLayout::Yahoo),
            "stooq" => Ok(CsvLayout::Stooq),
            "plain" => Ok(CsvLayout::Plain),
            _ => Err(format!(
                "unknown CSV layout '{s}' (expected yahoo, stooq or plain)"
            )),
        }
    }
}

impl CsvLayout {
    /// Header names of Date, Open, High, Low, Close, Volume in this layout.
    fn columns(self) -> [&'static str; 6] {
        match self {
            CsvLayout::Yahoo | CsvLayout::Plain => {
                ["date", "open", "high", "low", "close", "volume"]
            }
            CsvLayout::Stooq => ["<date>", "<open>", "<high>", "<low>", "<close>", "<vol>"],
        }
    }

    fn detect(header: &[String]) -> Option<CsvLayout> {
        let has = |n: &str| header.iter().any(|h| h == n);
        if has("<date>") && has("<close>") {
            Some(CsvLayout::Stooq)
        } else if has("adj close") {
            Some(CsvLayout::Yahoo)
        } else if has("date") && has("close") {
            Some(CsvLayout::Plain)
        } else {
            None
        }
    }
}

fn parse_date(s: &str) -> Option<NaiveDate> {
    let s = s.trim();
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .or_else(|_| NaiveDate::parse_from_str(s, "%Y%m%d"))
        .ok()
}

/// Parses and validates a whole CSV file; `layout` `None` detects it from the header.
pub fn read_csv(file: &str, data: &[u8], layout: Option<CsvLayout>) -> Result<Bars, ImportError> {
    build_bars(file, csv_rows(file, data, layout)?)
}

/// The file's rows, parsed but not yet checked.
pub fn csv_rows(
    file: &str,
    data: &[u8],
    layout: Option<CsvLayout>,
) -> Result<Vec<RawRow>, ImportError> {
    csv_rows_from(file, data, layout)
}

/// [`csv_rows`] from a stream, read a record at a time: at most
/// [`MAX_ROWS`] rows are held, whatever the file's size.
pub fn csv_rows_from(
    file: &str,
    data: impl std::io::Read,
    layout: Option<CsvLayout>,
) -> Result<Vec<RawRow>, ImportError> {
    let fail = super::failing(file);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(data);
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| fail(1, None, format!("unreadable header: {e}")))?
        .iter()
        .map(|h| h.trim_start_matches('\u{feff}').trim().to_ascii_lowercase())
        .collect();
    let layout = match layout.or_else(|| CsvLayout::detect(&header)) {
        Some(l) => l,
        None => {
            return Err(fail(
                1,
                None,
                format!(
                    "unrecognised header '{}': expected Yahoo, Stooq or plain Date,Open,High,Low,Close,Volume columns",
                    super::excerpt(&header.join(","))
                ),
            ));
        }
    };
    let names = ["Date", "Open", "High", "Low", "Close", "Volume"];
    let mut idx = [0usize; 6];
    for (k, col) in layout.columns().iter().enumerate() {
        idx[k] = header.iter().position(|h| h == col).ok_or_else(|| {
            fail(
                1,
                Some(names[k]),
                format!("missing column '{col}' for the {layout:?} layout"),
            )
        })?;
    }
    let mut rows = Vec::new();
    let mut record = csv::StringRecord::new();
    for n in 0.. {
        let line = n + 2;
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(fail(line, None, format!("unreadable row: {e}"))),
        }
        if rows.len() == MAX_ROWS {
            return Err(fail(
                line,
                None,
                format!("more than {MAX_ROWS} rows: more than a daily series can hold"),
            ));
        }
        if record.iter().all(|f| f.is_empty()) {
            continue;
        }
        let field = |k: usize| record.get(idx[k]).unwrap_or("");
        let date = parse_date(field(0)).ok_or_else(|| {
            fail(
                line,
                Some("Date"),
                format!(
                    "'{}' is not a date (YYYY-MM-DD or YYYYMMDD)",
                    super::excerpt(field(0))
                ),
            )
        })?;
        let mut ohlcv = [0.0; 5];
        for k in 0..5 {
            let raw = field(k + 1);
            ohlcv[k] = raw.parse::<f64>().map_err(|_| {
                fail(
                    line,
                    Some(COLUMNS[k]),
                    format!("'{}' is not a number", super::excerpt(raw)),
                )
            })?;
        }
        rows.push(RawRow { line, date, ohlcv });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_each_layout() {
        let y = "Date,Open,High,Low,Close,Adj Close,Volume\n2024-01-02,10,11,9,10.5,10.4,1000\n";
        let s = "<TICKER>,<PER>,<DATE>,<TIME>,<OPEN>,<HIGH>,<LOW>,<CLOSE>,<VOL>,<OPENINT>\nAAPL.US,D,20240102,000000,10,11,9,10.5,1000,0\n";
        let p = "date,open,high,low,close,volume\n2024-01-02,10,11,9,10.5,1000\n";
        for text in [y, s, p] {
            let b = read_csv("t.csv", text.as_bytes(), None).unwrap();
            assert_eq!(b.close, vec![10.5]);
            assert_eq!(b.volume, vec![1000.0]);
            assert_eq!(b.date(0), NaiveDate::from_ymd_opt(2024, 1, 2).unwrap());
        }
    }
}
