//! Each group's router in process (tower's `oneshot`, no socket): its
//! envelope, its auth, and a 400 that names the field. The end-to-end suite
//! covers the same over real HTTP with market data.

use api::AppState;
use api::routes::{Group, service};
use axum::body::Body;
use axum::http::{Request, header};
use base64::Engine;
use http_body_util::BodyExt;
use platform::accounts::{Authenticator, SqliteAccountStore};
use platform::marketdata::{LocalDir, ParquetMarketData};
use platform::queue::LocalQueue;
use platform::sqlite::Database;
use platform::tasks::{Page, SqliteTaskStore};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceExt;

const USER: (&str, &str) = ("router@example.test", "router-password");

/// Every port in memory, over an empty market directory (kept while the
/// state is).
async fn state() -> (tempfile::TempDir, AppState) {
    let dir = tempfile::tempdir().unwrap();
    let s = state_on(Database::in_memory().unwrap(), dir.path()).await;
    (dir, s)
}

/// The ports over `db`.
async fn state_on(db: Database, market: &std::path::Path) -> AppState {
    let accounts = Arc::new(SqliteAccountStore::new(db.clone()));
    platform::accounts::add_account(accounts.as_ref(), USER.0, USER.1, "pro", vec![])
        .await
        .unwrap();
    let (queue, _receiver) = LocalQueue::new();
    let rows = Arc::new(platform::webhooks::SqliteWebhooks::new(db.clone()));
    let hooks = platform::webhooks::Hooks {
        store: rows.clone(),
        outbox: rows,
        keys: platform::webhooks::signing::Keyring::new([1; 32]),
        policy: Default::default(),
    };
    AppState {
        tasks: Arc::new(SqliteTaskStore::new(db)),
        queue: Arc::new(queue),
        market: Arc::new(ParquetMarketData::new(Arc::new(LocalDir::new(market)))),
        uploads: platform::uploads::Uploads::new(Arc::new(LocalDir::new(market))),
        scanner: Arc::new(platform::scanner::ParquetScannerStore::new(
            Arc::new(LocalDir::new(market)),
            platform::scanner::READ_TTL,
        )),
        auth: Arc::new(Authenticator::embedded(accounts, Duration::from_secs(60)).unwrap()),
        data_legacy_json: false,
        limits: Default::default(),
        metering: None,
        webhooks: Some(hooks),
        compute: Default::default(),
        long_polls: api::state::long_polls(&Default::default()),
        batch_reads: Default::default(),
        test_data: None,
    }
}

/// A JSON answer of `uri`, read.
fn json(uri: &str, (status, bytes): (u16, bytes::Bytes)) -> (u16, Value) {
    let value = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
        panic!(
            "{uri}: not JSON: {}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
        )
    });
    (status, value)
}

/// The answer's status and body, whatever its type.
async fn call_raw(
    group: Group,
    state: &AppState,
    method: &str,
    uri: &str,
    user: Option<(&str, &str)>,
    body: Option<Value>,
) -> (u16, bytes::Bytes) {
    let (status, _, bytes) = call_app(service(state, group), method, uri, user, body).await;
    (status, bytes)
}

/// `app`'s answer: status, headers and body.
async fn call_app(
    app: axum::Router,
    method: &str,
    uri: &str,
    user: Option<(&str, &str)>,
    body: Option<Value>,
) -> (u16, axum::http::HeaderMap, bytes::Bytes) {
    let mut req = Request::builder().method(method).uri(uri);
    if let Some((u, p)) = user {
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"));
        req = req.header(header::AUTHORIZATION, format!("Basic {token}"));
    }
    let req = match body {
        Some(b) => req
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(b.to_string())),
        None => req.body(Body::empty()),
    }
    .unwrap();
    let resp = app.oneshot(req).await.unwrap();
    let (status, headers) = (resp.status().as_u16(), resp.headers().clone());
    (
        status,
        headers,
        resp.into_body().collect().await.unwrap().to_bytes(),
    )
}

/// One group's router over a fresh [`state`].
struct Router {
    group: Group,
    state: AppState,
    _market: tempfile::TempDir,
}

impl Router {
    async fn new(group: Group) -> Router {
        let (market, state) = state().await;
        Router {
            group,
            state,
            _market: market,
        }
    }

