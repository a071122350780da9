//! Phase 4 of the soak: large own-data uploads, 8 at a time, with the
//! server's memory watched.

use super::{Check, DEMO, Server, demo_get};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A 4.4 MB `csv_data` body of 36,000 daily bars; `i` varies the prices.
fn upload_body(i: usize) -> Vec<u8> {
    let start = chrono::NaiveDate::from_ymd_opt(1900, 1, 1).unwrap();
    let mut rows = String::with_capacity(4_500_000);
    let mut price = 100.0 + i as f64;
    for k in 0..36_000u32 {
        let date = start + chrono::Days::new(u64::from(k));
        price *= 1.0 + 0.01 * (f64::from(k % 17) - 8.0) / 8.0 * 0.5;
        let (lo, hi) = (price * 0.99, price * 1.01);
        if k > 0 {
            rows.push(',');
        }
        rows.push_str(&format!(
            "{{\"Date\":\"{date}\",\"Open\":{price:.6},\"High\":{hi:.6},\"Low\":{lo:.6},\"Close\":{price:.6},\"Volume\":{},\"Entry1\":{},\"Exit1\":{}}}",
            1_000_000 + k,
            u8::from(k % 40 == 0),
            u8::from(k % 40 == 20)
        ));
    }
    format!(
        r#"{{"symbol":"MINE","csv_mode":true,"name":"upload {i}","risk_control":"//",
        "entry":{{"rule_type":"SingleCondition","condition":{{"signal":{{"name":"Entry1"}},"rule":{{"type_name":">","comparison_value":"0.5"}}}}}},
        "exit":{{"rule_type":"SingleCondition","condition":{{"signal":{{"name":"Exit1"}},"rule":{{"type_name":">","comparison_value":"0.5"}}}}}},
        "csv_data":[{rows}]}}"#
    )
    .into_bytes()
}

/// Phase 4: large own-data uploads, 8 at a time, with the server's memory watched.
pub(super) async fn uploads(bin: &Path, data: &Path, port: u16) -> Check {
    let server = Server::start(bin, data, port, data.join("uploads.log"));
    server.ready().await;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let bodies: Vec<Arc<Vec<u8>>> = (0..32).map(|i| Arc::new(upload_body(i))).collect();
    let size = bodies[0].len();
    // A warm server: one upload run first (the threads' first arenas and the
    // readers' caches are the server's, not the load's), then the memory
    // settled. Measured from a server fresh from its start, the baseline
    // depended on whether the start's memory had been returned yet.
    let warm = http
        .post(format!("{}/backtest/start_backtest", server.base))
        .basic_auth(DEMO.0, Some(DEMO.1))
        .header("content-type", "application/json")
        .body(upload_body(32))
        .send()
        .await
        .expect("the server answers")
        .json::<Value>()
        .await
        .unwrap();
    let warm = format!(
        "{}/backtest/status/{}",
        server.base,
        warm["task_id"].as_str().expect("a task")
    );
    while !matches!(
        demo_get(&http, &warm).await["status"].as_str(),
        Some("SUCCESS" | "FAILED")
    ) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let before = settled(&server).await;
    // From here VmHWM is this phase's peak.
    let _ = std::fs::write(format!("/proc/{}/clear_refs", server.pid()), "5");
    let started = Instant::now();
    let mut ids = Vec::new();
    for batch in bodies.chunks(8) {
        let mut sends = tokio::task::JoinSet::new();
        for body in batch {
            let (http, base, body) = (http.clone(), server.base.clone(), body.clone());
            sends.spawn(async move {
                let r = http
                    .post(format!("{base}/backtest/start_backtest"))
                    .basic_auth(DEMO.0, Some(DEMO.1))
                    .header("content-type", "application/json")
                    .body(body.as_ref().clone())
                    .send()
                    .await
                    .expect("the server answers");
                assert_eq!(r.status().as_u16(), 202, "upload accepted");
                r.json::<Value>().await.unwrap()["task_id"]
                    .as_str()
                    .unwrap()
                    .to_string()
            });
        }
        while let Some(id) = sends.join_next().await {
            ids.push(id.unwrap());
        }
    }
    let mut finished = 0;
    for id in &ids {
        let url = format!("{}/backtest/status/{id}", server.base);
        loop {
            let status = demo_get(&http, &url).await["status"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            if status == "SUCCESS" || status == "FAILED" {
                finished += usize::from(status == "SUCCESS");
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let elapsed = started.elapsed();
    let record = http
        .get(format!("{}/backtest/status/{}", server.base, ids[0]))
        .basic_auth(DEMO.0, Some(DEMO.1))
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap()
        .len();
    let (peak, _) = server.memory();
    let after = settled(&server).await;
    server.stop();
    let rise = peak - before;
    let ok = finished == 32 && rise < 300.0 && (after - before).abs() < 100.0 && record < 64 * 1024;
    Check {
        name: "own-data uploads in bounded memory",
        ok,
        detail: format!(
            "32 backtests of {:.1} MB csv_data, 8 at a time: {finished} SUCCESS in {:.1} s; RSS {before:.0} MiB before, peak {peak:.0} MiB (+{rise:.0}, under 300), {after:.0} MiB after (within 100); status record {record} bytes (under 65,536)",
            size as f64 / 1e6,
            elapsed.as_secs_f64()
        ),
    }
}

/// The server's resident memory once it stops changing: within 1 MiB over
/// half a second (freed memory goes back after 250 ms), or after 5 s.
pub(super) async fn settled(server: &Server) -> f64 {
    let t = Instant::now();
    let mut seen = vec![server.memory().1];
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        seen.push(server.memory().1);
        let last = &seen[seen.len().saturating_sub(6)..];
        let (lo, hi) = last
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &m| (lo.min(m), hi.max(m)));
        if (last.len() == 6 && hi - lo <= 1.0) || t.elapsed() > Duration::from_secs(5) {
            return *seen.last().unwrap();
        }
    }
}
