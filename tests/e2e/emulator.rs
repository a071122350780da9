//! The AWS emulator for the AWS-path tests: the one at `AWS_ENDPOINT_URL` if
//! set, otherwise moto server from the reference venv (through
//! localstack/moto_server.py, which makes its DynamoDB writes atomic), started
//! once per test process on 127.0.0.1 and stopped when the process ends.

use aws_adapters::Clients;
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The emulator's endpoint, started on first use.
pub fn endpoint() -> String {
    static ENDPOINT: OnceLock<String> = OnceLock::new();
    ENDPOINT
        .get_or_init(|| {
            if let Ok(e) = std::env::var("AWS_ENDPOINT_URL") {
                return e;
            }
            let python = crate::reference::python();
            assert!(
                python.with_file_name("moto_server").exists(),
                "moto server is missing from the reference venv: run tests/run"
            );
            // DynamoDB writes applied one at a time, as DynamoDB does per item.
            let launcher = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../localstack/moto_server.py");
            let port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            // The shell keeps moto's lifetime tied to ours: when this process ends its
            // end of the pipe closes, `read` returns, and moto is killed.
            let script = format!(
                "'{}' '{}' -H 127.0.0.1 -p {port} >/dev/null 2>&1 & pid=$!; read _; kill $pid",
                python.display(),
                launcher.display()
            );
            let child = Command::new("sh")
                .arg("-c")
                .arg(script)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .spawn()
                .expect("moto starts");
            // Keep the pipe open for the life of the process.
            std::mem::forget(child);
            let url = format!("http://127.0.0.1:{port}");
            let deadline = Instant::now() + Duration::from_secs(30);
            while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
                assert!(Instant::now() < deadline, "moto did not start on {url}");
                std::thread::sleep(Duration::from_millis(100));
            }
            url
        })
        .clone()
}

/// The AWS call timeouts on the emulator: one Python process shared by
/// every test on a loaded machine answers far slower than AWS, and a slow
/// answer there is not the outage the production timeouts are for
/// (`aws_hangs` sets its own to test those).
pub const EMULATOR_TIMEOUTS: [(&str, &str); 2] = [
    ("MARKETLAB_AWS_ATTEMPT_TIMEOUT_MS", "30000"),
    ("MARKETLAB_AWS_OPERATION_TIMEOUT_MS", "60000"),
];

/// SDK clients pointed at the emulator, with test credentials.
pub async fn clients() -> Clients {
    let url = endpoint();
    // SAFETY: set before any client reads the environment; every test sets the same values.
    unsafe {
        std::env::set_var("AWS_ENDPOINT_URL", &url);
        std::env::set_var(
            "AWS_ACCESS_KEY_ID",
            std::env::var("AWS_ACCESS_KEY_ID").unwrap_or_else(|_| "testing".into()),
        );
        std::env::set_var(
            "AWS_SECRET_ACCESS_KEY",
            std::env::var("AWS_SECRET_ACCESS_KEY").unwrap_or_else(|_| "testing".into()),
        );
        std::env::set_var(
            "AWS_REGION",
            std::env::var("AWS_REGION").unwrap_or_else(|_| "us-east-1".into()),
        );
        for (k, v) in EMULATOR_TIMEOUTS {
            std::env::set_var(k, v);
        }
    }
    Clients::from_env().await
}

/// The key hash pepper of deployments on the emulator (the template
/// generates one in Secrets Manager).
pub const API_KEY_PEPPER: &str = "emulator-deployments-api-key-pepper-not-a-secret";

/// [`sample_bucket`] with the sample set also under `sample/`, where test
/// mode reads it; uploaded once per process.
pub async fn sample_bucket_with_test_set(c: &Clients) -> String {
    static DONE: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
    DONE.get_or_init(|| async {
        let bucket = sample_bucket(c).await;
        upload(
            c,
            &bucket,
            crate::server::market_dir(),
            aws_adapters::wiring::TEST_PREFIX,
        )
        .await;
        bucket
    })
    .await
    .clone()
}

/// A bucket holding the test sample set, uploaded once per process.
pub async fn sample_bucket(c: &Clients) -> String {
    static BUCKET: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
    BUCKET
        .get_or_init(|| bucket_of(c, crate::server::market_dir()))
        .await
        .clone()
}

/// A new bucket holding the market directory `dir`, as `marketlab
/// load-data` would upload it.
pub async fn bucket_of(c: &Clients, dir: &std::path::Path) -> String {
    let bucket = crate::contract::unique("market");
    aws_adapters::provision::bucket(c, &bucket).await.unwrap();
    upload(c, &bucket, dir, "").await;
    bucket
}

