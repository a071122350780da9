//! Creates the resources of infra/template.yaml (names from infra/names.env,
//! via the environment) on an emulator or an empty account: the tables, the
//! job, webhook and ingest queues with their dead-letter queues, the bucket
//! and its notifications; uploads a market data directory to the bucket, and
//! adds the demo account. Idempotent. Prints the environment the functions
//! need, as `export` lines.

use anyhow::{Context, Result};
use aws_adapters::{Clients, Names, S3Blobs, provision};
use clap::Parser;
use platform::marketdata::{BlobStore, LocalDir};
use std::path::PathBuf;

#[derive(Parser)]
#[command(about = "Create the AWS resources and load market data")]
struct Args {
    /// Market data directory to upload (generated with the sample set if empty).
    #[arg(long)]
    market_dir: Option<PathBuf>,
    /// The test-mode data to upload under `sample/` (generated with the
    /// sample set if empty); the market directory's own files when it was
    /// the sample set made now.
    #[arg(long)]
    test_market_dir: Option<PathBuf>,
    /// Stocks in the sample set when one is generated.
    #[arg(long, default_value_t = sample::DEFAULT_STOCKS)]
    sample_stocks: usize,
    /// Do not create the demo account.
    #[arg(long)]
    no_demo: bool,
    /// The job queue's visibility timeout for a queue this creates (scaled
    /// down to try recovery in minutes).
    #[arg(long, default_value_t = provision::VISIBILITY_SECONDS)]
    visibility_seconds: u32,
    /// Deliveries of a message before its queue's redrive moves it to the
    /// dead-letter queue, for queues this creates.
    #[arg(long, default_value_t = provision::MAX_RECEIVES)]
    max_receives: u32,
    /// Adds `MARKETLAB_JOB_TIMEOUT_SECONDS` (a claim's lease and the stall
    /// bound) to the environment printed, scaled down with the visibility.
    #[arg(long)]
    job_timeout_seconds: Option<f64>,
}

