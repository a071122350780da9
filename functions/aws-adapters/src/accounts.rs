//! Account store on DynamoDB: one item per account keyed by lower-cased e-mail.

use crate::sdk_error;
use async_trait::async_trait;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::AttributeValue;
use chrono::NaiveDateTime;
use platform::PortError;
use platform::accounts::{AccountRecord, AccountStore, normalize_email};
use std::collections::HashMap;

const TIME: &str = "%Y-%m-%dT%H:%M:%S%.6f";

pub struct DynamoAccountStore {
    client: Client,
    table: String,
}

impl DynamoAccountStore {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        DynamoAccountStore {
            client,
            table: table.into(),
        }
    }
}

fn from_item(i: &HashMap<String, AttributeValue>) -> Result<AccountRecord, PortError> {
    let text = |k: &str| {
        i.get(k)
            .and_then(|v| v.as_s().ok())
            .cloned()
            .ok_or_else(|| PortError::internal(format!("account item: missing {k}")))
    };
    Ok(AccountRecord {
        email: text("email")?,
        password_hash: text("password_hash")?,
        plan: text("plan")?,
        selected_indicators: serde_json::from_str(&text("selected_indicators")?)
            .map_err(PortError::internal)?,
        created_at: NaiveDateTime::parse_from_str(&text("created_at")?, TIME)
            .map_err(PortError::internal)?,
        custom_indicators: match i.get("custom_indicators").and_then(|v| v.as_s().ok()) {
            Some(json) => serde_json::from_str(json).map_err(PortError::internal)?,
            None => Vec::new(),
        },
    })
}

#[async_trait]
impl AccountStore for DynamoAccountStore {
    async fn get(&self, email: &str) -> Result<Option<AccountRecord>, PortError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .key("email", AttributeValue::S(normalize_email(email)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| sdk_error("get account", e))?;
        out.item().map(from_item).transpose()
    }

    async fn put(&self, r: AccountRecord) -> Result<(), PortError> {
        let selected =
            serde_json::to_string(&r.selected_indicators).map_err(PortError::internal)?;
        let custom = serde_json::to_string(&r.custom_indicators).map_err(PortError::internal)?;
        self.client
            .put_item()
            .table_name(&self.table)
            .item("email", AttributeValue::S(normalize_email(&r.email)))
            .item("password_hash", AttributeValue::S(r.password_hash))
            .item("plan", AttributeValue::S(r.plan))
            .item("selected_indicators", AttributeValue::S(selected))
            .item(
                "created_at",
                AttributeValue::S(r.created_at.format(TIME).to_string()),
            )
            .item("custom_indicators", AttributeValue::S(custom))
            .send()
            .await
            .map_err(|e| sdk_error("put account", e))?;
        Ok(())
    }

    async fn list(&self) -> Result<Vec<AccountRecord>, PortError> {
        let scan = self.client.scan().table_name(&self.table);
        let mut out = Vec::new();
        for item in crate::scan_all(scan, "list accounts").await? {
            out.push(from_item(&item)?);
        }
        out.sort_by(|a, b| a.email.cmp(&b.email));
        Ok(out)
    }
}
