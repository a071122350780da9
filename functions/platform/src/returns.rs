//! A batch's per-bar returns, kept beside it in the blob store (one object
//! per chunk, written by the chunk's job) for the statistics that need the
//! whole T x N matrix. Compact and exact: a strategy out of the market
//! returns exactly 0, so each strategy keeps a bitmap of its non-zero bars
//! and those returns alone (little-endian f64): about half of 8 bytes per
//! strategy and bar for a crossover grid, 200 MB for 20 years of 10,000.
//! Each object also holds what the statistics need of its strategies when
//! every chunk shares its bars (the usual grid): their moments and block
//! sums, read alone (a few kilobytes a chunk) instead of the returns.

use crate::marketdata::BlobStore;
use crate::{PortError, PortResult};
use bytes::Bytes;
use engine::overfitting::{BlockSums, Moments};
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"MLRET04\0";
/// Magic, strategies, bars, periods per year, blocks, block length and
/// whether the returns follow the reduction.
const HEAD: usize = 8 + 4 + 4 + 8 + 4 + 4 + 4;

/// The chunk's strategies reduced for the statistics over its own bars:
/// moments over all of them and sums over `blocks` equal blocks (the
/// oldest left out), as `engine::overfitting` takes them.
#[derive(Debug, Clone, PartialEq)]
pub struct Reduced {
    pub moments: Vec<Moments>,
    pub sums: BlockSums,
}

/// A chunk object's head: its strategies, bars and reduction's blocks (0: none).
#[derive(Debug, Clone, PartialEq)]
pub struct Head {
    pub strategies: usize,
    pub times: Vec<i64>,
    pub blocks: usize,
}

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
    /// The strategies reduced over these bars, when there are enough of them.
    pub reduced: Option<Reduced>,
}

fn damaged(why: impl std::fmt::Display) -> PortError {
    PortError::internal(format!("batch returns object: {why}"))
}

/// What an object's head says.
struct Layout {
    strategies: usize,
    bars: usize,
    periods_per_year: f64,
    blocks: usize,
    block_len: usize,
    /// The returns are kept after the reduction.
    values: bool,
}

impl ChunkReturns {
    /// Without its returns when it has their reduction, which is all the
    /// statistics read when every chunk of the batch ran on the same bars:
    /// a fraction of the bytes to encode and write.
    pub fn reduction_only(mut self) -> Self {
        if self.reduced.is_some() {
            self.values = Vec::new();
        }
        self
    }

    fn values_kept(&self) -> bool {
        self.values.len() == self.indices.len() * self.times.len()
    }

    /// Strategy `k`'s returns (k counts within the chunk).
    pub fn series(&self, k: usize) -> &[f64] {
        let t = self.times.len();
        &self.values[k * t..(k + 1) * t]
    }

