//! A Lambda binary run as Lambda runs it: its own process, polling a Runtime
//! API served here on 127.0.0.1 (Lambda's documented `invocation/next`, the
//! response and error posts). The benchmarks time invocations from outside
//! the process and read what each one cost: wall time, CPU time of every
//! thread, and the bytes it logged (what CloudWatch Logs would ingest).

use axum::Router;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, mpsc};

/// What the Runtime API hands out and what comes back.
#[derive(Clone)]
struct Runtime {
    events: Arc<tokio::sync::Mutex<mpsc::Receiver<(String, Value)>>>,
    answers: Arc<Mutex<Vec<(String, Value)>>>,
    answered: Arc<Notify>,
}

async fn next(State(rt): State<Runtime>) -> axum::response::Response {
    // No more events: the function is being stopped.
    let Some((id, event)) = rt.events.lock().await.recv().await else {
        return axum::http::StatusCode::GONE.into_response();
    };
    let mut headers = HeaderMap::new();
    headers.insert("lambda-runtime-aws-request-id", id.parse().unwrap());
    let deadline = chrono::Utc::now().timestamp_millis() + 900_000;
    headers.insert(
        "lambda-runtime-deadline-ms",
        deadline.to_string().parse().unwrap(),
    );
    headers.insert(
        "lambda-runtime-invoked-function-arn",
        "arn:aws:lambda:us-east-1:000000000000:function:bench"
            .parse()
            .unwrap(),
    );
    headers.insert(
        "lambda-runtime-trace-id",
        "Root=1-00000000-000000000000000000000000".parse().unwrap(),
    );
    (headers, axum::Json(event)).into_response()
}

async fn respond(State(rt): State<Runtime>, Path(id): Path<String>, body: axum::body::Bytes) {
    let v = serde_json::from_slice(&body).unwrap_or(Value::Null);
    rt.answers.lock().unwrap().push((id, v));
    rt.answered.notify_waiters();
}

async fn failed(State(rt): State<Runtime>, Path(id): Path<String>, body: axum::body::Bytes) {
    let v = json!({"error": String::from_utf8_lossy(&body)});
    rt.answers.lock().unwrap().push((id, v));
    rt.answered.notify_waiters();
}

async fn init_failed(body: axum::body::Bytes) {
    panic!("init error: {}", String::from_utf8_lossy(&body));
}

/// One invocation as measured from outside the function.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// The function's answer, or `{"error": ...}` when it posted an error.
    pub answer: Value,
    /// Event handed out to answer received (from spawn, on the first).
    pub ms: f64,
    /// CPU time of all the process's threads meanwhile.
    pub cpu_ms: f64,
    /// Bytes written to stdout and stderr meanwhile.
    pub log_bytes: u64,
}

/// A Lambda binary and its Runtime API; the process starts with the first
/// invocation (so that one is the cold start) and is killed on drop.
pub struct Function {
    command: Command,
    child: Option<Child>,
    tx: mpsc::Sender<(String, Value)>,
    runtime: Runtime,
    server: tokio::task::JoinHandle<()>,
    logged: Arc<AtomicU64>,
    /// The last lines logged, for a failure's message.
    tail: Arc<Mutex<std::collections::VecDeque<String>>>,
    /// Every line written to stdout (logs and EMF documents), when kept.
    stdout: Option<Arc<Mutex<Vec<String>>>>,
    /// The child's output pipes as their readers hold them, to wait until
    /// everything written so far has been read (see [`Pipe::drained`]).
    pipes: Vec<Arc<Pipe>>,
    invocations: usize,
}

/// One of the child's output pipes: its descriptor, and whether it is still
/// open, under the lock its reader holds while it takes bytes from the pipe
/// and records their lines.
struct Pipe {
    fd: std::os::fd::RawFd,
    open: Mutex<bool>,
}

