//! Compressed answers (docs/decisions.md, "Compression inside the budget"):
//! a tenant's JSON, CSV or HTML answer of `MIN_BYTES` or more comes in the
//! encoding the request accepts, decodes to the answer an uncompressed
//! request gets, and its compression counts as the caller's compute in
//! `/usage`; smaller answers and errors come as they are; Arrow streams and
//! Parquet files are never Content-Encoded, and an Arrow stream asked for
//! with `compression=zstd|lz4` reads back as the same table. The catalogs
//! (compressed once and kept) and the public documents come compressed
//! whatever their size. The fairness of it under load (64 compressed
//! correlations from one tenant, another tenant's cheap read) is the soak's
//! phase 9 (tests/soak/heavy.rs).

use api::compression::MIN_BYTES;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::interchange::{ARROW_STREAM, from_arrow_stream};
use serde_json::{Value, json};
use std::io::Read;
use tests::server::TestServer;

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

struct Answer {
    status: u16,
    encoding: Option<String>,
    content_type: String,
    vary: bool,
    body: Vec<u8>,
}

/// A request: a path to GET, or a path and a JSON body to POST.
#[derive(Clone, Copy)]
struct Ask<'a> {
    path: &'a str,
    body: Option<&'a Value>,
    credentials: Option<(&'a str, &'a str)>,
}

fn get(path: &str) -> Ask<'_> {
    Ask {
        path,
        body: None,
        credentials: DEMO,
    }
}

fn public(path: &str) -> Ask<'_> {
    Ask {
        path,
        body: None,
        credentials: None,
    }
}

async fn fetch(server: &TestServer, ask: Ask<'_>, encoding: Option<&str>) -> Answer {
    fetch_as(server, ask, encoding, None).await
}

async fn fetch_as(
    server: &TestServer,
    ask: Ask<'_>,
    encoding: Option<&str>,
    accept: Option<&str>,
) -> Answer {
    let client = reqwest::Client::new();
    let mut req = match ask.body {
        Some(b) => client.post(server.url(ask.path)).json(b),
        None => client.get(server.url(ask.path)),
    };
    if let Some((u, p)) = ask.credentials {
        req = req.basic_auth(u, Some(p));
    }
    if let Some(a) = encoding {
        req = req.header("accept-encoding", a);
    }
    if let Some(a) = accept {
        req = req.header("accept", a);
    }
    let r = req.send().await.unwrap();
    let header = |name: &str| {
        r.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    };
    // Vary may come as several headers (one per layer that varies).
    let vary = r.headers().get_all("vary").iter().any(|v| {
        v.to_str()
            .unwrap()
            .to_ascii_lowercase()
            .contains("accept-encoding")
    });
    let encoding = header("content-encoding");
    let content_type = header("content-type").unwrap_or_default();
    Answer {
        status: r.status().as_u16(),
        encoding,
        content_type,
        vary,
        body: r.bytes().await.unwrap().to_vec(),
    }
}

fn decoded(a: &Answer) -> Vec<u8> {
    let mut out = Vec::new();
    match a.encoding.as_deref() {
        Some("gzip") => {
            flate2::read::GzDecoder::new(&a.body[..])
                .read_to_end(&mut out)
                .unwrap();
        }
        Some("br") => {
            brotli::Decompressor::new(&a.body[..], 4096)
                .read_to_end(&mut out)
                .unwrap();
        }
        None => out = a.body.clone(),
        Some(other) => panic!("encoding {other}"),
    }
    out
}

/// The accepted encodings, and the one each `Accept-Encoding` gets when
/// the answer is compressed as it is made (on a tie gzip, the cheaper).
const ACCEPTED: [(&str, &str); 5] = [
    ("gzip", "gzip"),
    ("br", "br"),
    ("gzip, deflate, br", "gzip"),
    ("br;q=0.5, gzip", "gzip"),
    ("br, gzip;q=0.5", "br"),
];

