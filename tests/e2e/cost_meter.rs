//! The cost model's meter (`tests::aws_meter`) counts as AWS bills: item
//! sizes by DynamoDB's rules, request units by size and consistency, S3 and
//! SQS requests and bytes, for calls made through it to the emulator.

use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    ScalarAttributeType,
};
use serde_json::json;
use tests::aws_meter::{Meter, item_size};
use tests::contract::unique;

#[test]
fn item_sizes_follow_dynamodbs_rules() {
    // Names plus values: "id" 2 + "abc" 3.
    assert_eq!(item_size(&json!({"id": {"S": "abc"}})), 5);
    // Numbers: a byte per two significant digits, plus one; zeros at
    // either end do not count.
    assert_eq!(item_size(&json!({"n": {"N": "12345"}})), 1 + 3 + 1);
    assert_eq!(item_size(&json!({"n": {"N": "-0.00120"}})), 1 + 1 + 1);
    assert_eq!(item_size(&json!({"n": {"N": "1500000"}})), 1 + 1 + 1);
    // Binary: the decoded bytes ("aGVsbG8=" is "hello").
    assert_eq!(item_size(&json!({"b": {"B": "aGVsbG8="}})), 1 + 5);
    // A map: 3 bytes, then per element 1 byte, its name and its value.
    assert_eq!(
        item_size(&json!({"m": {"M": {"k": {"S": "v"}, "t": {"BOOL": true}}}})),
        1 + 3 + (1 + 1 + 1) + (1 + 1 + 1)
    );
    // A list: 3 bytes, then per element 1 byte and its value.
    assert_eq!(
        item_size(&json!({"l": {"L": [{"S": "ab"}, {"NULL": true}]}})),
        1 + 3 + (1 + 2) + (1 + 1)
    );
    assert_eq!(item_size(&json!({"s": {"SS": ["a", "bc"]}})), 1 + 3);
}

