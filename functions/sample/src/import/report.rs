//! The validation report of an import: every finding of every rule, each
//! located by symbol, line (or row) and column. Errors refuse the whole file;
//! warnings are listed and the file goes in.

use serde::Serialize;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// The rules an import checks, by the name a report gives them.
pub mod rule {
    /// A price or volume that is not a finite number.
    pub const NOT_FINITE: &str = "not_finite";
    /// A price at or below zero.
    pub const NON_POSITIVE: &str = "non_positive_price";
    pub const NEGATIVE_VOLUME: &str = "negative_volume";
    pub const HIGH_BELOW_LOW: &str = "high_below_low";
    /// Open or Close outside the Low-High range.
    pub const OUTSIDE_RANGE: &str = "outside_range";
    pub const DUPLICATE_DATE: &str = "duplicate_date";
    pub const OUT_OF_ORDER: &str = "out_of_order";
    /// A stored session the file gives other prices for.
    pub const OVERLAP_DIFFERS: &str = "overlap_differs";
    /// A session of the exchange calendar with no bar (warning).
    pub const MISSING_SESSION: &str = "missing_session";
    /// A bar on a day the exchange was closed (warning).
    pub const NOT_A_SESSION: &str = "not_a_session";
    /// A close-to-close move past the threshold that no recorded split
    /// explains (warning).
    pub const UNEXPLAINED_JUMP: &str = "unexplained_jump";
    /// An inbox entry that is not a regular file with one link (a link,
    /// a directory, a device, a FIFO): refused unread.
    pub const NOT_A_FILE: &str = "not_a_file";
    /// An inbox file past the size limit: refused unread.
    pub const TOO_LARGE: &str = "too_large";
    /// More rows of one symbol than a daily series can hold.
    pub const TOO_MANY_ROWS: &str = "too_many_rows";
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// One of [`rule`].
    pub rule: &'static str,
    /// The symbol, when the file holds several or names it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// 1-based line of a text file (header = line 1) or row of a Parquet
    /// file or JSON array; 0 when the finding is about no one row.
    pub line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    pub message: String,
}

/// Findings listed per rule and symbol before the rest are only counted:
/// a file with a bad column must not make a report of a million lines.
pub const LISTED: usize = 20;

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    pub file: String,
    pub errors: usize,
    pub warnings: usize,
    pub findings: Vec<Finding>,
    /// Findings counted but not listed (past [`LISTED`] of a rule and symbol).
    pub unlisted: usize,
    #[serde(skip)]
    listed: std::collections::HashMap<(&'static str, Option<String>), usize>,
}

impl Report {
    pub fn new(file: impl Into<String>) -> Self {
        Report {
            file: file.into(),
            ..Default::default()
        }
    }

    pub fn add(&mut self, f: Finding) {
        match f.severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
        }
        let n = self.listed.entry((f.rule, f.symbol.clone())).or_default();
        *n += 1;
        if *n > LISTED {
            self.unlisted += 1;
        } else {
            self.findings.push(f);
        }
    }

    pub fn refused(&self) -> bool {
        self.errors > 0
    }

    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(self).expect("a report serializes")
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let level = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{level} [{}]", self.rule)?;
        if let Some(s) = &self.symbol {
            write!(f, " {s}")?;
        }
        if self.line > 0 {
            write!(f, " line {}", self.line)?;
        }
        if let Some(c) = &self.column {
            write!(f, " column {c}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: {} error(s), {} warning(s){}",
            self.file,
            self.errors,
            self.warnings,
            if self.refused() {
                " - refused, nothing written"
            } else {
                ""
            }
        )?;
        for finding in &self.findings {
            writeln!(f, "  {finding}")?;
        }
        if self.unlisted > 0 {
            writeln!(f, "  ... and {} more", self.unlisted)?;
        }
        Ok(())
    }
}