    async fn call(
        &self,
        method: &str,
        uri: &str,
        user: Option<(&str, &str)>,
        body: Option<Value>,
    ) -> (u16, Value) {
        json(
            uri,
            call_raw(self.group, &self.state, method, uri, user, body).await,
        )
    }

    async fn get(&self, uri: &str, user: Option<(&str, &str)>) -> (u16, Value) {
        self.call("GET", uri, user, None).await
    }
}

#[tokio::test]
async fn backtest_router() {
    let r = Router::new(Group::Backtest).await;
    assert_eq!(r.get("/health", None).await, (200, json!({"status": "ok"})));
    let (status, body) = r.get("/backtest/tasks", None).await;
    assert_eq!(status, 401);
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("authentication required")
    );
    let (status, body) = r.get("/backtest/tasks?limit=0", Some(USER)).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        json!({"detail": "parameter 'limit': must be between 1 and 200, got 0", "field": "limit"})
    );
    let (status, body) = r
        .call(
            "POST",
            "/backtest/validate",
            Some(USER),
            Some(json!({"entry": {}, "exit": {}})),
        )
        .await;
    assert_eq!(status, 400);
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("parameter 'entry.rule_type': is required"),
        "{body}"
    );
    let (status, body) = r.get("/nowhere", None).await;
    assert_eq!(
        (status, body["detail"].as_str()),
        (404, Some("no such endpoint"))
    );
}

#[tokio::test]
async fn analytics_router() {
    let r = Router::new(Group::Analytics).await;
    let (status, body) = r
        .get("/seasonality/performance-by-month?ticker=SPX", None)
        .await;
    assert_eq!(status, 401);
    assert_eq!(
        (body["code"].as_i64(), &body["data"]),
        (Some(401), &Value::Null)
    );
    let (status, body) = r
        .call(
            "POST",
            "/symbol_corr",
            Some(USER),
            Some(json!({"benchmark": "SPX", "stock_comparison": ["AAPL"], "roll_window": 1})),
        )
        .await;
    assert_eq!(
        (status, body),
        (
            400,
            json!({"code": 400, "msg": "parameter 'start_date': is required", "data": null, "field": "start_date"})
        )
    );
    // Typed queries: a missing parameter, a value of the wrong type and one
    // outside its range each name the parameter (before any data is read).
    for (path, message) in [
        (
            "/seasonality/performance-by-week",
            "parameter 'ticker': is required",
        ),
        (
            "/seasonality/performance-by-day-of-single-month?ticker=SPX&category=weekly",
            "parameter 'category': 'weekly' is not one of calendar_day, trading_day",
        ),
        (
            "/seasonality/performance-by-week?ticker=SPX&start_year=1700",
            "parameter 'start_year': must be between 1800 and 2200, got 1700",
        ),
    ] {
        let (status, body) = r.get(path, Some(USER)).await;
        let field = message.split('\'').nth(1).unwrap();
        assert_eq!(
            (status, body),
            (
                400,
                json!({"code": 400, "msg": message, "data": null, "field": field})
            ),
            "{path}"
        );
    }
    let (status, body) = r.get("/seasonality/no-such-view", Some(USER)).await;
    assert_eq!((status, body["code"].as_i64()), (404, Some(404)), "{body}");
    // Pattern matching: the patterns need no data; a bad value is refused
    // before any data is read, by the synchronous forms and the submits alike.
    let (status, body) = r.get("/cpm/get-predefined-patterns", Some(USER)).await;
    assert_eq!(
        (status, body["patterns"].as_array().map(Vec::len)),
        (200, Some(8))
    );
    for (method, path) in [
        ("POST", "/cpm/scan"),
        ("POST", "/cpm/scan_with_backtest"),
        ("POST", "/cpm/scan/start"),
        ("POST", "/cpm/backtest/start"),
    ] {
        let (status, body) = r.call(method, path, Some(USER), Some(json!({"symbol": "SPX", "corr_per": 101, "time_in_market": 21, "system_pattern": "double_top"})))
        .await;
        assert_eq!(
            (status, body),
            (
                400,
                json!({"code": 400, "msg": "parameter 'corr_per': must be between 0 and 100, got 101", "data": null, "field": "corr_per"})
            ),
            "{path}"
        );
    }
    let (status, body) = r.get("/cpm/scan?symbol=SPX&corr_per=80&time_in_market=21&direction=Up&system_pattern=double_top", Some(USER))
    .await;
    assert_eq!(
        (status, body["msg"].as_str()),
        (
            400,
            Some("parameter 'direction': must be Long or Short, got 'Up'")
        )
    );
    assert_eq!(
        r.state
            .tasks
            .list(USER.0, &Default::default(), Page::new(10, 0))
            .await
            .unwrap()
            .total,
        0,
        "refused submits store nothing"
    );
}

