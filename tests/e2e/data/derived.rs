//! Derived series of the data service: custom indicators and seasonality-month
//! symbols, and the answer when the catalog is unavailable.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn custom_indicators_list_and_calculate() {
    let (s, _dir) = server().await;
    let (status, list) = s.get("/ws/getUserIndicators", DEMO).await;
    assert_eq!(status, 200);
    let urls: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["url"].as_str().unwrap())
        .collect();
    assert_eq!(
        urls,
        ["CUSTOM_TECH_SPREAD", "CUSTOM_OPTIX_AAII"],
        "newest first by default"
    );
    let first = &list[1];
    assert_eq!(
        (
            first["indicator_1_url"].as_str(),
            first["indicator_2_url"].as_str(),
            first["calculate"].as_str(),
            first["timeframe"].as_str(),
            first["ma"].as_str()
        ),
        (
            Some("SPX_OPTIX"),
            Some("AAII_BULL"),
            Some("ratio"),
            Some("Weekly"),
            Some("4")
        )
    );
    assert_eq!(
        (
            first["upper_extreme_value"].as_f64(),
            first["tech_code"].clone()
        ),
        (Some(2.0), Value::Null)
    );
    assert!(
        first["create_date"]
            .as_str()
            .unwrap()
            .starts_with("2026-01-05T12:00:00")
    );
    let (_, asc) = s
        .get("/ws/getUserIndicators?all=true&ordering=create_date", DEMO)
        .await;
    assert_eq!(asc[0]["url"], "CUSTOM_OPTIX_AAII");
    assert_eq!(
        s.get("/ws/getUserIndicators?ordering=name", DEMO).await.0,
        400
    );
    assert_eq!(
        s.get("/ws/getUserIndicators", LIGHT).await.1,
        json!([]),
        "each account has its own"
    );

    // Ratio of SPX Optix to the latest AAII reading, last of each ISO week, 4-week average.
    let (a, b) = (
        file_series(layout::indicator_series("SPX_OPTIX")),
        file_series(layout::indicator_series("AAII_BULL")),
    );
    let mut ratio: Vec<(chrono::NaiveDateTime, f64)> = Vec::new();
    for (t, x) in a.time.iter().zip(&a.close) {
        if let Some(j) = b.time.iter().rposition(|bt| bt <= t) {
            ratio.push((*t, x / b.close[j]));
        }
    }
    let weekly: Vec<(chrono::NaiveDateTime, f64)> = ratio
        .iter()
        .enumerate()
        .filter(|(i, (t, _))| {
            ratio
                .get(i + 1)
                .is_none_or(|(n, _)| n.date().iso_week() != t.date().iso_week())
        })
        .map(|(_, p)| *p)
        .collect();
    let want: Vec<(String, f64)> = (3..weekly.len())
        .map(|i| {
            (
                key(weekly[i].0),
                weekly[i - 3..=i].iter().map(|p| p.1).sum::<f64>() / 4.0,
            )
        })
        .collect();
    let (status, got) = s
        .get("/ws/getUserIndicatorData?url=CUSTOM_OPTIX_AAII", DEMO)
        .await;
    assert_eq!(status, 200);
    let got = got.as_array().unwrap();
    assert_eq!(got.len(), want.len());
    for (g, (dt, v)) in got.iter().zip(&want) {
        assert_eq!(
            (g["DT"].as_str().unwrap(), g["symbol"].as_str().unwrap()),
            (dt.as_str(), "CUSTOM_OPTIX_AAII")
        );
        assert!((g["close"].as_f64().unwrap() - v).abs() < 1e-12, "{dt}");
    }
    let (status, spread) = s
        .get("/ws/getUserIndicatorData?url=CUSTOM_TECH_SPREAD", DEMO)
        .await;
    assert_eq!(
        (status, spread.as_array().unwrap().len()),
        (200, a.time.len() - 9),
        "daily spread, 10-day average"
    );

    assert_eq!(s.get("/ws/getUserIndicatorData", DEMO).await.0, 400);
    assert_eq!(
        s.get("/ws/getUserIndicatorData?url=NOPE", DEMO).await.0,
        404
    );
    assert_eq!(
        s.get("/ws/getUserIndicatorData?url=CUSTOM_OPTIX_AAII", LIGHT)
            .await
            .0,
        404,
        "another account's indicator"
    );
    // A definition using an indicator outside the plan: 405.
    let mut rec = s.accounts.get("light@example.test").await.unwrap().unwrap();
    rec.custom_indicators
        .push(platform::accounts::CustomIndicator {
            url: "MINE".into(),
            name: "Model over Optix".into(),
            indicator_1_url: "SPX_MODEL_SWING".into(),
            indicator_2_url: "SPX_OPTIX".into(),
            calculate: "ratio".into(),
            timeframe: "Daily".into(),
            ma: "0".into(),
            upper_extreme_value: 2.0,
            lower_extreme_value: 0.5,
            create_date: platform::tasks::now(),
        });
    s.accounts.put(rec).await.unwrap();
    s.state.auth.forget_all();
    let (status, body) = s.get("/ws/getUserIndicatorData?url=MINE", LIGHT).await;
    assert_eq!(
        (status, body["status"].as_i64()),
        (405, Some(405)),
        "{body}"
    );
    s.stop().await;
    // A calculation slower than the limit answers 504: a server whose limit
    // is nothing (its own setting; other tests' servers keep theirs).
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::new(dir.path().join("timeout.sqlite"));
    opts.limits.custom_timeout = std::time::Duration::ZERO;
    let s = TestServer::start(opts).await;
    let (status, body) = s
        .get("/ws/getUserIndicatorData?url=CUSTOM_TECH_SPREAD", DEMO)
        .await;
    assert_eq!(
        (status, body["status"].as_i64()),
        (504, Some(504)),
        "{body}"
    );
    assert!(body["error"].as_str().unwrap().contains("timed out"));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn seasonality_month_symbols_return_their_own_fields() {
    let (s, _dir) = server().await;
    let spx = codec::batch_to_bars(
        &codec::from_parquet(
            std::fs::read(market_dir().join(layout::daily_prices("SPX")))
                .unwrap()
                .into(),
        )
        .unwrap(),
    )
    .unwrap();
    // Month-end closes, then each month's return in percent (4 decimals).
    let ends: Vec<usize> = (0..spx.len())
        .filter(|&i| i + 1 == spx.len() || spx.date(i + 1).month() != spx.date(i).month())
        .collect();
    let rets: Vec<(chrono::NaiveDateTime, u32, f64)> = ends
        .windows(2)
        .map(|w| {
            (
                spx.time[w[1]],
                spx.date(w[1]).month(),
                ((spx.close[w[1]] / spx.close[w[0]] - 1.0) * 100.0 * 10_000.0).round() / 10_000.0,
            )
        })
        .collect();
    let (status, h) = s.get("/ws/getSymbolData/SPX_SEASON_MONTH", DEMO).await;
    assert_eq!(status, 200);
    let h = h.as_object().unwrap();
    assert_eq!(h.len(), rets.len());
    for k in [0, 11, 12, rets.len() - 1] {
        let (t, month, ret) = rets[k];
        let same: Vec<f64> = rets[..=k]
            .iter()
            .filter(|r| r.1 == month)
            .map(|r| r.2)
            .collect();
        let avg = same.iter().sum::<f64>() / same.len() as f64;
        let std = if same.len() > 1 {
            (same.iter().map(|v| (v - avg).powi(2)).sum::<f64>() / (same.len() - 1) as f64).sqrt()
        } else {
            0.0
        };
        let r = &h[&key(t)];
        assert_eq!(
            (r["symbol"].as_str(), r["month"].as_str()),
            (Some("SPX"), Some(format!("{month:02}").as_str()))
        );
        assert_eq!(r["TotReturn"].as_f64(), Some(ret));
        assert!(
            (r["AvgReturn"].as_f64().unwrap() - avg).abs() < 1e-12
                && (r["std"].as_f64().unwrap() - std).abs() < 1e-12,
            "{k}: {r}"
        );
        assert!(r.get("close").is_none());
    }
    let (_, last3) = s
        .get("/ws/getSymbolDataLimitDays/SPX_SEASON_MONTH?days=3", DEMO)
        .await;
    assert_eq!(last3.as_object().unwrap().len(), 3);
    assert_eq!(
        last3[key(rets[rets.len() - 1].0)],
        h[&key(rets[rets.len() - 1].0)],
        "limited requests keep the to-date statistics"
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn answers_503_when_the_catalog_is_unavailable() {
    use platform::queue::LocalQueue;
    use platform::sqlite::Database;
    use platform::tasks::SqliteTaskStore;
    use std::sync::Arc;
    let empty = tempfile::tempdir().unwrap();
    let (queue, _rx) = LocalQueue::new();
    let tasks = Arc::new(SqliteTaskStore::new(Database::in_memory().unwrap()));
    let state = tests::server::bare_state(tasks, Arc::new(queue), empty.path()).await;
    let (base, tx, server) = tests::server::serve_state(&state).await;
    let resp = reqwest::Client::new()
        .get(format!("{base}/ws/getAllSymbols"))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 503);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["status"], json!(503));
    assert!(body["error"].as_str().unwrap().contains("retry"), "{body}");
    let _ = tx.send(());
    server.await.unwrap().unwrap();
}
