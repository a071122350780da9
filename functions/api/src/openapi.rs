//! The OpenAPI 3.1 document of the backtest, analytics and data services, generated from the handlers'
//! annotations and the schema types below, and the documentation pages
//! (Swagger UI at `/docs`, Redoc at `/redoc`) served from assets inside the binary.

use crate::compression::Fixed;
use axum::Router;
use axum::http::{HeaderMap, header};
use axum::response::{Html, Response};
use axum::routing::get;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;
use utoipa::openapi::security::{HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi, ToSchema};

/// What a submit answers: the new (or replayed) task's id.
#[derive(Serialize, ToSchema)]
pub struct SubmitResponse {
    pub message: String,
    pub task_id: String,
}

pub use crate::error::{AnalyticsError, DataError, ErrorDetail};
pub use services::backtest::answers::{
    BacktestResult, EncodedBlock, EncodedCondition, EncodedSignal, ValidateResponse,
};
pub use services::backtest::indicators::{IndicatorListItem, IndicatorMetadata, MetadataByCode};

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

/// The `Idempotency-Key` header every submit takes.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)]
pub struct IdempotencyKey {
    /// 1-255 visible ASCII characters; the same key from the same account within 24 h answers with what it first created (header `Idempotent-Replayed: true`).
    #[param(rename = "Idempotency-Key", pattern = "^[!-~]{1,255}$")]
    key: Option<String>,
}

/// `Prefer: wait=N` (RFC 7240) on a submit.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(dead_code)]
pub struct PreferWait {
    /// `wait=N`: hold the answer up to N seconds (at most 20) for the task's end, so that a quick task comes back finished in one round trip (200, its record); otherwise 202 as without it. Other preferences are ignored.
    #[param(rename = "Prefer", example = "wait=5")]
    prefer: Option<String>,
}

/// A submit's own refusals, answered in its group's error `schema`.
fn submit_refusals(
    schema: &str,
) -> BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::response::Response>> {
    error_responses(
        schema,
        &[
            (
                "422",
                "The Idempotency-Key was used for a different request",
            ),
            (
                "500",
                "The message broker refused the task (it is marked FAILED)",
            ),
        ],
    )
}

/// Who may submit backtests: signed in, with a plan that has the service.
pub struct BacktestAccess;

impl utoipa::IntoResponses for BacktestAccess {
    fn responses() -> BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::response::Response>>
    {
        error_responses(
            "ErrorDetail",
            &[
                ("401", "Missing or invalid credentials"),
                ("403", "The plan does not include the backtest service"),
            ],
        )
    }
}

/// [`submit_refusals`] of the backtest service.
pub struct BacktestSubmitRefusals;

impl utoipa::IntoResponses for BacktestSubmitRefusals {
    fn responses() -> BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::response::Response>>
    {
        submit_refusals("ErrorDetail")
    }
}

/// [`submit_refusals`] of the analytics service.
pub struct AnalyticsSubmitRefusals;

impl utoipa::IntoResponses for AnalyticsSubmitRefusals {
    fn responses() -> BTreeMap<String, utoipa::openapi::RefOr<utoipa::openapi::response::Response>>
    {
        submit_refusals("AnalyticsError")
    }
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

/// The two ways to sign in: an API key (each operation names the scope a
/// key needs) and the account's e-mail and password.
struct Shared;

impl Modify for Shared {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::HttpBuilder;
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            crate::scopes::BASIC,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Basic)
                    .description(Some(
                        "The account's e-mail and password: every scope, live mode.",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            crate::scopes::BEARER,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("mlk_<live|test>_<id>_<secret>")
                    .description(Some("An API key (`POST /keys`). The scope each operation needs is listed in its security requirement: `read` (data, analytics, results), `submit` (tasks and batches), `manage` (keys, webhooks, alerts); a key without it is answered 403 naming the scope. A `test` key works on the sample data set, its tasks and usage kept apart; its answers carry `MarketLab-Mode: test`."))
                    .build(),
            ),
        );
    }
}

/// A binary answer (Arrow IPC stream, Parquet): generators read it as a file.
pub struct Binary;

impl utoipa::PartialSchema for Binary {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary)))
            .into()
    }
}

impl ToSchema for Binary {}

