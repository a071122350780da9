//! Response bodies written directly as JSON text: history responses hold
//! thousands of records, and this keeps a 30-year daily history well under a
//! millisecond of formatting.

use chrono::{Datelike, NaiveDateTime, Timelike};
use std::fmt::Write;

/// `YYYY-MM-DDTHH:MM:SS.000`, the key form of every history response.
pub fn push_key(out: &mut String, t: NaiveDateTime) {
    let _ = write!(
        out,
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.000",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
}

/// A number exactly as serde_json writes an f64 (shortest round-trip form,
/// `3.0` rather than `3`).
pub fn push_num(out: &mut String, v: f64) {
    if v.is_finite() {
        out.push_str(ryu::Buffer::new().format_finite(v));
    } else {
        out.push_str("null");
    }
}

/// A JSON string literal.
pub fn push_str(out: &mut String, s: &str) {
    out.push_str(&serde_json::Value::String(s.to_string()).to_string());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_numbers() {
        let t = chrono::NaiveDate::from_ymd_opt(2024, 3, 5)
            .unwrap()
            .and_hms_opt(9, 30, 0)
            .unwrap();
        let mut k = String::new();
        push_key(&mut k, t);
        assert_eq!(k, "2024-03-05T09:30:00.000");
        let mut s = String::new();
        push_num(&mut s, 12.5);
        s.push(',');
        push_num(&mut s, 0.1 + 0.2);
        s.push(',');
        push_num(&mut s, 3.0);
        assert_eq!(s, "12.5,0.30000000000000004,3.0");
        assert_eq!(
            s,
            [12.5, 0.1 + 0.2, 3.0]
                .map(|v| serde_json::to_string(&v).unwrap())
                .join(",")
        );
        let v: serde_json::Value = serde_json::from_str(&format!("[{s}]")).unwrap();
        assert_eq!(v[1].as_f64().unwrap(), 0.1 + 0.2);
    }
}
