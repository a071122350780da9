//! A batch's results: one row per strategy, and the table as CSV.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// A strategy's row of the results table: the values it varied and the
/// scalar metrics of 2.11, or the error that stopped it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct BatchRow {
    /// Its place in the batch, from 0.
    pub index: usize,
    /// The grid's values for it (path -> value); empty for a list batch.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub params: Map<String, Value>,
    /// Why it has no metrics; `null` when it ran.
    pub error: Option<String>,
    #[serde(rename = "Symbol")]
    pub symbol: Option<String>,
    #[serde(rename = "Total Trades")]
    pub total_trades: Option<usize>,
    #[serde(rename = "Win Rate")]
    pub win_rate: Option<f64>,
    #[serde(rename = "Average Win %")]
    pub average_win: Option<f64>,
    #[serde(rename = "Average Loss %")]
    pub average_loss: Option<f64>,
    #[serde(rename = "Total Return (%)")]
    pub total_return: Option<f64>,
    #[serde(rename = "BuyHoldGain")]
    pub buy_hold_gain: Option<f64>,
    #[serde(rename = "CAGR")]
    pub cagr: Option<f64>,
    #[serde(rename = "Sharpe Ratio")]
    pub sharpe: Option<f64>,
    #[serde(rename = "Sortino Ratio")]
    pub sortino: Option<f64>,
    /// Percent, as the single backtest's.
    #[serde(rename = "Annual Volatility")]
    pub annual_volatility: Option<f64>,
    #[serde(rename = "Calmar Ratio")]
    pub calmar: Option<f64>,
    #[serde(rename = "Max Drawdown")]
    pub max_drawdown: Option<f64>,
    #[serde(rename = "DrawDown Period")]
    pub drawdown_period: Option<usize>,
    #[serde(rename = "Time in Market")]
    pub time_in_market: Option<f64>,
}

/// A page of a finished batch's rows (`GET /backtest/batch/{id}/rows`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct RowsPage {
    /// Rows in batch order, as the results table has them.
    pub rows: Vec<BatchRow>,
    /// The `cursor` of the next page; `null` after the last.
    pub next_cursor: Option<String>,
    /// Rows of the batch, over all pages.
    pub total: usize,
}

/// Rows a page holds when the request does not say, and at most.
pub const PAGE_ROWS: usize = 1_000;
pub const MAX_PAGE_ROWS: usize = 10_000;

/// Where a page starts: the `cursor` a page gave (the index of its next
/// row, as text; clients pass it back unread), or the first row.
pub fn cursor_start(cursor: Option<&str>) -> Result<usize, crate::Error> {
    match cursor {
        None => Ok(0),
        Some(c) => c.parse::<usize>().map_err(|_| {
            crate::Error::invalid(
                "cursor",
                format!("'{c}' is not a cursor this batch gave; start without one"),
            )
        }),
    }
}

impl RowsPage {
    /// The page of `rows` read from `from`, of a batch of `total` rows.
    pub fn new(rows: Vec<BatchRow>, from: usize, total: usize) -> RowsPage {
        let next = from + rows.len();
        RowsPage {
            next_cursor: (!rows.is_empty() && next < total).then(|| next.to_string()),
            rows,
            total,
        }
    }
}

/// The metric columns of a row, in order, as the CSV and Parquet tables name them.
pub const METRICS: [&str; 14] = [
    "Total Trades",
    "Win Rate",
    "Average Win %",
    "Average Loss %",
    "Total Return (%)",
    "BuyHoldGain",
    "CAGR",
    "Sharpe Ratio",
    "Max Drawdown",
    "DrawDown Period",
    "Time in Market",
    "Sortino Ratio",
    "Annual Volatility",
    "Calmar Ratio",
];

impl BatchRow {
    pub(super) fn failed(index: usize, params: Map<String, Value>, error: String) -> Self {
        BatchRow {
            index,
            params,
            error: Some(error),
            symbol: None,
            total_trades: None,
            win_rate: None,
            average_win: None,
            average_loss: None,
            total_return: None,
            buy_hold_gain: None,
            cagr: None,
            sharpe: None,
            sortino: None,
            annual_volatility: None,
            calmar: None,
            max_drawdown: None,
            drawdown_period: None,
            time_in_market: None,
        }
    }

    /// A row from the metrics of a run: the scalar fields of 2.11, computed
    /// as the single backtest computes them.
    pub(super) fn ran(
        index: usize,
        params: Map<String, Value>,
        symbol: &str,
        m: &engine::backtest::Metrics,
    ) -> Self {
        BatchRow {
            index,
            params,
            error: None,
            symbol: Some(symbol.to_string()),
            total_trades: Some(m.total_trades),
            win_rate: Some(m.win_rate),
            average_win: Some(m.average_win),
            average_loss: Some(m.average_loss),
            total_return: Some(m.total_return),
            buy_hold_gain: Some(m.buy_hold),
            cagr: Some(m.cagr),
            sharpe: Some(m.sharpe),
            sortino: Some(m.sortino),
            annual_volatility: Some(m.annual_volatility * 100.0),
            calmar: Some(m.calmar),
            max_drawdown: Some(m.max_drawdown),
            drawdown_period: Some(m.drawdown_period),
            time_in_market: Some(m.time_in_market),
        }
    }

