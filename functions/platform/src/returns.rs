//! A batch's per-bar returns, kept beside it in the blob store (one object
//! per chunk, written by the chunk's job) for the statistics that need the
//! whole T x N matrix: raw little-endian numbers, 8 bytes per strategy and
//! bar, so a 20-year, 10,000-strategy batch keeps about 400 MB and reads
//! back without decoding.

use crate::marketdata::BlobStore;
use crate::{PortError, PortResult};
use bytes::{BufMut, Bytes, BytesMut};
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"MLRET01\0";
/// Magic, strategies, bars and periods per year.
const HEAD: usize = 8 + 4 + 4 + 8;

/// A chunk's strategies' returns on the bars they all share.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChunkReturns {
    /// Each strategy's place in the batch.
    pub indices: Vec<u32>,
    /// Each return's bar, as Unix seconds (a daily bar at midnight UTC).
    pub times: Vec<i64>,
    /// Strategy-major: strategy k's returns are `values[k * times.len()..][..times.len()]`.
    pub values: Vec<f64>,
    /// Bars per year of the strategies, to annualise with.
    pub periods_per_year: f64,
}

impl ChunkReturns {
    /// Strategy `k`'s returns (k counts within the chunk).
    pub fn series(&self, k: usize) -> &[f64] {
        let t = self.times.len();
        &self.values[k * t..(k + 1) * t]
    }

    pub fn to_bytes(&self) -> Bytes {
        let (s, t) = (self.indices.len(), self.times.len());
        let mut out = BytesMut::with_capacity(HEAD + 4 * s + 8 * t + 8 * s * t);
        out.put_slice(MAGIC);
        out.put_u32_le(s as u32);
        out.put_u32_le(t as u32);
        out.put_f64_le(self.periods_per_year);
        self.indices.iter().for_each(|&i| out.put_u32_le(i));
        self.times.iter().for_each(|&x| out.put_i64_le(x));
        self.values.iter().for_each(|&x| out.put_f64_le(x));
        out.freeze()
    }

    /// The header's counts, and the bytes the whole object has.
    fn sizes(data: &[u8]) -> PortResult<(usize, usize, f64, usize)> {
        let bad = |why: &str| PortError::internal(format!("batch returns object: {why}"));
        if data.len() < HEAD || &data[..8] != MAGIC {
            return Err(bad("not a returns object"));
        }
        let word =
            |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().expect("4 bytes")) as usize;
        let (s, t) = (word(8), word(12));
        let ppy = f64::from_le_bytes(data[16..24].try_into().expect("8 bytes"));
        let total = s
            .checked_mul(t)
            .and_then(|st| st.checked_mul(8))
            .and_then(|v| v.checked_add(HEAD + 4 * s + 8 * t))
            .ok_or_else(|| bad("sizes overflow"))?;
        Ok((s, t, ppy, total))
    }

    /// Decodes an object; a truncated or foreign one is a fault.
    pub fn from_bytes(data: &[u8]) -> PortResult<ChunkReturns> {
        let (s, t, periods_per_year, total) = Self::sizes(data)?;
        if data.len() != total {
            return Err(PortError::internal(format!(
                "batch returns object: {} bytes, its header says {total}",
                data.len()
            )));
        }
        let mut at = HEAD;
        let mut take = |n: usize| {
            let part = &data[at..at + n];
            at += n;
            part
        };
        let indices = take(4 * s)
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        let times = take(8 * t)
            .chunks_exact(8)
            .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        let values = take(8 * s * t)
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        Ok(ChunkReturns {
            indices,
            times,
            values,
            periods_per_year,
        })
    }
}

/// Where batches keep their returns and their computed statistics.
#[derive(Clone)]
pub struct ReturnStore {
    blobs: Arc<dyn BlobStore>,
}

pub const PREFIX: &str = "batch-results/";

impl ReturnStore {
    pub fn new(blobs: Arc<dyn BlobStore>) -> Self {
        ReturnStore { blobs }
    }

    fn chunk_key(batch: &str, first: usize) -> String {
        format!("{PREFIX}{batch}/returns-{first:06}.bin")
    }