#[derive(OpenApi)]
#[openapi(
    info(title = "marketlab API", version = "1.0.0", description = "Strategy backtests as asynchronous tasks (submit, poll, read the result), analytics tools (seasonality, correlation, beta) and the indicator data service under /ws. An API key (`Authorization: Bearer`, scoped: see `POST /keys`) or HTTP Basic authentication (account e-mail and password) on every operation except the public ones; answers that count against the plan's requests per minute carry `RateLimit-Policy` and `RateLimit` headers. Results are also pages to open in a browser, with charts: each task links its report as `report_url` ([backtest](#/backtest/backtest_report), [pattern match](#/analytics/cpm_report), [scanner backtest](#/analytics/scanner_report), [batch](#/backtest/batch_report)), and the analytics views draw [seasonality](/views/seasonality?ticker=SPX), [correlation](/views/correlation?benchmark=SPX&stock_comparison=IVV,TLT,GLD&start_date=2020-01-02&end_date=2024-12-31) and [a pattern search](/views/pattern?symbol=SPX&start_date=2024-03-01&end_date=2024-05-31&corr_per=80&time_in_market=10). `GET /usage` shows the caller's usage beside the plan's limits. Answers of 16 KiB or more in JSON, CSV or HTML come gzip- or brotli-compressed when `Accept-Encoding` asks, the time counted as the caller's compute (`compute_ms.compression` in `/usage`); Arrow streams and Parquet files never do: `Accept: application/vnd.apache.arrow.stream; compression=zstd` (or `lz4`) asks for Arrow's own buffer compression."),
    components(schemas(
        SubmitResponse, ValidateResponse,
        EncodedBlock, EncodedSignal, EncodedCondition, BacktestResult,
        IndicatorListItem, IndicatorMetadata, MetadataByCode, ErrorDetail, DataError, Health,
        AnalyticsError
    )),
    modifiers(&Shared),
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

// The pages' scripts and style sheet (1.7 MB, 1.1 MB, 188 KB), each encoding made
// once: public answers are never compressed per request.
static SWAGGER_JS_ANSWER: Fixed = Fixed::new("text/javascript", SWAGGER_JS);
static SWAGGER_CSS_ANSWER: Fixed = Fixed::new("text/css", SWAGGER_CSS);
static REDOC_JS_ANSWER: Fixed = Fixed::new("text/javascript", REDOC_JS);

async fn asset(answer: &'static Fixed, headers: HeaderMap) -> Response {
    let mut response = answer.respond(&headers).await;
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("public, max-age=86400"),
    );
    response
}

const DOCS_PAGE: &str = r##"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>marketlab API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><p style="font: 14px system-ui, sans-serif; margin: 12px 20px">Pages with charts:
<a href="/views/seasonality?ticker=SPX">seasonality</a> &middot;
<a href="/views/correlation?benchmark=SPX&amp;stock_comparison=IVV,TLT,GLD&amp;start_date=2020-01-02&amp;end_date=2024-12-31">correlation</a> &middot;
<a href="/views/pattern?symbol=SPX&amp;start_date=2024-03-01&amp;end_date=2024-05-31&amp;corr_per=80&amp;time_in_market=10">pattern search</a>
&middot; and each task's <code>report_url</code>.</p>
<div id="swagger-ui"></div>
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
            get(move |headers: HeaderMap| async move {
                // One document a process: each encoding made once.
                static DOCUMENT: OnceLock<Fixed> = OnceLock::new();
                DOCUMENT
                    .get_or_init(|| Fixed::new("application/json", document().as_bytes()))
                    .respond(&headers)
                    .await
            }),
        )
        .route("/docs", get(|| async { Html(DOCS_PAGE) }))
        .route(
            "/docs/swagger-ui-bundle.js",
            get(|headers| asset(&SWAGGER_JS_ANSWER, headers)),
        )
        .route(
            "/docs/swagger-ui.css",
            get(|headers| asset(&SWAGGER_CSS_ANSWER, headers)),
        )
        .route("/redoc", get(|| async { Html(REDOC_PAGE) }))
        .route(
            "/redoc/redoc.standalone.js",
            get(|headers| asset(&REDOC_JS_ANSWER, headers)),
        )
}