    /// Head, indices, times, the reduction (per strategy: mean, sd,
    /// skewness, kurtosis, block sums, block sums of squares), then, when
    /// the returns are kept, each strategy's count of non-zero returns and
    /// per strategy its bitmap (bit i of byte i / 8: bar i is not 0) and
    /// its non-zero returns. A -0.0 reads back as 0.0.
    pub fn to_bytes(&self) -> Bytes {
        let (s, t) = (self.indices.len(), self.times.len());
        let map = t.div_ceil(8);
        let kept = self.values_kept();
        let nonzero: Vec<u32> = (0..s)
            .filter(|_| kept)
            .map(|k| self.series(k).iter().filter(|&&x| x != 0.0).count() as u32)
            .collect();
        let values: usize = nonzero.iter().map(|&c| c as usize * 8).sum();
        let (blocks, len) = self
            .reduced
            .as_ref()
            .map_or((0, 0), |r| (r.sums.blocks, r.sums.len));
        let mut out =
            Vec::with_capacity(HEAD + 8 * s + 8 * t + reduced_size(s, blocks) + s * map + values);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(s as u32).to_le_bytes());
        out.extend_from_slice(&(t as u32).to_le_bytes());
        out.extend_from_slice(&self.periods_per_year.to_le_bytes());
        out.extend_from_slice(&(blocks as u32).to_le_bytes());
        out.extend_from_slice(&(len as u32).to_le_bytes());
        out.extend_from_slice(&u32::from(kept).to_le_bytes());
        out.extend(self.indices.iter().flat_map(|i| i.to_le_bytes()));
        out.extend(self.times.iter().flat_map(|x| x.to_le_bytes()));
        if let Some(r) = &self.reduced {
            for (k, m) in r.moments.iter().enumerate() {
                let (sum, sumsq) = r.sums.row(k);
                let row = [m.mean, m.sd, m.skew, m.kurtosis].into_iter();
                for x in row.chain(sum.iter().copied()).chain(sumsq.iter().copied()) {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
        }
        out.extend(nonzero.iter().flat_map(|c| c.to_le_bytes()));
        for k in (0..s).filter(|_| kept) {
            let series = self.series(k);
            for eight in series.chunks(8) {
                let mut byte = 0u8;
                for (i, &x) in eight.iter().enumerate() {
                    byte |= u8::from(x != 0.0) << i;
                }
                out.push(byte);
            }
            for &x in series {
                if x != 0.0 {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
        }
        Bytes::from(out)
    }

    fn head(data: &[u8]) -> PortResult<Layout> {
        if data.len() < HEAD || &data[..8] != MAGIC {
            return Err(damaged("not a returns object"));
        }
        let word =
            |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().expect("4 bytes")) as usize;
        let ppy = f64::from_le_bytes(data[16..24].try_into().expect("8 bytes"));
        let (blocks, len) = (word(24), word(28));
        let (s, t) = (word(8), word(12));
        if blocks > 64 || blocks.checked_mul(len).is_none_or(|b| b > t) {
            return Err(damaged(format!("{blocks} blocks of {len} in {t} bars")));
        }
        let values = match word(32) {
            0 if blocks > 0 => false,
            1 => true,
            other => return Err(damaged(format!("returns kept: {other}"))),
        };
        Ok(Layout {
            strategies: s,
            bars: t,
            periods_per_year: ppy,
            blocks,
            block_len: len,
            values,
        })
    }

    /// The reduction's part of an object from its first byte after the
    /// times: `s` strategies of `blocks` blocks of `len` over `t` bars.
    fn read_reduced(data: &[u8], s: usize, t: usize, blocks: usize, len: usize) -> Reduced {
        let mut words = data
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")));
        let mut sums = BlockSums::new(0, blocks, len);
        let mut moments = Vec::with_capacity(s);
        let (mut sum, mut sumsq) = (vec![0.0; blocks], vec![0.0; blocks]);
        for _ in 0..s {
            let mut next = || words.next().unwrap_or(f64::NAN);
            let (mean, sd, skew, kurtosis) = (next(), next(), next(), next());
            moments.push(Moments {
                n: t,
                mean,
                sd,
                skew,
                kurtosis,
            });
            sum.iter_mut().for_each(|x| *x = next());
            sumsq.iter_mut().for_each(|x| *x = next());
            sums.push(&sum, &sumsq);
        }
        Reduced { moments, sums }
    }

    /// Decodes an object; a truncated or foreign one is a fault, found
    /// before anything is allocated for it.
    pub fn from_bytes(data: &[u8]) -> PortResult<ChunkReturns> {
        let l = Self::head(data)?;
        let (s, t, periods_per_year, blocks, len) = (
            l.strategies,
            l.bars,
            l.periods_per_year,
            l.blocks,
            l.block_len,
        );
        if !l.values {
            return Err(damaged(
                "it kept its reduction only (its batch's chunks were to share their bars)",
            ));
        }
        let map = t.div_ceil(8);
        let fixed = s
            .checked_mul(8)
            .and_then(|v| v.checked_add(HEAD))
            .and_then(|v| t.checked_mul(8).and_then(|tt| v.checked_add(tt)))
            .and_then(|v| v.checked_add(reduced_size(s, blocks)))
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
        let reduced = take(reduced_size(s, blocks))?;
        let reduced = (blocks > 0).then(|| Self::read_reduced(reduced, s, t, blocks, len));
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
            reduced,
        })
    }
}

