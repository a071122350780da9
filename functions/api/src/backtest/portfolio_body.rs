//! The body of a portfolio submit: JSON, or `multipart/form-data` with a
//! `portfolio` part (the same JSON) and a part `bars.<SYMBOL>` for each
//! symbol whose own bars are sent (CSV text, a Parquet file or an Arrow
//! IPC stream, as CSV mode takes one symbol's bars).

use super::strategy_body::read_bars;
use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::{FromRequest, Multipart, Request};
use axum::http::header::CONTENT_TYPE;
use serde_json::Value;
use services::FieldError;
use services::backtest::csv::Upload;
use services::backtest::portfolio::own::PART;
use services::backtest::portfolio::request::MAX_UNIVERSE;

/// A portfolio as sent: its `Idempotency-Key`, the JSON and the own bars.
pub struct PortfolioBody {
    pub key: Option<String>,
    pub body: Value,
    /// `(symbol, bars)` per `bars.<SYMBOL>` part, in the order sent.
    pub bars: Vec<(String, Upload)>,
}

impl<S: Send + Sync> FromRequest<S> for PortfolioBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let key = crate::submit::idempotency_key(req.headers())?;
        let multipart = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.to_ascii_lowercase().starts_with("multipart/form-data"));
        if multipart {
            let (body, bars) = parts(req, state).await?;
            return Ok(PortfolioBody { key, body, bars });
        }
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiError::bad_request(format!("unreadable body: {e}")))?;
        Ok(PortfolioBody {
            key,
            body: crate::extract::json_body(&bytes)?,
            bars: Vec::new(),
        })
    }
}

async fn parts<S: Send + Sync>(
    req: Request,
    state: &S,
) -> Result<(Value, Vec<(String, Upload)>), ApiError> {
    let bad = |e: String| ApiError::bad_request(format!("malformed multipart body: {e}"));
    let mut form = Multipart::from_request(req, state)
        .await
        .map_err(|e| bad(e.body_text()))?;
    let (mut portfolio, mut bars) = (None, Vec::new());
    while let Some(field) = form.next_field().await.map_err(|e| bad(e.body_text()))? {
        let name = field.name().unwrap_or_default().to_string();
        let data = field.bytes().await.map_err(|e| bad(e.body_text()))?;
        if name == "portfolio" {
            // Not checked by the limits layer, which sees a multipart body.
            crate::shape::check(&data)?;
            portfolio = Some(crate::extract::json_body(&data)?);
        } else if let Some(symbol) = name.strip_prefix(PART).filter(|s| !s.is_empty()) {
            // The universe and its benchmark: more parts name nothing read.
            if bars.len() > MAX_UNIVERSE {
                return Err(ApiError::field(
                    name,
                    format!(
                        "is past the {} symbols a portfolio reads (its universe and benchmark)",
                        MAX_UNIVERSE + 1
                    ),
                ));
            }
            let upload = read_bars(data).await?.map_err(|e| FieldError {
                field: e.field.replacen("csv_data", &name, 1),
                reason: e.reason,
            })?;
            bars.push((symbol.to_string(), upload));
        } else {
            return Err(ApiError::field(
                name,
                "unknown part; send 'portfolio' (JSON) and one 'bars.<SYMBOL>' per symbol whose bars you send (CSV text, Parquet or an Arrow IPC stream)",
            ));
        }
    }
    let portfolio = portfolio.ok_or_else(|| ApiError::field("portfolio", "is required"))?;
    Ok((portfolio, bars))
}
