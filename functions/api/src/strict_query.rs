//! Query parameters an operation does not declare are refused: a misspelt
//! `start_yr` answers 400 naming it (and `start_year`, the one meant)
//! instead of running with the default. The declared parameters are the
//! served OpenAPI document's, so the rule holds on every route, the
//! document and the server cannot disagree, and a new parameter is taken
//! once it is documented.

use crate::error::ApiError;
use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::sync::OnceLock;

/// Query parameter names per `METHOD path` of the document.
fn declared() -> &'static HashMap<String, Vec<String>> {
    static DECLARED: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    DECLARED.get_or_init(|| {
        let doc: serde_json::Value =
            serde_json::from_str(crate::routes::document()).expect("the document is JSON");
        let mut out = HashMap::new();
        let paths = doc["paths"].as_object().into_iter().flatten();
        for (path, item) in paths {
            let operations = item.as_object().into_iter().flatten();
            for (method, op) in operations {
                let names = op["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|p| p["in"] == "query")
                    .filter_map(|p| p["name"].as_str().map(str::to_string))
                    .collect();
                out.insert(format!("{} {path}", method.to_uppercase()), names);
            }
        }
        out
    })
}

/// The parameters `method path` declares; `None` for a route the document
/// leaves out (the documentation pages, the not-found answers of a
/// service's unknown sub-paths), which reads no parameter.
fn parameters(method: &str, path: &str) -> Option<&'static [String]> {
    let d = declared();
    let under_ws = format!("/ws{path}");
    [path, under_ws.as_str()]
        .iter()
        .find_map(|p| d.get(&format!("{method} {p}")))
        .map(Vec::as_slice)
}

/// Middleware: 400 for the first query parameter the matched operation
/// does not declare.
pub async fn refuse_unknown(req: Request, next: Next) -> Response {
    if let (Some(query), Some(path)) = (req.uri().query(), req.extensions().get::<MatchedPath>())
        && let Some(known) = parameters(req.method().as_str(), path.as_str())
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
