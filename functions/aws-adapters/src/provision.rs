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

/// The job queue's visibility timeout as deployed (infra/template.yaml):
/// short, because whoever holds a message extends it while its job reports
/// (docs/deploy.md#recovery); a message whose receiver is gone comes back
/// within it.
pub const VISIBILITY_SECONDS: u32 = 30;

/// Deliveries before a message goes to the dead-letter queue: more than a
/// task's three attempts, so the delivery after a worker died on the last
/// one still comes and fails the task.
pub const MAX_RECEIVES: u32 = 5;

/// How long a dead-letter queue keeps a message: SQS's longest, 14 days, as
/// the template's (infra/template.yaml), for an operator to read and redrive.
pub const DEAD_LETTER_RETENTION_SECONDS: u32 = 1_209_600;

/// A queue's ARN, which redrive policies and bucket notifications name.
async fn queue_arn(c: &Clients, url: &str) -> Result<String, PortError> {
    Ok(c.sqs
        .get_queue_attributes()
        .queue_url(url)
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .map_err(|e| PortError::unavailable_by("queue arn", e))?
        .attributes()
        .and_then(|a| a.get(&QueueAttributeName::QueueArn).cloned())
        .unwrap_or_default())
}

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
    let arn = queue_arn(c, &dlq_url).await?;
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

/// The ingest queue's visibility timeout as deployed: six times the ingest
/// function's 900 s timeout (infra/template.yaml's `IngestQueue`).
pub const INGEST_VISIBILITY_SECONDS: u32 = 5400;

/// Deliveries of an ingest event before its dead-letter queue: an import
/// that kept failing on a dependency (a refused file is not a failure).
pub const INGEST_MAX_RECEIVES: u32 = 3;

/// The ingest queue, where the bucket's events under `incoming/` go, and its
/// dead-letter queue, as the template's `IngestQueue`; returns its URL.
pub async fn ingest_queue(c: &Clients, name: &str) -> Result<String, PortError> {
    queue(c, name, INGEST_MAX_RECEIVES, INGEST_VISIBILITY_SECONDS).await
}

