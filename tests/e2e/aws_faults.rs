//! What the AWS path does when something fails, on the emulator with the
//! functions' own binaries: a worker killed with tasks in flight, a task
//! item that cannot be read, a message that is not a job, and a storage
//! outage seen through the Lambda runtime.

use aws_sdk_dynamodb::types::AttributeValue;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::queue::JobMessage;
use platform::tasks::{NewTask, TaskKind, TaskStatus};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use tests::emulator::{Deployment, clients, deployment_with_queue, function_env, sample_bucket};
use tests::pollers::events;
use tests::runtime_api::{Function, Killed, answer_json, basic, http_event, workspace_binaries};

fn strategy() -> Value {
    json!({
        "symbol": "SPX", "risk_control": "//10",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Relative Strength Index"}, "rule": {"type_name": "CrossBelow", "comparison_value": "30"}}},
        "exit": {"rule_type": "RiskControlOnly"}
    })
}

fn demo_auth() -> String {
    basic(DEMO_EMAIL, DEMO_PASSWORD)
}

/// What the queue's dead-letter queue holds.
async fn dead_letters(c: &aws_adapters::Clients, queue_url: &str) -> Vec<String> {
    let got = c
        .sqs
        .receive_message()
        .queue_url(tests::emulator::dead_letter_url(c, queue_url).await)
        .max_number_of_messages(10)
        .wait_time_seconds(1)
        .send()
        .await
        .unwrap();
    got.messages()
        .iter()
        .filter_map(|m| m.body().map(str::to_string))
        .collect()
}

/// `n` strategy backtests of the demo account, stored PENDING.
async fn create_tasks(state: &api::AppState, n: usize) -> Vec<uuid::Uuid> {
    let mut ids = Vec::new();
    for _ in 0..n {
        let t = state
            .tasks
            .create(NewTask {
                owner: DEMO_EMAIL.into(),
                kind: TaskKind::StrategyBacktest,
                params: strategy(),
            })
            .await
            .unwrap();
        ids.push(t.id);
    }
    ids
}

