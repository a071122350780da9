//! The same contract suites against the AWS adapters, on the emulator.

use aws_adapters::{DynamoAccountStore, DynamoTaskStore, S3Blobs, SqsQueue, provision};
use e2e::contract::{self, unique};
use e2e::emulator::clients;
use platform::marketdata::{BlobStore, LocalDir, ParquetMarketData};
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread")]
async fn dynamodb_task_store() {
    let c = clients().await;
    let (table, bucket) = (unique("tasks"), unique("spill"));
    provision::tasks_table(&c, &table).await.unwrap();
    provision::bucket(&c, &bucket).await.unwrap();
    let spill = S3Blobs::new(c.s3.clone(), bucket);
    contract::tasks::run_all(Arc::new(DynamoTaskStore::new(
        c.dynamodb.clone(),
        table.clone(),
        spill.clone(),
    )))
    .await;

    // With a TTL, finished tasks carry `expires_at` for DynamoDB's expiry.
    use platform::tasks::{Claim, NewTask, Outcome, TaskKind, TaskStore, now};
    let store = DynamoTaskStore::new(c.dynamodb.clone(), table.clone(), spill)
        .with_ttl(Some(chrono::TimeDelta::days(90)));
    let t = store
        .create(NewTask {
            owner: unique("owner"),
            kind: TaskKind::CpmScan,
            params: serde_json::json!({}),
        })
        .await
        .unwrap();
    let Claim::Claimed(t) = store
        .claim(t.id, now(), chrono::TimeDelta::minutes(1))
        .await
        .unwrap()
    else {
        panic!()
    };
    let finished_at = now();
    store
        .finish(
            t.id,
            t.attempts,
            Outcome::Success(serde_json::json!(1)),
            finished_at,
        )
        .await
        .unwrap()
        .unwrap();
    let item = c
        .dynamodb
        .get_item()
        .table_name(&table)
        .key(
            "id",
            aws_sdk_dynamodb::types::AttributeValue::S(t.id.to_string()),
        )
        .send()
        .await
        .unwrap();
    let expires: i64 = item.item().unwrap()["expires_at"]
        .as_n()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        expires,
        (finished_at + chrono::TimeDelta::days(90))
            .and_utc()
            .timestamp()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn dynamodb_account_store() {
    let c = clients().await;
    let table = unique("accounts");
    provision::accounts_table(&c, &table).await.unwrap();
    contract::accounts::run_all(Arc::new(DynamoAccountStore::new(c.dynamodb.clone(), table))).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sqs_queue() {
    let c = clients().await;
    let url = provision::queue(&c, &unique("jobs"), 3, 30).await.unwrap();
    let q = SqsQueue::new(c.sqs.clone(), url);
    let consumer = q.clone();
    contract::queue::run_all(&q, || {
        let consumer = consumer.clone();
        async move {
            let got = consumer.receive(1, 1).await.unwrap();
            for r in &got {
                consumer.delete(&r.receipt_handle).await.unwrap();
            }
            got.into_iter().next().map(|r| r.message)
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_blob_store() {
    let c = clients().await;
    let bucket = unique("blobs");
    provision::bucket(&c, &bucket).await.unwrap();
    contract::blobs::run_all(&S3Blobs::new(c.s3.clone(), bucket)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn parquet_market_data_on_s3() {
    let c = clients().await;
    let bucket = unique("market");
    provision::bucket(&c, &bucket).await.unwrap();
    // Upload the sample set exactly as it lies on disk.
    let local = LocalDir::new(e2e::server::market_dir());
    let s3 = S3Blobs::new(c.s3.clone(), bucket);
    for key in local.list("").await.unwrap() {
        s3.put(&key, local.get(&key).await.unwrap().unwrap())
            .await
            .unwrap();
    }
    let blobs = Arc::new(s3.clone());
    let md = Arc::new(ParquetMarketData::new(blobs));
    contract::market::run_all(md, move |key| {
        let s3 = s3.clone();
        async move { s3.get(&key).await.unwrap().unwrap() }
    })
    .await;
}
