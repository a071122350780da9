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
        4,
        "the job and webhook queues and their dead-letter queues: {:?}",
        queues.queue_urls()
    );

    // stop returns once moto has exited.
    emulator.stop();
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "moto stopped"
    );
}
