//! Pay-per-use tenants on the embedded server: plan limits answer 429 with
//! `Retry-After` in each service's envelope and recover, tasks over the
//! concurrency limit wait in PENDING, one tenant's backlog does not hold
//! back another's task, and the operator's plan and usage commands.

use async_trait::async_trait;
use marketlab::server::{TRIAL_EMAIL, TRIAL_PASSWORD};
use platform::quota::PlanLimits;
use platform::tasks::{Page, Task, TaskFilter, TaskKind, TaskStatus};
use platform::worker::{JobError, JobHandler, JobRegistry, Progress};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tests::server::{Options, TestServer, eventually, optix_strategy};

pub(crate) const TRIAL: (&str, &str) = (TRIAL_EMAIL, TRIAL_PASSWORD);

pub(crate) async fn set_limits(server: &TestServer, plan: &str, limits: PlanLimits) {
    server
        .state
        .metering
        .as_ref()
        .unwrap()
        .quota_store()
        .set_plan_limits(plan, limits)
        .await
        .unwrap();
}

/// A fresh server whose metering clock stands 5 s into the current minute
/// until the test moves it: its requests all count in one minute however
/// slowly they run, and the next minute is one `advance` away.
pub(crate) async fn server_on_a_stopped_clock() -> (
    TestServer,
    tempfile::TempDir,
    Arc<platform::clock::ManualClock>,
) {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(platform::clock::ManualClock::into_this_minute(5));
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    opts.clock = clock.clone();
    (TestServer::start(opts).await, dir, clock)
}

