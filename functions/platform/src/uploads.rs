//! Bars a tenant sends with a backtest (CSV mode), kept once in the blob
//! store as a 16-column Parquet object named by its owner and its content:
//! the task's params hold only a summary and the digest, so status reads
//! stay small and the worker reads columns, never the JSON rows again.

use crate::marketdata::BlobStore;
use crate::marketdata::codec::{date_to_days, days_to_date, to_parquet_with};
use crate::{PortError, PortResult};
use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Float32Type, Float64Type, Int32Type, Int64Type,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{Array, ArrayRef, Date32Array, Float64Array, RecordBatch};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use bytes::Bytes;
use chrono::NaiveDate;
use engine::Bars;
use parking_lot::Mutex;
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// The price columns of an upload, in order.
pub const PRICE_COLUMNS: [&str; 5] = ["Open", "High", "Low", "Close", "Volume"];
/// Entry1..Entry5 then Exit1..Exit5: signal columns a strategy may read.
pub const SIGNAL_COLUMNS: [&str; 10] = [
    "Entry1", "Entry2", "Entry3", "Entry4", "Entry5", "Exit1", "Exit2", "Exit3", "Exit4", "Exit5",
];

/// Uploaded bars as columns; every column is as long as `bars`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Upload {
    /// Daily bars at midnight.
    pub bars: Bars,
    /// [`SIGNAL_COLUMNS`] in order; a column the upload lacks is zeros.
    pub signals: [Vec<f64>; 10],
}

impl Upload {
    pub fn len(&self) -> usize {
        self.bars.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bars.is_empty()
    }

    /// The stored form: Date (date32) and the 15 value columns, Snappy Parquet.
    pub fn to_parquet(&self) -> PortResult<Bytes> {
        let mut fields = vec![Field::new("Date", DataType::Date32, false)];
        let dates: Vec<i32> = self
            .bars
            .time
            .iter()
            .map(|t| date_to_days(t.date()))
            .collect();
        let mut columns: Vec<ArrayRef> = vec![Arc::new(Date32Array::from(dates))];
        let b = &self.bars;
        let values = [&b.open, &b.high, &b.low, &b.close, &b.volume]
            .into_iter()
            .chain(self.signals.iter());
        // A signal column of zeros is what a missing one reads as: not written.
        for (name, v) in PRICE_COLUMNS
            .iter()
            .chain(SIGNAL_COLUMNS.iter())
            .zip(values)
            .enumerate()
            .filter(|(i, (_, v))| *i < PRICE_COLUMNS.len() || v.iter().any(|x| *x != 0.0))
            .map(|(_, c)| c)
        {
            fields.push(Field::new(*name, DataType::Float64, false));
            columns.push(Arc::new(Float64Array::from(v.clone())));
        }
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)
            .map_err(PortError::internal)?;
        // Written while the submit waits, read once by its job: plain pages
        // (prices rarely repeat, so dictionaries and compression save little)
        // and no statistics (nothing filters these files).
        let props = WriterProperties::builder()
            .set_compression(Compression::UNCOMPRESSED)
            .set_dictionary_enabled(false)
            .set_statistics_enabled(parquet::file::properties::EnabledStatistics::None)
            .set_created_by("marketlab".into())
            .build();
        to_parquet_with(&batch, props)
    }

    /// Bytes the columns hold in memory.
    pub fn bytes(&self) -> usize {
        self.len() * 16 * 8
    }

    /// Reads a stored upload back (written by [`Upload::to_parquet`]).
    pub fn from_stored(data: Bytes) -> PortResult<Upload> {
        let table = read_table(data, usize::MAX).map_err(|e| PortError::Internal {
            context: format!("stored upload: {e}"),
            cause: None,
        })?;
        let upload = table.upload().map_err(|e| PortError::Internal {
            context: format!("stored upload: {e}"),
            cause: None,
        })?;
        Ok(upload)
    }
}

