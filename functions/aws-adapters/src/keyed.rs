//! A DynamoDB table whose items are addressed by one string attribute,
//! `key`: the limits table (rate counters, compute, task slots, plan limits,
//! login failures) is read and written only through this.

use crate::sdk_error;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::operation::delete_item::builders::DeleteItemFluentBuilder;
use aws_sdk_dynamodb::operation::put_item::builders::PutItemFluentBuilder;
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use aws_sdk_dynamodb::types::AttributeValue;
use platform::PortError;
use std::collections::HashMap;

pub(crate) type Item = HashMap<String, AttributeValue>;

pub(crate) struct KeyedTable {
    client: Client,
    table: String,
}

impl KeyedTable {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        KeyedTable {
            client,
            table: table.into(),
        }
    }

    /// The item under `key`, read consistently; `what` names the read in errors.
    pub async fn get(&self, key: &str, what: &str) -> Result<Option<Item>, PortError> {
        Ok(self
            .client
            .get_item()
            .table_name(&self.table)
            .key("key", AttributeValue::S(key.into()))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| sdk_error(what, e))?
            .item)
    }

    pub fn update(&self, key: &str) -> UpdateItemFluentBuilder {
        self.client
            .update_item()
            .table_name(&self.table)
            .key("key", AttributeValue::S(key.into()))
    }

    pub fn put(&self, key: &str) -> PutItemFluentBuilder {
        self.client
            .put_item()
            .table_name(&self.table)
            .item("key", AttributeValue::S(key.into()))
    }

    pub fn delete(&self, key: &str) -> DeleteItemFluentBuilder {
        self.client
            .delete_item()
            .table_name(&self.table)
            .key("key", AttributeValue::S(key.into()))
    }
}

/// A number attribute.
pub(crate) fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// An item's number attribute `k`, when it holds one.
pub(crate) fn number(item: &Item, k: &str) -> Option<i64> {
    item.get(k)?.as_n().ok()?.parse().ok()
}
