//! A portfolio task on the AWS path (the emulator, the functions' own
//! binaries): submitted through the backtest function, run by the worker
//! function from the queue, read back through the backtest function (its
//! tables joined from S3), and equal to the same request run embedded on
//! the same data; then again on those bars sent as the caller's own.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::{LocalDir, ParquetMarketData};
use serde_json::{Value, json};
use std::sync::Arc;
use tests::emulator::{Deployment, deployment, drain_until, function_env};
use tests::runtime_api::{Function, answer_json, basic, http_event, workspace_binaries};

#[tokio::test(flavor = "multi_thread")]
async fn a_portfolio_runs_through_the_worker_function_as_it_runs_embedded() {
    let Deployment {
        clients: c,
        names,
        state,
    } = deployment().await;
    let [worker, backtest] = workspace_binaries(["worker", "backtest"]).await;
    let env = function_env(&names);
    let auth = basic(DEMO_EMAIL, DEMO_PASSWORD);
    let body = json!({
        "universe": ["AAPL", "MSFT", "NVDA", "AMZN", "GOOGL", "META", "JPM", "XOM"],
        "start_date": "2012-01-03", "end_date": "2020-12-31", "commission": 0.001,
        "weights": {"schedule": {"every": "month"}, "select": {"method": "top", "k": 3, "by": {"momentum": 63}},
                    "weighting": {"method": "inverse_volatility", "bars": 60}}
    });
    let mut http = Function::new(&backtest, "backtest", 1024, &env).await;
    let submitted = http
        .invoke(http_event(
            "POST",
            "/backtest/portfolio",
            Some(&body),
            Some(&auth),
        ))
        .await;
    assert_eq!(submitted.answer["statusCode"], 202, "{}", submitted.answer);
    let id = answer_json(&submitted.answer)["task_id"]
        .as_str()
        .unwrap()
        .to_string();
    let task_id: uuid::Uuid = id.parse().unwrap();
    let mut w = Function::new(&worker, "worker", 2048, &env).await;
    drain_until(&c, &names.queue_url, &mut w, || async {
        state
            .tasks
            .get(task_id)
            .await
            .unwrap()
            .is_some_and(|t| t.status.is_finished())
    })
    .await;
    let read = http
        .invoke(http_event(
            "GET",
            &format!("/backtest/portfolio/{id}"),
            None,
            Some(&auth),
        ))
        .await;
    let record = answer_json(&read.answer);
    assert_eq!(record["status"], "SUCCESS", "{record}");
    let got = &record["result"];
    // The same request on the same data, embedded.
    let local = ParquetMarketData::new(Arc::new(LocalDir::new(tests::server::market_dir())));
    let prepared = services::backtest::portfolio::prepare(&local, &body)
        .await
        .unwrap();
    let want = services::backtest::portfolio::execute(&local, prepared)
        .await
        .unwrap();
    let want = serde_json::to_value(want).unwrap();
    same(&got["series"], &want["series"], "series");
    same(&got["orders"], &want["orders"], "orders");
    same(&got["sharpe"], &want["sharpe"], "sharpe");
    assert!(got["orders"].as_array().unwrap().len() > 100);

    // The same portfolio on its bars sent as the caller's own (multipart,
    // base64 through API Gateway), stored in S3 and read by the worker.
    let mut own = body.clone();
    let universe: Vec<String> = body["universe"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| format!("OWN_{}", s.as_str().unwrap()))
        .collect();
    own["universe"] = json!(universe);
    let json_part = serde_json::to_vec(&own).unwrap();
    let mut files = Vec::new();
    for sym in body["universe"].as_array().unwrap() {
        let sym = sym.as_str().unwrap();
        let bars = platform::marketdata::MarketData::daily(&local, sym)
            .await
            .unwrap();
        let upload = platform::uploads::Upload {
            signals: std::array::from_fn(|_| vec![0.0; bars.len()]),
            bars: (*bars).clone(),
        };
        files.push((
            format!("bars.OWN_{sym}"),
            upload.to_parquet().unwrap().to_vec(),
        ));
    }
    let mut parts: Vec<(&str, &str, &[u8])> = vec![("portfolio", "application/json", &json_part)];
    for (name, data) in &files {
        parts.push((name, "application/vnd.apache.parquet", data));
    }
    let (content_type, form) = tests::server::multipart(&parts);
    let mut event = http_event("POST", "/backtest/portfolio", None, Some(&auth));
    event["headers"]["content-type"] = json!(content_type);
    event["body"] = json!(base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        &form
    ));
    event["isBase64Encoded"] = json!(true);
    let submitted = http.invoke(event).await;
    assert_eq!(submitted.answer["statusCode"], 202, "{}", submitted.answer);
    let id = answer_json(&submitted.answer)["task_id"]
        .as_str()
        .unwrap()
        .to_string();
    let task_id: uuid::Uuid = id.parse().unwrap();
    drain_until(&c, &names.queue_url, &mut w, || async {
        state
            .tasks
            .get(task_id)
            .await
            .unwrap()
            .is_some_and(|t| t.status.is_finished())
    })
    .await;
    let read = http
        .invoke(http_event(
            "GET",
            &format!("/backtest/portfolio/{id}"),
            None,
            Some(&auth),
        ))
        .await;
    let record = answer_json(&read.answer);
    assert_eq!(record["status"], "SUCCESS", "{record}");
    let orders: Vec<Value> = record["result"]["orders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let mut o = o.clone();
            o["symbol"] = json!(o["symbol"].as_str().unwrap().trim_start_matches("OWN_"));
            o
        })
        .collect();
    same(&json!(orders), &want["orders"], "own bars' orders");
    same(
        &record["result"]["series"],
        &want["series"],
        "own bars' series",
    );
}

/// Equal values, numbers to the last bits JSON text may cost (a stored
/// result is read back as text).
fn same(a: &Value, b: &Value, at: &str) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                (x - y).abs() <= 1e-12 * x.abs().max(y.abs()),
                "{at}: {x} vs {y}"
            );
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}: length");
            for (i, (x, y)) in x.iter().zip(y).enumerate() {
                same(x, y, &format!("{at}[{i}]"));
            }
        }
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(
                x.keys().collect::<Vec<_>>(),
                y.keys().collect::<Vec<_>>(),
                "{at}: keys"
            );
            for (k, v) in x {
                same(v, &y[k], &format!("{at}.{k}"));
            }
        }
        _ => assert_eq!(a, b, "{at}"),
    }
}
