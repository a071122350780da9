//! Failed-login counts on DynamoDB, shared by every instance of every
//! function: one item per key (`key`, `count`, `last_ms`), expired by
//! DynamoDB TTL on `expires_at` once the counting window has passed.

use crate::keyed::{KeyedTable, n, number};
use crate::{conditional, sdk_error};
use async_trait::async_trait;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use platform::accounts::{FailureLog, Failures};
use platform::{PortError, PortResult};
use std::collections::HashMap;
use std::time::Duration;

pub struct DynamoFailureLog {
    table: KeyedTable,
}

impl DynamoFailureLog {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        DynamoFailureLog {
            table: KeyedTable::new(client, table),
        }
    }
}

fn failures(item: &HashMap<String, AttributeValue>) -> Option<Failures> {
    Some(Failures {
        count: u32::try_from(number(item, "count")?).ok()?,
        last_ms: number(item, "last_ms")?,
    })
}

fn window_ms(w: Duration) -> i64 {
    i64::try_from(w.as_millis()).unwrap_or(i64::MAX)
}

/// Epoch seconds when an item stops mattering (DynamoDB TTL).
fn expires(now_ms: i64, window: Duration) -> i64 {
    now_ms.saturating_add(window_ms(window)) / 1000 + 1
}

#[async_trait]
impl FailureLog for DynamoFailureLog {
    async fn get(&self, key: &str, now_ms: i64, window: Duration) -> PortResult<Option<Failures>> {
        let item = self.table.get(key, "read login failures").await?;
        Ok(item
            .as_ref()
            .and_then(failures)
            .filter(|f| f.within(now_ms, window)))
    }

    async fn record(&self, key: &str, now_ms: i64, window: Duration) -> PortResult<Failures> {
        // Count on within the window; otherwise (or for a new key) start at 1.
        // Both writes are conditional, so concurrent failures all count.
        let cutoff = n(now_ms - window_ms(window));
        for _ in 0..5 {
            let counted = self
                .table
                .update(key)
                .update_expression("SET #count = #count + :one, last_ms = :now, expires_at = :exp")
                .condition_expression("attribute_exists(#count) AND last_ms > :cutoff")
                .expression_attribute_names("#count", "count")
                .expression_attribute_values(":one", n(1))
                .expression_attribute_values(":now", n(now_ms))
                .expression_attribute_values(":exp", n(expires(now_ms, window)))
                .expression_attribute_values(":cutoff", cutoff.clone())
                .return_values(ReturnValue::AllNew)
                .send()
                .await;
            match counted {
                Ok(out) => {
                    return out
                        .attributes()
                        .and_then(failures)
                        .ok_or_else(|| PortError::internal("login failure item without a count"));
                }
                Err(e) if !conditional(&e) => return Err(sdk_error("record a login failure", e)),
                Err(_) => {}
            }
            let started = self
                .table
                .put(key)
                .item("count", n(1))
                .item("last_ms", n(now_ms))
                .item("expires_at", n(expires(now_ms, window)))
                .condition_expression("attribute_not_exists(#count) OR last_ms <= :cutoff")
                .expression_attribute_names("#count", "count")
                .expression_attribute_values(":cutoff", cutoff.clone())
                .send()
                .await;
            match started {
                Ok(_) => {
                    return Ok(Failures {
                        count: 1,
                        last_ms: now_ms,
                    });
                }
                Err(e) if !conditional(&e) => return Err(sdk_error("record a login failure", e)),
                Err(_) => {}
            }
        }
        Err(PortError::unavailable(
            "login failure count stayed contended; retry",
        ))
    }

    async fn clear(&self, key: &str) -> Result<(), PortError> {
        self.table
            .delete(key)
            .send()
            .await
            .map_err(|e| sdk_error("clear login failures", e))?;
        Ok(())
    }
}