#[tokio::test]
async fn data_router() {
    let r = Router::new(Group::Data).await;
    let (status, body) = r.get("/ws/getAllSymbols", Some((USER.0, "wrong"))).await;
    assert_eq!(status, 401);
    assert_eq!(body["status"], 401);
    assert!(body["error"].is_string());
    let (status, body) = r
        .get("/ws/getSymbolDataLimitDays/SPX_OPTIX?days=abc", Some(USER))
        .await;
    assert_eq!(
        (status, body),
        (
            400,
            json!({"error": "parameter 'days': 'abc' is not a positive integer", "status": 400, "field": "days"})
        )
    );
    let (status, body) = r.get("/ws/getAllSymbols", Some(USER)).await;
    assert_eq!(
        (status, body["status"].as_i64()),
        (503, Some(503)),
        "an empty market directory: {body}"
    );
}

/// A captured log, written by the production formatter.
#[derive(Clone, Default)]
struct Captured(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A fault deep in a store answers a bare 500, and its one log line at the
/// edge carries the whole cause chain: the failed statement's message and
/// SQLite's own error under it.
#[tokio::test]
async fn an_internal_error_is_logged_once_with_its_cause_chain() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::in_memory().unwrap();
    let s = state_on(db.clone(), dir.path()).await;
    db.run(|c| c.execute_batch("DROP TABLE tasks"))
        .await
        .unwrap();

    let log = Captured::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let (status, body) = json(
        "/backtest/tasks",
        call_raw(
            Group::Backtest,
            &s,
            "GET",
            "/backtest/tasks",
            Some(USER),
            None,
        )
        .await,
    );
    assert_eq!(status, 500);
    // The client reads that it failed and the request id, not the cause.
    let detail = body["detail"].as_str().unwrap();
    let id = detail
        .strip_prefix("internal server error (request id ")
        .and_then(|d| d.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{body}"));
    assert!(uuid::Uuid::parse_str(id).is_ok(), "{body}");

    let text = String::from_utf8(log.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|l: &Value| l["fields"]["message"] == "internal error")
        .collect();
    assert_eq!(lines.len(), 1, "logged once: {text}");
    let chain = lines[0]["fields"]["error"].as_str().unwrap();
    assert!(
        chain.starts_with("internal error: no such table: tasks: ")
            && chain.split(": ").count() >= 4,
        "{chain}"
    );
}

/// Another tenant, owning one task of every kind.
const OTHER: (&str, &str) = ("other@example.test", "other-password");

/// An operation of the served document, with its group and parameters.
struct Operation {
    method: String,
    path: String,
    group: Group,
    public: bool,
    /// Required query parameters, by name.
    required: Vec<String>,
    /// Every query parameter it declares.
    declared: Vec<String>,
    has_body: bool,
}

fn operations() -> Vec<Operation> {
    let doc: Value = serde_json::from_str(api::routes::document()).unwrap();
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if !["get", "post", "delete"].contains(&method.as_str()) {
                continue;
            }
            let tag = op["tags"][0].as_str().unwrap_or_default();
            let group = if path.starts_with("/ws/") {
                Group::Data
            } else if tag == "analytics" {
                Group::Analytics
            } else {
                Group::Backtest
            };
            let required = op["parameters"]
                .as_array()
                .map(|ps| {
                    ps.iter()
                        .filter(|p| p["in"] == "query" && p["required"] == true)
                        .map(|p| p["name"].as_str().unwrap().to_string())
                        .collect()
                })
                .unwrap_or_default();
            ops.push(Operation {
                method: method.to_uppercase(),
                path: path.clone(),
                group,
                public: op["security"] == json!([{}]),
                required,
                declared: op["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|p| p["in"] == "query")
                    .map(|p| p["name"].as_str().unwrap().to_string())
                    .collect(),
                has_body: op.get("requestBody").is_some(),
            });
        }
    }
    ops
}

