//! The results glossary: every metric and every trade, order and equity
//! column of every result kind under one name, in one unit, with one
//! definition, and where each kind's JSON answers it (docs/results.md is
//! rendered from here, and the report pages take their labels from here).
//!
//! Units are fractions (0.05 is 5 %) in the Python package's frames and in
//! every JSON the spec does not define. The spec's legacy JSON (the
//! backtest result of 2.11, a batch's rows, which carry 2.11's metric
//! names, and the scanner backtest of analytics 2.6) keeps the spec's names
//! and percent: each [`Field`] says which name a kind answers and its
//! `scale` (the JSON value is the glossary's value times the scale).

/// What a figure counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A share or a change: 0.05 is 5 %.
    Fraction,
    /// A plain number (Sharpe, beta, capture).
    Ratio,
    /// The account's currency.
    Money,
    Count,
    /// Sessions (bars for an hourly backtest).
    Sessions,
    /// Shares or contracts.
    Units,
    /// A price in the symbol's currency.
    Price,
    Text,
    Datetime,
}

impl Unit {
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Fraction => "fraction",
            Unit::Ratio => "ratio",
            Unit::Money => "money",
            Unit::Count => "count",
            Unit::Sessions => "sessions",
            Unit::Units => "units",
            Unit::Price => "price",
            Unit::Text => "text",
            Unit::Datetime => "datetime",
        }
    }
}

/// The pandas dtype the package gives a figure or column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    Float64,
    Int64,
    /// Python strings.
    Object,
    /// `datetime64[ns]`, NaT where missing.
    Datetime,
}

impl Dtype {
    pub fn as_str(self) -> &'static str {
        match self {
            Dtype::Float64 => "float64",
            Dtype::Int64 => "int64",
            Dtype::Object => "object",
            Dtype::Datetime => "datetime64[ns]",
        }
    }
}

/// A result kind, as the service answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A strategy backtest: metrics in the task's `result` (2.11), trades
    /// and equity in `GET /backtest/chart/{task_id}`.
    Backtest,
    /// A row of a batch's results (2.11's metric names).
    BatchRow,
    /// A portfolio backtest: metrics in the task's `result`, tables at
    /// `GET /backtest/portfolio/{task_id}/{trades,orders,equity}`.
    Portfolio,
    /// A row of a batch of portfolios (a portfolio grid): a batch row.
    PortfolioGridRow,
    /// A scanner backtest: the task's `result.data` (analytics 2.6).
    ScannerBacktest,
    /// A batch's walk-forward: the batch status's `walk_forward`.
    WalkForward,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Backtest,
        Kind::BatchRow,
        Kind::Portfolio,
        Kind::PortfolioGridRow,
        Kind::ScannerBacktest,
        Kind::WalkForward,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Backtest => "backtest",
            Kind::BatchRow => "batch row",
            Kind::Portfolio => "portfolio",
            Kind::PortfolioGridRow => "portfolio grid row",
            Kind::ScannerBacktest => "scanner backtest",
            Kind::WalkForward => "walk-forward",
        }
    }

    /// Where the kind's JSON is, for the page.
    fn source(self) -> &'static str {
        match self {
            Kind::Backtest => {
                "metrics: the task's `result` (the spec's 2.11, percent); trades and equity: `GET /backtest/chart/{task_id}` (`trades`, and one array per column by bar; also `/backtest/trades/{task_id}` and `/backtest/equity/{task_id}` as rows)"
            }
            Kind::BatchRow => {
                "each row of `GET /backtest/batch/{batch_id}/results` (JSON, CSV, Parquet or Arrow) and `/rows`: 2.11's metric names, percent"
            }
            Kind::Portfolio => {
                "metrics: the task's `result` (`relative.*` against the benchmark); tables: `GET /backtest/portfolio/{task_id}/trades`, `/orders`, `/equity`"
            }
            Kind::PortfolioGridRow => {
                "each row of a batch of portfolios (a portfolio grid): a batch row, 2.11's names, percent"
            }
            Kind::ScannerBacktest => {
                "the task's `result.data` (analytics 2.6, percent): metrics at its top, trades as the arrays of its `result`, equity as `dates`, `equity`, `cash`"
            }
            Kind::WalkForward => {
                "the batch status's `walk_forward`: the stitched out-of-sample run's figures and `equity` (`time`, `equity` from 1)"
            }
        }
    }
}

