//! Research reports (analytics 4.8): the `reports` table, newest first.

use crate::error::{Error, Result};
use platform::PortError;
use platform::marketdata::{MarketData, columns};
use serde::{Deserialize, Serialize};

#[cfg(feature = "openapi")]
use utoipa::{IntoParams, ToSchema};

/// The table the reports come from.
pub const TABLE: &str = "reports";
/// The report types: key and display name.
pub const TYPES: [(&str, &str); 4] = [
    ("quantedge", "QuantEdge"),
    ("modeledge", "ModelEdge"),
    ("sentimentedge", "SentimentEdge"),
    ("tradingedge", "TradingEdge"),
];
pub const DEFAULT_N: usize = 5;
pub const MAX_N: usize = 10;

/// A report type.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ReportType {
    /// The key `report_type` takes.
    pub r#type: &'static str,
    pub name: &'static str,
}

/// `data` of `get-predefined-report-types`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ReportTypes {
    pub report_types: Vec<ReportType>,
}

pub fn report_types() -> ReportTypes {
    ReportTypes {
        report_types: TYPES
            .iter()
            .map(|(t, n)| ReportType { r#type: t, name: n })
            .collect(),
    }
}

/// Query of `GET /reports`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(IntoParams), into_params(parameter_in = Query))]
pub struct ReportParams {
    /// Only this type: `quantedge`, `modeledge`, `sentimentedge` or `tradingedge`.
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, pattern = "^(quantedge|modeledge|sentimentedge|tradingedge)$"))]
    pub report_type: Option<String>,
    /// How many, newest first (default 5, at most 10).
    #[cfg_attr(feature = "openapi", param(value_type = Option<i64>, minimum = 1, maximum = 10))]
    pub n: Option<String>,
}

/// A checked query.
#[derive(Debug, Clone)]
pub struct ReportQuery {
    pub report_type: Option<&'static str>,
    pub n: usize,
}

impl ReportParams {
    pub fn validate(&self) -> Result<ReportQuery> {
        let present = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        let report_type = match present(&self.report_type) {
            None => None,
            Some(t) => Some(
                TYPES
                    .iter()
                    .map(|(k, _)| *k)
                    .find(|k| k.eq_ignore_ascii_case(&t))
                    .ok_or_else(|| {
                        let keys: Vec<&str> = TYPES.iter().map(|(k, _)| *k).collect();
                        Error::invalid(
                            "report_type",
                            format!("must be one of {}, got '{t}'", keys.join(", ")),
                        )
                    })?,
            ),
        };
        let n = match present(&self.n) {
            None => DEFAULT_N,
            Some(s) => s
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=MAX_N).contains(n))
                .ok_or_else(|| {
                    Error::invalid(
                        "n",
                        format!("must be a whole number from 1 to {MAX_N}, got '{s}'"),
                    )
                })?,
        };
        Ok(ReportQuery { report_type, n })
    }
}

/// A report (2.7).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Report {
    pub title: String,
    /// HTML.
    pub post_content: String,
    pub author: String,
    pub url: String,
    /// YYYY-MM-DD.
    pub publish_date: String,
}

/// `GET /reports`: `{code, msg, data, type, count}`; `type` only when filtered.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ReportAnswer {
    pub code: u16,
    pub msg: String,
    /// Newest first.
    pub data: Vec<Report>,
    /// The type asked, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r#type: Option<&'static str>,
    /// Reports in `data`.
    pub count: usize,
}

pub async fn reports(market: &dyn MarketData, q: &ReportQuery) -> Result<ReportAnswer> {
    let t = match market.table(TABLE).await {
        Ok(t) => Some(t),
        Err(PortError::NotFound(_)) => None,
        Err(e) => return Err(e.into()),
    };
    let mut all: Vec<(chrono::NaiveDate, Report)> = Vec::new();
    if let Some(t) = t {
        let kind = columns::texts(&t, "type")?;
        let title = columns::texts(&t, "title")?;
        let content = columns::texts(&t, "post_content")?;
        let author = columns::texts(&t, "author")?;
        let url = columns::texts(&t, "url")?;
        let date = columns::dates(&t, "publish_date")?;
        for i in 0..kind.len() {
            let Some(d) = date[i] else { continue };
            if q.report_type.is_some_and(|k| kind[i].as_deref() != Some(k)) {
                continue;
            }
            let text = |v: &Option<String>| v.clone().unwrap_or_default();
            all.push((
                d,
                Report {
                    title: text(&title[i]),
                    post_content: text(&content[i]),
                    author: text(&author[i]),
                    url: text(&url[i]),
                    publish_date: d.to_string(),
                },
            ));
        }
    }
    // Newest first; a day's reports by title, then url.
    all.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| a.1.title.cmp(&b.1.title))
            .then_with(|| a.1.url.cmp(&b.1.url))
    });
    all.truncate(q.n);
    let data: Vec<Report> = all.into_iter().map(|(_, r)| r).collect();
    Ok(ReportAnswer {
        code: 200,
        msg: match q.report_type {
            Some(k) => format!("The {} latest {k} reports", data.len()),
            None => format!("The {} latest reports", data.len()),
        },
        count: data.len(),
        r#type: q.report_type,
        data,
    })
}
