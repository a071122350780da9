//! A webhook receiver on 127.0.0.1 for the tests: records every request
//! and answers as scripted (a status, or never).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the receiver answers one request.
#[derive(Debug, Clone, Copy)]
pub enum Answer {
    Status(u16),
    /// Holds the request open and never answers.
    Never,
}

/// A request as it arrived.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: BTreeMap<String, String>,
    pub body: String,
    pub at: Instant,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .map(String::as_str)
            .unwrap_or_default()
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("a JSON body")
    }
}

#[derive(Default)]
struct Book {
    got: Vec<Received>,
    script: VecDeque<Answer>,
    then: Option<Answer>,
}

/// The record, and the number of requests in it, watched by `wait_for`.
struct Shared {
    book: Mutex<Book>,
    arrived: tokio::sync::watch::Sender<usize>,
}

pub struct Receiver {
    pub base: String,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn take(
    State(shared): State<Arc<Shared>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: String,
) -> axum::response::Response {
    let answer = {
        let mut b = shared.book.lock().unwrap();
        b.got.push(Received {
            path: uri.path().to_string(),
            headers: headers
                .iter()
                .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
                .collect(),
            body,
            at: Instant::now(),
        });
        b.script
            .pop_front()
            .or(b.then)
            .unwrap_or(Answer::Status(200))
    };
    shared.arrived.send_modify(|n| *n += 1);
    match answer {
        Answer::Status(s) => (StatusCode::from_u16(s).unwrap(), "ok").into_response(),
        Answer::Never => std::future::pending().await,
    }
}

impl Receiver {
    /// Answers `script` in order, then `then` (200 when none).
    pub async fn start(script: Vec<Answer>, then: Option<Answer>) -> Receiver {
        let shared = Arc::new(Shared {
            book: Mutex::new(Book {
                got: Vec::new(),
                script: script.into(),
                then,
            }),
            arrived: tokio::sync::watch::Sender::new(0),
        });
        let app = axum::Router::new()
            .fallback(axum::routing::post(take))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver {
            base,
            shared,
            server,
        }
    }

    /// Answers 200 to everything.
    pub async fn ok() -> Receiver {
        Receiver::start(Vec::new(), None).await
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn got(&self) -> Vec<Received> {
        self.shared.book.lock().unwrap().got.clone()
    }

    /// From now on answers `answer`.
    pub fn answer(&self, answer: Answer) {
        let mut b = self.shared.book.lock().unwrap();
        b.script.clear();
        b.then = Some(answer);
    }

    /// The requests once at least `n` have arrived (woken by each arrival),
    /// or those that had when `timeout` passed.
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Received> {
        let mut arrived = self.shared.arrived.subscribe();
        let _ = tokio::time::timeout(timeout, arrived.wait_for(|got| *got >= n)).await;
        self.got()
    }
}
