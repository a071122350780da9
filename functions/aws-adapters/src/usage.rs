//! Usage counters in DynamoDB: one item per account and day (key `account`,
//! sort key `day`), each counter an attribute `c:<counter>` grown with an
//! atomic `ADD`, so concurrent Lambda instances never lose each other's counts.

use crate::sdk_error;
use async_trait::async_trait;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::AttributeValue;
use chrono::NaiveDate;
use platform::usage::{Count, DateSpan, UsageDay, UsageStore};
use platform::{PortError, PortResult};
use std::collections::BTreeMap;

/// Prefix of counter attributes (keeps them apart from the key attributes).
const PREFIX: &str = "c:";

pub struct DynamoUsageStore {
    client: Client,
    table: String,
}

impl DynamoUsageStore {
    pub fn new(client: Client, table: String) -> Self {
        DynamoUsageStore { client, table }
    }
}

#[async_trait]
impl UsageStore for DynamoUsageStore {
    async fn add(&self, counts: &[Count]) -> Result<(), PortError> {
        // One update per account and day, adding every counter of it.
        let mut items: BTreeMap<(&str, NaiveDate), Vec<(&str, u64)>> = BTreeMap::new();
        for c in counts {
            items
                .entry((c.account.as_str(), c.day))
                .or_default()
                .push((c.counter.as_str(), c.n));
        }
        for ((account, day), adds) in items {
            let mut update = self
                .client
                .update_item()
                .table_name(&self.table)
                .key("account", AttributeValue::S(account.into()))
                .key("day", AttributeValue::S(day.to_string()));
            let mut parts = Vec::with_capacity(adds.len());
            for (k, (counter, n)) in adds.into_iter().enumerate() {
                parts.push(format!("#c{k} :n{k}"));
                update = update
                    .expression_attribute_names(format!("#c{k}"), format!("{PREFIX}{counter}"))
                    .expression_attribute_values(
                        format!(":n{k}"),
                        AttributeValue::N(n.to_string()),
                    );
            }
            update
                .update_expression(format!("ADD {}", parts.join(", ")))
                .send()
                .await
                .map_err(|e| sdk_error("add usage", e))?;
        }
        Ok(())
    }

    async fn days(&self, account: &str, span: DateSpan) -> PortResult<Vec<UsageDay>> {
        let (from, to) = (*span.start(), *span.end());
        let mut out = Vec::new();
        let mut start = None;
        loop {
            let page = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("account = :a AND #d BETWEEN :f AND :t")
                .expression_attribute_names("#d", "day")
                .expression_attribute_values(":a", AttributeValue::S(account.into()))
                .expression_attribute_values(":f", AttributeValue::S(from.to_string()))
                .expression_attribute_values(":t", AttributeValue::S(to.to_string()))
                .consistent_read(true)
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| sdk_error("read usage", e))?;
            for item in page.items() {
                let day = item
                    .get("day")
                    .and_then(|d| d.as_s().ok())
                    .and_then(|d| d.parse().ok())
                    .ok_or_else(|| PortError::internal("usage item without a day"))?;
                let mut counters = BTreeMap::new();
                for (name, v) in item {
                    if let Some(counter) = name.strip_prefix(PREFIX) {
                        let n = v
                            .as_n()
                            .ok()
                            .and_then(|n| n.parse::<u64>().ok())
                            .ok_or_else(|| PortError::internal(format!("usage counter {name}")))?;
                        counters.insert(counter.to_string(), n);
                    }
                }
                out.push(UsageDay { day, counters });
            }
            start = page.last_evaluated_key().cloned();
            if start.is_none() {
                break;
            }
        }
        Ok(out)
    }
}
