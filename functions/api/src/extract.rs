//! Request parsing whose errors name the offending field.

use crate::error::ApiError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use std::collections::HashMap;
use std::str::FromStr;

/// Query parameters as text, parsed field by field so each error names its field.
#[derive(Debug, Clone, Default)]
pub struct Params(pub HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or("");
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query)
            .map_err(|e| ApiError::bad_request(format!("malformed query string: {e}")))?;
        // Repeated keys: the last value wins, as for JSON bodies.
        Ok(Params(pairs.into_iter().collect()))
    }
}

impl Params {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.trim().is_empty())
    }

    /// The parsed value, `None` when absent or blank.
    pub fn opt<T: FromStr>(&self, name: &str, expected: &str) -> Result<Option<T>, ApiError> {
        self.get(name)
            .map(|v| {
                v.trim()
                    .parse::<T>()
                    .map_err(|_| ApiError::field(name, format!("'{v}' is not {expected}")))
            })
            .transpose()
    }

    pub fn required(&self, name: &str) -> Result<&str, ApiError> {
        self.get(name)
            .ok_or_else(|| ApiError::field(name, "is required"))
    }

    /// An integer in `[min, max]`, or `default` when absent.
    pub fn int_in(&self, name: &str, default: i64, min: i64, max: i64) -> Result<i64, ApiError> {
        let v = self.opt::<i64>(name, "an integer")?.unwrap_or(default);
        if (min..=max).contains(&v) {
            Ok(v)
        } else {
            Err(ApiError::field(
                name,
                format!("must be between {min} and {max}, got {v}"),
            ))
        }
    }
}

/// A typed query: blank values are absent (as clients send empty form
/// fields), a repeated key keeps its last value, and an error names the
/// parameter.
#[derive(Debug, Clone)]
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Query::from_params(Params::from_request_parts(parts, state).await?)
    }
}

impl<T: DeserializeOwned> Query<T> {
    /// The typed query from parameters already read.
    pub fn from_params(Params(map): Params) -> Result<Self, ApiError> {
        let kept: Vec<(&str, &str)> = map
            .iter()
            .map(|(k, v)| (k.as_str(), v.trim()))
            .filter(|(_, v)| !v.is_empty())
            .collect();
        let encoded = serde_urlencoded::to_string(&kept)
            .map_err(|e| ApiError::bad_request(format!("malformed query string: {e}")))?;
        let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(encoded.as_bytes()));
        serde_path_to_error::deserialize(de)
            .map(Query)
            .map_err(|e| services::FieldError::from_serde(e).into())
    }
}

/// Decodes a JSON body into `T`. Duplicate keys resolve to the last value, and
/// a type error names the path of the field (`entry.condition.rule`).
pub fn json_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("body is not valid JSON: {e}")))?;
    json_value(value)
}

/// [`json_body`] of a body already parsed as JSON.
pub fn json_value<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, ApiError> {
    Ok(services::error::from_json(value)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Rule {
        period: u32,
    }
    #[derive(Debug, Deserialize, PartialEq)]
    struct Body {
        symbol: String,
        rule: Rule,
    }

    #[test]
    fn last_duplicate_key_wins_and_errors_name_the_path() {
        let b: Body = json_body(br#"{"symbol":"A","symbol":"B","rule":{"period":3}}"#).unwrap();
        assert_eq!(b.symbol, "B");
        let e = json_body::<Body>(br#"{"symbol":"A","rule":{"period":"x"}}"#).unwrap_err();
        assert!(e.message.contains("'rule.period'"), "{}", e.message);
        let e = json_body::<Body>(br#"{"rule":{"period":1}}"#).unwrap_err();
        assert!(e.message.contains("symbol"), "{}", e.message);
        assert_eq!(json_body::<Body>(b"{").unwrap_err().status, 400);
    }

    #[test]
    fn params_name_the_field() {
        let p = Params(
            [("limit".to_string(), "abc".to_string())]
                .into_iter()
                .collect(),
        );
        let e = p.int_in("limit", 20, 1, 200).unwrap_err();
        assert!(e.message.contains("'limit'"), "{}", e.message);
        let p = Params(
            [("limit".to_string(), "500".to_string())]
                .into_iter()
                .collect(),
        );
        assert!(
            p.int_in("limit", 20, 1, 200)
                .unwrap_err()
                .message
                .contains("between 1 and 200")
        );
        assert_eq!(Params::default().int_in("limit", 20, 1, 200).unwrap(), 20);
    }
}
