//! The generated OpenAPI document validates (openapi-spec-validator) and lists
//! every operation of the backtest, analytics and data services; the docs
//! pages work offline.

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;
use tests::server::TestServer;

#[tokio::test(flavor = "multi_thread")]
async fn openapi_document_validates_and_lists_every_operation() {
    let (s, _dir) = TestServer::fresh().await;
    let (status, doc) = s.get("/openapi.json", None).await;
    assert_eq!(status, 200);
    let checked = tests::reference::run("validate_openapi.py", &doc);
    assert_eq!(checked["version"], "3.1.0");
    let ops: Vec<String> = serde_json::from_value(checked["operations"].clone()).unwrap();
    for op in [
        "POST /backtest/start_backtest",
        "POST /backtest/validate",
        "GET /backtest/status/{task_id}",
        "GET /backtest/tasks",
        "GET /cpm/status/{task_id}",
        "GET /cpm/tasks",
        "GET /smart-scanner-backtest/status/{task_id}",
        "GET /smart-scanner-backtest/tasks",
        "GET /backtest/indicators/list",
        "GET /backtest/indicators/metadata",
        "GET /backtest/tutorial",
        "GET /health",
        "GET /auth-info",
        "GET /ws/getAllSymbols",
        "GET /ws/getAllSymbolswithIndexes",
        "GET /ws/getAllUserSelectedSymbols",
        "GET /ws/getAllUserSelectedSymbolsWithIndexes",
        "GET /ws/getModelData",
        "GET /ws/getModelSymbolswithIndexes",
        "GET /ws/getGroupSymbols/{group}",
        "GET /ws/getSymbolData/{symbol}",
        "GET /ws/getSymbolSentimentData/{symbol}",
        "GET /ws/getSymbolDataLimitDays/{symbol}",
        "GET /ws/getSymbolDataSentimentLimitDays/{symbol}",
        "GET /ws/getTodayData",
        "GET /ws/getTodayDataIndexes",
        "GET /ws/getSymbolLimitDate/{symbol}",
        "GET /ws/getAllDataForDate",
        "GET /ws/getAllSymbolDataLimitDays",
        "GET /ws/getIntradaySymbols",
        "GET /ws/getSymbolIntradayHistory/{symbol}",
        "GET /ws/getSymbolIntradayLimitDays/{symbol}",
        "GET /ws/getTodayIntradayData",
        "GET /ws/getUserIndicators",
        "GET /ws/getUserIndicatorData",
        "GET /seasonality",
        "GET /seasonality/get-predefined-holidays",
        "GET /seasonality/performance-by-week",
        "GET /seasonality/performance-by-month",
        "GET /seasonality/performance-by-day-of-month",
        "GET /seasonality/performance-by-day-of-year",
        "GET /seasonality/performance-around-holiday",
        "GET /seasonality/performance-around-specific-days",
        "GET /seasonality/performance-by-day-of-single-month",
        "GET /seasonality/one-dollar-curve",
        "POST /symbol_corr",
        "POST /asset_corr",
        "POST /pattern_corr",
        "POST /symbol_beta",
    ] {
        assert!(ops.contains(&op.to_string()), "{op} missing from {ops:?}");
    }
    // The submit answer links to the task's status in OpenAPI's spelling
    // (utoipa writes `operation_id`; the document is corrected as it is built).
    assert_eq!(
        doc["paths"]["/backtest/start_backtest"]["post"]["responses"]["202"]["links"]["status"],
        json!({"operationId": "backtest_status", "parameters": {"task_id": "$response.body#/task_id"}})
    );
    // Answers given before a handler runs are documented on every operation.
    let submit = &doc["paths"]["/backtest/start_backtest"]["post"]["responses"];
    for status in ["408", "413", "414", "429", "431", "503"] {
        assert!(submit[status].is_object(), "submit documents {status}");
    }
    assert!(submit["429"]["headers"]["Retry-After"].is_object());
    let data = &doc["paths"]["/ws/getAllSymbols"]["get"]["responses"];
    assert_eq!(
        data["429"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/DataError"
    );
    assert!(data["413"].is_null(), "no body, no 413");
    assert!(
        doc["paths"]["/health"]["get"]["responses"]["429"].is_null(),
        "public: no login lock"
    );
    let schemes = &doc["components"]["securitySchemes"];
    assert_eq!(
        (&schemes["basic"]["type"], &schemes["basic"]["scheme"]),
        (&json!("http"), &json!("basic"))
    );
    assert_eq!(
        (&schemes["bearer"]["type"], &schemes["bearer"]["scheme"]),
        (&json!("http"), &json!("bearer"))
    );
    // Each authenticated operation: both ways in, the key's scope as its role.
    assert_eq!(
        doc["paths"]["/backtest/start_backtest"]["post"]["security"],
        json!([{"basic": []}, {"bearer": ["submit"]}])
    );
    let result = &doc["components"]["schemas"]["BacktestResult"]["properties"];
    for field in [
        "Total Trades",
        "Each Return",
        "Total Return (%)",
        "Max Drawdown",
        "BT End Date",
    ] {
        assert!(result.get(field).is_some(), "{field}");
    }
    // Data operations carry the shared error answers.
    let answers = &doc["paths"]["/ws/getSymbolData/{symbol}"]["get"]["responses"];
    for code in ["200", "401", "404", "405"] {
        assert!(answers.get(code).is_some(), "{code} missing from {answers}");
    }
    // Public operations need no credentials.
    assert_eq!(doc["paths"]["/health"]["get"]["security"], json!([{}]));

    // The pages load their assets from this server, not from the internet.
    for (page, asset) in [
        ("/docs", "/docs/swagger-ui-bundle.js"),
        ("/redoc", "/redoc/redoc.standalone.js"),
    ] {
        let html = reqwest::get(s.url(page))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            html.contains(&format!("src=\"{asset}\"")) && !html.contains("https://"),
            "{page}: {html}"
        );
        let resp = reqwest::get(s.url(asset)).await.unwrap();
        assert_eq!(resp.status().as_u16(), 200);
        assert!(
            resp.bytes().await.unwrap().len() > 500_000,
            "{asset} is the full bundle"
        );
    }
    let css = reqwest::get(s.url("/docs/swagger-ui.css")).await.unwrap();
    assert_eq!(css.headers()["content-type"], "text/css");
    let _: Value = doc;
    s.stop().await;
}

