//! Deep, wide and expanding bodies against every operation that takes one,
//! found in the OpenAPI document (so a new operation is covered when it is
//! documented): each is refused with a 4xx before any work, and the server
//! keeps serving.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::Value;
use tests::server::TestServer;

/// The body-taking operations of the document and their content types.
fn body_operations() -> Vec<(String, Vec<String>)> {
    let doc: Value = serde_json::from_str(api::routes::document()).unwrap();
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if let Some(content) = op["requestBody"]["content"].as_object() {
                assert_eq!(method, "post", "{path}: only POST takes a body");
                // Media types beside JSON are listed apart (`x-also-accepted`).
                let also = op["requestBody"]["x-also-accepted"].as_object();
                let types = content
                    .keys()
                    .chain(also.into_iter().flat_map(|a| a.keys()));
                out.push((path.clone(), types.cloned().collect()));
            }
        }
    }
    out
}

/// JSON bodies that bound checks must refuse, and a word each message must hold.
fn json_variants() -> Vec<(&'static str, String, &'static str)> {
    let strategy = r#"{"symbol":"SPX","entry":{"rule_type":"SingleCondition","condition":{"signal":{"name":"Symbol Close"},"rule":{"type_name":">","comparison_value":"1"}}},"exit":{"rule_type":"RiskControlOnly"},"risk_control":"//21"}"#;
    let grid_key = vec!["a"; 4500].join(".");
    let many_axes: Vec<String> = (0..40).map(|k| format!("\"p{k}\":[1,2]")).collect();
    let rows: Vec<String> = (0..10_001)
        .map(|_| format!("[{}0]", "0,".repeat(99)))
        .collect();
    vec![
        (
            "deep lists in a field",
            format!(
                r#"{{"symbol":"SPX","x":{}{}}}"#,
                "[".repeat(100_000),
                "]".repeat(100_000)
            ),
            "deeper than",
        ),
        (
            "deep objects",
            format!("{}1{}", r#"{"a":"#.repeat(20_000), "}".repeat(20_000)),
            "deeper than",
        ),
        (
            "a deep bare list",
            format!("{}{}", "[".repeat(50_000), "]".repeat(50_000)),
            "deeper than",
        ),
        (
            "a wide list",
            format!(r#"{{"strategies":[{}0]}}"#, "0,".repeat(100_000)),
            "items",
        ),
        (
            "a wide object",
            format!(
                "{{{}}}",
                (0..100_001)
                    .map(|k| format!("\"k{k}\":0"))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            "fields",
        ),
        (
            "a million values",
            format!(r#"{{"rows":[{}]}}"#, rows.join(",")),
            "values",
        ),
        (
            "a grid key of 4,500 segments",
            format!(r#"{{"strategy":{strategy},"grid":{{"{grid_key}":[1,2]}}}}"#),
            "",
        ),
        (
            "a grid of 40 axes",
            format!(
                r#"{{"strategy":{strategy},"grid":{{{}}}}}"#,
                many_axes.join(",")
            ),
            "",
        ),
    ]
}

async fn healthy(s: &TestServer, http: &reqwest::Client) -> bool {
    http.get(s.url("/health"))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
}

#[tokio::test(flavor = "multi_thread")]
async fn deep_and_wide_bodies_are_refused_on_every_operation_and_the_server_keeps_serving() {
    let (s, _dir) = TestServer::fresh().await;
    let http = reqwest::Client::new();
    let operations = body_operations();
    assert!(operations.len() >= 12, "{operations:?}");
    let deep_text = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    let mut sent = 0;
    for (path, types) in &operations {
        let send = |content_type: &str, body: Vec<u8>| {
            http.post(s.url(path))
                .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
                .header("content-type", content_type)
                .body(body)
                .send()
        };
        let mut cases: Vec<(String, &str, Vec<u8>, &str)> = Vec::new();
        for (name, body, word) in json_variants() {
            cases.push((
                name.to_string(),
                "application/json",
                body.into_bytes(),
                word,
            ));
        }
        if types
            .iter()
            .any(|t| t == "application/x-www-form-urlencoded")
        {
            let deep = form_urlencoded::Serializer::new(String::new())
                .append_pair("benchmark", "SPX")
                .append_pair("stock_comparison", &deep_text)
                .append_pair("referenceSymbol", "SPX")
                .append_pair("comparisonSymbols", &deep_text)
                .finish();
            cases.push((
                "JSON text nested 10,000 deep in a form field".into(),
                "application/x-www-form-urlencoded",
                deep.into_bytes(),
                "",
            ));
            cases.push((
                "200,000 repeats of one form field".into(),
                "application/x-www-form-urlencoded",
                "stock_comparison=SPX&".repeat(200_000).into_bytes(),
                "",
            ));
        }
        if types.iter().any(|t| t == "multipart/form-data") {
            let mut body = String::new();
            for name in ["stock_comparison", "comparisonSymbols"] {
                body.push_str(&format!(
                    "--XB\r\ncontent-disposition: form-data; name=\"{name}\"\r\n\r\n{deep_text}\r\n"
                ));
            }
            body.push_str("--XB--\r\n");
            cases.push((
                "JSON text nested 10,000 deep in a multipart field".into(),
                "multipart/form-data; boundary=XB",
                body.into_bytes(),
                "",
            ));
        }
        for (name, content_type, body, word) in cases {
            let resp = send(content_type, body)
                .await
                .unwrap_or_else(|e| panic!("{path}, {name}: no answer: {e}"));
            let status = resp.status().as_u16();
            let text = resp.text().await.unwrap();
            assert!(
                (400..500).contains(&status) && status != 429,
                "{path}, {name}: {status} {text:.300}"
            );
            assert!(text.contains(word), "{path}, {name}: {text:.300}");
            assert!(
                healthy(&s, &http).await,
                "{path}, {name}: the server stopped serving"
            );
            sent += 1;
        }
    }
    assert!(sent >= 12 * 8, "{sent}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_deep_grid_is_a_400_naming_the_grid_key() {
    let (s, _dir) = TestServer::fresh().await;
    let mut body: Value = serde_json::from_str(
        r#"{"strategy":{"symbol":"SPX","entry":{"rule_type":"SingleCondition","condition":{"signal":{"name":"Symbol Close"},"rule":{"type_name":">","comparison_value":"1"}}},"exit":{"rule_type":"RiskControlOnly"},"risk_control":"//21"}}"#,
    )
    .unwrap();
    for segments in [4_000, 4_500, 13] {
        let key = vec!["a"; segments].join(".");
        body["grid"] = serde_json::json!({ key: [1, 2] });
        let (status, answer) = s
            .post("/backtest/batch", Some((DEMO_EMAIL, DEMO_PASSWORD)), &body)
            .await;
        assert_eq!(status, 400, "{segments}: {answer}");
        let detail = answer["detail"].as_str().unwrap();
        assert!(detail.contains("'grid.a.a.a"), "{detail}");
    }
    // Within the bounds a path is set as before.
    body["grid"] = serde_json::json!({"entry.condition.rule.comparison_value": ["1", "2"]});
    let (status, answer) = s
        .post("/backtest/batch", Some((DEMO_EMAIL, DEMO_PASSWORD)), &body)
        .await;
    assert_eq!(status, 202, "{answer}");
    s.stop().await;
}