/// The error in `group`'s envelope: its status and message.
fn envelope(group: Group, body: &Value) -> Option<(u64, String)> {
    let text = |v: &Value| v.as_str().map(str::to_string);
    match group {
        Group::Backtest => Some((0, text(&body["detail"])?)),
        Group::Analytics => {
            (body["data"].is_null()).then_some(())?;
            Some((body["code"].as_u64()?, text(&body["msg"])?))
        }
        Group::Data => Some((body["status"].as_u64()?, text(&body["error"])?)),
    }
}

/// `path` with its parameters filled: task ids from `ids` by the route's kind.
fn filled(path: &str, ids: &std::collections::HashMap<&str, String>) -> String {
    let kind = if path.starts_with("/backtest/batch/") {
        "batch"
    } else if path.starts_with("/backtest/portfolio/") {
        "portfolio"
    } else if path.starts_with("/backtest/") {
        "backtest"
    } else if path.starts_with("/cpm/") {
        "cpm"
    } else {
        "scanner"
    };
    path.replace("{task_id}", &ids[kind])
        .replace("{batch_id}", &ids[kind])
        .replace("{symbol}", "SPX")
        .replace("{ticker}", "SPX")
        .replace("{group}", "sp500")
        .replace("{file}", "lightweight-charts.js")
        .replace("{webhook_id}", &ids["webhook"])
        .replace("{delivery_id}", "msg_00000000000000000000000000000000")
        .replace("{alert_id}", &ids["alert"])
}

/// Every operation of the document, in process over its group's own
/// service (as a Lambda function serves it): without credentials each
/// protected one is 401 in its service's envelope and each public one is
/// not; each task route given another tenant's task is 404 in the envelope;
/// each operation with required query parameters, called without them, is
/// a 4xx in the service's codes naming one of them. A new route is covered when it is documented.
#[tokio::test]
async fn every_operation_guards_its_tasks_and_answers_in_its_envelope() {
    use platform::tasks::{NewTask, TaskKind};
    let (_dir, s) = state().await;
    let mut ids = std::collections::HashMap::new();
    for (name, kind) in [
        ("backtest", TaskKind::StrategyBacktest),
        ("batch", TaskKind::BatchBacktest),
        ("cpm", TaskKind::CpmScan),
        ("scanner", TaskKind::ScannerBacktest),
        ("portfolio", TaskKind::PortfolioBacktest),
    ] {
        let task = s
            .tasks
            .create(NewTask {
                owner: OTHER.0.into(),
                kind,
                params: json!({}),
            })
            .await
            .unwrap();
        ids.insert(name, task.id.to_string());
    }
    // Another tenant's webhook endpoint and scanner alert.
    let hooks = s.webhooks.clone().unwrap();
    let endpoint = platform::webhooks::Endpoint {
        id: "ep_other".into(),
        account: OTHER.0.into(),
        url: "https://93.184.216.34/".into(),
        events: vec![],
        description: String::new(),
        created_at: platform::tasks::now(),
        secret_version: 1,
        previous_until: None,
        disabled: None,
        last_success: None,
    };
    hooks.store.put_endpoint(&endpoint).await.unwrap();
    let alert = platform::webhooks::Alert {
        id: "alert_other".into(),
        account: OTHER.0.into(),
        name: String::new(),
        signals: vec![],
        tickers: vec![],
        min_win_rate: None,
        min_trades: None,
        created_at: platform::tasks::now(),
    };
    hooks.store.put_alert(&alert).await.unwrap();
    ids.insert("webhook", endpoint.id.clone());
    ids.insert("alert", alert.id.clone());
    let ops = operations();
    assert!(ops.len() >= 90, "{} operations", ops.len());
    let (mut guarded, mut tasks, mut named, mut bodies) = (0, 0, 0, 0);
    for op in &ops {
        let uri = filled(&op.path, &ids);
        let body = op.has_body.then(|| json!({}));
        let what = format!("{} {}", op.method, op.path);
        if op.public {
            let (status, _) = call_raw(op.group, &s, &op.method, &uri, None, None).await;
            assert_eq!(status, 200, "{what} is public");
            continue;
        }
        let (status, answer) = json(
            &uri,
            call_raw(op.group, &s, &op.method, &uri, None, body.clone()).await,
        );
        assert_eq!(status, 401, "{what}: {answer}");
        let (code, message) =
            envelope(op.group, &answer).unwrap_or_else(|| panic!("{what}: {answer}"));
        assert!(code == 0 || code == 401, "{what}: {answer}");
        assert!(
            message.contains("authentication required"),
            "{what}: {answer}"
        );
        guarded += 1;

        if ["{task_id}", "{batch_id}", "{webhook_id}", "{alert_id}"]
            .iter()
            .any(|p| op.path.contains(p))
        {
            let (status, answer) = json(
                &uri,
                call_raw(op.group, &s, &op.method, &uri, Some(USER), body.clone()).await,
            );
            assert_eq!(status, 404, "{what} of another tenant: {answer}");
            envelope(op.group, &answer).unwrap_or_else(|| panic!("{what}: {answer}"));
            tasks += 1;
        }
        if !op.required.is_empty() && op.method == "GET" && !op.path.contains('{') {
            let (status, answer) = json(
                &uri,
                call_raw(op.group, &s, "GET", &uri, Some(USER), None).await,
            );
            let (code, message) =
                envelope(op.group, &answer).unwrap_or_else(|| panic!("{what}: {answer}"));
            // 400, or the data service's own codes (406 a malformed date,
            // 410 days out of range); never an auth or lookup answer.
            let code = if code == 0 { u64::from(status) } else { code };
            assert!(
                (400..500).contains(&code) && ![401, 403, 404].contains(&code),
                "{what} without its parameters: {status} {answer}"
            );
            assert!(
                op.required
                    .iter()
                    .any(|p| message.starts_with(&format!("parameter '{p}': "))),
                "{what}: '{message}' names none of {:?} in the one wording of field errors",
                op.required
            );
            named += 1;
        }
        // A body without its fields: every 400 speaks the same words.
        if op.has_body && !op.path.contains('{') {
            let (status, answer) = json(
                &uri,
                call_raw(op.group, &s, &op.method, &uri, Some(USER), Some(json!({}))).await,
            );
            // A body whose fields are all optional is taken.
            if status < 300 {
                continue;
            }
            let (code, message) =
                envelope(op.group, &answer).unwrap_or_else(|| panic!("{what}: {answer}"));
            let code = if code == 0 { u64::from(status) } else { code };
            if code == 400 {
                assert!(
                    message.starts_with("parameter '"),
                    "{what} with an empty body: '{message}' is not worded as a field error"
                );
                bodies += 1;
            }
        }
    }
    println!(
        "{} operations: {guarded} refuse a caller without credentials, {tasks} hide another tenant's task, endpoint or alert, {named} name a missing parameter, {bodies} a missing body field",
        ops.len()
    );
    assert!(
        tasks >= 15 && named >= 10 && bodies >= 10,
        "{tasks} task routes, {named} with parameters, {bodies} with body fields"
    );
}

