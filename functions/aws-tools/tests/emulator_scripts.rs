//! localstack/start creates the template's resources on moto and loads the
//! data; localstack/stop stops the emulator it started.

mod common;

#[tokio::test(flavor = "multi_thread")]
async fn start_provisions_and_stop_stops() {
    let emulator = common::Emulator::new();
    let port = emulator.port;
    emulator.start();
    let env = emulator.env();
    let var = |k: &str| {
        env.iter()
            .find(|(name, _)| name == k)
            .map(|(_, v)| v.clone())
    };
    assert!(
        var("MARKETLAB_QUEUE_URL").is_some_and(|q| !q.is_empty()),
        "{env:?}"
    );
    assert_eq!(
        var("AWS_ENDPOINT_URL"),
        Some(format!("http://127.0.0.1:{port}"))
    );
    // boto3 and the AWS CLI read the default region.
    assert_eq!(var("AWS_DEFAULT_REGION"), var("AWS_REGION"));
    // The worker path runs: the poller, with the file's environment.
    let (log, pid_file) = (
        emulator.state.path().join("poller.log"),
        emulator.state.path().join("poller.pid"),
    );
    let waited = std::time::Instant::now();
    while !(pid_file.exists()
        && std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("poller started"))
    {
        assert!(
            waited.elapsed() < std::time::Duration::from_secs(60),
            "{:?}",
            std::fs::read_to_string(&log)
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_string();

    // The resources exist under the shared names, with the sample data in the bucket.
    // SAFETY: this test binary has no other test touching the environment.
    unsafe {
        std::env::set_var("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"));
        std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
        std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
        std::env::set_var("AWS_REGION", "us-east-1");
    }
    let clients = aws_adapters::Clients::from_env().await;
    let tables = clients.dynamodb.list_tables().send().await.unwrap();
    let names: Vec<&str> = tables.table_names().iter().map(String::as_str).collect();
    assert!(
        [
            "marketlab-tasks",
            "marketlab-accounts",
            "marketlab-webhooks"
        ]
        .iter()
        .all(|t| names.contains(t)),
        "{names:?}"
    );
    let head = clients
        .s3
        .head_object()
        .bucket("marketlab-market-data")
        .key("reference/symbols.parquet")
        .send()
        .await;
    assert!(head.is_ok(), "the sample set was uploaded");
    let queues = clients.sqs.list_queues().send().await.unwrap();
    assert_eq!(
        queues.queue_urls().len(),
        6,
        "the job, webhook and ingest queues and their dead-letter queues: {:?}",
        queues.queue_urls()
    );
    // The bucket sends batch files to the job queue and incoming/ to the
    // ingest queue, whose URL the environment names.
    let ingest_queue = var("MARKETLAB_INGEST_QUEUE_URL").expect("the ingest queue");
    assert!(
        queues.queue_urls().contains(&ingest_queue),
        "{ingest_queue}"
    );
    let notifications = clients
        .s3
        .get_bucket_notification_configuration()
        .bucket("marketlab-market-data")
        .send()
        .await
        .unwrap();
    assert_eq!(notifications.queue_configurations().len(), 2);
    // S3's test events were removed: the job queue holds nothing.
    let jobs = clients
        .sqs
        .receive_message()
        .queue_url(var("MARKETLAB_QUEUE_URL").unwrap())
        .visibility_timeout(0)
        .send()
        .await
        .unwrap();
    assert!(jobs.messages().is_empty(), "{:?}", jobs.messages());
    let ingest_pid = std::fs::read_to_string(emulator.state.path().join("ingest.pid"))
        .unwrap()
        .trim()
        .to_string();

    // stop returns once the poller and moto have exited.
    emulator.stop();
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.split_whitespace().nth(2) == Some("Z")),
        "poller stopped"
    );
    assert!(!emulator.state.path().join("poller.pid").exists());
    assert!(
        !std::path::Path::new(&format!("/proc/{ingest_pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{ingest_pid}/stat"))
                .is_ok_and(|s| s.split_whitespace().nth(2) == Some("Z")),
        "ingest stopped"
    );
    assert!(!emulator.state.path().join("ingest.pid").exists());
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "moto stopped"
    );
}
