//! `docs/openapi.json`, the document the single-group Lambda functions serve
//! and users can read without running anything, is the one the routes
//! generate. After changing an operation or an answer type:
//!
//!     MARKETLAB_UPDATE_OPENAPI=1 cargo test -p api --test document

#[test]
fn published_document_is_the_generated_one() {
    let generated = api::routes::document();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");
    if std::env::var_os("MARKETLAB_UPDATE_OPENAPI").is_some() {
        std::fs::write(path, generated).expect("docs/openapi.json written");
        return;
    }
    let published = std::fs::read_to_string(path).expect("docs/openapi.json");
    assert!(
        published == generated,
        "docs/openapi.json is out of date: run MARKETLAB_UPDATE_OPENAPI=1 cargo test -p api --test document"
    );
}

/// Each schema name is one type's: utoipa would let a second type of the
/// same name replace the first everywhere without a word.
#[test]
fn no_two_answer_types_share_a_schema_name() {
    api::routes::document();
    assert_eq!(
        api::routes::schema_names::conflicts(),
        Vec::<String>::new(),
        "rename one of the types (or its `#[schema(as = ...)]`)"
    );
}

/// Every operation behind authentication states both ways in and the one
/// scope a key needs; operations that queue work need `submit`, those on
/// keys, webhooks and alerts `manage`, all others `read`. The scope stated
/// is the scope checked: both come from the operation's registration.
#[test]
fn every_operation_states_the_scope_its_registration_checks() {
    let doc: serde_json::Value = serde_json::from_str(api::routes::document()).unwrap();
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let security = &op["security"];
            if security == &serde_json::json!([{}]) {
                continue;
            }
            let scope = security[1]["bearer"][0]
                .as_str()
                .unwrap_or_else(|| panic!("{method} {path}: no bearer scope in {security}"));
            assert_eq!(
                security[0],
                serde_json::json!({"basic": []}),
                "{method} {path}"
            );
            let queues = op["responses"]
                .as_object()
                .unwrap()
                .get("202")
                .is_some_and(|r| r["description"].as_str().unwrap_or("").contains("Queued"));
            let managed = path.starts_with("/keys")
                || path.starts_with("/webhooks")
                || path.ends_with("/alerts")
                || path.contains("/alerts/");
            let expected = if managed {
                "manage"
            } else if queues {
                "submit"
            } else {
                "read"
            };
            assert_eq!(scope, expected, "{method} {path}");
            *counts.entry(scope.to_string()).or_default() += 1;
        }
    }
    assert!(
        counts["submit"] >= 6 && counts["manage"] >= 10,
        "{counts:?}"
    );
}
