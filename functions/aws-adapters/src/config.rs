//! Clients from the standard AWS environment (`AWS_ENDPOINT_URL`, region,
//! credentials) and the resource names every function agrees on.

/// Resource names, from the environment the template sets (with the
/// defaults the emulator scripts use).
#[derive(Debug, Clone, PartialEq)]
pub struct Names {
    pub tasks_table: String,
    pub accounts_table: String,
    /// API keys, one item per key id.
    pub keys_table: String,
    /// Failed-login counts, plan limits and their counters.
    pub limits_table: String,
    /// Usage counters per account and day.
    pub usage_table: String,
    pub queue_url: String,
    pub bucket: String,
    /// Webhook endpoints, alerts and deliveries.
    pub webhooks_table: String,
    /// The webhook queue: one message per scheduled delivery attempt.
    pub webhook_queue_url: String,
    /// The ingest queue: the bucket's events under `incoming/`.
    pub ingest_queue_url: String,
}

impl Names {
    pub fn from_env() -> Names {
        let var = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_string());
        Names {
            tasks_table: var("MARKETLAB_TASKS_TABLE", "marketlab-tasks"),
            accounts_table: var("MARKETLAB_ACCOUNTS_TABLE", "marketlab-accounts"),
            keys_table: var("MARKETLAB_KEYS_TABLE", "marketlab-keys"),
            limits_table: var("MARKETLAB_LIMITS_TABLE", "marketlab-limits"),
            usage_table: var("MARKETLAB_USAGE_TABLE", "marketlab-usage"),
            queue_url: var("MARKETLAB_QUEUE_URL", ""),
            bucket: var("MARKETLAB_BUCKET", "marketlab-market-data"),
            webhooks_table: var("MARKETLAB_WEBHOOKS_TABLE", "marketlab-webhooks"),
            webhook_queue_url: var("MARKETLAB_WEBHOOK_QUEUE_URL", ""),
            ingest_queue_url: var("MARKETLAB_INGEST_QUEUE_URL", ""),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Clients {
    pub dynamodb: aws_sdk_dynamodb::Client,
    pub sqs: aws_sdk_sqs::Client,
    pub s3: aws_sdk_s3::Client,
}

/// How long one AWS call may take, from `MARKETLAB_AWS_CONNECT_TIMEOUT_MS`,
/// `MARKETLAB_AWS_ATTEMPT_TIMEOUT_MS` and `MARKETLAB_AWS_OPERATION_TIMEOUT_MS`
/// (3 s to connect, 3 s an attempt, 6 s with its retries): a hung DynamoDB,
/// S3 or SQS ends each call that waits on it, so a request answers 503
/// instead of being held, and a worker's attempt ends and its message comes
/// back. The SDK sets no attempt or operation timeout of its own. After one
/// call times out, the service's [`crate::breaker::Breaker`] fails the next
/// ones at once for [`crate::breaker::SERVICES`] operation timeouts, so a request that makes
/// several calls answers within one per service. SQS's long polls get their
/// wait on top ([`crate::SqsQueue::receive`]).
pub fn timeouts() -> aws_config::timeout::TimeoutConfig {
    let ms = |k: &str, default: u64| {
        std::time::Duration::from_millis(
            std::env::var(k)
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .filter(|&v: &u64| v > 0)
                .unwrap_or(default),
        )
    };
    aws_config::timeout::TimeoutConfig::builder()
        .connect_timeout(ms("MARKETLAB_AWS_CONNECT_TIMEOUT_MS", 3_000))
        .operation_attempt_timeout(ms("MARKETLAB_AWS_ATTEMPT_TIMEOUT_MS", 3_000))
        .operation_timeout(ms("MARKETLAB_AWS_OPERATION_TIMEOUT_MS", 6_000))
        .build()
}

impl Clients {
    /// Loads the shared configuration, with [`timeouts`] and a
    /// [`crate::breaker::Breaker`] per service (open for one operation
    /// timeout per service after a call timed out). An overridden endpoint (an
    /// emulator) gets path-style S3 addressing.
    pub async fn from_env() -> Clients {
        let timeouts = timeouts();
        let sdk = aws_config::defaults(aws_config::BehaviorVersion::latest())
            .timeout_config(timeouts.clone())
            .load()
            .await;
        let open_for = timeouts
            .operation_timeout()
            .unwrap_or(std::time::Duration::from_secs(6))
            * crate::breaker::SERVICES;
        let breaker = |service| crate::breaker::Breaker::new(service, open_for);
        let mut s3 = aws_sdk_s3::config::Builder::from(&sdk).interceptor(breaker("S3"));
        if sdk.endpoint_url().is_some() {
            s3 = s3.force_path_style(true);
        }
        Clients {
            dynamodb: aws_sdk_dynamodb::Client::from_conf(
                aws_sdk_dynamodb::config::Builder::from(&sdk)
                    .interceptor(breaker("DynamoDB"))
                    .build(),
            ),
            sqs: aws_sdk_sqs::Client::from_conf(
                aws_sdk_sqs::config::Builder::from(&sdk)
                    .interceptor(breaker("SQS"))
                    .build(),
            ),
            s3: aws_sdk_s3::Client::from_conf(s3.build()),
        }
    }
}
