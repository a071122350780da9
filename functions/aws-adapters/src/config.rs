//! Clients from the standard AWS environment (`AWS_ENDPOINT_URL`, region,
//! credentials) and the resource names every function agrees on.

/// Resource names, from the environment the template sets (with the
/// defaults the emulator scripts use).
#[derive(Debug, Clone, PartialEq)]
pub struct Names {
    pub tasks_table: String,
    pub accounts_table: String,
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
}

impl Names {
    pub fn from_env() -> Names {
        let var = |k: &str, d: &str| std::env::var(k).unwrap_or_else(|_| d.to_string());
        Names {
            tasks_table: var("MARKETLAB_TASKS_TABLE", "marketlab-tasks"),
            accounts_table: var("MARKETLAB_ACCOUNTS_TABLE", "marketlab-accounts"),
            limits_table: var("MARKETLAB_LIMITS_TABLE", "marketlab-limits"),
            usage_table: var("MARKETLAB_USAGE_TABLE", "marketlab-usage"),
            queue_url: var("MARKETLAB_QUEUE_URL", ""),
            bucket: var("MARKETLAB_BUCKET", "marketlab-market-data"),
            webhooks_table: var("MARKETLAB_WEBHOOKS_TABLE", "marketlab-webhooks"),
            webhook_queue_url: var("MARKETLAB_WEBHOOK_QUEUE_URL", ""),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Clients {
    pub dynamodb: aws_sdk_dynamodb::Client,
    pub sqs: aws_sdk_sqs::Client,
    pub s3: aws_sdk_s3::Client,
}

impl Clients {
    /// Loads the shared configuration. An overridden endpoint (an emulator)
    /// gets path-style S3 addressing.
    pub async fn from_env() -> Clients {
        let sdk = aws_config::defaults(aws_config::BehaviorVersion::latest())
            .load()
            .await;
        let mut s3 = aws_sdk_s3::config::Builder::from(&sdk);
        if sdk.endpoint_url().is_some() {
            s3 = s3.force_path_style(true);
        }
        Clients {
            dynamodb: aws_sdk_dynamodb::Client::new(&sdk),
            sqs: aws_sdk_sqs::Client::new(&sdk),
            s3: aws_sdk_s3::Client::from_conf(s3.build()),
        }
    }
}