/// Uploads the files of `dir` to `bucket` under `prefix`.
pub async fn upload(c: &Clients, bucket: &str, dir: &std::path::Path, prefix: &str) {
    use platform::marketdata::{BlobStore, LocalDir};
    let local = LocalDir::new(dir);
    let s3 = aws_adapters::S3Blobs::new(c.s3.clone(), bucket.to_string());
    let keys = local.list("").await.unwrap();
    // Eight uploads at a time.
    for chunk in keys.chunks(8) {
        let mut uploads = tokio::task::JoinSet::new();
        for key in chunk {
            let (local, s3, key) = (local.clone(), s3.clone(), key.clone());
            let to = format!("{prefix}{key}");
            uploads.spawn(async move {
                s3.put(&to, local.get(&key).await.unwrap().unwrap())
                    .await
                    .unwrap()
            });
        }
        uploads.join_all().await;
    }
}

/// The environment the template gives a function, for a deployment's names
/// on the emulator (a function started as a process of its own).
pub fn function_env(names: &aws_adapters::Names) -> Vec<(&'static str, String)> {
    function_env_at(names, endpoint())
}

/// [`function_env`] with its AWS endpoint at `url` (a closed port, a proxy).
pub fn function_env_at(names: &aws_adapters::Names, url: String) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ENDPOINT_URL", url),
        ("AWS_ACCESS_KEY_ID", "testing".into()),
        ("AWS_SECRET_ACCESS_KEY", "testing".into()),
        ("AWS_REGION", "us-east-1".into()),
        ("MARKETLAB_TASKS_TABLE", names.tasks_table.clone()),
        ("MARKETLAB_ACCOUNTS_TABLE", names.accounts_table.clone()),
        ("MARKETLAB_LIMITS_TABLE", names.limits_table.clone()),
        ("MARKETLAB_USAGE_TABLE", names.usage_table.clone()),
        ("MARKETLAB_QUEUE_URL", names.queue_url.clone()),
        ("MARKETLAB_BUCKET", names.bucket.clone()),
        ("MARKETLAB_WEBHOOKS_TABLE", names.webhooks_table.clone()),
        ("MARKETLAB_KEYS_TABLE", names.keys_table.clone()),
        ("MARKETLAB_API_KEY_PEPPER", API_KEY_PEPPER.into()),
        (
            "MARKETLAB_WEBHOOK_QUEUE_URL",
            names.webhook_queue_url.clone(),
        ),
        ("RUST_LOG", "warn".into()),
    ]
    .into_iter()
    .chain(EMULATOR_TIMEOUTS.map(|(k, v)| (k, v.to_string())))
    .collect()
}

/// A deployment on the emulator with its own tables and job queue (the sample
/// bucket is shared), wired as the Lambda functions wire it, with the demo
/// account and a second one, other@example.test / other-password.
pub struct Deployment {
    pub clients: Clients,
    pub names: aws_adapters::Names,
    pub state: api::AppState,
}

pub async fn deployment() -> Deployment {
    let c = clients().await;
    let bucket = sample_bucket(&c).await;
    deployment_on(c, bucket).await
}

/// A deployment as [`deployment`] makes it, over a bucket of the caller's.
pub async fn deployment_on(c: Clients, bucket: String) -> Deployment {
    deployment_with_queue(c, bucket, 3, 30).await
}

/// A deployment whose job queue sends a message to its dead-letter queue
/// after `max_receives` deliveries and hides a received one for
/// `visibility_seconds` (scaled down from the template's).
pub async fn deployment_with_queue(
    c: Clients,
    bucket: String,
    max_receives: u32,
    visibility_seconds: u32,
) -> Deployment {
    use crate::contract::unique;
    use aws_adapters::provision;
    let names = aws_adapters::Names {
        tasks_table: unique("tasks"),
        accounts_table: unique("accounts"),
        keys_table: unique("keys"),
        limits_table: unique("limits"),
        usage_table: unique("usage"),
        queue_url: provision::queue(&c, &unique("jobs"), max_receives, visibility_seconds)
            .await
            .unwrap(),
        bucket,
        webhooks_table: unique("webhooks"),
        webhook_queue_url: provision::queue(&c, &unique("webhooks"), 5, 30)
            .await
            .unwrap(),
        ingest_queue_url: provision::queue(&c, &unique("ingest"), 3, 30)
            .await
            .unwrap(),
    };
    provision::webhooks_table(&c, &names.webhooks_table)
        .await
        .unwrap();
    provision::tasks_table(&c, &names.tasks_table)
        .await
        .unwrap();
    provision::accounts_table(&c, &names.accounts_table)
        .await
        .unwrap();
    provision::keys_table(&c, &names.keys_table).await.unwrap();
    provision::limits_table(&c, &names.limits_table)
        .await
        .unwrap();
    provision::usage_table(&c, &names.usage_table)
        .await
        .unwrap();
    let state = lambda_functions::state_with(
        &c,
        &names,
        Some(platform::keys::Pepper::from_text(API_KEY_PEPPER).unwrap()),
    );
    for (email, password) in [
        (
            marketlab::server::DEMO_EMAIL,
            marketlab::server::DEMO_PASSWORD,
        ),
        ("other@example.test", "other-password"),
    ] {
        platform::accounts::add_account(
            state.auth.store().as_ref(),
            email,
            password,
            "pro",
            vec![],
        )
        .await
        .unwrap();
    }
    Deployment {
        clients: c,
        names,
        state,
    }
}

