//! What an account used in a month, beside what its plan allows: the answer
//! of `GET /usage` and the rows of the operator's CSV export.

use chrono::{Datelike, NaiveDate};
use platform::accounts::Service;
use platform::metering::{COMPUTE_PREFIX, DATA_BYTES, DATA_ROWS, Metering};
use platform::quota::PlanLimits;
use platform::usage::UsageDay;
use serde::Serialize;
use std::collections::BTreeMap;
#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// Counts of one day or of the month.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Figures {
    /// Authenticated requests per service (`backtest`, `analytics`, `data`).
    pub requests: BTreeMap<String, u64>,
    /// Task compute in milliseconds per task kind.
    pub compute_ms: BTreeMap<String, u64>,
    /// All task compute, in minutes (the unit of the monthly limit).
    pub compute_minutes: f64,
    /// Records the data service returned.
    pub data_rows: u64,
    /// Bytes of the data service's answers.
    pub data_bytes: u64,
    /// Tasks submitted, per task kind.
    pub tasks: BTreeMap<String, u64>,
}

impl Figures {
    fn add(&mut self, counters: &BTreeMap<String, u64>) {
        for (name, n) in counters {
            if let Some(service) = name.strip_prefix("requests:") {
                *self.requests.entry(service.to_string()).or_default() += n;
            } else if let Some(kind) = name.strip_prefix(COMPUTE_PREFIX) {
                *self.compute_ms.entry(kind.to_string()).or_default() += n;
            } else if name == DATA_ROWS {
                self.data_rows += n;
            } else if name == DATA_BYTES {
                self.data_bytes += n;
            } else if let Some(kind) = name.strip_prefix(TASKS_PREFIX) {
                *self.tasks.entry(kind.to_string()).or_default() += n;
            }
        }
        self.compute_minutes = self.compute_ms.values().sum::<u64>() as f64 / 60_000.0;
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct DayUsage {
    /// `YYYY-MM-DD` (UTC).
    pub day: String,
    #[serde(flatten)]
    pub figures: Figures,
}

/// A plan's limits as the tenant sees them.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Limits {
    /// Per service, per calendar minute (UTC).
    pub requests_per_minute: u32,
    /// Tasks running at once; more wait in PENDING.
    pub concurrent_tasks: u32,
    /// Task compute per calendar month; submits past it are refused with 429.
    pub monthly_compute_minutes: u64,
}

impl From<PlanLimits> for Limits {
    fn from(l: PlanLimits) -> Self {
        Limits {
            requests_per_minute: l.requests_per_minute,
            concurrent_tasks: l.concurrent_tasks,
            monthly_compute_minutes: l.monthly_compute_minutes,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct PlanView {
    pub code: String,
    pub name: String,
    pub limits: Limits,
}

/// What one key did in the month (`GET /usage?by=key`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct KeyUsage {
    pub id: String,
    /// `mlk_<mode>_<id>`.
    pub prefix: String,
    pub name: String,
    /// Requests, tasks submitted and data returned with this key. Task
    /// compute is counted for the account, not split by key.
    #[serde(flatten)]
    pub figures: Figures,
}

/// `GET /usage`: the caller's month, day by day and in total.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct UsageReport {
    pub account: String,
    /// `live`, or `test` for a test key: test usage is kept apart and never billed.
    pub mode: platform::keys::Mode,
    pub plan: PlanView,
    /// `YYYY-MM`.
    pub month: String,
    pub total: Figures,
    /// Task compute left this month, in minutes (never below 0).
    pub compute_minutes_left: f64,
    /// Days with any usage, ascending.
    pub days: Vec<DayUsage>,
    /// Counts reach the store within this many seconds of the request.
    pub delay_seconds: u64,
    /// With `by=key`: each key of this mode that did anything this month,
    /// newest key first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<KeyUsage>>,
}

/// Tasks submitted, per kind (`tasks:<kind>`).
pub const TASKS_PREFIX: &str = "tasks:";

/// Each listed key's share of the counters in `stored` (`key:<id>:<counter>`).
pub fn by_key(keys: &[platform::keys::KeyRecord], stored: &[UsageDay]) -> Vec<KeyUsage> {
    keys.iter()
        .filter_map(|k| {
            let prefix = format!("{}{}:", platform::metering::KEY_PREFIX, k.id);
            let mut figures = Figures::default();
            let mut any = false;
            for d in stored {
                let own: BTreeMap<String, u64> = d
                    .counters
                    .iter()
                    .filter_map(|(name, n)| Some((name.strip_prefix(&prefix)?.to_string(), *n)))
                    .collect();
                any |= !own.is_empty();
                figures.add(&own);
            }
            any.then(|| KeyUsage {
                id: k.id.clone(),
                prefix: k.prefix(),
                name: k.name.clone(),
                figures,
            })
        })
        .collect()
}

/// A month named `YYYY-MM`, as its first day.
pub fn parse_month(text: &str) -> Result<NaiveDate, String> {
    let text = text.trim();
    let first = NaiveDate::parse_from_str(&format!("{text}-01"), "%Y-%m-%d").ok();
    match crate::dates::why_not(text, first, "YYYY-MM") {
        Some(why) => Err(format!("'month' {why}")),
        None => Ok(first.expect("checked")),
    }
}

/// The report from the stored days of one month.
pub fn report(
    account: &str,
    plan: &platform::accounts::Plan,
    limits: PlanLimits,
    month: NaiveDate,
    stored: &[UsageDay],
) -> UsageReport {
    let mut total = Figures::default();
    let days: Vec<DayUsage> = stored
        .iter()
        .map(|d| {
            let mut figures = Figures::default();
            figures.add(&d.counters);
            total.add(&d.counters);
            DayUsage {
                day: d.day.to_string(),
                figures,
            }
        })
        .collect();
    // Every service of the plan shows, used or not.
    for s in plan.services {
        total.requests.entry(s.to_string()).or_default();
    }
    UsageReport {
        account: platform::keys::account_of(account).0.to_string(),
        mode: platform::keys::account_of(account).1,
        plan: PlanView {
            code: plan.code.to_string(),
            name: plan.name.to_string(),
            limits: limits.into(),
        },
        month: format!("{:04}-{:02}", month.year(), month.month()),
        compute_minutes_left: (limits.monthly_compute_minutes as f64 - total.compute_minutes)
            .max(0.0),
        total,
        days,
        delay_seconds: platform::metering::FLUSH_EVERY.as_secs(),
        keys: None,
    }
}

/// The caller's report for `month` (its first day).
///
/// `owner` is the account or its test-mode books (`platform::keys::owner`);
/// with `keys`, the report breaks the month down by those keys.
pub async fn for_account(
    metering: &Metering,
    account: &platform::accounts::Account,
    owner: &str,
    month: NaiveDate,
    keys: Option<&[platform::keys::KeyRecord]>,
) -> crate::Result<UsageReport> {
    let stored = metering.month(owner, month).await?;
    let limits = metering.limits(account.plan.code).await;
    let mut r = report(owner, account.plan, limits, month, &stored);
    if let Some(keys) = keys {
        let mode = platform::keys::account_of(owner).1;
        let mine: Vec<_> = keys.iter().filter(|k| k.mode == mode).cloned().collect();
        r.keys = Some(by_key(&mine, &stored));
    }
    Ok(r)
}

/// The CSV header of the export; one row per account, day and counter.
pub const CSV_HEADER: &str = "month,account,plan,day,metric,subject,quantity,unit";

/// Export rows for an account's stored days: `metric` is `requests`,
/// `compute`, `data_rows` or `data_bytes`; `subject` the service or task kind.
pub fn csv_rows(account: &str, plan: &str, days: &[UsageDay]) -> Vec<String> {
    let mut out = Vec::new();
    for d in days {
        let month = format!("{:04}-{:02}", d.day.year(), d.day.month());
        for (name, n) in &d.counters {
            let (metric, subject, unit) = if let Some(s) = name.strip_prefix("requests:") {
                ("requests", s, "requests")
            } else if let Some(k) = name.strip_prefix(COMPUTE_PREFIX) {
                ("compute", k, "ms")
            } else if name == DATA_ROWS {
                ("data_rows", "data", "rows")
            } else if name == DATA_BYTES {
                ("data_bytes", "data", "bytes")
            } else if let Some(k) = name.strip_prefix(TASKS_PREFIX) {
                ("tasks", k, "tasks")
            } else if name.starts_with(platform::metering::KEY_PREFIX) {
                // A key's share, already in the account's counts.
                continue;
            } else {
                ("other", name.as_str(), "count")
            };
            out.push(format!(
                "{month},{},{plan},{},{metric},{subject},{n},{unit}",
                csv_field(account),
                d.day
            ));
        }
    }
    out
}

/// Quotes a field holding a comma, quote or line break (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Services in the order reports list them.
pub const SERVICES: [Service; 3] = [Service::Backtest, Service::Analytics, Service::Data];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_sums_days_and_sets_limits_beside_them() {
        let d = |s: &str| s.parse::<NaiveDate>().unwrap();
        let day = |at: &str, c: &[(&str, u64)]| UsageDay {
            day: d(at),
            counters: c.iter().map(|(k, n)| (k.to_string(), *n)).collect(),
        };
        let stored = [
            day(
                "2026-11-02",
                &[("requests:backtest", 3), ("compute_ms:cpm_scan", 90_000)],
            ),
            day(
                "2026-11-05",
                &[
                    ("requests:data", 2),
                    ("rows:data", 500),
                    ("bytes:data", 12_345),
                    ("compute_ms:cpm_scan", 30_000),
                ],
            ),
        ];
        let plan = platform::accounts::plan("pro").unwrap();
        let limits = platform::quota::default_limits("pro");
        let r = report("a@x", plan, limits, d("2026-11-01"), &stored);
        assert_eq!(r.month, "2026-11");
        assert_eq!(r.total.requests["backtest"], 3);
        assert_eq!(r.total.requests["analytics"], 0);
        assert_eq!(r.total.compute_ms["cpm_scan"], 120_000);
        assert_eq!(r.total.compute_minutes, 2.0);
        assert_eq!(r.compute_minutes_left, 5_998.0);
        assert_eq!((r.total.data_rows, r.total.data_bytes), (500, 12_345));
        assert_eq!(r.days[1].figures.requests["data"], 2);
        assert_eq!(
            r.plan.limits.requests_per_minute,
            limits.requests_per_minute
        );
        let rows = csv_rows("a,b@x", "pro", &stored);
        assert_eq!(rows.len(), 6);
        assert!(
            rows.contains(
                &"2026-11,\"a,b@x\",pro,2026-11-05,data_bytes,data,12345,bytes".to_string()
            )
        );
        assert_eq!(parse_month("2026-02").unwrap(), d("2026-02-01"));
        assert!(parse_month("2026-13").unwrap_err().contains("'month'"));
    }
}
