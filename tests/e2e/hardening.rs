//! Abuse as a load: failed-login locks, request limits answered in each
//! service's JSON envelope, connection deadlines, idempotent submits and
//! numeric bounds, over real HTTP on 127.0.0.1.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tests::server::{Options, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

/// A path of each service, with how its envelope carries the status.
const SERVICES: [(&str, &str); 3] = [
    ("/backtest/tasks", "detail"),
    ("/seasonality/performance-by-month?ticker=SPX", "code"),
    ("/ws/getAllSymbols", "status"),
];

fn assert_envelope(path: &str, status: u16, body: &Value) {
    if path.starts_with("/ws") {
        assert_eq!(
            body["status"].as_u64(),
            Some(status as u64),
            "{path}: {body}"
        );
        assert!(body["error"].is_string(), "{path}: {body}");
    } else if path.starts_with("/seasonality") || path.starts_with("/symbol_corr") {
        assert_eq!(body["code"].as_u64(), Some(status as u64), "{path}: {body}");
        assert!(
            body["msg"].is_string() && body["data"].is_null(),
            "{path}: {body}"
        );
    } else {
        assert!(body["detail"].is_string(), "{path}: {body}");
    }
}

/// Sends as the demo account; status, `Retry-After` and JSON body.
async fn as_demo(req: reqwest::RequestBuilder) -> (u16, Option<String>, Value) {
    raw(req
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .send()
        .await
        .unwrap())
    .await
}

async fn raw(resp: reqwest::Response) -> (u16, Option<String>, Value) {
    let status = resp.status().as_u16();
    let retry = resp
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_string());
    let text = resp.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text:.300}"));
    (status, retry, body)
}