/// A Parquet file a client sent, reduced to the columns an upload takes
/// (matched without regard to case); others are never decoded.
pub struct SentTable {
    batch: RecordBatch,
}

/// Reads a client's Parquet bytes: at most `max_rows` rows (checked in the
/// footer, before any page is decompressed), only the upload's columns.
pub fn read_table(data: Bytes, max_rows: usize) -> Result<SentTable, String> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(data)
        .map_err(|e| format!("not a readable Parquet file: {e}"))?;
    let rows = builder.metadata().file_metadata().num_rows();
    if rows < 0 || rows as u64 > max_rows as u64 {
        return Err(format!(
            "holds {rows} rows; at most {max_rows} are accepted"
        ));
    }
    let wanted: Vec<usize> = builder
        .parquet_schema()
        .root_schema()
        .get_fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| wanted_column(f.name()).is_some())
        .map(|(i, _)| i)
        .collect();
    check_types(builder.schema())?;
    let mask = ProjectionMask::roots(builder.parquet_schema(), wanted);
    let builder = builder.with_projection(mask);
    let schema = builder.schema().clone();
    let projected = Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .filter(|f| wanted_column(f.name()).is_some())
            .cloned()
            .collect::<Vec<_>>(),
    ));
    // Batches as long as the file (not the reader's 1024-row default, nor a
    // fixed large size whose buffers would be allocated for a small file).
    let reader = builder
        .with_batch_size((rows as usize).clamp(1, 64 * 1024))
        .build()
        .map_err(|e| format!("not a readable Parquet file: {e}"))?;
    let batches = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("Parquet data is corrupt: {e}"))?;
    let batch = arrow_select::concat::concat_batches(&projected, &batches)
        .map_err(|e| format!("Parquet data is corrupt: {e}"))?;
    Ok(SentTable { batch })
}

/// Reads a client's Arrow IPC stream (`application/vnd.apache.arrow.stream`,
/// what pyarrow and polars write without encoding work): at most `max_rows`
/// rows, counted batch by batch as they are read; only the upload's columns
/// are kept. Buffers are read in place, so the stream costs little more than
/// its own size.
pub fn read_stream(data: Bytes, max_rows: usize) -> Result<SentTable, String> {
    let reader = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(data), None)
        .map_err(|e| format!("not a readable Arrow stream: {e}"))?;
    let schema = reader.schema();
    check_types(&schema)?;
    let wanted: Vec<usize> = schema
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| wanted_column(f.name()).is_some())
        .map(|(i, _)| i)
        .collect();
    let projected = Arc::new(
        schema
            .project(&wanted)
            .map_err(|e| format!("not a readable Arrow stream: {e}"))?,
    );
    let (mut batches, mut rows) = (Vec::new(), 0usize);
    for batch in reader {
        let batch = batch.map_err(|e| format!("Arrow data is corrupt: {e}"))?;
        rows += batch.num_rows();
        if rows > max_rows {
            return Err(format!(
                "holds more than {max_rows} rows; at most {max_rows} are accepted"
            ));
        }
        batches.push(
            batch
                .project(&wanted)
                .map_err(|e| format!("Arrow data is corrupt: {e}"))?,
        );
    }
    let batch = arrow_select::concat::concat_batches(&projected, &batches)
        .map_err(|e| format!("Arrow data is corrupt: {e}"))?;
    Ok(SentTable { batch })
}

/// Refuses a wanted column of a type an upload cannot hold. Only
/// fixed-width columns are decoded: a text column can repeat one long
/// dictionary entry on every row and decode to far more than the file's size.
fn check_types(schema: &Schema) -> Result<(), String> {
    for f in schema.fields() {
        let Some(c) = wanted_column(f.name()) else {
            continue;
        };
        let fixed = match f.data_type() {
            DataType::Date32 | DataType::Date64 | DataType::Timestamp(_, _) => c == 0,
            DataType::Float64 | DataType::Float32 | DataType::Int64 | DataType::Int32 => c > 0,
            DataType::Boolean => c > 5,
            _ => false,
        };
        if !fixed {
            let want = if c == 0 {
                "a date or timestamp"
            } else {
                "numbers"
            };
            return Err(format!(
                "column '{}' is {}; expected {want}",
                f.name(),
                f.data_type()
            ));
        }
    }
    Ok(())
}

