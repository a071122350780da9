//! API key checks: `cargo bench -p tests --bench keys` (`-- --write-docs`
//! to put the figures into docs/keys.md).
//!
//! In process: a key check on a warm instance (the record cached, the
//! secret's HMAC compared) beside the peer every request paid before keys,
//! a cached password login, and an uncached one (argon2). Then what a
//! prober could time: an unknown key id against a wrong secret, call by
//! call in alternation, as the campaign measured (a wrong secret for a key
//! in use, a new unknown id each time), with every id seen for the first
//! time, and as the whole refusal with its failure counts. Over HTTP: the
//! same small authenticated request signed with the key and with the
//! password, alternating rounds on one embedded server, so what a client
//! sees of either way in is measured on its own path.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::accounts::{Authenticator, KeyLogin, SqliteAccountStore, Verdict, add_account};
use platform::keys::{
    KeyChecker, KeyRecord, KeyStore, KeyVerdict, Mode, Pepper, Scope, SqliteKeyStore, issue,
};
use platform::sqlite::Database;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tests::keys::Keys;
use tests::server::TestServer;

const ROUNDS: usize = 20;
const PER_ROUND: usize = 500;

/// Median time of one call of `f` in µs, over batches of `n` calls.
async fn per_call<F, Fut>(n: usize, batches: usize, mut f: F) -> f64
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut times = Vec::new();
    for _ in 0..batches {
        let t = Instant::now();
        for _ in 0..n {
            f().await;
        }
        times.push(t.elapsed().as_secs_f64() * 1e6 / n as f64);
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

async fn http_round(
    client: &reqwest::Client,
    url: &str,
    key: Option<&str>,
    times: &mut Vec<Duration>,
) {
    for _ in 0..PER_ROUND {
        let t = Instant::now();
        let r = client.get(url);
        let r = match key {
            Some(k) => r.bearer_auth(k),
            None => r.basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD)),
        };
        let r = r.send().await.unwrap();
        assert_eq!(r.status(), 200);
        r.bytes().await.unwrap();
        times.push(t.elapsed());
    }
}

fn p50(times: &mut [Duration]) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64() * 1e6
}

/// Refusals timed per call: unknown ids and wrong secrets in alternation.
const PROBES: usize = 1_500;

/// Median µs of each of two calls, timed one after the other `n` times.
async fn paired<A, B, FA, FB>(n: usize, mut a: A, mut b: B) -> (f64, f64)
where
    A: FnMut(usize) -> FA,
    B: FnMut(usize) -> FB,
    FA: std::future::Future<Output = ()>,
    FB: std::future::Future<Output = ()>,
{
    let (mut ta, mut tb) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        let t = Instant::now();
        a(i).await;
        ta.push(t.elapsed());
        let t = Instant::now();
        b(i).await;
        tb.push(t.elapsed());
    }
    (p50(&mut ta), p50(&mut tb))
}

/// `n` keys stored in `keys`, each of an account of its own, sent with a
/// wrong secret; and `n` keys of ids no key has.
async fn probes(keys: &SqliteKeyStore, pepper: &Pepper, n: usize) -> (Vec<String>, Vec<String>) {
    let mut wrong = Vec::with_capacity(n);
    for k in 0..n {
        let issued = issue(Mode::Live, pepper).unwrap();
        let record = KeyRecord {
            id: issued.id.clone(),
            account: format!("owner{k}@bench.example"),
            name: "probed".into(),
            scopes: vec![Scope::Read],
            mode: Mode::Live,
            hash: issued.hash,
            created_at: chrono::Utc::now().naive_utc(),
            expires_at: None,
            revoked_at: None,
            last_used_at: None,
        };
        assert!(keys.insert(record, usize::MAX).await.unwrap());
        wrong.push(format!("mlk_live_{}_{}", issued.id, "A".repeat(43)));
    }
    let unknown = (0..n)
        .map(|_| issue(Mode::Live, pepper).unwrap().key)
        .collect();
    (wrong, unknown)
}

fn refused(v: KeyVerdict) {
    assert!(matches!(v, KeyVerdict::Wrong { .. }), "{v:?}");
}

/// A line of the comparison: both medians and their difference.
fn compared(what: &str, (unknown, wrong): (f64, f64)) -> String {
    format!(
        "{what}: unknown id {unknown:.2} µs, wrong secret {wrong:.2} µs, difference {:.2} µs (p50 of {PROBES} each; acceptance within 10 µs)",
        (unknown - wrong).abs()
    )
}

