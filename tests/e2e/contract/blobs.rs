//! What every blob store promises: whole-object and ranged reads, writes,
//! listing by prefix, conditional reads and removal.

use super::unique;
use bytes::Bytes;
use platform::marketdata::{BlobStore, Changed};

pub async fn run_all(blobs: &dyn BlobStore) {
    let prefix = format!("contract/{}/", unique("run"));
    let key = format!("{prefix}a/x.parquet");
    assert_eq!(blobs.get(&key).await.unwrap(), None);
    blobs.put(&key, Bytes::from_static(b"first")).await.unwrap();
    assert_eq!(
        blobs.get(&key).await.unwrap(),
        Some(Bytes::from_static(b"first"))
    );
    blobs
        .put(&key, Bytes::from_static(b"second"))
        .await
        .unwrap();
    assert_eq!(
        blobs.get(&key).await.unwrap(),
        Some(Bytes::from_static(b"second"))
    );
    // Ranges: the bytes asked for; past the end, the bytes there are.
    assert_eq!(
        blobs.get_range(&key, 1..4).await.unwrap(),
        Some(Bytes::from_static(b"eco"))
    );
    assert_eq!(
        blobs.get_range(&key, 3..100).await.unwrap(),
        Some(Bytes::from_static(b"ond"))
    );
    assert_eq!(
        blobs
            .get_range(&format!("{prefix}none"), 0..4)
            .await
            .unwrap(),
        None
    );
    let big = Bytes::from(vec![7u8; 3 * 1024 * 1024]);
    blobs
        .put(&format!("{prefix}b/big.parquet"), big.clone())
        .await
        .unwrap();
    assert_eq!(
        blobs.get(&format!("{prefix}b/big.parquet")).await.unwrap(),
        Some(big)
    );
    blobs
        .put(&format!("{prefix}a/y.parquet"), Bytes::from_static(b"y"))
        .await
        .unwrap();
    assert_eq!(
        blobs.list(&format!("{prefix}a/")).await.unwrap(),
        vec![
            format!("{prefix}a/x.parquet"),
            format!("{prefix}a/y.parquet")
        ]
    );
    assert_eq!(blobs.list(&format!("{prefix}b/")).await.unwrap().len(), 1);
    assert!(
        blobs
            .list(&format!("{}/", unique("none")))
            .await
            .unwrap()
            .is_empty()
    );
    // A conditional read: the object and its tag, then nothing while the
    // tag is current, the new version once it is replaced, and missing
    // once removed (removing twice is no error).
    let Changed::New { data, tag } = blobs.get_if_changed(&key, None).await.unwrap() else {
        panic!("the first conditional read answers the object")
    };
    assert_eq!(data, Bytes::from_static(b"second"));
    assert_eq!(
        blobs.get_if_changed(&key, Some(&tag)).await.unwrap(),
        Changed::Same
    );
    blobs.put(&key, Bytes::from_static(b"third")).await.unwrap();
    let Changed::New { data, tag: newer } = blobs.get_if_changed(&key, Some(&tag)).await.unwrap()
    else {
        panic!("a replaced object is read again")
    };
    assert_eq!(data, Bytes::from_static(b"third"));
    assert_ne!(newer, tag);
    blobs.delete(&key).await.unwrap();
    blobs.delete(&key).await.unwrap();
    assert_eq!(blobs.get(&key).await.unwrap(), None);
    assert_eq!(
        blobs.get_if_changed(&key, Some(&newer)).await.unwrap(),
        Changed::Missing
    );
}
