//! Errors are never 200 to a request for a table. Every documented
//! operation whose answer can be an Arrow stream, a Parquet file or CSV is
//! asked for each of them (by `Accept`, and by `format=` where it takes
//! one) with an error provoked: the answer has an error status and the JSON
//! envelope of its service. The analytics service's codes that the spec
//! sends in an HTTP 200 (407, 411) are 404 and 422 there; asked for JSON
//! they stay in an HTTP 200. On the real binary started with `--no-scan`,
//! so the scanner has no day yet: `client.scanner()`'s request.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::interchange::ARROW_STREAM;
use serde_json::{Value, json};
use tests::spawned::Spawned;

/// The table media types and their `format` names.
const TABLES: [(&str, &str); 3] = [
    (ARROW_STREAM, "arrow"),
    ("application/vnd.apache.parquet", "parquet"),
    ("text/csv", "csv"),
];

/// An operation of the document that can answer a table.
struct TableOperation {
    method: String,
    path: String,
    /// The table types its 200 declares, by `format` name.
    formats: Vec<&'static str>,
    /// Whether it declares a `format` query parameter.
    format_parameter: bool,
}

fn table_operations() -> Vec<TableOperation> {
    let doc: Value = serde_json::from_str(api::routes::document()).unwrap();
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let Some(content) = op["responses"]["200"]["content"].as_object() else {
                continue;
            };
            let formats: Vec<&str> = TABLES
                .iter()
                .filter(|(media, _)| content.contains_key(*media))
                .map(|(_, name)| *name)
                .collect();
            if formats.is_empty() {
                continue;
            }
            let format_parameter = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p["in"] == "query" && p["name"] == "format");
            out.push(TableOperation {
                method: method.to_uppercase(),
                path: path.clone(),
                formats,
                format_parameter,
            });
        }
    }
    out
}

/// A request to `op` that fails: its URI and body, the HTTP status a table
/// request gets, and the analytics code of the envelope (None elsewhere).
fn failing(op: &TableOperation) -> (String, Option<Value>, u16, Option<u64>) {
    let short = json!({"benchmark": "SPX", "stock_comparison": ["IVV", "TLT"],
        "start_date": "2024-01-01", "end_date": "2024-01-20"});
    let p = op.path.as_str();
    if p.contains("{task_id}") || p.contains("{batch_id}") {
        // No such task of the caller.
        let id = "00000000-0000-0000-0000-000000000000";
        let uri = p.replace("{task_id}", id).replace("{batch_id}", id);
        return (uri, None, 404, None);
    }
    if p.starts_with("/ws/") {
        // An unknown symbol.
        let uri = p
            .replace("{symbol}", "NO_SUCH_CODE")
            .replace("{ticker}", "NO_SUCH_CODE");
        let uri = if uri.contains("LimitDays") {
            format!("{uri}?days=5")
        } else {
            uri
        };
        return (uri, None, 404, None);
    }
    match p {
        // No scan has run yet: code 407.
        "/smart-stock-scanner/latest-day-all" => (p.into(), None, 404, Some(407)),
        // Too few sessions for the rolling window: code 411.
        "/symbol_corr" => (p.into(), Some(short), 422, Some(411)),
        "/symbol_beta" => {
            let mut b = short;
            b["end_date"] = json!("2024-06-30");
            b["roll_window"] = json!(200);
            (p.into(), Some(b), 422, Some(411))
        }
        other => panic!("{other} answers a table: give it an error case here"),
    }
}

/// The answer's status, content type and JSON body.
async fn send(
    s: &Spawned,
    method: &str,
    uri: &str,
    body: Option<&Value>,
    accept: Option<&str>,
) -> (u16, String, Value) {
    let client = reqwest::Client::new();
    let url = format!("{}{uri}", s.base);
    let mut r = match method {
        "POST" => client.post(url).json(body.unwrap_or(&json!({}))),
        _ => client.get(url),
    }
    .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD));
    if let Some(a) = accept {
        r = r.header("accept", a);
    }
    let resp = r.send().await.unwrap();
    let status = resp.status().as_u16();
    let media = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let bytes = resp.bytes().await.unwrap();
    let body = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
        panic!(
            "{method} {uri} ({accept:?}): {status} {media} is not JSON: {:?}",
            &bytes[..bytes.len().min(80)]
        )
    });
    (status, media, body)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_error_to_a_request_for_a_table_has_an_error_status_on_every_table_route() {
    let binary = tests::runtime_api::workspace_binaries(["marketlab"]).await[0].clone();
    let data = tempfile::tempdir().unwrap();
    let market = data.path().join("market");
    tests::server::sample_into(&market);
    let same = market.display().to_string();
    let s = Spawned::start(
        &binary,
        data.path(),
        &["--no-scan", "--test-market-dir", &same],
        "warn",
    );

    // `client.scanner()` before any scan: its exact request.
    let (status, media, body) = send(
        &s,
        "GET",
        "/smart-stock-scanner/latest-day-all",
        None,
        Some(ARROW_STREAM),
    )
    .await;
    assert_eq!(
        (status, media.as_str(), &body),
        (
            404,
            "application/json",
            &json!({"code": 407, "msg": "No scan has run yet", "data": null})
        )
    );

    let ops = table_operations();
    let mut asked = 0;
    for op in &ops {
        let (uri, body, http, code) = failing(op);
        let mut requests: Vec<(String, Option<&str>)> = Vec::new();
        for format in &op.formats {
            let media = TABLES.iter().find(|(_, n)| n == format).unwrap().0;
            requests.push((uri.clone(), Some(media)));
            if op.format_parameter {
                let sep = if uri.contains('?') { '&' } else { '?' };
                requests.push((format!("{uri}{sep}format={format}"), None));
            }
        }
        for (uri, accept) in &requests {
            let what = format!("{} {uri} (Accept {accept:?})", op.method);
            let (status, media, answer) = send(&s, &op.method, uri, body.as_ref(), *accept).await;
            assert_eq!(status, http, "{what}: {answer}");
            assert!(media.starts_with("application/json"), "{what}: {media}");
            if op.path.starts_with("/ws/") {
                assert_eq!(answer["status"], http, "{what}: {answer}");
                assert!(answer["error"].is_string(), "{what}: {answer}");
            } else if let Some(code) = code {
                assert_eq!(answer["code"], code, "{what}: {answer}");
                assert!(answer["data"].is_null(), "{what}: {answer}");
                assert!(answer["msg"].is_string(), "{what}: {answer}");
            } else {
                assert!(answer["detail"].is_string(), "{what}: {answer}");
            }
            asked += 1;
        }
        // The spec's JSON keeps its codes in an HTTP 200.
        if let Some(code) = code {
            let (status, _, answer) = send(&s, &op.method, &uri, body.as_ref(), None).await;
            assert_eq!(
                (status, &answer["code"]),
                (200, &json!(code)),
                "{}",
                op.path
            );
        }
    }
    println!(
        "{} table operations, {asked} failing requests for a table, none answered 200",
        ops.len()
    );
    assert!(ops.len() >= 16 && asked >= 60, "{} operations", ops.len());
}
