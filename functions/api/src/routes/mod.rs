//! Routers per service group. Each group router carries its own auth; every
//! router renders its errors through [`render_errors`], which picks the
//! envelope by the request's path, so a route answers the same shape on
//! each function and the embedded server. `health` is added by whoever
//! serves the group, so the embedded server can merge groups without route
//! clashes.

mod document;
pub mod health;
pub mod schema_names;
pub mod usage;

use crate::error::render_errors;
use crate::state::AppState;
use crate::strict_query::Declared;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware::{from_fn_with_state, map_response};
#[cfg(any(feature = "backtest", feature = "analytics", feature = "data"))]
use platform::accounts::Service;
use schema_names::documented;
use utoipa_axum::router::OpenApiRouter;

pub use document::{DATE_PATTERN, document};
pub use health::{auth_info, health};

/// Authenticated routes of a group, with its auth and error envelope applied;
/// `plan_check` off for routes every account may use (`/usage`).
#[cfg(any(feature = "backtest", feature = "analytics", feature = "data"))]
fn protected(state: &AppState, service: Service, routes: OpenApiRouter<AppState>) -> Router {
    gated(state, service, true, routes)
}

#[cfg(any(feature = "backtest", feature = "analytics", feature = "data"))]
fn gated(
    state: &AppState,
    service: Service,
    plan_check: bool,
    routes: OpenApiRouter<AppState>,
) -> Router {
    let (routes, api) = routes.split_for_parts();
    if !routes.has_routes() {
        return Router::new();
    }
    // Compression inside auth: it runs on the compute pool under the
    // caller's share and is counted as the caller's compute.
    let routes = routes
        .route_layer(from_fn_with_state(
            crate::compression::Compressing(state.clone()),
            crate::compression::compress,
        ))
        .route_layer(from_fn_with_state(
            (
                state.clone(),
                crate::auth::Gate {
                    service,
                    plan_check,
                },
            ),
            crate::auth::require,
        ))
        .with_state(state.clone());
    limited(state, routes, Declared::of(&api)).layer(map_response(render_errors))
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
pub fn public(state: &AppState) -> Router {
    let (routes, api) = public_routes().split_for_parts();
    let routes = routes.with_state(state.clone());
    limited(state, routes, Declared::of(&api)).layer(map_response(render_errors))
}

/// Backtest service (backtest-service.md), with its public tutorial and the
/// API documentation.
#[cfg(feature = "backtest")]
pub fn backtest(state: &AppState) -> Router {
    let (public, api) = crate::backtest::routes::public_routes().split_for_parts();
    let public = public
        .with_state(state.clone())
        .merge(crate::openapi::routes(served_document));
    let public = limited(state, public, Declared::of(&api)).layer(map_response(render_errors));
    let routes = crate::backtest::routes();
    protected(state, Service::Backtest, routes)
        .merge(gated(
            state,
            Service::Backtest,
            false,
            usage::backtest_routes(),
        ))
        .merge(gated(
            state,
            Service::Backtest,
            false,
            crate::webhooks::endpoints::routes().merge(crate::keys::routes()),
        ))
        .merge(public)
}

/// Analytics tools service (analytics-service.md).
#[cfg(feature = "analytics")]
pub fn analytics(state: &AppState) -> Router {
    protected(state, Service::Analytics, crate::analytics::routes())
}

/// Indicator data service (indicator-data-service.md), served under `/ws` embedded.
#[cfg(feature = "data")]
pub fn data(state: &AppState) -> Router {
    protected(state, Service::Data, crate::data::routes::routes()).merge(gated(
        state,
        Service::Data,
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
/// `/health` and `/auth-info`, unknown paths answered 404 in the envelope
/// of their path's group. The data service keeps its `/ws` prefix, as the
/// HTTP API routes it.
#[cfg(any(feature = "backtest", feature = "analytics", feature = "data"))]
pub fn service(state: &AppState, group: Group) -> Router {
    let fallback = || async { crate::ApiError::not_found("no such endpoint") };
    let (routes, under_ws) = match group {
        #[cfg(feature = "backtest")]
        Group::Backtest => (backtest(state), false),
        #[cfg(feature = "analytics")]
        Group::Analytics => (analytics(state), false),
        #[cfg(feature = "data")]
        Group::Data => (data(state), true),
    };
    let app = public(state)
        .merge(routes)
        .fallback(fallback)
        .layer(map_response(render_errors));
    let app = if under_ws {
        Router::new()
            .nest("/ws", app)
            .fallback(fallback)
            .layer(map_response(render_errors))
    } else {
        app
    };
    crate::logging::layer(app)
}

/// Every group on one listener: backtest and analytics at the root, the data
/// service under `/ws`. Unknown paths answer in their path's envelope, as on
/// the functions.
#[cfg(all(feature = "backtest", feature = "analytics", feature = "data"))]
pub fn embedded(state: &AppState) -> Router {
    let root = public(state)
        .merge(backtest(state))
        .merge(analytics(state))
        .fallback(|| async { crate::ApiError::not_found("no such endpoint") })
        .layer(map_response(render_errors));
    let ws = public(state)
        .merge(data(state))
        .fallback(|| async { crate::ApiError::not_found("no such endpoint") })
        .layer(map_response(render_errors));
    crate::logging::layer(root.nest("/ws", ws))
}
