//! One import, one generation: an import writes its objects aside (under
//! `staging/<id>/`), then commits them in one step, a small marker naming
//! them (`staging/<id>.commit.json`); only then are they moved into place
//! and the generation published. A process that dies before the marker
//! leaves the served data as they were (what it wrote aside is removed at
//! the next start); one that dies after it is finished at the next start.
//! Either way every object of the import is served, or none.

use super::BlobStore;
use super::generation::Generation;
use crate::PortError;
use bytes::Bytes;
use serde::{Deserialize, Serialize};

/// Where imports write aside.
pub const STAGING: &str = "staging/";
const MARKER: &str = ".commit.json";
/// Objects written or moved at once.
const PARALLEL: usize = 16;

/// The marker of a committed import: the objects it moves into place.
#[derive(Debug, Serialize, Deserialize)]
struct Marker {
    keys: Vec<String>,
    /// Objects not written whose decoded forms change too (the bars a new
    /// split adjusts): named in the generation, nothing moved.
    #[serde(default)]
    also: Vec<String>,
}

/// The objects of one import, written aside until [`Staging::commit`].
pub struct Staging<'a> {
    blobs: &'a dyn BlobStore,
    id: String,
    keys: Vec<String>,
    also: Vec<String>,
}

/// A point of a commit at which [`Staging::commit_with`] can be told to
/// stop: the tests stop a process there with SIGKILL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Every object written aside, no marker yet.
    Staged,
    /// The marker written, nothing moved.
    Committed,
    /// Half of the objects moved into place.
    HalfMoved,
}

impl<'a> Staging<'a> {
    pub fn new(blobs: &'a dyn BlobStore) -> Self {
        Staging {
            blobs,
            id: uuid::Uuid::new_v4().simple().to_string(),
            keys: Vec::new(),
            also: Vec::new(),
        }
    }

    fn aside(&self, key: &str) -> String {
        format!("{STAGING}{}/{key}", self.id)
    }

    /// Writes `key`'s next version aside.
    pub async fn put(&mut self, key: &str, data: Bytes) -> Result<(), PortError> {
        self.blobs.put(&self.aside(key), data).await?;
        if !self.keys.iter().any(|k| k == key) {
            self.keys.push(key.to_string());
        }
        Ok(())
    }

    /// The version of `key` written aside, if this import wrote one: what
    /// a later file of the same import reads instead of the served one.
    pub async fn get(&self, key: &str) -> Result<Option<Bytes>, PortError> {
        if !self.keys.iter().any(|k| k == key) {
            return Ok(None);
        }
        self.blobs.get(&self.aside(key)).await
    }

    /// Whether nothing was written aside.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.also.is_empty()
    }

    /// Writes several objects aside, [`PARALLEL`] at a time.
    pub async fn put_many(&mut self, items: Vec<(String, Bytes)>) -> Result<(), PortError> {
        use futures::StreamExt;
        let blobs = self.blobs;
        let puts: Vec<_> = items
            .iter()
            .map(|(k, data)| {
                let aside = self.aside(k);
                let data = data.clone();
                async move { blobs.put(&aside, data).await }
            })
            .collect();
        let done: Vec<Result<(), PortError>> = futures::stream::iter(puts)
            .buffer_unordered(PARALLEL)
            .collect()
            .await;
        done.into_iter().collect::<Result<(), _>>()?;
        for (k, _) in items {
            if !self.keys.contains(&k) {
                self.keys.push(k);
            }
        }
        Ok(())
    }

    /// Names `key` in the commit's generation without writing it: its
    /// decoded forms depend on an object that is written.
    pub fn also(&mut self, key: &str) {
        if !self.also.iter().any(|k| k == key) {
            self.also.push(key.to_string());
        }
    }

    /// The keys the commit changes: written, then named only.
    pub fn keys(&self) -> Vec<String> {
        self.keys.iter().chain(&self.also).cloned().collect()
    }

    /// Commits: the marker, every object moved into place, the generation
    /// published naming them; answers its number.
    pub async fn commit(self) -> Result<u64, PortError> {
        self.commit_with(|_| {}).await
    }

    /// [`Staging::commit`], calling `at` at each [`Step`].
    pub async fn commit_with(self, at: impl Fn(Step)) -> Result<u64, PortError> {
        at(Step::Staged);
        let marker = format!("{STAGING}{}{MARKER}", self.id);
        let body = serde_json::to_vec(&Marker {
            keys: self.keys.clone(),
            also: self.also.clone(),
        })
        .map_err(PortError::internal)?;
        self.blobs.put(&marker, body.into()).await?;
        at(Step::Committed);
        finish(self.blobs, &self.id, &self.keys, &self.also, at).await
    }
}

/// Moves a committed import's objects into place (those not moved yet),
/// publishes the generation and removes the marker and the rest.
async fn finish(
    blobs: &dyn BlobStore,
    id: &str,
    keys: &[String],
    also: &[String],
    at: impl Fn(Step),
) -> Result<u64, PortError> {
    let (first, second) = keys.split_at(keys.len() / 2);
    move_into_place(blobs, id, first).await?;
    at(Step::HalfMoved);
    move_into_place(blobs, id, second).await?;
    let generation = Generation::publish(blobs, keys.iter().chain(also).cloned()).await?;
    blobs.delete_prefix(&format!("{STAGING}{id}/")).await?;
    blobs.delete(&format!("{STAGING}{id}{MARKER}")).await?;
    Ok(generation)
}

