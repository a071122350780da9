//! localstack/start creates the template's resources on moto and loads the
//! data; localstack/stop stops the emulator it started.

use std::path::PathBuf;
use std::process::Command;

#[tokio::test(flavor = "multi_thread")]
async fn start_provisions_and_stop_stops() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let state = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let run = |script: &str| {
        let mut c = Command::new(repo.join("localstack").join(script));
        c.env("MARKETLAB_EMULATOR_DIR", state.path())
            .env("MARKETLAB_DATA_DIR", data.path())
            .env("MARKETLAB_PROVISION_BIN", env!("CARGO_BIN_EXE_provision"))
            .env("MOTO_PORT", port.to_string())
            .env_remove("AWS_ENDPOINT_URL");
        c
    };
    let out = run("start")
        .args(["--sample-stocks", "3"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let env = std::fs::read_to_string(state.path().join("env")).unwrap();
    assert!(
        env.contains("export MARKETLAB_QUEUE_URL=")
            && env.contains(&format!("export AWS_ENDPOINT_URL=http://127.0.0.1:{port}")),
        "{env}"
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
        names.contains(&"marketlab-tasks") && names.contains(&"marketlab-accounts"),
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
        2,
        "queue and dead-letter queue: {:?}",
        queues.queue_urls()
    );

    assert!(run("stop").status().unwrap().success());
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "moto stopped"
    );
}