#[tokio::test]
async fn calls_through_the_meter_are_billed_as_aws_bills_them() {
    let c = tests::emulator::clients().await;
    let meter = Meter::start(&tests::emulator::endpoint()).await;
    let sdk = aws_config_for(&meter.endpoint).await;
    let dynamo = aws_sdk_dynamodb::Client::new(&sdk);
    let s3 = aws_sdk_s3::Client::from_conf(
        aws_sdk_s3::config::Builder::from(&sdk)
            .force_path_style(true)
            .build(),
    );
    let sqs = aws_sdk_sqs::Client::new(&sdk);

    // Set-up straight to the emulator, not metered.
    let table = unique("meter");
    c.dynamodb
        .create_table()
        .table_name(&table)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("pk")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        )
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("sk")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        )
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("pk")
                .key_type(KeyType::Hash)
                .build()
                .unwrap(),
        )
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("sk")
                .key_type(KeyType::Range)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let bucket = unique("meter");
    aws_adapters::provision::bucket(&c, &bucket).await.unwrap();
    let queue = aws_adapters::provision::queue(&c, &unique("meter"), 3, 30)
        .await
        .unwrap();
    meter.take();

    // An item of 2 + 1 + 2 + 1 + 4 + 1,490 = 1,500 bytes: 2 write units.
    let s = |v: &str| AttributeValue::S(v.to_string());
    let put = |sk: &'static str, len: usize| {
        dynamo
            .put_item()
            .table_name(&table)
            .item("pk", s("a"))
            .item("sk", s(sk))
            .item("body", s(&"x".repeat(len)))
            .send()
    };
    put("1", 1_490).await.unwrap();
    let u = meter.take();
    assert_eq!(u.dynamo_write_units, 2.0, "{u:?}");
    assert_eq!(u.calls.get("dynamodb:PutItem"), Some(&1));

    // Overwritten by a smaller item: billed on the larger, before (2 units).
    put("1", 10).await.unwrap();
    assert_eq!(meter.take().dynamo_write_units, 2.0);

    // Grown by an update to 9 + 5,000 bytes: 5 units.
    dynamo
        .update_item()
        .table_name(&table)
        .key("pk", s("a"))
        .key("sk", s("1"))
        .update_expression("SET body = :b")
        .expression_attribute_values(":b", s(&"y".repeat(5_000)))
        .send()
        .await
        .unwrap();
    assert_eq!(meter.take().dynamo_write_units, 5.0);

    // A transaction: each action is a write billed twice over. The 5,009-
    // byte item updated in place (5 units, so 10) and a new 1,500-byte
    // item put (2, so 4).
    use aws_sdk_dynamodb::types::{Put, TransactWriteItem, Update};
    dynamo
        .transact_write_items()
        .transact_items(
            TransactWriteItem::builder()
                .update(
                    Update::builder()
                        .table_name(&table)
                        .key("pk", s("a"))
                        .key("sk", s("1"))
                        .update_expression("SET body = :b")
                        .expression_attribute_values(":b", s(&"z".repeat(5_000)))
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .transact_items(
            TransactWriteItem::builder()
                .put(
                    Put::builder()
                        .table_name(&table)
                        .item("pk", s("a"))
                        .item("sk", s("2"))
                        .item("body", s(&"x".repeat(1_490)))
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .send()
        .await
        .unwrap();
    let u = meter.take();
    assert_eq!(u.dynamo_write_units, 14.0, "{u:?}");
    assert_eq!(u.calls.get("dynamodb:TransactWriteItems"), Some(&1));

    // A 5,009-byte item read: 2 units consistent, 1 eventually consistent.
    for (consistent, units) in [(true, 2.0), (false, 1.0)] {
        dynamo
            .get_item()
            .table_name(&table)
            .key("pk", s("a"))
            .key("sk", s("1"))
            .consistent_read(consistent)
            .send()
            .await
            .unwrap();
        assert_eq!(
            meter.take().dynamo_read_units,
            units,
            "consistent {consistent}"
        );
    }

    // A filtered query pays for what its key condition reads: with a second
    // item of 3,000 bytes, 8,009 bytes are 2 units, though none is returned.
    put("2", 2_991).await.unwrap();
    meter.take();
    let q = dynamo
        .query()
        .table_name(&table)
        .key_condition_expression("pk = :p")
        .filter_expression("sk = :none")
        .expression_attribute_values(":p", s("a"))
        .expression_attribute_values(":none", s("nothing"))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    assert_eq!(q.count(), 0);
    assert_eq!(meter.take().dynamo_read_units, 2.0);

    // S3: a PUT of 10,000 bytes, a GET of them, a LIST.
    let body = vec![7u8; 10_000];
    s3.put_object()
        .bucket(&bucket)
        .key("k/object")
        .body(body.clone().into())
        .send()
        .await
        .unwrap();
    let got = s3
        .get_object()
        .bucket(&bucket)
        .key("k/object")
        .send()
        .await
        .unwrap();
    assert_eq!(got.body.collect().await.unwrap().into_bytes().len(), 10_000);
    s3.list_objects_v2().bucket(&bucket).send().await.unwrap();
    let u = meter.take();
    assert_eq!(
        (u.s3_puts, u.s3_gets, u.s3_get_bytes),
        (2, 1, 10_000),
        "{u:?}"
    );
    assert!(u.s3_put_bytes >= 10_000, "{u:?}");

    // SQS: 64 KB chunks; a 100,000-byte message is two requests.
    sqs.send_message()
        .queue_url(&queue)
        .message_body("m".repeat(100_000))
        .send()
        .await
        .unwrap();
    let u = meter.take();
    assert_eq!(u.sqs_requests, 2, "{u:?}");
    assert_eq!(u.calls.get("sqs:SendMessage"), Some(&1));
}

/// The SDK's configuration as `tests::emulator::clients` loads it, with the
/// meter as its endpoint.
async fn aws_config_for(endpoint: &str) -> aws_config::SdkConfig {
    aws_config::defaults(aws_config::BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .load()
        .await
}

#[tokio::test]
async fn index_writes_and_whole_item_reads_are_billed() {
    use aws_sdk_dynamodb::types::{
        GlobalSecondaryIndex, KeysAndAttributes, Projection, ProjectionType,
    };
    let c = tests::emulator::clients().await;
    let meter = Meter::start(&tests::emulator::endpoint()).await;
    let dynamo = aws_sdk_dynamodb::Client::new(&aws_config_for(&meter.endpoint).await);
    let table = unique("meter-gsi");
    let attr = |n: &str| {
        AttributeDefinition::builder()
            .attribute_name(n)
            .attribute_type(ScalarAttributeType::S)
            .build()
            .unwrap()
    };
    let key = |n: &str| {
        KeySchemaElement::builder()
            .attribute_name(n)
            .key_type(KeyType::Hash)
            .build()
            .unwrap()
    };
    // Index `by_g` on `g`, projecting `st` besides the keys.
    c.dynamodb
        .create_table()
        .table_name(&table)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(attr("id"))
        .attribute_definitions(attr("g"))
        .key_schema(key("id"))
        .global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name("by_g")
                .key_schema(key("g"))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::Include)
                        .non_key_attributes("st")
                        .build(),
                )
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    meter.take();
    let s = |v: &str| AttributeValue::S(v.to_string());
    let update = |expr: &'static str, v: String| {
        dynamo
            .update_item()
            .table_name(&table)
            .key("id", s("x"))
            .update_expression(expr)
            .expression_attribute_values(":v", AttributeValue::S(v))
            .send()
    };
    // A new 3,000-byte item in the index: 3 units, and 1 for its entry.
    dynamo
        .put_item()
        .table_name(&table)
        .item("id", s("x"))
        .item("g", s("a"))
        .item("st", s("P"))
        .item("big", s(&"b".repeat(2_990)))
        .send()
        .await
        .unwrap();
    assert_eq!(meter.take().dynamo_write_units, 3.0 + 1.0);
    // An attribute the index does not project: the table only.
    update("SET big = :v", "c".repeat(2_990)).await.unwrap();
    assert_eq!(meter.take().dynamo_write_units, 3.0);
    // A projected attribute: the entry is rewritten in place.
    update("SET st = :v", "R".into()).await.unwrap();
    assert_eq!(meter.take().dynamo_write_units, 3.0 + 1.0);
    // The index key: its entry is deleted and put.
    update("SET g = :v", "b".into()).await.unwrap();
    assert_eq!(meter.take().dynamo_write_units, 3.0 + 2.0);

    // Reads pay for whole items, whatever they project: 3,002 bytes are one
    // unit consistent, half eventually consistent, and each item of a batch
    // is its own read.
    dynamo
        .get_item()
        .table_name(&table)
        .key("id", s("x"))
        .projection_expression("st")
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    assert_eq!(meter.take().dynamo_read_units, 1.0);
    update("SET big = :v", "d".repeat(9_000)).await.unwrap();
    meter.take();
    dynamo
        .batch_get_item()
        .request_items(
            &table,
            KeysAndAttributes::builder()
                .keys([("id".to_string(), s("x"))].into())
                .keys([("id".to_string(), s("missing"))].into())
                .projection_expression("id")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    // 9,012 bytes: 3 units, halved; the missing key still costs half a unit.
    assert_eq!(meter.take().dynamo_read_units, 1.5 + 0.5);
}