impl Pipe {
    /// Waits until the reader has recorded every byte written to the pipe
    /// so far: with the reader's lock held, the kernel holds none unread.
    /// The function writes its logs and metrics before it answers, so once
    /// its answer is in, this makes them all visible.
    fn drained(&self) {
        loop {
            let open = self.open.lock().unwrap();
            let mut unread: libc::c_int = 0;
            // SAFETY: the descriptor stays open while `open` is true and
            // its lock held (the reader closes it only under the lock).
            if !*open || unsafe { libc::ioctl(self.fd, libc::FIONREAD, &mut unread) } != 0 {
                return;
            }
            if unread == 0 {
                return;
            }
            drop(open);
            std::thread::yield_now();
        }
    }
}

impl Function {
    /// `env` is the function's environment (tables, queue, bucket);
    /// `memory_mb` is what Lambda would tell it.
    pub async fn new(
        binary: &std::path::Path,
        name: &str,
        memory_mb: u32,
        env: &[(&str, String)],
    ) -> Function {
        assert!(
            binary.exists(),
            "{} is missing: build the release binaries first",
            binary.display()
        );
        let (tx, rx) = mpsc::channel(8);
        let runtime = Runtime {
            events: Arc::new(tokio::sync::Mutex::new(rx)),
            answers: Arc::new(Mutex::new(Vec::new())),
            answered: Arc::new(Notify::new()),
        };
        let app = Router::new()
            .route("/2018-06-01/runtime/invocation/next", get(next))
            .route(
                "/2018-06-01/runtime/invocation/{id}/response",
                post(respond),
            )
            .route("/2018-06-01/runtime/invocation/{id}/error", post(failed))
            .route("/2018-06-01/runtime/init/error", post(init_failed))
            // Lambda takes answers of up to 6 MB (axum's default stops at 2).
            .layer(axum::extract::DefaultBodyLimit::max(6 * 1024 * 1024))
            .with_state(runtime.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        let mut command = Command::new(binary);
        command
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .env("AWS_LAMBDA_RUNTIME_API", addr.to_string())
            .env("AWS_LAMBDA_FUNCTION_NAME", name)
            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", memory_mb.to_string())
            .env("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST")
            .env("AWS_LAMBDA_LOG_STREAM_NAME", "bench")
            .env("AWS_LAMBDA_LOG_GROUP_NAME", "bench")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        Function {
            command,
            child: None,
            tx,
            runtime,
            server,
            logged: Arc::new(AtomicU64::new(0)),
            tail: Arc::default(),
            stdout: None,
            pipes: Vec::new(),
            invocations: 0,
        }
    }

    /// Keeps every line the function writes to stdout, for [`Self::lines`].
    pub fn keep_lines(mut self) -> Self {
        self.stdout = Some(Arc::default());
        self
    }

    /// The lines written to stdout so far (with [`Self::keep_lines`]).
    pub fn lines(&self) -> Vec<String> {
        self.stdout
            .as_ref()
            .map(|l| l.lock().unwrap().clone())
            .unwrap_or_default()
    }

    fn spawn(&mut self) {
        use std::os::fd::{AsRawFd, OwnedFd};
        let mut child = self.command.spawn().unwrap();
        let stdout = child.stdout.take().map(OwnedFd::from);
        let stderr = child.stderr.take().map(OwnedFd::from);
        for (pipe, keep) in [(stdout, self.stdout.clone()), (stderr, None)]
            .into_iter()
            .filter_map(|(p, k)| Some((p?, k)))
        {
            let shared = Arc::new(Pipe {
                fd: pipe.as_raw_fd(),
                open: Mutex::new(true),
            });
            self.pipes.push(shared.clone());
            let (logged, tail) = (self.logged.clone(), self.tail.clone());
            std::thread::spawn(move || {
                let mut file = std::fs::File::from(pipe);
                let (mut buf, mut partial) = (vec![0u8; 64 * 1024], Vec::new());
                loop {
                    // Wait for bytes without the lock, then take and record
                    // them under it.
                    let mut ready = libc::pollfd {
                        fd: shared.fd,
                        events: libc::POLLIN,
                        revents: 0,
                    };
                    // SAFETY: one valid pollfd; the descriptor is `file`'s.
                    if unsafe { libc::poll(&mut ready, 1, -1) } < 0 {
                        continue;
                    }
                    let mut open = shared.open.lock().unwrap();
                    let n = file.read(&mut buf).unwrap_or(0);
                    if n == 0 {
                        *open = false;
                        drop(file);
                        return;
                    }
                    partial.extend_from_slice(&buf[..n]);
                    while let Some(end) = partial.iter().position(|b| *b == b'\n') {
                        let line: Vec<u8> = partial.drain(..=end).collect();
                        logged.fetch_add(line.len() as u64, Ordering::Relaxed);
                        let line = String::from_utf8_lossy(&line).into_owned();
                        if let Some(k) = &keep {
                            k.lock().unwrap().push(line.trim_end().to_string());
                        }
                        let mut t = tail.lock().unwrap();
                        if t.len() == 50 {
                            t.pop_front();
                        }
                        t.push_back(line);
                    }
                    drop(open);
                }
            });
        }
        self.child = Some(child);
    }

    /// CPU time of every live thread of the process, from the kernel's
    /// per-thread scheduler statistics (nanoseconds on a CPU).
    fn cpu_ns(&self) -> u64 {
        let Some(child) = &self.child else { return 0 };
        let tasks = format!("/proc/{}/task", child.id());
        std::fs::read_dir(tasks)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
            .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .sum()
    }

    /// The function's last 50 log lines.
    pub fn log_tail(&self) -> String {
        self.tail
            .lock()
            .unwrap()
            .iter()
            .map(String::as_str)
            .collect()
    }

    /// Hands `event` to the function and waits for its answer.
    pub async fn invoke(&mut self, event: Value) -> Invocation {
        let id = format!("request-{}", self.invocations);
        self.invocations += 1;
        let (cpu0, log0) = (self.cpu_ns(), self.logged.load(Ordering::Relaxed));
        let t = Instant::now();
        self.tx.send((id.clone(), event)).await.unwrap();
        if self.child.is_none() {
            self.spawn();
        }
        let answer = loop {
            let notified = self.runtime.answered.notified();
            if let Some((_, v)) = self
                .runtime
                .answers
                .lock()
                .unwrap()
                .iter()
                .find(|(i, _)| *i == id)
            {
                break v.clone();
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!(
                    "the function exited ({status}) before answering {id}\n{}",
                    self.log_tail()
                );
            }
            assert!(t.elapsed() < Duration::from_secs(900), "no answer to {id}");
            let _ = tokio::time::timeout(Duration::from_millis(20), notified).await;
        };
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let cpu_ms = self.cpu_ns().saturating_sub(cpu0) as f64 / 1e6;
        // Lines written just before the answer, read to the last one.
        for pipe in &self.pipes {
            pipe.drained();
        }
        let log_bytes = self.logged.load(Ordering::Relaxed) - log0;
        Invocation {
            answer,
            ms,
            cpu_ms,
            log_bytes,
        }
    }
}

impl Drop for Function {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.server.abort();
    }
}