/// Every operation of the document, over its group's own service, refuses a
/// query parameter it does not declare: 400 in its service's envelope
/// naming the parameter, and a near miss of a declared one names the one
/// meant. Every parameter it declares passes the rule. A new operation is
/// covered when it is documented.
#[tokio::test]
async fn every_operation_refuses_a_query_parameter_it_does_not_declare() {
    let (_dir, s) = state().await;
    let ids: std::collections::HashMap<&str, String> = [
        "backtest",
        "batch",
        "portfolio",
        "cpm",
        "scanner",
        "webhook",
        "alert",
    ]
    .into_iter()
    .map(|k| (k, "00000000-0000-0000-0000-000000000000".to_string()))
    .collect();
    let ops = operations();
    let mut near_misses = 0;
    for op in &ops {
        let base = filled(&op.path, &ids);
        let what = format!("{} {}", op.method, op.path);
        let body = op.has_body.then(|| json!({}));
        let user = (!op.public).then_some(USER);
        let uri = format!("{base}?zz_not_a_parameter=1");
        let (status, bytes) = call_raw(op.group, &s, &op.method, &uri, user, body.clone()).await;
        let (status, answer) = json(&uri, (status, bytes));
        assert_eq!(status, 400, "{what}: {answer}");
        let (code, message) =
            envelope(op.group, &answer).unwrap_or_else(|| panic!("{what}: {answer}"));
        assert!(code == 0 || code == 400, "{what}: {answer}");
        assert_eq!(
            message, "parameter 'zz_not_a_parameter': unknown query parameter",
            "{what}"
        );
        if let Some(first) = op.declared.iter().find(|p| p.len() >= 4) {
            let uri = format!("{base}?{first}x=1");
            let (_, answer) = json(
                &uri,
                call_raw(op.group, &s, &op.method, &uri, user, body.clone()).await,
            );
            let (_, message) =
                envelope(op.group, &answer).unwrap_or_else(|| panic!("{what}: {answer}"));
            assert!(
                message.starts_with(&format!(
                    "parameter '{first}x': unknown query parameter (did you mean '"
                )),
                "{what}: {message}"
            );
            near_misses += 1;
        }
        if !op.declared.is_empty() {
            let all: Vec<String> = op.declared.iter().map(|p| format!("{p}=1")).collect();
            let uri = format!("{base}?{}", all.join("&"));
            let (_, bytes) = call_raw(op.group, &s, &op.method, &uri, user, body.clone()).await;
            let text = String::from_utf8_lossy(&bytes);
            assert!(!text.contains("unknown query parameter"), "{what}: {text}");
        }
    }
    assert!(
        ops.len() >= 90 && near_misses >= 40,
        "{} operations, {near_misses} near misses",
        ops.len()
    );
}

