//! The OpenAPI 3.1 document of the backtest, analytics and data services, generated from the handlers'
//! annotations and the schema types below, and the documentation pages
//! (Swagger UI at `/docs`, Redoc at `/redoc`) served from assets inside the binary.

use axum::Router;
use axum::http::header;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi, ToSchema};

/// Strategy request (2.1). Only `symbol`, `entry` and `exit` are required;
/// string-typed numbers also accept JSON numbers; duplicate keys: last wins.
#[derive(Serialize, ToSchema)]
#[schema(as = StrategyParams, example = json!({"symbol": "SPX", "start_date": "2005-01-01", "risk_control": "-8//63",
    "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossBelow", "comparison_value": "30"}}},
    "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossAbove", "comparison_value": "70"}}}}))]
pub struct StrategyParamsDoc {
    /// Traded ticker.
    pub symbol: String,
    pub name: Option<String>,
    #[schema(value_type = Option<Object>)]
    pub description: Option<Value>,
    /// Default `SPX`.
    pub benchmark: Option<String>,
    /// `Long` (default) or `Short`.
    pub direction: Option<String>,
    /// `Daily` (default), `Hourly`, `Weekly`, `Monthly`.
    pub frequency: Option<String>,
    /// Default `Single`.
    pub strategy: Option<String>,
    /// Default `cash`.
    pub model: Option<String>,
    /// Default 100000.
    pub capital: Option<f64>,
    /// Fraction of equity per trade, default `1.000000`.
    pub capital_alloc: Option<String>,
    /// Fraction of traded value per side, default `0.0000`.
    pub commission: Option<String>,
    /// Fraction of price per side, default `0.0000`.
    pub slippage: Option<String>,
    /// YYYY-MM-DD, default `1800-10-01`.
    pub start_date: Option<String>,
    /// YYYY-MM-DD, default the latest date in the data.
    pub end_date: Option<String>,
    /// 0 next open, 1 next close, 2 current close (default).
    pub trade_price: Option<i64>,
    /// `stop-loss/take-profit/max-holding-bars`, default `//21`.
    pub risk_control: Option<String>,
    pub exclude_oo: Option<i64>,
    pub market_environment: Option<i64>,
    pub index_moving_average_slope: Option<i64>,
    pub opted: Option<i64>,
    pub win_rate: Option<String>,
    pub entry: RuleBlockDoc,
    pub exit: RuleBlockDoc,
    pub csv_mode: Option<bool>,
    /// Rows with Date, Open, High, Low, Close, Volume and optional Entry1-5/Exit1-5.
    #[schema(value_type = Option<Vec<Object>>)]
    pub csv_data: Option<Vec<Value>>,
}

/// Entry or exit rule (2.3).
#[derive(Serialize, ToSchema)]
#[schema(as = RuleBlock)]
pub struct RuleBlockDoc {
    /// `SingleCondition`, `Scoring`, `TimeOrder`, `RiskControlOnly` (exit only).
    pub rule_type: String,
    pub delay_bars: Option<i64>,
    /// One condition (SingleCondition) or an array of them (Scoring).
    #[schema(value_type = Option<Object>)]
    pub condition: Option<Value>,
    /// Scoring: the array may also be named `voters`.
    pub voters: Option<Vec<ConditionDoc>>,
    pub score_threshold: Option<i64>,
    /// TimeOrder steps, directly on the block.
    pub steps: Option<Vec<ConditionDoc>>,
    /// TimeOrder: maximum bars from first to last step (default 100000).
    pub signals_in_market: Option<i64>,
}

#[derive(Serialize, ToSchema)]
#[schema(as = Condition)]
pub struct ConditionDoc {
    pub signal: SignalDoc,
    pub rule: RuleDoc,
    pub qualifier: Option<QualifierDoc>,
}

/// Signal (2.4); `type` is detected when omitted: Sentiment, Technical, Symbol.
#[derive(Serialize, ToSchema)]
#[schema(as = Signal)]
pub struct SignalDoc {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub name: String,
    #[schema(value_type = Option<Object>)]
    pub params: Option<Value>,
}

/// Rule (2.5).
#[derive(Serialize, ToSchema)]
#[schema(as = Rule)]
pub struct RuleDoc {
    /// `SV`, `SVMA`, `SVEMA`, `MA`.
    pub comparison_type: Option<String>,
    /// An operator of 2.6, or `>=` / `<=`.
    pub type_name: String,
    pub comparison_value: Option<String>,
    pub period: Option<String>,
}

/// Qualifier (2.7): transforms the signal before the comparison.
#[derive(Serialize, ToSchema)]
#[schema(as = Qualifier)]
pub struct QualifierDoc {
    pub comparison_operator: String,
    pub calculation_period: String,
    /// `S` or `E`.
    pub ma_type: Option<String>,
}

/// What a submit answers: the new (or replayed) task's id.
#[derive(Serialize, ToSchema)]
pub struct SubmitResponse {
    pub message: String,
    pub task_id: String,
}

