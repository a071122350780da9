//! API key checks: `cargo bench -p tests --bench keys` (`-- --write-docs`
//! to put the figures into docs/keys.md).
//!
//! In process: a key check on a warm instance (the record cached, the
//! secret's HMAC compared) beside the peer every request paid before keys,
//! a cached password login, and an uncached one (argon2). Over HTTP: the
//! same small authenticated request signed with the key and with the
//! password, alternating rounds on one embedded server, so what a client
//! sees of either way in is measured on its own path.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::accounts::{Authenticator, KeyLogin, SqliteAccountStore, Verdict, add_account};
use platform::keys::{KeyChecker, Pepper, SqliteKeyStore};
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

fn main() {
    let write = std::env::args().any(|a| a == "--write-docs");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let db = Database::in_memory().unwrap();
        let accounts = Arc::new(SqliteAccountStore::new(db.clone()));
        add_account(accounts.as_ref(), DEMO_EMAIL, DEMO_PASSWORD, "pro", vec![])
            .await
            .unwrap();
        let checker = KeyChecker::new(Arc::new(SqliteKeyStore::new(db)), Pepper::new([7; 32]));
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
