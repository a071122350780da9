//! Market data updates on the AWS path (the emulator, the functions' own
//! binaries): a file put under `incoming/` reaches the ingest function
//! through the bucket's event and the ingest queue, is merged and moved
//! with its report to `ingested/`; the session it completes is scanned; a
//! warm backtest function answers the new session within its check
//! interval; a bad file lands in `rejected/` with its report.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::{BlobStore, LocalDir, ParquetMarketData};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tests::emulator::{
    bucket_of, clients, deployment_on, function_env, receive_batch, settle_batch,
};
use tests::market_files;
use tests::runtime_api::{Function, answer_json, basic, http_event, workspace_binaries};

const LAST: &str = "2026-11-20";
const NEXT: &str = "2026-11-23";
const CHECK: Duration = Duration::from_millis(1500);

/// The latest session as the backtest function sees it: the end date a
/// strategy defaults to.
async fn latest(http: &mut Function, body: &Value, auth: &str) -> String {
    let answer = http
        .invoke(http_event(
            "POST",
            "/backtest/validate",
            Some(body),
            Some(auth),
        ))
        .await;
    let v = answer_json(&answer.answer);
    v["defaults_applied"]["end_date"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string()
}

/// The last session of AAPL's bars as the data function answers them.
async fn last_price(http: &mut Function, auth: &str) -> String {
    let answer = http
        .invoke(http_event("GET", "/ws/prices/AAPL", None, Some(auth)))
        .await;
    let v = answer_json(&answer.answer);
    v["bars"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .last()
        .unwrap()["Date"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The next batch of the ingest queue handed to the function as the event
/// source mapping would (waiting for the bucket's event to arrive); the
/// function's answer.
async fn ingest_next(c: &aws_adapters::Clients, queue: &str, worker: &mut Function) -> Value {
    let started = Instant::now();
    loop {
        if let Some((event, handles)) = receive_batch(c, queue).await {
            let answer = worker
                .invoke(serde_json::to_value(&event).unwrap())
                .await
                .answer;
            let settled = serde_json::from_value(answer.clone()).unwrap();
            assert_eq!(
                settle_batch(c, queue, &handles, &settled).await,
                0,
                "{answer}"
            );
            return answer;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "no event came");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_put_under_incoming_is_merged_scanned_and_served_by_warm_functions() {
    let c = clients().await;
    let dir = tests::server::private_market();
    let bucket = bucket_of(&c, dir.path()).await;
    let d = deployment_on(c.clone(), bucket.clone()).await;
    let ingest_queue = d.names.ingest_queue_url.clone();
    aws_adapters::provision::bucket_notifications(
        &c,
        &bucket,
        &d.names.queue_url,
        Some(&ingest_queue),
    )
    .await
    .unwrap();
    let [ingest, backtest, data] = workspace_binaries(["ingest", "backtest", "data"]).await;
    let mut env = function_env(&d.names);
    env.push((
        "MARKETLAB_DATA_CHECK_SECONDS",
        CHECK.as_secs_f64().to_string(),
    ));
    let auth = basic(DEMO_EMAIL, DEMO_PASSWORD);
    let mut http = Function::new(&backtest, "backtest", 1024, &env).await;
    let body = json!({"symbol": "SPX",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"}, "rule": {"comparison_type": "SVMA", "type_name": ">=", "comparison_value": "0", "period": "20"}}},
        "exit": {"rule_type": "RiskControlOnly"}, "risk_control": "//10"});
    // Warm, on the bucket's latest session.
    assert_eq!(latest(&mut http, &body, &auth).await, LAST);

    let mut data_fn = Function::new(&data, "data", 1024, &env).await;
    assert_eq!(last_price(&mut data_fn, &auth).await, LAST);

    // The next session for every symbol, in two grouped-daily answers: all
    // but one stock, then that stock.
    let local = ParquetMarketData::new(Arc::new(LocalDir::new(dir.path())));
    let next: chrono::NaiveDate = NEXT.parse().unwrap();
    let (most, last_stock) = market_files::ending_on(&local, LAST.parse().unwrap()).await;
    let most = market_files::grouped_daily(&local, &most, next).await;
    let rest = market_files::grouped_daily(&local, &[last_stock], next).await;
    let s3 = aws_adapters::S3Blobs::new(c.s3.clone(), bucket.clone());
    let exists = |key: &'static str| {
        let s3 = s3.clone();
        async move { s3.size(key).await.unwrap().is_some() }
    };
    let mut worker = Function::new(&ingest, "ingest", 2048, &env).await;
    s3.put("incoming/2026-11-23.json", most.into())
        .await
        .unwrap();
    let done = ingest_next(&c, &ingest_queue, &mut worker).await;
    assert_eq!(done["scanned"], Value::Null, "not complete yet: {done}");
    assert!(exists("ingested/2026-11-23.json.report.json").await);
    assert!(!exists("scanner/2026-11-23.parquet").await);
    s3.put("incoming/2026-11-23-rest.json", rest.clone().into())
        .await
        .unwrap();
    let done = ingest_next(&c, &ingest_queue, &mut worker).await;
    let imported = Instant::now();
    // The last stock completed the session: it was scanned, once.
    assert_eq!(done["scanned"], NEXT, "{done}");
    assert!(exists("scanner/2026-11-23.parquet").await);
    let report: Value = serde_json::from_slice(
        &s3.get("ingested/2026-11-23-rest.json.report.json")
            .await
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(report["errors"], 0, "{report}");
    assert!(!exists("incoming/2026-11-23-rest.json").await);
    s3.put("incoming/again.json", rest.into()).await.unwrap();
    let done = ingest_next(&c, &ingest_queue, &mut worker).await;
    assert_eq!(done["scanned"], Value::Null, "scanned again: {done}");

    // The warm functions answer the new session within their interval.
    loop {
        if latest(&mut http, &body, &auth).await == NEXT
            && last_price(&mut data_fn, &auth).await == NEXT
        {
            break;
        }
        assert!(
            imported.elapsed() <= CHECK + Duration::from_secs(3),
            "not seen after {:?}",
            imported.elapsed()
        );
    }
    let aapl = d.state.market.daily("AAPL").await.unwrap();
    assert_eq!(aapl.date(aapl.len() - 1).to_string(), NEXT);

    // A bad file: moved to rejected/ with its report, nothing merged.
    s3.put(
        "incoming/AAPL.csv",
        "Date,Open,High,Low,Close,Volume\n2026-11-24,10,9,11,10,100\n".into(),
    )
    .await
    .unwrap();
    ingest_next(&c, &ingest_queue, &mut worker).await;
    let report: Value = serde_json::from_slice(
        &s3.get("rejected/AAPL.csv.report.json")
            .await
            .unwrap()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(report["findings"][0]["rule"], "high_below_low", "{report}");
    assert!(exists("rejected/AAPL.csv").await);
    assert!(!exists("incoming/AAPL.csv").await);
    // The hourly schedule's event measures the lag.
    let lag = worker.invoke(json!({"source": "aws.scheduler"})).await;
    assert!(lag.answer["lag_seconds"].is_u64(), "{}", lag.answer);
}
