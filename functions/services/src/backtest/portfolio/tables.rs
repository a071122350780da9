//! A finished portfolio's tables, as rows: JSON answers them as they are,
//! CSV, Parquet and Arrow as their columns.

use platform::marketdata::columns::Column;
use platform::marketdata::interchange::from_json_rows;
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortfolioTable {
    /// Per session: date, equity, cash, exposure, traded, benchmark.
    Equity,
    Trades,
    Orders,
    /// Per month end: date and a column per symbol held at some point.
    Weights,
    Contributions,
}

impl PortfolioTable {
    pub fn name(self) -> &'static str {
        match self {
            PortfolioTable::Equity => "equity",
            PortfolioTable::Trades => "trades",
            PortfolioTable::Orders => "orders",
            PortfolioTable::Weights => "weights",
            PortfolioTable::Contributions => "contributions",
        }
    }
}

impl PortfolioTable {
    /// The columns a table has whatever its rows (weights add one per symbol).
    fn columns(self) -> &'static [&'static str] {
        match self {
            PortfolioTable::Equity => {
                &["date", "equity", "cash", "exposure", "traded", "benchmark"]
            }
            PortfolioTable::Trades => &[
                "entry_time",
                "exit_time",
                "symbol",
                "side",
                "size",
                "entry_price",
                "exit_price",
                "fees",
                "profit",
                "return",
                "bars_held",
                "exit_reason",
            ],
            PortfolioTable::Orders => &["time", "symbol", "side", "size", "price", "fees"],
            PortfolioTable::Weights => &["date"],
            PortfolioTable::Contributions => &["symbol", "profit", "contribution"],
        }
    }
}

/// `table` as columns (CSV, Parquet, Arrow): the rows' own, or with no
/// rows, the table's columns empty (a file always has its header).
pub fn columns(result: &Value, table: PortfolioTable) -> Vec<(String, Column)> {
    let rows = rows(result, table);
    let named = if rows.is_empty() {
        table
            .columns()
            .iter()
            .map(|c| (c.to_string(), Column::Text(Vec::new())))
            .collect()
    } else {
        from_json_rows(&rows)
    };
    named
        .into_iter()
        .map(|(name, column)| {
            let column = if DATES.contains(&name.as_str()) {
                dates(column)
            } else {
                column
            };
            (name, column)
        })
        .collect()
}

/// The columns that hold sessions: dates in a file, as a backtest's
/// tables have them (not their `YYYY-MM-DD` text).
const DATES: [&str; 4] = ["date", "time", "entry_time", "exit_time"];