/// Moves `keys` from aside into place, [`PARALLEL`] at a time; one gone
/// from aside was moved before a crash.
async fn move_into_place(
    blobs: &dyn BlobStore,
    id: &str,
    keys: &[String],
) -> Result<(), PortError> {
    use futures::StreamExt;
    let moves: Vec<_> = keys
        .iter()
        .map(|key| async move {
            let aside = format!("{STAGING}{id}/{key}");
            if blobs.size(&aside).await?.is_some() {
                blobs.rename(&aside, key).await?;
            }
            Ok::<(), PortError>(())
        })
        .collect();
    let done: Vec<Result<(), PortError>> = futures::stream::iter(moves)
        .buffer_unordered(PARALLEL)
        .collect()
        .await;
    done.into_iter().collect()
}

/// What [`recover`] found of imports cut short.
#[derive(Debug, Default, PartialEq)]
pub struct Recovered {
    /// Committed imports finished (their objects moved, the generation published).
    pub finished: usize,
    /// Uncommitted imports whose objects written aside were removed.
    pub discarded: usize,
}

/// Finishes every committed import and removes every uncommitted one's
/// objects: run before an import, by whoever holds the import turn (no
/// other import runs).
pub async fn recover(blobs: &dyn BlobStore) -> Result<Recovered, PortError> {
    let mut found = Recovered::default();
    let listed = blobs.list(STAGING).await?;
    let mut committed = Vec::new();
    let mut ids = std::collections::BTreeSet::new();
    for key in &listed {
        let rest = &key[STAGING.len()..];
        match rest.strip_suffix(MARKER) {
            Some(id) if !id.contains('/') => committed.push(id.to_string()),
            _ => {
                if let Some((id, _)) = rest.split_once('/') {
                    ids.insert(id.to_string());
                }
            }
        }
    }
    for id in &committed {
        let marker = format!("{STAGING}{id}{MARKER}");
        let Some(body) = blobs.get(&marker).await? else {
            continue;
        };
        let m: Marker = serde_json::from_slice(&body)
            .map_err(|e| PortError::internal(format!("{marker} is unreadable: {e}")))?;
        finish(blobs, id, &m.keys, &m.also, |_| {}).await?;
        ids.remove(id);
        found.finished += 1;
    }
    // What is left is uncommitted (and, locally, temporary files of writes
    // cut short): removed at once.
    found.discarded = ids.len();
    blobs.delete_prefix(STAGING).await?;
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::marketdata::LocalDir;

    async fn text(blobs: &LocalDir, key: &str) -> Option<String> {
        blobs
            .get(key)
            .await
            .unwrap()
            .map(|b| String::from_utf8(b.to_vec()).unwrap())
    }

    /// Stages `a` and `b` over the old versions, stopping (as a killed
    /// process would: the future dropped at that point) at `stop`.
    async fn cut_at(blobs: &LocalDir, stop: Option<Step>) {
        blobs.put("x/a", "old a".into()).await.unwrap();
        blobs.put("x/b", "old b".into()).await.unwrap();
        let mut s = Staging::new(blobs);
        s.put("x/a", "new a".into()).await.unwrap();
        s.put("x/b", "new b".into()).await.unwrap();
        let Some(stop) = stop else {
            s.commit().await.unwrap();
            return;
        };
        // A panic at the step leaves the store as a kill there would.
        let run = std::panic::AssertUnwindSafe(s.commit_with(move |at| {
            if at == stop {
                panic!("stopped at {at:?}");
            }
        }));
        use futures::FutureExt;
        assert!(run.catch_unwind().await.is_err());
    }

    #[tokio::test]
    async fn an_import_cut_short_is_served_whole_or_not_at_all() {
        for (stop, new) in [
            (Some(Step::Staged), false),
            (Some(Step::Committed), true),
            (Some(Step::HalfMoved), true),
            (None, true),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let blobs = LocalDir::new(dir.path());
            cut_at(&blobs, stop).await;
            let found = recover(&blobs).await.unwrap();
            let want = if new { "new" } else { "old" };
            assert_eq!(
                text(&blobs, "x/a").await.unwrap(),
                format!("{want} a"),
                "{stop:?}"
            );
            assert_eq!(
                text(&blobs, "x/b").await.unwrap(),
                format!("{want} b"),
                "{stop:?}"
            );
            // Nothing is left aside, and the generation names both when new.
            assert!(!dir.path().join("staging").exists(), "{stop:?}");
            let g = Generation::read(&blobs).await.unwrap();
            assert_eq!(g.changed.len(), if new { 2 } else { 0 }, "{stop:?}");
            assert_eq!(
                (found.finished, found.discarded),
                match stop {
                    Some(Step::Staged) => (0, 1),
                    Some(_) => (1, 0),
                    None => (0, 0),
                },
                "{stop:?}"
            );
        }
    }
}
