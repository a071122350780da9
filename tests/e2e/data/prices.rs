//! `GET /ws/prices/{ticker}`: the stored daily bars read back, equal to the
//! Parquet file in every format, over a range, and refusing what it cannot
//! answer naming the field.

use super::DEMO;
use engine::Bars;
use platform::marketdata::columns::Column;
use platform::marketdata::{codec, interchange, layout};
use serde_json::Value;
use tests::server::{TestServer, market_dir};

/// The symbol's bars as its file holds them.
fn stored(symbol: &str) -> Bars {
    let file = std::fs::read(market_dir().join(layout::daily_prices(symbol))).unwrap();
    codec::batch_to_bars(&codec::from_parquet(file.into()).unwrap()).unwrap()
}

/// The bars dated `from..=to` of `b`, as the table's columns.
fn expected(b: &Bars, from: &str, to: &str) -> Vec<(String, Column)> {
    let (from, to) = (from.parse().unwrap(), to.parse().unwrap());
    let rows: Vec<usize> = (0..b.len())
        .filter(|&i| (from..=to).contains(&b.date(i)))
        .collect();
    let number = |v: &[f64]| Column::Number(rows.iter().map(|&i| Some(v[i])).collect());
    vec![
        (
            "Date".into(),
            Column::Date(rows.iter().map(|&i| Some(b.date(i))).collect()),
        ),
        ("Open".into(), number(&b.open)),
        ("High".into(), number(&b.high)),
        ("Low".into(), number(&b.low)),
        ("Close".into(), number(&b.close)),
        ("Volume".into(), number(&b.volume)),
    ]
}

async fn get_with(s: &TestServer, path: &str, accept: &str) -> (u16, String, bytes::Bytes) {
    let r = reqwest::Client::new()
        .get(s.url(path))
        .basic_auth(DEMO.unwrap().0, Some(DEMO.unwrap().1))
        .header("accept", accept)
        .send()
        .await
        .unwrap();
    let media = r.headers()["content-type"].to_str().unwrap().to_string();
    (r.status().as_u16(), media, r.bytes().await.unwrap())
}

#[tokio::test(flavor = "multi_thread")]
async fn prices_equal_the_stored_bars_in_every_format() {
    let (s, _dir) = TestServer::fresh().await;
    let bars = stored("SPX");
    let (from, to) = ("2015-03-01", "2016-02-29");
    let want = expected(&bars, from, to);
    let Column::Date(dates) = &want[0].1 else {
        unreachable!()
    };
    assert!(dates.len() > 240, "a year of sessions");

    // JSON rows, by default; the symbol in any case.
    let (status, body) = s
        .get(&format!("/ws/prices/spx?start={from}&end={to}"), DEMO)
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["symbol"], "SPX");
    let rows = body["bars"].as_array().unwrap();
    assert_eq!(rows.len(), dates.len());
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(row["Date"], dates[k].unwrap().to_string());
        for (name, column) in &want[1..] {
            let Column::Number(v) = column else {
                unreachable!()
            };
            assert_eq!(row[name.as_str()].as_f64(), v[k], "{name} of row {k}");
        }
    }

    // The table forms, by `format` and by `Accept`: the same values.
    let path = format!("/ws/prices/SPX?start={from}&end={to}");
    for (asked, accept, media) in [
        ("&format=arrow", "*/*", interchange::ARROW_STREAM),
        ("", interchange::ARROW_STREAM, interchange::ARROW_STREAM),
        ("&format=parquet", "*/*", "application/vnd.apache.parquet"),
        (
            "",
            "application/vnd.apache.parquet",
            "application/vnd.apache.parquet",
        ),
    ] {
        let (status, got, body) = get_with(&s, &format!("{path}{asked}"), accept).await;
        assert_eq!((status, got.as_str()), (200, media), "{asked} {accept}");
        let table = if media == interchange::ARROW_STREAM {
            interchange::from_arrow_stream(&body).unwrap().0
        } else {
            platform::marketdata::columns::all(&codec::from_parquet(body).unwrap())
        };
        assert_eq!(table, want, "{asked} {accept}");
    }
    for (asked, accept) in [("&format=csv", "application/json"), ("", "text/csv")] {
        let (status, media, body) = get_with(&s, &format!("{path}{asked}"), accept).await;
        assert_eq!((status, media.as_str()), (200, "text/csv; charset=utf-8"));
        let text = String::from_utf8(body.to_vec()).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("Date,Open,High,Low,Close,Volume"));
        let lines: Vec<&str> = lines.collect();
        assert_eq!(lines.len(), dates.len());
        for (k, line) in lines.iter().enumerate() {
            let cells: Vec<&str> = line.split(',').collect();
            assert_eq!(cells[0], dates[k].unwrap().to_string());
            for (c, (name, column)) in want[1..].iter().enumerate() {
                let Column::Number(v) = column else {
                    unreachable!()
                };
                // The shortest text that reads back to the stored value.
                assert_eq!(cells[c + 1].parse::<f64>().ok(), v[k], "{name} of row {k}");
            }
        }
    }

    // Without a range: every stored session.
    let (_, all) = s.get("/ws/prices/SPX", DEMO).await;
    assert_eq!(all["bars"].as_array().unwrap().len(), bars.len());
    // A range with no session (a weekend) is empty, not an error.
    let (status, none) = s
        .get("/ws/prices/SPX?start=2016-01-02&end=2016-01-03", DEMO)
        .await;
    assert_eq!((status, none["bars"].as_array().unwrap().len()), (200, 0));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn prices_refuse_naming_the_field() {
    let (s, _dir) = TestServer::fresh().await;
    for (path, status, field) in [
        ("/ws/prices/NOSUCH", 404, "ticker"),
        ("/ws/prices/SPX?start=2016-13-01", 400, "start"),
        ("/ws/prices/SPX?end=yesterday", 400, "end"),
        (
            "/ws/prices/SPX?start=2016-02-01&end=2016-01-01",
            400,
            "start",
        ),
        ("/ws/prices/SPX?format=xlsx", 400, "format"),
        ("/ws/prices/SPX?adjusted=maybe", 400, "adjusted"),
        // Not a name a symbol can have: no such symbol.
        ("/ws/prices/%F0%91%9A%83%C3%91", 404, "ticker"),
    ] {
        let (got, body): (u16, Value) = s.get(path, DEMO).await;
        assert_eq!(got, status, "{path}: {body}");
        assert!(body.to_string().contains(field), "{path}: {body}");
    }
    s.stop().await;
}