    /// A portfolio's row: its metrics (fractions) in the row's percent,
    /// with the benchmark's change over the window as the buy-and-hold gain
    /// (a portfolio has no one symbol to hold).
    pub(super) fn portfolio(
        index: usize,
        params: Map<String, Value>,
        m: &engine::portfolio::metrics::Metrics,
        relative: &engine::portfolio::metrics::Relative,
    ) -> Self {
        let pct = |x: f64| Some(x * 100.0);
        BatchRow {
            index,
            params,
            error: None,
            symbol: None,
            total_trades: Some(m.total_trades),
            win_rate: pct(m.win_rate),
            average_win: pct(m.average_win),
            average_loss: pct(m.average_loss),
            total_return: pct(m.total_return),
            buy_hold_gain: pct(relative.benchmark_return),
            cagr: pct(m.cagr),
            sharpe: Some(m.sharpe),
            sortino: Some(m.sortino),
            annual_volatility: pct(m.annual_volatility),
            calmar: Some(m.calmar),
            max_drawdown: pct(m.max_drawdown),
            drawdown_period: Some(m.drawdown_period),
            time_in_market: pct(m.time_in_market),
        }
    }

    /// A row from its metrics in [`METRICS`] order (counts as whole numbers).
    pub(super) fn from_metrics(
        index: usize,
        params: Map<String, Value>,
        error: Option<String>,
        symbol: Option<String>,
        m: [Option<f64>; METRICS.len()],
    ) -> Self {
        let count = |x: Option<f64>| x.map(|x| x as usize);
        BatchRow {
            index,
            params,
            error,
            symbol,
            total_trades: count(m[0]),
            win_rate: m[1],
            average_win: m[2],
            average_loss: m[3],
            total_return: m[4],
            buy_hold_gain: m[5],
            cagr: m[6],
            sharpe: m[7],
            max_drawdown: m[8],
            drawdown_period: count(m[9]),
            time_in_market: m[10],
            sortino: m[11],
            annual_volatility: m[12],
            calmar: m[13],
        }
    }

    /// Whether `METRICS[k]` counts (trades, sessions): an integer column.
    pub fn is_count(k: usize) -> bool {
        matches!(k, 0 | 9)
    }

    /// The count of `METRICS[k]` when it is one ([`Self::is_count`]).
    pub fn count(&self, k: usize) -> Option<i64> {
        match k {
            0 => self.total_trades.map(|x| x as i64),
            9 => self.drawdown_period.map(|x| x as i64),
            _ => None,
        }
    }

    /// The metric of `METRICS[k]`.
    pub fn metric(&self, k: usize) -> Option<f64> {
        match k {
            0 => self.total_trades.map(|x| x as f64),
            1 => self.win_rate,
            2 => self.average_win,
            3 => self.average_loss,
            4 => self.total_return,
            5 => self.buy_hold_gain,
            6 => self.cagr,
            7 => self.sharpe,
            8 => self.max_drawdown,
            9 => self.drawdown_period.map(|x| x as f64),
            10 => self.time_in_market,
            11 => self.sortino,
            12 => self.annual_volatility,
            13 => self.calmar,
            _ => None,
        }
    }
}

/// The results table as CSV: index, the varied paths, the metrics, error.
pub fn to_csv(paths: &[String], rows: &[BatchRow]) -> String {
    let quote = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let mut out = String::from("index");
    for p in paths {
        out.push(',');
        out.push_str(&quote(p));
    }
    out.push_str(",Symbol");
    for m in METRICS {
        out.push(',');
        out.push_str(&quote(m));
    }
    out.push_str(",error\n");
    for r in rows {
        out.push_str(&r.index.to_string());
        for p in paths {
            out.push(',');
            match r.params.get(p) {
                Some(Value::String(s)) => out.push_str(&quote(s)),
                Some(v) => out.push_str(&quote(&v.to_string())),
                None => {}
            }
        }
        out.push(',');
        out.push_str(&quote(r.symbol.as_deref().unwrap_or("")));
        for k in 0..METRICS.len() {
            out.push(',');
            if let Some(x) = r.metric(k) {
                out.push_str(&x.to_string());
            }
        }
        out.push(',');
        out.push_str(&quote(r.error.as_deref().unwrap_or("")));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn csv_quotes_and_leaves_failures_empty() {
        let mut ok = BatchRow::failed(0, Map::new(), String::new());
        ok.error = None;
        ok.symbol = Some("SPY".into());
        ok.total_trades = Some(3);
        ok.total_return = Some(1.5);
        let mut params = Map::new();
        params.insert("risk_control".into(), json!("-5/10/21"));
        let bad = BatchRow::failed(1, params, "no data, sorry".into());
        let text = to_csv(&["risk_control".into()], &[ok, bad]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("index,risk_control,Symbol,Total Trades,Win Rate"));
        assert!(lines[1].starts_with("0,,SPY,3,,,,1.5,"));
        assert!(lines[2].starts_with("1,-5/10/21,,,") && lines[2].ends_with(",\"no data, sorry\""));
    }

    #[test]
    fn a_portfolio_s_fractions_are_its_row_s_percent() {
        use engine::portfolio::metrics::{Metrics, Relative};
        let m = Metrics {
            total_return: 0.25,
            cagr: 0.0625,
            sharpe: 1.5,
            sortino: 2.0,
            annual_volatility: 0.125,
            max_drawdown: -0.375,
            calmar: 0.5,
            drawdown_period: 12,
            time_in_market: 0.75,
            total_trades: 8,
            winning_trades: 5,
            losing_trades: 3,
            win_rate: 0.625,
            average_win: 0.0625,
            average_loss: -0.03125,
            ..Metrics::default()
        };
        let rel = Relative {
            benchmark_return: 0.5,
            ..Relative::default()
        };
        let row = BatchRow::portfolio(3, Map::new(), &m, &rel);
        let want = [
            8.0, 62.5, 6.25, -3.125, 25.0, 50.0, 6.25, 1.5, -37.5, 12.0, 75.0, 2.0, 12.5, 0.5,
        ];
        for (k, w) in want.iter().enumerate() {
            assert_eq!(row.metric(k), Some(*w), "{}", METRICS[k]);
        }
    }
}
