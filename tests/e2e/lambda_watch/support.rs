//! What the functions test shares: the watch process, queue delivery to the
//! worker function, and requests as the demo or another tenant.

use aws_lambda_events::event::sqs::SqsBatchResponse;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Child;
use std::time::Duration;

/// The watch process and the file its output goes to, printed when the
/// test fails so a function's own error is in the test's output.
pub(super) struct Watch(pub(super) Child, pub(super) PathBuf);

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(&self.1).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(200).collect();
            eprintln!(
                "--- cargo lambda watch output (last {} lines) ---",
                tail.len()
            );
            for line in tail.iter().rev() {
                eprintln!("{line}");
            }
        }
    }
}

/// Delivers up to 10 queue messages (job messages or S3 events) to the
/// worker function as SQS does, deleting those it did not report as failed;
/// answers how many it delivered and how many failed.
pub(super) async fn deliver(
    http: &reqwest::Client,
    base: &str,
    c: &aws_adapters::Clients,
    queue_url: &str,
) -> (usize, usize) {
    let Some((event, handles)) = tests::emulator::receive_batch(c, queue_url).await else {
        return (0, 0);
    };
    let answer: SqsBatchResponse = send(
        http.post(format!("{base}/2015-03-31/functions/worker/invocations"))
            .json(&event),
    )
    .await
    .json()
    .await
    .unwrap();
    let failed = tests::emulator::settle_batch(c, queue_url, &handles, &answer).await;
    (handles.len(), failed)
}

/// Sends `req` through the emulator. `cargo lambda watch` (1.9.2) now and
/// then answers its own 500 problem document (never one of ours) for an
/// invocation under the full suite's load, and once, after such an answer,
/// never answered the request sent again although the function had
/// answered it (its log shows the answer). Both are the emulator's faults,
/// so the request is sent again (at most twice) and
/// the fault logged; an attempt has two minutes, far beyond any answer of
/// ours through the emulator (under a second warm). Any answer from the
/// function itself, a 500 included, is returned as is. The one retry in
/// the suite that is not the behaviour under test.
pub(super) async fn send(mut req: reqwest::RequestBuilder) -> reqwest::Response {
    const EMULATOR_FAULT: &str = "https://httpstatuses.com/";
    const ATTEMPT: Duration = Duration::from_secs(120);
    let mut tries = 0;
    loop {
        let again = req.try_clone().expect("a request without a stream body");
        let r = match req.timeout(ATTEMPT).send().await {
            Ok(r) => r,
            Err(e) if e.is_timeout() && tries < 2 => {
                tries += 1;
                eprintln!("emulator fault (try {tries}): no answer in {ATTEMPT:?}");
                req = again;
                continue;
            }
            Err(e) => panic!("{e}"),
        };
        if r.status() != 500 || tries == 2 {
            return r;
        }
        let (status, headers) = (r.status(), r.headers().clone());
        let body = r.bytes().await.unwrap();
        if !String::from_utf8_lossy(&body).contains(EMULATOR_FAULT) {
            let mut answer = axum::http::Response::new(body);
            *answer.status_mut() = status;
            *answer.headers_mut() = headers;
            return answer.into();
        }
        tries += 1;
        eprintln!(
            "emulator fault (try {tries}): {}",
            String::from_utf8_lossy(&body)
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
        req = again;
    }
}

/// The status another tenant gets for `url`.
pub(super) async fn other_tenant(http: &reqwest::Client, url: String) -> u16 {
    send(
        http.get(url)
            .basic_auth("other@example.test", Some("other-password")),
    )
    .await
    .status()
    .as_u16()
}

/// Sends `req` as the demo account; the answer's JSON.
pub(super) async fn demo_json(req: reqwest::RequestBuilder) -> Value {
    send(req.basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD)))
        .await
        .json()
        .await
        .unwrap()
}

/// The binary the template's schedule invokes (the function with a
/// `ScheduleV2` event).
pub(super) fn scheduled_binary() -> String {
    let template = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap()
            .join("infra/template.yaml"),
    )
    .unwrap();
    let at = template
        .find("Type: ScheduleV2")
        .expect("a scheduled function");
    let resource = &template[..at];
    let binary = resource.rfind("Binary: ").expect("its binary");
    resource[binary + "Binary: ".len()..]
        .lines()
        .next()
        .unwrap()
        .trim()
        .to_string()
}

/// Submits `body` to the embedded server and waits for its task's result.
pub(super) async fn embedded_result(
    embedded: &tests::server::TestServer,
    submit: &str,
    status: &str,
    body: &Value,
) -> Value {
    let user = Some((DEMO_EMAIL, DEMO_PASSWORD));
    let (_, r) = embedded.post(submit, user, body).await;
    let path = format!("{status}/{}", r["task_id"].as_str().unwrap());
    tests::server::eventually(Duration::from_secs(60), || async {
        embedded.get(&path, user).await.1["status"] == "SUCCESS"
    })
    .await;
    embedded.get(&path, user).await.1["result"].clone()
}