/// The dead-letter queue of `queue_url` (provision names it `<queue>-dlq`).
pub async fn dead_letter_url(c: &Clients, queue_url: &str) -> String {
    let name = queue_url.rsplit('/').next().unwrap();
    c.sqs
        .get_queue_url()
        .queue_name(format!("{name}-dlq"))
        .send()
        .await
        .unwrap()
        .queue_url()
        .unwrap()
        .to_string()
}

/// Up to 10 messages of the queue as SQS's event source mapping hands a
/// batch to the worker function (each message's id is its receipt handle,
/// so a reported failure names the message to keep), with their handles.
pub async fn receive_batch(
    c: &Clients,
    queue_url: &str,
) -> Option<(aws_lambda_events::event::sqs::SqsEvent, Vec<String>)> {
    use aws_lambda_events::event::sqs::{SqsEvent, SqsMessage};
    let got = c
        .sqs
        .receive_message()
        .queue_url(queue_url)
        .max_number_of_messages(10)
        .wait_time_seconds(1)
        .message_system_attribute_names(aws_sdk_sqs::types::MessageSystemAttributeName::All)
        .message_attribute_names("All")
        .send()
        .await
        .unwrap();
    let messages = got.messages();
    if messages.is_empty() {
        return None;
    }
    let mut event = SqsEvent::default();
    let mut handles = Vec::new();
    for m in messages {
        let mut s = SqsMessage::default();
        s.message_id = m.receipt_handle().map(str::to_string);
        s.receipt_handle = m.receipt_handle().map(str::to_string);
        s.body = m.body().map(str::to_string);
        // As the event source mapping hands them on: system attributes
        // (SentTimestamp, AWSTraceHeader ...) and message attributes.
        for (k, v) in m.attributes().into_iter().flatten() {
            s.attributes.insert(k.as_str().to_string(), v.clone());
        }
        for (k, v) in m.message_attributes().into_iter().flatten() {
            let mut a = aws_lambda_events::event::sqs::SqsMessageAttribute::default();
            a.string_value = v.string_value().map(str::to_string);
            a.data_type = Some(v.data_type().to_string());
            s.message_attributes.insert(k.clone(), a);
        }
        s.event_source = Some("aws:sqs".into());
        event.records.push(s);
        handles.push(m.receipt_handle().unwrap_or_default().to_string());
    }
    Some((event, handles))
}

/// Deletes the batch's messages the worker did not report as failed, as the
/// event source mapping does; answers how many failed.
pub async fn settle_batch(
    c: &Clients,
    queue_url: &str,
    handles: &[String],
    answer: &aws_lambda_events::event::sqs::SqsBatchResponse,
) -> usize {
    let failed: Vec<&str> = answer
        .batch_item_failures
        .iter()
        .map(|f| f.item_identifier.as_str())
        .collect();
    for handle in handles.iter().filter(|h| !failed.contains(&h.as_str())) {
        c.sqs
            .delete_message()
            .queue_url(queue_url)
            .receipt_handle(handle)
            .send()
            .await
            .unwrap();
    }
    failed.len()
}

/// Hands `queue_url`'s batches to `worker`, as the event source mapping
/// does, until `done` holds (each receive long-polls for a second); fails
/// after a minute. The end is what the test waits for (a task finished, a
/// message in the dead-letter queue), not a queue that looked empty for a
/// while.
pub async fn drain_until<F, Fut>(
    c: &Clients,
    queue_url: &str,
    worker: &mut crate::runtime_api::Function,
    mut done: F,
) where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    loop {
        if let Some((event, handles)) = receive_batch(c, queue_url).await {
            let answer = worker.invoke(serde_json::to_value(&event).unwrap()).await;
            let answer = serde_json::from_value(answer.answer).unwrap();
            settle_batch(c, queue_url, &handles, &answer).await;
        }
        if done().await {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the awaited end never came"
        );
    }
}

/// The number of messages in `queue_url`'s dead-letter queue.
pub async fn dead_letter_depth(c: &Clients, queue_url: &str) -> usize {
    let dlq = aws_adapters::dead_letters::dead_letter_url(&c.sqs, queue_url)
        .await
        .unwrap();
    aws_adapters::dead_letters::depth(&c.sqs, &dlq)
        .await
        .unwrap() as usize
}
