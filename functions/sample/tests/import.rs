//! Importers: good files in every layout, each kind of bad row named precisely,
//! failed imports leave the store untouched, and data round-trips exactly.

use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use platform::marketdata::{LocalDir, MarketData, ParquetMarketData, codec};
use sample::import::{CsvLayout, ImportError, SymbolDetails, read_csv, read_parquet, store_daily};
use std::sync::Arc;

const YAHOO: &str = "Date,Open,High,Low,Close,Adj Close,Volume
2024-01-02,187.15,188.44,183.89,185.64,184.94,82488700
2024-01-03,184.22,185.88,183.43,184.25,183.55,58414500
2024-01-04,182.15,183.09,180.88,181.91,181.22,71983600
";
const STOOQ: &str = "<TICKER>,<PER>,<DATE>,<TIME>,<OPEN>,<HIGH>,<LOW>,<CLOSE>,<VOL>,<OPENINT>
AAPL.US,D,20240102,000000,187.15,188.44,183.89,185.64,82488700,0
AAPL.US,D,20240103,000000,184.22,185.88,183.43,184.25,58414500,0
AAPL.US,D,20240104,000000,182.15,183.09,180.88,181.91,71983600,0
";
const PLAIN: &str = "Date,Open,High,Low,Close,Volume
2024-01-02,187.15,188.44,183.89,185.64,82488700
2024-01-03,184.22,185.88,183.43,184.25,58414500
2024-01-04,182.15,183.09,180.88,181.91,71983600
";

#[test]
fn every_layout_reads_the_same_bars() {
    let y = read_csv("y.csv", YAHOO.as_bytes(), None).unwrap();
    let s = read_csv("s.csv", STOOQ.as_bytes(), None).unwrap();
    let p = read_csv("p.csv", PLAIN.as_bytes(), Some(CsvLayout::Plain)).unwrap();
    assert_eq!(y, s);
    assert_eq!(y, p);
    assert_eq!(y.close, vec![185.64, 184.25, 181.91]);
    assert_eq!(y.high[0], 188.44);
    assert_eq!(y.volume[2], 71983600.0);
}

fn bad(body: &str) -> ImportError {
    let text = format!("Date,Open,High,Low,Close,Volume\n2024-01-02,10,11,9,10,100\n{body}\n");
    read_csv("bad.csv", text.as_bytes(), None).unwrap_err()
}

#[test]
fn each_bad_row_kind_names_file_line_and_column() {
    let cases = [
        ("2024-13-45,10,11,9,10,100", "Date", "is not a date"),
        (
            "2024-01-03,ten,11,9,10,100",
            "Open",
            "'ten' is not a number",
        ),
        (
            "2024-01-03,10,11,9,null,100",
            "Close",
            "'null' is not a number",
        ),
        (
            "2024-01-03,10,9,11,10,100",
            "High",
            "High 9 is below Low 11",
        ),
        (
            "2024-01-02,10,11,9,10,100",
            "Date",
            "duplicate date 2024-01-02 (first on line 2)",
        ),
        (
            "2024-01-01,10,11,9,10,100",
            "Date",
            "before the previous row's 2024-01-02",
        ),
        ("2024-01-03,10,11,9,10,-5", "Volume", "negative"),
        (
            "2024-01-03,12,11,9,10,100",
            "Open",
            "outside the Low-High range",
        ),
    ];
    for (row, column, text) in cases {
        let e = bad(row);
        assert_eq!(
            (e.file.as_str(), e.line, e.column.as_deref()),
            ("bad.csv", 3, Some(column)),
            "{row}: {e}"
        );
        assert!(e.message.contains(text), "{row}: {e}");
        assert!(
            e.to_string()
                .starts_with(&format!("bad.csv: line 3, column {column}: ")),
            "{e}"
        );
    }
    let e = read_csv("h.csv", b"Day,Price\n1,2\n", None).unwrap_err();
    assert!(e.to_string().contains("unrecognised header"), "{e}");
    let e = read_csv("h.csv", b"Date,Open,High,Low,Close,Volume\n", None).unwrap_err();
    assert!(e.to_string().contains("no data rows"), "{e}");
}

