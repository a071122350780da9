//! Market data objects in S3, in the layout of docs/data-layout.md.

use async_trait::async_trait;
use aws_sdk_s3::Client;
use aws_sdk_s3::primitives::ByteStream;
use bytes::Bytes;
use platform::PortError;
use platform::marketdata::{BlobStore, Changed};
use std::ops::Range;

#[derive(Clone)]
pub struct S3Blobs {
    client: Client,
    bucket: String,
}

impl S3Blobs {
    pub fn new(client: Client, bucket: impl Into<String>) -> Self {
        S3Blobs {
            client,
            bucket: bucket.into(),
        }
    }
}

impl S3Blobs {
    /// An object, or its `range` of bytes; none when the key does not exist.
    async fn fetch(
        &self,
        key: &str,
        range: Option<Range<u64>>,
    ) -> Result<Option<Bytes>, PortError> {
        let what = match &range {
            Some(r) => format!("get s3://{}/{key} {}..{}", self.bucket, r.start, r.end),
            None => format!("get s3://{}/{key}", self.bucket),
        };
        let request = self.client.get_object().bucket(&self.bucket).key(key);
        let request = match &range {
            Some(r) => request.range(format!("bytes={}-{}", r.start, r.end - 1)),
            None => request,
        };
        match request.send().await {
            Ok(out) => out
                .body
                .collect()
                .await
                .map(|b| Some(b.into_bytes()))
                .map_err(|e| {
                    PortError::unavailable_by(format!("read s3://{}/{key}", self.bucket), e)
                }),
            Err(e) if e.as_service_error().is_some_and(|s| s.is_no_such_key()) => Ok(None),
            Err(e) => Err(PortError::unavailable_by(what, e)),
        }
    }
}

#[async_trait]
impl BlobStore for S3Blobs {
    async fn get(&self, key: &str) -> Result<Option<Bytes>, PortError> {
        self.fetch(key, None).await
    }

    async fn put(&self, key: &str, data: Bytes) -> Result<(), PortError> {
        self.client
            .put_object()
            .bucket(&self.bucket)
            .key(key)
            .body(ByteStream::from(data))
            .send()
            .await
            .map(|_| ())
            .map_err(|e| PortError::unavailable_by(format!("put s3://{}/{key}", self.bucket), e))
    }

    async fn get_if_changed(&self, key: &str, seen: Option<&str>) -> Result<Changed, PortError> {
        let what = || format!("get s3://{}/{key}", self.bucket);
        let request = self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(key)
            .set_if_none_match(seen.map(str::to_string));
        match request.send().await {
            Ok(out) => {
                let tag = out.e_tag().unwrap_or_default().to_string();
                let data = out
                    .body
                    .collect()
                    .await
                    .map_err(|e| PortError::unavailable_by(what(), e))?;
                Ok(Changed::New {
                    data: data.into_bytes(),
                    tag,
                })
            }
            Err(e) if e.as_service_error().is_some_and(|s| s.is_no_such_key()) => {
                Ok(Changed::Missing)
            }
            // "Not modified" is an answer without a body, not a fault.
            Err(e) if e.raw_response().is_some_and(|r| r.status().as_u16() == 304) => {
                Ok(Changed::Same)
            }
            Err(e) => Err(PortError::unavailable_by(what(), e)),
        }
    }

    async fn delete(&self, key: &str) -> Result<(), PortError> {
        self.client
            .delete_object()
            .bucket(&self.bucket)
            .key(key)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| PortError::unavailable_by(format!("delete s3://{}/{key}", self.bucket), e))
    }

    /// One server-side copy, then the delete: the bytes never leave S3.
    async fn rename(&self, from: &str, to: &str) -> Result<(), PortError> {
        // The copy source is `bucket/key`, the key percent-encoded.
        let source: String = form_urlencoded::byte_serialize(from.as_bytes())
            .collect::<String>()
            .replace("%2F", "/")
            .replace('+', "%20");
        self.client
            .copy_object()
            .bucket(&self.bucket)
            .key(to)
            .copy_source(format!("{}/{source}", self.bucket))
            .send()
            .await
            .map_err(|e| {
                PortError::unavailable_by(format!("copy s3://{}/{from} to {to}", self.bucket), e)
            })?;
        self.delete(from).await
    }

    async fn size(&self, key: &str) -> Result<Option<u64>, PortError> {
        match self
            .client
            .head_object()
            .bucket(&self.bucket)
            .key(key)
            .send()
            .await
        {
            Ok(out) => Ok(Some(out.content_length().unwrap_or(0) as u64)),
            Err(e) if e.as_service_error().is_some_and(|s| s.is_not_found()) => Ok(None),
            Err(e) => Err(PortError::unavailable_by(
                format!("head s3://{}/{key}", self.bucket),
                e,
            )),
        }
    }

    async fn get_range(&self, key: &str, range: Range<u64>) -> Result<Option<Bytes>, PortError> {
        if range.end <= range.start {
            return Ok(Some(Bytes::new()));
        }
        self.fetch(key, Some(range)).await
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>, PortError> {
        let mut keys = Vec::new();
        let mut token = None;
        loop {
            let out = self
                .client
                .list_objects_v2()
                .bucket(&self.bucket)
                .prefix(prefix)
                .set_continuation_token(token)
                .send()
                .await
                .map_err(|e| {
                    PortError::unavailable_by(format!("list s3://{}/{prefix}", self.bucket), e)
                })?;
            keys.extend(
                out.contents()
                    .iter()
                    .filter_map(|o| o.key().map(str::to_string)),
            );
            match out.next_continuation_token() {
                Some(t) if out.is_truncated() == Some(true) => token = Some(t.to_string()),
                _ => break,
            }
        }
        keys.sort();
        Ok(keys)
    }
}