#[tokio::test(flavor = "multi_thread")]
async fn failed_logins_lock_with_429_in_each_envelope_but_cached_logins_pass() {
    // Locks counted on a stopped clock: the 2 s lock below holds however
    // slowly the requests under it run.
    let dir = tempfile::tempdir().unwrap();
    let clock = std::sync::Arc::new(platform::clock::ManualClock::new(chrono::Utc::now()));
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    opts.clock = clock.clone();
    let s = TestServer::start(opts).await;
    let http = reqwest::Client::new();
    // The valid login is verified (and cached) before the flood.
    assert_eq!(s.get("/backtest/tasks", DEMO).await.0, 200);
    let mut statuses = Vec::new();
    for _ in 0..8 {
        let r = http
            .get(s.url("/backtest/tasks"))
            .basic_auth(DEMO_EMAIL, Some("wrong-password"))
            .send()
            .await
            .unwrap();
        statuses.push(r.status().as_u16());
    }
    assert_eq!(&statuses[..5], &[401; 5], "five failures are free");
    assert_eq!(&statuses[5..], &[401, 429, 429], "the sixth locks for 1 s");
    // Once the lock has passed, the next failure locks for 2 s.
    clock.advance(chrono::TimeDelta::milliseconds(1100));
    let r = http
        .get(s.url("/backtest/tasks"))
        .basic_auth(DEMO_EMAIL, Some("wrong-password"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    for (path, _) in SERVICES {
        let (status, retry, body) = raw(http
            .get(s.url(path))
            .basic_auth(DEMO_EMAIL, Some("wrong-password"))
            .send()
            .await
            .unwrap())
        .await;
        assert_eq!(status, 429, "{path}");
        assert!(retry.unwrap().parse::<u64>().unwrap() >= 1);
        assert_envelope(path, 429, &body);
        assert!(body.to_string().contains("too many failed logins"));
        assert_eq!(
            s.get(path, DEMO).await.0,
            200,
            "{path}: a cached login passes the lock"
        );
    }
    // A locked account costs no hash, and its answers are held back a
    // little (the tarpit): 50 at once all take the pause, together.
    let t = Instant::now();
    let mut joins = Vec::new();
    for _ in 0..50 {
        let req = http
            .get(s.url("/backtest/tasks"))
            .basic_auth(DEMO_EMAIL, Some("another-guess"));
        joins.push(tokio::spawn(async move {
            let t = Instant::now();
            let status = req.send().await.unwrap().status().as_u16();
            (status, t.elapsed())
        }));
    }
    for j in joins {
        let (status, took) = j.await.unwrap();
        assert_eq!(status, 429);
        assert!(took >= api::auth::LOCKED_DELAY, "{took:?}");
    }
    assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn limits_answer_in_json_in_each_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    opts.limits.body_bytes = 64 * 1024;
    let s = TestServer::start(opts).await;
    let http = reqwest::Client::new();
    let big = "x".repeat(70 * 1024);
    // 413 on every service, with the limit in the message.
    for (method, path) in [
        ("POST", "/backtest/validate"),
        ("POST", "/symbol_corr"),
        ("GET", "/ws/getAllSymbols"),
    ] {
        let req = if method == "POST" {
            http.post(s.url(path))
        } else {
            http.get(s.url(path))
        };
        let (status, _, body) = as_demo(
            req.header("content-type", "application/json")
                .body(big.clone()),
        )
        .await;
        assert_eq!(status, 413, "{path}: {body}");
        assert_envelope(path, 413, &body);
        assert!(body.to_string().contains("65536 bytes"), "{path}: {body}");
    }
    // A body without a declared length is cut off at the limit too.
    let addr = s.base.trim_start_matches("http://").to_string();
    let mut chunked = TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /backtest/validate HTTP/1.1\r\nHost: x\r\nAuthorization: Basic {}\r\nTransfer-Encoding: chunked\r\n\r\n",
        base64_credentials()
    );
    chunked.write_all(head.as_bytes()).await.unwrap();
    for _ in 0..9 {
        let chunk = format!("2000\r\n{}\r\n", "y".repeat(0x2000));
        if chunked.write_all(chunk.as_bytes()).await.is_err() {
            break;
        }
    }
    let mut got = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), chunked.read_to_end(&mut got)).await;
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("65536 bytes"), "{text}");

    let long = "a".repeat(9000);
    for (path, _) in SERVICES {
        let sep = if path.contains('?') { '&' } else { '?' };
        let (status, _, body) = as_demo(http.get(s.url(&format!("{path}{sep}pad={long}")))).await;
        assert_eq!(status, 414, "{path}");
        assert_envelope(path, 414, &body);
        let mut req = http.get(s.url(path));
        for i in 0..120 {
            req = req.header(format!("x-filler-{i}"), "1");
        }
        let (status, _, body) = as_demo(req).await;
        assert_eq!(status, 431, "{path}");
        assert_envelope(path, 431, &body);
    }
    // Extractor rejections: a path that is not UTF-8, a wrong method.
    let (status, _, body) = as_demo(http.get(s.url("/backtest/status/%FF%FE"))).await;
    assert_eq!((status, body["detail"].is_string()), (400, true), "{body}");
    let (status, _, body) = as_demo(http.delete(s.url("/ws/getAllSymbols"))).await;
    assert_eq!(status, 405);
    assert_envelope("/ws", 405, &body);
    s.stop().await;
}

/// Reads until the server closes the connection; when that was, if before `deadline`.
async fn closed_by(stream: &mut TcpStream, deadline: Instant) -> Option<Instant> {
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some(Instant::now()),
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn silent_half_open_idle_and_slow_connections_are_closed() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    opts.connections.header_timeout = Duration::from_secs(1);
    opts.limits.body_timeout = Duration::from_secs(1);
    let s = TestServer::start(opts).await;
    let addr = s.base.trim_start_matches("http://").to_string();
    let limit = Duration::from_secs(4);

    let opened = Instant::now();
    let mut silent = TcpStream::connect(&addr).await.unwrap();
    let mut partial = TcpStream::connect(&addr).await.unwrap();
    partial
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let mut idle = TcpStream::connect(&addr).await.unwrap();
    idle.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut answer = vec![0u8; 1024];
    let n = idle.read(&mut answer).await.unwrap();
    assert!(String::from_utf8_lossy(&answer[..n]).starts_with("HTTP/1.1 200"));
    let answered = Instant::now();
    for (name, stream, from) in [
        ("silent", &mut silent, opened),
        ("half-open", &mut partial, opened),
        ("idle keep-alive", &mut idle, answered),
    ] {
        let closed = closed_by(stream, opened + limit).await;
        let after = closed.map(|c| c.duration_since(from));
        assert!(
            after.is_some_and(|d| d >= Duration::from_millis(900)),
            "{name} connection: closed {after:?} after it went quiet (limit 1 s)"
        );
    }

    // A body that stops arriving: 408 in the envelope, then the close.
    let mut slow = TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /backtest/validate HTTP/1.1\r\nHost: x\r\nAuthorization: Basic {}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"sym",
        base64_credentials()
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let _ = tokio::time::timeout(limit, slow.read_to_end(&mut got)).await;
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(
        text.contains("\"detail\":\"the request body did not arrive within 1 s\""),
        "{text}"
    );

    // The server still answers.
    assert_eq!(s.get("/health", None).await.0, 200);
    s.stop().await;
}

