//! Where Parquet objects live: a local directory here, an S3 bucket on AWS.

use crate::PortError;
use async_trait::async_trait;
use bytes::Bytes;
use std::ops::Range;
use std::path::{Path, PathBuf};

#[async_trait]
pub trait BlobStore: Send + Sync {
    /// The object's bytes, or `None` when there is no such key.
    async fn get(&self, key: &str) -> Result<Option<Bytes>, PortError>;
    /// Writes the whole object; readers see the old or the new version, never a mix.
    async fn put(&self, key: &str, data: Bytes) -> Result<(), PortError>;
    /// Keys under a prefix, sorted.
    async fn list(&self, prefix: &str) -> Result<Vec<String>, PortError>;
    /// The object's size in bytes, or `None` when there is no such key.
    async fn size(&self, key: &str) -> Result<Option<u64>, PortError>;
    /// Bytes `range` (end exclusive) of an object, or `None` when there is no such key.
    async fn get_range(&self, key: &str, range: Range<u64>) -> Result<Option<Bytes>, PortError>;
    /// The object unless its version is still `seen` (a tag from an earlier
    /// answer): one conditional request, so a reader can ask often what
    /// changed at the cost of a reply with no body.
    async fn get_if_changed(&self, key: &str, seen: Option<&str>) -> Result<Changed, PortError>;
    /// Removes the object; removing a missing key is not an error.
    async fn delete(&self, key: &str) -> Result<(), PortError>;
}

/// What a conditional read found.
#[derive(Debug, Clone, PartialEq)]
pub enum Changed {
    /// The version seen is still the current one.
    Same,
    /// There is no such object.
    Missing,
    /// A version other than the one seen, with its tag.
    New { data: Bytes, tag: String },
}

/// A directory holding the layout as plain files.
#[derive(Debug, Clone)]
pub struct LocalDir {
    root: PathBuf,
}

impl LocalDir {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        LocalDir { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the directory holds no market data yet.
    pub fn is_empty(&self) -> bool {
        !self.root.join(super::layout::SYMBOLS).exists()
    }

    /// Writes through a temporary file and a rename, so a crash never leaves a
    /// half-written object behind.
    pub fn put_sync(&self, key: &str, data: &[u8]) -> Result<(), PortError> {
        let path = self.root.join(key);
        let dir = path.parent().expect("keys have a parent");
        std::fs::create_dir_all(dir)
            .map_err(|e| PortError::unavailable_by(format!("{}", dir.display()), e))?;
        let tmp = dir.join(format!(
            ".{}.{}.tmp",
            path.file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("object"),
            uuid::Uuid::new_v4().simple()
        ));
        std::fs::write(&tmp, data)
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                PortError::unavailable_by(format!("{}", path.display()), e)
            })
    }
}

#[async_trait]
impl BlobStore for LocalDir {
    async fn get(&self, key: &str) -> Result<Option<Bytes>, PortError> {
        match tokio::fs::read(self.root.join(key)).await {
            Ok(data) => Ok(Some(Bytes::from(data))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(PortError::unavailable_by(key, e)),
        }
    }

    async fn put(&self, key: &str, data: Bytes) -> Result<(), PortError> {
        let this = self.clone();
        let key = key.to_string();
        tokio::task::spawn_blocking(move || this.put_sync(&key, &data))
            .await
            .map_err(PortError::internal)?
    }

    async fn get_if_changed(&self, key: &str, seen: Option<&str>) -> Result<Changed, PortError> {
        // A local read costs little; the tag is a hash of the bytes, since
        // a file's time need not change between two quick writes.
        let Some(data) = self.get(key).await? else {
            return Ok(Changed::Missing);
        };
        let tag = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            data.hash(&mut h);
            format!("{:016x}-{}", h.finish(), data.len())
        };
        Ok(if seen == Some(tag.as_str()) {
            Changed::Same
        } else {
            Changed::New { data, tag }
        })
    }

    async fn delete(&self, key: &str) -> Result<(), PortError> {
        match tokio::fs::remove_file(self.root.join(key)).await {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(PortError::unavailable_by(key, e)),
        }
    }

    async fn size(&self, key: &str) -> Result<Option<u64>, PortError> {
        match tokio::fs::metadata(self.root.join(key)).await {
            Ok(m) => Ok(Some(m.len())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(PortError::unavailable_by(key, e)),
        }
    }

    async fn get_range(&self, key: &str, range: Range<u64>) -> Result<Option<Bytes>, PortError> {
        use tokio::io::{AsyncReadExt, AsyncSeekExt};
        let mut file = match tokio::fs::File::open(self.root.join(key)).await {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(PortError::unavailable_by(key, e)),
        };
        let io = |e: std::io::Error| PortError::unavailable_by(key, e);
        file.seek(std::io::SeekFrom::Start(range.start))
            .await
            .map_err(io)?;
        // A range past the end answers the bytes there are, as S3 does: a
        // short object is the caller's to judge, not an outage.
        let len = range.end.saturating_sub(range.start);
        let mut buf = Vec::with_capacity(len as usize);
        file.take(len).read_to_end(&mut buf).await.map_err(io)?;
        Ok(Some(Bytes::from(buf)))
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>, PortError> {
        let root = self.root.clone();
        let prefix = prefix.to_string();
        tokio::task::spawn_blocking(move || {
            let mut out = Vec::new();
            let mut stack = vec![root.clone()];
            while let Some(dir) = stack.pop() {
                let entries = match std::fs::read_dir(&dir) {
                    Ok(e) => e,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(e) => {
                        return Err(PortError::unavailable_by(format!("{}", dir.display()), e));
                    }
                };
                for entry in entries.flatten() {
                    let path = entry.path();
                    if path.is_dir() {
                        stack.push(path);
                    } else if let Ok(rel) = path.strip_prefix(&root) {
                        let key = rel.to_string_lossy().replace('\\', "/");
                        let hidden = rel
                            .file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with('.'));
                        if key.starts_with(&prefix) && !hidden {
                            out.push(key);
                        }
                    }
                }
            }
            out.sort();
            Ok(out)
        })
        .await
        .map_err(PortError::internal)?
    }
}
