//! How an attempt's outcome is written: alone, or with the counts of it
//! to other tasks in one transaction.

use super::item::{ENDS_KEPT, Item, corrupt, ends_item_id, n, s, time};
use super::{DynamoTaskStore, RUNNING_ATTEMPT};
use crate::{canceled_by_condition, conditional, sdk_error};
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue, TransactWriteItem, Update};
use platform::PortError;
use platform::PortResult;
use platform::tasks::{Finished, Outcome};
use std::collections::HashMap;
use uuid::Uuid;

impl DynamoTaskStore {
    /// Writes an attempt's outcome: the item as it now stands, with a
    /// result inline (the value just written, not read back from S3), or
    /// `None` when the task is no longer the attempt's. With `others`, the
    /// outcome is counted to them in the same transaction
    /// ([`TaskStore::count_end`]), and the item read back after it.
    pub(super) async fn write_outcome(
        &self,
        id: Uuid,
        done: Finished,
        others: &[Uuid],
    ) -> PortResult<Option<Item>> {
        let (attempt, outcome, now) = (done.attempt, done.outcome, done.at);
        let (status, mut field, mut value) = match outcome {
            Outcome::Success(v) => ("SUCCESS", "result", v.to_string()),
            Outcome::Failed(m) => ("FAILED", "error", m),
        };
        let mut inline = None;
        if field == "result"
            && let ("ref", key) = self.store_json(id, "result", value.clone()).await?
        {
            inline = Some(std::mem::replace(&mut value, key));
            field = "result_ref";
        }
        // Finished when the outcome is written, which is after a large
        // result's upload.
        let now = now.max(platform::tasks::now());
        let expression = if self.ttl.is_some() {
            "SET #status = :status, #field = :value, finished_at = :now, expires_at = :expires REMOVE lease_until, progress"
        } else {
            "SET #status = :status, #field = :value, finished_at = :now REMOVE lease_until, progress"
        };
        let mut values = Item::new();
        values.insert(":status".into(), s(status));
        values.insert(":value".into(), s(value));
        values.insert(":now".into(), s(time(now)));
        values.insert(":running".into(), s("RUNNING"));
        values.insert(":attempt".into(), n(attempt));
        if let Some(t) = self.ttl {
            values.insert(":expires".into(), n((now + t).and_utc().timestamp()));
        }
        let names = HashMap::from([
            ("#status".to_string(), "status".to_string()),
            ("#field".to_string(), field.to_string()),
        ]);
        let mut item = if others.is_empty() {
            let out = self
                .client
                .update_item()
                .table_name(&self.table)
                .key("id", s(id.to_string()))
                .update_expression(expression)
                .condition_expression(RUNNING_ATTEMPT)
                .set_expression_attribute_names(Some(names))
                .set_expression_attribute_values(Some(values))
                .return_values(ReturnValue::AllNew)
                .send()
                .await;
            match out {
                Ok(o) => o
                    .attributes
                    .ok_or_else(|| corrupt("no attributes returned"))?,
                Err(e) if conditional(&e) => return Ok(None),
                Err(e) => return Err(sdk_error("finish task", e)),
            }
        } else {
            let build = |e: aws_sdk_dynamodb::error::BuildError| {
                PortError::internal(format!("finish task: {e}"))
            };
            let mut items = vec![
                TransactWriteItem::builder()
                    .update(
                        Update::builder()
                            .table_name(&self.table)
                            .key("id", s(id.to_string()))
                            .update_expression(expression)
                            .condition_expression(RUNNING_ATTEMPT)
                            .set_expression_attribute_names(Some(names))
                            .set_expression_attribute_values(Some(values))
                            .build()
                            .map_err(build)?,
                    )
                    .build(),
            ];
            for &to in others {
                items.push(
                    TransactWriteItem::builder()
                        .update(self.count_update(to, id).build().map_err(build)?)
                        .build(),
                );
            }
            let out = self
                .client
                .transact_write_items()
                .set_transact_items(Some(items))
                .send()
                .await;
            match out {
                Ok(_) => {}
                Err(e) if canceled_by_condition(&e) => return Ok(None),
                Err(e) => return Err(sdk_error("finish task", e)),
            }
            self.client
                .get_item()
                .table_name(&self.table)
                .key("id", s(id.to_string()))
                .consistent_read(true)
                .send()
                .await
                .map_err(|e| sdk_error("read a finished task", e))?
                .item
                .ok_or_else(|| corrupt("a finished task is gone"))?
        };
        if let Some(text) = inline {
            item.remove("result_ref");
            item.insert("result".into(), s(text));
        }
        Ok(Some(item))
    }

    /// The update that counts `child`'s outcome to `id`: a set, so adding
    /// a child again (a retried request) adds nothing.
    pub(super) fn count_update(
        &self,
        id: Uuid,
        child: Uuid,
    ) -> aws_sdk_dynamodb::types::builders::UpdateBuilder {
        let expires = (platform::tasks::now() + ENDS_KEPT).and_utc().timestamp();
        Update::builder()
            .table_name(&self.table)
            .key("id", s(ends_item_id(id)))
            .update_expression("ADD children :child SET expires_at = :expires")
            .expression_attribute_values(":child", AttributeValue::Ss(vec![child.to_string()]))
            .expression_attribute_values(":expires", n(expires))
    }
}
