//! Tables in the format a client asks for: `format=json|csv|parquet|arrow`
//! names it; without it, the `Accept` header's most preferred of the four
//! media types chooses, and JSON is the default. One negotiation for every
//! table a route answers whole.
//!
//! A request that asks for a table ([`asks_for_table`]) never gets an
//! error in an HTTP 200: `error::render_errors` gives its error answers an
//! error status (the analytics service's codes 407 and 411 included).

use crate::error::{ApiError, Reply};
use axum::extract::FromRequestParts;
use axum::http::HeaderMap;
use axum::http::header::{ACCEPT, CONTENT_DISPOSITION, CONTENT_TYPE, HeaderValue};
use axum::http::request::Parts;
use axum::response::IntoResponse;
use platform::marketdata::interchange::{self, ARROW_STREAM, Table, TableFormat};

pub const CSV: &str = "text/csv; charset=utf-8";
pub const PARQUET: &str = "application/vnd.apache.parquet";

/// A table's format on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Csv,
    Parquet,
    Arrow,
}

const BY_NAME: [(&str, Format); 4] = [
    ("json", Format::Json),
    ("csv", Format::Csv),
    ("parquet", Format::Parquet),
    ("arrow", Format::Arrow),
];

const BY_MEDIA: [(&str, Format); 4] = [
    ("application/json", Format::Json),
    ("text/csv", Format::Csv),
    (PARQUET, Format::Parquet),
    (ARROW_STREAM, Format::Arrow),
];

impl Format {
    /// The format `format` names (400 naming the field otherwise), or the
    /// one `Accept` prefers (the first of the highest quality; JSON when
    /// it names none of them).
    pub fn negotiate(format: Option<&str>, headers: &HeaderMap) -> Result<Format, ApiError> {
        if let Some(name) = format {
            return BY_NAME
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name.trim()))
                .map(|(_, f)| *f)
                .ok_or_else(|| {
                    ApiError::field(
                        "format",
                        format!("must be json, csv, parquet or arrow, got '{name}'"),
                    )
                });
        }
        let mut best: Option<(f64, Format)> = None;
        for item in headers
            .get_all(ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
        {
            let mut parts = item.split(';');
            let media = parts.next().unwrap_or_default().trim();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f64>().ok())
                .unwrap_or(1.0);
            let Some((_, f)) = BY_MEDIA.iter().find(|(m, _)| m.eq_ignore_ascii_case(media)) else {
                continue;
            };
            if q > 0.0 && best.is_none_or(|(b, _)| q > b) {
                best = Some((q, *f));
            }
        }
        Ok(best.map_or(Format::Json, |(_, f)| f))
    }
}

/// Whether a request asks for a table rather than JSON: its `format`
/// parameter names csv, parquet or arrow, or (without one) its `Accept`
/// names one of their media types (not refused with q=0), whatever the
/// route answers. What every error answer to such a request is rendered
/// for: its HTTP status is an error status.
pub fn asks_for_table(query: Option<&str>, headers: &HeaderMap) -> bool {
    // Repeated keys: the last value wins, as for every query parameter.
    let named = query
        .and_then(|q| serde_urlencoded::from_str::<Vec<(String, String)>>(q).ok())
        .and_then(|pairs| pairs.into_iter().rev().find(|(k, _)| k == "format"))
        .map(|(_, v)| v);
    match named.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
        Some(name) => BY_NAME
            .iter()
            .any(|(n, f)| *f != Format::Json && n.eq_ignore_ascii_case(name)),
        None => {
            crate::arrow::wanted(headers)
                || crate::arrow::accepts(headers, |media| {
                    BY_MEDIA
                        .iter()
                        .any(|(m, f)| *f != Format::Json && m.eq_ignore_ascii_case(media))
                })
        }
    }
}

/// [`asks_for_table`] of the request, as an extractor (it never refuses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsksForTable(pub bool);

impl<S: Send + Sync> FromRequestParts<S> for AsksForTable {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(AsksForTable(asks_for_table(
            parts.uri.query(),
            &parts.headers,
        )))
    }
}

