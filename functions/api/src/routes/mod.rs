//! Routers per service group. Each group router carries its own auth and error
//! envelope; `health` is added by whoever serves the group, so the embedded
//! server can merge groups without route clashes.

pub mod health;
pub mod schema_names;
pub mod usage;

use crate::error::{ErrorStyle, render_errors};
use crate::state::AppState;
use crate::strict_query::Declared;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware::{from_fn_with_state, map_response_with_state};
#[cfg(any(feature = "backtest", feature = "analytics", feature = "data"))]
use platform::accounts::Service;
use schema_names::documented;
use std::sync::OnceLock;
use utoipa_axum::router::OpenApiRouter;

pub use health::{auth_info, health};

/// Authenticated routes of a group, with its auth and error style applied;
/// `plan_check` off for routes every account may use (`/usage`).
#[cfg(any(feature = "backtest", feature = "analytics", feature = "data"))]
fn protected(
    state: &AppState,
    service: Service,
    style: ErrorStyle,
    routes: OpenApiRouter<AppState>,
) -> Router {
    gated(state, service, style, true, routes)
}

#[cfg(any(feature = "backtest", feature = "analytics", feature = "data"))]
fn gated(
    state: &AppState,
    service: Service,
    style: ErrorStyle,
    plan_check: bool,
    routes: OpenApiRouter<AppState>,
) -> Router {
    let (routes, api) = routes.split_for_parts();
    if !routes.has_routes() {
        return Router::new();
    }
    let routes = routes
        .route_layer(from_fn_with_state(
            (
                state.clone(),
                crate::auth::Gate {
                    service,
                    style,
                    plan_check,
                },
            ),
            crate::auth::require,
        ))
        .with_state(state.clone());
    limited(state, routes, Declared::of(&api)).layer(map_response_with_state(style, render_errors))
}

/// The request limits, the refusal of undeclared query parameters and the
/// panic guard, inside the error rendering so refusals and a panic's 500
/// get the group's envelope. Extractors get the same body limit.
pub(crate) fn limited(state: &AppState, routes: Router, declared: Declared) -> Router {
    routes
        .layer(from_fn_with_state(
            declared,
            crate::strict_query::refuse_unknown,
        ))
        .layer(axum::middleware::from_fn(crate::panics::catch))
        .layer(DefaultBodyLimit::max(state.limits.body_bytes))
        .layer(from_fn_with_state(state.limits, crate::limits::enforce))
}

/// `/health` and `/auth-info`, documented.
fn public_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(documented!(health::health))
        .routes(documented!(health::auth_info))
}

/// Public endpoints every group answers: `/health` and `/auth-info`.
pub fn public(state: &AppState, style: ErrorStyle) -> Router {
    let (routes, api) = public_routes().split_for_parts();
    let routes = routes.with_state(state.clone());
    limited(state, routes, Declared::of(&api)).layer(map_response_with_state(style, render_errors))
}

/// Backtest service (backtest-service.md), with its public tutorial and the
/// API documentation.
#[cfg(feature = "backtest")]
pub fn backtest(state: &AppState) -> Router {
    let (public, api) = crate::backtest::routes::public_routes().split_for_parts();
    let public = public
        .with_state(state.clone())
        .merge(crate::openapi::routes(served_document));
    let public = limited(state, public, Declared::of(&api))
        .layer(map_response_with_state(ErrorStyle::Backtest, render_errors));
    let routes = crate::backtest::routes();
    protected(state, Service::Backtest, ErrorStyle::Backtest, routes)
        .merge(gated(
            state,
            Service::Backtest,
            ErrorStyle::Backtest,
            false,
            usage::backtest_routes(),
        ))
        .merge(gated(
            state,
            Service::Backtest,
            ErrorStyle::Backtest,
            false,
            crate::webhooks::endpoints::routes(),
        ))
        .merge(public)
}

/// Analytics tools service (analytics-service.md).
#[cfg(feature = "analytics")]
pub fn analytics(state: &AppState) -> Router {
    protected(
        state,
        Service::Analytics,
        ErrorStyle::Analytics,
        crate::analytics::routes(),
    )
}

/// Indicator data service (indicator-data-service.md), served under `/ws` embedded.
#[cfg(feature = "data")]
pub fn data(state: &AppState) -> Router {
    protected(
        state,
        Service::Data,
        ErrorStyle::Data,
        crate::data::routes::routes(),
    )
    .merge(gated(
        state,
        Service::Data,
        ErrorStyle::Data,
        false,
        usage::data_routes(),
    ))
}