/// An error body's shape, by its exact members (`field` aside): the three
/// envelopes of the spec's rulings (DECISIONS.md, "Errors always have a
/// JSON body").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `{"detail"}`: the backtest service's, and the deployment's own routes'.
    Detail,
    /// `{"code", "msg", "data": null}`: the analytics service's.
    CodeMsg,
    /// `{"error", "status"}`: the data service's.
    ErrorStatus,
}

fn shape_of(body: &Value) -> Option<Shape> {
    let mut keys: Vec<&str> = body.as_object()?.keys().map(String::as_str).collect();
    keys.retain(|k| *k != "field");
    keys.sort_unstable();
    match keys.as_slice() {
        ["detail"] if body["detail"].is_string() => Some(Shape::Detail),
        ["code", "data", "msg"] if body["msg"].is_string() && body["data"].is_null() => {
            Some(Shape::CodeMsg)
        }
        ["error", "status"] if body["error"].is_string() => Some(Shape::ErrorStatus),
        _ => None,
    }
}

/// The first segment of a path (`cpm` of `/cpm/tasks`).
fn first_segment(path: &str) -> &str {
    path.trim_start_matches('/')
        .split(['/', '?'])
        .next()
        .unwrap_or("")
}

/// The shape the rule gives `path`, worked out from the document here
/// rather than from the code's list: the data service's under `/ws`, the
/// analytics service's where the document's analytics operations are, the
/// backtest service's `{"detail"}` everywhere else (its own routes, the
/// deployment's, unknown paths).
fn expected_shape(path: &str, ops: &[Operation]) -> Shape {
    let first = first_segment(path);
    if first == "ws" {
        Shape::ErrorStatus
    } else if ops
        .iter()
        .any(|op| op.group == Group::Analytics && first_segment(&op.path) == first)
    {
        Shape::CodeMsg
    } else {
        Shape::Detail
    }
}

/// An account store that is down: every read fails as unavailable, as
/// DynamoDB does when it times out.
struct DownAccounts;

#[async_trait::async_trait]
impl platform::accounts::AccountStore for DownAccounts {
    async fn get(
        &self,
        _: &str,
    ) -> Result<Option<platform::accounts::AccountRecord>, platform::PortError> {
        Err(platform::PortError::unavailable("the accounts table"))
    }
    async fn put(&self, _: platform::accounts::AccountRecord) -> Result<(), platform::PortError> {
        Err(platform::PortError::unavailable("the accounts table"))
    }
    async fn list(&self) -> Result<Vec<platform::accounts::AccountRecord>, platform::PortError> {
        Err(platform::PortError::unavailable("the accounts table"))
    }
}

/// The code's one choice of shape covers the document: every analytics
/// operation's first segment is in its list, and no other operation's is.
#[test]
fn the_analytics_routes_are_the_documented_analytics_operations() {
    let ops = operations();
    let mut documented: Vec<&str> = ops
        .iter()
        .filter(|op| op.group == Group::Analytics)
        .map(|op| first_segment(&op.path))
        .collect();
    documented.sort_unstable();
    documented.dedup();
    let mut listed = api::error::ANALYTICS_ROUTES.to_vec();
    listed.sort_unstable();
    assert_eq!(listed, documented);
    for op in ops.iter().filter(|op| op.group != Group::Analytics) {
        assert!(
            !listed.contains(&first_segment(&op.path)),
            "{} {} is not an analytics route",
            op.method,
            op.path
        );
    }
}

