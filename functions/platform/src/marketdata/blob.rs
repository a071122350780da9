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
    /// Moves an object to another key, replacing what is there: one rename
    /// in a directory; a store without one copies, then deletes.
    async fn rename(&self, from: &str, to: &str) -> Result<(), PortError> {
        let data = self
            .get(from)
            .await?
            .ok_or_else(|| PortError::NotFound(from.to_string()))?;
        self.put(to, data).await?;
        self.delete(from).await
    }
    /// Removes every object under `prefix`.
    async fn delete_prefix(&self, prefix: &str) -> Result<(), PortError> {
        for key in self.list(prefix).await? {
            self.delete(&key).await?;
        }
        Ok(())
    }
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

/// Opens the regular file at `path` for reading, never through a link (an
/// object is a file of the directory, not what a link put there points
/// to) and never waiting on a FIFO; none when it is missing.
fn open_regular(key: &str, path: &Path) -> Result<Option<std::fs::File>, PortError> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(not_regular(key)),
        Err(e) => return Err(PortError::unavailable_by(key, e)),
    };
    match file.metadata() {
        Ok(m) if m.is_file() => Ok(Some(file)),
        Ok(_) => Err(not_regular(key)),
        Err(e) => Err(PortError::unavailable_by(key, e)),
    }
}

fn not_regular(key: &str) -> PortError {
    PortError::Invalid(format!(
        "'{key}' is not a regular file (a link, a FIFO or a device), and is not read"
    ))
}

#[async_trait]
impl BlobStore for LocalDir {
    async fn get(&self, key: &str) -> Result<Option<Bytes>, PortError> {
        let (key, path) = (key.to_string(), self.root.join(key));
        tokio::task::spawn_blocking(move || {
            use std::io::Read;
            let Some(mut file) = open_regular(&key, &path)? else {
                return Ok(None);
            };
            let mut data = Vec::new();
            file.read_to_end(&mut data)
                .map_err(|e| PortError::unavailable_by(key.as_str(), e))?;
            Ok(Some(Bytes::from(data)))
        })
        .await
        .map_err(PortError::internal)?
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

    async fn rename(&self, from: &str, to: &str) -> Result<(), PortError> {
        let (from, to) = (self.root.join(from), self.root.join(to));
        tokio::task::spawn_blocking(move || {
            if let Some(dir) = to.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::rename(&from, &to)
        })
        .await
        .map_err(PortError::internal)?
        .map_err(|e| PortError::unavailable_by("rename", e))
    }

    /// Removes the directory `prefix` names (hidden temporary files
    /// included); a prefix that is not a directory's is removed key by key.
    async fn delete_prefix(&self, prefix: &str) -> Result<(), PortError> {
        if let Some(dir) = prefix.strip_suffix('/') {
            let path = self.root.join(dir);
            // remove_dir_all follows no link: a link inside is removed itself.
            return match tokio::fs::remove_dir_all(&path).await {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(PortError::unavailable_by(prefix, e)),
            };
        }
        for key in self.list(prefix).await? {
            self.delete(&key).await?;
        }
        Ok(())
    }

    async fn size(&self, key: &str) -> Result<Option<u64>, PortError> {
        // The entry's own size: a link is not an object (reading it fails).
        match tokio::fs::symlink_metadata(self.root.join(key)).await {
            Ok(m) if !m.is_file() => Err(not_regular(key)),
            Ok(m) => Ok(Some(m.len())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(PortError::unavailable_by(key, e)),
        }
    }

    async fn get_range(&self, key: &str, range: Range<u64>) -> Result<Option<Bytes>, PortError> {
        let (key, path) = (key.to_string(), self.root.join(key));
        tokio::task::spawn_blocking(move || {
            use std::io::{Read, Seek};
            let Some(mut file) = open_regular(&key, &path)? else {
                return Ok(None);
            };
            let io = |e: std::io::Error| PortError::unavailable_by(key.as_str(), e);
            file.seek(std::io::SeekFrom::Start(range.start))
                .map_err(io)?;
            // A range past the end answers the bytes there are, as S3 does: a
            // short object is the caller's to judge, not an outage.
            let len = range.end.saturating_sub(range.start);
            let mut buf = Vec::with_capacity(len.min(64 << 20) as usize);
            file.take(len).read_to_end(&mut buf).map_err(io)?;
            Ok(Some(Bytes::from(buf)))
        })
        .await
        .map_err(PortError::internal)?
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
                    // The entry's own type: a link to a directory is not walked.
                    if entry.file_type().is_ok_and(|t| t.is_dir()) {
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