/// Index of a column name among Date (0), the prices (1-5) and the signals
/// (6-15), without regard to case; pandas writes an unnamed index as
/// `__index_level_0__`, taken as the date.
fn wanted_column(name: &str) -> Option<usize> {
    if name.eq_ignore_ascii_case("date") || name == "__index_level_0__" {
        return Some(0);
    }
    PRICE_COLUMNS
        .iter()
        .chain(SIGNAL_COLUMNS.iter())
        .position(|c| c.eq_ignore_ascii_case(name))
        .map(|i| i + 1)
}

impl SentTable {
    pub fn rows(&self) -> usize {
        self.batch.num_rows()
    }

    fn column(&self, index: usize) -> Option<&ArrayRef> {
        let schema = self.batch.schema();
        // A named Date column wins over a pandas index.
        let pick = schema
            .fields()
            .iter()
            .enumerate()
            .filter(|(_, f)| wanted_column(f.name()) == Some(index))
            .min_by_key(|(_, f)| f.name().starts_with("__"))
            .map(|(i, _)| i)?;
        Some(self.batch.column(pick))
    }

    /// The dates, one per row (`None` where a row has none).
    pub fn dates(&self) -> Result<Vec<Option<NaiveDate>>, String> {
        let c = self.column(0).ok_or("column 'Date' is required")?;
        let day = |secs: Option<i64>| {
            secs.and_then(|s| chrono::DateTime::from_timestamp(s.div_euclid(86_400) * 86_400, 0))
                .map(|t| t.date_naive())
        };
        Ok(match c.data_type() {
            DataType::Date32 => c
                .as_primitive::<Date32Type>()
                .iter()
                .map(|d| d.map(days_to_date))
                .collect(),
            DataType::Date64 => c
                .as_primitive::<Date64Type>()
                .iter()
                .map(|d| day(d.map(|ms| ms.div_euclid(1000))))
                .collect(),
            DataType::Timestamp(unit, _) => {
                let per_second: i64 = match unit {
                    TimeUnit::Second => 1,
                    TimeUnit::Millisecond => 1_000,
                    TimeUnit::Microsecond => 1_000_000,
                    TimeUnit::Nanosecond => 1_000_000_000,
                };
                let raw: Vec<Option<i64>> = match unit {
                    TimeUnit::Second => c.as_primitive::<TimestampSecondType>().iter().collect(),
                    TimeUnit::Millisecond => c
                        .as_primitive::<TimestampMillisecondType>()
                        .iter()
                        .collect(),
                    TimeUnit::Microsecond => c
                        .as_primitive::<TimestampMicrosecondType>()
                        .iter()
                        .collect(),
                    TimeUnit::Nanosecond => {
                        c.as_primitive::<TimestampNanosecondType>().iter().collect()
                    }
                };
                raw.into_iter()
                    .map(|v| day(v.map(|x| x.div_euclid(per_second))))
                    .collect()
            }
            other => {
                return Err(format!(
                    "column 'Date' is {other}; expected a date or timestamp"
                ));
            }
        })
    }

