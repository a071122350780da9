//! Query parameters an operation does not declare are refused: a misspelt
//! `start_yr` answers 400 naming it (and `start_year`, the one meant)
//! instead of running with the default. The declared parameters are those
//! each route registered with its OpenAPI operation (the document is made
//! of the same registrations), so the rule holds on every route, the
//! document and the server cannot disagree, and a new parameter is taken
//! once it is documented. The table is built with the routers, not on a
//! request.

use crate::error::ApiError;
use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::sync::Arc;
use utoipa::openapi::path::{Operation, ParameterIn};

/// Query parameter names per `METHOD path` of some routes' operations.
#[derive(Clone, Default)]
pub struct Declared(Arc<HashMap<String, Vec<String>>>);

impl Declared {
    /// The query parameters `doc`'s operations declare.
    pub fn of(doc: &utoipa::openapi::OpenApi) -> Self {
        let mut out = HashMap::new();
        for (path, item) in &doc.paths.paths {
            let common = item.parameters.iter().flatten();
            let operations: [(&str, &Option<Operation>); 5] = [
                ("GET", &item.get),
                ("POST", &item.post),
                ("PUT", &item.put),
                ("DELETE", &item.delete),
                ("PATCH", &item.patch),
            ];
            for (method, op) in operations {
                let Some(op) = op else { continue };
                let names = common
                    .clone()
                    .chain(op.parameters.iter().flatten())
                    .filter(|p| p.parameter_in == ParameterIn::Query)
                    .map(|p| p.name.clone())
                    .collect();
                out.insert(format!("{method} {path}"), names);
            }
        }
        Declared(Arc::new(out))
    }

    /// The parameters `method path` declares; `None` for a route these
    /// operations leave out (the documentation pages, the not-found
    /// answers of a service's unknown sub-paths), which reads none. The
    /// data service is served under `/ws`, registered without it.
    fn parameters(&self, method: &str, path: &str) -> Option<&[String]> {
        let bare = path.strip_prefix("/ws").filter(|p| p.starts_with('/'));
        [Some(path), bare]
            .into_iter()
            .flatten()
            .find_map(|p| self.0.get(&format!("{method} {p}")))
            .map(Vec::as_slice)
    }
}

/// Middleware: 400 for the first query parameter the matched operation
/// does not declare.
pub async fn refuse_unknown(
    State(declared): State<Declared>,
    req: Request,
    next: Next,
) -> Response {
    if let (Some(query), Some(path)) = (req.uri().query(), req.extensions().get::<MatchedPath>())
        && let Some(known) = declared.parameters(req.method().as_str(), path.as_str())
    {
        let unknown = form_urlencoded::parse(query.as_bytes())
            .map(|(name, _)| name)
            .find(|name| !known.iter().any(|k| k == name));
        if let Some(name) = unknown {
            let known = known.iter().map(String::as_str);
            let e: ApiError = services::FieldError::unknown_parameter(name, known).into();
            return e.into_response();
        }
    }
    next.run(req).await
}
