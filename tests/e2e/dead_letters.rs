//! A poison job on the emulator: a worker whose task table cannot be read
//! fails its message until the queue moves it to the dead-letter queue;
//! `operator dlq list` shows it (left in place), `operator dlq redrive`
//! sends it back, and a healthy worker then runs the task to SUCCESS. The
//! worker's `dlq_depth` gauge (EMF) shows the dead letter, then none.

use platform::queue::JobMessage;
use platform::tasks::{NewTask, TaskKind, TaskStatus};
use tests::emf;
use tests::emulator::{
    Deployment, clients, dead_letter_depth, deployment_with_queue, drain_until, function_env,
    sample_bucket,
};
use tests::runtime_api::{Function, workspace_binaries};

/// The operator binary's output for `args`, with the deployment's environment.
fn operator(binary: &std::path::Path, env: &[(&'static str, String)], args: &[&str]) -> String {
    let out = std::process::Command::new(binary)
        .args(args)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("operator runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A backtest task of the demo account, created and its job queued.
async fn queued_backtest(state: &api::AppState) -> platform::tasks::Task {
    let task = state
        .tasks
        .create(NewTask {
            owner: marketlab::server::DEMO_EMAIL.into(),
            kind: TaskKind::StrategyBacktest,
            params: tests::server::optix_strategy(),
        })
        .await
        .unwrap();
    state
        .queue
        .enqueue(JobMessage::for_task(&task))
        .await
        .unwrap();
    task
}

#[tokio::test(flavor = "multi_thread")]
async fn a_poison_job_reaches_the_dead_letter_queue_is_listed_redriven_and_then_succeeds() {
    let c = clients().await;
    let bucket = sample_bucket(&c).await;
    // Two receives, a second apart, before the dead-letter queue.
    let Deployment {
        clients: c,
        names,
        state,
    } = deployment_with_queue(c, bucket, 2, 1).await;
    let [worker, operator_bin] = workspace_binaries(["worker", "operator"]).await;
    let task = queued_backtest(&state).await;

    // Poisoned: the worker's task table does not exist.
    let mut env = function_env(&names);
    // Queue depths sampled on every invocation, for the gauges below.
    env.push(("MARKETLAB_QUEUE_SAMPLE_SECONDS", "0".into()));
    let mut broken = env.clone();
    for (k, v) in broken.iter_mut() {
        if *k == "MARKETLAB_TASKS_TABLE" {
            *v = "no-such-table".into();
        }
    }
    let mut sick = Function::new(&worker, "worker", 2048, &broken)
        .await
        .keep_lines();
    // Failed on each receive until the redrive policy moves it.
    drain_until(&c, &names.queue_url, &mut sick, || async {
        dead_letter_depth(&c, &names.queue_url).await == 1
    })
    .await;
    // Each failed receive counted as a retry in the worker's metrics.
    let sick_metrics = emf::read(&sick.lines());
    assert!(
        emf::sum(&sick_metrics, "tasks_total", &[("outcome", "retry")]) >= 2.0,
        "{sick_metrics:?}"
    );
    let dlq = aws_adapters::dead_letters::dead_letter_url(&c.sqs, &names.queue_url)
        .await
        .unwrap();
    assert_eq!(
        aws_adapters::dead_letters::depth(&c.sqs, &dlq)
            .await
            .unwrap(),
        1
    );
    let t = state.tasks.get(task.id).await.unwrap().unwrap();
    assert_eq!(t.status, TaskStatus::Pending, "never claimed: {t:?}");

    // Listed, and left where it is.
    let listed = operator(&operator_bin, &env, &["dlq", "list"]);
    assert!(listed.contains(": 1 messages"), "{listed}");
    assert!(listed.contains(&task.id.to_string()), "{listed}");
    // The receives before the dead-letter queue: the listing's own is not
    // counted, and a second listing shows the same.
    assert!(listed.contains("\treceived 2 times\t"), "{listed}");
    let again = operator(&operator_bin, &env, &["dlq", "list"]);
    assert_eq!(again, listed);
    assert_eq!(
        aws_adapters::dead_letters::depth(&c.sqs, &dlq)
            .await
            .unwrap(),
        1
    );
    let webhooks = operator(&operator_bin, &env, &["dlq", "list", "--queue", "webhooks"]);
    assert!(webhooks.contains(": 0 messages"), "{webhooks}");

    // A healthy worker's next invocation (another tenant task) shows the
    // dead letter in its depth gauge.
    let mut healthy = Function::new(&worker, "worker", 2048, &env)
        .await
        .keep_lines();
    let other = queued_backtest(&state).await;
    let finished = |id| {
        let tasks = state.tasks.clone();
        async move {
            tasks
                .get(id)
                .await
                .unwrap()
                .is_some_and(|t| t.status.is_finished())
        }
    };
    drain_until(&c, &names.queue_url, &mut healthy, || finished(other.id)).await;
    let gauges = emf::read(&healthy.lines());
    assert_eq!(
        emf::last(
            &gauges,
            "dlq_depth",
            &[("service", "worker"), ("queue", "jobs")]
        ),
        Some(1.0),
        "{gauges:?}"
    );

    // Sent back, and the healthy worker runs it.
    let redriven = operator(&operator_bin, &env, &["dlq", "redrive"]);
    assert!(redriven.starts_with("sent 1 messages"), "{redriven}");
    assert_eq!(
        aws_adapters::dead_letters::depth(&c.sqs, &dlq)
            .await
            .unwrap(),
        0
    );
    drain_until(&c, &names.queue_url, &mut healthy, || finished(task.id)).await;
    let t = state.tasks.get(task.id).await.unwrap().unwrap();
    assert_eq!(t.status, TaskStatus::Success, "{t:?}");
    let gauges = emf::read(&healthy.lines());
    assert_eq!(
        emf::last(&gauges, "dlq_depth", &[("queue", "jobs")]),
        Some(0.0),
        "drained"
    );
}

/// The dead-letter queues the provisioning tool creates keep a message as
/// long as the template's do (14 days), for an operator to read and redrive.
#[tokio::test(flavor = "multi_thread")]
async fn provisioned_dead_letter_queues_keep_messages_as_long_as_the_template_s() {
    use aws_sdk_sqs::types::QueueAttributeName;
    let template = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../infra/template.yaml"
    ))
    .unwrap();
    let kept: Vec<u32> = template
        .lines()
        .filter_map(|l| l.trim().strip_prefix("MessageRetentionPeriod:"))
        .map(|v| v.trim().parse().unwrap())
        .collect();
    assert_eq!(kept.len(), 3, "the three dead-letter queues");
    let c = clients().await;
    let name = tests::contract::unique("kept");
    aws_adapters::provision::queue(&c, &name, 5, 60)
        .await
        .unwrap();
    let dlq = c
        .sqs
        .get_queue_url()
        .queue_name(format!("{name}-dlq"))
        .send()
        .await
        .unwrap();
    let attributes = c
        .sqs
        .get_queue_attributes()
        .queue_url(dlq.queue_url().unwrap())
        .attribute_names(QueueAttributeName::MessageRetentionPeriod)
        .send()
        .await
        .unwrap();
    let seconds: u32 = attributes.attributes().unwrap()
        [&QueueAttributeName::MessageRetentionPeriod]
        .parse()
        .unwrap();
    for template_s in kept {
        assert_eq!(seconds, template_s);
    }
    assert_eq!(seconds, 14 * 24 * 3600);
}
