//! Creates the resources of infra/template.yaml on an emulator (or an empty
//! account): the same table keys, index, queue with dead-letter redrive, and
//! bucket. Idempotent: existing resources are kept.

use crate::config::Clients;
use crate::tasks::OWNER_INDEX;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection,
    ProjectionType, ScalarAttributeType,
};
use aws_sdk_sqs::types::QueueAttributeName;
use platform::PortError;

fn attr(name: &str) -> Result<AttributeDefinition, PortError> {
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(ScalarAttributeType::S)
        .build()
        .map_err(PortError::internal)
}

fn key(name: &str, kind: KeyType) -> Result<KeySchemaElement, PortError> {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(kind)
        .build()
        .map_err(PortError::internal)
}

fn exists<E: std::fmt::Debug>(e: &aws_sdk_dynamodb::error::SdkError<E>) -> bool {
    format!("{e:?}").contains("ResourceInUseException")
        || format!("{e:?}").contains("already exists")
}

/// A table creation's outcome: made now or already there is fine.
fn created<T, E: std::error::Error + Send + Sync + 'static>(
    table: &str,
    r: Result<T, aws_sdk_dynamodb::error::SdkError<E>>,
) -> Result<(), PortError> {
    match r {
        Ok(_) => Ok(()),
        Err(e) if exists(&e) => Ok(()),
        Err(e) => Err(PortError::unavailable_by(
            format!("create table {table}"),
            e,
        )),
    }
}

/// A table keyed by `id` with one index on `hash` + `created`.
async fn id_table_with_index(
    c: &Clients,
    table: &str,
    index: &str,
    hash: &str,
    projection: Projection,
) -> Result<(), PortError> {
    let gsi = GlobalSecondaryIndex::builder()
        .index_name(index)
        .key_schema(key(hash, KeyType::Hash)?)
        .key_schema(key("created", KeyType::Range)?)
        .projection(projection)
        .build()
        .map_err(PortError::internal)?;
    let r = c
        .dynamodb
        .create_table()
        .table_name(table)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(attr("id")?)
        .attribute_definitions(attr(hash)?)
        .attribute_definitions(attr("created")?)
        .key_schema(key("id", KeyType::Hash)?)
        .global_secondary_indexes(gsi)
        .send()
        .await;
    created(table, r)
}

/// The tasks table (key `id`, GSI `by_owner` on owner + created, projecting kind and status).
pub async fn tasks_table(c: &Clients, table: &str) -> Result<(), PortError> {
    // Listing counts and pages over the index alone; page items are read whole.
    let projection = Projection::builder()
        .projection_type(ProjectionType::Include)
        .non_key_attributes("kind")
        .non_key_attributes("status")
        .build();
    id_table_with_index(c, table, OWNER_INDEX, "owner", projection).await
}

/// The API keys table (key `id`; index `by_account` on account + created).
pub async fn keys_table(c: &Clients, table: &str) -> Result<(), PortError> {
    let projection = Projection::builder()
        .projection_type(ProjectionType::All)
        .build();
    id_table_with_index(c, table, crate::ACCOUNT_INDEX, "account", projection).await
}

/// The accounts table (key `email`).
pub async fn accounts_table(c: &Clients, table: &str) -> Result<(), PortError> {
    keyed_table(c, table, "email").await
}

/// The limits table (key `key`; items expire through TTL on `expires_at`).
pub async fn limits_table(c: &Clients, table: &str) -> Result<(), PortError> {
    keyed_table(c, table, "key").await
}

/// The usage table (key `account`, sort key `day`: one item per account and day).
pub async fn usage_table(c: &Clients, table: &str) -> Result<(), PortError> {
    let r = c
        .dynamodb
        .create_table()
        .table_name(table)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(attr("account")?)
        .attribute_definitions(attr("day")?)
        .key_schema(key("account", KeyType::Hash)?)
        .key_schema(key("day", KeyType::Range)?)
        .send()
        .await;
    created(table, r)
}

/// The webhooks table (key `account`, sort key `key`; the sparse index
/// `by_kind` on `kind` + `key` holds endpoints and alerts only).
pub async fn webhooks_table(c: &Clients, table: &str) -> Result<(), PortError> {
    let gsi = GlobalSecondaryIndex::builder()
        .index_name(crate::KIND_INDEX)
        .key_schema(key("kind", KeyType::Hash)?)
        .key_schema(key("key", KeyType::Range)?)
        .projection(
            Projection::builder()
                .projection_type(ProjectionType::All)
                .build(),
        )
        .build()
        .map_err(PortError::internal)?;
    let r = c
        .dynamodb
        .create_table()
        .table_name(table)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(attr("account")?)
        .attribute_definitions(attr("key")?)
        .attribute_definitions(attr("kind")?)
        .key_schema(key("account", KeyType::Hash)?)
        .key_schema(key("key", KeyType::Range)?)
        .global_secondary_indexes(gsi)
        .send()
        .await;
    created(table, r)
}

/// The webhook queue's visibility timeout as deployed: six times the
/// delivery function's 30 s timeout.
pub const WEBHOOK_VISIBILITY_SECONDS: u32 = 180;

