//! Webhook endpoints, alerts and deliveries in one DynamoDB table (key
//! `account`, sort key `key`: `endpoint#<id>`, `alert#<id>`,
//! `delivery#<endpoint>#<id>`), and the webhook queue on SQS, one message
//! per scheduled attempt. Endpoints and alerts also carry `kind`, the key
//! of a sparse index the nightly scan reads all of them through.
//! Deliveries expire (TTL on `expires_at`) 30 days after their last write.

use crate::{query_all, sdk_error, written};
use async_trait::async_trait;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use platform::webhooks::{
    Alert, Delivery, DeliveryJob, Endpoint, EndpointChange, EventType, Outbox, WebhookStore,
};
use platform::{PortError, PortResult};
use std::collections::HashMap;
use std::time::Duration;

/// The sparse index of endpoints and alerts by `kind`.
pub const KIND_INDEX: &str = "by_kind";
/// Days a delivery is kept after its last write.
const DELIVERY_DAYS: i64 = 30;
/// Reads of an endpoint an update makes while other writes change it.
const UPDATE_TRIES: usize = 5;

#[derive(Clone)]
pub struct DynamoWebhooks {
    client: Client,
    table: String,
}

type Item = HashMap<String, AttributeValue>;

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn body<T: serde::de::DeserializeOwned>(item: &Item) -> PortResult<T> {
    let text = item
        .get("body")
        .and_then(|b| b.as_s().ok())
        .ok_or_else(|| PortError::internal("webhook item without a body"))?;
    serde_json::from_str(text).map_err(|e| PortError::fault("webhook item", e))
}

fn item<T: serde::Serialize>(account: &str, key: String, record: &T) -> PortResult<Item> {
    let text = serde_json::to_string(record).map_err(|e| PortError::fault("webhook record", e))?;
    Ok(HashMap::from([
        ("account".to_string(), s(account)),
        ("key".to_string(), s(key)),
        ("body".to_string(), s(text)),
    ]))
}

fn endpoint_key(id: &str) -> String {
    format!("endpoint#{id}")
}

fn alert_key(id: &str) -> String {
    format!("alert#{id}")
}

fn delivery_key(endpoint: &str, id: &str) -> String {
    format!("delivery#{endpoint}#{id}")
}

/// A delivery's item: its record, and when it expires.
fn delivery_item(d: &Delivery) -> PortResult<Item> {
    let mut it = item(&d.account, delivery_key(&d.endpoint, &d.id), d)?;
    let expires = chrono::Utc::now().timestamp() + DELIVERY_DAYS * 86_400;
    it.insert("expires_at".into(), AttributeValue::N(expires.to_string()));
    Ok(it)
}

impl DynamoWebhooks {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        DynamoWebhooks {
            client,
            table: table.into(),
        }
    }

    /// Every item of `account` whose key starts with `prefix`.
    async fn prefixed(&self, account: &str, prefix: &str) -> PortResult<Vec<Item>> {
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .key_condition_expression("account = :a AND begins_with(#k, :p)")
            .expression_attribute_names("#k", "key")
            .expression_attribute_values(":a", s(account))
            .expression_attribute_values(":p", s(prefix))
            .consistent_read(true);
        query_all(query, "read webhooks").await
    }

    /// Every endpoint or alert, across accounts, through the sparse index.
    async fn of_kind(&self, kind: &str) -> PortResult<Vec<Item>> {
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(KIND_INDEX)
            .key_condition_expression("kind = :k")
            .expression_attribute_values(":k", s(kind));
        query_all(query, "read webhooks").await
    }

    async fn put(&self, item: Item) -> PortResult<()> {
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .send()
            .await
            .map(|_| ())
            .map_err(|e| sdk_error("write webhooks", e))
    }

    async fn delete(&self, account: &str, key: String) -> PortResult<bool> {
        let old = self
            .client
            .delete_item()
            .table_name(&self.table)
            .key("account", s(account))
            .key("key", s(key))
            .return_values(ReturnValue::AllOld)
            .send()
            .await
            .map_err(|e| sdk_error("delete webhook item", e))?;
        Ok(old.attributes.is_some_and(|a| !a.is_empty()))
    }
}

#[async_trait]
impl WebhookStore for DynamoWebhooks {
    async fn put_endpoint(&self, e: &Endpoint) -> PortResult<()> {
        let mut it = item(&e.account, endpoint_key(&e.id), e)?;
        it.insert("kind".into(), s("endpoint"));
        self.put(it).await
    }

    async fn endpoints(&self, account: &str) -> PortResult<Vec<Endpoint>> {
        let mut all: Vec<Endpoint> = self
            .prefixed(account, "endpoint#")
            .await?
            .iter()
            .map(body)
            .collect::<PortResult<_>>()?;
        all.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(all)
    }

    async fn subscribed(&self, event: EventType) -> PortResult<Vec<Endpoint>> {
        let all: Vec<Endpoint> = self
            .of_kind("endpoint")
            .await?
            .iter()
            .map(body)
            .collect::<PortResult<_>>()?;
        Ok(all.into_iter().filter(|e| e.wants(event)).collect())
    }