/// One shape for one condition wherever a path is served: every operation
/// of the document, and paths no router has, called on each function's
/// router (each Lambda function's) and on the embedded server's. Without
/// credentials the function that serves an operation answers 401 (or 200
/// if public) and a function that does not answers 404; with an account
/// store that is down each protected operation answers 503 with
/// `Retry-After`. Every error answer, on every router, has the shape the
/// path's group gives it: the spec's envelope for its services' routes,
/// `{"detail"}` for the rest.
#[tokio::test]
async fn every_route_answers_one_error_shape_on_every_function() {
    let (_dir, s) = state().await;
    let down = AppState {
        auth: Arc::new(
            Authenticator::embedded(Arc::new(DownAccounts), Duration::from_secs(60)).unwrap(),
        ),
        ..s.clone()
    };
    let ids: std::collections::HashMap<&str, String> = [
        "backtest",
        "batch",
        "portfolio",
        "cpm",
        "scanner",
        "webhook",
        "alert",
    ]
    .into_iter()
    .map(|k| (k, "00000000-0000-0000-0000-000000000000".to_string()))
    .collect();
    let ops = operations();
    let groups = [Group::Backtest, Group::Analytics, Group::Data];
    // (served by, path, method, public); None: served by no router.
    let mut calls: Vec<(Option<Group>, String, String, bool, bool)> = ops
        .iter()
        .map(|op| {
            (
                Some(op.group),
                filled(&op.path, &ids),
                op.method.clone(),
                op.public,
                op.has_body,
            )
        })
        .collect();
    for path in [
        "/nowhere",
        "/backtest/nowhere",
        "/cpm/nowhere",
        "/views/nowhere",
        "/smart-stock-scanner/nowhere/at/all",
        "/ws/nowhere",
        "/keys/a/b/c",
        "/health?zz_not_a_parameter=1",
        "/ws/health?zz_not_a_parameter=1",
    ] {
        calls.push((None, path.to_string(), "GET".into(), false, false));
    }
    let (mut shapes, mut refused, mut down_503) =
        (std::collections::BTreeMap::<String, usize>::new(), 0, 0);
    for (owner, uri, method, public, has_body) in &calls {
        let want = expected_shape(uri, &ops);
        let body = has_body.then(|| json!({}));
        let what = format!("{method} {uri}");
        // Each function's router, then the embedded server's.
        let routers = groups
            .iter()
            .map(|g| (Some(*g), service(&s, *g)))
            .chain([(None, api::routes::embedded(&s))]);
        for (group, app) in routers {
            let on = group.map_or("embedded".to_string(), |g| g.name().to_string());
            let (status, _, bytes) = call_app(app, method, uri, None, body.clone()).await;
            let serves = owner.is_some() && (group.is_none() || group == *owner);
            if serves {
                let expected = if *public { 200 } else { 401 };
                assert_eq!(status, expected, "{what} on {on}");
            } else if owner.is_some() {
                // Public pages are served by more than one function.
                assert!(
                    status == 404 || (*public && status == 200),
                    "{what} on {on}: {status}"
                );
            }
            if status < 400 {
                continue;
            }
            let (_, answer) = json(uri, (status, bytes));
            assert_eq!(
                shape_of(&answer),
                Some(want),
                "{what} on {on}: {status} {answer}"
            );
            *shapes.entry(format!("{want:?} {status}")).or_default() += 1;
            refused += 1;
        }
        // A store that is down: 503 in the same shape, with a retry.
        if *public || owner.is_none() {
            continue;
        }
        for app in [service(&down, owner.unwrap()), api::routes::embedded(&down)] {
            let (status, headers, bytes) =
                call_app(app, method, uri, Some(USER), body.clone()).await;
            let (_, answer) = json(uri, (status, bytes));
            assert_eq!(status, 503, "{what} with the accounts down: {answer}");
            assert_eq!(headers["retry-after"], "1", "{what}");
            assert_eq!(shape_of(&answer), Some(want), "{what}: {answer}");
            down_503 += 1;
        }
    }
    println!(
        "{} paths on 4 routers: {refused} error answers, {down_503} answers 503 with the accounts down; by shape and status: {shapes:?}",
        calls.len()
    );
    assert!(refused >= 400 && down_503 >= 200, "{refused} {down_503}");
}
