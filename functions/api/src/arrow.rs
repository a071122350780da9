//! Content negotiation for answers that are tables: a request whose
//! `Accept` names `application/vnd.apache.arrow.stream` gets the table as an
//! Arrow IPC stream (the JSON answer's columns and values; its other parts
//! in the schema's metadata), which pandas and polars read without parsing.
//! Errors, and answers without a table, stay JSON.

use crate::error::{ApiError, Reply};
use axum::http::HeaderMap;
use axum::http::header::{ACCEPT, CONTENT_TYPE, VARY};
use axum::response::IntoResponse;
pub use platform::marketdata::interchange::ARROW_STREAM;
use services::tables::Tabular;

/// Whether the request accepts an Arrow stream (named, and not with q=0).
pub fn wanted(headers: &HeaderMap) -> bool {
    headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';');
            let media = parts.next().unwrap_or_default().trim();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f64>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            media.eq_ignore_ascii_case(ARROW_STREAM) && !refused
        })
}

/// The table as an Arrow stream; `extra` joins the answer's own metadata.
pub fn respond(answer: &impl Tabular, extra: &[(&str, String)]) -> Reply {
    let mut metadata = answer.extras();
    for (k, v) in extra {
        metadata.insert((*k).to_string(), v.clone());
    }
    respond_columns(answer.columns(), metadata)
}

/// Named columns as an Arrow stream answer.
pub fn respond_columns(
    columns: Vec<(String, platform::marketdata::columns::Column)>,
    metadata: std::collections::HashMap<String, String>,
) -> Reply {
    let bytes =
        platform::marketdata::interchange::to_arrow_stream(columns, metadata).map_err(|e| {
            tracing::error!(error = %e, "Arrow answer");
            ApiError::internal()
        })?;
    Ok(([(CONTENT_TYPE, ARROW_STREAM), (VARY, "Accept")], bytes).into_response())
}

/// Marks a JSON answer of a negotiated route as depending on `Accept`
/// (added to any `Vary` already there).
pub fn vary(mut response: axum::response::Response) -> axum::response::Response {
    response
        .headers_mut()
        .append(VARY, axum::http::HeaderValue::from_static("Accept"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_names_the_stream_unless_refused() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(ACCEPT, v.parse().unwrap());
            wanted(&h)
        };
        assert!(with("application/vnd.apache.arrow.stream"));
        assert!(with(
            "application/json;q=0.5, Application/Vnd.Apache.Arrow.Stream"
        ));
        assert!(!with("application/vnd.apache.arrow.stream;q=0"));
        assert!(!with("application/json, */*"));
        assert!(!wanted(&HeaderMap::new()));
    }

    /// The answer's length is known from its body (data volume is metered by it).
    #[test]
    fn a_stream_answer_knows_its_length() {
        use platform::marketdata::columns::Column;
        let cols = vec![("x".to_string(), Column::Number(vec![Some(1.0), None]))];
        let expected =
            platform::marketdata::interchange::to_arrow_stream(cols.clone(), Default::default())
                .unwrap()
                .len() as u64;
        let r = respond_columns(cols, Default::default()).unwrap();
        assert_eq!(r.headers()[CONTENT_TYPE], ARROW_STREAM);
        assert_eq!(
            axum::body::HttpBody::size_hint(r.body()).exact(),
            Some(expected)
        );
    }
}
