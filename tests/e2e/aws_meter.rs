//! A metering proxy between a function and the AWS emulator: it forwards
//! every call unchanged and counts what AWS bills for it, as AWS counts it.
//!
//! - DynamoDB: read request units by the size of the items read (4 KB
//!   steps; half for an eventually consistent read; a filtered or counted
//!   query pays for every item its key condition reads), write request units
//!   by the larger of the item's size before and after the write (1 KB
//!   steps), and for each global secondary index whose entry the write
//!   changes, its entry's units too; a transaction's writes (and condition
//!   checks) two units per KB each. Item sizes follow DynamoDB's rules
//!   (attribute names plus values; numbers by their significant digits).
//! - S3: GET/HEAD requests and the bytes they return; PUT/POST/COPY/LIST
//!   requests and the bytes they send.
//! - SQS: requests in 64 KB chunks.
//!
//! The item sizes are read from the emulator itself (a consistent `GetItem`
//! before and after each write, not counted), so the units are those the
//! table would have charged for these items.

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// What a stretch of calls would be billed for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    pub dynamo_read_units: f64,
    pub dynamo_write_units: f64,
    pub s3_gets: u64,
    pub s3_get_bytes: u64,
    pub s3_puts: u64,
    pub s3_put_bytes: u64,
    pub sqs_requests: u64,
    /// Calls by service and operation, e.g. `dynamodb:GetItem`, `s3:GET object`.
    pub calls: BTreeMap<String, u64>,
    /// Time the meter spent on its own reads of item sizes, which a
    /// caller's wall time should not include.
    pub metering_ms: f64,
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.dynamo_read_units += other.dynamo_read_units;
        self.dynamo_write_units += other.dynamo_write_units;
        self.s3_gets += other.s3_gets;
        self.s3_get_bytes += other.s3_get_bytes;
        self.s3_puts += other.s3_puts;
        self.s3_put_bytes += other.s3_put_bytes;
        self.sqs_requests += other.sqs_requests;
        for (k, n) in &other.calls {
            *self.calls.entry(k.clone()).or_default() += n;
        }
        self.metering_ms += other.metering_ms;
    }

    /// What `self` has beyond `b`, floored at zero.
    pub fn less(&self, b: &Usage) -> Usage {
        let d = |x: u64, y: u64| x.saturating_sub(y);
        Usage {
            dynamo_read_units: (self.dynamo_read_units - b.dynamo_read_units).max(0.0),
            dynamo_write_units: (self.dynamo_write_units - b.dynamo_write_units).max(0.0),
            s3_gets: d(self.s3_gets, b.s3_gets),
            s3_get_bytes: d(self.s3_get_bytes, b.s3_get_bytes),
            s3_puts: d(self.s3_puts, b.s3_puts),
            s3_put_bytes: d(self.s3_put_bytes, b.s3_put_bytes),
            sqs_requests: d(self.sqs_requests, b.sqs_requests),
            calls: self
                .calls
                .iter()
                .map(|(k, n)| (k.clone(), d(*n, b.calls.get(k).copied().unwrap_or(0))))
                .filter(|(_, n)| *n > 0)
                .collect(),
            metering_ms: (self.metering_ms - b.metering_ms).max(0.0),
        }
    }

    /// This usage times `k` (an average over `1/k` runs, or a share).
    pub fn scaled(&self, k: f64) -> Usage {
        let r = |n: u64| (n as f64 * k).round() as u64;
        Usage {
            dynamo_read_units: self.dynamo_read_units * k,
            dynamo_write_units: self.dynamo_write_units * k,
            s3_gets: r(self.s3_gets),
            s3_get_bytes: r(self.s3_get_bytes),
            s3_puts: r(self.s3_puts),
            s3_put_bytes: r(self.s3_put_bytes),
            sqs_requests: r(self.sqs_requests),
            calls: self.calls.iter().map(|(c, n)| (c.clone(), r(*n))).collect(),
            metering_ms: self.metering_ms * k,
        }
    }
}

#[derive(Clone)]
struct Proxy {
    upstream: String,
    http: reqwest::Client,
    usage: Arc<Mutex<Usage>>,
    tables: Arc<Mutex<HashMap<String, Table>>>,
}