/// The published OpenAPI document of every group, `docs/openapi.json`. The
/// reference tests check it equals [`document`] built with every group, so it
/// is what the code serves; a function built with one group serves it whole.
pub const PUBLISHED: &str = include_str!("../../../../docs/openapi.json");

/// What `/openapi.json` and the documentation pages serve: the document
/// generated from the routes when every group is built in, else the
/// published one.
#[cfg(feature = "backtest")]
fn served_document() -> &'static str {
    if cfg!(all(
        feature = "backtest",
        feature = "analytics",
        feature = "data"
    )) {
        document()
    } else {
        PUBLISHED
    }
}

/// The OpenAPI document: the merge of what each group built in registered
/// with its routes (the data service under `/ws`), built once.
pub fn document() -> &'static str {
    static DOC: OnceLock<String> = OnceLock::new();
    DOC.get_or_init(|| {
        let groups: OpenApiRouter<AppState> = public_routes();
        #[cfg(feature = "backtest")]
        let groups = groups
            .merge(crate::backtest::routes::public_routes())
            .merge(crate::backtest::routes())
            .merge(usage::backtest_routes())
            .merge(crate::webhooks::endpoints::routes());
        #[cfg(feature = "analytics")]
        let groups = groups.merge(crate::analytics::routes());
        #[cfg(feature = "data")]
        let groups = groups.nest(
            "/ws",
            crate::data::routes::routes().merge(usage::data_routes()),
        );
        let mut doc = crate::openapi::base();
        doc.merge(groups.into_openapi());
        let mut value = serde_json::to_value(&doc).expect("the OpenAPI document serialises");
        camel_case_links(&mut value);
        common_responses(&mut value);
        date_range(&mut value);
        one_request_schema(&mut value);
        serde_json::to_string_pretty(&value).expect("the OpenAPI document serialises")
    })
}

/// The answers any operation may give before its handler runs (request
/// limits, login locks, the answer deadline: `api::limits`, `api::auth`), in
/// the envelope of the operation's service, added where the operation does
/// not document them itself.
fn common_responses(doc: &mut serde_json::Value) {
    use serde_json::{Value, json};
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for item in paths.values_mut().filter_map(Value::as_object_mut) {
        for (method, op) in item.iter_mut() {
            let Some(op) = op.as_object_mut() else {
                continue;
            };
            let tag = op["tags"][0].as_str().unwrap_or("backtest").to_string();
            let public = op.get("security") == Some(&json!([{}]));
            let schema = match tag.as_str() {
                "analytics" => "AnalyticsError",
                "data" => "DataError",
                _ => "ErrorDetail",
            };
            let body = |description: &str| {
                json!({
                    "description": description,
                    "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}
                })
            };
            let mut common = vec![
                (
                    "400",
                    body(
                        "A query parameter the operation does not declare, or a value it cannot take; the message and `field` name it",
                    ),
                ),
                ("414", body("The request target is longer than 8 KiB")),
                ("431", body("More than 100 headers or 16 KiB of them")),
                (
                    "503",
                    body("No answer within the deadline, or a dependency is unavailable; retry"),
                ),
            ];
            if method == "post" {
                common.push(("408", body("The body did not arrive within the time limit")));
                common.push((
                    "413",
                    body("The body is larger than the limit (6 MiB by default)"),
                ));
            }
            if !public {
                common.push(("401", body("Missing or invalid credentials")));
                let mut locked = body(
                    "Too many failed logins for this account or address, or a plan limit reached (requests per minute, monthly task compute: the message names the limit and its value); retry after Retry-After seconds",
                );
                locked["headers"] = json!({"Retry-After": {"description": "Seconds until the lock or the limit's window ends", "schema": {"type": "integer"}}});
                common.push(("429", locked));
            }
            let responses = op
                .entry("responses")
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .expect("responses are an object");
            for (status, response) in common {
                responses.entry(status).or_insert(response);
            }
        }
    }
}

/// Client generators take one request schema per operation: a body also
/// accepted as a form keeps `application/json` in `content`, and the other
/// media types move to `x-also-accepted` (same shape), which tools that know
/// it (the tests' body checks) read and generators skip.
fn one_request_schema(doc: &mut serde_json::Value) {
    use serde_json::Value;
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for op in paths
        .values_mut()
        .filter_map(Value::as_object_mut)
        .flat_map(|item| item.values_mut())
    {
        let Some(body) = op.get_mut("requestBody").and_then(Value::as_object_mut) else {
            continue;
        };
        let Some(content) = body.get_mut("content").and_then(Value::as_object_mut) else {
            continue;
        };
        if content.len() < 2 || !content.contains_key("application/json") {
            continue;
        }
        let (json, others): (serde_json::Map<_, _>, serde_json::Map<_, _>) =
            std::mem::take(content)
                .into_iter()
                .partition(|(k, _)| k == "application/json");
        *content = json;
        let names: Vec<&str> = others.keys().map(String::as_str).collect();
        body.insert(
            "description".into(),
            Value::String(format!(
                "JSON; the same fields are also accepted as {}",
                names.join(" and ")
            )),
        );
        body.insert("x-also-accepted".into(), Value::Object(others));
    }
}