/// An on-demand table with one string hash key.
async fn keyed_table(c: &Clients, table: &str, hash_key: &str) -> Result<(), PortError> {
    let r = c
        .dynamodb
        .create_table()
        .table_name(table)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(attr(hash_key)?)
        .key_schema(key(hash_key, KeyType::Hash)?)
        .send()
        .await;
    created(table, r)
}

/// The job queue's visibility timeout as deployed: six times the worker
/// function's 120 s timeout (infra/template.yaml, docs/deploy.md#recovery).
pub const VISIBILITY_SECONDS: u32 = 720;

/// Deliveries before a message goes to the dead-letter queue: more than a
/// task's three attempts, so the delivery after a worker died on the last
/// one still comes and fails the task.
pub const MAX_RECEIVES: u32 = 5;

/// How long a dead-letter queue keeps a message: SQS's longest, 14 days, as
/// the template's (infra/template.yaml), for an operator to read and redrive.
pub const DEAD_LETTER_RETENTION_SECONDS: u32 = 1_209_600;

/// The job queue and its dead-letter queue (after `max_receives` deliveries,
/// kept [`DEAD_LETTER_RETENTION_SECONDS`]); returns the job queue's URL.
pub async fn queue(
    c: &Clients,
    name: &str,
    max_receives: u32,
    visibility_seconds: u32,
) -> Result<String, PortError> {
    let dlq = c
        .sqs
        .create_queue()
        .queue_name(format!("{name}-dlq"))
        .attributes(
            QueueAttributeName::MessageRetentionPeriod,
            DEAD_LETTER_RETENTION_SECONDS.to_string(),
        )
        .send()
        .await
        .map_err(|e| PortError::unavailable_by(format!("create queue {name}-dlq"), e))?;
    let dlq_url = dlq.queue_url().unwrap_or_default().to_string();
    let arn = c
        .sqs
        .get_queue_attributes()
        .queue_url(&dlq_url)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .map_err(|e| PortError::unavailable_by("dead-letter queue arn", e))?
        .attributes()
        .and_then(|a| a.get(&QueueAttributeName::QueueArn).cloned())
        .unwrap_or_default();
    let redrive =
        format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":"{max_receives}"}}"#);
    let q = c
        .sqs
        .create_queue()
        .queue_name(name)
        .attributes(QueueAttributeName::RedrivePolicy, redrive)
        .attributes(
            QueueAttributeName::VisibilityTimeout,
            visibility_seconds.to_string(),
        )
        .send()
        .await
        .map_err(|e| PortError::unavailable_by(format!("create queue {name}"), e))?;
    Ok(q.queue_url().unwrap_or_default().to_string())
}

/// The market data bucket.
pub async fn bucket(c: &Clients, name: &str) -> Result<(), PortError> {
    match c.s3.create_bucket().bucket(name).send().await {
        Ok(_) => Ok(()),
        Err(e) if format!("{e:?}").contains("BucketAlready") => Ok(()),
        Err(e) => Err(PortError::unavailable_by(
            format!("create bucket {name}"),
            e,
        )),
    }
}

/// Sends the bucket's "object created" events for batch files
/// (`batches/...jsonl`) to the job queue, where the worker sweeps the inbox,
/// and, given an ingest queue, those under `incoming/` to it, where the
/// ingest function imports them: the template's `NotificationConfiguration`.
/// Each queue's policy must let S3 send to it (the template's queue
/// policies do).
pub async fn bucket_notifications(
    c: &Clients,
    bucket: &str,
    queue_url: &str,
    ingest_queue_url: Option<&str>,
) -> Result<(), PortError> {
    use aws_sdk_s3::types::{
        Event, FilterRule, FilterRuleName, NotificationConfiguration,
        NotificationConfigurationFilter, QueueConfiguration, S3KeyFilter,
    };
    let arn_of = |url: String| async move {
        c.sqs
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(QueueAttributeName::QueueArn)
            .send()
            .await
            .map_err(|e| PortError::unavailable_by("queue arn", e))
            .map(|a| {
                a.attributes()
                    .and_then(|a| a.get(&QueueAttributeName::QueueArn).cloned())
                    .unwrap_or_default()
            })
    };
    let rule =
        |name: FilterRuleName, value: &str| FilterRule::builder().name(name).value(value).build();
    let to = |arn: String, rules: Vec<FilterRule>| {
        QueueConfiguration::builder()
            .queue_arn(arn)
            .events(Event::S3ObjectCreated)
            .filter(
                NotificationConfigurationFilter::builder()
                    .key(S3KeyFilter::builder().set_filter_rules(Some(rules)).build())
                    .build(),
            )
            .build()
            .map_err(|e| PortError::Invalid(format!("notification: {e}")))
    };
    let mut queues = vec![to(
        arn_of(queue_url.to_string()).await?,
        vec![
            rule(FilterRuleName::Prefix, "batches/"),
            rule(FilterRuleName::Suffix, ".jsonl"),
        ],
    )?];
    if let Some(url) = ingest_queue_url {
        queues.push(to(
            arn_of(url.to_string()).await?,
            vec![rule(FilterRuleName::Prefix, "incoming/")],
        )?);
    }
    c.s3.put_bucket_notification_configuration()
        .bucket(bucket)
        .notification_configuration(
            NotificationConfiguration::builder()
                .set_queue_configurations(Some(queues))
                .build(),
        )
        .send()
        .await
        .map_err(|e| PortError::unavailable_by("bucket notification", e))?;
    Ok(())
}