/// `table` as a CSV, Parquet or Arrow answer (`Format::Json` is the
/// route's own); CSV and Parquet are attachments named `name`.
pub fn respond(format: Format, table: Table, name: &str) -> Reply {
    let failed = |e: platform::PortError| {
        tracing::error!(error = %e, "table answer");
        ApiError::internal()
    };
    let (media, body, ext) = match format {
        Format::Csv => (
            CSV,
            interchange::to_csv(table).map_err(failed)?,
            Some("csv"),
        ),
        Format::Parquet | Format::Arrow => {
            let kind = if format == Format::Parquet {
                TableFormat::Parquet
            } else {
                TableFormat::ArrowStream
            };
            let mut w = interchange::PartsWriter::new(kind, Default::default());
            w.write(table).map_err(failed)?;
            let body = w.finish().map_err(failed)?.unwrap_or_default();
            let ext = (format == Format::Parquet).then_some("parquet");
            let media = if ext.is_some() { PARQUET } else { ARROW_STREAM };
            (media, body, ext)
        }
        Format::Json => return Err(ApiError::internal()),
    };
    let mut response = ([(CONTENT_TYPE, media)], body).into_response();
    if let Some(ext) = ext {
        let disposition = HeaderValue::from_str(&format!("attachment; filename=\"{name}.{ext}\""))
            .map_err(|_| ApiError::internal())?;
        response
            .headers_mut()
            .insert(CONTENT_DISPOSITION, disposition);
    }
    Ok(crate::arrow::vary(response))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accept(v: &str) -> Format {
        let mut h = HeaderMap::new();
        h.insert(ACCEPT, v.parse().unwrap());
        Format::negotiate(None, &h).unwrap()
    }

    #[test]
    fn the_parameter_wins_then_the_most_preferred_media_type() {
        let mut h = HeaderMap::new();
        h.insert(ACCEPT, ARROW_STREAM.parse().unwrap());
        assert_eq!(Format::negotiate(Some("CSV"), &h).unwrap(), Format::Csv);
        assert_eq!(Format::negotiate(None, &h).unwrap(), Format::Arrow);
        assert_eq!(
            Format::negotiate(None, &HeaderMap::new()).unwrap(),
            Format::Json
        );
        assert_eq!(accept("text/csv"), Format::Csv);
        assert_eq!(
            accept("application/vnd.apache.parquet;q=0.5, text/csv;q=0.9"),
            Format::Csv
        );
        assert_eq!(
            accept("text/csv;q=0, application/vnd.apache.parquet"),
            Format::Parquet
        );
        assert_eq!(accept("*/*"), Format::Json);
        assert_eq!(
            accept("text/html, application/json;q=0.1, text/csv;q=0.1"),
            Format::Json
        );
        let e = Format::negotiate(Some("xlsx"), &HeaderMap::new()).unwrap_err();
        assert!(format!("{e:?}").contains("format"), "{e:?}");
    }

    #[test]
    fn a_table_is_asked_for_by_the_parameter_or_any_accepted_table_type() {
        let with = |query: Option<&str>, accept: Option<&str>| {
            let mut h = HeaderMap::new();
            if let Some(a) = accept {
                h.insert(ACCEPT, a.parse().unwrap());
            }
            asks_for_table(query, &h)
        };
        assert!(with(Some("format=CSV"), None));
        assert!(with(Some("start=2020-01-02&format=parquet"), None));
        assert!(with(Some("format=arrow"), Some("application/json")));
        // The parameter wins over `Accept`, the last of repeated ones counts.
        assert!(!with(Some("format=json"), Some(ARROW_STREAM)));
        assert!(!with(Some("format=arrow&format=json"), None));
        assert!(!with(Some("format=xlsx"), None));
        assert!(with(None, Some(ARROW_STREAM)));
        // Accepted at all, even below JSON (the Arrow routes answer it so).
        assert!(with(
            None,
            Some("application/json, application/vnd.apache.arrow.stream;q=0.5")
        ));
        assert!(with(Some("ticker=SPX"), Some("text/csv")));
        assert!(with(None, Some(PARQUET)));
        assert!(!with(None, Some("text/csv;q=0, application/json")));
        assert!(!with(None, Some("*/*")));
        assert!(!with(None, None));
        assert!(!with(Some("limit=5"), Some("application/json")));
    }
}
