//! A store's objects under one prefix, seen as a store of their own: the
//! test-mode sample set kept beside the live data in one bucket.

use super::{BlobStore, Changed};
use crate::PortError;
use async_trait::async_trait;
use bytes::Bytes;
use std::ops::Range;
use std::sync::Arc;

pub struct Under {
    inner: Arc<dyn BlobStore>,
    prefix: String,
}

impl Under {
    /// `inner`'s objects whose keys start with `prefix` (which ends in `/`).
    pub fn new(inner: Arc<dyn BlobStore>, prefix: impl Into<String>) -> Self {
        Under {
            inner,
            prefix: prefix.into(),
        }
    }

    fn key(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }
}

#[async_trait]
impl BlobStore for Under {
    async fn get(&self, key: &str) -> Result<Option<Bytes>, PortError> {
        self.inner.get(&self.key(key)).await
    }

    async fn put(&self, key: &str, data: Bytes) -> Result<(), PortError> {
        self.inner.put(&self.key(key), data).await
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>, PortError> {
        let keys = self.inner.list(&self.key(prefix)).await?;
        Ok(keys
            .into_iter()
            .filter_map(|k| k.strip_prefix(&self.prefix).map(str::to_string))
            .collect())
    }

    async fn size(&self, key: &str) -> Result<Option<u64>, PortError> {
        self.inner.size(&self.key(key)).await
    }

    async fn get_range(&self, key: &str, range: Range<u64>) -> Result<Option<Bytes>, PortError> {
        self.inner.get_range(&self.key(key), range).await
    }

    async fn get_if_changed(&self, key: &str, seen: Option<&str>) -> Result<Changed, PortError> {
        self.inner.get_if_changed(&self.key(key), seen).await
    }

    async fn delete(&self, key: &str) -> Result<(), PortError> {
        self.inner.delete(&self.key(key)).await
    }
}
