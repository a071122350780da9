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
