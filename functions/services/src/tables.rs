//! Answers that are tables, in table form: the same columns and values as
//! their JSON, for clients that read them as Arrow (pandas, polars) instead
//! of parsing thousands of JSON rows.

use platform::marketdata::columns::Column;
use std::collections::HashMap;

/// An answer with a table form.
pub trait Tabular {
    /// The answer's rows as named columns, in the JSON's order.
    fn columns(&self) -> Vec<(String, Column)>;

    /// The answer's parts outside the table (as JSON text), by name.
    fn extras(&self) -> HashMap<String, String> {
        HashMap::new()
    }
}
