//! What every blob store promises: whole-object and ranged reads, writes,
//! listing by prefix, conditional reads, removal, moves (what an import
//! commits with) and removal of a prefix (what it cleans up with).

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
    // A move replaces what is at the destination; the source is gone.
    let (from, to) = (
        format!("{prefix}aside/n o+w.parquet"),
        format!("{prefix}c/z.parquet"),
    );
    blobs.put(&from, Bytes::from_static(b"new")).await.unwrap();
    blobs.put(&to, Bytes::from_static(b"old")).await.unwrap();
    blobs.rename(&from, &to).await.unwrap();
    assert_eq!(
        blobs.get(&to).await.unwrap(),
        Some(Bytes::from_static(b"new"))
    );
    assert_eq!(blobs.get(&from).await.unwrap(), None);
    // A prefix removed whole; others kept.
    blobs
        .put(
            &format!("{prefix}aside/d/e.parquet"),
            Bytes::from_static(b"e"),
        )
        .await
        .unwrap();
    blobs
        .delete_prefix(&format!("{prefix}aside/"))
        .await
        .unwrap();
    assert!(
        blobs
            .list(&format!("{prefix}aside/"))
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(blobs.list(&format!("{prefix}c/")).await.unwrap().len(), 1);
    blobs
        .delete_prefix(&format!("{prefix}aside/"))
        .await
        .unwrap();
}
