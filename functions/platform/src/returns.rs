//! A batch's per-bar returns, kept beside it in the blob store (one object
//! per chunk, written by the chunk's job) for the statistics that need the
//! whole T x N matrix. Compact and exact: a strategy out of the market
//! returns exactly 0, so each strategy keeps a bitmap of its non-zero bars
//! and those returns alone (little-endian f64): about half of 8 bytes per
//! strategy and bar for a crossover grid, 200 MB for 20 years of 10,000.

use crate::marketdata::BlobStore;
use crate::{PortError, PortResult};
use bytes::Bytes;
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"MLRET02\0";
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

fn damaged(why: impl std::fmt::Display) -> PortError {
    PortError::internal(format!("batch returns object: {why}"))
}

impl ChunkReturns {
    /// Strategy `k`'s returns (k counts within the chunk).
    pub fn series(&self, k: usize) -> &[f64] {
        let t = self.times.len();
        &self.values[k * t..(k + 1) * t]
    }

    /// Head, indices, times, each strategy's count of non-zero returns,
    /// then per strategy its bitmap (bit i of byte i / 8: bar i is not 0)
    /// and its non-zero returns. A -0.0 reads back as 0.0.
    pub fn to_bytes(&self) -> Bytes {
        let (s, t) = (self.indices.len(), self.times.len());
        let map = t.div_ceil(8);
        let nonzero: Vec<u32> = (0..s)
            .map(|k| self.series(k).iter().filter(|&&x| x != 0.0).count() as u32)
            .collect();
        let values: usize = nonzero.iter().map(|&c| c as usize * 8).sum();
        let mut out = Vec::with_capacity(HEAD + 8 * s + 8 * t + s * map + values);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(s as u32).to_le_bytes());
        out.extend_from_slice(&(t as u32).to_le_bytes());
        out.extend_from_slice(&self.periods_per_year.to_le_bytes());
        out.extend(self.indices.iter().flat_map(|i| i.to_le_bytes()));
        out.extend(self.times.iter().flat_map(|x| x.to_le_bytes()));
        out.extend(nonzero.iter().flat_map(|c| c.to_le_bytes()));
        for k in 0..s {
            let series = self.series(k);
            out.extend(series.chunks(8).map(|eight| {
                eight
                    .iter()
                    .enumerate()
                    .fold(0u8, |b, (i, &x)| b | u8::from(x != 0.0) << i)
            }));
            for &x in series.iter().filter(|&&x| x != 0.0) {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        Bytes::from(out)
    }

    /// The head's strategies, bars and periods per year.
    fn head(data: &[u8]) -> PortResult<(usize, usize, f64)> {
        if data.len() < HEAD || &data[..8] != MAGIC {
            return Err(damaged("not a returns object"));
        }
        let word =
            |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().expect("4 bytes")) as usize;
        let ppy = f64::from_le_bytes(data[16..24].try_into().expect("8 bytes"));
        Ok((word(8), word(12), ppy))
    }

    /// Decodes an object; a truncated or foreign one is a fault, found
    /// before anything is allocated for it.
    pub fn from_bytes(data: &[u8]) -> PortResult<ChunkReturns> {
        let (s, t, periods_per_year) = Self::head(data)?;
        let map = t.div_ceil(8);
        let fixed = s
            .checked_mul(8)
            .and_then(|v| v.checked_add(HEAD))
            .and_then(|v| t.checked_mul(8).and_then(|tt| v.checked_add(tt)))
            .filter(|&v| v <= data.len())
            .ok_or_else(|| damaged("shorter than its head says"))?;
        let mut at = HEAD;
        let mut take = |n: usize| -> PortResult<&[u8]> {
            let part = data
                .get(at..at + n)
                .ok_or_else(|| damaged("shorter than its head says"))?;
            at += n;
            Ok(part)
        };
        let indices = take(4 * s)?
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        let times = take(8 * t)?
            .chunks_exact(8)
            .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        let counts: Vec<usize> = take(4 * s)?
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
            .collect();
        let body: usize = counts.iter().map(|c| map + 8 * c.min(&t)).sum();
        if counts.iter().any(|&c| c > t) || fixed + body != data.len() {
            return Err(damaged(format!(
                "{} bytes, its head and counts say {}",
                data.len(),
                fixed + body
            )));
        }
        let mut values = vec![0.0; s * t];
        for (k, &count) in counts.iter().enumerate() {
            let bits = take(map)?;
            let mut kept = take(8 * count)?.chunks_exact(8);
            let out = &mut values[k * t..(k + 1) * t];
            // A byte of 0 is eight flat bars: nothing to read (the values are 0 already).
            for (eight, &byte) in out.chunks_mut(8).zip(bits) {
                if byte == 0 {
                    continue;
                }
                for (i, x) in eight.iter_mut().enumerate() {
                    if byte >> i & 1 == 1 {
                        let b = kept
                            .next()
                            .ok_or_else(|| damaged("more bits than returns"))?;
                        *x = f64::from_le_bytes(b.try_into().expect("8 bytes"));
                    }
                }
            }
            if kept.next().is_some() {
                return Err(damaged("more returns than bits"));
            }
        }
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
        let (s, t, _) = ChunkReturns::head(&head)?;
        let start = (HEAD + 4 * s) as u64;
        let Some(data) = self
            .blobs
            .get_range(&key, start..start + 8 * t as u64)
            .await?
        else {
            return Ok(None);
        };
        if data.len() != 8 * t {
            return Err(damaged("shorter than its head says"));
        }
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
        // Two strategies: indices, counts, 3 times, a bitmap byte each, 5 non-zero returns.
        assert_eq!(data.len(), HEAD + 8 + 8 + 24 + 2 + 40);
        assert_eq!(ChunkReturns::from_bytes(&data).unwrap(), r);
        assert_eq!(r.series(1), &[1e-300, f64::MAX, -0.5]);
        assert!(ChunkReturns::from_bytes(&data[..data.len() - 1]).is_err());
        assert!(ChunkReturns::from_bytes(b"not an object at all....").is_err());
        let mut huge = data.to_vec();
        huge[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        huge[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(ChunkReturns::from_bytes(&huge).is_err());
        // A bit set without its return, or a return without its bit.
        let mut flipped = data.to_vec();
        let bits = HEAD + 8 + 24 + 8;
        flipped[bits] |= 0b100;
        assert!(ChunkReturns::from_bytes(&flipped).is_err());
        flipped[bits] &= !0b101;
        assert!(ChunkReturns::from_bytes(&flipped).is_err());
    }

    #[test]
    fn runs_of_zeros_take_a_bit_each_and_nan_is_kept() {
        let t = 21;
        let held: Vec<f64> = (0..t)
            .map(|i| {
                if (5..13).contains(&i) {
                    i as f64 * 1e-3
                } else {
                    0.0
                }
            })
            .collect();
        let mut values = held.clone();
        values.extend((0..t).map(|i| if i == 20 { f64::NAN } else { -0.0 }));
        let r = ChunkReturns {
            indices: vec![0, 1],
            times: (0..t as i64).collect(),
            values,
            periods_per_year: 252.0,
        };
        let data = r.to_bytes();
        assert_eq!(data.len(), HEAD + 8 + 8 + 8 * t + 2 * 3 + 8 * 9);
        let back = ChunkReturns::from_bytes(&data).unwrap();
        assert_eq!(back.series(0), &held[..]);
        assert!(back.series(1)[20].is_nan());
        assert!(back.series(1)[..20].iter().all(|&x| x == 0.0));
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
