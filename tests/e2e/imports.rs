//! Reference tables imported from CSV and Parquet, and served.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::{LocalDir, MarketData, ParquetMarketData, columns};
use std::sync::Arc;
use tests::server::{TestServer, market_dir};

const USER: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

/// A table as CSV text: every text quoted, numbers in their shortest exact form.
fn to_csv(b: &platform::marketdata::RecordBatch) -> String {
    use columns::Column;
    let cols = columns::all(b);
    let mut out = cols
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for i in 0..b.num_rows() {
        let cells: Vec<String> = cols
            .iter()
            .map(|(_, c)| match c {
                Column::Text(v) => v[i]
                    .as_ref()
                    .map_or(String::new(), |s| format!("\"{}\"", s.replace('"', "\"\""))),
                Column::Number(v) => v[i].map_or(String::new(), |x| x.to_string()),
                Column::Integer(v) => v[i].map_or(String::new(), |x| x.to_string()),
                Column::Date(v) => v[i].map_or(String::new(), |d| d.to_string()),
                Column::Time(v) => v[i].map_or(String::new(), |t| {
                    t.format("%Y-%m-%d %H:%M:%S%.f").to_string()
                }),
            })
            .collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn every_table_imports_from_csv_and_parquet_and_is_served() {
    use clap::Parser;
    let source = ParquetMarketData::new(Arc::new(LocalDir::new(market_dir())));
    let data = tempfile::tempdir().unwrap();
    let market = data.path().join("market");
    tests::server::sample_into(&market);
    let run = |args: Vec<String>| {
        let mut argv = vec![
            "marketlab".to_string(),
            "--data-dir".into(),
            data.path().display().to_string(),
            "import".into(),
            "table".into(),
        ];
        argv.extend(args);
        marketlab::cli::run(marketlab::cli::Cli::parse_from(argv))
    };
    let files = tempfile::tempdir().unwrap();
    for (name, _) in sample::schema::TABLES {
        let original = source.table(name).await.unwrap();
        // CSV: written by hand, read back to the same table.
        let csv = files.path().join(format!("{name}.csv"));
        std::fs::write(&csv, to_csv(&original)).unwrap();
        run(vec![
            "--name".into(),
            name.into(),
            csv.display().to_string(),
        ])
        .await
        .unwrap();
        let fresh = ParquetMarketData::new(Arc::new(LocalDir::new(&market)));
        assert_eq!(
            *fresh.table(name).await.unwrap(),
            *original,
            "{name} from CSV"
        );
        // Parquet: the served file itself.
        let pq = files.path().join(format!("{name}.parquet"));
        std::fs::copy(
            market_dir().join(platform::marketdata::layout::table(name)),
            &pq,
        )
        .unwrap();
        run(vec!["--name".into(), name.into(), pq.display().to_string()])
            .await
            .unwrap();
        let fresh = ParquetMarketData::new(Arc::new(LocalDir::new(&market)));
        assert_eq!(
            *fresh.table(name).await.unwrap(),
            *original,
            "{name} from Parquet"
        );
    }
    // Refusals name the file, line and column; nothing is written.
    let bad = files.path().join("bad.csv");
    for (name, text, want) in [
        (
            "reports",
            "type,title\nquantedge,x\n",
            "missing column 'post_content'",
        ),
        (
            "price_targets",
            "symbol,date,target_mean,price_min,price_max,num,accuracy_mean\nAAPL,2026-01-02,abc,1,2,3,4\n",
            "line 2, column target_mean",
        ),
        (
            "price_targets",
            "symbol,date,target_mean,price_min,price_max,num,accuracy_mean\n,2026-01-02,1,1,2,3,4\n",
            "column symbol",
        ),
        (
            "analyst_ratings",
            "symbol,date,strong_buy,buy,hold,sell,strong_sell\nAAPL,01/02/2026,1,2,3,4,5\n",
            "column date",
        ),
        ("nonsense", "a\n1\n", "not a served table"),
    ] {
        std::fs::write(&bad, text).unwrap();
        let e = run(vec![
            "--name".into(),
            name.into(),
            bad.display().to_string(),
        ])
        .await
        .unwrap_err();
        assert!(e.to_string().contains(want), "{name}: {e}");
    }
    // A user's own table is what the server answers with.
    let profiles = source.table("profiles").await.unwrap();
    let renamed = to_csv(&profiles).replace("\"Apple Inc.\"", "\"Apple Computer, Inc.\"");
    assert_ne!(renamed, to_csv(&profiles));
    let csv = files.path().join("profiles.csv");
    std::fs::write(&csv, renamed).unwrap();
    run(vec![
        "--name".into(),
        "profiles".into(),
        csv.display().to_string(),
    ])
    .await
    .unwrap();
    let mut opts = tests::server::Options::new(data.path().join("tasks.sqlite"));
    opts.market_dir = market.clone();
    let s = TestServer::start(opts).await;
    let (_, p) = s.get("/company_detail/get_profile?symbol=AAPL", USER).await;
    assert_eq!(p["data"]["profile"]["companyName"], "Apple Computer, Inc.");
    s.stop().await;
}