/// A client generated from the served document with openapi-python-client
/// (what a new user would run): no warning, every module imports, and the
/// request shapes of docs/backtest.md read back unchanged through its models.
#[tokio::test(flavor = "multi_thread")]
async fn a_generated_python_client_takes_the_document_cleanly() {
    let (s, _dir) = TestServer::fresh().await;
    let (status, doc) = s.get("/openapi.json", None).await;
    assert_eq!(status, 200);
    let close = |op: &str, v: &str| json!({"signal": {"name": "Symbol Close", "type": "Symbol"}, "rule": {"type_name": op, "comparison_value": v}});
    let sma = json!({"signal": {"name": "Simple Moving Average", "type": "Technical", "params": {"period": 10}}, "rule": {"comparison_type": "MA", "type_name": "CrossAbove", "period": 20}});
    let strategies = vec![
        json!({"symbol": "SPX", "entry": {"rule_type": "SingleCondition", "condition": sma}, "exit": {"rule_type": "RiskControlOnly"}, "risk_control": "-5/10/21", "capital_alloc": "0.5", "commission": "0.001", "description": {"Introduction": "SMA 10/20"}}),
        json!({"symbol": "SPX", "entry": {"rule_type": "Scoring", "condition": [close(">", "100"), {"signal": {"name": "Symbol Close", "type": "Symbol"}, "rule": {"type_name": ">", "comparison_value": "5"}, "qualifier": {"comparison_operator": "Rate Of Change", "calculation_period": 5}}], "score_threshold": 1}, "exit": {"rule_type": "TimeOrder", "steps": [close("<", "90"), {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "All-time High"}}], "signals_in_market": 5}}),
        json!({"symbol": "GOOG", "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Relative Strength Index", "type": "Technical", "params": {"period": 14}}, "rule": {"comparison_type": "SVMA", "type_name": "<", "period": 5}}, "delay_bars": 1}, "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Volume", "type": "Symbol"}, "rule": {"type_name": "Consecutive Days Above", "comparison_value": "1000", "period": 3}}}}),
    ];
    let examples = json!({
        "StrategyParams": strategies,
        "StrategyList": [{"strategies": strategies, "name": "three"}],
        "StrategyGrid": [{"strategy": strategies[0], "grid": {"entry.condition.rule.period": ["20", "50"], "risk_control": ["//21", "-5/10/21"]}}],
    });
    let checked = tests::reference::run(
        "generate_client.py",
        &json!({"document": doc, "examples": examples}),
    );
    assert_eq!(checked["warnings"], json!([]), "{checked}");
    assert_eq!(checked["import_failures"], json!([]), "{checked}");
    assert!(checked["modules"].as_u64().unwrap() > 300, "{checked}");
    assert_eq!(checked["round_trip_failures"], json!([]), "{checked}");
    assert!(checked["round_trips"].as_u64().unwrap() >= 11, "{checked}");
    s.stop().await;
}

