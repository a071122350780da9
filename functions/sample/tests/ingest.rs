//! Imports that append: every validation rule with a refusing or warning
//! case, overlapping sessions that must agree, a refused file writing
//! nothing, and the providers' JSON answers read from their published
//! examples.

use platform::marketdata::generation::Generation;
use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
use sample::import::{Options, Report, Severity, SymbolRows, csv_rows, ingest, read_json};
use std::sync::Arc;

const HEAD: &str = "Date,Open,High,Low,Close,Volume\n";
/// Five sessions, Monday 2024-01-08 to Friday 2024-01-12.
const WEEK: &str = "2024-01-08,10,11,9,10.5,100
2024-01-09,10.5,11,10,10.8,100
2024-01-10,10.8,11.2,10.6,11,100
2024-01-11,11,11.5,10.9,11.2,100
2024-01-12,11.2,11.6,11,11.4,100
";

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
    .unwrap()
}

async fn run(md: &ParquetMarketData, symbol: &str, body: &str) -> sample::import::Ingested {
    let text = format!("{HEAD}{body}");
    let rows = csv_rows("bars.csv", text.as_bytes(), None).unwrap();
    ingest(
        md,
        "bars.csv",
        vec![SymbolRows {
            symbol: symbol.into(),
            rows,
        }],
        Vec::new(),
        &Options::default(),
    )
    .await
    .unwrap()
}

fn rules(report: &Report, severity: Severity) -> Vec<&'static str> {
    report
        .findings
        .iter()
        .filter(|f| f.severity == severity)
        .map(|f| f.rule)
        .collect()
}

fn store() -> (tempfile::TempDir, ParquetMarketData) {
    let dir = tempfile::tempdir().unwrap();
    let md = ParquetMarketData::new(Arc::new(LocalDir::new(dir.path())));
    (dir, md)
}