/// A task item hand-edited into something no worker can run (`params` not
/// JSON), the same with a message that lacks its owner, one whose kind is
/// unknown, one without a kind, and a message that is not a job: the
/// Lambda worker fails the first two with the damage named, every one
/// reads and lists FAILED through the backtest function with a log line
/// (none answers 500), and the stray message ends in the dead-letter queue.
#[tokio::test(flavor = "multi_thread")]
async fn a_damaged_task_fails_readably_and_a_stray_message_reaches_the_dead_letter_queue() {
    let c = clients().await;
    let bucket = sample_bucket(&c).await;
    // Two deliveries, a second apart, before the dead-letter queue.
    let Deployment {
        clients: c,
        names,
        state,
    } = deployment_with_queue(c, bucket, 2, 1).await;
    let [worker, backtest] = workspace_binaries(["worker", "backtest"]).await;
    let env = function_env(&names);
    let ids = create_tasks(&state, 4).await;
    let edit = |id: uuid::Uuid, field: &str, value: &str| {
        c.dynamodb
            .update_item()
            .table_name(&names.tasks_table)
            .key("id", AttributeValue::S(id.to_string()))
            .update_expression("SET #f = :v")
            .expression_attribute_names("#f", field)
            .expression_attribute_values(":v", AttributeValue::S(value.into()))
            .send()
    };
    edit(ids[0], "params", "{not json").await.unwrap();
    edit(ids[1], "params", "{not json").await.unwrap();
    edit(ids[2], "kind", "no_such_kind").await.unwrap();
    c.dynamodb
        .update_item()
        .table_name(&names.tasks_table)
        .key("id", AttributeValue::S(ids[3].to_string()))
        .update_expression("REMOVE kind")
        .send()
        .await
        .unwrap();
    let message = |id, owner: Option<&str>| JobMessage {
        task_id: id,
        kind: TaskKind::StrategyBacktest,
        owner: owner.map(str::to_string),
        trace: None,
    };
    state
        .queue
        .enqueue(message(ids[0], Some(DEMO_EMAIL)))
        .await
        .unwrap();
    state.queue.enqueue(message(ids[1], None)).await.unwrap();
    c.sqs
        .send_message()
        .queue_url(&names.queue_url)
        .message_body("{\"hello\": \"not a job\"}")
        .send()
        .await
        .unwrap();

    // The event source mapping's part: batches to the worker function until
    // both damaged tasks have ended and the stray message is a dead letter.
    let mut function = Function::new(&worker, "worker", 2048, &env).await;
    tests::emulator::drain_until(&c, &names.queue_url, &mut function, || async {
        let ended = state
            .tasks
            .statuses(&ids[..2])
            .await
            .unwrap()
            .iter()
            .all(|s| matches!(s, Some(s) if s.is_finished()));
        ended && tests::emulator::dead_letter_depth(&c, &names.queue_url).await == 1
    })
    .await;
    for id in &ids[..2] {
        let t = state.tasks.get(*id).await.unwrap().unwrap();
        assert_eq!(
            (t.status, t.error.as_deref()),
            (
                TaskStatus::Failed,
                Some(platform::tasks::damaged("params is not JSON").as_str())
            ),
            "{t:?}"
        );
    }
    assert_eq!(
        dead_letters(&c, &names.queue_url).await,
        vec!["{\"hello\": \"not a job\"}".to_string()]
    );

    // The owner's listing and status reads answer 200 through the function,
    // the items whose kind is damaged among them.
    let mut http = Function::new(&backtest, "backtest", 1024, &env)
        .await
        .keep_lines();
    let auth = demo_auth();
    let listed = http
        .invoke(http_event("GET", "/backtest/tasks", None, Some(&auth)))
        .await
        .answer;
    assert_eq!(listed["statusCode"], 200, "{listed}");
    let listed = answer_json(&listed);
    let rows: BTreeMap<String, Value> = listed["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["task_id"].as_str().unwrap().to_string(),
                t["status"].clone(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        ids.iter()
            .map(|id| (id.to_string(), json!("FAILED")))
            .collect(),
        "{listed}"
    );
    let status = http
        .invoke(http_event(
            "GET",
            &format!("/backtest/status/{}", ids[0]),
            None,
            Some(&auth),
        ))
        .await
        .answer;
    assert_eq!(status["statusCode"], 200, "{status}");
    assert_eq!(answer_json(&status)["status"], "FAILED");
    // The operator's case: an item without its kind.
    let kind_missing = platform::tasks::damaged("kind is missing");
    for route in ["/backtest/status", "/backtest/portfolio"] {
        let path = format!("{route}/{}", ids[3]);
        let answer = http
            .invoke(http_event("GET", &path, None, Some(&auth)))
            .await
            .answer;
        assert_eq!(answer["statusCode"], 200, "{path}: {answer}");
        let body = answer_json(&answer);
        assert_eq!(
            (body["status"].as_str(), body["error"].as_str()),
            (Some("FAILED"), Some(kind_missing.as_str())),
            "{path}"
        );
    }
    let key = ids[3].to_string();
    let logged = http
        .lines()
        .into_iter()
        .find(|l| l.contains(&key) && l.contains("kind is missing"))
        .unwrap_or_else(|| panic!("no log line names the item: {}", http.log_tail()));
    assert!(logged.contains("\"level\":\"ERROR\""), "{logged}");
    assert!(!logged.contains(DEMO_EMAIL), "no contents: {logged}");
}

/// Poller `n` with `job_timeout` seconds of lease and a stall bound far
/// above the jobs' run time (the silence of a job is not what these tests
/// try), its JSON log in `dir`; killed when dropped.
fn start_poller(
    poller: &std::path::Path,
    names: &aws_adapters::Names,
    job_timeout: &str,
    dir: &std::path::Path,
    n: usize,
) -> (Killed, std::path::PathBuf) {
    tests::pollers::start(
        poller,
        names,
        &[
            ("MARKETLAB_JOB_TIMEOUT_SECONDS", job_timeout),
            ("MARKETLAB_JOB_STALL_SECONDS", "60"),
        ],
        dir,
        n,
    )
}

/// A poller killed (SIGKILL) with tasks in flight, some claimed: a new one
/// finishes every task within the queue's visibility timeout (scaled down
/// here to 3 s, with a 1 s job timeout) plus the time it spent running them,
/// and no task finishes twice.
#[tokio::test(flavor = "multi_thread")]
async fn a_killed_worker_s_tasks_all_succeed_once_within_the_visibility_timeout() {
    const VISIBILITY: u64 = 3;
    const TASKS: usize = 12;
    let c = clients().await;
    let bucket = sample_bucket(&c).await;
    let Deployment { names, state, .. } =
        deployment_with_queue(c, bucket, 5, VISIBILITY as u32).await;
    let [poller] = workspace_binaries(["poller"]).await;
    let dir = tempfile::tempdir().unwrap();
    let start = |n: usize| start_poller(&poller, &names, "1", dir.path(), n);
    // A poller takes one message at a time: a dozen keep one claimed at
    // the kill and many queued behind it.
    let ids = create_tasks(&state, TASKS).await;
    for id in &ids {
        let message = JobMessage {
            task_id: *id,
            kind: TaskKind::StrategyBacktest,
            owner: Some(DEMO_EMAIL.into()),
            trace: None,
        };
        state.queue.enqueue(message).await.unwrap();
    }
    let (mut first, first_log) = start(1);
    let started = Instant::now();
    loop {
        let now = state.tasks.statuses(&ids).await.unwrap();
        if now.contains(&Some(TaskStatus::Running)) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no task started: {now:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    let killed = Instant::now();
    let at_kill = state.tasks.statuses(&ids).await.unwrap();
    let in_flight = at_kill
        .iter()
        .filter(|s| **s == Some(TaskStatus::Running))
        .count();
    assert!(in_flight >= 1, "{at_kill:?}");
    let unfinished = at_kill
        .iter()
        .filter(|s| !s.is_some_and(|s| s.is_finished()))
        .count();

    let (_second, second_log) = start(2);
    let recovered = loop {
        let now = state.tasks.statuses(&ids).await.unwrap();
        if now.iter().all(|s| *s == Some(TaskStatus::Success)) {
            break killed.elapsed();
        }
        assert!(
            !now.contains(&Some(TaskStatus::Failed)),
            "a task failed: {now:?}"
        );
        // Only a guard against a hang: the bound is checked below.
        assert!(
            killed.elapsed() < Duration::from_secs(600),
            "not recovered: {now:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    // The second poller runs its jobs one after another: the work itself is
    // their summed run times, whatever the machine's speed; what recovery
    // adds on top is the visibility timeout and the pollers' round trips to
    // the emulator (a few calls a task: under 0.1 s each on an idle
    // machine, up to two seconds a task when the whole suite shares the
    // emulator). A message kept hidden, or a task waiting out a lease, would
    // take minutes.
    let mut running = Duration::ZERO;
    for id in &ids {
        let t = state.tasks.get(*id).await.unwrap().unwrap();
        if let (Some(s), Some(f)) = (t.started_at, t.finished_at) {
            running += (f - s).to_std().unwrap_or_default();
        }
    }
    println!(
        "killed with {in_flight} task(s) claimed and {unfinished} unfinished of {TASKS}; all succeeded {recovered:?} later, {running:?} of it running them (visibility timeout {VISIBILITY} s)"
    );
    assert!(
        recovered < running + Duration::from_secs(VISIBILITY + 15 + 2 * TASKS as u64),
        "not recovered within the visibility timeout: {recovered:?}, {running:?} running"
    );
    let finished: Vec<String> = [&first_log, &second_log]
        .iter()
        .flat_map(|log| events(log))
        .filter(|e| e["fields"]["message"] == "job finished")
        .map(|e| {
            e["fields"]["task_id"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    // Every task SUCCEEDED in the store (above); none finished twice. A task
    // whose poller was killed between storing its outcome and logging it has
    // no line (the kill lands anywhere), so the lines are checked for
    // repeats, not counted against the tasks.
    let mut seen = finished.clone();
    seen.sort();
    let mut once = seen.clone();
    once.dedup();
    assert_eq!(seen, once, "no task finished twice");
    assert!(
        seen.iter()
            .all(|id| ids.iter().any(|t| t.to_string() == *id)),
        "{seen:?}"
    );
    for id in &ids {
        assert!(state.tasks.get(*id).await.unwrap().unwrap().attempts <= 2);
    }
}

/// Storage that cannot be reached answers 503 through the Lambda runtime
/// with the generic message and the request id; the SDK's error is only in
/// the log.
#[tokio::test(flavor = "multi_thread")]
async fn a_storage_outage_answers_503_without_its_cause_through_the_lambda_runtime() {
    let names = aws_adapters::Names {
        tasks_table: "marketlab-tasks".into(),
        accounts_table: "marketlab-accounts".into(),
        keys_table: "marketlab-keys".into(),
        limits_table: "marketlab-limits".into(),
        usage_table: "marketlab-usage".into(),
        queue_url: "http://127.0.0.1:9/000000000000/marketlab-jobs".into(),
        bucket: "marketlab-market-data".into(),
        webhooks_table: "marketlab-webhooks".into(),
        webhook_queue_url: "http://127.0.0.1:9/000000000000/marketlab-webhooks".into(),
        ingest_queue_url: "http://127.0.0.1:9/000000000000/marketlab-ingest".into(),
    };
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let env = tests::emulator::function_env_at(&names, format!("http://127.0.0.1:{closed}"));
    let [backtest] = workspace_binaries(["backtest"]).await;
    let mut http = Function::new(&backtest, "backtest", 1024, &env).await;
    for path in ["/backtest/tasks", "/usage"] {
        let answer = http
            .invoke(http_event("GET", path, None, Some(&demo_auth())))
            .await
            .answer;
        assert_eq!(answer["statusCode"], 503, "{path}: {answer}");
        let detail = answer_json(&answer)["detail"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let id = answer["headers"]["x-request-id"]
            .as_str()
            .unwrap_or_default();
        assert!(!id.is_empty(), "{answer}");
        assert_eq!(
            detail,
            format!("{} (request id {id})", api::error::UNAVAILABLE),
            "{path}"
        );
    }
    let log = http.log_tail();
    assert!(log.contains("dependency unavailable"), "{log}");
}

/// Jobs that run longer than the visibility timeout, reporting as they go,
/// on two pollers that each take one message at a time: each job's message
/// stays hidden while it reports and its lease is renewed, so every task
/// runs once, as attempt 1, and none is delivered to the other poller
/// while it runs.
#[tokio::test(flavor = "multi_thread")]
async fn jobs_longer_than_the_visibility_timeout_run_once_while_they_report() {
    // Scaled down from 720 s; the heartbeat's slack (two thirds of it) must
    // still outlast an emulator call on a loaded machine.
    const VISIBILITY: u64 = 2;
    const TASKS: usize = 6;
    let c = clients().await;
    let bucket = sample_bucket(&c).await;
    let Deployment { names, state, .. } =
        deployment_with_queue(c, bucket, 5, VISIBILITY as u32).await;
    let [poller, analytics] = workspace_binaries(["poller", "analytics"]).await;
    // Scanner backtests over every stock of the sample, each reporting
    // its progress a few stocks at a time.
    let mut http = Function::new(&analytics, "analytics", 1024, &function_env(&names)).await;
    let mut ids = Vec::new();
    for n in 0..TASKS {
        let trader = json!({"name": format!("long {n}"), "start_date": "2019-01-02",
            "end_date": "2026-11-20", "find_type": "stock/etf", "signals": ["All"],
            "total_capital": 100000, "long_short_ratio": "0.8/0.2", "commission": 0.05});
        let submitted = http
            .invoke(http_event(
                "POST",
                "/smart-scanner-backtest/start",
                Some(&trader),
                Some(&demo_auth()),
            ))
            .await
            .answer;
        let id: uuid::Uuid = answer_json(&submitted)["task_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{submitted}"))
            .parse()
            .unwrap();
        ids.push(id);
    }
    let dir = tempfile::tempdir().unwrap();
    // A 0.3 s lease: renewed many times over while a job runs. The stall
    // bound is far above a job's silences on a loaded machine (a job that
    // stops reporting is aws_stalls' test).
    let start = |n: usize| {
        tests::pollers::start(
            &poller,
            &names,
            &[
                ("MARKETLAB_JOB_TIMEOUT_SECONDS", "0.3"),
                ("MARKETLAB_JOB_STALL_SECONDS", "60"),
            ],
            dir.path(),
            n,
        )
    };
    let (_first, first_log) = start(1);
    let (_second, second_log) = start(2);
    let started = Instant::now();
    let tasks = loop {
        let mut tasks = Vec::new();
        for id in &ids {
            tasks.push(state.tasks.get(*id).await.unwrap().unwrap());
        }
        if tasks.iter().all(|t| t.status.is_finished()) {
            break tasks;
        }
        // Only a guard against a hang: the counts below are the test.
        assert!(started.elapsed() < Duration::from_secs(600), "{tasks:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let longest = tasks
        .iter()
        .filter_map(|t| Some((t.finished_at? - t.started_at?).to_std().unwrap()))
        .max()
        .unwrap();
    println!(
        "{TASKS} jobs on two pollers; the longest ran {longest:?} (visibility timeout {VISIBILITY} s, lease 0.3 s)"
    );
    assert!(
        longest > Duration::from_secs(VISIBILITY),
        "{longest:?}: too short to tell"
    );
    for t in &tasks {
        assert_eq!((t.status, t.attempts), (TaskStatus::Success, 1), "{t:?}");
    }
    let logged: Vec<Value> = [&first_log, &second_log]
        .iter()
        .flat_map(|log| events(log))
        .collect();
    let count = |message: &str| {
        logged
            .iter()
            .filter(|e| e["fields"]["message"] == message)
            .count()
    };
    assert_eq!(count("message received"), TASKS);
    assert_eq!(count("job started"), TASKS);
    assert_eq!(count("message left to come back"), 0);
    assert_eq!(count("message given back"), 0);
}

/// The heartbeat's call sets the visibility of up to ten messages at once
/// and counts those it could not (here, one already deleted): hidden for
/// no time, all the others come straight back.
#[tokio::test(flavor = "multi_thread")]
async fn the_heartbeat_sets_the_visibility_of_a_batch_s_messages_ten_to_a_call() {
    use platform::queue::JobQueue;
    let c = clients().await;
    let url = aws_adapters::provision::queue(&c, &tests::contract::unique("beat"), 3, 60)
        .await
        .unwrap();
    let q = aws_adapters::SqsQueue::new(c.sqs.clone(), url);
    let ids: Vec<uuid::Uuid> = (0..12).map(|_| uuid::Uuid::new_v4()).collect();
    for id in &ids {
        q.enqueue(JobMessage {
            task_id: *id,
            kind: TaskKind::StrategyBacktest,
            owner: None,
            trace: None,
        })
        .await
        .unwrap();
    }
    let receive_all = async || {
        let mut got = Vec::new();
        while got.len() < ids.len() {
            got.extend(q.receive(10, 20).await.unwrap());
        }
        got
    };
    let got = receive_all().await;
    let mut handles: Vec<String> = got.iter().map(|r| r.receipt_handle.clone()).collect();
    assert_eq!(q.keep(&handles, Duration::from_secs(600)).await.unwrap(), 0);
    let gone = handles.remove(0);
    q.delete(&gone).await.unwrap();
    handles.push(gone);
    assert_eq!(q.keep(&handles, Duration::ZERO).await.unwrap(), 1);
    let mut back: Vec<uuid::Uuid> = Vec::new();
    while back.len() < ids.len() - 1 {
        back.extend(
            q.receive(10, 20)
                .await
                .unwrap()
                .iter()
                .map(|r| r.message.task_id),
        );
    }
    back.sort();
    let mut expected: Vec<uuid::Uuid> = got[1..].iter().map(|r| r.message.task_id).collect();
    expected.sort();
    assert_eq!(back, expected);
}
