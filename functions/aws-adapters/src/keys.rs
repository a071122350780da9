//! API key store on DynamoDB: one item per key under its id (a key check is
//! one consistent read), listed by account through the `by_account` index.

use crate::{conditional, keyed::Item, query_all, sdk_error};
use async_trait::async_trait;
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::AttributeValue;
use chrono::NaiveDateTime;
use platform::PortError;
use platform::keys::{KeyRecord, KeyStore, Mode, Scope};

/// The index listing an account's keys, newest first.
pub const ACCOUNT_INDEX: &str = "by_account";
const TIME: &str = "%Y-%m-%dT%H:%M:%S%.6f";

pub struct DynamoKeyStore {
    client: Client,
    table: String,
}

impl DynamoKeyStore {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        DynamoKeyStore {
            client,
            table: table.into(),
        }
    }
}

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn time(t: NaiveDateTime) -> AttributeValue {
    s(t.format(TIME).to_string())
}

fn from_item(i: &Item) -> Result<KeyRecord, PortError> {
    let text = |k: &str| {
        i.get(k)
            .and_then(|v| v.as_s().ok())
            .cloned()
            .ok_or_else(|| PortError::internal(format!("key item: missing {k}")))
    };
    let at = |t: &str| NaiveDateTime::parse_from_str(t, TIME).map_err(PortError::internal);
    let optional = |k: &str| {
        i.get(k)
            .and_then(|v| v.as_s().ok())
            .map(|t| at(t))
            .transpose()
    };
    let mode = text("mode")?;
    Ok(KeyRecord {
        id: text("id")?,
        account: text("account")?,
        name: text("name")?,
        scopes: text("scopes")?
            .split(',')
            .filter(|x| !x.is_empty())
            .map(|x| Scope::parse(x).ok_or_else(|| PortError::internal(format!("scope {x}"))))
            .collect::<Result<_, _>>()?,
        mode: Mode::parse(&mode).ok_or_else(|| PortError::internal(format!("mode {mode}")))?,
        hash: text("hash")?,
        created_at: at(&text("created")?)?,
        expires_at: optional("expires_at")?,
        revoked_at: optional("revoked_at")?,
        last_used_at: optional("last_used_at")?,
    })
}

#[async_trait]
impl KeyStore for DynamoKeyStore {
    async fn get(&self, id: &str) -> Result<Option<KeyRecord>, PortError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .key("id", s(id))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| sdk_error("read key", e))?;
        out.item().map(from_item).transpose()
    }

    /// The count of live keys is read from the index, so keys created at
    /// the same moment on two instances may pass it together.
    async fn insert(&self, r: KeyRecord, max_live: usize) -> Result<bool, PortError> {
        let live = self
            .list(&r.account)
            .await?
            .iter()
            .filter(|k| k.live_at(r.created_at))
            .count();
        if live >= max_live {
            return Ok(false);
        }
        let scopes: Vec<&str> = r.scopes.iter().map(|x| x.name()).collect();
        let mut put = self
            .client
            .put_item()
            .table_name(&self.table)
            .item("id", s(&r.id))
            .item("account", s(&r.account))
            .item("name", s(&r.name))
            .item("scopes", s(scopes.join(",")))
            .item("mode", s(r.mode.name()))
            .item("hash", s(&r.hash))
            .item("created", time(r.created_at))
            .condition_expression("attribute_not_exists(id)");
        if let Some(e) = r.expires_at {
            put = put.item("expires_at", time(e));
        }
        match put.send().await {
            Ok(_) => Ok(true),
            Err(e) if conditional(&e) => Err(PortError::internal("key id taken")),
            Err(e) => Err(sdk_error("write key", e)),
        }
    }

    async fn list(&self, account: &str) -> Result<Vec<KeyRecord>, PortError> {
        let query = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(ACCOUNT_INDEX)
            .key_condition_expression("account = :a")
            .expression_attribute_values(":a", s(account))
            .scan_index_forward(false);
        let mut keys = query_all(query, "list keys")
            .await?
            .iter()
            .map(from_item)
            .collect::<Result<Vec<_>, _>>()?;
        keys.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(a.id.cmp(&b.id)));
        Ok(keys)
    }

    async fn revoke(&self, account: &str, id: &str, at: NaiveDateTime) -> Result<bool, PortError> {
        let r = self
            .client
            .update_item()
            .table_name(&self.table)
            .key("id", s(id))
            .update_expression("SET revoked_at = if_not_exists(revoked_at, :t)")
            .condition_expression("account = :a")
            .expression_attribute_values(":t", time(at))
            .expression_attribute_values(":a", s(account))
            .send()
            .await;
        match r {
            Ok(_) => Ok(true),
            Err(e) if conditional(&e) => Ok(false),
            Err(e) => Err(sdk_error("revoke key", e)),
        }
    }

    async fn touch(&self, id: &str, at: NaiveDateTime) -> Result<(), PortError> {
        let r = self
            .client
            .update_item()
            .table_name(&self.table)
            .key("id", s(id))
            .update_expression("SET last_used_at = :t")
            .condition_expression("attribute_exists(id)")
            .expression_attribute_values(":t", time(at))
            .send()
            .await;
        match r {
            Ok(_) => Ok(()),
            Err(e) if conditional(&e) => Ok(()),
            Err(e) => Err(sdk_error("note key use", e)),
        }
    }
}