    /// Writes the returns of the chunk starting at strategy `first`; a
    /// chunk run again replaces its object.
    pub async fn put(&self, batch: &str, first: usize, r: &ChunkReturns) -> PortResult<()> {
        self.blobs
            .put(&Self::chunk_key(batch, first), r.to_bytes())
            .await
    }

    /// The chunk's returns; `None` when it wrote none (it failed).
    pub async fn get(&self, batch: &str, first: usize) -> PortResult<Option<ChunkReturns>> {
        match self.blobs.get(&Self::chunk_key(batch, first)).await? {
            Some(data) => tokio::task::spawn_blocking(move || ChunkReturns::from_bytes(&data))
                .await
                .map_err(PortError::internal)?
                .map(Some),
            None => Ok(None),
        }
    }

    /// The chunk's strategy count and bar times (its head), without its values.
    pub async fn times(&self, batch: &str, first: usize) -> PortResult<Option<(usize, Vec<i64>)>> {
        let key = Self::chunk_key(batch, first);
        let Some(head) = self.blobs.get_range(&key, 0..HEAD as u64).await? else {
            return Ok(None);
        };
        let (s, t, _, _) = ChunkReturns::sizes(&head)?;
        let start = (HEAD + 4 * s) as u64;
        let Some(data) = self
            .blobs
            .get_range(&key, start..start + 8 * t as u64)
            .await?
        else {
            return Ok(None);
        };
        Ok(Some((
            s,
            data.chunks_exact(8)
                .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")))
                .collect(),
        )))
    }

    fn note_key(batch: &str, name: &str) -> String {
        format!("{PREFIX}{batch}/{name}")
    }

    /// A small computed object kept with the batch (its statistics).
    pub async fn note(&self, batch: &str, name: &str) -> PortResult<Option<Bytes>> {
        self.blobs.get(&Self::note_key(batch, name)).await
    }

    pub async fn put_note(&self, batch: &str, name: &str, data: Bytes) -> PortResult<()> {
        self.blobs.put(&Self::note_key(batch, name), data).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_reads_back_and_damage_is_refused() {
        let r = ChunkReturns {
            indices: vec![250, 251],
            times: vec![86_400, 172_800, 259_200],
            values: vec![0.01, -0.02, 0.0, 1e-300, f64::MAX, -0.5],
            periods_per_year: 252.0,
        };
        let data = r.to_bytes();
        assert_eq!(data.len(), HEAD + 8 + 24 + 48);
        assert_eq!(ChunkReturns::from_bytes(&data).unwrap(), r);
        assert_eq!(r.series(1), &[1e-300, f64::MAX, -0.5]);
        assert!(ChunkReturns::from_bytes(&data[..data.len() - 1]).is_err());
        assert!(ChunkReturns::from_bytes(b"not an object at all....").is_err());
        let mut huge = data.to_vec();
        huge[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        huge[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(ChunkReturns::from_bytes(&huge).is_err());
    }

    #[tokio::test]
    async fn chunks_and_notes_live_under_the_batch() {
        let dir = tempfile::tempdir().unwrap();
        let store = ReturnStore::new(Arc::new(crate::marketdata::LocalDir::new(dir.path())));
        let r = ChunkReturns {
            indices: vec![0],
            times: vec![1, 2],
            values: vec![0.5, 0.25],
            periods_per_year: 252.0,
        };
        store.put("b1", 0, &r).await.unwrap();
        assert_eq!(store.get("b1", 0).await.unwrap(), Some(r));
        assert_eq!(store.times("b1", 0).await.unwrap(), Some((1, vec![1, 2])));
        assert_eq!(store.get("b1", 250).await.unwrap(), None);
        assert_eq!(store.times("b2", 0).await.unwrap(), None);
        store
            .put_note("b1", "s.json", Bytes::from("{}"))
            .await
            .unwrap();
        assert_eq!(store.note("b1", "s.json").await.unwrap().unwrap(), "{}");
        assert!(
            dir.path()
                .join("batch-results/b1/returns-000000.bin")
                .exists()
        );
    }
}
