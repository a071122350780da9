//! One schema per name in the OpenAPI document. utoipa keeps the last of
//! two types that share a name and points every reference at it, so a new
//! answer type can silently replace another's schema; [`documented!`]
//! records what each route brings and [`conflicts`] names any clash (the
//! document test asserts there is none). Debug builds only: the record is
//! for tests, not for a function's cold start.

use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

static SEEN: Mutex<BTreeMap<String, String>> = Mutex::new(BTreeMap::new());
static CLASHES: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// `utoipa_axum::routes!`, with the schemas it brings recorded.
macro_rules! documented {
    ($($handlers:tt)*) => {{
        let routes = utoipa_axum::routes!($($handlers)*);
        $crate::routes::schema_names::record(&routes.0);
        routes
    }};
}
pub(crate) use documented;

/// Notes each schema under its name; a name seen before with another
/// schema is a clash.
pub fn record(schemas: &[(String, RefOr<Schema>)]) {
    if !cfg!(debug_assertions) {
        return;
    }
    let mut seen = SEEN.lock();
    for (name, schema) in schemas {
        let text = serde_json::to_string(schema).expect("a schema serialises");
        match seen.get(name) {
            Some(before) if *before != text => {
                CLASHES.lock().insert(name.clone());
            }
            Some(_) => {}
            None => {
                seen.insert(name.clone(), text);
            }
        }
    }
}

/// The names two different schemas were registered under so far.
pub fn conflicts() -> Vec<String> {
    CLASHES.lock().iter().cloned().collect()
}

#[cfg(test)]
mod tests {
    use utoipa::PartialSchema;

    #[test]
    fn a_name_given_two_schemas_is_a_conflict_and_the_same_one_twice_is_not() {
        let name = "SchemaNamesTestOnly".to_string();
        super::record(&[(name.clone(), String::schema())]);
        super::record(&[(name.clone(), String::schema())]);
        assert!(!super::conflicts().contains(&name));
        super::record(&[(name.clone(), i64::schema())]);
        assert!(super::conflicts().contains(&name));
    }
}