    /// Column `index` (1-15, as [`wanted_column`]) as numbers, `None` where
    /// a row has none; `Ok(None)` when the file lacks the column.
    pub fn numbers(&self, index: usize) -> Result<Option<Vec<Option<f64>>>, String> {
        let Some(c) = self.column(index) else {
            return Ok(None);
        };
        let name = PRICE_COLUMNS
            .iter()
            .chain(SIGNAL_COLUMNS.iter())
            .nth(index - 1)
            .copied()
            .unwrap_or("?");
        Ok(Some(match c.data_type() {
            DataType::Float64 => c.as_primitive::<Float64Type>().iter().collect(),
            DataType::Float32 => c
                .as_primitive::<Float32Type>()
                .iter()
                .map(|v| v.map(f64::from))
                .collect(),
            DataType::Int64 => c
                .as_primitive::<Int64Type>()
                .iter()
                .map(|v| v.map(|x| x as f64))
                .collect(),
            DataType::Int32 => c
                .as_primitive::<Int32Type>()
                .iter()
                .map(|v| v.map(f64::from))
                .collect(),
            DataType::Boolean => c
                .as_boolean()
                .iter()
                .map(|v| v.map(|b| if b { 1.0 } else { 0.0 }))
                .collect(),
            other => return Err(format!("column '{name}' is {other}; expected numbers")),
        }))
    }

    /// The stored form's columns, all present and without nulls.
    fn upload(&self) -> Result<Upload, String> {
        let dates = self.dates()?;
        let mut cols: Vec<Vec<f64>> = Vec::with_capacity(15);
        for i in 1..=15 {
            let v = match self.numbers(i)? {
                Some(v) => v.into_iter().map(|x| x.unwrap_or(f64::NAN)).collect(),
                // A signal column of zeros is not stored.
                None if i > 5 => vec![0.0; dates.len()],
                None => return Err(format!("column {i} is missing")),
            };
            cols.push(v);
        }
        let mut bars = Bars::with_capacity(dates.len());
        for (k, d) in dates.iter().enumerate() {
            let d = d.ok_or("a date is missing")?;
            bars.push(
                d.and_hms_opt(0, 0, 0).expect("midnight"),
                cols[0][k],
                cols[1][k],
                cols[2][k],
                cols[3][k],
                cols[4][k],
            );
        }
        let mut signals: [Vec<f64>; 10] = Default::default();
        for (s, c) in signals.iter_mut().zip(cols.drain(5..)) {
            *s = c;
        }
        Ok(Upload { bars, signals })
    }
}

/// Uploads in a blob store, under `uploads/`: one object per owner and
/// content, so a resubmitted upload is stored once and no key is shared
/// between tenants. An upload stored here is also handed to the job that
/// runs it in this process (the embedded server's worker) without being
/// read back; the hand-off holds at most [`HAND_OFF_BYTES`], oldest out first.
#[derive(Clone)]
pub struct Uploads {
    blobs: Arc<dyn BlobStore>,
    hand_off: Arc<Mutex<HandOff>>,
}

pub const PREFIX: &str = "uploads/";
/// Most bytes of columns kept for jobs in this process.
pub const HAND_OFF_BYTES: usize = 32 << 20;

#[derive(Default)]
struct HandOff {
    by_key: HashMap<String, Arc<Upload>>,
    order: VecDeque<String>,
    bytes: usize,
}

impl HandOff {
    fn keep(&mut self, key: String, upload: Arc<Upload>) {
        if upload.bytes() > HAND_OFF_BYTES || self.by_key.contains_key(&key) {
            return;
        }
        self.bytes += upload.bytes();
        self.by_key.insert(key.clone(), upload);
        self.order.push_back(key);
        while self.bytes > HAND_OFF_BYTES {
            let Some(old) = self.order.pop_front() else {
                break;
            };
            self.drop_key(&old);
        }
    }

    fn drop_key(&mut self, key: &str) -> Option<Arc<Upload>> {
        let u = self.by_key.remove(key)?;
        self.bytes -= u.bytes();
        self.order.retain(|k| k != key);
        Some(u)
    }
}

/// A stored upload's name and size.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    /// Hex SHA-256 of the stored object.
    pub digest: String,
    pub bytes: usize,
}

impl Uploads {
    pub fn new(blobs: Arc<dyn BlobStore>) -> Self {
        Uploads {
            blobs,
            hand_off: Arc::default(),
        }
    }

    /// The store the uploads live in (batches keep their returns there too).
    pub fn blobs(&self) -> &Arc<dyn BlobStore> {
        &self.blobs
    }

