//! Plan limits and their counters in the limits table (key `key`), shared
//! by every instance of every function:
//! - a window's request counter, `rate#…`: `n` grown by a conditional `ADD`
//!   that never passes the limit, expired by TTL on `expires_at`;
//! - an account's month of task compute, `compute#…`: reservations set `n`
//!   under a condition that it is below the limit, settlements `ADD` to it;
//! - an account's running-task slots, `slots#…`: a map of holder to lease
//!   end, replaced under a version check (optimistic concurrency);
//! - a plan's limits set by an operator, `plan#<code>`: the JSON in `limits`.

use crate::keyed::{KeyedTable, n, number};
use crate::{conditional, sdk_error};
use async_trait::async_trait;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::AttributeValue;
use platform::quota::{Hold, PlanLimits, QuotaStore, Reservation};
use platform::{PortError, PortResult};
use std::collections::HashMap;

pub struct DynamoQuotaStore {
    table: KeyedTable,
}

impl DynamoQuotaStore {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        DynamoQuotaStore {
            table: KeyedTable::new(client, table),
        }
    }

    /// Adds `k` to the counter if it stays within `limit`; false when it would not.
    async fn add(&self, key: &str, k: u32, limit: u64, expires_s: i64) -> Result<bool, PortError> {
        let r = self
            .table
            .update(key)
            .update_expression("ADD n :k SET expires_at = :exp")
            .condition_expression("attribute_not_exists(n) OR n <= :room")
            .expression_attribute_values(":k", n(k))
            .expression_attribute_values(":room", n(limit - u64::from(k)))
            .expression_attribute_values(":exp", n(expires_s))
            .send()
            .await;
        crate::written(r, "count a request")
    }
}

/// Optimistic writes of a slot map give up after this many conflicts.
const HOLD_TRIES: usize = 20;

#[async_trait]
impl QuotaStore for DynamoQuotaStore {
    async fn take(
        &self,
        key: &str,
        want: u32,
        limit: u64,
        expires_s: i64,
    ) -> Result<u32, PortError> {
        let want = u64::from(want).min(limit) as u32;
        if want == 0 {
            return Ok(0);
        }
        if self.add(key, want, limit, expires_s).await? {
            return Ok(want);
        }
        // Not a whole block left: take the last ones one at a time.
        if want > 1 && self.add(key, 1, limit, expires_s).await? {
            return Ok(1);
        }
        Ok(0)
    }

    async fn hold(&self, key: &str, limit: u32, hold: Hold<'_>) -> PortResult<bool> {
        let (holder, now_ms, until_ms) = (hold.holder, hold.now_ms, hold.until_ms);
        for attempt in 0..HOLD_TRIES {
            let item = self.table.get(key, "read task slots").await?;
            let version = item
                .as_ref()
                .and_then(|i| i.get("v"))
                .and_then(|v| v.as_n().ok())
                .and_then(|v| v.parse::<u64>().ok());
            let mut live: HashMap<String, AttributeValue> = item
                .as_ref()
                .and_then(|i| i.get("h"))
                .and_then(|h| h.as_m().ok())
                .map(|m| {
                    m.iter()
                        .filter(|(_, until)| {
                            until
                                .as_n()
                                .ok()
                                .and_then(|u| u.parse::<i64>().ok())
                                .is_some_and(|u| u > now_ms)
                        })
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                })
                .unwrap_or_default();
            if !live.contains_key(holder) && live.len() >= limit as usize {
                return Ok(false);
            }
            live.insert(holder.to_string(), n(until_ms));
            let put = self
                .table
                .put(key)
                .item("h", AttributeValue::M(live))
                .item("v", n(version.unwrap_or(0) + 1));
            let put = match version {
                Some(v) => put
                    .condition_expression("v = :v")
                    .expression_attribute_values(":v", n(v)),
                None => put.condition_expression("attribute_not_exists(v)"),
            };
            match put.send().await {
                Ok(_) => return Ok(true),
                Err(e) if conditional(&e) => {
                    // Another instance changed the slots: read them again.
                    let pause = 5 + (attempt as u64 * 7) % 20;
                    tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
                }
                Err(e) => return Err(sdk_error("hold a task slot", e)),
            }
        }
        Err(PortError::unavailable("task slots stayed contended"))
    }

    async fn release(&self, key: &str, holder: &str) -> Result<(), PortError> {
        // The version moves too, so a hold computed from the old map fails.
        let r = self
            .table
            .update(key)
            .update_expression("REMOVE h.#holder ADD v :one")
            .condition_expression("attribute_exists(h)")
            .expression_attribute_names("#holder", holder)
            .expression_attribute_values(":one", n(1))
            .send()
            .await;
        crate::written(r, "release a task slot").map(|_| ())
    }

    async fn reserve(&self, key: &str, r: Reservation) -> PortResult<bool> {
        let (k, limit, start, expires_s) = (r.n, r.limit, r.start, r.expires_s);
        // An absent counter starts at `start`: reserved only if that is below the limit.
        let condition = if start < limit {
            "attribute_not_exists(n) OR n < :limit"
        } else {
            "n < :limit"
        };
        let r = self
            .table
            .update(key)
            .update_expression("SET n = if_not_exists(n, :start) + :k, expires_at = :exp")
            .condition_expression(condition)
            .expression_attribute_values(":k", n(k))
            .expression_attribute_values(":start", n(start))
            .expression_attribute_values(":limit", n(limit))
            .expression_attribute_values(":exp", n(expires_s))
            .send()
            .await;
        crate::written(r, "reserve compute")
    }

    async fn adjust(&self, key: &str, delta: i64, expires_s: i64) -> Result<(), PortError> {
        self.table
            .update(key)
            .update_expression("ADD n :d SET expires_at = :exp")
            .expression_attribute_values(":d", n(delta))
            .expression_attribute_values(":exp", n(expires_s))
            .send()
            .await
            .map_err(|e| sdk_error("settle compute", e))?;
        Ok(())
    }

    async fn count(&self, key: &str) -> Result<Option<i64>, PortError> {
        let item = self.table.get(key, "read a counter").await?;
        Ok(item.and_then(|i| number(&i, "n")))
    }

    async fn plan_limits(&self, plan: &str) -> Result<Option<PlanLimits>, PortError> {
        let item = self
            .table
            .get(&format!("plan#{plan}"), "read plan limits")
            .await?;
        item.and_then(|i| i.get("limits").and_then(|l| l.as_s().ok()).cloned())
            .map(|text| serde_json::from_str(&text).map_err(PortError::internal))
            .transpose()
    }

    async fn set_plan_limits(&self, plan: &str, limits: PlanLimits) -> Result<(), PortError> {
        let text = serde_json::to_string(&limits).map_err(PortError::internal)?;
        self.table
            .put(&format!("plan#{plan}"))
            .item("limits", AttributeValue::S(text))
            .send()
            .await
            .map_err(|e| sdk_error("set plan limits", e))?;
        Ok(())
    }
}