/// Indicator list item (2.13).
#[derive(Serialize, ToSchema)]
pub struct IndicatorListItem {
    pub chart_name: String,
    pub url: String,
    pub market_symbol: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub updated: String,
}

/// Indicator metadata (2.14), keyed by indicator code.
#[derive(Serialize, ToSchema)]
pub struct IndicatorMetadata {
    pub sentiment: String,
    pub description: String,
    pub opt_extreme: f64,
    pub pess_extreme: f64,
    pub contrary: String,
    pub premium: String,
    pub chart_type: String,
    pub updated: String,
}

#[derive(Serialize, ToSchema)]
pub struct MetadataByCode(pub BTreeMap<String, IndicatorMetadata>);

pub use crate::error::{AnalyticsError, DataError, ErrorDetail};
pub use services::backtest::answers::{
    BacktestResult, EncodedBlock, EncodedCondition, EncodedSignal, ValidateResponse,
};

/// The error answers every data operation shares (401, 404, 405).
pub struct DataErrors;

/// Error responses of `(status, description)` pairs, each with `schema` as its body.
pub fn error_responses(
    schema: &str,
    answers: &[(&str, &str)],
) -> BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::response::Response>> {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    answers
        .iter()
        .map(|(status, description)| {
            let response = ResponseBuilder::new()
                .description(*description)
                .content(
                    "application/json",
                    ContentBuilder::new()
                        .schema(Some(Ref::from_schema_name(schema)))
                        .build(),
                )
                .build();
            (status.to_string(), response.into())
        })
        .collect()
}

impl utoipa::IntoResponses for DataErrors {
    fn responses() -> BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::response::Response>>
    {
        error_responses(
            "DataError",
            &[
                ("401", "Bad credentials or no data plan"),
                ("404", "Unknown symbol or group"),
                ("405", "Not subscribed"),
            ],
        )
    }
}

#[derive(Serialize, ToSchema)]
pub struct Health {
    pub status: &'static str,
}

struct BasicAuth;

impl Modify for BasicAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "basic",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Basic)),
        );
    }
}

#[derive(OpenApi)]
#[openapi(
    info(title = "marketlab API", version = "1.0.0", description = "Strategy backtests as asynchronous tasks (submit, poll, read the result), analytics tools (seasonality, correlation, beta) and the indicator data service under /ws. HTTP Basic authentication (account e-mail and password) on every operation except the public ones."),
    components(schemas(
        StrategyParamsDoc, RuleBlockDoc, ConditionDoc, SignalDoc, RuleDoc, QualifierDoc, SubmitResponse, ValidateResponse,
        EncodedBlock, EncodedSignal, EncodedCondition, BacktestResult,
        IndicatorListItem, IndicatorMetadata, MetadataByCode, ErrorDetail, DataError, Health,
        AnalyticsError
    )),
    modifiers(&BasicAuth),
    security(("basic" = [])),
    tags((name = "backtest", description = "Strategy backtests"), (name = "analytics", description = "Analytics tools: seasonality, correlation and beta"), (name = "data", description = "Indicator data service, under /ws"), (name = "public", description = "No credentials needed"))
)]
pub struct BacktestApi;

/// What the document holds besides the operations: title, shared schemas,
/// the security scheme and tags. Each group adds its operations with its
/// routes (`routes::document`).
pub fn base() -> utoipa::openapi::OpenApi {
    BacktestApi::openapi()
}

const SWAGGER_JS: &[u8] = include_bytes!("../assets/swagger-ui/swagger-ui-bundle.js");
const SWAGGER_CSS: &[u8] = include_bytes!("../assets/swagger-ui/swagger-ui.css");
const REDOC_JS: &[u8] = include_bytes!("../assets/redoc/redoc.standalone.js");

fn asset(content_type: &'static str, body: &'static [u8]) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        body,
    )
        .into_response()
}

const DOCS_PAGE: &str = r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>marketlab API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui" });</script>
</body></html>"##;

const REDOC_PAGE: &str = r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>marketlab API</title></head>
<body><redoc spec-url="/openapi.json"></redoc>
<script src="/redoc/redoc.standalone.js"></script>
</body></html>"#;

/// `/openapi.json` (the text `document` gives), `/docs`, `/redoc` and their
/// assets: public, no internet needed.
pub fn routes(document: fn() -> &'static str) -> Router {
    Router::new()
        .route(
            "/openapi.json",
            get(move || async move { ([(header::CONTENT_TYPE, "application/json")], document()) }),
        )
        .route("/docs", get(|| async { Html(DOCS_PAGE) }))
        .route(
            "/docs/swagger-ui-bundle.js",
            get(|| async { asset("text/javascript", SWAGGER_JS) }),
        )
        .route(
            "/docs/swagger-ui.css",
            get(|| async { asset("text/css", SWAGGER_CSS) }),
        )
        .route("/redoc", get(|| async { Html(REDOC_PAGE) }))
        .route(
            "/redoc/redoc.standalone.js",
            get(|| async { asset("text/javascript", REDOC_JS) }),
        )
}