/// Waits, if needed, so the next few seconds stay in one calendar minute:
/// for servers in other processes, whose clock is the system's.
async fn early_in_a_minute() {
    let second = chrono::Utc::now().timestamp().rem_euclid(60);
    if second > 45 {
        tokio::time::sleep(Duration::from_secs((61 - second) as u64)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plan_limit_answers_429_with_retry_after_in_each_envelope_and_recovers() {
    let (server, _dir, clock) = server_on_a_stopped_clock().await;
    set_limits(
        &server,
        "trial",
        PlanLimits {
            requests_per_minute: 5,
            concurrent_tasks: 2,
            monthly_compute_minutes: 0,
            max_batch: None,
        },
    )
    .await;
    let http = reqwest::Client::new();
    let get = |path: &str| {
        http.get(server.url(path))
            .basic_auth(TRIAL.0, Some(TRIAL.1))
            .send()
    };
    // Monthly compute: a plan with none left refuses new tasks, naming the limit.
    let (status, body) = server
        .post("/backtest/start_backtest", Some(TRIAL), &optix_strategy())
        .await;
    assert_eq!(status, 429, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("monthly_compute_minutes = 0"),
        "{body}"
    );

    // That submit was the minute's first backtest request of five.
    for _ in 0..4 {
        assert_eq!(get("/backtest/tasks").await.unwrap().status(), 200);
    }
    let over = get("/backtest/tasks").await.unwrap();
    assert_eq!(over.status(), 429);
    let wait: u64 = over.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(wait, 55, "the rest of the minute");
    let body: Value = over.json().await.unwrap();
    let detail = body["detail"].as_str().unwrap();
    assert!(
        detail.contains("requests_per_minute = 5") && detail.contains("backtest"),
        "{detail}"
    );
    // Each service counts its own requests, and answers in its envelope.
    for _ in 0..5 {
        assert_eq!(get("/ws/getAllSymbols").await.unwrap().status(), 200);
        assert_eq!(get("/cpm/tasks").await.unwrap().status(), 200);
    }
    let data = get("/ws/getAllSymbols").await.unwrap();
    assert_eq!(data.status(), 429);
    assert!(data.headers().contains_key("retry-after"));
    let data: Value = data.json().await.unwrap();
    assert_eq!(data["status"], 429, "{data}");
    assert!(data["error"].as_str().unwrap().contains("data service"));
    let analytics: Value = get("/cpm/tasks").await.unwrap().json().await.unwrap();
    assert_eq!(analytics["code"], 429, "{analytics}");
    assert!(
        analytics["msg"]
            .as_str()
            .unwrap()
            .contains("requests_per_minute")
    );
    // Another tenant is not limited by the trial's use.
    let (status, _) = server
        .get(
            "/backtest/tasks",
            Some((
                marketlab::server::DEMO_EMAIL,
                marketlab::server::DEMO_PASSWORD,
            )),
        )
        .await;
    assert_eq!(status, 200);

    // Still refused until the minute ends; after Retry-After the next
    // minute admits again.
    clock.advance(chrono::TimeDelta::seconds(wait as i64 - 1));
    assert_eq!(get("/backtest/tasks").await.unwrap().status(), 429);
    clock.advance(chrono::TimeDelta::seconds(1));
    assert_eq!(get("/backtest/tasks").await.unwrap().status(), 200);
    server.stop().await;
}

/// The real strategy backtest, held for a while so running tasks overlap
/// unless something keeps them apart.
struct Held(Arc<dyn JobHandler>);

#[async_trait]
impl JobHandler for Held {
    async fn run(&self, task: Task, progress: Progress) -> Result<Value, JobError> {
        let out = self.0.run(task, progress).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        out
    }
}

fn held_registry(state: &api::AppState) -> JobRegistry {
    let mut registry = api::jobs::registry(state);
    let real = registry.get(TaskKind::StrategyBacktest).unwrap();
    registry.register(TaskKind::StrategyBacktest, Arc::new(Held(real)));
    registry
}

/// Each task's [started, finished] of an owner.
async fn spans(
    server: &TestServer,
    owner: &str,
) -> Vec<(chrono::NaiveDateTime, chrono::NaiveDateTime)> {
    let page = server
        .state
        .tasks
        .list(owner, &TaskFilter::default(), Page::new(200, 0))
        .await
        .unwrap();
    page.tasks
        .iter()
        .map(|t| (t.started_at.unwrap(), t.finished_at.unwrap()))
        .collect()
}

fn overlapping(spans: &[(chrono::NaiveDateTime, chrono::NaiveDateTime)]) -> bool {
    spans
        .iter()
        .enumerate()
        .any(|(i, a)| spans[i + 1..].iter().any(|b| a.0 < b.1 && b.0 < a.1))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_over_the_concurrency_limit_waits_in_pending() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::new(dir.path().join("db.sqlite"));
    options.registry = Arc::new(held_registry);
    options.workers = 3;
    let server = TestServer::start(options).await;
    set_limits(
        &server,
        "trial",
        PlanLimits {
            requests_per_minute: 1_000,
            concurrent_tasks: 1,
            monthly_compute_minutes: 100,
            max_batch: None,
        },
    )
    .await;
    let demo = (
        marketlab::server::DEMO_EMAIL,
        marketlab::server::DEMO_PASSWORD,
    );
    let mut ids = Vec::new();
    for who in [TRIAL, TRIAL, TRIAL, demo, demo, demo] {
        let (status, body) = server
            .post("/backtest/start_backtest", Some(who), &optix_strategy())
            .await;
        assert_eq!(status, 202, "{body}");
        ids.push(body["task_id"].as_str().unwrap().to_string());
    }
    // While one trial task runs, the others wait in PENDING.
    let saw_waiting = AtomicBool::new(false);
    let done = eventually(Duration::from_secs(60), || {
        let (server, ids, saw) = (&server, &ids, &saw_waiting);
        async move {
            let mut statuses = Vec::new();
            for id in &ids[..3] {
                let (_, t) = server
                    .get(&format!("/backtest/status/{id}"), Some(TRIAL))
                    .await;
                statuses.push(t["status"].as_str().unwrap_or_default().to_string());
            }
            let running = statuses.iter().filter(|s| *s == "RUNNING").count();
            assert!(running <= 1, "{statuses:?}");
            if running == 1 && statuses.iter().any(|s| s == "PENDING") {
                saw.store(true, Ordering::SeqCst);
            }
            statuses.iter().all(|s| s == "SUCCESS")
        }
    })
    .await;
    assert!(
        done && saw_waiting.load(Ordering::SeqCst),
        "all three ran, one at a time"
    );
    assert!(
        eventually(Duration::from_secs(30), || async {
            let page = server
                .state
                .tasks
                .list(
                    marketlab::server::DEMO_EMAIL,
                    &TaskFilter::default(),
                    Page::new(10, 0),
                )
                .await
                .unwrap();
            page.tasks.iter().all(|t| t.status == TaskStatus::Success)
        })
        .await
    );
    let trial = spans(&server, TRIAL_EMAIL).await;
    assert_eq!(trial.len(), 3);
    assert!(
        !overlapping(&trial),
        "the trial's tasks never overlap: {trial:?}"
    );
    // The pro plan's limit of 8 lets the same tasks run side by side.
    assert!(
        overlapping(&spans(&server, marketlab::server::DEMO_EMAIL).await),
        "the control overlaps"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn one_tenants_backlog_does_not_hold_back_anothers_task() {
    const BACKLOG: usize = 2_000;
    /// A's tasks that may finish between B's submit and B's finish: the ones
    /// already running on the two workers, then at most one more per worker
    /// before B's lane comes round, and slack for a submit in flight.
    const BOUND: usize = 6;
    let (server, _dir) = TestServer::fresh().await;
    let a = ("tenant-a@example.test", "tenant-a-password");
    let b = ("tenant-b@example.test", "tenant-b-password");
    server.add_account(a.0, a.1, "pro").await;
    server.add_account(b.0, b.1, "pro").await;
    let http = reqwest::Client::new();
    let body = optix_strategy();
    // A submits its backlog from 8 clients at once.
    let mut clients = tokio::task::JoinSet::new();
    for k in 0..8 {
        let (http, url, body) = (
            http.clone(),
            server.url("/backtest/start_backtest"),
            body.clone(),
        );
        clients.spawn(async move {
            for _ in (k..BACKLOG).step_by(8) {
                let r = http
                    .post(&url)
                    .basic_auth(a.0, Some(a.1))
                    .json(&body)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status(), 202);
            }
        });
    }
    while let Some(r) = clients.join_next().await {
        r.unwrap();
    }
    let (status, submitted) = server
        .post("/backtest/start_backtest", Some(b), &body)
        .await;
    assert_eq!(status, 202, "{submitted}");
    let id: uuid::Uuid = submitted["task_id"].as_str().unwrap().parse().unwrap();
    assert!(
        eventually(Duration::from_secs(60), || async {
            server.state.tasks.get(id).await.unwrap().unwrap().status == TaskStatus::Success
        })
        .await,
        "B's task finished"
    );
    let b_task = server.state.tasks.get(id).await.unwrap().unwrap();
    let (submitted_at, finished_at) = (b_task.created_at, b_task.finished_at.unwrap());
    // A's tasks by the store's own times: which were still queued at B's
    // submit, and which of those or the running ones finished before B's did.
    let mut a_tasks = Vec::new();
    for offset in (0..BACKLOG).step_by(200) {
        let page = server
            .state
            .tasks
            .list(a.0, &TaskFilter::default(), Page::new(200, offset as u32))
            .await
            .unwrap();
        a_tasks.extend(page.tasks);
    }
    assert_eq!(a_tasks.len(), BACKLOG);
    let waiting = a_tasks
        .iter()
        .filter(|t| t.started_at.is_none_or(|s| s > submitted_at))
        .count();
    let overtaken = a_tasks
        .iter()
        .filter(|t| {
            t.finished_at
                .is_some_and(|f| f > submitted_at && f <= finished_at)
        })
        .count();
    println!(
        "fair queueing: B's task finished while {overtaken} of A's tasks finished; {waiting} of A's were still queued at B's submit (bound {BOUND})"
    );
    assert!(
        waiting > 200,
        "A still had a backlog ({waiting} queued) when B submitted"
    );
    assert!(
        overtaken <= BOUND,
        "{overtaken} of A's tasks finished before B's one (bound {BOUND})"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn operators_set_plan_limits_and_export_usage() {
    use marketlab::operator::{PlansCommand, UsageArgs};
    let (server, _dir) = TestServer::fresh().await;
    let metering = server.state.metering.clone().unwrap();
    let mut out = Vec::new();
    marketlab::operator::plans(
        metering.quota_store().as_ref(),
        Some(PlansCommand::Set {
            code: "trial".into(),
            requests_per_minute: Some(42),
            concurrent_tasks: None,
            monthly_compute_minutes: Some(7),
            max_batch: Some(150),
        }),
        &mut out,
    )
    .await
    .unwrap();
    let said = String::from_utf8(out).unwrap();
    assert!(said.contains("42 requests/min"), "{said}");
    let set = metering
        .quota_store()
        .plan_limits("trial")
        .await
        .unwrap()
        .unwrap();
    let defaults = platform::quota::default_limits("trial");
    assert_eq!(
        set,
        PlanLimits {
            requests_per_minute: 42,
            concurrent_tasks: defaults.concurrent_tasks,
            monthly_compute_minutes: 7,
            max_batch: Some(150),
        }
    );
    assert!(said.contains("150 strategies per batch"), "{said}");
    let mut out = Vec::new();
    marketlab::operator::plans(metering.quota_store().as_ref(), None, &mut out)
        .await
        .unwrap();
    let listing = String::from_utf8(out).unwrap();
    let trial = listing.lines().find(|l| l.starts_with("trial ")).unwrap();
    assert!(trial.contains("42") && trial.ends_with("(set)"), "{trial}");
    let err = marketlab::operator::plans(
        metering.quota_store().as_ref(),
        Some(PlansCommand::Set {
            code: "gold".into(),
            requests_per_minute: Some(1),
            concurrent_tasks: None,
            monthly_compute_minutes: None,
            max_batch: None,
        }),
        &mut Vec::new(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("unknown plan 'gold'"));

    // Usage: three requests and two data reads by the trial account.
    for _ in 0..3 {
        assert_eq!(server.get("/backtest/tasks", Some(TRIAL)).await.0, 200);
    }
    let recent = "/ws/getSymbolDataLimitDays/SPX_OPTIX?days=4";
    assert_eq!(server.get(recent, Some(TRIAL)).await.0, 200);
    // Prices are metered as any data read: the rows (a trial's 90 sessions).
    let (status, prices) = server.get("/ws/prices/SPX", Some(TRIAL)).await;
    assert_eq!(
        (status, prices["bars"].as_array().map(Vec::len)),
        (200, Some(90))
    );
    metering.flush().await.unwrap();
    let stores = marketlab::operator::Stores {
        usage: metering.usage_store().as_ref(),
        quotas: metering.quota_store().as_ref(),
        accounts: server.accounts.as_ref(),
    };
    let mut out = Vec::new();
    let args = UsageArgs {
        account: Some(TRIAL_EMAIL.into()),
        month: None,
        csv: true,
    };
    marketlab::operator::usage(&stores, &args, &mut out)
        .await
        .unwrap();
    let csv = String::from_utf8(out).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some(services::usage::CSV_HEADER));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let quantity = |metric: &str, subject: &str| -> u64 {
        rows.iter()
            .find(|r| r[4] == metric && r[5] == subject)
            .unwrap_or_else(|| panic!("{metric} {subject} in {csv}"))[6]
            .parse()
            .unwrap()
    };
    assert_eq!(quantity("requests", "backtest"), 3);
    assert_eq!(quantity("requests", "data"), 2);
    assert_eq!(quantity("data_rows", "data"), 4 + 90);
    assert!(rows.iter().all(|r| r[1] == TRIAL_EMAIL && r[2] == "trial"));
    // The summary of every account lists the demo account too.
    let mut out = Vec::new();
    let all = UsageArgs {
        account: None,
        month: Some(chrono::Utc::now().format("%Y-%m").to_string()),
        csv: false,
    };
    marketlab::operator::usage(&stores, &all, &mut out)
        .await
        .unwrap();
    let summary = String::from_utf8(out).unwrap();
    let line = summary
        .lines()
        .find(|l| l.starts_with(TRIAL_EMAIL))
        .unwrap();
    assert!(line.split_whitespace().nth(2) == Some("3"), "{line}");
    assert!(summary.contains(marketlab::server::DEMO_EMAIL));

    // The trial's batches may now hold 150 strategies, past its plan's 100.
    let grid = |n: usize| {
        let periods: Vec<String> = (2..2 + n).map(|p| p.to_string()).collect();
        serde_json::json!({"statistics": false,
            "strategy": {"symbol": "SPX", "risk_control": "//",
                "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
                    "rule": {"comparison_type": "SVMA", "type_name": "CrossAbove", "comparison_value": "0", "period": "20"}}},
                "exit": {"rule_type": "RiskControlOnly"}},
            "grid": {"entry.condition.rule.period": periods}})
    };
    let (status, body) = server
        .post("/backtest/batch", Some(TRIAL), &grid(160))
        .await;
    assert_eq!(
        (status, body["field"].as_str()),
        (400, Some("grid")),
        "{body}"
    );
    assert!(
        body["detail"].as_str().unwrap().contains("at most 150"),
        "{body}"
    );
    let (status, body) = server
        .post("/backtest/batch", Some(TRIAL), &grid(120))
        .await;
    assert_eq!(status, 202, "{body}");
    server.stop().await;
}

/// Runs the operator tool with a function's environment (and the password
/// of an account it adds); whether it succeeded, and what it printed.
fn run_operator(
    operator: &std::path::Path,
    env: &[(&str, String)],
    args: &[&str],
) -> (bool, String) {
    let out = std::process::Command::new(operator)
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env("MARKETLAB_PASSWORD", "tenant-password")
        .output()
        .expect("the operator command runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// Tenant administration on AWS: the operator adds an account to the
/// accounts table, lists it, and moves it to another plan; the function
/// signs it in with its plan.
#[tokio::test(flavor = "multi_thread")]
async fn the_operator_adds_lists_and_moves_accounts_on_the_tables() {
    let tests::emulator::Deployment { names, state, .. } = tests::emulator::deployment().await;
    let env = tests::emulator::function_env(&names);
    let [function, operator] =
        tests::runtime_api::workspace_binaries(["backtest", "operator"]).await;
    let operate = |args: &[&str]| run_operator(&operator, &env, args);
    let email = "Tenant@Example.test";
    let (ok, said) = operate(&["accounts", "add", "--email", email, "--plan", "trial"]);
    assert!(
        ok && said.contains("tenant@example.test saved with plan trial"),
        "{said}"
    );
    let (ok, listed) = operate(&["accounts", "list"]);
    let row = |listed: &str| {
        listed
            .lines()
            .find(|l| l.starts_with("tenant@example.test"))
            .map(|l| l.split_whitespace().nth(1).unwrap_or_default().to_string())
    };
    assert!(ok, "{listed}");
    assert_eq!(row(&listed).as_deref(), Some("trial"), "{listed}");
    let (ok, said) = operate(&["accounts", "set-plan", "--email", email, "--plan", "nope"]);
    assert!(!ok && said.contains("unknown plan 'nope'"), "{said}");
    let (ok, said) = operate(&["accounts", "set-plan", "--email", email, "--plan", "pro"]);
    assert!(ok && said.contains("moved to plan pro"), "{said}");
    assert_eq!(
        row(&operate(&["accounts", "list"]).1).as_deref(),
        Some("pro")
    );
    let record = state
        .auth
        .store()
        .get("tenant@example.test")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.plan, "pro");
    // Signed in by the function with the password the operator set.
    let mut backtest = tests::runtime_api::Function::new(&function, "backtest", 1024, &env).await;
    let auth = tests::runtime_api::basic("tenant@example.test", "tenant-password");
    let answer = backtest
        .invoke(tests::runtime_api::http_event(
            "GET",
            "/auth-info",
            None,
            Some(&auth),
        ))
        .await
        .answer;
    assert_eq!(answer["statusCode"], 200, "{answer}");
    assert_eq!(
        tests::runtime_api::answer_json(&answer)["account"]["plan"],
        "pro",
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn two_function_processes_share_one_limit_on_the_emulator() {
    let tests::emulator::Deployment { names, state, .. } = tests::emulator::deployment().await;
    let metering = state.metering.clone().unwrap();
    let limit = 10;
    let env = tests::emulator::function_env(&names);
    let [function, operator] =
        tests::runtime_api::workspace_binaries(["backtest", "operator"]).await;
    let operate = |args: &[&str]| {
        let (ok, said) = run_operator(&operator, &env, args);
        assert!(ok, "{said}");
        said
    };
    // The operator sets the limit on the tables every instance reads.
    let said = operate(&["plans", "set", "pro", "--requests-per-minute", "10"]);
    assert!(said.contains("10 requests/min"), "{said}");
    assert_eq!(
        metering
            .quota_store()
            .plan_limits("pro")
            .await
            .unwrap()
            .map(|l| l.requests_per_minute),
        Some(limit)
    );
    let mut bases = Vec::new();
    let mut processes = Vec::new();
    for _ in 0..2 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new(&function)
            .envs(env.clone())
            .env("PORT", port.to_string())
            .env_remove("AWS_LAMBDA_RUNTIME_API")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the function starts");
        processes.push(tests::runtime_api::Killed(child));
        bases.push(format!("http://127.0.0.1:{port}"));
    }
    for (k, base) in bases.iter().enumerate() {
        let up = eventually(Duration::from_secs(60), || async {
            reqwest::get(format!("{base}/health")).await.is_ok()
        })
        .await;
        assert!(up, "function process {k} listens");
    }
    early_in_a_minute().await;
    let http = reqwest::Client::new();
    let (mut ok, mut limited) = (0, 0);
    for k in 0..16 {
        let r = http
            .get(format!("{}/backtest/tasks", bases[k % 2]))
            .basic_auth(
                marketlab::server::DEMO_EMAIL,
                Some(marketlab::server::DEMO_PASSWORD),
            )
            .send()
            .await
            .unwrap();
        match r.status().as_u16() {
            200 => ok += 1,
            429 => {
                assert!(r.headers().contains_key("retry-after"));
                limited += 1;
            }
            other => panic!("unexpected {other}: {}", r.text().await.unwrap()),
        }
    }
    assert_eq!(
        (ok, limited),
        (limit, 16 - limit),
        "two processes admit {limit} between them"
    );
    // Each process writes its counts within the flush interval.
    let today = chrono::Utc::now().date_naive();
    let counted = eventually(Duration::from_secs(10), || async {
        metering
            .month(marketlab::server::DEMO_EMAIL, today)
            .await
            .unwrap()
            .iter()
            .filter_map(|d| d.counters.get("requests:backtest"))
            .sum::<u64>()
            == u64::from(limit)
    })
    .await;
    assert!(
        counted,
        "both processes' admitted requests are in the usage table"
    );
    drop(processes);
    // The operator's export reads the same table.
    let csv = operate(&["usage", "--account", marketlab::server::DEMO_EMAIL, "--csv"]);
    let row = csv
        .lines()
        .find(|l| l.contains(",requests,backtest,"))
        .unwrap_or_else(|| panic!("{csv}"));
    assert!(row.ends_with(&format!(",{limit},requests")), "{row}");
}
