//! The same contract suites against the AWS adapters, on the emulator.

use aws_adapters::{DynamoAccountStore, DynamoTaskStore, S3Blobs, SqsQueue, provision};
use aws_sdk_dynamodb::types::AttributeValue;
use platform::marketdata::{BlobStore, LocalDir, ParquetMarketData};
use std::sync::Arc;
use tests::contract::{self, unique};
use tests::emulator::clients;

#[tokio::test(flavor = "multi_thread")]
async fn dynamodb_usage_store() {
    let c = clients().await;
    let table = unique("usage");
    provision::usage_table(&c, &table).await.unwrap();
    contract::usage::run_all(Arc::new(aws_adapters::DynamoUsageStore::new(
        c.dynamodb.clone(),
        table,
    )))
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn dynamodb_quota_store() {
    let c = clients().await;
    let table = unique("limits");
    provision::limits_table(&c, &table).await.unwrap();
    contract::quota::run_all(Arc::new(aws_adapters::DynamoQuotaStore::new(
        c.dynamodb.clone(),
        table,
    )))
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn dynamodb_task_store() {
    let c = clients().await;
    let (table, bucket) = (unique("tasks"), unique("spill"));
    provision::tasks_table(&c, &table).await.unwrap();
    provision::bucket(&c, &bucket).await.unwrap();
    let spill = S3Blobs::new(c.s3.clone(), bucket);
    contract::tasks::run_all(
        Arc::new(DynamoTaskStore::new(
            c.dynamodb.clone(),
            table.clone(),
            spill.clone(),
        )),
        2_000,
    )
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
            platform::tasks::Finished {
                attempt: t.attempts,
                outcome: Outcome::Success(serde_json::json!(1)),
                at: finished_at,
            },
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

    // A submit that died between claiming its key and storing its task: a
    // retry waits while the claim is fresh, then takes the key over.
    use aws_sdk_dynamodb::types::AttributeValue::{N, S};
    let owner = unique("owner");
    let missing = uuid::Uuid::new_v4();
    let put_claim = |claimed_ms: i64| {
        c.dynamodb
            .put_item()
            .table_name(&table)
            .item("id", S(format!("idem#{}#{owner}#crashed", owner.len())))
            .item("task_id", S(missing.to_string()))
            .item("claimed_ms", N(claimed_ms.to_string()))
            .item(
                "expires_at",
                N((chrono::Utc::now().timestamp() + 3600).to_string()),
            )
            .send()
    };
    let new = || NewTask {
        owner: owner.clone(),
        kind: TaskKind::StrategyBacktest,
        params: serde_json::json!({"n": 1}),
    };
    put_claim(chrono::Utc::now().timestamp_millis())
        .await
        .unwrap();
    assert!(
        matches!(
            store.create_idempotent(new(), "crashed").await,
            Err(platform::PortError::Unavailable { .. })
        ),
        "a fresh claim without its task: retry later"
    );
    put_claim(chrono::Utc::now().timestamp_millis() - 60_000)
        .await
        .unwrap();
    let platform::tasks::Created::New(t) = store.create_idempotent(new(), "crashed").await.unwrap()
    else {
        panic!("a stale claim is taken over")
    };
    assert_ne!(t.id, missing);
    assert!(matches!(
        store.create_idempotent(new(), "crashed").await.unwrap(),
        platform::tasks::Created::Existing(e) if e.id == t.id
    ));
}

/// Task items damaged with the SDK as the store never writes them.
struct DynamoDamage {
    client: aws_sdk_dynamodb::Client,
    table: String,
    spill: S3Blobs,
}

impl DynamoDamage {
    async fn item(&self, id: uuid::Uuid) -> std::collections::HashMap<String, AttributeValue> {
        self.client
            .get_item()
            .table_name(&self.table)
            .key("id", AttributeValue::S(id.to_string()))
            .consistent_read(true)
            .send()
            .await
            .unwrap()
            .item
            .expect("the task's item")
    }
}

#[async_trait::async_trait]
impl contract::task_damage::Damager for DynamoDamage {
    async fn set(&self, id: uuid::Uuid, field: &str, raw: contract::task_damage::Raw) -> bool {
        use contract::task_damage::Raw;
        let key = AttributeValue::S(id.to_string());
        if field == "id" {
            // The item moved under a key that is not a task id.
            let Raw::Text(to) = raw else { return false };
            let mut item = self.item(id).await;
            item.insert("id".into(), AttributeValue::S(to));
            let put = self.client.put_item().table_name(&self.table);
            put.set_item(Some(item)).send().await.unwrap();
            let delete = self.client.delete_item().table_name(&self.table);
            delete.key("id", key).send().await.unwrap();
            return true;
        }
        // The owner keys the owner index: DynamoDB takes nothing there but
        // a string that is not empty, or no owner at all.
        if field == "owner" && !matches!(raw, Raw::Missing) {
            return false;
        }
        let update = self
            .client
            .update_item()
            .table_name(&self.table)
            .key("id", key)
            .expression_attribute_names("#f", field);
        let value = match raw {
            Raw::Missing => None,
            Raw::Text(s) => Some(AttributeValue::S(s)),
            Raw::Number(n) => Some(AttributeValue::N(n.to_string())),
            Raw::Binary => Some(AttributeValue::B(aws_sdk_dynamodb::primitives::Blob::new(
                vec![0xff, 0],
            ))),
        };
        match value {
            None => update.update_expression("REMOVE #f"),
            Some(v) => update
                .update_expression("SET #f = :v")
                .expression_attribute_values(":v", v),
        }
        .send()
        .await
        .unwrap();
        true
    }

    async fn lose_spilled(&self, id: uuid::Uuid, field: &str) -> bool {
        let item = self.item(id).await;
        let key = item[&format!("{field}_ref")].as_s().expect("spilled");
        self.spill.delete(key).await.unwrap();
        true
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn dynamodb_task_store_damaged_items() {
    let c = clients().await;
    let (table, bucket) = (unique("tasks"), unique("spill"));
    provision::tasks_table(&c, &table).await.unwrap();
    provision::bucket(&c, &bucket).await.unwrap();
    let spill = S3Blobs::new(c.s3.clone(), bucket);
    let store = DynamoTaskStore::new(c.dynamodb.clone(), table.clone(), spill.clone());
    let damage = DynamoDamage {
        client: c.dynamodb.clone(),
        table,
        spill,
    };
    contract::task_damage::run_all(Arc::new(store), &damage, 17).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn dynamodb_webhook_store() {
    let c = tests::emulator::clients().await;
    let table = unique("webhooks");
    aws_adapters::provision::webhooks_table(&c, &table)
        .await
        .unwrap();
    contract::webhooks::run_all(Arc::new(aws_adapters::DynamoWebhooks::new(
        c.dynamodb.clone(),
        table,
    )))
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn dynamodb_account_store() {
    let c = clients().await;
    let table = unique("accounts");
    provision::accounts_table(&c, &table).await.unwrap();
    contract::accounts::run_all(Arc::new(DynamoAccountStore::new(c.dynamodb.clone(), table))).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn dynamodb_key_store() {
    let c = clients().await;
    let table = unique("keys");
    provision::keys_table(&c, &table).await.unwrap();
    contract::keys::run_all(Arc::new(aws_adapters::DynamoKeyStore::new(
        c.dynamodb.clone(),
        table,
    )))
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn dynamodb_failure_log() {
    let c = clients().await;
    let table = unique("limits");
    provision::limits_table(&c, &table).await.unwrap();
    contract::failures::run_all(Arc::new(aws_adapters::DynamoFailureLog::new(
        c.dynamodb.clone(),
        table,
    )))
    .await;
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
async fn parquet_scanner_store_on_s3() {
    use platform::scanner::ParquetScannerStore;
    use std::time::Duration;
    let c = clients().await;
    let bucket = unique("scanner");
    provision::bucket(&c, &bucket).await.unwrap();
    let blobs = Arc::new(S3Blobs::new(c.s3.clone(), bucket));
    contract::scanner::run_all(
        &ParquetScannerStore::new(blobs.clone(), Duration::from_secs(3600)),
        &ParquetScannerStore::new(blobs, Duration::ZERO),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn parquet_market_data_on_s3() {
    let c = clients().await;
    let bucket = unique("market");
    provision::bucket(&c, &bucket).await.unwrap();
    // Upload the sample set exactly as it lies on disk, 16 objects at a time.
    use futures::StreamExt;
    let local = LocalDir::new(tests::server::market_dir());
    let s3 = S3Blobs::new(c.s3.clone(), bucket);
    let keys = local.list("").await.unwrap();
    futures::stream::iter(keys)
        .map(|key| {
            let (local, s3) = (&local, &s3);
            async move {
                s3.put(&key, local.get(&key).await.unwrap().unwrap())
                    .await
                    .unwrap()
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<()>>()
        .await;
    let blobs = Arc::new(s3.clone());
    let md = Arc::new(ParquetMarketData::new(blobs));
    contract::market::run_all(md, move |key| {
        let s3 = s3.clone();
        async move { s3.get(&key).await.unwrap().unwrap() }
    })
    .await;
}

/// Counts requests to a blob store, to see what a Parquet read costs.
struct Counting {
    inner: S3Blobs,
    sizes: std::sync::atomic::AtomicUsize,
    ranges: std::sync::Mutex<Vec<std::ops::Range<u64>>>,
    whole: std::sync::atomic::AtomicUsize,
}

#[async_trait::async_trait]
impl BlobStore for Counting {
    async fn get(&self, key: &str) -> Result<Option<bytes::Bytes>, platform::PortError> {
        self.whole.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inner.get(key).await
    }
    async fn put(&self, key: &str, data: bytes::Bytes) -> Result<(), platform::PortError> {
        self.inner.put(key, data).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<String>, platform::PortError> {
        self.inner.list(prefix).await
    }
    async fn get_if_changed(
        &self,
        key: &str,
        seen: Option<&str>,
    ) -> Result<platform::marketdata::Changed, platform::PortError> {
        self.inner.get_if_changed(key, seen).await
    }
    async fn delete(&self, key: &str) -> Result<(), platform::PortError> {
        self.inner.delete(key).await
    }
    async fn size(&self, key: &str) -> Result<Option<u64>, platform::PortError> {
        self.sizes.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inner.size(key).await
    }
    async fn get_range(
        &self,
        key: &str,
        range: std::ops::Range<u64>,
    ) -> Result<Option<bytes::Bytes>, platform::PortError> {
        self.ranges.lock().unwrap().push(range.clone());
        self.inner.get_range(key, range).await
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn parquet_from_s3_reads_footer_then_column_chunks() {
    use platform::marketdata::MarketData;
    let c = clients().await;
    let bucket = tests::emulator::sample_bucket(&c).await;
    let counting = Arc::new(Counting {
        inner: S3Blobs::new(c.s3.clone(), bucket),
        sizes: 0.into(),
        ranges: Default::default(),
        whole: 0.into(),
    });
    let md = ParquetMarketData::new(counting.clone());
    let spx = md.daily("SPX").await.unwrap();
    assert!(spx.len() > 9_000);
    let ranges = counting.ranges.lock().unwrap().clone();
    let size = counting
        .inner
        .size(&platform::marketdata::layout::daily_prices("SPX"))
        .await
        .unwrap()
        .unwrap();
    // One for the bars, one for the corporate actions table (absent in
    // the sample set; once a process, its absence is kept).
    assert_eq!(
        counting.sizes.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "one size lookup of each object"
    );
    assert_eq!(
        counting.whole.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "no whole-object read"
    );
    assert_eq!(
        ranges.len(),
        2,
        "the footer, then the column chunks in one merged read: {ranges:?}"
    );
    assert_eq!(ranges[0].end, size, "the first read is the file's tail");
    assert!(
        ranges[1].start < ranges[0].start,
        "the data read comes before the footer"
    );
    // Warm reads come from the decoded cache: no further requests.
    md.daily("SPX").await.unwrap();
    assert_eq!(counting.ranges.lock().unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn dynamodb_metering_of_a_known_mix() {
    contract::metering::run_all(tests::emulator::deployment().await.state).await;
}