/// A text column of `YYYY-MM-DD` sessions as dates (null stays null), an
/// all-null one (every trade still open) as dates too; any other column
/// as it is.
fn dates(column: Column) -> Column {
    match column {
        Column::Integer(v) if v.iter().all(Option::is_none) => Column::Date(vec![None; v.len()]),
        Column::Number(v) if v.iter().all(Option::is_none) => Column::Date(vec![None; v.len()]),
        Column::Text(values) => Column::Date(
            values
                .iter()
                .map(|v| {
                    v.as_deref()
                        .and_then(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
                })
                .collect(),
        ),
        other => other,
    }
}

fn objects(v: &Value) -> Vec<Map<String, Value>> {
    v.as_array()
        .map(|a| a.iter().filter_map(|r| r.as_object().cloned()).collect())
        .unwrap_or_default()
}

/// `table` of a stored result (a [`super::answers::PortfolioResult`]).
pub fn rows(result: &Value, table: PortfolioTable) -> Vec<Map<String, Value>> {
    match table {
        PortfolioTable::Trades => objects(&result["trades"]),
        PortfolioTable::Orders => objects(&result["orders"]),
        PortfolioTable::Contributions => objects(&result["contributions"]),
        PortfolioTable::Equity => {
            let s = &result["series"];
            let columns = ["date", "equity", "cash", "exposure", "traded", "benchmark"];
            let n = s["date"].as_array().map_or(0, Vec::len);
            (0..n)
                .map(|i| {
                    columns
                        .iter()
                        .map(|c| (c.to_string(), s[*c][i].clone()))
                        .collect()
                })
                .collect()
        }
        PortfolioTable::Weights => {
            let at = objects(&result["weights"]);
            let mut symbols: Vec<String> = at
                .iter()
                .filter_map(|r| r.get("weights")?.as_object())
                .flat_map(|w| w.keys().cloned())
                .collect();
            symbols.sort();
            symbols.dedup();
            at.iter()
                .map(|r| {
                    let mut row = Map::new();
                    row.insert("date".into(), r.get("date").cloned().unwrap_or(Value::Null));
                    for s in &symbols {
                        let w = r["weights"].get(s).cloned().unwrap_or(Value::from(0.0));
                        row.insert(s.clone(), w);
                    }
                    row
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn series_become_rows_and_weights_a_column_per_symbol() {
        let result = json!({
            "series": {"date": ["2024-01-02", "2024-01-03"], "equity": [1.0, 2.0], "cash": [0.5, 0.5],
                       "exposure": [0.5, 1.5], "traded": [1.0, 0.0], "benchmark": [1.0, null]},
            "weights": [{"date": "2024-01-31", "weights": {"B": 0.5}}, {"date": "2024-02-29", "weights": {"A": 0.2, "B": 0.3}}],
            "trades": [{"symbol": "A"}], "orders": [], "contributions": []
        });
        let eq = rows(&result, PortfolioTable::Equity);
        assert_eq!(eq.len(), 2);
        assert_eq!(eq[1]["equity"], json!(2.0));
        assert_eq!(eq[1]["benchmark"], Value::Null);
        let w = rows(&result, PortfolioTable::Weights);
        assert_eq!(w[0]["A"], json!(0.0));
        assert_eq!(w[1]["A"], json!(0.2));
        assert_eq!(w[0].keys().collect::<Vec<_>>(), ["date", "A", "B"]);
        assert_eq!(rows(&result, PortfolioTable::Trades).len(), 1);
        // No orders: the columns, no rows.
        let empty = columns(&result, PortfolioTable::Orders);
        let names: Vec<&str> = empty.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["time", "symbol", "side", "size", "price", "fees"]);
        assert!(matches!(empty[0].1, Column::Date(_)));
        assert!(platform::marketdata::interchange::to_csv(empty).is_ok());
        // Sessions are dates in a file, as a backtest's tables have them.
        let eq = columns(&result, PortfolioTable::Equity);
        let day = chrono::NaiveDate::from_ymd_opt(2024, 1, 3);
        assert!(matches!(&eq[0], (n, Column::Date(d)) if n == "date" && d[1] == day));
        let open =
            json!({"trades": [{"entry_time": "2024-01-02", "exit_time": null, "symbol": "A"}]});
        let t = columns(&open, PortfolioTable::Trades);
        let exit = t.iter().find(|(n, _)| n == "exit_time").map(|(_, c)| c);
        assert!(
            matches!(exit, Some(Column::Date(d)) if d == &vec![None]),
            "{exit:?}"
        );
    }

    #[test]
    fn an_empty_table_has_the_columns_its_rows_would_have() {
        use crate::backtest::portfolio::answers::{PortfolioOrder, PortfolioTrade};
        let trade = PortfolioTrade {
            entry_time: "2024-01-02".into(),
            exit_time: None,
            symbol: "A".into(),
            side: "long".into(),
            size: 1.0,
            entry_price: 1.0,
            exit_price: 1.0,
            fees: 0.0,
            profit: 0.0,
            ret: 0.0,
            bars_held: 0,
            exit_reason: "Open".into(),
        };
        let order = PortfolioOrder {
            time: "2024-01-02".into(),
            symbol: "A".into(),
            side: "buy".into(),
            size: 1.0,
            price: 1.0,
            fees: 0.0,
        };
        for (row, table) in [
            (serde_json::to_value(trade).unwrap(), PortfolioTable::Trades),
            (serde_json::to_value(order).unwrap(), PortfolioTable::Orders),
        ] {
            let keys: Vec<&str> = row
                .as_object()
                .unwrap()
                .keys()
                .map(|k| k.as_str())
                .collect();
            assert_eq!(keys, table.columns(), "{}", table.name());
        }
    }
}
