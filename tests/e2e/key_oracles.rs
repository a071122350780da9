//! Keys without oracles, over HTTP (the campaign's findings): a run of wrong
//! secrets is refused per key id and per account whatever addresses it comes
//! from, an unknown id is answered and locked exactly as a known one, and a
//! key's holder passes the lock. The server's clock stands still, so a lock
//! lasts until the test is done.

use marketlab::server::{TRIAL_EMAIL, TRIAL_PASSWORD};
use platform::clock::ManualClock;
use reqwest::{Client, Method};
use serde_json::{Value, json};
use std::net::IpAddr;
use std::sync::Arc;
use tests::keys::{Keys, bearer};
use tests::server::{Options, TestServer};

async fn server() -> (TestServer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = Options::new(dir.path().join("db.sqlite"));
    opts.scan.at_start = false;
    opts.clock = Arc::new(ManualClock::into_this_minute(5));
    (TestServer::start(opts).await, dir)
}

/// A client whose requests come from loopback address `127.0.4.<n>`.
fn from(n: u8) -> Client {
    Client::builder()
        .local_address(IpAddr::from([127, 0, 4, n]))
        .build()
        .unwrap()
}

/// A read key of the account `keys` signs in as: its text and id.
async fn read_key(keys: &Keys) -> (String, String) {
    let made = keys
        .create(json!({"name": "script", "scopes": ["read"]}))
        .await;
    (
        made["key"].as_str().unwrap().to_string(),
        made["id"].as_str().unwrap().to_string(),
    )
}

/// The key with id `id` and a secret nobody was given.
fn forged(id: &str) -> String {
    format!("mlk_live_{id}_{}", "A".repeat(43))
}

/// Sends `keys` in turn, each request from an address of its own, until one
/// is answered 429: the bodies of the 401s before it, and its Retry-After.
async fn until_locked(s: &TestServer, keys: &[String]) -> (Vec<Value>, u64) {
    let mut refused = Vec::new();
    for n in 0..20u8 {
        let key = &keys[usize::from(n) % keys.len()];
        let r = bearer(&from(n + 1), Method::GET, &s.base, "/backtest/tasks", key).await;
        match r.status().as_u16() {
            401 => refused.push(r.json().await.unwrap()),
            429 => {
                let retry = r.headers()["retry-after"]
                    .to_str()
                    .unwrap()
                    .parse()
                    .unwrap();
                let body: Value = r.json().await.unwrap();
                assert!(
                    body["detail"]
                        .as_str()
                        .unwrap()
                        .contains("too many failed logins"),
                    "{body}"
                );
                return (refused, retry);
            }
            other => panic!("{other}: {}", r.text().await.unwrap()),
        }
    }
    panic!("20 bad keys from 20 addresses were never refused: {refused:?}")
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_secrets_for_one_key_id_from_many_addresses_are_refused_for_the_id() {
    let (s, _dir) = server().await;
    let (key, id) = read_key(&Keys::new(&s.base)).await;
    let (refused, retry) = until_locked(&s, &[forged(&id)]).await;
    assert_eq!(refused.len(), 6, "five free, the sixth locks: {refused:?}");
    assert_eq!(retry, 1);
    // The holder's key passes the lock, from any address.
    let r = bearer(&from(100), Method::GET, &s.base, "/backtest/tasks", &key).await;
    assert_eq!(r.status(), 200);

    // An id no key has: the same answers, locked after as many.
    let unknown = if id == "0123456789ab" {
        "ba9876543210"
    } else {
        "0123456789ab"
    };
    let (unknown_refused, unknown_retry) = until_locked(&s, &[forged(unknown)]).await;
    assert_eq!(unknown_refused, refused, "an unknown id is answered alike");
    assert_eq!(unknown_retry, retry);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_secrets_spread_over_an_accounts_keys_are_refused_for_the_account() {
    let (s, _dir) = server().await;
    let demo = Keys::new(&s.base);
    let mut bad = Vec::new();
    for _ in 0..3 {
        bad.push(forged(&read_key(&demo).await.1));
    }
    // Two wrong secrets per id, each id under its free five: the account's
    // count locks at its sixth.
    let (refused, retry) = until_locked(&s, &bad).await;
    assert_eq!(refused.len(), 6, "{refused:?}");
    assert_eq!(retry, 1);
    // Another account's keys are not held back.
    let (_, trial_id) = read_key(&Keys::with_basic(&s.base, TRIAL_EMAIL, TRIAL_PASSWORD)).await;
    let r = bearer(
        &from(200),
        Method::GET,
        &s.base,
        "/backtest/tasks",
        &forged(&trial_id),
    )
    .await;
    assert_eq!(r.status(), 401);
    s.stop().await;
}
