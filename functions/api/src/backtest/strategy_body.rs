//! The body of a strategy submit or validate. JSON, with CSV mode's
//! `csv_data` read into columns as it streams past; or `multipart/form-data`
//! with a `strategy` part (the same JSON) and a `bars` part holding the bars
//! as CSV text, a Parquet file or an Arrow IPC stream (told apart by
//! Parquet's `PAR1` magic and the stream's continuation marker), which is
//! how users keep their bars.

use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::{FromRequest, Multipart, Request};
use axum::http::header::CONTENT_TYPE;
use serde_json::Value;
use services::FieldError;
use services::backtest::csv::{self, Upload};
use std::sync::Arc;

/// A strategy as sent, and CSV mode's bars if it carried some.
pub struct StrategyBody {
    /// The strategy without `csv_data`.
    pub body: Value,
    /// The bars read, or what is wrong with them.
    bars: Option<Result<Upload, FieldError>>,
}

impl StrategyBody {
    /// The bars, when `csv_mode` is true; their mistake is the answer then.
    /// Without CSV mode they are ignored, as 2.8 has it.
    pub fn upload(&mut self) -> Result<Option<Arc<Upload>>, ApiError> {
        if self.body.get("csv_mode") != Some(&Value::Bool(true)) {
            return Ok(None);
        }
        match self.bars.take() {
            None => Ok(None),
            Some(Ok(u)) => Ok(Some(Arc::new(u))),
            Some(Err(e)) => Err(e.into()),
        }
    }
}

/// Reads a JSON body, or falls back to a plain parse (whose checks say what
/// is wrong) when it is not an object.
fn json(bytes: &[u8]) -> Result<StrategyBody, ApiError> {
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Ok(StrategyBody {
            body: crate::extract::json_body(bytes)?,
            bars: None,
        });
    }
    let split = csv::split_json(bytes)
        .map_err(|e| ApiError::bad_request(format!("body is not valid JSON: {e}")))?;
    Ok(StrategyBody {
        body: split.rest,
        bars: split.upload,
    })
}

impl<S: Send + Sync> FromRequest<S> for StrategyBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let multipart = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.to_ascii_lowercase().starts_with("multipart/form-data"));
        if multipart {
            return parts(req, state).await;
        }
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiError::bad_request(format!("unreadable body: {e}")))?;
        json(&bytes)
    }
}

/// One symbol's bars as a part holds them: CSV text, a Parquet file or an
/// Arrow IPC stream; what is wrong with them names `csv_data`.
pub(crate) async fn read_bars(data: Bytes) -> Result<Result<Upload, FieldError>, ApiError> {
    Ok(if data.starts_with(b"PAR1") {
        tokio::task::spawn_blocking(move || csv::from_parquet(data))
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "reading Parquet bars");
                ApiError::internal()
            })?
    } else if csv::is_arrow_stream(&data) {
        // Buffers read in place: no decoding worth a thread hop.
        csv::from_arrow(data)
    } else {
        csv::from_csv_text(&data)
    })
}

async fn parts<S: Send + Sync>(req: Request, state: &S) -> Result<StrategyBody, ApiError> {
    let bad = |e: String| ApiError::bad_request(format!("malformed multipart body: {e}"));
    let mut form = Multipart::from_request(req, state)
        .await
        .map_err(|e| bad(e.body_text()))?;
    let (mut strategy, mut bars) = (None, None);
    while let Some(field) = form.next_field().await.map_err(|e| bad(e.body_text()))? {
        let name = field.name().unwrap_or_default().to_string();
        let data = field.bytes().await.map_err(|e| bad(e.body_text()))?;
        match name.as_str() {
            "strategy" => {
                // Not checked by the limits layer, which sees a multipart body.
                crate::shape::check(&data)?;
                strategy = Some(json(&data)?);
            }
            "bars" => bars = Some(read_bars(data).await?),
            other => {
                return Err(ApiError::field(
                    other,
                    "unknown part; send 'strategy' (JSON) and 'bars' (CSV text, Parquet or an Arrow IPC stream)",
                ));
            }
        }
    }
    let mut strategy = strategy.ok_or_else(|| ApiError::field("strategy", "is required"))?;
    if let Some(bars) = bars {
        let Some(body) = strategy.body.as_object_mut() else {
            return Ok(strategy);
        };
        match body.get("csv_mode") {
            None | Some(Value::Null) => {
                body.insert("csv_mode".into(), Value::Bool(true));
            }
            Some(Value::Bool(false)) => {
                return Err(ApiError::field(
                    "csv_mode",
                    "is false, but a 'bars' part was sent",
                ));
            }
            Some(_) => {}
        }
        if strategy.bars.is_some() {
            return Err(ApiError::field(
                "csv_data",
                "send the bars once: in csv_data or in the 'bars' part",
            ));
        }
        strategy.bars = Some(bars);
    }
    Ok(strategy)
}
