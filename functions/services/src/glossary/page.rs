//! docs/results.md, rendered from the glossary.

use super::{GROUPS, Kind};
use std::fmt::Write;

fn scale(s: f64) -> String {
    if s == 1.0 {
        String::new()
    } else {
        format!(" ×{s}")
    }
}

/// docs/results.md.
pub fn markdown() -> String {
    let mut out = String::from(
        "<!-- Generated from functions/services/src/glossary (glossary.rs and its modules) by its test; edit there and run\n     MARKETLAB_UPDATE_DOCS=1 cargo test -p services glossary -->\n\
# Results: one vocabulary\n\n\
Every result kind (a single backtest, a batch row, a portfolio, a\n\
portfolio grid row, a scanner backtest, a walk-forward) names a figure or\n\
a column one way, counts it in one unit and defines it once: the tables\n\
below. The Python package's frames use these names, units and dtypes for\n\
every kind; the report pages show the labels.\n\n\
**Units.** Fractions: 0.05 is 5 %, a drawdown of -0.2 is 20 % below the\n\
peak. The package's frames and every JSON the spec does not define (a\n\
portfolio's result and tables, a backtest's chart, trades and equity, a\n\
walk-forward's figures) are in fractions under the glossary's names. The\n\
spec's legacy JSON keeps the spec's names and percent: the backtest\n\
result of 2.11 (`Total Return (%)`, `Win Rate`, ...), a batch's rows\n\
(which carry 2.11's metric names, a portfolio grid's too) and the scanner\n\
backtest of analytics 2.6 (`TOTAL RETURN`, `MAX RISK`, ...); the package\n\
reads them into the glossary.\n\
Each table's second part says, per kind, which JSON field answers a name\n\
and its scale: the JSON value is the glossary's value times the scale\n\
(×100: percent; ×-100: a fall as a positive percent). A page shows a\n\
fraction as a percent.\n\n\
**Dates and times.** Every DatetimeIndex and datetime column of the\n\
package is `datetime64[ns]` (naive, the exchange's sessions; NaT where\n\
missing); session-indexed frames (equity, weights, prices) have the index\n\
name `Date`, trades `entry_time`, orders `time`. JSON carries dates as\n\
`YYYY-MM-DD` and the times of hourly bars as `YYYY-MM-DDTHH:MM:SS`.\n\n\
Where the kinds' JSON is:\n\n",
    );
    for k in Kind::ALL {
        let _ = writeln!(out, "- **{}**: {}", k.as_str(), k.source());
    }
    for g in GROUPS {
        let _ = write!(
            out,
            "\n## {}\n\n{}\n\n| name | label | unit | dtype | definition |\n|---|---|---|---|---|\n",
            g.title, g.what
        );
        for e in g.entries {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} |",
                e.name,
                e.label,
                e.unit.as_str(),
                e.dtype.as_str(),
                e.definition
            );
        }
        let _ = write!(
            out,
            "\n{} in each kind's JSON (– where the kind has none):\n\n| name |",
            g.title
        );
        let kinds: Vec<Kind> = Kind::ALL
            .into_iter()
            .filter(|k| g.entries.iter().any(|e| e.field(*k).is_some()))
            .collect();
        for k in &kinds {
            let _ = write!(out, " {} |", k.as_str());
        }
        out.push_str("\n|---|");
        out.push_str(&"---|".repeat(kinds.len()));
        out.push('\n');
        for e in g.entries {
            let _ = write!(out, "| `{}` |", e.name);
            for k in &kinds {
                match e.field(*k) {
                    None => out.push_str(" – |"),
                    Some(f) => {
                        let _ = write!(out, " `{}`{}", f.field, scale(f.scale));
                        if !f.note.is_empty() {
                            let _ = write!(out, " ({})", f.note);
                        }
                        out.push_str(" |");
                    }
                }
            }
            out.push('\n');
        }
    }
    out
}
