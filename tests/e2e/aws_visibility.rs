//! Jobs come back in seconds: the job queue's visibility timeout is short
//! (30 s deployed) and whoever holds a message (the poller, the worker
//! function) extends it only while its job reports. A receive answered to
//! nobody, a killed poller or a dead instance gives the job back within it.

use marketlab::server::DEMO_EMAIL;
use platform::queue::JobMessage;
use platform::tasks::{NewTask, TaskKind, TaskStatus};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tests::emulator::{
    Deployment, clients, deployment_with_queue, endpoint, function_env, function_env_at,
    receive_batch, sample_bucket, settle_batch,
};
use tests::pollers::logged;
use tests::runtime_api::{Function, workspace_binaries};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

fn template() -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../infra/template.yaml"),
    )
    .unwrap()
}

/// The value after `key` on the first line of `text` that has it.
fn value<'t>(text: &'t str, key: &str) -> &'t str {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(key))
        .unwrap_or_else(|| panic!("{key}"))
        .trim()
}

/// The deployed settings bring a lost job back within a minute and a
/// message that is not a job to the dead-letter queue within minutes: a
/// short visibility timeout that the worker function knows and may extend
/// (the heartbeat's permission), a lease a third of it, the provisioning
/// tool's values the template's, and an event source that never invokes the
/// function past its reserved concurrency (a throttled batch would wait out
/// its visibility timeout and count a receive).
#[test]
fn the_deployed_queue_gives_a_lost_job_back_within_a_minute() {
    use aws_adapters::provision::{MAX_RECEIVES, VISIBILITY_SECONDS};
    let template = template();
    let queue = &template[template.find("  JobQueue:\n").unwrap()..];
    let visibility: u32 = value(queue, "VisibilityTimeout:").parse().unwrap();
    assert_eq!(visibility, VISIBILITY_SECONDS);
    assert!(visibility <= 30, "a lost job is back within {visibility} s");
    let receives: u32 = value(queue, "maxReceiveCount:").parse().unwrap();
    assert_eq!(receives, MAX_RECEIVES);
    assert!(receives > 3, "more deliveries than a task's attempts");
    assert!(
        receives * visibility <= 5 * 60,
        "a message that is not a job reaches the dead-letter queue within minutes"
    );

    let worker = &template[template.find("Binary: worker\n").unwrap()..];
    let worker = &worker[..worker.find("\n\n").unwrap()];
    assert_eq!(
        value(worker, "MARKETLAB_QUEUE_VISIBILITY_SECONDS:")
            .parse::<u32>()
            .unwrap(),
        visibility,
        "the heartbeat extends by the queue's own timeout"
    );
    let heartbeat = worker
        .find("sqs:ChangeMessageVisibility, sqs:ChangeMessageVisibilityBatch")
        .expect("the worker may extend its messages");
    assert!(
        worker[heartbeat..]
            .lines()
            .nth(1)
            .unwrap()
            .contains("!GetAtt JobQueue.Arn"),
        "{worker}"
    );
    // The lease is a third of the visibility timeout (`worker::lease`), not
    // cut shorter by the job timeout.
    let timeout: u32 = value(worker, "MARKETLAB_JOB_TIMEOUT_SECONDS:")
        .parse()
        .unwrap();
    assert!(timeout >= visibility / 3);
    // The event source's maximum concurrency and the reserved concurrency
    // are one parameter.
    assert_eq!(
        value(worker, "ReservedConcurrentExecutions:"),
        "!Ref WorkerConcurrency"
    );
    assert_eq!(
        value(worker, "ScalingConfig:"),
        "{ MaximumConcurrency: !Ref WorkerConcurrency }"
    );
}

/// A loopback proxy to the emulator whose answers can be lost: while lost,
/// every request still reaches the emulator but its answer goes nowhere (a
/// receive the emulator answers to a client that gave up on it, as after
/// a pause or a network blip); the client hears nothing until it times out.
struct Lossy {
    url: String,
    lost: Arc<AtomicBool>,
    accept: tokio::task::JoinHandle<()>,
}

impl Lossy {
    async fn start(upstream: String) -> Lossy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let lost = Arc::new(AtomicBool::new(false));
        let upstream = upstream.trim_start_matches("http://").to_string();
        let losing = lost.clone();
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (upstream, lost) = (upstream.clone(), losing.clone());
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(&upstream).await else {
                        return;
                    };
                    let (mut from_client, mut to_client) = client.into_split();
                    let (mut from_server, mut to_server) = server.into_split();
                    let up = tokio::spawn(async move {
                        let _ = tokio::io::copy(&mut from_client, &mut to_server).await;
                    });
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        match from_server.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            // Read from the emulator, never delivered.
                            Ok(_) if lost.load(Ordering::SeqCst) => continue,
                            Ok(n) => {
                                if to_client.write_all(&buf[..n]).await.is_err() {
                                    break;
                                }
                            }
                        }
                    }
                    up.abort();
                });
            }
        });
        Lossy { url, lost, accept }
    }

    fn lose(&self, lost: bool) {
        self.lost.store(lost, Ordering::SeqCst);
    }
}