/// The encoding an answer compressed once and kept gets: brotli on a tie.
fn kept_encoding(accept: &str, made: &'static str) -> &'static str {
    if accept == "gzip, deflate, br" {
        "br"
    } else {
        made
    }
}

/// The heavy correlation of the campaign: SPX against ten tickers over
/// the whole sample history, rolling over five sessions (a 2.9 MB JSON
/// answer, 0.9 MB as Arrow).
fn heavy_correlation() -> Value {
    json!({"benchmark": "SPX",
        "stock_comparison": ["IVV", "IJH", "IJR", "EFA", "EEM", "AGG", "TLT", "GLD", "DBC", "HYG"],
        "start_date": "1990-01-02", "end_date": "2026-12-31", "roll_window": 5})
}

async fn compute_ms(server: &TestServer, kind: &str) -> u64 {
    server
        .state
        .metering
        .as_ref()
        .unwrap()
        .flush()
        .await
        .unwrap();
    let (status, usage) = server.get("/usage", DEMO).await;
    assert_eq!(status, 200, "{usage}");
    usage["total"]["compute_ms"][kind].as_u64().unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn large_answers_come_in_the_accepted_encoding_and_decode_to_the_same_bytes() {
    let (server, _dir) = TestServer::fresh().await;
    let corr = heavy_correlation();
    for (ask, kept) in [
        // Catalogs, compressed once and kept: whatever their size.
        (get("/backtest/indicators/list"), true),
        (get("/ws/getAllSymbolswithIndexes"), true),
        (get("/ws/getAllSymbols"), true),
        // Computed answers past the threshold: JSON and CSV.
        (get("/ws/getSymbolDataLimitDays/SPX_OPTIX?days=3000"), false),
        (get("/ws/prices/SPX?format=csv"), false),
        (
            Ask {
                path: "/symbol_corr",
                body: Some(&corr),
                credentials: DEMO,
            },
            false,
        ),
        // The public document, compressed once per encoding.
        (public("/openapi.json"), true),
        (public("/docs/swagger-ui.css"), true),
    ] {
        let path = ask.path;
        let plain = fetch(&server, ask, None).await;
        assert_eq!(
            (plain.status, plain.encoding.as_deref()),
            (200, None),
            "{path}"
        );
        assert!(plain.vary, "{path}: Vary: accept-encoding");
        assert!(
            kept || plain.body.len() >= MIN_BYTES,
            "{path}: {} bytes, under the threshold",
            plain.body.len()
        );
        let mut sizes = vec![plain.body.len()];
        for (accept, encoding) in ACCEPTED {
            let encoding = if kept {
                kept_encoding(accept, encoding)
            } else {
                encoding
            };
            let a = fetch(&server, ask, Some(accept)).await;
            assert_eq!(a.status, 200, "{path} {accept}");
            assert_eq!(a.encoding.as_deref(), Some(encoding), "{path} {accept}");
            assert_eq!(a.content_type, plain.content_type, "{path} {accept}");
            assert!(a.vary, "{path} {accept}: Vary: accept-encoding");
            assert!(
                decoded(&a) == plain.body,
                "{path} {accept}: decodes to the same bytes"
            );
            if accept == encoding {
                sizes.push(a.body.len());
            }
        }
        if sizes[0] > 500 {
            assert!(
                sizes[1] < sizes[0] && sizes[2] < sizes[0],
                "{path}: {sizes:?}"
            );
        }
        println!(
            "{path}: {} bytes, gzip {} ({:.1}%), br {} ({:.1}%)",
            sizes[0],
            sizes[1],
            100.0 * sizes[1] as f64 / sizes[0] as f64,
            sizes[2],
            100.0 * sizes[2] as f64 / sizes[0] as f64
        );
    }
    // Only identity accepted: the plain body.
    let a = fetch(&server, get("/backtest/indicators/list"), Some("identity")).await;
    assert_eq!(a.encoding, None);
    let a = fetch(
        &server,
        Ask {
            path: "/symbol_corr",
            body: Some(&corr),
            credentials: DEMO,
        },
        Some("identity"),
    )
    .await;
    assert_eq!(a.encoding, None);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn small_answers_errors_and_small_public_ones_come_as_they_are() {
    let (server, _dir) = TestServer::fresh().await;
    for (ask, status) in [
        (get("/seasonality/performance-by-month?ticker=SPX"), 200),
        (get("/backtest/indicators/list?type=optix"), 200),
        (get("/ws/getSymbolDataLimitDays/SPX_OPTIX?days=300"), 200),
        (get("/backtest/tasks?limit=1"), 200),
        // Errors in the three envelopes.
        (
            get("/backtest/status/00000000-0000-0000-0000-000000000000"),
            404,
        ),
        (
            get("/seasonality/performance-by-month?ticker=SPX&start_year=abc"),
            400,
        ),
        (get("/ws/getSymbolData/NO_SUCH_INDICATOR_AT_ALL"), 404),
        (
            public("/backtest/status/00000000-0000-0000-0000-000000000000"),
            401,
        ),
        // Public and small.
        (public("/health"), 200),
        (public("/backtest/tutorial"), 200),
        (public("/docs"), 200),
        // A page: its data come from the API afterwards.
        (
            get(
                "/views/correlation?benchmark=SPX&stock_comparison=IVV,TLT&start_date=2000-01-03&end_date=2024-12-31",
            ),
            200,
        ),
    ] {
        let path = ask.path;
        let plain = fetch(&server, ask, None).await;
        assert_eq!(plain.status, status, "{path}");
        assert!(
            plain.body.len() < MIN_BYTES,
            "{path}: {} bytes",
            plain.body.len()
        );
        for (accept, _) in ACCEPTED {
            let a = fetch(&server, ask, Some(accept)).await;
            assert_eq!(
                (a.status, a.encoding.as_deref()),
                (status, None),
                "{path} {accept}"
            );
            if status == 200 && !path.ends_with("/tutorial") && path != "/health" {
                // The body is the same unless it names the time.
                assert_eq!(a.body.len(), plain.body.len(), "{path} {accept}");
            }
        }
    }
    // Nothing was compressed, so nothing was counted.
    assert_eq!(compute_ms(&server, "compression").await, 0);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_compressed_answer_counts_as_the_callers_compute() {
    let (server, _dir) = TestServer::fresh().await;
    let corr = heavy_correlation();
    let ask = Ask {
        path: "/symbol_corr",
        body: Some(&corr),
        credentials: DEMO,
    };
    let plain = fetch(&server, ask, Some("identity")).await;
    assert_eq!((plain.status, plain.encoding), (200, None));
    assert_eq!(
        compute_ms(&server, "compression").await,
        0,
        "identity costs nothing"
    );
    let mut counted = 0;
    for (accept, encoding) in [("gzip", "gzip"), ("br", "br")] {
        let a = fetch(&server, ask, Some(accept)).await;
        assert_eq!(a.encoding.as_deref(), Some(encoding));
        // Each compressed answer adds its run time on the pool (1 ms at least).
        let now = compute_ms(&server, "compression").await;
        assert!(now > counted, "{accept}: {counted} -> {now}");
        counted = now;
    }
    // The correlation's own compute is counted apart.
    assert!(compute_ms(&server, "symbol_corr").await > 0);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn arrow_and_parquet_answers_are_never_content_encoded() {
    let (server, _dir) = TestServer::fresh().await;
    let corr = heavy_correlation();
    let ask = Ask {
        path: "/symbol_corr",
        body: Some(&corr),
        credentials: DEMO,
    };
    let plain = fetch_as(&server, ask, None, Some(ARROW_STREAM)).await;
    assert_eq!(plain.status, 200);
    assert_eq!(plain.content_type, ARROW_STREAM);
    assert!(plain.body.len() >= MIN_BYTES, "{}", plain.body.len());
    let (table, metadata) = from_arrow_stream(&plain.body).unwrap();
    for (accept, _) in ACCEPTED {
        let a = fetch_as(&server, ask, Some(accept), Some(ARROW_STREAM)).await;
        assert_eq!((a.status, a.encoding.as_deref()), (200, None), "{accept}");
        assert_eq!(a.content_type, ARROW_STREAM, "{accept}");
        assert_eq!(
            from_arrow_stream(&a.body).unwrap(),
            (table.clone(), metadata.clone())
        );
    }
    for path in [
        "/ws/prices/SPX?format=parquet",
        "/ws/prices/SPX?format=arrow",
    ] {
        let plain = fetch(&server, get(path), None).await;
        assert_eq!(plain.status, 200, "{path}");
        assert!(
            plain.body.len() >= MIN_BYTES,
            "{path}: {}",
            plain.body.len()
        );
        for (accept, _) in ACCEPTED {
            let a = fetch(&server, get(path), Some(accept)).await;
            assert_eq!(
                (a.status, a.encoding.as_deref()),
                (200, None),
                "{path} {accept}"
            );
            assert!(a.body == plain.body, "{path} {accept}: the same bytes");
        }
    }
    assert_eq!(compute_ms(&server, "compression").await, 0);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn arrow_with_its_own_zstd_or_lz4_reads_back_as_the_same_table() {
    let (server, _dir) = TestServer::fresh().await;
    let corr = heavy_correlation();
    let ask = Ask {
        path: "/symbol_corr",
        body: Some(&corr),
        credentials: DEMO,
    };
    let plain = fetch_as(&server, ask, Some("gzip, br"), Some(ARROW_STREAM)).await;
    let want = from_arrow_stream(&plain.body).unwrap();
    assert_eq!(want.1["code"], "211");
    let mut counted = 0;
    for (ask, codec) in [
        (ask, "zstd"),
        (ask, "lz4"),
        (get("/ws/prices/SPX?format=arrow"), "zstd"),
    ] {
        let accept = format!("application/json;q=0.5, {ARROW_STREAM}; compression={codec}");
        let plain = fetch_as(&server, ask, None, Some(ARROW_STREAM)).await;
        let a = fetch_as(&server, ask, Some("gzip, br"), Some(&accept)).await;
        assert_eq!(
            (a.status, a.encoding.as_deref()),
            (200, None),
            "{} {codec}",
            ask.path
        );
        assert_eq!(
            a.content_type,
            format!("{ARROW_STREAM}; compression={codec}"),
            "{}",
            ask.path
        );
        assert!(a.body != plain.body, "{} {codec}: re-encoded", ask.path);
        assert_eq!(
            from_arrow_stream(&a.body).unwrap(),
            from_arrow_stream(&plain.body).unwrap(),
            "{} {codec}",
            ask.path
        );
        println!(
            "{} as Arrow: {} bytes, {codec} {} ({:.1}%)",
            ask.path,
            plain.body.len(),
            a.body.len(),
            100.0 * a.body.len() as f64 / plain.body.len() as f64
        );
        let now = compute_ms(&server, "compression").await;
        assert!(now > counted, "{} {codec}: {counted} -> {now}", ask.path);
        counted = now;
    }
    server.stop().await;
}
