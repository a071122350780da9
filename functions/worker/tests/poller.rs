//! The long-running poller: takes queued tasks from SQS, runs them, deletes
//! the messages, and stops cleanly on SIGTERM.

use platform::queue::JobMessage;
use platform::tasks::{NewTask, TaskKind, TaskStatus};
use serde_json::json;
use std::process::Command;
use std::time::{Duration, Instant};
use tests::emulator::{Deployment, deployment, endpoint};

#[tokio::test(flavor = "multi_thread")]
async fn poller_runs_queued_tasks_and_stops_on_sigterm() {
    let Deployment { names, state, .. } = deployment().await;
    let mut poller = Command::new(env!("CARGO_BIN_EXE_poller"))
        .env("AWS_ENDPOINT_URL", endpoint())
        .env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_REGION", "us-east-1")
        .env("MARKETLAB_TASKS_TABLE", &names.tasks_table)
        .env("MARKETLAB_ACCOUNTS_TABLE", &names.accounts_table)
        .env("MARKETLAB_LIMITS_TABLE", &names.limits_table)
        .env("MARKETLAB_USAGE_TABLE", &names.usage_table)
        .env("MARKETLAB_QUEUE_URL", &names.queue_url)
        .env("MARKETLAB_BUCKET", &names.bucket)
        .env("RUST_LOG", "warn")
        .spawn()
        .unwrap();

    let strategy = json!({
        "symbol": "SPX", "risk_control": "//10",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Relative Strength Index"}, "rule": {"type_name": "CrossBelow", "comparison_value": "30"}}},
        "exit": {"rule_type": "RiskControlOnly"}
    });
    let mut ids = Vec::new();
    for _ in 0..3 {
        let t = state
            .tasks
            .create(NewTask {
                owner: marketlab::server::DEMO_EMAIL.into(),
                kind: TaskKind::StrategyBacktest,
                params: strategy.clone(),
            })
            .await
            .unwrap();
        state.queue.enqueue(JobMessage::for_task(&t)).await.unwrap();
        ids.push(t.id);
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    for id in &ids {
        loop {
            let t = state.tasks.get(*id).await.unwrap().unwrap();
            if t.status == TaskStatus::Success {
                assert!(t.result.unwrap()["Total Trades"].as_u64().unwrap() > 0);
                break;
            }
            assert!(
                t.status != TaskStatus::Failed && Instant::now() < deadline,
                "{t:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    assert!(
        Command::new("kill")
            .args(["-TERM", &poller.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = poller.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "the poller did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");
    // The three tasks' compute is in the usage table, written at the latest on exit.
    let days = state
        .metering
        .as_ref()
        .unwrap()
        .month(
            marketlab::server::DEMO_EMAIL,
            chrono::Utc::now().date_naive(),
        )
        .await
        .unwrap();
    let compute: u64 = days
        .iter()
        .filter_map(|d| d.counters.get("compute_ms:strategy_backtest"))
        .sum();
    assert!(compute >= 3, "{days:?}");
}

/// `poller --help` prints its settings; missing or wrong configuration is
/// one line on stderr and an exit, not a loop of SDK errors.
#[test]
fn the_poller_helps_and_says_in_one_line_what_configuration_is_missing() {
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_poller"));
        c.args(args)
            .env_remove("MARKETLAB_QUEUE_URL")
            .env_remove("RUST_LOG");
        for (k, _) in std::env::vars() {
            if k.starts_with("AWS_") {
                c.env_remove(k);
            }
        }
        let out = c.envs(env.iter().copied()).output().unwrap();
        (
            out.status.code(),
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let (code, stdout, _) = run(&["--help"], &[]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("Usage: poller"), "{stdout}");
    assert!(stdout.contains("MARKETLAB_JOB_STALL_SECONDS"), "{stdout}");

    let (code, _, stderr) = run(&["--bogus"], &[]);
    assert_eq!((code, stderr.lines().count()), (Some(2), 1), "{stderr}");
    assert!(stderr.contains("'--bogus'"), "{stderr}");

    let (code, stdout, stderr) = run(&[], &[]);
    assert_eq!((code, stderr.lines().count()), (Some(2), 1), "{stderr}");
    assert!(
        stderr.contains("MARKETLAB_QUEUE_URL is not set"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "{stdout}");

    // A queue nobody answers for: a closed port on loopback.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let endpoint = format!("http://127.0.0.1:{closed}");
    let queue = format!("{endpoint}/123456789012/jobs");
    let (code, stdout, stderr) = run(
        &[],
        &[
            ("MARKETLAB_QUEUE_URL", &queue),
            ("AWS_ENDPOINT_URL", &endpoint),
            ("AWS_REGION", "us-east-1"),
            ("AWS_ACCESS_KEY_ID", "testing"),
            ("AWS_SECRET_ACCESS_KEY", "testing"),
        ],
    );
    assert_eq!((code, stderr.lines().count()), (Some(1), 1), "{stderr}");
    assert!(stderr.contains("cannot read the job queue"), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
}