#[tokio::test]
async fn a_session_is_appended_and_an_overlap_must_agree() {
    let (dir, md) = store();
    let first = run(&md, "abc", WEEK).await;
    assert!(!first.report.refused(), "{}", first.report);
    assert_eq!((first.added, first.generation), (5, Some(1)));
    // The week again (agreeing) and the Tuesday after the holiday-free Monday.
    let next = format!("{WEEK}2024-01-16,11.4,11.8,11.3,11.7,120\n");
    let done = run(&md, "ABC", &next).await;
    assert!(!done.report.refused(), "{}", done.report);
    assert_eq!((done.added, done.generation), (1, Some(2)));
    // 2024-01-15 was Martin Luther King Jr. Day: no session is missing.
    assert!(done.report.findings.is_empty(), "{}", done.report);
    let bars = md.daily("ABC").await.unwrap();
    assert_eq!(bars.len(), 6);
    assert_eq!(bars.close[5], 11.7);
    assert_eq!(done.symbols[0].last_date.to_string(), "2024-01-16");

    // A stored session with another close: refused, naming the symbol, the
    // line, the column and both values; nothing is written.
    let before = std::fs::read(dir.path().join("prices/daily/ABC.parquet")).unwrap();
    let generation = Generation::read(md.blobs().as_ref()).await.unwrap();
    let differs = "2024-01-12,11.2,11.6,11,11.5,100\n2024-01-17,11.7,12,11.6,11.9,100\n";
    let refused = run(&md, "ABC", differs).await;
    assert!(refused.report.refused());
    assert_eq!(rules(&refused.report, Severity::Error), ["overlap_differs"]);
    let f = &refused.report.findings[0];
    assert_eq!(
        (f.symbol.as_deref(), f.line, f.column.as_deref()),
        (Some("ABC"), 2, Some("Close"))
    );
    assert!(
        f.message
            .contains("2024-01-12: the file has 11.5, the stored session has 11.4"),
        "{}",
        f.message
    );
    assert_eq!(refused.generation, None);
    assert_eq!(
        std::fs::read(dir.path().join("prices/daily/ABC.parquet")).unwrap(),
        before
    );
    assert_eq!(
        Generation::read(md.blobs().as_ref()).await.unwrap(),
        generation
    );
    let report = refused.report.to_string();
    assert!(
        report.contains("refused, nothing written") && report.contains("line 2 column Close"),
        "{report}"
    );

    // --replace: the file's series stands for the stored one.
    let corrected = ingest(
        &md,
        "fix.csv",
        vec![SymbolRows {
            symbol: "ABC".into(),
            rows: csv_rows(
                "fix.csv",
                format!("{HEAD}2024-01-12,11.2,11.6,11,11.5,100\n").as_bytes(),
                None,
            )
            .unwrap(),
        }],
        Vec::new(),
        &Options {
            replace: true,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert!(!corrected.report.refused());
    assert_eq!(md.daily("ABC").await.unwrap().close, vec![11.5]);
}

#[tokio::test]
async fn every_rule_refuses_or_warns_by_name() {
    let cases: [(&str, &str, Severity); 9] = [
        (
            "2024-01-16,0,11,9,10,100",
            "non_positive_price",
            Severity::Error,
        ),
        (
            "2024-01-16,10,9,11,10,100",
            "high_below_low",
            Severity::Error,
        ),
        (
            "2024-01-16,12,11,9,10,100",
            "outside_range",
            Severity::Error,
        ),
        (
            "2024-01-16,10,11,9,10,-1",
            "negative_volume",
            Severity::Error,
        ),
        ("2024-01-16,10,11,9,NaN,100", "not_finite", Severity::Error),
        (
            "2024-01-16,10,11,9,10,100\n2024-01-16,10,11,9,10,100",
            "duplicate_date",
            Severity::Error,
        ),
        (
            "2024-01-17,10,11,9,10,100\n2024-01-16,10,11,9,10,100",
            "out_of_order",
            Severity::Error,
        ),
        // Friday to Wednesday: Tuesday the 16th is missing.
        (
            "2024-01-17,11.4,11.8,11.3,11.7,120",
            "missing_session",
            Severity::Warning,
        ),
        // Saturday.
        (
            "2024-01-13,11.4,11.8,11.3,11.7,120",
            "not_a_session",
            Severity::Warning,
        ),
    ];
    for (rows, rule, severity) in cases {
        let (_dir, md) = store();
        assert!(!run(&md, "ABC", WEEK).await.report.refused());
        let done = run(&md, "ABC", &format!("{rows}\n")).await;
        assert_eq!(rules(&done.report, severity), [rule], "{}", done.report);
        assert_eq!(done.report.refused(), severity == Severity::Error);
        let stored = md.daily("ABC").await.unwrap().len();
        match severity {
            Severity::Error => assert_eq!(stored, 5, "{rule}: nothing written"),
            Severity::Warning => assert_eq!(stored, 6, "{rule}: written"),
        }
    }
    // A move past 40% that no split explains is a warning; 39% is not.
    let (_dir, md) = store();
    assert!(!run(&md, "ABC", WEEK).await.report.refused());
    let calm = run(&md, "ABC", "2024-01-16,15,16,15,15.8,100\n").await;
    assert!(calm.report.findings.is_empty(), "{}", calm.report);
    let jump = run(&md, "ABC", "2024-01-17,7,8,7,7.5,100\n").await;
    assert_eq!(rules(&jump.report, Severity::Warning), ["unexplained_jump"]);
    assert!(
        jump.report.findings[0].message.contains("-52.5%"),
        "{}",
        jump.report
    );
}

#[tokio::test]
async fn a_file_of_many_symbols_is_refused_whole_for_one_bad_row() {
    let (dir, md) = store();
    let (parts, notes) =
        read_json("alpaca_multi.json", &fixture("alpaca_multi.json"), None).unwrap();
    let mut bad = parts.clone();
    bad[1].rows[0].ohlcv[1] = 1.0; // TSLA's High below its Low
    let refused = ingest(&md, "m.json", bad, notes.clone(), &Options::default())
        .await
        .unwrap();
    assert!(refused.report.refused());
    assert_eq!(refused.report.findings[0].symbol.as_deref(), Some("TSLA"));
    assert!(!dir.path().join("prices/daily/AAPL.parquet").exists());
    assert!(md.symbols().await.is_err());
    let done = ingest(&md, "m.json", parts, notes, &Options::default())
        .await
        .unwrap();
    assert!(!done.report.refused(), "{}", done.report);
    let names: Vec<&str> = done.symbols.iter().map(|s| s.symbol.as_str()).collect();
    assert_eq!(names, ["AAPL", "TSLA"]);
    assert_eq!(md.daily("TSLA").await.unwrap().close, vec![399.93]);
}

#[test]
fn provider_answers_read_as_their_examples_say() {
    // Polygon aggregates: the ticker from the answer, dates from the
    // timestamps (midnight in New York).
    let (parts, notes) = read_json(
        "polygon_aggregates.json",
        &fixture("polygon_aggregates.json"),
        None,
    )
    .unwrap();
    assert!(notes.is_empty());
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0].symbol, "AAPL");
    let r = &parts[0].rows;
    assert_eq!(
        (r[0].date.to_string(), r[0].ohlcv),
        (
            "2020-01-02".to_string(),
            [74.06, 75.15, 73.7975, 75.0875, 135647456.0]
        )
    );
    assert_eq!(r[1].date.to_string(), "2020-01-03");
    // Grouped daily: one bar a symbol, stamped at the close; the answer's
    // split-adjusted prices are a warning.
    let (parts, notes) = read_json(
        "polygon_grouped.json",
        &fixture("polygon_grouped.json"),
        None,
    )
    .unwrap();
    let names: Vec<&str> = parts.iter().map(|p| p.symbol.as_str()).collect();
    assert_eq!(names, ["KIMpL", "TANH", "VSAT"]);
    assert!(
        parts
            .iter()
            .all(|p| p.rows[0].date.to_string() == "2020-10-14")
    );
    assert_eq!(
        parts[2].rows[0].ohlcv,
        [34.9, 35.47, 34.21, 34.24, 312583.0]
    );
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].rule, "adjusted_prices");
    // Alpaca: one symbol, and a map of symbols.
    let (parts, _) = read_json("alpaca_bars.json", &fixture("alpaca_bars.json"), None).unwrap();
    assert_eq!(parts[0].symbol, "AAPL");
    assert_eq!(parts[0].rows[1].date.to_string(), "2022-01-04");
    assert_eq!(
        parts[0].rows[1].ohlcv,
        [182.63, 182.94, 179.12, 179.7, 99310438.0]
    );
    let (parts, _) = read_json("x.json", &fixture("alpaca_bars.json"), Some("MSFT")).unwrap();
    assert_eq!(parts[0].symbol, "MSFT");
    // Not an answer of either: named.
    let e = read_json("x.json", br#"{"data": []}"#, None).unwrap_err();
    assert!(e.to_string().contains("neither a Polygon"), "{e}");
    let e = read_json("x.json", br#"{"status": "ERROR", "results": []}"#, None).unwrap_err();
    assert!(e.to_string().contains("status is ERROR"), "{e}");
}

#[tokio::test]
async fn an_inbox_file_that_cannot_be_read_or_holds_nothing_is_refused_with_its_reason() {
    use sample::import::inbox::{BlobInbox, Inbox, LocalInbox, MAX_BYTES, REJECTED, take};
    let (dir, md) = store();
    let blobs = md.blobs().clone();
    // The directory's inbox and the bucket's (over the same directory) alike.
    let local = LocalInbox::new(dir.path());
    let bucket = BlobInbox::new(blobs.clone());
    let inboxes: [&dyn Inbox; 2] = [&local, &bucket];
    for ((name, body, rule), inbox) in [
        ("notes.txt", &b"bars"[..], "unreadable"),
        (
            "empty.json",
            &br#"{"status": "OK", "results": []}"#[..],
            "unreadable",
        ),
        // A header and no rows.
        (
            "ABC.csv",
            &b"Date,Open,High,Low,Close,Volume\n"[..],
            "no_rows",
        ),
    ]
    .into_iter()
    .flat_map(|case| inboxes.map(|inbox| (case, inbox)))
    {
        let key = format!("incoming/{name}");
        blobs
            .put(&key, bytes::Bytes::from_static(body))
            .await
            .unwrap();
        let taken = take(&md, inbox, name, MAX_BYTES, &Options::default())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            rules(&taken.report, Severity::Error),
            [rule],
            "{}",
            taken.report
        );
        assert_eq!(taken.moved_to, format!("{REJECTED}{name}"));
        assert!(blobs.get(&key).await.unwrap().is_none());
        assert!(
            blobs
                .get(&format!("{REJECTED}{name}.report.json"))
                .await
                .unwrap()
                .is_some()
        );
    }
    // A file whose symbols hold no rows at all refuses itself.
    let done = ingest(
        &md,
        "none.json",
        vec![SymbolRows {
            symbol: "ABC".into(),
            rows: Vec::new(),
        }],
        Vec::new(),
        &Options::default(),
    )
    .await
    .unwrap();
    assert_eq!(rules(&done.report, Severity::Error), ["no_rows"]);
}