fn main() {
    let write = std::env::args().any(|a| a == "--write-docs");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let db = Database::in_memory().unwrap();
        let accounts = Arc::new(SqliteAccountStore::new(db.clone()));
        add_account(accounts.as_ref(), DEMO_EMAIL, DEMO_PASSWORD, "pro", vec![])
            .await
            .unwrap();
        let key_store = Arc::new(SqliteKeyStore::new(db));
        let pepper = Pepper::new([7; 32]);
        let checker = KeyChecker::new(key_store.clone(), pepper.clone());
        let made = services::keys::create(
            checker.store().as_ref(),
            checker.pepper(),
            services::keys::Creator { account: DEMO_EMAIL, key: None },
            serde_json::from_value(serde_json::json!({"name": "bench", "scopes": ["read"]})).unwrap(),
            chrono::Utc::now(),
        )
        .await
        .unwrap();
        let auth = Authenticator::embedded(accounts, Duration::from_secs(300))
            .unwrap()
            .with_keys(checker);
        let key = made.key.clone();
        let key_check = per_call(20_000, 15, || async {
            assert!(matches!(auth.verify_key(&key, None).await.unwrap(), KeyLogin::Valid(..)));
        })
        .await;
        let cached_password = per_call(20_000, 15, || async {
            assert!(matches!(
                auth.verify(DEMO_EMAIL, DEMO_PASSWORD, None).await.unwrap(),
                Verdict::Valid(_)
            ));
        })
        .await;
        let argon2 = per_call(1, 9, || async {
            auth.forget_all();
            assert!(matches!(
                auth.verify(DEMO_EMAIL, DEMO_PASSWORD, None).await.unwrap(),
                Verdict::Valid(_)
            ));
        })
        .await;

        // What a prober times. As the campaign did: a wrong secret for the
        // key just used (its record in memory), a new unknown id each time.
        let checks = auth.keys().unwrap().clone();
        let in_use = format!("{}{}", &key[..key.len() - 43], "A".repeat(43));
        let (_, unknown) = probes(&key_store, &pepper, PROBES).await;
        let repeated = paired(
            PROBES,
            |i| {
                let (c, k) = (&checks, &unknown[i]);
                async move { refused(c.check(k).await.unwrap()) }
            },
            |_| {
                let (c, k) = (&checks, &in_use);
                async move { refused(c.check(k).await.unwrap()) }
            },
        )
        .await;
        // Every id seen for the first time, on an instance that has read none.
        let cold = KeyChecker::new(key_store.clone(), pepper.clone());
        let (wrong, unknown) = probes(&key_store, &pepper, PROBES).await;
        let first_look = paired(
            PROBES,
            |i| {
                let (c, k) = (&cold, &unknown[i]);
                async move { refused(c.check(k).await.unwrap()) }
            },
            |i| {
                let (c, k) = (&cold, &wrong[i]);
                async move { refused(c.check(k).await.unwrap()) }
            },
        )
        .await;
        // The whole refusal: the check and the failure counts of the id and
        // its account (each id and account once, so none is locked).
        let (wrong, unknown) = probes(&key_store, &pepper, PROBES).await;
        let denied = |l: KeyLogin| assert_eq!(l, KeyLogin::Denied(platform::keys::INVALID_KEY));
        let whole = paired(
            PROBES,
            |i| {
                let (a, k) = (&auth, &unknown[i]);
                async move { denied(a.verify_key(k, None).await.unwrap()) }
            },
            |i| {
                let (a, k) = (&auth, &wrong[i]);
                async move { denied(a.verify_key(k, None).await.unwrap()) }
            },
        )
        .await;

        let (s, _dir) = TestServer::fresh().await;
        s.without_rate_limit().await;
        let key = Keys::new(&s.base)
            .create(serde_json::json!({"name": "bench", "scopes": ["read"]}))
            .await["key"]
            .as_str()
            .unwrap()
            .to_string();
        let client = reqwest::Client::new();
        let url = s.url("/backtest/indicators/list");
        http_round(&client, &url, Some(&key), &mut Vec::new()).await;
        http_round(&client, &url, None, &mut Vec::new()).await;
        let (mut with_key, mut with_password) = (Vec::new(), Vec::new());
        for k in 0..ROUNDS {
            if k % 2 == 0 {
                http_round(&client, &url, Some(&key), &mut with_key).await;
                http_round(&client, &url, None, &mut with_password).await;
            } else {
                http_round(&client, &url, None, &mut with_password).await;
                http_round(&client, &url, Some(&key), &mut with_key).await;
            }
        }
        let (k50, b50) = (p50(&mut with_key), p50(&mut with_password));
        s.stop().await;
        let lines = vec![
            format!(
                "key check on a warm instance: {key_check:.2} µs (target under 20 µs; {:.0}x under)",
                20.0 / key_check
            ),
            format!(
                "peer, a cached password login: {cached_password:.2} µs (the key check takes {:.1}x as long: an HMAC and two cached look-ups against one hash)",
                key_check / cached_password
            ),
            format!(
                "an uncached password login (argon2): {:.1} ms",
                argon2 / 1000.0
            ),
            compared(
                "a refused key, as the campaign timed it (a wrong secret for a key in use, a new unknown id each time)",
                repeated,
            ),
            compared("a refused key, each id seen for the first time", first_look),
            compared(
                "the whole refusal, with the failure counts of the id and its account",
                whole,
            ),
            format!(
                "`GET /backtest/indicators/list` over HTTP, p50 of {} each: with the key {k50:.0} µs, with the password {b50:.0} µs ({:.2}x)",
                ROUNDS * PER_ROUND,
                b50 / k50
            ),
        ];
        println!("API key checks (release build, this machine):");
        for l in &lines {
            println!("  {l}");
        }
        if write {
            tests::bench::write_docs_block("keys.md", "key-check", &lines);
        }
    });
}