/// The proxy, on 127.0.0.1; point a function's `AWS_ENDPOINT_URL` at
/// [`Meter::endpoint`]. Stops when dropped.
pub struct Meter {
    pub endpoint: String,
    usage: Arc<Mutex<Usage>>,
    server: tokio::task::JoinHandle<()>,
}

impl Meter {
    pub async fn start(upstream: &str) -> Meter {
        let proxy = Proxy {
            upstream: upstream.trim_end_matches('/').to_string(),
            http: reqwest::Client::new(),
            usage: Arc::new(Mutex::new(Usage::default())),
            tables: Arc::new(Mutex::new(HashMap::new())),
        };
        let usage = proxy.usage.clone();
        let app = axum::Router::new().fallback(forward).with_state(proxy);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Meter {
            endpoint,
            usage,
            server,
        }
    }

    /// The usage since the last call, and a fresh count from here.
    pub fn take(&self) -> Usage {
        std::mem::take(&mut *self.usage.lock().unwrap())
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn forward(State(p): State<Proxy>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let target = parts
        .headers
        .get("x-amz-target")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let path_and_query = parts
        .uri
        .path_and_query()
        .map(|pq| pq.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    if let Some(op) = target.strip_prefix("DynamoDB_20120810.") {
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let writes = p.write_keys(op, &request, &parts.headers).await;
        let mut before = Vec::new();
        for (table, key) in writes.iter().flatten() {
            before.push(p.item(table, key, &parts.headers).await);
        }
        let (status, headers, answer) = p
            .send(&parts.method, &path_and_query, &parts.headers, body)
            .await;
        // A transaction's writes are billed twice over (two units per KB).
        let times = if op == "TransactWriteItems" { 2.0 } else { 1.0 };
        let units = match &writes {
            Some(keys) => {
                let mut w = 0.0;
                for ((table, key), before) in keys.iter().zip(&before) {
                    let after = p.item(table, key, &parts.headers).await;
                    let size = |i: Option<&Value>| i.map_or(0, item_size);
                    let mut units = write_units(size(before.as_ref()).max(size(after.as_ref())));
                    for index in &p.table(table, &parts.headers).await.indexes {
                        units += index.write_units(before.as_ref(), after.as_ref());
                    }
                    w += times * units;
                }
                Units::Write(w)
            }
            None => {
                let read: Value = serde_json::from_slice(&answer).unwrap_or(Value::Null);
                Units::Read(p.read_units(op, &request, &read, &parts.headers).await)
            }
        };
        let mut u = p.usage.lock().unwrap();
        match units {
            Units::Write(w) => u.dynamo_write_units += w,
            Units::Read(r) => u.dynamo_read_units += r,
        }
        *u.calls.entry(format!("dynamodb:{op}")).or_default() += 1;
        drop(u);
        return reply(status, headers, answer);
    }
    let sqs_op = target
        .strip_prefix("AmazonSQS.")
        .map(str::to_string)
        .or_else(|| {
            // The query protocol: a form with Action=...
            std::str::from_utf8(&body)
                .ok()
                .and_then(|b| b.split('&').find_map(|kv| kv.strip_prefix("Action=")))
                .map(str::to_string)
        });
    let sent = body.len();
    let (status, headers, answer) = p
        .send(&parts.method, &path_and_query, &parts.headers, body)
        .await;
    let mut u = p.usage.lock().unwrap();
    if let Some(op) = sqs_op {
        u.sqs_requests += sent.max(answer.len()).div_ceil(65_536).max(1) as u64;
        *u.calls.entry(format!("sqs:{op}")).or_default() += 1;
    } else {
        let path = parts.uri.path().trim_start_matches('/');
        let object = path.split_once('/').is_some_and(|(_, key)| !key.is_empty());
        let list = !object && parts.uri.query().is_some_and(|q| q.contains("list-type"));
        let what = match (&parts.method, object) {
            (&Method::GET, true) | (&Method::HEAD, true) => {
                u.s3_gets += 1;
                u.s3_get_bytes += answer.len() as u64;
                "GET object"
            }
            (&Method::DELETE, _) => "DELETE",
            (&Method::GET, false) if list => {
                u.s3_puts += 1;
                "LIST"
            }
            (m, _) => {
                u.s3_puts += 1;
                u.s3_put_bytes += sent as u64;
                if *m == Method::PUT { "PUT" } else { "POST" }
            }
        };
        *u.calls.entry(format!("s3:{what}")).or_default() += 1;
    }
    drop(u);
    reply(status, headers, answer)
}

enum Units {
    Read(f64),
    Write(f64),
}

fn reply(status: StatusCode, headers: HeaderMap, body: Bytes) -> Response {
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    for (k, v) in &headers {
        // The length stays: a HEAD's answer has no body but says the object's size.
        if k != "transfer-encoding" && k != "connection" {
            r.headers_mut().append(k, v.clone());
        }
    }
    r
}

impl Proxy {
    async fn send(
        &self,
        method: &Method,
        path_and_query: &str,
        headers: &HeaderMap,
        body: Bytes,
    ) -> (StatusCode, HeaderMap, Bytes) {
        let mut req = self
            .http
            .request(method.clone(), format!("{}{path_and_query}", self.upstream));
        for (k, v) in headers {
            if k != "host" && k != "content-length" {
                req = req.header(k, v);
            }
        }
        let res = req.body(body).send().await.expect("the emulator answers");
        let (status, headers) = (res.status(), res.headers().clone());
        (status, headers, res.bytes().await.unwrap_or_default())
    }

    /// A DynamoDB call of our own (not counted; its time is).
    async fn dynamo(&self, op: &str, request: Value, headers: &HeaderMap) -> Value {
        let t = std::time::Instant::now();
        let mut h = HeaderMap::new();
        if let Some(a) = headers.get("authorization") {
            h.insert("authorization", a.clone());
        }
        h.insert(
            "x-amz-target",
            format!("DynamoDB_20120810.{op}").parse().unwrap(),
        );
        h.insert(
            "content-type",
            "application/x-amz-json-1.0".parse().unwrap(),
        );
        let (_, _, body) = self
            .send(&Method::POST, "/", &h, Bytes::from(request.to_string()))
            .await;
        self.usage.lock().unwrap().metering_ms += t.elapsed().as_secs_f64() * 1e3;
        serde_json::from_slice(&body).unwrap_or(Value::Null)
    }

    async fn table(&self, table: &str, headers: &HeaderMap) -> Table {
        if let Some(t) = self.tables.lock().unwrap().get(table) {
            return t.clone();
        }
        let d = self
            .dynamo("DescribeTable", json!({"TableName": table}), headers)
            .await;
        let t = Table::from_description(&d["Table"]);
        self.tables.lock().unwrap().insert(table.into(), t.clone());
        t
    }

    /// The tables and keys a write names (a transaction's actions, each
    /// condition check billed as a write of its item), or `None` for a read.
    async fn write_keys(
        &self,
        op: &str,
        request: &Value,
        headers: &HeaderMap,
    ) -> Option<Vec<(String, Value)>> {
        match op {
            "UpdateItem" | "DeleteItem" | "PutItem" => {
                Some(vec![self.write_key(request, headers).await?])
            }
            "TransactWriteItems" => {
                let mut keys = Vec::new();
                for action in request["TransactItems"].as_array()? {
                    let (_, write) = action.as_object()?.iter().next()?;
                    keys.push(self.write_key(write, headers).await?);
                }
                Some(keys)
            }
            "BatchWriteItem" | "TransactGetItems" => {
                panic!("the meter does not count DynamoDB {op} yet")
            }
            _ => None,
        }
    }

    /// The table and key of one write: a `PutItem`'s from its item.
    async fn write_key(&self, write: &Value, headers: &HeaderMap) -> Option<(String, Value)> {
        let table = write["TableName"].as_str()?.to_string();
        if write.get("Key").is_some() {
            return Some((table, write["Key"].clone()));
        }
        let keys = self.table(&table, headers).await.keys;
        Some((table, pick(&write["Item"], &keys)))
    }

    /// The whole item at `key`, read consistently.
    async fn item(&self, table: &str, key: &Value, headers: &HeaderMap) -> Option<Value> {
        let got = self
            .dynamo(
                "GetItem",
                json!({"TableName": table, "Key": key, "ConsistentRead": true}),
                headers,
            )
            .await;
        got.get("Item").cloned()
    }

    /// A read pays for whole items, whatever it projects or filters out.
    async fn read_units(
        &self,
        op: &str,
        request: &Value,
        answer: &Value,
        headers: &HeaderMap,
    ) -> f64 {
        let consistency = |r: &Value| {
            if r["ConsistentRead"].as_bool() == Some(true) {
                1.0
            } else {
                0.5
            }
        };
        match op {
            "GetItem" => {
                let item = if request.get("ProjectionExpression").is_some() {
                    let table = request["TableName"].as_str().unwrap_or_default();
                    self.item(table, &request["Key"], headers).await
                } else {
                    answer.get("Item").cloned()
                };
                read_units(item.as_ref().map_or(0, item_size)) * consistency(request)
            }
            // Each item of a batch is read as a GetItem.
            "BatchGetItem" => {
                let mut units = 0.0;
                for (table, keys) in request["RequestItems"].as_object().into_iter().flatten() {
                    for key in keys["Keys"].as_array().into_iter().flatten() {
                        let item = self.item(table, key, headers).await;
                        units += read_units(item.as_ref().map_or(0, item_size)) * consistency(keys);
                    }
                }
                units
            }
            "Query" | "Scan" => {
                let narrowed = ["FilterExpression", "ProjectionExpression", "Select"]
                    .iter()
                    .any(|f| request.get(*f).is_some());
                let items = if narrowed {
                    // What the key condition reads, whole.
                    let mut read = request.clone();
                    let o = read.as_object_mut().unwrap();
                    for f in ["FilterExpression", "ProjectionExpression", "Select"] {
                        o.remove(f);
                    }
                    let used = request["KeyConditionExpression"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    for (field, sigil) in [
                        ("ExpressionAttributeNames", '#'),
                        ("ExpressionAttributeValues", ':'),
                    ] {
                        if let Some(Value::Object(m)) = o.get_mut(field) {
                            m.retain(|k, _| mentions(&used, k, sigil));
                            if m.is_empty() {
                                o.remove(field);
                            }
                        }
                    }
                    self.dynamo(op, read, headers).await["Items"].clone()
                } else {
                    answer["Items"].clone()
                };
                let bytes: usize = items.as_array().into_iter().flatten().map(item_size).sum();
                read_units(bytes) * consistency(request)
            }
            // Table management and the like are not billed per request.
            _ => 0.0,
        }
    }
}

/// What the meter needs of a table: its key and its global secondary indexes.
#[derive(Debug, Clone, Default)]
struct Table {
    keys: Vec<String>,
    indexes: Vec<Index>,
}

/// A global secondary index: its key and what it projects (`None`: all).
#[derive(Debug, Clone)]
struct Index {
    keys: Vec<String>,
    projected: Option<Vec<String>>,
}

fn key_names(schema: &Value) -> Vec<String> {
    schema
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|k| k["AttributeName"].as_str().map(str::to_string))
        .collect()
}

impl Table {
    fn from_description(d: &Value) -> Table {
        let keys = key_names(&d["KeySchema"]);
        let indexes = d["GlobalSecondaryIndexes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| {
                let index_keys = key_names(&i["KeySchema"]);
                let p = &i["Projection"];
                let projected = match p["ProjectionType"].as_str() {
                    Some("ALL") => None,
                    _ => {
                        let mut a: Vec<String> = keys.iter().chain(&index_keys).cloned().collect();
                        for n in p["NonKeyAttributes"].as_array().into_iter().flatten() {
                            a.extend(n.as_str().map(str::to_string));
                        }
                        Some(a)
                    }
                };
                Index {
                    keys: index_keys,
                    projected,
                }
            })
            .collect();
        Table { keys, indexes }
    }
}

impl Index {
    /// The index's entry for a table item, if the item has the index's key.
    fn entry(&self, item: Option<&Value>) -> Option<Value> {
        let item = item?;
        if self.keys.iter().any(|k| item.get(k).is_none()) {
            return None;
        }
        Some(match &self.projected {
            None => item.clone(),
            Some(names) => pick(item, names),
        })
    }

    /// Write units the index is charged for a write that took an item from
    /// `before` to `after`: none if its entry did not change, one write if
    /// it changed in place, a delete and a put if its key changed.
    fn write_units(&self, before: Option<&Value>, after: Option<&Value>) -> f64 {
        let (b, a) = (self.entry(before), self.entry(after));
        match (&b, &a) {
            _ if b == a => 0.0,
            (Some(b), Some(a)) if self.keys.iter().all(|k| b.get(k) == a.get(k)) => {
                write_units(item_size(b).max(item_size(a)))
            }
            _ => [b, a]
                .iter()
                .flatten()
                .map(|e| write_units(item_size(e)))
                .sum(),
        }
    }
}

/// The named attributes of a DynamoDB JSON item.
fn pick(item: &Value, names: &[String]) -> Value {
    Value::Object(
        names
            .iter()
            .filter_map(|n| Some((n.clone(), item.get(n)?.clone())))
            .collect(),
    )
}

/// Whether `expression` uses the placeholder `name` (e.g. `#k`, `:v`) as a
/// whole token.
fn mentions(expression: &str, name: &str, sigil: char) -> bool {
    debug_assert!(name.starts_with(sigil));
    expression.match_indices(name).any(|(i, _)| {
        let after = expression[i + name.len()..].chars().next();
        !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

/// Read request units of a strongly consistent read of `bytes` (4 KB steps,
/// at least one).
pub fn read_units(bytes: usize) -> f64 {
    bytes.div_ceil(4096).max(1) as f64
}

/// Write request units of a write of an item of `bytes` (1 KB steps, at
/// least one).
pub fn write_units(bytes: usize) -> f64 {
    bytes.div_ceil(1024).max(1) as f64
}

/// An item's size as DynamoDB bills it: each attribute's name plus its
/// value. `item` is in DynamoDB JSON (`{"name": {"S": "..."}}`).
pub fn item_size(item: &Value) -> usize {
    item.as_object()
        .into_iter()
        .flatten()
        .map(|(name, v)| name.len() + value_size(v))
        .sum()
}

fn value_size(v: &Value) -> usize {
    let Some((kind, x)) = v.as_object().and_then(|o| o.iter().next()) else {
        return 0;
    };
    let str_len = |x: &Value| x.as_str().map_or(0, str::len);
    let bin_len = |x: &Value| {
        x.as_str().map_or(0, |b| {
            base64::Engine::decode(&base64::engine::general_purpose::STANDARD, b)
                .map_or(0, |d| d.len())
        })
    };
    match kind.as_str() {
        "S" => str_len(x),
        "N" => number_size(x.as_str().unwrap_or("0")),
        "B" => bin_len(x),
        "BOOL" | "NULL" => 1,
        "SS" => elements(x).map(str_len).sum(),
        "NS" => elements(x)
            .map(|n| number_size(n.as_str().unwrap_or("0")))
            .sum(),
        "BS" => elements(x).map(bin_len).sum(),
        // 3 bytes for the container and 1 per element.
        "L" => 3 + elements(x).map(|e| 1 + value_size(e)).sum::<usize>(),
        "M" => {
            3 + x
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, e)| 1 + k.len() + value_size(e))
                .sum::<usize>()
        }
        _ => 0,
    }
}

fn elements(x: &Value) -> impl Iterator<Item = &Value> {
    x.as_array().into_iter().flatten()
}

/// A number's size: one byte per two significant digits, plus one.
fn number_size(n: &str) -> usize {
    let digits: String = n
        .trim_start_matches(['-', '+'])
        .split(['e', 'E'])
        .next()
        .unwrap_or_default()
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    let significant = digits.trim_start_matches('0').trim_end_matches('0');
    significant.len().max(1).div_ceil(2) + 1
}
