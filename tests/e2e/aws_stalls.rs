//! A poller that is alive but whose job never returns (the fault drill
//! `MARKETLAB_FAULT_STALL_JOBS` holds the job's thread for good): the job's
//! silence gives its task and message back within the stall bound, another
//! poller runs the task, and the stuck poller exits for a clean one.

use marketlab::server::DEMO_EMAIL;
use platform::queue::JobMessage;
use platform::tasks::{NewTask, TaskKind, TaskStatus};
use serde_json::json;
use std::time::{Duration, Instant};
use tests::emulator::{Deployment, clients, deployment_with_queue, sample_bucket};
use tests::pollers::{logged, start};
use tests::runtime_api::workspace_binaries;

#[tokio::test(flavor = "multi_thread")]
async fn a_stuck_job_is_given_back_within_the_stall_bound_and_another_poller_runs_it() {
    // Far above the recovery: a task that succeeds sooner came back by the
    // give-back, not by its message's visibility running out.
    const VISIBILITY: u32 = 120;
    const STALL: Duration = Duration::from_secs(2);
    let c = clients().await;
    let bucket = sample_bucket(&c).await;
    let Deployment { names, state, .. } = deployment_with_queue(c, bucket, 5, VISIBILITY).await;
    let [poller] = workspace_binaries(["poller"]).await;
    let dir = tempfile::tempdir().unwrap();
    let stall = STALL.as_secs().to_string();
    let (mut stuck, stuck_log) = start(
        &poller,
        &names,
        &[
            ("MARKETLAB_JOB_TIMEOUT_SECONDS", "1"),
            ("MARKETLAB_JOB_STALL_SECONDS", &stall),
            ("MARKETLAB_FAULT_STALL_JOBS", "1"),
        ],
        dir.path(),
        1,
    );
    let task = state
        .tasks
        .create(NewTask {
            owner: DEMO_EMAIL.into(),
            kind: TaskKind::StrategyBacktest,
            params: json!({
                "symbol": "SPX", "risk_control": "//10",
                "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Relative Strength Index"}, "rule": {"type_name": "CrossBelow", "comparison_value": "30"}}},
                "exit": {"rule_type": "RiskControlOnly"}
            }),
        })
        .await
        .unwrap();
    state
        .queue
        .enqueue(JobMessage::for_task(&task))
        .await
        .unwrap();
    // The stuck poller is the only one when the task is claimed.
    let claimed = loop {
        let t = state.tasks.get(task.id).await.unwrap().unwrap();
        if t.status == TaskStatus::Running {
            break Instant::now();
        }
        assert!(
            t.status == TaskStatus::Pending,
            "{t:?}: {:?}",
            std::fs::read_to_string(&stuck_log)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let (_other, other_log) = start(
        &poller,
        &names,
        // A healthy poller's bound far above a job's silences under load
        // (its job reports every 0.5 s; a loaded machine can hold that
        // back past 2 s and release a running job).
        &[("MARKETLAB_JOB_STALL_SECONDS", "60")],
        dir.path(),
        2,
    );
    let done = loop {
        let t = state.tasks.get(task.id).await.unwrap().unwrap();
        if t.status.is_finished() {
            break t;
        }
        // Only a guard against a hang: the bound is checked below.
        assert!(claimed.elapsed() < Duration::from_secs(300), "{t:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let recovered = claimed.elapsed();
    println!(
        "stalled job given back and run by another poller {recovered:?} after its claim (stall bound {STALL:?}, visibility {VISIBILITY} s)"
    );
    assert_eq!(
        (done.status, done.attempts),
        (TaskStatus::Success, 2),
        "{done:?}"
    );
    // The bound, then the other poller's run of a short backtest, with a
    // margin for a loaded machine; far below the visibility timeout.
    assert!(recovered < STALL + Duration::from_secs(20), "{recovered:?}");
    let id = task.id.to_string();
    let names_task = |events: Vec<serde_json::Value>| {
        events
            .iter()
            .filter(|e| e["fields"]["task_id"] == id.as_str())
            .count()
    };
    // Received, released and given back by the stuck poller, each logged
    // with the task's id; run by the other.
    assert_eq!(names_task(logged(&stuck_log, "message received")), 1);
    assert_eq!(
        names_task(logged(
            &stuck_log,
            "job stopped reporting; its task is released for another worker"
        )),
        1
    );
    assert_eq!(names_task(logged(&stuck_log, "message given back")), 1);
    assert_eq!(names_task(logged(&stuck_log, "job finished")), 0);
    assert_eq!(names_task(logged(&other_log, "message received")), 1);
    // The other poller logs the end once it has stored it: its line may
    // follow the stored outcome by a moment.
    while names_task(logged(&other_log, "job finished")) == 0 {
        assert!(
            claimed.elapsed() < Duration::from_secs(300),
            "no end logged"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(names_task(logged(&other_log, "job finished")), 1);
    // Its job cannot be stopped (it holds its thread): the stuck poller
    // exits with status 1 for its supervisor to start a clean one.
    let exited = loop {
        if let Some(status) = stuck.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            claimed.elapsed() < Duration::from_secs(300),
            "still running"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(exited.code(), Some(1));
    assert_eq!(
        names_task(logged(
            &stuck_log,
            "a stalled job could not be stopped; exiting so that a clean poller takes over"
        )),
        1
    );
}