    /// Read, changed and written back on the condition that the stored
    /// record is still the one read (optimistic: a concurrent write makes
    /// it read again, at most [`UPDATE_TRIES`] times).
    async fn update_endpoint(
        &self,
        account: &str,
        id: &str,
        change: EndpointChange,
    ) -> PortResult<Option<Endpoint>> {
        for _ in 0..UPDATE_TRIES {
            let got = self
                .client
                .get_item()
                .table_name(&self.table)
                .key("account", s(account))
                .key("key", s(endpoint_key(id)))
                .consistent_read(true)
                .send()
                .await
                .map_err(|e| sdk_error("read webhooks", e))?;
            let Some(old) = got.item else {
                return Ok(None);
            };
            let read = old.get("body").cloned();
            let mut e: Endpoint = body(&old)?;
            change(&mut e);
            let mut it = item(account, endpoint_key(id), &e)?;
            it.insert("kind".into(), s("endpoint"));
            let put = self
                .client
                .put_item()
                .table_name(&self.table)
                .set_item(Some(it))
                .condition_expression("#b = :read")
                .expression_attribute_names("#b", "body")
                .set_expression_attribute_values(
                    read.map(|r| HashMap::from([(":read".to_string(), r)])),
                )
                .send()
                .await;
            if written(put, "write webhooks")? {
                return Ok(Some(e));
            }
        }
        Err(PortError::unavailable(format!(
            "webhook endpoint '{id}' kept changing: not updated after {UPDATE_TRIES} tries"
        )))
    }

    /// The endpoint goes; its deliveries are unreachable (every read checks
    /// the endpoint first) and expire.
    async fn delete_endpoint(&self, account: &str, id: &str) -> PortResult<bool> {
        self.delete(account, endpoint_key(id)).await
    }

    async fn add_delivery(&self, d: &Delivery) -> PortResult<bool> {
        let put = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(delivery_item(d)?))
            .condition_expression("attribute_not_exists(#k)")
            .expression_attribute_names("#k", "key")
            .send()
            .await;
        written(put, "record a delivery")
    }

    async fn put_delivery(&self, d: &Delivery) -> PortResult<()> {
        self.put(delivery_item(d)?).await
    }

    async fn delivery(
        &self,
        account: &str,
        endpoint: &str,
        id: &str,
    ) -> PortResult<Option<Delivery>> {
        let got = self
            .client
            .get_item()
            .table_name(&self.table)
            .key("account", s(account))
            .key("key", s(delivery_key(endpoint, id)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| sdk_error("read a delivery", e))?;
        got.item.as_ref().map(body).transpose()
    }

    async fn deliveries(
        &self,
        account: &str,
        endpoint: &str,
        limit: usize,
    ) -> PortResult<Vec<Delivery>> {
        let mut all: Vec<Delivery> = self
            .prefixed(account, &format!("delivery#{endpoint}#"))
            .await?
            .iter()
            .map(body)
            .collect::<PortResult<_>>()?;
        all.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
        all.truncate(limit);
        Ok(all)
    }

    async fn put_alert(&self, a: &Alert) -> PortResult<()> {
        let mut it = item(&a.account, alert_key(&a.id), a)?;
        it.insert("kind".into(), s("alert"));
        self.put(it).await
    }

    async fn alerts(&self, account: &str) -> PortResult<Vec<Alert>> {
        let mut all: Vec<Alert> = self
            .prefixed(account, "alert#")
            .await?
            .iter()
            .map(body)
            .collect::<PortResult<_>>()?;
        all.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(all)
    }

    async fn delete_alert(&self, account: &str, id: &str) -> PortResult<bool> {
        self.delete(account, alert_key(id)).await
    }

    async fn all_alerts(&self) -> PortResult<Vec<Alert>> {
        self.of_kind("alert").await?.iter().map(body).collect()
    }
}

/// The webhook queue: one message per scheduled attempt. SQS delays a
/// message at most 15 minutes; a longer wait is taken in hops (the
/// delivery function sends a job that is not yet due back with the rest).
#[derive(Clone)]
pub struct SqsOutbox {
    client: aws_sdk_sqs::Client,
    queue_url: String,
}

/// The longest delay SQS gives a message.
pub const MAX_DELAY: Duration = Duration::from_secs(900);

impl SqsOutbox {
    pub fn new(client: aws_sdk_sqs::Client, queue_url: impl Into<String>) -> Self {
        SqsOutbox {
            client,
            queue_url: queue_url.into(),
        }
    }
}

#[async_trait]
impl Outbox for SqsOutbox {
    async fn schedule(&self, job: DeliveryJob, delay: Duration) -> PortResult<()> {
        let body = serde_json::to_string(&job).map_err(PortError::internal)?;
        self.client
            .send_message()
            .queue_url(&self.queue_url)
            .message_body(body)
            .delay_seconds(delay.min(MAX_DELAY).as_secs() as i32)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| PortError::unavailable_by("send to the webhook queue", e))
    }
}
