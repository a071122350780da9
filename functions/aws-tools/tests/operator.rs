//! The `operator` binary as an operator runs it: every error is one line
//! naming the setting to fix, exit status 1, no backtrace even under
//! `RUST_BACKTRACE=1`; `dlq list` shows how many times a dead letter was
//! received before it reached the dead-letter queue, the same on every
//! listing, and leaves it there.

use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::QueueAttributeName;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The operator with only `env` (and `PATH`) in its environment: no
/// setting of the machine's leaks in. The AWS SDK reads no shared files
/// either (`HOME` is an empty directory).
fn operator(home: &std::path::Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_operator"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .env("RUST_BACKTRACE", "1")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("operator runs")
}

/// A failed run's one line on stderr, checked: status 1, nothing on stdout,
/// one line, no backtrace.
fn one_error_line(out: &Output, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
    assert!(out.stdout.is_empty(), "{what}: {:?}", out.stdout);
    assert_eq!(stderr.lines().count(), 1, "{what}: {stderr}");
    assert!(
        !stderr.contains("backtrace") && !stderr.contains("Caused by"),
        "{what}: {stderr}"
    );
    stderr.trim_end().to_string()
}

/// Credentials and a region for an emulator at `endpoint`.
fn aws_env(endpoint: &str) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ENDPOINT_URL", endpoint.to_string()),
        ("AWS_ACCESS_KEY_ID", "testing".into()),
        ("AWS_SECRET_ACCESS_KEY", "testing".into()),
        ("AWS_REGION", "us-east-1".into()),
    ]
}

fn pairs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// A command, its environment, and the start of the line it must print.
type Case<'a> = (&'a [&'a str], Vec<(&'a str, &'a str)>, &'a str);

#[test]
fn every_error_is_one_line_naming_the_missing_setting() {
    let home = tempfile::tempdir().unwrap();
    // Nothing listens here: a call made would fail, not name a setting.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let aws = aws_env(&format!("http://127.0.0.1:{port}"));
    let aws = pairs(&aws);
    let cases: [Case; 9] = [
        (
            &["dlq", "list", "--queue", "ingest"],
            aws.clone(),
            "operator: MARKETLAB_INGEST_QUEUE_URL is not set: ",
        ),
        (
            &["dlq", "redrive", "--queue", "ingest"],
            aws.clone(),
            "operator: MARKETLAB_INGEST_QUEUE_URL is not set: ",
        ),
        (
            &["dlq", "list"],
            aws.clone(),
            "operator: MARKETLAB_QUEUE_URL is not set: ",
        ),
        (
            &["dlq", "redrive", "--queue", "webhooks"],
            aws.clone(),
            "operator: MARKETLAB_WEBHOOK_QUEUE_URL is not set: ",
        ),
        (
            &["keys", "list", "--email", "a@example.test"],
            aws.clone(),
            "operator: MARKETLAB_API_KEY_PEPPER is not set: ",
        ),
        (
            &["keys", "list", "--email", "a@example.test"],
            [aws.clone(), vec![("MARKETLAB_API_KEY_PEPPER", "short")]].concat(),
            "operator: MARKETLAB_API_KEY_PEPPER is not usable: ",
        ),
        (
            &["accounts", "list"],
            aws.iter()
                .copied()
                .filter(|(k, _)| *k != "AWS_REGION")
                .collect(),
            "operator: AWS_REGION is not set: ",
        ),
        (
            &["usage"],
            aws.iter()
                .copied()
                .filter(|(k, _)| !k.starts_with("AWS_ACCESS") && !k.starts_with("AWS_SECRET"))
                .collect(),
            "operator: AWS_ACCESS_KEY_ID is not set: ",
        ),
        (
            &["plans"],
            aws.iter()
                .copied()
                .filter(|(k, _)| *k != "AWS_SECRET_ACCESS_KEY")
                .collect(),
            "operator: AWS_ACCESS_KEY_ID is not set: ",
        ),
    ];
    for (args, env, expected) in cases {
        let what = args.join(" ");
        let line = one_error_line(&operator(home.path(), &env, args), &what);
        assert!(line.starts_with(expected), "{what}: {line}");
    }
}

/// moto on a free port of 127.0.0.1, stopped when the test process ends
/// (the shell that runs it kills it when our end of its stdin closes).
fn emulator() -> String {
    let python = std::env::var_os("MARKETLAB_PYTHON")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/marketlab/venv/bin/python")
        });
    let launcher =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../localstack/moto_server.py");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
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
    std::mem::forget(child);
    // A hang guard: moto answers in a second or two.
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "moto did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    format!("http://127.0.0.1:{port}")
}

