//! The OpenAPI document built from the groups' routes, and the passes that
//! make utoipa's output say what the service does (links' field names,
//! the answers every operation may give, date ranges, one request schema
//! per operation, closed request objects).

use super::{public_routes, usage};
use crate::state::AppState;
use std::sync::OnceLock;
use utoipa_axum::router::OpenApiRouter;

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
            .merge(crate::webhooks::endpoints::routes())
            .merge(crate::keys::routes());
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
        closed_requests(&mut value);
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

/// Every object a request can hold is closed (`additionalProperties:
/// false`): an unknown field anywhere in a body is a 400 naming it, as
/// serde's `deny_unknown_fields` says on each request type.
/// utoipa writes that for structs but leaves the variants of a tagged enum
/// open, and a generator or fuzzer reading them would build bodies the
/// service refuses. Maps (`additionalProperties` a schema) and the parts of
/// an `allOf` (closing one would refuse its siblings' fields) stay as they
/// are.
fn closed_requests(doc: &mut serde_json::Value) {
    use serde_json::Value;
    let mut names = std::collections::BTreeSet::new();
    let mut roots = Vec::new();
    if let Some(paths) = doc.get("paths").and_then(Value::as_object) {
        for op in paths
            .values()
            .filter_map(Value::as_object)
            .flat_map(|i| i.values())
        {
            roots.push(&op["requestBody"]);
            roots.push(&op["parameters"]);
        }
    }
    let schemas = doc["components"]["schemas"].clone();
    let mut todo: Vec<&Value> = roots;
    while let Some(v) = todo.pop() {
        match v {
            Value::Object(map) => {
                if let Some(name) = map
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|r| r.strip_prefix("#/components/schemas/"))
                    && names.insert(name.to_string())
                {
                    todo.push(&schemas[name]);
                }
                todo.extend(
                    map.iter()
                        .filter(|(k, _)| !matches!(k.as_str(), "example" | "examples"))
                        .map(|(_, v)| v),
                );
            }
            Value::Array(items) => todo.extend(items),
            _ => {}
        }
    }
    fn close(v: &mut Value) {
        match v {
            Value::Object(map) => {
                if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                    map.insert("additionalProperties".into(), Value::Bool(false));
                }
                for (k, v) in map.iter_mut() {
                    match k.as_str() {
                        "example" | "examples" => {}
                        "allOf" => {
                            // Its parts' own members may still be closed.
                            for part in v.as_array_mut().into_iter().flatten() {
                                if let Value::Object(p) = part {
                                    p.values_mut().for_each(close);
                                }
                            }
                        }
                        _ => close(v),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(close),
            _ => {}
        }
    }
    for name in names {
        if let Some(schema) = doc["components"]["schemas"].get_mut(&name) {
            close(schema);
        }
    }
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        for op in paths
            .values_mut()
            .filter_map(Value::as_object_mut)
            .flat_map(|i| i.values_mut())
        {
            if let Some(body) = op.get_mut("requestBody") {
                close(body);
            }
        }
    }
}
