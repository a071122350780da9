//! POST bodies of the correlation endpoints: JSON, URL-encoded or multipart
//! form, read into one field map whose accessors name the field on error and
//! build the use cases' typed requests. In forms every value is text, so
//! array fields arrive as JSON array text.

use crate::error::ApiError;
use axum::extract::{FromRequest, Multipart, Request};
use axum::http::header::CONTENT_TYPE;
use chrono::NaiveDate;
use serde_json::{Map, Value};
use services::analytics::correlation::{PatternRequest, RangeRequest, SymbolsRequest};

/// `SymbolsRequest` as a form: the comparison tickers as one comma-separated
/// value (JSON array text and repeated fields are accepted too).
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"benchmark": "SPX", "stock_comparison": "IVV,TLT", "start_date": "2020-01-02", "end_date": "2024-12-31", "roll_window": 21}))]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct SymbolsForm {
    #[schema(value_type = services::analytics::TickerText, example = "SPX")]
    benchmark: String,
    #[schema(
        example = "IVV,TLT",
        pattern = "^[A-Za-z0-9._^-]+(,[A-Za-z0-9._^-]+){0,49}$"
    )]
    stock_comparison: String,
    #[schema(format = Date, example = "2020-01-02")]
    start_date: String,
    #[schema(format = Date, example = "2024-12-31")]
    end_date: String,
    #[schema(minimum = 2, maximum = 2520, example = 21, nullable = false)]
    roll_window: Option<i64>,
}

#[derive(Debug, Default)]
pub struct Fields(Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for Fields {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let content_type = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if content_type.starts_with("multipart/form-data") {
            return multipart(req, state).await;
        }
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiError::bad_request(format!("unreadable body: {e}")))?;
        let looks_json = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        if content_type.starts_with("application/x-www-form-urlencoded")
            || (!content_type.contains("json") && !looks_json)
        {
            let pairs: Vec<(String, String)> = serde_urlencoded::from_bytes(&bytes)
                .map_err(|e| ApiError::bad_request(format!("malformed form body: {e}")))?;
            let mut map = Map::new();
            for (k, v) in pairs {
                add(&mut map, k, v);
            }
            return Ok(Fields(map));
        }
        match crate::extract::json_body::<Value>(&bytes)? {
            Value::Object(map) => Ok(Fields(map)),
            _ => Err(ApiError::field("body", "must be a JSON object")),
        }
    }
}

async fn multipart<S: Send + Sync>(req: Request, state: &S) -> Result<Fields, ApiError> {
    let bad = |e: String| ApiError::bad_request(format!("malformed multipart body: {e}"));
    let mut form = Multipart::from_request(req, state)
        .await
        .map_err(|e| bad(e.body_text()))?;
    let mut map = Map::new();
    while let Some(field) = form.next_field().await.map_err(|e| bad(e.body_text()))? {
        let Some(name) = field.name().map(str::to_string) else {
            continue;
        };
        let text = field.text().await.map_err(|e| bad(e.body_text()))?;
        add(&mut map, name, text);
    }
    Ok(Fields(map))
}

/// A form value; a repeated name (an array, as OpenAPI encodes it in forms)
/// gathers its values in order.
fn add(map: &mut Map<String, Value>, name: String, value: String) {
    match map.get_mut(&name) {
        None => {
            map.insert(name, Value::String(value));
        }
        Some(Value::Array(items)) => items.push(Value::String(value)),
        Some(first) => {
            let first = first.take();
            map.insert(name, Value::Array(vec![first, Value::String(value)]));
        }
    }
}

impl Fields {
    /// Fields from an object (a view's query, or a test's body).
    pub fn from_json(v: Value) -> Fields {
        match v {
            Value::Object(m) => Fields(m),
            _ => Fields::default(),
        }
    }

    fn present(&self, name: &str) -> Option<&Value> {
        self.0.get(name).filter(|v| match v {
            Value::Null => false,
            Value::String(s) => !s.trim().is_empty(),
            _ => true,
        })
    }

    /// A required text field; of a repeated form field, the last value.
    pub fn text(&self, name: &str) -> Result<String, ApiError> {
        let last = match self.present(name) {
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => items.last(),
            other => other,
        };
        match last {
            None => Err(ApiError::field(name, "is required")),
            Some(Value::String(s)) if s.trim().is_empty() => {
                Err(ApiError::field(name, "is required"))
            }
            Some(Value::String(s)) => Ok(s.trim().to_string()),
            Some(other) => Err(ApiError::field(
                name,
                format!("must be a string, got {other}"),
            )),
        }
    }

    /// A required ticker, upper-cased.
    pub fn ticker(&self, name: &str) -> Result<String, ApiError> {
        Ok(self.text(name)?.to_uppercase())
    }

    /// A required `YYYY-MM-DD` date.
    pub fn date(&self, name: &str) -> Result<NaiveDate, ApiError> {
        let s = self.text(name)?;
        services::dates::parse(&s).map_err(|why| ApiError::field(name, why))
    }