fn parquet_file(dates: Vec<&str>, close: Vec<f64>) -> bytes::Bytes {
    let n = dates.len();
    let schema = Arc::new(Schema::new(vec![
        Field::new("Date", DataType::Utf8, false),
        Field::new("open", DataType::Float64, false),
        Field::new("high", DataType::Float64, false),
        Field::new("low", DataType::Float64, false),
        Field::new("close", DataType::Float64, false),
        Field::new("volume", DataType::Int64, false),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(dates)),
        Arc::new(Float64Array::from(close.clone())),
        Arc::new(Float64Array::from(
            close.iter().map(|c| c + 1.0).collect::<Vec<_>>(),
        )),
        Arc::new(Float64Array::from(
            close.iter().map(|c| c - 1.0).collect::<Vec<_>>(),
        )),
        Arc::new(Float64Array::from(close)),
        Arc::new(Int64Array::from(vec![1000i64; n])),
    ];
    codec::to_parquet(&RecordBatch::try_new(schema, cols).unwrap()).unwrap()
}

#[test]
fn parquet_files_with_other_types_and_names_import() {
    let b = read_parquet(
        "x.parquet",
        parquet_file(vec!["2024-01-02", "2024-01-03"], vec![10.0, 11.0]),
    )
    .unwrap();
    assert_eq!(b.close, vec![10.0, 11.0]);
    assert_eq!(b.volume, vec![1000.0, 1000.0]);
    let e = read_parquet(
        "x.parquet",
        parquet_file(vec!["2024-01-03", "2024-01-02"], vec![10.0, 11.0]),
    )
    .unwrap_err();
    assert_eq!((e.line, e.column.as_deref()), (2, Some("Date")));
    assert!(
        e.to_string().starts_with("x.parquet: row 2, column Date:"),
        "{e}"
    );
    let e = read_parquet("junk.parquet", bytes::Bytes::from_static(b"not parquet")).unwrap_err();
    assert!(e.to_string().contains("not a readable Parquet file"), "{e}");
}

#[tokio::test]
async fn import_round_trips_and_failed_import_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let md = ParquetMarketData::new(Arc::new(LocalDir::new(dir.path())));
    let bars = read_csv("aapl.csv", YAHOO.as_bytes(), None).unwrap();
    let info = store_daily(
        &md,
        "aapl",
        &bars,
        SymbolDetails {
            name: Some("Apple".into()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(
        (info.symbol.as_str(), info.name.as_str()),
        ("AAPL", "Apple")
    );
    let back = md.daily("AAPL").await.unwrap();
    assert_eq!(*back, bars);
    let symbols = md.symbols().await.unwrap();
    assert_eq!(symbols.len(), 1);
    assert_eq!(symbols[0].last_date.to_string(), "2024-01-04");

    // A bad file is refused before anything is written.
    let before = std::fs::read(dir.path().join("prices/daily/AAPL.parquet")).unwrap();
    let broken = format!("{PLAIN}2024-01-05,1,2,3,1.5,10\n");
    assert!(read_csv("aapl.csv", broken.as_bytes(), None).is_err());
    // Writing invalid bars through the store is refused too.
    let mut wrong = bars.clone();
    wrong.high[1] = 1.0;
    assert!(md.write_daily("AAPL", &wrong).await.is_err());
    assert_eq!(
        std::fs::read(dir.path().join("prices/daily/AAPL.parquet")).unwrap(),
        before
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("prices/daily"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");

    // Re-importing keeps catalog details and updates dates.
    let more = read_csv(
        "aapl.csv",
        PLAIN
            .lines()
            .take(3)
            .collect::<Vec<_>>()
            .join("\n")
            .as_bytes(),
        None,
    )
    .unwrap();
    let info = store_daily(&md, "AAPL", &more, SymbolDetails::default())
        .await
        .unwrap();
    assert_eq!(
        (info.name.as_str(), info.last_date.to_string().as_str()),
        ("Apple", "2024-01-03")
    );
    assert_eq!(md.daily("AAPL").await.unwrap().len(), 2);
}

#[test]
fn a_parquet_footer_that_understates_its_rows_is_refused_as_they_are_decoded() {
    use arrow_array::{Date32Array, Float64Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};
    use std::sync::Arc;
    // One more row than a daily series holds, written honestly...
    let n = sample::import::MAX_ROWS + 1;
    let price = || Arc::new(Float64Array::from(vec![10.0; n])) as Arc<dyn arrow_array::Array>;
    let schema = Arc::new(Schema::new(
        ["date", "open", "high", "low", "close", "volume"]
            .iter()
            .enumerate()
            .map(|(k, name)| {
                let kind = if k == 0 {
                    DataType::Date32
                } else {
                    DataType::Float64
                };
                Field::new(*name, kind, false)
            })
            .collect::<Vec<_>>(),
    ));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Date32Array::from(vec![19730; n])),
            price(),
            price(),
            price(),
            price(),
            price(),
        ],
    )
    .unwrap();
    let mut file = Vec::new();
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut file, schema, None).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    // ...then its footer's count (field 3 of the file's metadata, a zigzag
    // varint after the field header 0x16) made to say 5, in as many bytes.
    let len = file.len();
    let footer = len - 8 - u32::from_le_bytes(file[len - 8..len - 4].try_into().unwrap()) as usize;
    let honest = [0x16, 0xC2, 0x9A, 0x0C]; // zigzag(100,001) = 200,002
    let at = footer
        + file[footer..]
            .windows(4)
            .position(|w| w == honest)
            .expect("the footer's count");
    file[at + 1..at + 4].copy_from_slice(&[0x8A, 0x80, 0x00]);
    let data = bytes::Bytes::from(file);
    let told = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(data.clone())
        .unwrap()
        .metadata()
        .file_metadata()
        .num_rows();
    assert_eq!(told, 5, "the footer lies");
    let e = sample::import::parquet_rows_from("LIE.parquet", data).unwrap_err();
    assert!(e.message.contains("more than 100000 rows"), "{e}");
}