/// Where one kind's JSON answers a glossary entry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Field {
    pub kind: Kind,
    /// The JSON field: a key of the kind's object (`STD.DEV` is one key), or
    /// a dotted path inside it (`relative.alpha`) where no key has the dot.
    pub field: &'static str,
    /// The JSON value is the glossary's value times this: 1, 100 for the
    /// spec's percent fields, -100 for a positive percent of a fall.
    pub scale: f64,
    /// How the value reads otherwise (a renamed value, a sign), or "".
    pub note: &'static str,
}

/// One name of the glossary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry {
    /// The name in the package's frames and in own JSON.
    pub name: &'static str,
    /// The name a page shows.
    pub label: &'static str,
    pub unit: Unit,
    pub dtype: Dtype,
    pub definition: &'static str,
    /// Where each kind that has it answers it.
    pub fields: &'static [Field],
}

impl Entry {
    /// The field `kind` answers this under, if it does.
    pub fn field(&self, kind: Kind) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.kind == kind)
    }
}

/// A table of the glossary.
#[derive(Debug, Clone, Copy)]
pub struct Group {
    pub title: &'static str,
    /// What the package answers it as.
    pub what: &'static str,
    pub entries: &'static [Entry],
}

pub const GROUPS: [Group; 4] = [
    Group {
        title: "Metrics",
        what: "A result's figures: the package's `.result`, a float64 Series under these names (a batch's `.results` has them as columns, one row per strategy).",
        entries: METRICS,
    },
    Group {
        title: "Trades",
        what: "The package's `.trades`: one row per round trip, indexed by `entry_time`; every kind with trades has every column (NaN where a kind does not define one). A scanner backtest's JSON has no fees, return or bars held: the package computes them from its arrays (the fees from the task's commission).",
        entries: TRADES,
    },
    Group {
        title: "Orders",
        what: "The package's `.orders`, where a kind has orders: one row per fill, indexed by `time`.",
        entries: ORDERS,
    },
    Group {
        title: "Equity",
        what: "The package's `.equity`: one row per session, indexed by `Date`; `.returns` is its `daily_return` from the second session on, a float64 Series named `returns` (per bar for an hourly backtest, whose rows are bars). Where a kind's JSON has no `drawdown` or `daily_return`, the package computes them from `equity`. A kind adds columns of its own.",
        entries: EQUITY,
    },
];

/// The metric `name`.
pub fn metric_entry(name: &str) -> Option<&'static Entry> {
    METRICS.iter().find(|e| e.name == name)
}

/// The page label of metric `name` (the name itself if it is none).
pub fn label(name: &str) -> &str {
    metric_entry(name).map_or(name, |e| e.label)
}

/// A metric as a page shows it: its name, label and unit, and where it is
/// in a kind's JSON (`field`, a key or a dotted path, whose value is the
/// glossary's times `scale`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Shown {
    pub name: &'static str,
    pub label: &'static str,
    pub unit: &'static str,
    pub field: &'static str,
    pub scale: f64,
}

/// The metrics `names`, in that order, as `kind`'s page shows them; a name
/// the glossary lacks, or that `kind` does not answer, is left out.
pub fn shown(kind: Kind, names: &[&str]) -> Vec<Shown> {
    names
        .iter()
        .filter_map(|n| {
            let e = metric_entry(n)?;
            let f = e.field(kind)?;
            Some(Shown {
                name: e.name,
                label: e.label,
                unit: e.unit.as_str(),
                field: f.field,
                scale: f.scale,
            })
        })
        .collect()
}

mod columns;
mod metrics;
mod page;
#[cfg(test)]
mod tests;

pub use columns::{EQUITY, ORDERS, TRADES};
pub use metrics::METRICS;
pub use page::markdown;
