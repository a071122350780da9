//! Phase 7: one tenant opens 5,000 long-polls (`?wait=20`) at once on a
//! task that does not end; once its share is held and the rest refused
//! (429 or 503, never a broken connection), another tenant's request is
//! answered in under 100 ms and its backtest completes in under 1 s.

use super::{Check, DEMO, Server, client_on};
use platform::tasks::{NewTask, TaskKind, TaskStore};
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const FLOOD: usize = 5_000;
/// `serve --header-timeout`'s default.
const DEFAULT_HEADER_TIMEOUT_SECS: u64 = 20;
const OTHER: (&str, &str) = ("unhurried@soak.test", "an unhurried long password");

/// A task of the flooding tenant that stays PENDING: written to the
/// server's database beside it, never queued.
async fn pending_task(data: &Path) -> String {
    let db = platform::sqlite::Database::open(&data.join("state").join("marketlab.sqlite"))
        .expect("the server's database");
    let tasks = platform::tasks::SqliteTaskStore::new(db);
    let t = tasks
        .create(NewTask {
            owner: DEMO.0.into(),
            kind: TaskKind::StrategyBacktest,
            params: super::strategy(0),
        })
        .await
        .expect("a task stored");
    t.id.to_string()
}

pub async fn long_poll_flood(bin: &Path, data: &Path, port: u16) -> Check {
    let _ = Command::new(bin)
        .args(["--data-dir", data.to_str().unwrap(), "accounts", "add"])
        .args(["--email", OTHER.0, "--password", OTHER.1, "--plan", "pro"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    // The default header timeout: a flooding client's connections that are
    // admitted may write their requests seconds after their connect (the
    // soak's 2 s, for phase 3, would close them as silent).
    let server = Server::start_with_header_timeout(
        bin,
        data,
        port,
        data.join("long-polls.log"),
        DEFAULT_HEADER_TIMEOUT_SECS,
    );
    server.ready().await;
    let base = server.base.clone();
    let id = pending_task(data).await;
    // The other tenant, on an address of its own, signed in before.
    let other = client_on(IpAddr::V4(Ipv4Addr::new(127, 0, 3, 1)));
    let cheap = |c: &reqwest::Client| {
        c.get(format!("{base}/backtest/tasks?limit=1"))
            .basic_auth(OTHER.0, Some(OTHER.1))
            .send()
    };
    assert_eq!(
        cheap(&other).await.expect("answered").status().as_u16(),
        200
    );
    let (_, rss_before) = server.memory();
    let flooder = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let started = Instant::now();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut polls = tokio::task::JoinSet::new();
    for _ in 0..FLOOD {
        let request = flooder
            .get(format!("{base}/backtest/status/{id}?wait=20"))
            .basic_auth(DEMO.0, Some(DEMO.1))
            .send();
        let tx = tx.clone();
        polls.spawn(async move {
            let answer = request.await.map(|r| r.status().as_u16()).map_err(|e| {
                // What broke, for the check's detail: the chain's last cause.
                let mut cause: &dyn std::error::Error = &e;
                while let Some(next) = cause.source() {
                    cause = next;
                }
                format!("{cause}")
            });
            let _ = tx.send(answer);
        });
    }
    drop(tx);
    // Every long-poll past the tenant's share is refused at once.
    let share = 100;
    let mut answers: Vec<Result<u16, String>> = Vec::new();
    let settled = tokio::time::timeout(Duration::from_secs(30), async {
        while answers.len() < FLOOD - share {
            match rx.recv().await {
                Some(s) => answers.push(s),
                None => break,
            }
        }
    })
    .await
    .is_ok();
    let settled_after = started.elapsed();
    // Now the other tenant: a cheap request, then a backtest to SUCCESS.
    let mut cheap_ms = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let ok = cheap(&other).await.is_ok_and(|r| r.status().is_success());
        cheap_ms.push(if ok {
            t.elapsed().as_secs_f64() * 1000.0
        } else {
            f64::INFINITY
        });
    }
    let backtest_started = Instant::now();
    let sub: serde_json::Value = other
        .post(format!("{base}/backtest/start_backtest"))
        .basic_auth(OTHER.0, Some(OTHER.1))
        .json(&super::strategy(1))
        .send()
        .await
        .expect("submitted")
        .json()
        .await
        .expect("a JSON answer");
    let task = sub["task_id"].as_str().unwrap_or_default().to_string();
    let done: serde_json::Value = other
        .get(format!("{base}/backtest/status/{task}?wait=20"))
        .basic_auth(OTHER.0, Some(OTHER.1))
        .send()
        .await
        .expect("answered")
        .json()
        .await
        .expect("a JSON answer");
    let backtest = backtest_started.elapsed();
    let (peak, _) = server.memory();
    polls.abort_all();
    server.stop();
    let refused = answers
        .iter()
        .filter(|s| matches!(s, Ok(429 | 503)))
        .count();
    let broken = answers.len() - refused;
    // The other answers by status or error, counted.
    let mut others = std::collections::BTreeMap::<String, usize>::new();
    for a in answers.iter().filter(|s| !matches!(s, Ok(429 | 503))) {
        let what = match a {
            Ok(status) => format!("HTTP {status}"),
            Err(e) => e.clone(),
        };
        *others.entry(what).or_default() += 1;
    }
    let slowest = cheap_ms.iter().copied().fold(0.0, f64::max);
    let ok = settled
        && broken == 0
        && slowest < 100.0
        && done["status"] == "SUCCESS"
        && backtest < Duration::from_secs(1);
    Check {
        name: "5,000 long-polls from one tenant",
        ok,
        detail: format!(
            "{FLOOD} long-polls: {refused} refused (429/503) within {:.1} s, {broken} other answers {others:?}; the other tenant's request at most {slowest:.1} ms over 20 (limit 100), its backtest {} in {:.0} ms (limit 1000); server memory {rss_before:.0} MiB before, peak {peak:.0} MiB",
            settled_after.as_secs_f64(),
            done["status"],
            backtest.as_secs_f64() * 1000.0
        ),
    }
}

/// Phase 8: a 20,000-row batch finishing under 1,000 long-polls of its
/// owner (its share of 100 held, the rest refused): the server's memory
/// grows by under 300 MiB, and each waiter's answer is the small status.
pub async fn batch_waiters(bin: &Path, data: &Path, port: u16) -> Check {
    const WAITERS: usize = 1_000;
    let server = Server::start(bin, data, port, data.join("batch-waiters.log"));
    server.ready().await;
    let base = server.base.clone();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()
        .unwrap();
    let fast: Vec<String> = (2..202).map(|p| p.to_string()).collect();
    let slow: Vec<String> = (210..310).map(|p| p.to_string()).collect();
    let grid = serde_json::json!({
        "name": "soak waiters",
        // Five years a strategy: the batch runs for seconds, so every
        // waiter is in before it ends (one that comes after is answered at
        // once and holds nothing, which the count below cannot tell apart).
        "strategy": {"symbol": "SPX", "start_date": "2019-01-02", "end_date": "2023-12-29",
            "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
                "rule": {"comparison_type": "SVMA", "type_name": "CrossAbove", "comparison_value": "0", "period": "20"}}},
            "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
                "rule": {"comparison_type": "SVMA", "type_name": "CrossBelow", "comparison_value": "0", "period": "200"}}}},
        "grid": {"entry.condition.rule.period": fast, "exit.condition.rule.period": slow}
    });
    let (_, rss_before) = server.memory();
    let sub: serde_json::Value = http
        .post(format!("{base}/backtest/batch"))
        .basic_auth(DEMO.0, Some(DEMO.1))
        .json(&grid)
        .send()
        .await
        .expect("submitted")
        .json()
        .await
        .expect("a JSON answer");
    let id = sub["task_id"].as_str().unwrap_or_default().to_string();
    let started = Instant::now();
    let mut polls = tokio::task::JoinSet::new();
    for _ in 0..WAITERS {
        let request = http
            .get(format!("{base}/backtest/batch/{id}?wait=20"))
            .basic_auth(DEMO.0, Some(DEMO.1))
            .send();
        polls.spawn(async move {
            match request.await {
                Ok(r) => {
                    let status = r.status().as_u16();
                    (status, r.bytes().await.map(|b| b.len()).unwrap_or(0))
                }
                Err(_) => (0, 0),
            }
        });
    }
    let mut answers = Vec::new();
    while let Some(a) = polls.join_next().await {
        answers.push(a.expect("a poll"));
    }
    // Held waiters end at the batch's end or their 20 s; read it to its end.
    let end = tokio::time::timeout(Duration::from_secs(300), async {
        loop {
            let st = super::demo_get(&http, &format!("{base}/backtest/batch/{id}?wait=20")).await;
            if st["status"] == "SUCCESS" || st["status"] == "FAILED" {
                return st;
            }
        }
    })
    .await
    .unwrap_or_default();
    let took = started.elapsed();
    let (peak, _) = server.memory();
    let rows = http
        .get(format!("{base}/backtest/batch/{id}/results"))
        .basic_auth(DEMO.0, Some(DEMO.1))
        .send()
        .await
        .expect("answered")
        .json::<serde_json::Value>()
        .await
        .map(|v| v.as_array().map_or(0, Vec::len))
        .unwrap_or(0);
    server.stop();
    let held: Vec<&(u16, usize)> = answers.iter().filter(|a| a.0 == 200).collect();
    let refused = answers.iter().filter(|a| matches!(a.0, 429 | 503)).count();
    let largest = held.iter().map(|a| a.1).max().unwrap_or(0);
    let grew = peak - rss_before;
    let ok = end["status"] == "SUCCESS"
        && rows == 20_000
        && held.len() + refused == WAITERS
        && held.len() <= 100
        && largest < 64 * 1024
        && grew < 300.0;
    Check {
        name: "a 20,000-row batch finishing under 1,000 waiters",
        ok,
        detail: format!(
            "{} ({rows} rows) after {:.1} s; {} long-polls held (the tenant's share), {refused} refused; largest status answer {largest} bytes (limit 64 KiB); server memory {rss_before:.0} MiB before, peak {peak:.0} MiB (+{grew:.0}, limit 300)",
            end["status"],
            took.as_secs_f64(),
            held.len()
        ),
    }
}