/// Every `format: date` string also carries the years it is accepted in
/// (`services::dates`: 1800-2199), which JSON Schema says with a pattern.
fn date_range(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            if map.get("format").and_then(Value::as_str) == Some("date")
                && !map.contains_key("pattern")
            {
                map.insert("pattern".into(), Value::String(DATE_PATTERN.into()));
            }
            map.values_mut().for_each(date_range);
        }
        Value::Array(items) => items.iter_mut().for_each(date_range),
        _ => {}
    }
}

/// A `YYYY-MM-DD` date of the years 1800-2199.
pub const DATE_PATTERN: &str = "^(18|19|20|21)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$";

/// utoipa 5 writes a link's fields in snake case (`operation_id`); OpenAPI
/// spells them `operationId`, `operationRef` and `requestBody`, and clients
/// following links read only those.
fn camel_case_links(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            if let Some(Value::Object(links)) = map.get_mut("links") {
                for link in links.values_mut() {
                    if let Value::Object(fields) = link {
                        for (from, to) in [
                            ("operation_id", "operationId"),
                            ("operation_ref", "operationRef"),
                            ("request_body", "requestBody"),
                        ] {
                            if let Some(v) = fields.remove(from) {
                                fields.insert(to.into(), v);
                            }
                        }
                    }
                }
            }
            map.values_mut().for_each(camel_case_links);
        }
        Value::Array(items) => items.iter_mut().for_each(camel_case_links),
        _ => {}
    }
}

/// The endpoint groups, each deployable on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    #[cfg(feature = "backtest")]
    Backtest,
    #[cfg(feature = "analytics")]
    Analytics,
    #[cfg(feature = "data")]
    Data,
}

impl Group {
    /// Its name as a metrics dimension (`service`).
    pub fn name(self) -> &'static str {
        match self {
            #[cfg(feature = "backtest")]
            Group::Backtest => "backtest",
            #[cfg(feature = "analytics")]
            Group::Analytics => "analytics",
            #[cfg(feature = "data")]
            Group::Data => "data",
        }
    }
}

/// One group as its own service (a Lambda function): its routes with
/// `/health` and `/auth-info`, unknown paths answered in its envelope. The
/// data service keeps its `/ws` prefix, as the HTTP API routes it.
#[cfg(any(feature = "backtest", feature = "analytics", feature = "data"))]
pub fn service(state: &AppState, group: Group) -> Router {
    let fallback = || async { crate::ApiError::not_found("no such endpoint") };
    let (style, routes, under_ws) = match group {
        #[cfg(feature = "backtest")]
        Group::Backtest => (ErrorStyle::Backtest, backtest(state), false),
        #[cfg(feature = "analytics")]
        Group::Analytics => (ErrorStyle::Analytics, analytics(state), false),
        #[cfg(feature = "data")]
        Group::Data => (ErrorStyle::Data, data(state), true),
    };
    let app = public(state, style)
        .merge(routes)
        .fallback(fallback)
        .layer(map_response_with_state(style, render_errors));
    let app = if under_ws {
        Router::new()
            .nest("/ws", app)
            .fallback(fallback)
            .layer(map_response_with_state(style, render_errors))
    } else {
        app
    };
    crate::logging::layer(app.layer(crate::compression::layer()))
}

/// Every group on one listener: backtest and analytics at the root, the data
/// service under `/ws`. Unknown paths answer in the backtest envelope.
#[cfg(all(feature = "backtest", feature = "analytics", feature = "data"))]
pub fn embedded(state: &AppState) -> Router {
    let root = public(state, ErrorStyle::Backtest)
        .merge(backtest(state))
        .merge(analytics(state))
        .fallback(|| async { crate::ApiError::not_found("no such endpoint") })
        .layer(map_response_with_state(ErrorStyle::Backtest, render_errors));
    let ws = public(state, ErrorStyle::Data)
        .merge(data(state))
        .fallback(|| async { crate::ApiError::not_found("no such endpoint") })
        .layer(map_response_with_state(ErrorStyle::Data, render_errors));
    crate::logging::layer(root.nest("/ws", ws).layer(crate::compression::layer()))
}