/// A binary of the workspace as `cargo lambda watch` and tests/run build it
/// (features unified over the workspace), so no test rebuilds what another
/// uses.
pub fn workspace_binary(bin: &str) -> std::path::PathBuf {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap();
    let out = crate::as_outside_cargo_test(&mut std::process::Command::new(env!("CARGO")))
        .args([
            "build",
            "--quiet",
            "--workspace",
            "--bin",
            bin,
            "--message-format=json",
        ])
        .current_dir(repo)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|m| m["executable"].as_str().map(std::path::PathBuf::from))
        .next_back()
        .expect("the function's executable")
}

/// The workspace binaries `names`, built off the async runtime.
pub async fn workspace_binaries<const N: usize>(
    names: [&'static str; N],
) -> [std::path::PathBuf; N] {
    tokio::task::spawn_blocking(move || names.map(workspace_binary))
        .await
        .unwrap()
}

/// An `Authorization` header for HTTP Basic.
pub fn basic(email: &str, password: &str) -> String {
    format!(
        "Basic {}",
        base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            format!("{email}:{password}")
        )
    )
}

/// A child process killed when the test ends, however it ends.
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An HTTP API (payload 2.0) request as API Gateway hands it to a function.
pub fn http_event(
    method: &str,
    path_and_query: &str,
    body: Option<&Value>,
    auth: Option<&str>,
) -> Value {
    let (path, query) = path_and_query
        .split_once('?')
        .unwrap_or((path_and_query, ""));
    let mut headers = json!({
        "host": "bench.execute-api.us-east-1.amazonaws.com",
        "user-agent": "bench",
        "accept-encoding": "gzip, deflate",
    });
    if let Some(a) = auth {
        headers["authorization"] = json!(a);
    }
    if body.is_some() {
        headers["content-type"] = json!("application/json");
    }
    json!({
        "version": "2.0", "routeKey": "$default", "rawPath": path, "rawQueryString": query,
        "headers": headers,
        "requestContext": {"accountId": "000000000000", "apiId": "bench", "domainName": "bench.execute-api.us-east-1.amazonaws.com",
            "domainPrefix": "bench", "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1", "userAgent": "bench"},
            "requestId": "bench", "routeKey": "$default", "stage": "$default", "time": "24/Nov/2026:00:00:00 +0000", "timeEpoch": 0},
        "body": body.map(|b| b.to_string()),
        "isBase64Encoded": false
    })
}

