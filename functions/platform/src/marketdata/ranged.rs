//! Parquet read through ranged requests: the footer first (with a prefetch
//! hint that usually covers the metadata), then only the column chunks the
//! reader asks for. Nearby ranges are merged into one request, so a whole
//! file costs a size lookup, one footer read and one data read, while a
//! reader that needs a few columns or row groups fetches only those.

use super::BlobStore;
use bytes::Bytes;
use futures::future::{BoxFuture, FutureExt};
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::errors::{ParquetError, Result};
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use std::ops::Range;
use std::sync::Arc;

/// Ranges closer than this are fetched together.
const COALESCE_GAP: u64 = 1024 * 1024;
/// Bytes read from the end of the file in the first request.
const FOOTER_PREFETCH: usize = 64 * 1024;

pub struct RangedReader {
    blobs: Arc<dyn BlobStore>,
    key: String,
    size: u64,
}

impl RangedReader {
    pub fn new(blobs: Arc<dyn BlobStore>, key: impl Into<String>, size: u64) -> Self {
        RangedReader {
            blobs,
            key: key.into(),
            size,
        }
    }
}

fn fetch(
    blobs: Arc<dyn BlobStore>,
    key: String,
    range: Range<u64>,
) -> BoxFuture<'static, Result<Bytes>> {
    async move {
        blobs
            .get_range(&key, range)
            .await
            .map_err(|e| ParquetError::External(Box::new(e)))?
            .ok_or_else(|| ParquetError::General(format!("{key} disappeared while being read")))
    }
    .boxed()
}

/// Sorted, merged spans covering `ranges` with gaps below `gap`.
fn coalesce(ranges: &[Range<u64>], gap: u64) -> Vec<Range<u64>> {
    let mut sorted: Vec<Range<u64>> = ranges.to_vec();
    sorted.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = Vec::new();
    for r in sorted {
        match out.last_mut() {
            Some(last) if r.start <= last.end + gap => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

impl AsyncFileReader for RangedReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, Result<Bytes>> {
        fetch(self.blobs.clone(), self.key.clone(), range)
    }

    fn get_byte_ranges(&mut self, ranges: Vec<Range<u64>>) -> BoxFuture<'_, Result<Vec<Bytes>>> {
        let (blobs, key) = (self.blobs.clone(), self.key.clone());
        async move {
            let spans = coalesce(&ranges, COALESCE_GAP);
            let mut fetched = Vec::with_capacity(spans.len());
            for span in &spans {
                fetched.push((
                    span.clone(),
                    fetch(blobs.clone(), key.clone(), span.clone()).await?,
                ));
            }
            Ok(ranges
                .iter()
                .map(|r| {
                    let (span, data) = fetched
                        .iter()
                        .find(|(s, _)| s.start <= r.start && r.end <= s.end)
                        .expect("a span covers every range");
                    data.slice((r.start - span.start) as usize..(r.end - span.start) as usize)
                })
                .collect())
        }
        .boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, Result<Arc<ParquetMetaData>>> {
        let size = self.size;
        async move {
            // The page index only when the reader asks for it (row selections).
            let mut reader = ParquetMetaDataReader::new().with_prefetch_hint(Some(FOOTER_PREFETCH));
            if let Some(o) = options {
                reader = reader
                    .with_column_index_policy(o.column_index_policy())
                    .with_offset_index_policy(o.offset_index_policy());
            }
            let meta = reader.load_and_finish(self, size).await?;
            Ok(Arc::new(meta))
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::coalesce;

    #[test]
    fn nearby_ranges_merge_and_far_ones_do_not() {
        assert_eq!(coalesce(&[10..20, 0..5, 25..30], 5), vec![0..30]);
        assert_eq!(coalesce(&[0..5, 100..110], 5), vec![0..5, 100..110]);
        assert_eq!(coalesce(&[0..50, 10..20], 0), vec![0..50]);
    }
}