/// Sends the bucket's "object created" events for batch files
/// (`batches/...jsonl`) to the job queue, where the worker sweeps the inbox,
/// and, given an ingest queue, those under `incoming/` to it, where the
/// ingest function imports them: the template's `NotificationConfiguration`.
/// Each queue's policy must let S3 send to it (the template's queue
/// policies do). S3 answers a configuration set with a test event on each
/// queue (`s3:TestEvent`).
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
        queue_arn(c, queue_url).await?,
        vec![
            rule(FilterRuleName::Prefix, "batches/"),
            rule(FilterRuleName::Suffix, ".jsonl"),
        ],
    )?];
    if let Some(url) = ingest_queue_url {
        queues.push(to(
            queue_arn(c, url).await?,
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

/// [`bucket_notifications`] for provisioning a stack that runs the poller
/// (the local stack): a bucket already sending just these is left alone,
/// and after a configuration is set, S3's test events are removed from the
/// queues ([`drop_test_events`]), since the poller would take the job
/// queue's for a message that is not a job. Answers whether it set one.
pub async fn bucket_notifications_once(
    c: &Clients,
    bucket: &str,
    queue_url: &str,
    ingest_queue_url: Option<&str>,
) -> Result<bool, PortError> {
    let created = || vec!["s3:ObjectCreated:*".to_string()];
    let rule = |name: &str, value: &str| (name.to_string(), value.to_string());
    let mut wanted: Vec<Route> = vec![(
        queue_arn(c, queue_url).await?,
        created(),
        vec![rule("prefix", "batches/"), rule("suffix", ".jsonl")],
    )];
    if let Some(url) = ingest_queue_url {
        wanted.push((
            queue_arn(c, url).await?,
            created(),
            vec![rule("prefix", "incoming/")],
        ));
    }
    wanted.sort();
    // What the bucket sends now; unknown (moto answers a bucket that has no
    // notifications in a form the SDK does not read) is set again.
    let now =
        c.s3.get_bucket_notification_configuration()
            .bucket(bucket)
            .send()
            .await;
    if now.is_ok_and(|now| routes(now.queue_configurations()) == wanted) {
        return Ok(false);
    }
    bucket_notifications(c, bucket, queue_url, ingest_queue_url).await?;
    for url in std::iter::once(queue_url).chain(ingest_queue_url) {
        drop_test_events(c, url).await?;
    }
    Ok(true)
}

/// Where a notification sends: a queue's ARN, the events and the key filter
/// rules (name in lower case, as S3 answers them; value).
type Route = (String, Vec<String>, Vec<(String, String)>);

/// What a notification configuration sends where, in a fixed order.
fn routes(queues: &[aws_sdk_s3::types::QueueConfiguration]) -> Vec<Route> {
    let mut all: Vec<_> = queues
        .iter()
        .map(|q| {
            let mut events: Vec<String> =
                q.events().iter().map(|e| e.as_str().to_string()).collect();
            events.sort();
            let mut rules: Vec<(String, String)> = q
                .filter()
                .and_then(|f| f.key())
                .map(|k| k.filter_rules())
                .unwrap_or_default()
                .iter()
                .map(|r| {
                    (
                        r.name()
                            .map(|n| n.as_str().to_lowercase())
                            .unwrap_or_default(),
                        r.value().unwrap_or_default().to_string(),
                    )
                })
                .collect();
            rules.sort();
            (q.queue_arn().to_string(), events, rules)
        })
        .collect();
    all.sort();
    all
}

/// Removes S3's test event (`"Event": "s3:TestEvent"`, sent to each queue
/// when a bucket's notifications are set) from a queue just configured:
/// nothing is left for a worker to sweep the batch inbox for, or to count
/// as a receive. Messages are received with no
/// visibility timeout, so any other is visible again at once; rounds go on
/// while they find a test event. Answers how many were removed.
pub async fn drop_test_events(c: &Clients, queue_url: &str) -> Result<usize, PortError> {
    let mut removed = 0;
    for _ in 0..3 {
        let got = c
            .sqs
            .receive_message()
            .queue_url(queue_url)
            .max_number_of_messages(10)
            .visibility_timeout(0)
            .wait_time_seconds(0)
            .send()
            .await
            .map_err(|e| PortError::unavailable_by("receive S3's test event", e))?;
        let tests: Vec<&str> = got
            .messages()
            .iter()
            .filter(|m| crate::is_s3_test_event(m.body().unwrap_or_default()))
            .filter_map(|m| m.receipt_handle())
            .collect();
        if tests.is_empty() {
            break;
        }
        for handle in tests {
            c.sqs
                .delete_message()
                .queue_url(queue_url)
                .receipt_handle(handle)
                .send()
                .await
                .map_err(|e| PortError::unavailable_by("delete S3's test event", e))?;
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    /// The ingest queue as provisioned is the template's `IngestQueue`.
    #[test]
    fn the_ingest_queue_is_the_template_s() {
        let template = include_str!("../../../infra/template.yaml");
        let start = template.find("\n  IngestQueue:\n").expect("IngestQueue");
        let end = start
            + template[start..]
                .find("\n  IngestDeadLetterQueue:")
                .expect("the resource after it");
        let resource = &template[start..end];
        assert!(
            resource.contains(&format!(
                "VisibilityTimeout: {}\n",
                super::INGEST_VISIBILITY_SECONDS
            )),
            "{resource}"
        );
        assert!(
            resource.contains(&format!(
                "maxReceiveCount: {}\n",
                super::INGEST_MAX_RECEIVES
            )),
            "{resource}"
        );
    }

    #[test]
    fn s3_s_test_event_is_told_from_other_messages() {
        assert!(crate::is_s3_test_event(
            r#"{"Service":"Amazon S3","Event":"s3:TestEvent","Time":"2026-01-01T00:00:00.000Z","Bucket":"b"}"#
        ));
        assert!(!crate::is_s3_test_event(
            r#"{"Records":[{"eventName":"ObjectCreated:Put","s3":{"object":{"key":"batches/a.jsonl"}}}]}"#
        ));
        assert!(!crate::is_s3_test_event("not a job"));
    }
}
