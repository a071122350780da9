//! How a chunk's rows are kept as its task's result.

use super::BatchRow;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A chunk task's result: its rows, stored by column (`columns`): the
/// metrics as one array of numbers per row instead of a map of 18 named
/// members, so the table's reads (the results, the pages, the inbox's
/// files) parse a third of the text with few allocations. A result stored
/// a row each (`rows`, the earlier form) is read as well.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkResult {
    pub rows: Vec<BatchRow>,
}

#[derive(Serialize, Deserialize)]
struct StoredChunk {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rows: Option<Vec<BatchRow>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    columns: Option<ChunkColumns>,
}

/// The rows by column; `metrics` per row in [`super::METRICS`] order.
#[derive(Serialize, Deserialize)]
struct ChunkColumns {
    index: Vec<usize>,
    params: Vec<Map<String, Value>>,
    error: Vec<Option<String>>,
    symbol: Vec<Option<String>>,
    metrics: Vec<[Option<f64>; super::METRICS.len()]>,
}

impl Serialize for ChunkResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let rows = &self.rows;
        StoredChunk {
            rows: None,
            columns: Some(ChunkColumns {
                index: rows.iter().map(|r| r.index).collect(),
                params: rows.iter().map(|r| r.params.clone()).collect(),
                error: rows.iter().map(|r| r.error.clone()).collect(),
                symbol: rows.iter().map(|r| r.symbol.clone()).collect(),
                metrics: rows
                    .iter()
                    .map(|r| std::array::from_fn(|k| r.metric(k)))
                    .collect(),
            }),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ChunkResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let stored = StoredChunk::deserialize(d)?;
        if let Some(rows) = stored.rows {
            return Ok(ChunkResult { rows });
        }
        let c = stored
            .columns
            .ok_or_else(|| D::Error::custom("a chunk result without rows"))?;
        let n = c.index.len();
        if [
            c.params.len(),
            c.error.len(),
            c.symbol.len(),
            c.metrics.len(),
        ] != [n; 4]
        {
            return Err(D::Error::custom(
                "a chunk result's columns differ in length",
            ));
        }
        let rows = c
            .index
            .into_iter()
            .zip(c.params)
            .zip(c.error)
            .zip(c.symbol)
            .zip(c.metrics)
            .map(|((((index, params), error), symbol), metrics)| {
                BatchRow::from_metrics(index, params, error, symbol, metrics)
            })
            .collect();
        Ok(ChunkResult { rows })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rows() -> Vec<BatchRow> {
        let mut params = Map::new();
        params.insert("entry.condition.rule.period".into(), json!(20));
        let mut ran = BatchRow::failed(250, params.clone(), String::new());
        ran.error = None;
        ran.symbol = Some("SPX".into());
        ran.total_trades = Some(7);
        ran.win_rate = Some(57.142857142857146);
        ran.total_return = Some(-3.25);
        ran.sharpe = Some(f64::NAN);
        ran.drawdown_period = Some(0);
        ran.calmar = Some(1e-300);
        vec![ran, BatchRow::failed(251, params, "no data".into())]
    }

    #[test]
    fn a_chunk_s_rows_round_trip_by_column_and_the_earlier_form_still_reads() {
        let rows = rows();
        let stored = serde_json::to_value(ChunkResult { rows: rows.clone() }).unwrap();
        assert!(stored.get("rows").is_none() && stored["columns"]["metrics"].is_array());
        let back: ChunkResult = serde_json::from_value(stored).unwrap();
        // The Sharpe ratio that is not a number is stored as null, as a row
        // each stored it.
        let mut want = rows.clone();
        want[0].sharpe = None;
        assert_eq!(back.rows, want);
        assert_eq!(back.rows[0].total_trades, Some(7));
        assert_eq!(back.rows[0].drawdown_period, Some(0));
        let earlier = json!({"rows": serde_json::to_value(&want).unwrap()});
        let read: ChunkResult = serde_json::from_value(earlier).unwrap();
        assert_eq!(read.rows, want);
        let ragged = json!({"columns": {"index": [1, 2], "params": [{}], "error": [null],
            "symbol": [null], "metrics": [[null, null, null, null, null, null, null, null, null, null, null, null, null, null]]}});
        assert!(serde_json::from_value::<ChunkResult>(ragged).is_err());
    }
}