/// Uploads every object of `local` to `s3` under `prefix`, eight PUTs at
/// a time: one after another, a round trip each, the sample set's thousand
/// objects took most of a minute.
async fn upload(local: &LocalDir, s3: &S3Blobs, prefix: &str) -> Result<()> {
    use futures::StreamExt;
    let keys = local.list("").await?;
    futures::stream::iter(&keys)
        .map(|key| async move {
            let data = local.get(key).await?.context("object vanished")?;
            s3.put(&format!("{prefix}{key}"), data).await?;
            anyhow::Ok(())
        })
        .buffer_unordered(8)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<()>>()
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    let clients = Clients::from_env().await;
    let names = Names::from_env();
    let queue_name =
        std::env::var("MARKETLAB_QUEUE_NAME").unwrap_or_else(|_| "marketlab-jobs".into());
    provision::tasks_table(&clients, &names.tasks_table)
        .await
        .context("tasks table")?;
    provision::accounts_table(&clients, &names.accounts_table)
        .await
        .context("accounts table")?;
    provision::keys_table(&clients, &names.keys_table)
        .await
        .context("keys table")?;
    provision::limits_table(&clients, &names.limits_table)
        .await
        .context("limits table")?;
    provision::usage_table(&clients, &names.usage_table)
        .await
        .context("usage table")?;
    let queue_url = provision::queue(
        &clients,
        &queue_name,
        args.max_receives,
        args.visibility_seconds,
    )
    .await
    .context("queue")?;
    provision::webhooks_table(&clients, &names.webhooks_table)
        .await
        .context("webhooks table")?;
    let webhook_queue_name = std::env::var("MARKETLAB_WEBHOOK_QUEUE_NAME")
        .unwrap_or_else(|_| "marketlab-webhooks".into());
    let webhook_queue_url = provision::queue(
        &clients,
        &webhook_queue_name,
        provision::MAX_RECEIVES,
        provision::WEBHOOK_VISIBILITY_SECONDS,
    )
    .await
    .context("webhook queue")?;
    let ingest_queue_name =
        std::env::var("MARKETLAB_INGEST_QUEUE_NAME").unwrap_or_else(|_| "marketlab-ingest".into());
    let ingest_queue_url = provision::ingest_queue(&clients, &ingest_queue_name)
        .await
        .context("ingest queue")?;
    provision::bucket(&clients, &names.bucket)
        .await
        .context("bucket")?;
    // Batch files to the job queue, market data under incoming/ to the
    // ingest queue, as the template's bucket sends them.
    provision::bucket_notifications_once(
        &clients,
        &names.bucket,
        &queue_url,
        Some(&ingest_queue_url),
    )
    .await
    .context("bucket notifications")?;
    let config = sample::SampleConfig {
        stocks: args.sample_stocks,
        ..Default::default()
    };
    let s3 = S3Blobs::new(clients.s3.clone(), &names.bucket);
    let mut generated = None;
    if let Some(dir) = &args.market_dir {
        let local = LocalDir::new(dir);
        if local.is_empty() {
            sample::generate(&config, &local).context("generating the sample set")?;
            generated = Some(dir.clone());
        }
        upload(&local, &s3, "").await?;
        eprintln!("uploaded {} to s3://{}", dir.display(), names.bucket);
    }
    let test_dir = match (&args.test_market_dir, generated) {
        (Some(dir), _) => {
            let local = LocalDir::new(dir);
            if local.is_empty() {
                sample::generate(&config, &local).context("generating the test set")?;
            }
            Some(dir.clone())
        }
        (None, made) => made,
    };
    if let Some(dir) = test_dir {
        let prefix = aws_adapters::wiring::TEST_PREFIX;
        upload(&LocalDir::new(&dir), &s3, prefix).await?;
        eprintln!(
            "uploaded {} to s3://{}/{prefix} (test mode)",
            dir.display(),
            names.bucket
        );
    }
    if !args.no_demo {
        let state = lambda_functions::state_from(
            &clients,
            &Names {
                queue_url: queue_url.clone(),
                ..names.clone()
            },
        );
        if state
            .auth
            .store()
            .get(marketlab::server::DEMO_EMAIL)
            .await?
            .is_none()
        {
            platform::accounts::add_account(
                state.auth.store().as_ref(),
                marketlab::server::DEMO_EMAIL,
                marketlab::server::DEMO_PASSWORD,
                "pro",
                vec![],
            )
            .await?;
        }
    }
    println!("export MARKETLAB_TASKS_TABLE={}", names.tasks_table);
    println!("export MARKETLAB_ACCOUNTS_TABLE={}", names.accounts_table);
    println!("export MARKETLAB_KEYS_TABLE={}", names.keys_table);
    println!("export MARKETLAB_LIMITS_TABLE={}", names.limits_table);
    println!("export MARKETLAB_USAGE_TABLE={}", names.usage_table);
    println!("export MARKETLAB_QUEUE_URL={queue_url}");
    println!("export MARKETLAB_BUCKET={}", names.bucket);
    println!("export MARKETLAB_WEBHOOKS_TABLE={}", names.webhooks_table);
    println!("export MARKETLAB_WEBHOOK_QUEUE_URL={webhook_queue_url}");
    println!("export MARKETLAB_INGEST_QUEUE_URL={ingest_queue_url}");
    if let Some(seconds) = args.job_timeout_seconds {
        println!("export MARKETLAB_JOB_TIMEOUT_SECONDS={seconds}");
    }
    // The key webhook secrets derive from: kept if set, else a new one,
    // in hex so every env-file reader takes it (on AWS the template
    // generates it in Secrets Manager).
    let key = match std::env::var("MARKETLAB_WEBHOOK_KEY") {
        Ok(k) => k,
        Err(_) => {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("webhook key: {e}"))?;
            bytes.iter().map(|b| format!("{b:02x}")).collect()
        }
    };
    println!("export MARKETLAB_WEBHOOK_KEY={key}");
    // The API key pepper likewise: a new one would orphan every key made.
    let pepper = match std::env::var("MARKETLAB_API_KEY_PEPPER") {
        Ok(p) => p,
        Err(_) => {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("API key pepper: {e}"))?;
            bytes.iter().map(|b| format!("{b:02x}")).collect()
        }
    };
    println!("export MARKETLAB_API_KEY_PEPPER={pepper}");
    Ok(())
}
