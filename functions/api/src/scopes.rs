//! The scope each operation needs, declared where it is registered
//! ([`scoped!`]): the same declaration checks the caller (403 naming the
//! scope) and writes the operation's security into the OpenAPI document.
//! A handler reached without the check answers 500 (`auth::Tenant`), so
//! a route registered without a scope fails closed.

use crate::auth::Caller;
use crate::error::ApiError;
use axum::extract::{Request, State};
use axum::middleware::{Next, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use platform::keys::Scope;
use utoipa::openapi::security::SecurityRequirement;
use utoipa_axum::router::UtoipaMethodRouter;

/// `documented!` with the scope the operations need: `scoped!(Submit: handler)`.
macro_rules! scoped {
    ($scope:ident: $($handlers:tt)*) => {
        $crate::scopes::with_scope(
            platform::keys::Scope::$scope,
            $crate::routes::schema_names::documented!($($handlers)*),
        )
    };
}
pub(crate) use scoped;

/// Set on a request whose caller holds the operation's scope.
#[derive(Debug, Clone, Copy)]
pub struct ScopeChecked(pub Scope);

/// The security schemes' names in the document.
pub const BASIC: &str = "basic";
pub const BEARER: &str = "bearer";

/// The operations of `routes` need `scope`: checked before their handlers,
/// and stated in their security (a key needs the scope; a password login
/// holds every scope).
pub fn with_scope<S: Clone + Send + Sync + 'static>(
    scope: Scope,
    (schemas, mut paths, router): UtoipaMethodRouter<S>,
) -> UtoipaMethodRouter<S> {
    for item in paths.paths.values_mut() {
        for op in [
            &mut item.get,
            &mut item.post,
            &mut item.put,
            &mut item.delete,
            &mut item.patch,
        ]
        .into_iter()
        .flatten()
        {
            op.security = Some(vec![
                SecurityRequirement::new(BASIC, Vec::<String>::new()),
                SecurityRequirement::new(BEARER, [scope.name()]),
            ]);
        }
    }
    (
        schemas,
        paths,
        router.layer(from_fn_with_state(scope, check)),
    )
}

/// A route outside the document (an alias of a documented one) with the
/// same scope check.
pub fn checked<S: Clone + Send + Sync + 'static>(
    scope: Scope,
    router: axum::routing::MethodRouter<S>,
) -> axum::routing::MethodRouter<S> {
    router.layer(from_fn_with_state(scope, check))
}

async fn check(State(scope): State<Scope>, mut request: Request, next: Next) -> Response {
    let Some(caller) = request.extensions().get::<Caller>() else {
        return ApiError::internal().into_response();
    };
    if !caller.allows(scope) {
        return ApiError::forbidden(format!(
            "this API key lacks the '{scope}' scope, which this operation needs (scope {scope})"
        ))
        .into_response();
    }
    request.extensions_mut().insert(ScopeChecked(scope));
    next.run(request).await
}