impl Drop for Lossy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// Polls `check` every 100 ms until it answers; the bound is a hang guard.
async fn until<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let started = Instant::now();
    loop {
        if let Some(t) = check().await {
            return t;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "never: {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Messages of the queue received and not yet deleted or visible again.
async fn in_flight(c: &aws_adapters::Clients, queue_url: &str) -> u64 {
    use aws_sdk_sqs::types::QueueAttributeName as A;
    let out = c
        .sqs
        .get_queue_attributes()
        .queue_url(queue_url)
        .attribute_names(A::ApproximateNumberOfMessagesNotVisible)
        .send()
        .await
        .unwrap();
    out.attributes()
        .and_then(|a| a.get(&A::ApproximateNumberOfMessagesNotVisible))
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// At the deployed visibility timeout: a job message received by a poll
/// whose answer never reached the poller (the emulator answered a request
/// its client had given up on) is received again and its task succeeds
/// within the visibility timeout, plus what the lost call costs the poller
/// (its SQS breaker's window, three operation timeouts, and its five-second
/// pause before trying again) and the job's run time. With the former
/// 720 s it stayed PENDING for twelve minutes.
#[tokio::test(flavor = "multi_thread")]
async fn a_job_whose_receive_was_answered_to_nobody_comes_back_within_the_visibility_timeout() {
    use aws_adapters::provision::{MAX_RECEIVES, VISIBILITY_SECONDS};
    const OPERATION_MS: u64 = 3_000;
    const WAIT_S: u64 = 2;
    let c = clients().await;
    let bucket = sample_bucket(&c).await;
    let Deployment { names, state, .. } =
        deployment_with_queue(c.clone(), bucket, MAX_RECEIVES, VISIBILITY_SECONDS).await;
    let [poller] = workspace_binaries(["poller"]).await;
    let proxy = Lossy::start(endpoint()).await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("poller.log");
    let _poller = tests::runtime_api::Killed(
        std::process::Command::new(&poller)
            .envs(function_env_at(&names, proxy.url.clone()))
            .env("RUST_LOG", "info")
            .env("MARKETLAB_POLL_WAIT_SECONDS", WAIT_S.to_string())
            .env("MARKETLAB_AWS_ATTEMPT_TIMEOUT_MS", OPERATION_MS.to_string())
            .env(
                "MARKETLAB_AWS_OPERATION_TIMEOUT_MS",
                OPERATION_MS.to_string(),
            )
            .env("MARKETLAB_JOB_STALL_SECONDS", "120")
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    until("the poller started", || async {
        (!logged(&log, "poller started").is_empty()).then_some(())
    })
    .await;

    proxy.lose(true);
    let task = state
        .tasks
        .create(NewTask {
            owner: DEMO_EMAIL.into(),
            kind: TaskKind::StrategyBacktest,
            params: tests::server::optix_strategy(),
        })
        .await
        .unwrap();
    state
        .queue
        .enqueue(JobMessage {
            task_id: task.id,
            kind: TaskKind::StrategyBacktest,
            owner: Some(DEMO_EMAIL.into()),
            trace: None,
        })
        .await
        .unwrap();
    // Received by a poll whose answer is lost: hidden, and nobody has it.
    until("the message received", || async {
        (in_flight(&c, &names.queue_url).await == 1).then_some(())
    })
    .await;
    let lost_at = Instant::now();
    until("the poller gave up on its receive", || async {
        (!logged(&log, "receive failed; retrying shortly").is_empty()).then_some(())
    })
    .await;
    proxy.lose(false);

    let done = until("the task finished", || async {
        let t = state.tasks.get(task.id).await.unwrap().unwrap();
        t.status.is_finished().then_some(t)
    })
    .await;
    let back_in = lost_at.elapsed();
    assert_eq!((done.status, done.attempts), (TaskStatus::Success, 1));
    let ran = (done.finished_at.unwrap() - done.started_at.unwrap())
        .to_std()
        .unwrap();
    let received = logged(&log, "message received");
    assert_eq!(received.len(), 1, "{received:?}");
    assert_eq!(
        received[0]["fields"]["receives"], 2,
        "the lost receive was the first"
    );
    let bound = Duration::from_secs(u64::from(VISIBILITY_SECONDS) + 5 + WAIT_S)
        + Duration::from_millis(3 * OPERATION_MS)
        + ran
        + Duration::from_secs(5);
    println!(
        "a lost receive: the job succeeded {back_in:?} after it (visibility timeout {VISIBILITY_SECONDS} s, ran {ran:?}, bound {bound:?})"
    );
    assert!(back_in < bound, "{back_in:?} (bound {bound:?})");
}

/// The worker function keeps its batch's messages hidden while their jobs
/// report: four scanner backtests in one batch run longer than the
/// visibility timeout (scaled down to 4 s) in all, and another receiver
/// polling the queue meanwhile gets none of them; each task runs once, as
/// attempt 1. Without the heartbeat the later ones came back while the
/// first ones ran.
#[tokio::test(flavor = "multi_thread")]
async fn the_worker_function_keeps_its_batch_hidden_while_its_jobs_report() {
    // Scaled down from 30 s, with room for a loaded machine's emulator
    // calls and the invocation's own start within a third of it.
    const VISIBILITY: u32 = 4;
    const TASKS: usize = 4;
    let c = clients().await;
    let bucket = sample_bucket(&c).await;
    let Deployment { names, state, .. } =
        deployment_with_queue(c.clone(), bucket, 5, VISIBILITY).await;
    let [worker, analytics] = workspace_binaries(["worker", "analytics"]).await;
    let mut http = Function::new(&analytics, "analytics", 1024, &function_env(&names)).await;
    let mut ids = Vec::new();
    for n in 0..TASKS {
        let trader = json!({"name": format!("long {n}"), "start_date": "2019-01-02",
            "end_date": "2026-11-20", "find_type": "stock/etf", "signals": ["All"],
            "total_capital": 100000, "long_short_ratio": "0.8/0.2", "commission": 0.05});
        let submitted = http
            .invoke(tests::runtime_api::http_event(
                "POST",
                "/smart-scanner-backtest/start",
                Some(&trader),
                Some(&tests::runtime_api::basic(
                    DEMO_EMAIL,
                    marketlab::server::DEMO_PASSWORD,
                )),
            ))
            .await
            .answer;
        let id: uuid::Uuid = tests::runtime_api::answer_json(&submitted)["task_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{submitted}"))
            .parse()
            .unwrap();
        ids.push(id);
    }
    // The visibility timeout is read from the queue (the template sets it
    // in the environment instead); the stall bound is far above a job's
    // silences on a loaded machine.
    let mut env = function_env(&names);
    env.push(("MARKETLAB_JOB_STALL_SECONDS", "60".into()));
    env.push(("RUST_LOG", "info,worker=debug".into()));
    let mut function = Function::new(&worker, "worker", 2048, &env).await;
    // A warm instance, as the event source mapping's batches mostly find:
    // the messages' visibility starts at their receive, the heartbeat's
    // with the invocation.
    let empty = aws_lambda_events::event::sqs::SqsEvent::default();
    function.invoke(serde_json::to_value(&empty).unwrap()).await;
    let mut batch = None;
    while batch
        .as_ref()
        .is_none_or(|(e, _): &(aws_lambda_events::event::sqs::SqsEvent, _)| e.records.len() < TASKS)
    {
        let (event, handles) = receive_batch(&c, &names.queue_url).await.unwrap();
        match &mut batch {
            None => batch = Some((event, handles)),
            Some((e, h)) => {
                e.records.extend(event.records);
                h.extend(handles);
            }
        }
    }
    let (event, handles) = batch.unwrap();
    // Hidden from now, as one receive of the event source would hide them
    // (the batch may have taken a few receives).
    let queue = aws_adapters::SqsQueue::new(c.sqs.clone(), &names.queue_url);
    let kept = queue.keep(&handles, Duration::from_secs(VISIBILITY.into()));
    assert_eq!(kept.await.unwrap(), 0);
    let running = Arc::new(AtomicBool::new(true));
    let stolen =
        {
            let (c, url, running) = (c.clone(), names.queue_url.clone(), running.clone());
            tokio::spawn(async move {
                let mut stolen = Vec::new();
                while running.load(Ordering::SeqCst) {
                    let got = c
                        .sqs
                        .receive_message()
                        .queue_url(&url)
                        .wait_time_seconds(1)
                        .send()
                        .await
                        .unwrap();
                    stolen.extend(got.messages().iter().filter_map(|m| {
                        m.body().map(|b| format!("{b} at {}", chrono::Utc::now()))
                    }));
                }
                stolen
            })
        };
    let started = Instant::now();
    let answer = function.invoke(serde_json::to_value(&event).unwrap()).await;
    let took = started.elapsed();
    running.store(false, Ordering::SeqCst);
    let stolen = stolen.await.unwrap();
    let answer: aws_lambda_events::event::sqs::SqsBatchResponse =
        serde_json::from_value(answer.answer).unwrap();
    assert_eq!(
        settle_batch(&c, &names.queue_url, &handles, &answer).await,
        0
    );
    println!("{TASKS} jobs in one batch ran {took:?} (visibility timeout {VISIBILITY} s)");
    assert!(
        took > Duration::from_secs(u64::from(VISIBILITY) + 1),
        "{took:?}: too short to tell"
    );
    assert_eq!(
        stolen,
        Vec::<String>::new(),
        "delivered again while held; the function's log: {}",
        function.log_tail()
    );
    for id in &ids {
        let t = state.tasks.get(*id).await.unwrap().unwrap();
        assert_eq!((t.status, t.attempts), (TaskStatus::Success, 1), "{t:?}");
    }
}