/// The body of an HTTP function's answer as JSON, decompressed (`Null` if
/// not JSON).
pub fn answer_json(answer: &Value) -> Value {
    let body = answer["body"].as_str().unwrap_or_default();
    if answer["isBase64Encoded"].as_bool() != Some(true) {
        return serde_json::from_str(body).unwrap_or(Value::Null);
    }
    let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, body)
        .unwrap_or_default();
    let mut plain = Vec::new();
    match answer["headers"]["content-encoding"].as_str() {
        Some("gzip") => {
            let _ = flate2::read::GzDecoder::new(&bytes[..]).read_to_end(&mut plain);
        }
        Some("br") => {
            let _ = brotli::Decompressor::new(&bytes[..], 4096).read_to_end(&mut plain);
        }
        _ => plain = bytes,
    }
    serde_json::from_slice(&plain).unwrap_or(Value::Null)
}

/// Bytes of an HTTP function's answer body as sent to the client.
pub fn answer_bytes(answer: &Value) -> usize {
    let body = answer["body"].as_str().unwrap_or_default();
    if answer["isBase64Encoded"].as_bool() == Some(true) {
        body.len() / 4 * 3
    } else {
        body.len()
    }
}

/// Where `cargo bench` put the release binaries (the bench's own
/// `target/release/deps/<bench>` is two levels below).
pub fn release_dir() -> std::path::PathBuf {
    std::env::current_exe()
        .unwrap()
        .parent()
        .and_then(|p| p.parent())
        .unwrap()
        .to_path_buf()
}

/// The memory infra/template.yaml gives the function whose binary is
/// `binary` (its own `MemorySize`, else the template's global one).
pub fn template_memory_mb(binary: &str) -> u32 {
    let template = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../infra/template.yaml"),
    )
    .expect("infra/template.yaml");
    let mut global = None;
    let mut resource = (String::new(), None::<String>, None::<u32>);
    let mut found = None;
    let mut finish = |r: &(String, Option<String>, Option<u32>)| {
        if r.1.as_deref() == Some(binary) {
            found = Some(r.2);
        }
    };
    for line in template.lines() {
        let indent = line.len() - line.trim_start().len();
        let line = line.trim();
        if indent == 2 && line.ends_with(':') {
            finish(&resource);
            resource = (line.trim_end_matches(':').to_string(), None, None);
        } else if let Some(b) = line.strip_prefix("Binary:") {
            resource.1 = Some(b.trim().to_string());
        } else if let Some(m) = line.strip_prefix("MemorySize:") {
            let m = m.trim().parse().expect("a MemorySize");
            if indent == 4 {
                global = Some(m);
            } else {
                resource.2 = Some(m);
            }
        }
    }
    finish(&resource);
    let own = found.unwrap_or_else(|| panic!("no function with Binary: {binary} in the template"));
    own.or(global).expect("a MemorySize")
}