    /// A required list of tickers: a JSON array of strings, or in forms its
    /// JSON text (a comma-separated list is accepted too).
    pub fn tickers(&self, name: &str) -> Result<Vec<String>, ApiError> {
        let wrong = || ApiError::field(name, "must be an array of ticker strings");
        let items: Vec<Value> = match self.present(name) {
            None => return Err(ApiError::field(name, "is required")),
            Some(Value::Array(a)) => a.clone(),
            Some(Value::String(s)) if s.trim_start().starts_with('[') => {
                // JSON text inside a form: bounded like a JSON body.
                crate::shape::check(s.as_bytes()).map_err(|e| ApiError::field(name, e.message))?;
                match serde_json::from_str::<Value>(s) {
                    Ok(Value::Array(a)) => a,
                    _ => {
                        return Err(ApiError::field(
                            name,
                            format!("'{s}' is not a JSON array of strings"),
                        ));
                    }
                }
            }
            Some(Value::String(s)) => s.split(',').map(|t| Value::String(t.into())).collect(),
            Some(_) => return Err(wrong()),
        };
        let mut out: Vec<String> = Vec::new();
        for item in items {
            let t = item.as_str().ok_or_else(wrong)?.trim().to_uppercase();
            if t.is_empty() {
                return Err(ApiError::field(name, "holds an empty ticker"));
            }
            if !out.contains(&t) {
                out.push(t);
            }
        }
        if out.is_empty() {
            return Err(ApiError::field(name, "must name at least one ticker"));
        }
        Ok(out)
    }

    /// An optional integer (a number, or its text).
    pub fn opt_int(&self, name: &str) -> Result<Option<i64>, ApiError> {
        Ok(Some(match self.present(name) {
            None => return Ok(None),
            // JSON has one number type: 650.0 is the integer 650.
            Some(Value::Number(n)) => n
                .as_i64()
                .or_else(|| {
                    n.as_f64()
                        .filter(|x| x.fract() == 0.0 && x.abs() < 9.0e15)
                        .map(|x| x as i64)
                })
                .ok_or_else(|| ApiError::field(name, format!("{n} is not an integer")))?,
            Some(Value::String(s)) => s
                .trim()
                .parse()
                .map_err(|_| ApiError::field(name, format!("'{s}' is not an integer")))?,
            Some(other) => {
                return Err(ApiError::field(
                    name,
                    format!("must be an integer, got {other}"),
                ));
            }
        }))
    }

    /// Refuses a field the request does not have (its schema allows no
    /// other properties): 400 naming the first one.
    fn only(&self, names: &[&str]) -> Result<(), ApiError> {
        match self.0.keys().find(|k| !names.contains(&k.as_str())) {
            None => Ok(()),
            Some(k) => Err(services::FieldError::unknown(k.as_str(), names.iter().copied()).into()),
        }
    }

    pub fn symbols_request(&self) -> Result<SymbolsRequest, ApiError> {
        self.only(&[
            "benchmark",
            "stock_comparison",
            "start_date",
            "end_date",
            "roll_window",
        ])?;
        Ok(SymbolsRequest {
            benchmark: self.ticker("benchmark")?,
            stock_comparison: self.tickers("stock_comparison")?,
            start_date: self.date("start_date")?,
            end_date: self.date("end_date")?,
            roll_window: self.opt_int("roll_window")?,
        })
    }

    pub fn range_request(&self) -> Result<RangeRequest, ApiError> {
        self.only(&["start_date", "end_date"])?;
        Ok(RangeRequest {
            start_date: self.date("start_date")?,
            end_date: self.date("end_date")?,
        })
    }

    pub fn pattern_request(&self) -> Result<PatternRequest, ApiError> {
        self.only(&[
            "referenceSymbol",
            "referenceStartDate",
            "referenceEndDate",
            "comparisonSymbol",
            "comparisonStartDate",
            "comparisonEndDate",
        ])?;
        Ok(PatternRequest {
            referenceSymbol: self.ticker("referenceSymbol")?,
            referenceStartDate: self.date("referenceStartDate")?,
            referenceEndDate: self.date("referenceEndDate")?,
            comparisonSymbol: self.ticker("comparisonSymbol")?,
            comparisonStartDate: self.date("comparisonStartDate")?,
            comparisonEndDate: self.date("comparisonEndDate")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tickers_from_arrays_json_text_and_lists() {
        let f = Fields::from_json(json!({
            "a": ["aapl", "MSFT", "AAPL"],
            "b": "[\"spx\", \"ndx\"]",
            "c": "IVV, TLT",
            "d": "[1, 2]",
            "e": "[\"X\"",
        }));
        assert_eq!(f.tickers("a").unwrap(), vec!["AAPL", "MSFT"]);
        assert_eq!(f.tickers("b").unwrap(), vec!["SPX", "NDX"]);
        assert_eq!(f.tickers("c").unwrap(), vec!["IVV", "TLT"]);
        assert!(f.tickers("d").unwrap_err().message.contains("'d'"));
        assert!(f.tickers("e").unwrap_err().message.contains("'e'"));
        assert!(
            f.tickers("z")
                .unwrap_err()
                .message
                .contains("parameter 'z': is required")
        );
    }

    #[test]
    fn repeated_form_fields_gather_and_text_keeps_the_last() {
        let mut m = Map::new();
        for (k, v) in [
            ("t", "IVV"),
            ("b", "x"),
            ("t", "tlt"),
            ("b", "SPX"),
            ("t", "GLD"),
        ] {
            add(&mut m, k.into(), v.into());
        }
        let f = Fields(m);
        assert_eq!(f.tickers("t").unwrap(), vec!["IVV", "TLT", "GLD"]);
        assert_eq!(f.text("b").unwrap(), "SPX");
    }

    #[test]
    fn numbers_and_dates_name_the_field() {
        let f =
            Fields::from_json(json!({"w": "30", "x": 2.5, "y": 0, "z": 650.0, "d": "2024-02-30"}));
        assert_eq!(
            f.opt_int("z").unwrap(),
            Some(650),
            "a whole JSON number is an integer"
        );
        assert_eq!(f.opt_int("w").unwrap(), Some(30));
        assert_eq!(f.opt_int("missing").unwrap(), None);
        assert_eq!(f.opt_int("y").unwrap(), Some(0));
        assert!(f.opt_int("x").unwrap_err().message.contains("'x'"));
        assert!(f.date("d").unwrap_err().message.contains("'d'"));
    }
}