    /// The object of `owner`'s upload with this content digest.
    fn key(owner: &str, digest: &str) -> String {
        let who = Sha256::digest(owner.as_bytes());
        let who: String = who[..12].iter().map(|b| format!("{b:02x}")).collect();
        format!("{PREFIX}{who}/{digest}.parquet")
    }

    /// Stores the upload for `owner`, named by the digest of its stored form,
    /// and keeps it for the job.
    pub async fn put(&self, owner: &str, upload: Arc<Upload>) -> PortResult<Stored> {
        let columns = upload.clone();
        let data = tokio::task::spawn_blocking(move || columns.to_parquet())
            .await
            .map_err(PortError::internal)??;
        let digest: String = Sha256::digest(&data)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let key = Self::key(owner, &digest);
        let bytes = data.len();
        if self.blobs.size(&key).await? != Some(bytes as u64) {
            self.blobs.put(&key, data).await?;
        }
        self.hand_off.lock().keep(key, upload);
        Ok(Stored { digest, bytes })
    }

    /// `owner`'s upload with this digest; `None` when there is none (or the
    /// digest is another owner's).
    pub async fn get(&self, owner: &str, digest: &str) -> PortResult<Option<Arc<Upload>>> {
        if digest.len() != 64 || !digest.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(None);
        }
        let key = Self::key(owner, digest);
        if let Some(u) = self.hand_off.lock().by_key.get(&key) {
            return Ok(Some(u.clone()));
        }
        self.read(&key).await
    }

    /// [`Uploads::get`] for the job that runs the upload: the hand-off is
    /// taken, so it is kept no longer than needed.
    pub async fn take(&self, owner: &str, digest: &str) -> PortResult<Option<Arc<Upload>>> {
        let key = Self::key(owner, digest);
        if let Some(u) = self.hand_off.lock().drop_key(&key) {
            return Ok(Some(u));
        }
        self.get(owner, digest).await
    }

    async fn read(&self, key: &str) -> PortResult<Option<Arc<Upload>>> {
        match self.blobs.get(key).await? {
            None => Ok(None),
            Some(data) => tokio::task::spawn_blocking(move || Upload::from_stored(data))
                .await
                .map_err(PortError::internal)?
                .map(|u| Some(Arc::new(u))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::marketdata::LocalDir;

    fn sample() -> Upload {
        let mut bars = Bars::default();
        let mut signals: [Vec<f64>; 10] = Default::default();
        for i in 0..5 {
            let d = NaiveDate::from_ymd_opt(2020, 1, 6 + i).unwrap();
            let x = 10.0 + i as f64;
            bars.push(
                d.and_hms_opt(0, 0, 0).unwrap(),
                x,
                x + 1.0,
                x - 1.0,
                x + 0.5,
                1e6,
            );
            for (k, s) in signals.iter_mut().enumerate() {
                s.push(if k == i as usize { 1.0 } else { 0.0 });
            }
        }
        Upload { bars, signals }
    }

    #[tokio::test]
    async fn stored_once_per_owner_and_read_back_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = Arc::new(LocalDir::new(dir.path()));
        let uploads = Uploads::new(blobs.clone());
        let u = Arc::new(sample());
        let a = uploads.put("a@example.com", u.clone()).await.unwrap();
        let again = uploads.put("a@example.com", u.clone()).await.unwrap();
        assert_eq!(a, again);
        assert_eq!(blobs.list(PREFIX).await.unwrap().len(), 1);
        // Handed to the job once; read back from the store after that.
        let taken = uploads
            .take("a@example.com", &a.digest)
            .await
            .unwrap()
            .unwrap();
        assert!(Arc::ptr_eq(&taken, &u));
        let read = uploads
            .take("a@example.com", &a.digest)
            .await
            .unwrap()
            .unwrap();
        assert!(!Arc::ptr_eq(&read, &u) && *read == *u);
        let fresh = Uploads::new(blobs.clone());
        assert_eq!(
            fresh
                .get("a@example.com", &a.digest)
                .await
                .unwrap()
                .as_deref(),
            Some(&*u)
        );
        // Another tenant's digest reads as absent, and so does a bad digest.
        assert_eq!(fresh.get("b@example.com", &a.digest).await.unwrap(), None);
        assert_eq!(fresh.get("a@example.com", "../x").await.unwrap(), None);
    }

    /// The stored form's columns as an Arrow stream in batches of `rows`.
    fn stream(u: &Upload, rows: usize) -> Bytes {
        let batch = read_table(u.to_parquet().unwrap(), usize::MAX)
            .unwrap()
            .batch;
        let mut out = Vec::new();
        let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &batch.schema()).unwrap();
        let mut at = 0;
        while at < batch.num_rows() {
            let n = rows.min(batch.num_rows() - at);
            w.write(&batch.slice(at, n)).unwrap();
            at += n;
        }
        w.finish().unwrap();
        drop(w);
        Bytes::from(out)
    }

    #[test]
    fn an_arrow_stream_reads_as_its_parquet_does_and_its_rows_are_bounded() {
        let u = sample();
        let read = read_stream(stream(&u, 2), usize::MAX)
            .unwrap()
            .upload()
            .unwrap();
        assert_eq!(read, u);
        // Counted batch by batch: refused at the batch that passes the bound.
        let e = read_stream(stream(&u, 2), 3).err().unwrap();
        assert!(e.contains("at most 3"), "{e}");
        assert!(read_stream(Bytes::from_static(b"\xff\xff\xff\xffnot a message"), 10).is_err());
    }

    #[test]
    fn the_hand_off_is_bounded_oldest_out_first() {
        let mut h = HandOff::default();
        let big = Arc::new(Upload {
            bars: Bars {
                time: vec![NaiveDate::MIN.and_hms_opt(0, 0, 0).unwrap(); 100_000],
                ..Bars::default()
            },
            ..Upload::default()
        });
        for k in 0..5 {
            h.keep(format!("k{k}"), big.clone());
        }
        assert!(h.bytes <= HAND_OFF_BYTES);
        assert_eq!(h.order, ["k3", "k4"]);
        assert!(h.by_key.contains_key("k4") && !h.by_key.contains_key("k0"));
    }

    /// Text decodes to any size (one long dictionary entry on every row):
    /// only fixed-width columns are read.
    #[test]
    fn signal_columns_of_zeros_are_not_stored_and_read_back_as_zeros() {
        // sample() sets signals 0-4 once each; 5-9 are zeros.
        let up = sample();
        let data = up.to_parquet().unwrap();
        let meta = ParquetRecordBatchReaderBuilder::try_new(data.clone()).unwrap();
        assert_eq!(meta.schema().fields().len(), 6 + 5);
        let back = Upload::from_stored(data).unwrap();
        assert_eq!(back.bars.close, up.bars.close);
        assert_eq!(back.bars.time, up.bars.time);
        assert_eq!(back.signals, up.signals);
    }

    #[test]
    fn text_columns_are_refused_before_decoding() {
        use arrow_array::StringArray;
        let fields = vec![
            Field::new("Date", DataType::Utf8, false),
            Field::new("Close", DataType::Float64, false),
        ];
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(vec!["2024-01-02"; 3])),
            Arc::new(Float64Array::from(vec![1.0; 3])),
        ];
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
        let data = crate::marketdata::codec::to_parquet(&batch).unwrap();
        let e = read_table(data, 10).err().unwrap();
        assert_eq!(e, "column 'Date' is Utf8; expected a date or timestamp");
    }

    #[test]
    fn a_file_over_the_row_bound_is_refused_from_its_footer() {
        let data = sample().to_parquet().unwrap();
        let e = read_table(data.clone(), 4).err().unwrap();
        assert!(e.contains("holds 5 rows; at most 4"), "{e}");
        assert_eq!(read_table(data, 5).unwrap().rows(), 5);
    }
}
