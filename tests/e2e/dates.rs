//! Every date a client can send, found in the OpenAPI document (query
//! parameters and body fields of format `date`, the data service's YYYYMMDD
//! dates, the usage month), is held to 1800-01-01..=2199-12-31: year 0081 is a
//! 4xx naming the field, whatever the operation.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Map, Value, json};
use tests::server::TestServer;

fn resolve<'a>(doc: &'a Value, mut s: &'a Value) -> &'a Value {
    while let Some(r) = s["$ref"].as_str() {
        s = &doc["components"]["schemas"][r.rsplit('/').next().unwrap()];
    }
    s
}

fn example(p: &Value) -> Option<Value> {
    p.get("example")
        .or_else(|| p["schema"].get("example"))
        .cloned()
}

fn is_date(schema: &Value) -> bool {
    schema["format"] == "date"
        || schema["pattern"]
            .as_str()
            .is_some_and(|p| p.starts_with("^(18|19|20|21)[0-9]{2}"))
}

/// A date of year 0081 in the form the field takes.
fn year_81(schema: &Value) -> &'static str {
    if schema["format"] == "date" {
        "0081-01-05"
    } else if schema["pattern"] == "^(18|19|20|21)[0-9]{2}-(0[1-9]|1[0-2])$" {
        "0081-01"
    } else {
        "00810105"
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_date_in_year_81_is_refused_on_every_operation_naming_its_field() {
    let (s, _dir) = TestServer::fresh().await;
    let doc: Value = serde_json::from_str(api::routes::document()).unwrap();
    let http = reqwest::Client::new();
    let mut checked = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let params = op["parameters"].as_array().cloned().unwrap_or_default();
            // Query dates: every other parameter at its example.
            for p in params.iter().filter(|p| is_date(&p["schema"])) {
                let name = p["name"].as_str().unwrap();
                let mut url = path.clone();
                let mut query = vec![(name.to_string(), year_81(&p["schema"]).to_string())];
                for other in params.iter().filter(|o| o["name"] != p["name"]) {
                    let Some(v) = example(other) else { continue };
                    let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                    let n = other["name"].as_str().unwrap();
                    match other["in"].as_str() {
                        Some("path") => url = url.replace(&format!("{{{n}}}"), &v),
                        Some("query") => query.push((n.to_string(), v)),
                        _ => {}
                    }
                }
                let resp = http
                    .get(s.url(&url))
                    .query(&query)
                    .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
                    .send()
                    .await
                    .unwrap();
                let status = resp.status().as_u16();
                let text = resp.text().await.unwrap();
                assert!(
                    (400..500).contains(&status)
                        && text.contains(name)
                        && text.contains("1800-01-01"),
                    "{method} {url} {query:?}: {status} {text:.300}"
                );
                checked.push(format!("{method} {path} ?{name}"));
            }
            // Body dates: the body's example (or its fields' examples) with one date changed.
            let Some(content) = op["requestBody"]["content"]["application/json"].as_object() else {
                continue;
            };
            let schema = resolve(&doc, &content["schema"]);
            let Some(props) = schema["properties"].as_object() else {
                continue;
            };
            let base: Map<String, Value> = match schema.get("example") {
                Some(Value::Object(o)) => o.clone(),
                _ => props
                    .iter()
                    .filter_map(|(k, p)| example(p).map(|v| (k.clone(), v)))
                    .collect(),
            };
            for (field, p) in props.iter().filter(|(_, p)| is_date(p)) {
                let mut body = base.clone();
                body.insert(field.clone(), json!(year_81(p)));
                let (status, answer) = s
                    .post(
                        path,
                        Some((DEMO_EMAIL, DEMO_PASSWORD)),
                        &Value::Object(body),
                    )
                    .await;
                let text = answer.to_string();
                assert!(
                    (400..500).contains(&status)
                        && text.contains(field.as_str())
                        && text.contains("1800-01-01"),
                    "{path} {field}: {status} {text:.300}"
                );
                checked.push(format!("{method} {path} {field}"));
            }
        }
    }
    // Query dates of the scanners, screens, pattern searches, views, data
    // service and usage; body dates of backtests, pattern searches,
    // correlation and scanner backtests.
    assert!(checked.len() >= 30, "{checked:#?}");
    s.stop().await;
}
