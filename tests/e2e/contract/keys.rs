//! What every API key store promises, and key checks over it.

use super::unique;
use chrono::{NaiveDateTime, TimeDelta};
use platform::keys::{KeyChecker, KeyRecord, KeyStore, KeyVerdict, Mode, Pepper, Scope, issue};
use std::sync::Arc;
use std::time::Duration;

/// Whole microseconds: what both stores keep.
fn now() -> NaiveDateTime {
    let t = chrono::Utc::now().naive_utc();
    t - TimeDelta::nanoseconds(i64::from(t.and_utc().timestamp_subsec_nanos() % 1_000))
}

fn record(account: &str, name: &str, at: NaiveDateTime, pepper: &Pepper) -> (KeyRecord, String) {
    let issued = issue(Mode::Live, pepper).unwrap();
    (
        KeyRecord {
            id: issued.id,
            account: account.into(),
            name: name.into(),
            scopes: vec![Scope::Read, Scope::Submit],
            mode: Mode::Live,
            hash: issued.hash,
            created_at: at,
            expires_at: None,
            revoked_at: None,
            last_used_at: None,
        },
        issued.key,
    )
}

pub async fn run_all(store: Arc<dyn KeyStore>) {
    let pepper = Pepper::new([9; 32]);
    let account = format!("{}@example.test", unique("keys"));
    let t0 = now();
    let (a, _) = record(&account, "first", t0, &pepper);
    assert_eq!(store.get(&a.id).await.unwrap(), None);
    assert!(store.insert(a.clone(), 3).await.unwrap());
    assert_eq!(store.get(&a.id).await.unwrap(), Some(a.clone()));

    // Newest first; at most `max_live` live ones, revoked and expired not counted.
    let (mut b, _) = record(&account, "second", t0 + TimeDelta::seconds(1), &pepper);
    b.expires_at = Some(t0 + TimeDelta::days(1));
    b.scopes = vec![Scope::Manage];
    b.mode = Mode::Test;
    assert!(store.insert(b.clone(), 3).await.unwrap());
    let (c, _) = record(&account, "third", t0 + TimeDelta::seconds(2), &pepper);
    assert!(store.insert(c.clone(), 3).await.unwrap());
    let names: Vec<String> = store
        .list(&account)
        .await
        .unwrap()
        .into_iter()
        .map(|k| k.name)
        .collect();
    assert_eq!(names, ["third", "second", "first"]);
    assert_eq!(
        store.list(&account).await.unwrap()[1],
        b,
        "every field kept"
    );
    let (d, _) = record(&account, "fourth", t0 + TimeDelta::seconds(3), &pepper);
    assert!(
        !store.insert(d.clone(), 3).await.unwrap(),
        "three live already"
    );
    assert_eq!(store.get(&d.id).await.unwrap(), None, "nothing written");
    // A key made after `b` expired does not count it.
    let (mut late, _) = record(&account, "late", t0 + TimeDelta::days(2), &pepper);
    late.expires_at = None;
    assert!(store.insert(late.clone(), 3).await.unwrap());

    // Revoking: only the owner's, and the first time stays.
    let other = format!("{}@example.test", unique("other"));
    assert!(!store.revoke(&other, &a.id, t0).await.unwrap());
    assert!(!store.revoke(&account, "000000000000", t0).await.unwrap());
    let at = t0 + TimeDelta::seconds(10);
    assert!(store.revoke(&account, &a.id, at).await.unwrap());
    assert!(
        store
            .revoke(&account, &a.id, at + TimeDelta::seconds(5))
            .await
            .unwrap()
    );
    assert_eq!(
        store.get(&a.id).await.unwrap().unwrap().revoked_at,
        Some(at)
    );
    assert!(store.list(&other).await.unwrap().is_empty());

    // Last use.
    let used = t0 + TimeDelta::seconds(20);
    store.touch(&c.id, used).await.unwrap();
    assert_eq!(
        store.get(&c.id).await.unwrap().unwrap().last_used_at,
        Some(used)
    );
    store.touch("000000000000", used).await.unwrap();
    assert_eq!(
        store.get("000000000000").await.unwrap(),
        None,
        "a touch makes nothing"
    );

    checks(store).await;
}

/// A key checker over the store: the right secret passes, a wrong one, an
/// unknown id and a revoked or expired key do not; a record is kept for the
/// refresh.
async fn checks(store: Arc<dyn KeyStore>) {
    let pepper = Pepper::new([4; 32]);
    let account = format!("{}@example.test", unique("checks"));
    let (r, key) = record(&account, "checked", now(), &pepper);
    store.insert(r.clone(), 20).await.unwrap();
    let fresh = KeyChecker::new(store.clone(), pepper.clone()).with_refresh(Duration::ZERO);
    let kept =
        KeyChecker::new(store.clone(), pepper.clone()).with_refresh(Duration::from_secs(3600));
    for checker in [&fresh, &kept] {
        assert!(matches!(checker.check(&key).await.unwrap(), KeyVerdict::Valid(v) if v.id == r.id));
    }
    let wrong = format!(
        "{}{}",
        &key[..key.len() - 1],
        if key.ends_with('A') { 'B' } else { 'A' }
    );
    // A wrong secret names the id and its account, for the failure counts;
    // an id no key has is refused the same way, with no account.
    let refused = KeyVerdict::Wrong {
        id: r.id.clone(),
        account: Some(account.clone()),
    };
    assert_eq!(fresh.check(&wrong).await.unwrap(), refused);
    let other_pepper = KeyChecker::new(store.clone(), Pepper::new([5; 32]));
    assert_eq!(other_pepper.check(&key).await.unwrap(), refused);
    let (unknown, unknown_key) = record(&account, "never stored", now(), &pepper);
    assert_eq!(
        fresh.check(&unknown_key).await.unwrap(),
        KeyVerdict::Wrong {
            id: unknown.id,
            account: None
        }
    );
    store.revoke(&account, &r.id, now()).await.unwrap();
    assert_eq!(
        fresh.check(&key).await.unwrap(),
        KeyVerdict::Denied("this API key was revoked")
    );
    assert!(
        matches!(kept.check(&key).await.unwrap(), KeyVerdict::Valid(_)),
        "within its refresh an instance keeps the record it read"
    );
    kept.forget(&r.id);
    assert_eq!(
        kept.check(&key).await.unwrap(),
        KeyVerdict::Denied("this API key was revoked")
    );
    let (mut old, key) = record(&account, "expired", now(), &pepper);
    old.expires_at = Some(now() - TimeDelta::seconds(1));
    store.insert(old, 20).await.unwrap();
    assert_eq!(
        fresh.check(&key).await.unwrap(),
        KeyVerdict::Denied("this API key has expired")
    );
}