/// A second generator family: TypeScript types from openapi-typescript
/// (npm), compiled with tsc in strict mode beside code that uses them: a
/// strategy as docs/backtest.md writes it type-checks, a misspelt rule type
/// does not.
#[tokio::test(flavor = "multi_thread")]
async fn typescript_types_generated_from_the_document_compile() {
    let modules = std::env::var("MARKETLAB_NODE_MODULES")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default())
                .join(".cache/marketlab/node/node_modules")
        });
    assert!(
        modules.join("openapi-typescript").exists(),
        "{} is missing: tests/run installs tests/typescript/package.json there",
        modules.display()
    );
    let (s, _dir) = TestServer::fresh().await;
    let (status, doc) = s.get("/openapi.json", None).await;
    assert_eq!(status, 200);
    s.stop().await;
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("openapi.json"), doc.to_string()).unwrap();
    let node = |args: &[&str]| {
        let out = Command::new("node")
            .args(args)
            .current_dir(work.path())
            .output()
            .expect("node runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    };
    let generator = modules.join("openapi-typescript/bin/cli.js");
    let (ok, said) = node(&[generator.to_str().unwrap(), "openapi.json", "-o", "api.ts"]);
    assert!(ok, "{said}");
    // A clean run prints its banner and the file it wrote, nothing else.
    let noise: Vec<&str> = said
        .lines()
        .filter(|l| {
            !l.trim().is_empty() && !l.contains("openapi-typescript") && !l.contains("api.ts")
        })
        .collect();
    assert!(noise.is_empty(), "{said}");
    std::fs::write(work.path().join("use.ts"), USE_TS).unwrap();
    let tsc = modules.join("typescript/bin/tsc");
    let (ok, said) = node(&[
        tsc.to_str().unwrap(),
        "--noEmit",
        "--strict",
        "--target",
        "es2022",
        "--module",
        "es2022",
        "--moduleResolution",
        "bundler",
        "api.ts",
        "use.ts",
    ]);
    assert!(ok, "tsc: {said}");
}

/// Code a TypeScript user writes against the generated types.
const USE_TS: &str = r#"import type { components, paths } from "./api";
type Strategy = components["schemas"]["StrategyParams"];
const sma = { name: "Simple Moving Average", type: "Technical", params: { period: 10 } } as const;
export const strategy: Strategy = {
  symbol: "SPX", capital_alloc: "0.5", risk_control: "-5/10/21", description: { Introduction: "SMA 10/20" },
  entry: { rule_type: "SingleCondition", condition: { signal: sma, rule: { comparison_type: "MA", type_name: "CrossAbove", period: 20 } } },
  exit: { rule_type: "Scoring", score_threshold: 1, condition: [
    { signal: { name: "Symbol Close", type: "Symbol" }, rule: { type_name: "<", comparison_value: "90" }, qualifier: { comparison_operator: "Rate Of Change", calculation_period: 5 } },
  ] },
};
type Submitted = paths["/backtest/start_backtest"]["post"]["responses"]["202"]["content"]["application/json"];
export const id: Submitted["task_id"] = "00000000-0000-0000-0000-000000000000";
type Grid = components["schemas"]["StrategyGrid"];
export const grid: Grid = { strategy, grid: { "entry.condition.rule.period": ["20", "50"] } };
// @ts-expect-error a rule type the document does not list
export const misspelt: Strategy = { symbol: "SPX", entry: { rule_type: "Single", condition: [] }, exit: { rule_type: "RiskControlOnly" } };
"#;
