//! Cold starts of the release Lambda binaries:
//! `infra/build-functions` (each function built alone),
//! then `cargo bench -p tests --bench cold_start`.
//!
//! Each binary runs as Lambda runs it: against a Runtime API (served here,
//! on 127.0.0.1, as Lambda's documented endpoints: `invocation/next`, the
//! response and error posts) with its tables, queue and bucket on the
//! emulator. Timed from the process's spawn to its first response, then a
//! second (warm) invocation; for the HTTP functions the first event is
//! `/health`, and an authenticated request follows (the password check, the
//! plan's limits).

use serde_json::{Value, json};
use tests::runtime_api::{Function, http_event, release_dir, template_memory_mb};

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let tests::emulator::Deployment { names, .. } = tests::emulator::deployment().await;
        let env = tests::emulator::function_env(&names);
        let basic = tests::runtime_api::basic(
            marketlab::server::DEMO_EMAIL,
            marketlab::server::DEMO_PASSWORD,
        );
        println!("cold starts of the release Lambda binaries (Runtime API on 127.0.0.1, AWS on the emulator)");
        println!("| binary | size MB | spawn to first response ms | warm ms | first authenticated ms | warm authenticated ms |");
        println!("|---|---|---|---|---|---|");
        let functions: [(&str, Vec<Value>); 5] = [
            ("backtest", vec![http_event("GET", "/health", None, None), http_event("GET", "/health", None, None), http_event("GET", "/backtest/tasks", None, Some(&basic)), http_event("GET", "/backtest/tasks", None, Some(&basic))]),
            ("analytics", vec![http_event("GET", "/health", None, None), http_event("GET", "/health", None, None), http_event("GET", "/cpm/get-predefined-patterns", None, Some(&basic)), http_event("GET", "/cpm/get-predefined-patterns", None, Some(&basic))]),
            ("data", vec![http_event("GET", "/ws/health", None, None), http_event("GET", "/ws/health", None, None), http_event("GET", "/ws/getAllSymbols", None, Some(&basic)), http_event("GET", "/ws/getAllSymbols", None, Some(&basic))]),
            ("worker", vec![json!({"Records": []}), json!({"Records": []})]),
            // A scheduled run scans the latest session of the emulator's
            // sample set (12 stocks): its time is mostly the scan's.
            ("scanner-nightly", vec![json!({}), json!({})]),
        ];
        for (binary, events) in functions {
            let path = release_dir().join(binary);
            let size = std::fs::metadata(&path).map_or(0.0, |m| m.len() as f64 / 1e6);
            let mut function =
                Function::new(&path, &format!("marketlab-{binary}"), template_memory_mb(binary), &env).await;
            let mut times = Vec::new();
            for (k, event) in events.into_iter().enumerate() {
                let v = function.invoke(event).await;
                let status = v.answer.get("statusCode").and_then(Value::as_u64);
                assert!(
                    v.answer.get("error").is_none() && status.is_none_or(|s| s == 200),
                    "{binary} request {k}: {}",
                    v.answer
                );
                times.push(v.ms);
            }
            let cell = |k: usize| times.get(k).map_or("-".to_string(), |t| format!("{t:.1}"));
            println!("| {binary} | {size:.1} | {} | {} | {} | {} |", cell(0), cell(1), cell(2), cell(3));
        }
    });
}
