//! Content negotiation for answers that are tables: a request whose
//! `Accept` names `application/vnd.apache.arrow.stream` gets the table as an
//! Arrow IPC stream (the JSON answer's columns and values; its other parts
//! in the schema's metadata), which pandas and polars read without parsing.
//! Errors, and answers without a table, stay JSON. The stream is never
//! HTTP-compressed; a `compression=zstd` (or `lz4`) parameter on the Arrow
//! media range asks for its buffers compressed by Arrow itself
//! (`crate::compression`), which readers undo on their own.

use crate::error::{ApiError, Reply};
use axum::http::HeaderMap;
use axum::http::header::{ACCEPT, CONTENT_TYPE, VARY};
use axum::response::IntoResponse;
pub use platform::marketdata::interchange::ARROW_STREAM;
use services::tables::Tabular;

/// Whether the request accepts an Arrow stream (named, and not with q=0).
pub fn wanted(headers: &HeaderMap) -> bool {
    accepts(headers, |media| media.eq_ignore_ascii_case(ARROW_STREAM))
}

/// Whether the `Accept` headers name a media type `is` takes, not refused
/// with q=0.
pub fn accepts(headers: &HeaderMap, is: impl Fn(&str) -> bool) -> bool {
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
            is(media) && !refused
        })
}

/// Arrow's own buffer compression (IPC `BodyCompression`), as a request
/// asks for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpcCompression {
    Zstd,
    /// LZ4 frames (`LZ4_FRAME`).
    Lz4,
}

impl IpcCompression {
    /// The answer's `Content-Type`, naming the codec.
    pub fn media_type(self) -> &'static str {
        match self {
            IpcCompression::Zstd => "application/vnd.apache.arrow.stream; compression=zstd",
            IpcCompression::Lz4 => "application/vnd.apache.arrow.stream; compression=lz4",
        }
    }
}

/// The codec the `compression` parameter of the Arrow media range in
/// `Accept` names (`zstd`, or `lz4`), when the range is not refused (q=0).
/// Any other value asks for nothing: the stream comes uncompressed.
pub fn compression(headers: &HeaderMap) -> Option<IpcCompression> {
    headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .find_map(|item| {
            let mut parts = item.split(';');
            let media = parts.next().unwrap_or_default().trim();
            if !media.eq_ignore_ascii_case(ARROW_STREAM) {
                return None;
            }
            let mut codec = None;
            for p in parts {
                let Some((name, value)) = p.split_once('=') else {
                    continue;
                };
                let value = value.trim().trim_matches('"');
                match name.trim().to_ascii_lowercase().as_str() {
                    "q" if value.parse::<f64>().is_ok_and(|q| q <= 0.0) => return None,
                    "compression" if value.eq_ignore_ascii_case("zstd") => {
                        codec = Some(IpcCompression::Zstd)
                    }
                    "compression"
                        if value.eq_ignore_ascii_case("lz4")
                            || value.eq_ignore_ascii_case("lz4_frame") =>
                    {
                        codec = Some(IpcCompression::Lz4)
                    }
                    _ => {}
                }
            }
            codec
        })
}

/// An Arrow stream written again with its buffers compressed by `codec`
/// (zstd at level 1; a buffer that does not shrink is kept as it is).
pub fn recompress(stream: &[u8], codec: IpcCompression) -> Result<bytes::Bytes, String> {
    use arrow_ipc::writer::{IpcWriteOptions, StreamWriter};
    let reader = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(stream), None)
        .map_err(|e| e.to_string())?;
    let schema = reader.schema();
    let options = match codec {
        IpcCompression::Zstd => IpcWriteOptions::default()
            .try_with_compression(Some(arrow_ipc::CompressionType::ZSTD))
            .and_then(|o| o.try_with_compression_level(Some(ZSTD_LEVEL))),
        IpcCompression::Lz4 => IpcWriteOptions::default()
            .try_with_compression(Some(arrow_ipc::CompressionType::LZ4_FRAME)),
    }
    .map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(stream.len() / 2 + 1024);
    let mut w = StreamWriter::try_new_with_options(&mut out, &schema, options)
        .map_err(|e| e.to_string())?;
    for batch in reader {
        w.write(&batch.map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    }
    w.finish().map_err(|e| e.to_string())?;
    drop(w);
    Ok(out.into())
}

/// zstd's level for Arrow buffers: the fastest.
const ZSTD_LEVEL: i32 = 1;

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

    #[test]
    fn the_arrow_range_names_its_codec() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(ACCEPT, v.parse().unwrap());
            compression(&h)
        };
        use IpcCompression::*;
        assert_eq!(with(ARROW_STREAM), None);
        assert_eq!(
            with("application/vnd.apache.arrow.stream; compression=zstd"),
            Some(Zstd)
        );
        assert_eq!(
            with("application/json;q=0.5, application/vnd.apache.arrow.stream;compression=\"LZ4\""),
            Some(Lz4)
        );
        assert_eq!(
            with("application/vnd.apache.arrow.stream;compression=lz4_frame;q=0.9"),
            Some(Lz4)
        );
        assert_eq!(
            with("application/vnd.apache.arrow.stream;compression=zstd;q=0"),
            None
        );
        assert_eq!(
            with("application/vnd.apache.arrow.stream;compression=snappy"),
            None
        );
        assert_eq!(with("application/json;compression=zstd"), None);
        // The parameter does not change what the range names.
        let mut h = HeaderMap::new();
        h.insert(
            ACCEPT,
            "application/vnd.apache.arrow.stream; compression=zstd"
                .parse()
                .unwrap(),
        );
        assert!(wanted(&h));
    }

    #[test]
    fn a_compressed_stream_reads_back_the_same_table() {
        use platform::marketdata::columns::Column;
        let cols = vec![
            (
                "x".to_string(),
                Column::Number((0..5000).map(|i| Some((i % 7) as f64)).collect()),
            ),
            (
                "y".to_string(),
                Column::Number(
                    (0..5000)
                        .map(|i| (i % 3 > 0).then_some(i as f64 / 3.0))
                        .collect(),
                ),
            ),
        ];
        let mut meta = std::collections::HashMap::new();
        meta.insert("code".to_string(), "211".to_string());
        let plain = platform::marketdata::interchange::to_arrow_stream(cols, meta).unwrap();
        let read = |b: &[u8]| {
            let r =
                arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(b), None).unwrap();
            let schema = r.schema();
            (schema, r.map(|b| b.unwrap()).collect::<Vec<_>>())
        };
        let want = read(&plain);
        for codec in [IpcCompression::Zstd, IpcCompression::Lz4] {
            let made = recompress(&plain, codec).unwrap();
            assert!(
                made.len() < plain.len() / 2,
                "{codec:?}: {} of {}",
                made.len(),
                plain.len()
            );
            assert_eq!(read(&made), want, "{codec:?}");
        }
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