async fn sqs(endpoint: &str) -> Client {
    let sdk = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .region(aws_config::Region::new("us-east-1"))
        .credentials_provider(aws_sdk_sqs::config::Credentials::new(
            "testing", "testing", None, None, "test",
        ))
        .load()
        .await;
    Client::new(&sdk)
}

/// A queue `name` whose messages move to `name-dlq` after `max_receives`.
async fn queue_with_dead_letters(c: &Client, name: &str, max_receives: u32) -> String {
    let dlq = c
        .create_queue()
        .queue_name(format!("{name}-dlq"))
        .send()
        .await
        .unwrap();
    let arn = c
        .get_queue_attributes()
        .queue_url(dlq.queue_url().unwrap())
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .unwrap()
        .attributes()
        .unwrap()[&QueueAttributeName::QueueArn]
        .clone();
    let policy = format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":{max_receives}}}"#);
    c.create_queue()
        .queue_name(name)
        .attributes(QueueAttributeName::RedrivePolicy, policy)
        .send()
        .await
        .unwrap()
        .queue_url()
        .unwrap()
        .to_string()
}

async fn visible(c: &Client, url: &str) -> u64 {
    c.get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
        .send()
        .await
        .unwrap()
        .attributes()
        .unwrap()[&QueueAttributeName::ApproximateNumberOfMessages]
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn dlq_list_shows_the_receives_before_the_dead_letter_queue_on_every_listing() {
    let endpoint = emulator();
    let c = sqs(&endpoint).await;
    let jobs = queue_with_dead_letters(&c, "operator-jobs", 2).await;
    let dlq = c
        .get_queue_url()
        .queue_name("operator-jobs-dlq")
        .send()
        .await
        .unwrap()
        .queue_url()
        .unwrap()
        .to_string();
    let sent = c
        .send_message()
        .queue_url(&jobs)
        .message_body("not a job message")
        .send()
        .await
        .unwrap();
    let id = sent.message_id().unwrap().to_string();
    // Received and given back at once until the redrive policy moves it:
    // twice handed out, then moved on the next receive.
    let (mut handed_out, deadline) = (0, Instant::now() + Duration::from_secs(60));
    while visible(&c, &dlq).await == 0 {
        assert!(Instant::now() < deadline, "never moved");
        let got = c
            .receive_message()
            .queue_url(&jobs)
            .visibility_timeout(0)
            .send()
            .await
            .unwrap();
        handed_out += got.messages().len();
    }
    assert_eq!(handed_out, 2);

    let home = tempfile::tempdir().unwrap();
    let mut env = aws_env(&endpoint);
    env.push(("MARKETLAB_QUEUE_URL", jobs.clone()));
    let env = pairs(&env);
    // Listed three times: the same count each time, and still there (each
    // listing's receive is given back at once, or the next would see nothing).
    for listing in 1..=3 {
        let out = operator(home.path(), &env, &["dlq", "list"]);
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], format!("{dlq}: 1 messages"), "listing {listing}");
        let fields: Vec<&str> = lines[1].split('\t').collect();
        assert_eq!(
            (fields[0], fields[2], fields[3]),
            (id.as_str(), "received 2 times", "not a job message"),
            "listing {listing}: {text}"
        );
        assert_eq!(lines.len(), 2, "{text}");
    }
    assert_eq!(visible(&c, &dlq).await, 1);

    // Sent back to its queue.
    let out = operator(home.path(), &env, &["dlq", "redrive"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        format!("sent 1 messages from {dlq} back to {jobs}")
    );
    assert_eq!((visible(&c, &dlq).await, visible(&c, &jobs).await), (0, 1));

    // A queue that does not exist, and one without a dead-letter queue,
    // each told apart, naming the setting.
    let plain = c
        .create_queue()
        .queue_name("operator-plain")
        .send()
        .await
        .unwrap()
        .queue_url()
        .unwrap()
        .to_string();
    let missing = jobs.replace("operator-jobs", "operator-none");
    for (setting, url, expected) in [
        (
            "MARKETLAB_WEBHOOK_QUEUE_URL",
            missing.as_str(),
            format!("operator: the queue {missing} (MARKETLAB_WEBHOOK_QUEUE_URL) cannot be read: "),
        ),
        (
            "MARKETLAB_WEBHOOK_QUEUE_URL",
            plain.as_str(),
            format!(
                "operator: the queue {plain} (MARKETLAB_WEBHOOK_QUEUE_URL) has no dead-letter queue: it has no redrive policy"
            ),
        ),
    ] {
        let mut env = env.clone();
        env.push((setting, url));
        let out = operator(home.path(), &env, &["dlq", "list", "--queue", "webhooks"]);
        let line = one_error_line(&out, url);
        assert!(line.starts_with(&expected), "{line}");
    }
}
