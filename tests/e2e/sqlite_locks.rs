//! The embedded server's SQLite file held by another writer (a write lock
//! taken and never let go, as a stuck process holds it): a request that
//! must write answers 503 with Retry-After within the documented bound
//! instead of waiting for the lock (before, each of its calls waited 5 s:
//! 35 s in all), and answers as usual once it is let go. Reads go on: in
//! WAL mode a read does not wait for a writer.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use std::time::{Duration, Instant};
use tests::server::{TestServer, optix_strategy};

/// Status, `Retry-After` and time of a request.
async fn timed(req: reqwest::RequestBuilder) -> (u16, Option<String>, Duration, String) {
    let t0 = Instant::now();
    let resp = req
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let retry = resp
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_string());
    let body = resp.text().await.unwrap();
    (status, retry, t0.elapsed(), body)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_held_write_lock_answers_503_within_the_bound_and_202_once_let_go() {
    let (s, dir) = TestServer::fresh().await;
    let http = reqwest::Client::new();
    let submit = || {
        http.post(s.url("/backtest/start_backtest"))
            .json(&optix_strategy())
    };
    let read = || http.get(s.url("/backtest/tasks"));
    let (status, _, _, body) = timed(submit()).await;
    assert_eq!(status, 202, "{body}");

    let lock = rusqlite::Connection::open(dir.path().join("db.sqlite")).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE").unwrap();
    for (name, request) in [("submit", submit()), ("read", read())] {
        let (status, retry, took, body) = timed(request).await;
        println!("write lock held: {name} answered {status} in {took:?}");
        if name == "submit" {
            assert_eq!(status, 503, "{body}");
            assert_eq!(retry.as_deref(), Some("1"), "{body}");
        } else {
            assert_eq!(status, 200, "{body}");
        }
        // One busy wait, then the request's other calls try the lock briefly;
        // a margin for a loaded machine.
        let bound = platform::sqlite::busy_timeout() + Duration::from_secs(3);
        assert!(took < bound, "{name}: {took:?} (bound {bound:?})");
    }
    lock.execute_batch("ROLLBACK").unwrap();
    let (status, _, _, body) = timed(submit()).await;
    assert_eq!(status, 202, "{body}");
    let (status, _, _, body) = timed(read()).await;
    assert_eq!(status, 200, "{body}");
}
