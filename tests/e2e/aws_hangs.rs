//! A dependency that takes connections and never answers (an emulator
//! paused, as `kill -STOP` pauses it): the functions answer 503 within their
//! AWS timeouts instead of holding the request, and 200 once it answers
//! again.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tests::emulator::{Deployment, deployment, endpoint, function_env_at};
use tests::runtime_api::{Function, answer_json, basic, http_event, workspace_binaries};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A loopback proxy to the emulator that can be paused: paused, it takes
/// connections and holds them without a byte either way (and drops those
/// it was forwarding); resumed, it forwards again.
struct Gate {
    url: String,
    open: watch::Sender<bool>,
    forwarding: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl Gate {
    async fn start(upstream: String) -> Gate {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (open, _) = watch::channel(true);
        let forwarding: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let (gate, held) = (open.clone(), forwarding.clone());
        let upstream = upstream.trim_start_matches("http://").to_string();
        let accept = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                let (mut opened, upstream) = (gate.subscribe(), upstream.clone());
                held.lock().unwrap().push(tokio::spawn(async move {
                    // Held, silent, until the gate opens.
                    if opened.wait_for(|o| *o).await.is_err() {
                        return;
                    }
                    if let Ok(mut server) = TcpStream::connect(&upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                }));
            }
        });
        Gate {
            url,
            open,
            forwarding,
            accept,
        }
    }

    fn pause(&self) {
        self.open.send_replace(false);
        for t in self.forwarding.lock().unwrap().drain(..) {
            t.abort();
        }
    }

    fn resume(&self) {
        self.open.send_replace(true);
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.accept.abort();
        for t in self.forwarding.lock().unwrap().drain(..) {
            t.abort();
        }
    }
}

/// The function's answer to `event` and how long it took.
async fn timed(http: &mut Function, event: Value) -> (Value, Duration) {
    let t0 = Instant::now();
    let answer = tokio::time::timeout(Duration::from_secs(120), http.invoke(event))
        .await
        .expect("the function answered")
        .answer;
    (answer, t0.elapsed())
}

/// With the AWS timeouts set to 2.5 s an attempt and an operation, a read
/// and a submit through the backtest function, each on an instance that
/// has not yet seen the outage, answer 503 (with the generic message and a
/// Retry-After) within one operation timeout per service they call while
/// the emulator is paused: a service's first call times out and its
/// breaker fails the request's other calls to it at once, for long enough
/// that the request's later calls to other services cannot outlast it.
/// Once it is resumed, an instance answers 200 and 202, and one that saw
/// the outage answers 200 again once its breaker's window (one operation
/// timeout per service) has passed. Without the timeouts the read was
/// held past 40 s; without the breaker the submit took 10 s, one timeout
/// per call; with a window of one timeout it sometimes took 7.5 s.
#[tokio::test(flavor = "multi_thread")]
async fn a_hung_dependency_answers_503_within_the_timeouts_and_200_once_it_answers() {
    const OPERATION_MS: u64 = 2_500;
    let Deployment { names, .. } = deployment().await;
    let gate = Gate::start(endpoint()).await;
    let mut env = function_env_at(&names, gate.url.clone());
    // One attempt per operation: a loaded machine's emulator may take over
    // a second to answer before the pause, and what is tested is the
    // operation timeout.
    env.push(("MARKETLAB_AWS_ATTEMPT_TIMEOUT_MS", OPERATION_MS.to_string()));
    env.push((
        "MARKETLAB_AWS_OPERATION_TIMEOUT_MS",
        OPERATION_MS.to_string(),
    ));
    let [backtest] = workspace_binaries(["backtest"]).await;
    let instance = || Function::new(&backtest, "backtest", 1024, &env);
    let auth = basic(DEMO_EMAIL, DEMO_PASSWORD);
    let read = || http_event("GET", "/backtest/tasks", None, Some(&auth));
    let submit = || {
        http_event(
            "POST",
            "/backtest/start_backtest",
            Some(&tests::server::optix_strategy()),
            Some(&auth),
        )
    };
    let mut first = instance().await;
    let mut second = instance().await;
    for http in [&mut first, &mut second] {
        let (answer, _) = timed(http, read()).await;
        assert_eq!(answer["statusCode"], 200, "{answer}");
    }

    gate.pause();
    // One timeout per service the request calls (the submit reaches a
    // second), then their breakers; a margin for the rest on a loaded machine.
    for (http, event, services) in [(&mut first, read(), 1), (&mut second, submit(), 2)] {
        let bound = Duration::from_millis(services * OPERATION_MS + 3_000);
        let (answer, took) = timed(http, event).await;
        println!("paused: {} in {took:?}", answer["statusCode"]);
        assert_eq!(answer["statusCode"], 503, "{answer}");
        assert!(took < bound, "{took:?} (bound {bound:?})");
        assert!(answer["headers"]["retry-after"].is_string(), "{answer}");
        // The generic message and the request id; the SDK's words only in the log.
        let detail = answer_json(&answer)["detail"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(detail.starts_with(api::error::UNAVAILABLE), "{detail}");
        assert!(!detail.contains("timed out"), "{detail}");
    }

    gate.resume();
    let resumed = Instant::now();
    let mut fresh = instance().await;
    let (answer, _) = timed(&mut fresh, read()).await;
    assert_eq!(answer["statusCode"], 200, "{answer}");
    let (answer, _) = timed(&mut fresh, submit()).await;
    assert_eq!(answer["statusCode"], 202, "{answer}");
    // An instance that saw the outage calls again once its breaker's
    // window has passed (what is retried here is the behaviour tested).
    let window = Duration::from_millis(aws_adapters::breaker::SERVICES as u64 * OPERATION_MS);
    loop {
        let (answer, _) = timed(&mut first, read()).await;
        if answer["statusCode"] == 200 {
            break;
        }
        assert_eq!(answer["statusCode"], 503, "{answer}");
        assert!(
            resumed.elapsed() < window + Duration::from_secs(5),
            "still refused {:?} after the resume",
            resumed.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
