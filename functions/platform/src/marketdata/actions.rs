//! Corporate actions: splits and cash dividends by symbol and ex-date, one
//! table (`reference/actions.parquet`). Bars are stored as traded; a read
//! answers them split-adjusted (every price before a split's ex-date
//! divided by its ratio, volume multiplied), as the vendors' "adjusted
//! close" is before dividends; the raw bars are there on request.

use super::codec::{self, date_to_days, f64_col, str_col};
use crate::PortError;
use arrow_array::{ArrayRef, Date32Array, Float64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use chrono::NaiveDate;
use engine::Bars;
use serde::Serialize;
use std::sync::Arc;

pub const KEY: &str = "reference/actions.parquet";

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum ActionKind {
    /// New shares for each old one (2.0 for a 2-for-1 split, 0.1 for a
    /// 1-for-10 reverse split).
    Split { ratio: f64 },
    /// Cash per share.
    Dividend { amount: f64 },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Action {
    pub symbol: String,
    /// The ex-date: the first session traded after the action.
    pub date: NaiveDate,
    #[serde(flatten)]
    pub kind: ActionKind,
}

impl ActionKind {
    pub fn name(&self) -> &'static str {
        match self {
            ActionKind::Split { .. } => "split",
            ActionKind::Dividend { .. } => "dividend",
        }
    }

    pub fn value(&self) -> f64 {
        match *self {
            ActionKind::Split { ratio } => ratio,
            ActionKind::Dividend { amount } => amount,
        }
    }
}

/// The splits of `symbol` as (ex-date, ratio), in date order.
pub fn splits_of(actions: &[Action], symbol: &str) -> Vec<(NaiveDate, f64)> {
    let mut out: Vec<(NaiveDate, f64)> = actions
        .iter()
        .filter(|a| a.symbol == symbol)
        .filter_map(|a| match a.kind {
            ActionKind::Split { ratio } => Some((a.date, ratio)),
            ActionKind::Dividend { .. } => None,
        })
        .collect();
    out.sort_by_key(|(d, _)| *d);
    out
}

/// `bars` split-adjusted: a bar dated before an ex-date has its prices
/// divided, and its volume multiplied, by that split's ratio (and by every
/// later split's).
pub fn adjust(bars: &Bars, splits: &[(NaiveDate, f64)]) -> Bars {
    let mut out = bars.clone();
    if splits.is_empty() {
        return out;
    }
    let mut k = splits.len();
    let mut factor = 1.0;
    for i in (0..out.len()).rev() {
        let date = out.time[i].date();
        while k > 0 && splits[k - 1].0 > date {
            factor *= splits[k - 1].1;
            k -= 1;
        }
        if factor != 1.0 {
            out.open[i] /= factor;
            out.high[i] /= factor;
            out.low[i] /= factor;
            out.close[i] /= factor;
            out.volume[i] *= factor;
        }
    }
    out
}

pub fn to_batch(actions: &[Action]) -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("symbol", DataType::Utf8, false),
        Field::new("date", DataType::Date32, false),
        Field::new("kind", DataType::Utf8, false),
        Field::new("value", DataType::Float64, false),
    ]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter_values(
            actions.iter().map(|a| a.symbol.as_str()),
        )),
        Arc::new(Date32Array::from_iter_values(
            actions.iter().map(|a| date_to_days(a.date)),
        )),
        Arc::new(StringArray::from_iter_values(
            actions.iter().map(|a| a.kind.name()),
        )),
        Arc::new(Float64Array::from_iter_values(
            actions.iter().map(|a| a.kind.value()),
        )),
    ];
    RecordBatch::try_new(Arc::new(schema), columns).expect("the actions schema")
}

pub fn from_batch(b: &RecordBatch) -> Result<Vec<Action>, PortError> {
    let symbol = str_col(b, "symbol")?;
    let dates = codec::date_values(b, "date")?;
    let kind = str_col(b, "kind")?;
    let value = f64_col(b, "value")?;
    (0..b.num_rows())
        .map(|i| {
            let v = value.value(i);
            let kind = match kind.value(i) {
                "split" => ActionKind::Split { ratio: v },
                "dividend" => ActionKind::Dividend { amount: v },
                other => {
                    return Err(PortError::internal(format!(
                        "{KEY}: row {}: unknown kind '{other}'",
                        i + 1
                    )));
                }
            };
            Ok(Action {
                symbol: symbol.value(i).to_string(),
                date: dates[i],
                kind,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_before_each_ex_date_are_divided_by_every_later_split() {
        let d = |s: &str| s.parse::<NaiveDate>().unwrap();
        let mut bars = Bars::default();
        for (day, close) in [
            ("2024-01-02", 100.0),
            ("2024-01-03", 102.0),
            ("2024-01-04", 51.0),
            ("2024-01-05", 17.0),
        ] {
            bars.push(
                d(day).and_hms_opt(0, 0, 0).unwrap(),
                close,
                close,
                close,
                close,
                10.0,
            );
        }
        let splits = [(d("2024-01-04"), 2.0), (d("2024-01-05"), 3.0)];
        let a = adjust(&bars, &splits);
        assert_eq!(a.close, vec![100.0 / 6.0, 17.0, 17.0, 17.0]);
        assert_eq!(a.volume, vec![60.0, 60.0, 30.0, 10.0]);
        let rows = vec![
            Action {
                symbol: "X".into(),
                date: d("2024-01-04"),
                kind: ActionKind::Split { ratio: 2.0 },
            },
            Action {
                symbol: "X".into(),
                date: d("2024-01-03"),
                kind: ActionKind::Dividend { amount: 0.24 },
            },
        ];
        assert_eq!(from_batch(&to_batch(&rows)).unwrap(), rows);
        assert_eq!(splits_of(&rows, "X"), vec![(d("2024-01-04"), 2.0)]);
    }
}