/// Bytes of `s` strategies' reduction over `blocks` blocks (none for 0).
fn reduced_size(s: usize, blocks: usize) -> usize {
    if blocks == 0 {
        0
    } else {
        s * (4 + 2 * blocks) * 8
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
    /// Encoded on a blocking thread: megabytes of returns a chunk.
    pub async fn put(&self, batch: &str, first: usize, r: ChunkReturns) -> PortResult<()> {
        let data = tokio::task::spawn_blocking(move || r.to_bytes())
            .await
            .map_err(PortError::internal)?;
        self.blobs.put(&Self::chunk_key(batch, first), data).await
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

    /// The chunk's head (strategies, bar times, reduction), without its values.
    pub async fn head(&self, batch: &str, first: usize) -> PortResult<Option<Head>> {
        let key = Self::chunk_key(batch, first);
        let Some(head) = self.blobs.get_range(&key, 0..HEAD as u64).await? else {
            return Ok(None);
        };
        let l = ChunkReturns::head(&head)?;
        let (s, t, blocks) = (l.strategies, l.bars, l.blocks);
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
        Ok(Some(Head {
            strategies: s,
            times: data
                .chunks_exact(8)
                .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")))
                .collect(),
            blocks,
        }))
    }

    /// The chunk's indices and reduction, without its returns: `None`
    /// when there is no such chunk or it kept no reduction. The object's
    /// size is checked against its head and counts, so a damaged object is
    /// refused here as it is when read whole.
    pub async fn reduced(
        &self,
        batch: &str,
        first: usize,
    ) -> PortResult<Option<(Vec<u32>, f64, Reduced)>> {
        let key = Self::chunk_key(batch, first);
        let Some(head) = self.blobs.get_range(&key, 0..HEAD as u64).await? else {
            return Ok(None);
        };
        let l = ChunkReturns::head(&head)?;
        let (s, t, ppy, blocks, len) = (
            l.strategies,
            l.bars,
            l.periods_per_year,
            l.blocks,
            l.block_len,
        );
        if blocks == 0 {
            return Ok(None);
        }
        let reduced = reduced_size(s, blocks);
        let counted = if l.values { 4 * s } else { 0 };
        let front = 4 * s + 8 * t + reduced + counted;
        let (Some(data), Some(size)) = (
            self.blobs
                .get_range(&key, HEAD as u64..(HEAD + front) as u64)
                .await?,
            self.blobs.size(&key).await?,
        ) else {
            return Ok(None);
        };
        if data.len() != front {
            return Err(damaged("shorter than its head says"));
        }
        let (ix, rest) = data.split_at(4 * s);
        let (part, counts) = rest[8 * t..].split_at(reduced);
        let map = t.div_ceil(8);
        let body: usize = counts
            .chunks_exact(4)
            .map(|b| map + 8 * (u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize).min(t))
            .sum();
        if (HEAD + front + body) as u64 != size {
            return Err(damaged(format!(
                "{size} bytes, its head and counts say {}",
                HEAD + front + body
            )));
        }
        let ix = ix
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        Ok(Some((
            ix,
            ppy,
            ChunkReturns::read_reduced(part, s, t, blocks, len),
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
            reduced: None,
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
            reduced: None,
        };
        let data = r.to_bytes();
        assert_eq!(data.len(), HEAD + 8 + 8 + 8 * t + 2 * 3 + 8 * 9);
        let back = ChunkReturns::from_bytes(&data).unwrap();
        assert_eq!(back.series(0), &held[..]);
        assert!(back.series(1)[20].is_nan());
        assert!(back.series(1)[..20].iter().all(|&x| x == 0.0));
    }

    #[tokio::test]
    async fn a_reduction_reads_back_alone_and_with_the_returns() {
        let t = 9;
        let values: Vec<f64> = (0..2 * t).map(|i| (i as f64 - 7.0) * 1e-3).collect();
        let mut sums = BlockSums::new(2, 2, 4);
        sums.set(0, &values[1..t]);
        sums.set(1, &values[t + 1..]);
        let moments = vec![Moments::of(&values[..t]), Moments::of(&values[t..])];
        let r = ChunkReturns {
            indices: vec![7, 9],
            times: (0..t as i64).collect(),
            values,
            periods_per_year: 52.0,
            reduced: Some(Reduced { moments, sums }),
        };
        let data = r.to_bytes();
        assert_eq!(
            data.len(),
            HEAD + 8 + 8 + 8 * t + 2 * (4 + 4) * 8 + 2 * 2 + 8 * 17
        );
        assert_eq!(ChunkReturns::from_bytes(&data).unwrap(), r);
        let dir = tempfile::tempdir().unwrap();
        let store = ReturnStore::new(Arc::new(crate::marketdata::LocalDir::new(dir.path())));
        store.put("b", 0, r.clone()).await.unwrap();
        assert_eq!(store.head("b", 0).await.unwrap().unwrap().blocks, 2);
        let (ix, ppy, reduced) = store.reduced("b", 0).await.unwrap().unwrap();
        assert_eq!((ix, ppy), (vec![7, 9], 52.0));
        assert_eq!(Some(reduced), r.reduced);
        // A truncated object is refused, as when read whole.
        let path = dir.path().join("batch-results/b/returns-000000.bin");
        std::fs::write(&path, &data[..data.len() - 8]).unwrap();
        assert!(store.reduced("b", 0).await.is_err());
        // Blocks that do not fit the bars are damage.
        let mut bad = data.to_vec();
        bad[28..32].copy_from_slice(&5u32.to_le_bytes());
        assert!(ChunkReturns::from_bytes(&bad).is_err());

        // Its reduction alone: the same head and reduction, no returns.
        let only = r.clone().reduction_only().to_bytes();
        assert_eq!(only.len(), HEAD + 8 + 8 * t + 2 * (4 + 4) * 8);
        store.put("c", 0, r.clone().reduction_only()).await.unwrap();
        assert_eq!(store.head("c", 0).await.unwrap().unwrap().times, r.times);
        let (ix, _, reduced) = store.reduced("c", 0).await.unwrap().unwrap();
        assert_eq!((ix, Some(reduced)), (vec![7, 9], r.reduced.clone()));
        let refused = store.get("c", 0).await.unwrap_err().to_string();
        assert!(refused.contains("reduction only"), "{refused}");
        let path = dir.path().join("batch-results/c/returns-000000.bin");
        std::fs::write(&path, &only[..only.len() - 8]).unwrap();
        assert!(store.reduced("c", 0).await.is_err());
        // Without a reduction the returns are always kept.
        let plain = ChunkReturns {
            reduced: None,
            ..r.clone()
        };
        assert_eq!(plain.clone().reduction_only(), plain);
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
            reduced: None,
        };
        store.put("b1", 0, r.clone()).await.unwrap();
        assert_eq!(store.get("b1", 0).await.unwrap(), Some(r));
        let head = store.head("b1", 0).await.unwrap().unwrap();
        assert_eq!(
            (head.strategies, head.times, head.blocks),
            (1, vec![1, 2], 0)
        );
        assert_eq!(store.reduced("b1", 0).await.unwrap(), None);
        assert_eq!(store.get("b1", 250).await.unwrap(), None);
        assert_eq!(store.head("b2", 0).await.unwrap(), None);
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
