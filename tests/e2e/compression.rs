//! Compressed answers: a request that accepts gzip or br gets that encoding,
//! and the body decodes to the JSON an uncompressed request gets, for the
//! catalogs (compressed once and kept), a computed answer and errors in
//! each service's envelope.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::Value;
use std::io::Read;
use tests::server::TestServer;

struct Answer {
    status: u16,
    encoding: Option<String>,
    vary: bool,
    body: Vec<u8>,
}

async fn fetch(server: &TestServer, path: &str, accept: Option<&str>) -> Answer {
    let mut req = reqwest::Client::new()
        .get(server.url(path))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD));
    if let Some(a) = accept {
        req = req.header("accept-encoding", a);
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
    Answer {
        status: r.status().as_u16(),
        encoding,
        vary,
        body: r.bytes().await.unwrap().to_vec(),
    }
}

fn decode(a: &Answer) -> Value {
    let mut text = String::new();
    match a.encoding.as_deref() {
        Some("gzip") => {
            flate2::read::GzDecoder::new(&a.body[..])
                .read_to_string(&mut text)
                .unwrap();
        }
        Some("br") => {
            brotli::Decompressor::new(&a.body[..], 4096)
                .read_to_string(&mut text)
                .unwrap();
        }
        None => text = String::from_utf8(a.body.clone()).unwrap(),
        Some(other) => panic!("encoding {other}"),
    }
    serde_json::from_str(&text).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn accepted_encodings_decode_to_the_same_json() {
    let (server, _dir) = TestServer::fresh().await;
    for (path, status) in [
        // Catalogs, compressed once.
        ("/backtest/indicators/list", 200),
        ("/ws/getAllSymbolswithIndexes", 200),
        ("/ws/getAllSymbols", 200),
        // A filtered list and a computed answer, compressed by the layer.
        ("/backtest/indicators/list?type=optix", 200),
        ("/seasonality/performance-by-month?ticker=SPX", 200),
        ("/ws/getSymbolDataLimitDays/SPX_OPTIX?days=300", 200),
        // Errors in the three envelopes.
        ("/backtest/status/00000000-0000-0000-0000-000000000000", 404),
        (
            "/seasonality/performance-by-month?ticker=SPX&start_year=abc",
            400,
        ),
        ("/ws/getSymbolData/NO_SUCH_INDICATOR_AT_ALL", 404),
    ] {
        let plain = fetch(&server, path, None).await;
        assert_eq!(
            (plain.status, plain.encoding.as_deref()),
            (status, None),
            "{path}"
        );
        let want = decode(&plain);
        let mut sizes = vec![plain.body.len()];
        for (accept, encoding) in [
            ("gzip", "gzip"),
            ("br", "br"),
            ("gzip, deflate, br", "br"),
            ("br;q=0.5, gzip", "gzip"),
        ] {
            let a = fetch(&server, path, Some(accept)).await;
            assert_eq!(a.status, status, "{path} {accept}");
            assert_eq!(a.encoding.as_deref(), Some(encoding), "{path} {accept}");
            assert!(a.vary, "{path} {accept}: Vary: accept-encoding");
            assert_eq!(decode(&a), want, "{path} {accept}");
            if accept == encoding {
                sizes.push(a.body.len());
            }
        }
        // A few dozen bytes do not shrink; anything of size does.
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
    // Nothing accepted, or only identity: the plain body.
    let a = fetch(&server, "/backtest/indicators/list", Some("identity")).await;
    assert_eq!(a.encoding, None);
    server.stop().await;
}