fn base64_credentials() -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(format!("{DEMO_EMAIL}:{DEMO_PASSWORD}"))
}

fn strategy() -> Value {
    json!({"symbol": "SPX", "start_date": "2015-01-01", "risk_control": "//21",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"}, "rule": {"type_name": ">", "comparison_value": "100"}}},
        "exit": {"rule_type": "RiskControlOnly"}})
}

#[tokio::test(flavor = "multi_thread")]
async fn submits_with_an_idempotency_key_create_one_task() {
    let (s, _dir) = TestServer::fresh().await;
    s.add_account("other@example.test", "other-password", "pro")
        .await;
    let http = reqwest::Client::new();
    let submit = |user: (&'static str, &'static str), key: &'static str, body: Value| {
        let req = http
            .post(s.url("/backtest/start_backtest"))
            .basic_auth(user.0, Some(user.1))
            .header("Idempotency-Key", key)
            .json(&body);
        async move {
            let r = req.send().await.unwrap();
            let replayed = r.headers().get("idempotent-replayed").is_some();
            let status = r.status().as_u16();
            (status, replayed, r.json::<Value>().await.unwrap())
        }
    };
    let demo = (DEMO_EMAIL, DEMO_PASSWORD);
    let (status, replayed, first) = submit(demo, "order-1", strategy()).await;
    assert_eq!((status, replayed), (202, false), "{first}");
    let (status, replayed, again) = submit(demo, "order-1", strategy()).await;
    assert_eq!((status, replayed), (202, true));
    assert_eq!(again["task_id"], first["task_id"]);

    let mut changed = strategy();
    changed["symbol"] = json!("IVV");
    let (status, _, body) = submit(demo, "order-1", changed).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("Idempotency-Key 'order-1'")
    );

    let (_, replayed, theirs) = submit(
        ("other@example.test", "other-password"),
        "order-1",
        strategy(),
    )
    .await;
    assert!(
        !replayed && theirs["task_id"] != first["task_id"],
        "keys are per account"
    );

    // Concurrent copies of one submit: one task.
    let mut joins = Vec::new();
    for _ in 0..8 {
        joins.push(submit(demo, "order-2", strategy()));
    }
    let answers = futures_join(joins).await;
    let ids: std::collections::HashSet<String> = answers
        .iter()
        .map(|(status, _, b)| {
            assert_eq!(*status, 202);
            b["task_id"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(ids.len(), 1);
    let (_, list) = s.get("/backtest/tasks", DEMO).await;
    assert_eq!(list["total"], 2, "order-1 and order-2: {list}");

    let (status, _, body) = submit(demo, "has space", strategy()).await;
    assert_eq!(status, 400);
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .starts_with("header 'Idempotency-Key'")
    );
    s.stop().await;
}

async fn futures_join<F>(futures: Vec<F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let mut out = Vec::new();
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn numbers_that_would_overflow_are_refused_naming_the_field() {
    let (s, _dir) = TestServer::fresh().await;
    for (field, value, want) in [
        (
            "capital",
            json!(1.7e308),
            "parameter 'capital': 1.7e+308 is out of range",
        ),
        (
            "trade_price",
            json!(1e308),
            "parameter 'trade_price': 1e+308 is out of range",
        ),
        ("capital", json!(5e12), "above the largest capital"),
    ] {
        let mut body = strategy();
        body[field] = value;
        for path in ["/backtest/validate", "/backtest/start_backtest"] {
            let (status, answer) = s.post(path, DEMO, &body).await;
            assert_eq!(status, 400, "{path} {field}: {answer}");
            assert!(
                answer["detail"].as_str().unwrap().contains(want),
                "{answer}"
            );
        }
    }
    s.stop().await;
}

/// A client bound to a loopback address of its own (the server sees it as
/// that client address).
fn client_from(ip: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(ip.parse::<std::net::IpAddr>().unwrap())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// Signs in (retrying after each 429 as its Retry-After says) and answers
/// how long the first 200 took.
async fn sign_in(
    s: &TestServer,
    client: &reqwest::Client,
    email: &str,
    password: &str,
) -> Duration {
    let started = Instant::now();
    loop {
        let r = client
            .get(s.url("/backtest/tasks?limit=1"))
            .basic_auth(email, Some(password))
            .send()
            .await
            .unwrap();
        match r.status().as_u16() {
            200 => return started.elapsed(),
            429 => {
                let wait: u64 = r.headers()["retry-after"]
                    .to_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                tokio::time::sleep(Duration::from_secs(wait)).await;
            }
            other => panic!("{email}: {other}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{email}: never signed in"
        );
    }
}

/// A wrong-password flood from one address (16 clients, a new e-mail each
/// time) does not keep users behind that address out: a new account signs in
/// from it during the flood within a few seconds, another address is not
/// slowed, and once the flood ends the address signs in at once.
#[tokio::test(flavor = "multi_thread")]
async fn a_flooding_address_slows_but_does_not_lock_out_its_neighbours() {
    let (s, _dir) = TestServer::fresh().await;
    for k in 0..3 {
        s.add_account(&format!("new{k}@example.test"), "a long password", "pro")
            .await;
    }
    let flooding = "127.0.2.1";
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let counts = std::sync::Arc::new([(); 3].map(|_| std::sync::atomic::AtomicU64::new(0)));
    let mut flood = tokio::task::JoinSet::new();
    for k in 0..16 {
        let (client, url, stop, counts) = (
            client_from(flooding),
            s.url("/backtest/tasks"),
            stop.clone(),
            counts.clone(),
        );
        flood.spawn(async move {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                n += 1;
                let r = client
                    .get(&url)
                    .basic_auth(format!("guess{k}-{n}@flood.test"), Some("guess"))
                    .send()
                    .await
                    .unwrap();
                let slot = match r.status().as_u16() {
                    401 => 0,
                    429 => 1,
                    _ => 2,
                };
                counts[slot].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
    }
    // The address passes its 20 free failures, then trickles.
    assert!(
        tests::server::eventually(Duration::from_secs(10), || async {
            counts[0].load(std::sync::atomic::Ordering::Relaxed) > 40
        })
        .await
    );
    let behind = sign_in(
        &s,
        &client_from(flooding),
        "new0@example.test",
        "a long password",
    )
    .await;
    let elsewhere = sign_in(
        &s,
        &client_from("127.0.3.1"),
        "new1@example.test",
        "a long password",
    )
    .await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    while flood.join_next().await.is_some() {}
    let after = sign_in(
        &s,
        &client_from(flooding),
        "new2@example.test",
        "a long password",
    )
    .await;
    let c: Vec<u64> = counts
        .iter()
        .map(|c| c.load(std::sync::atomic::Ordering::Relaxed))
        .collect();
    println!(
        "flood of {} wrong logins ({} refused): sign-in behind the flooding address {behind:?}, from another {elsewhere:?}, after the flood {after:?}",
        c[0] + c[1],
        c[1]
    );
    assert_eq!(c[2], 0, "every flood request was answered 401 or 429");
    assert!(behind < Duration::from_secs(5), "{behind:?}");
    // Not slowed by the flooding address's queue: only by the CPU its
    // refused checks share (a sign-in hashes its password; 2.6 s on two
    // loaded cores, against a lock's 15 minutes).
    assert!(elsewhere < Duration::from_secs(4), "{elsewhere:?}");
    assert!(after < Duration::from_secs(1), "{after:?}");
    s.stop().await;
}
