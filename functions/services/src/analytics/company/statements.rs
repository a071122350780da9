//! The figures derived from the statement and earnings tables: ratios,
//! year-over-year growth, free cash flow, EPS surprises and their counts.
//! Computed here from the stored rows, never stored.

use super::answers::{BalanceItem, CashItem, EarningData, HistoryEarn, IncomeItem, UpcomingEarn};
use super::tables::Table;
use chrono::NaiveDate;

/// Statement periods of five years.
pub const YEARS: usize = 5;
/// Reported quarters the EPS averages and counts cover.
pub const EPS_QUARTERS: usize = 12;
/// An EPS surprise under this (percent, either way) counts as a beat.
pub const BEAT_WITHIN: f64 = 10.0;

/// `a / b`, none when either is missing or `b` is 0.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b != 0.0 => Some(a / b),
        _ => None,
    }
}

/// Percent change from `before` to `now`, none without a nonzero base.
pub fn growth(now: Option<f64>, before: Option<f64>) -> Option<f64> {
    match (now, before) {
        (Some(n), Some(b)) if b != 0.0 => Some((n / b - 1.0) * 100.0),
        _ => None,
    }
}

fn day(d: Option<NaiveDate>) -> Option<String> {
    d.map(|d| d.to_string())
}

/// A symbol's statement rows of one period, oldest first.
fn periods(t: &Table, symbol: &str, period: &str) -> Vec<(NaiveDate, usize)> {
    let mut v: Vec<(NaiveDate, usize)> = t
        .rows_of(symbol)
        .iter()
        .filter(|r| t.text("period", **r) == Some(period))
        .filter_map(|r| Some((t.date("date", *r)?, *r)))
        .collect();
    v.sort();
    v.dedup_by_key(|x| x.0);
    v
}

/// Periods a year apart, and the periods five years hold.
fn span(period: &str) -> (usize, usize) {
    if period == "annual" {
        (1, YEARS)
    } else {
        (4, 4 * YEARS)
    }
}

/// The newest five years of a statement, newest first, each row built by
/// `item(row, the row a year before)`.
fn newest<T>(
    t: &Table,
    symbol: &str,
    period: &str,
    item: impl Fn(usize, Option<usize>, NaiveDate) -> T,
) -> Vec<T> {
    let rows = periods(t, symbol, period);
    let (back, keep) = span(period);
    let from = rows.len().saturating_sub(keep);
    (from..rows.len())
        .rev()
        .map(|k| {
            let before = k.checked_sub(back).map(|j| rows[j].1);
            item(rows[k].1, before, rows[k].0)
        })
        .collect()
}

pub fn income(t: &Table, symbol: &str, period: &str) -> Vec<IncomeItem> {
    newest(t, symbol, period, |r, before, date| {
        let n = |c: &str| t.num(c, r);
        let yoy = |c: &str| growth(n(c), before.and_then(|b| t.num(c, b)));
        let of_revenue = |c: &str| ratio(n(c), n("revenue"));
        IncomeItem {
            date: date.to_string(),
            filling_date: day(t.date("filling_date", r)),
            revenue: n("revenue"),
            gross_profit: n("gross_profit"),
            operating_income: n("operating_income"),
            net_income: n("net_income"),
            ebitda: n("ebitda"),
            gross_profit_ratio: of_revenue("gross_profit"),
            operating_income_ratio: of_revenue("operating_income"),
            net_income_ratio: of_revenue("net_income"),
            ebitdaratio: of_revenue("ebitda"),
            eps: n("eps"),
            epsdiluted: n("epsdiluted"),
            revenue_growth_yoy: yoy("revenue"),
            gross_profit_growth_yoy: yoy("gross_profit"),
            operating_income_growth_yoy: yoy("operating_income"),
            net_income_growth_yoy: yoy("net_income"),
            ebitda_growth_yoy: yoy("ebitda"),
            gross_margin: of_revenue("gross_profit"),
            operating_margin: of_revenue("operating_income"),
            net_margin: of_revenue("net_income"),
            ebitda_margin: of_revenue("ebitda"),
        }
    })
}

pub fn balance(t: &Table, symbol: &str, period: &str) -> Vec<BalanceItem> {
    newest(t, symbol, period, |r, _, date| {
        let n = |c: &str| t.num(c, r);
        BalanceItem {
            date: date.to_string(),
            filling_date: day(t.date("filling_date", r)),
            cash_and_cash_equivalents: n("cash_and_cash_equivalents"),
            total_current_assets: n("total_current_assets"),
            total_assets: n("total_assets"),
            total_current_liabilities: n("total_current_liabilities"),
            long_term_debt: n("long_term_debt"),
            total_liabilities: n("total_liabilities"),
            total_stockholders_equity: n("total_stockholders_equity"),
            total_debt: n("total_debt"),
            current_ratio: ratio(n("total_current_assets"), n("total_current_liabilities")),
            debt_to_equity: ratio(n("total_liabilities"), n("total_stockholders_equity")),
        }
    })
}

pub fn cash(t: &Table, symbol: &str, period: &str) -> Vec<CashItem> {
    newest(t, symbol, period, |r, _, date| {
        let n = |c: &str| t.num(c, r);
        let ocf = n("net_cash_provided_by_operating_activities");
        let capex = n("capital_expenditure");
        let fcf = match (ocf, capex) {
            (Some(o), Some(c)) => Some(o - c.abs()),
            _ => None,
        };
        CashItem {
            date: date.to_string(),
            filling_date: day(t.date("filling_date", r)),
            net_cash_provided_by_operating_activities: ocf,
            capital_expenditure: capex,
            free_cash_flow: fcf,
            net_change_in_cash: n("net_change_in_cash"),
            cash_at_end_of_period: n("cash_at_end_of_period"),
            cash_at_beginning_of_period: n("cash_at_beginning_of_period"),
            fcf_to_ocf_ratio: ratio(fcf, ocf),
        }
    })
}

/// Percent: (eps / estimate - 1) x 100; none without a nonzero estimate.
pub fn eps_surprise(eps: Option<f64>, estimate: Option<f64>) -> Option<f64> {
    growth(eps, estimate)
}

pub fn earnings(t: &Table, symbol: &str) -> EarningData {
    let mut rows: Vec<(NaiveDate, usize)> = t
        .rows_of(symbol)
        .iter()
        .filter_map(|r| Some((t.date("fiscal_date_ending", *r)?, *r)))
        .collect();
    rows.sort();
    let (reported, upcoming): (Vec<_>, Vec<_>) = rows
        .into_iter()
        .partition(|(_, r)| t.num("eps", *r).is_some());
    let revenue = |k: Option<usize>| k.and_then(|k| t.num("revenue", reported[k].1));
    let history: Vec<HistoryEarn> = (0..reported.len())
        .rev()
        .map(|k| {
            let (d, r) = reported[k];
            let n = |c: &str| t.num(c, r);
            HistoryEarn {
                fiscal_date_ending: d.to_string(),
                eps: n("eps"),
                eps_estimated: n("eps_estimated"),
                eps_surprise: eps_surprise(n("eps"), n("eps_estimated")),
                revenue: n("revenue"),
                revenue_estimated: n("revenue_estimated"),
                revenue_surprise: match (n("revenue"), n("revenue_estimated")) {
                    (Some(a), Some(e)) => Some(a - e),
                    _ => None,
                },
                qoq_growth: growth(n("revenue"), revenue(k.checked_sub(1))),
                yoy_growth: growth(n("revenue"), revenue(k.checked_sub(4))),
            }
        })
        .collect();
    let last = &history[..history.len().min(EPS_QUARTERS)];
    let mean = |v: Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let surprises: Vec<f64> = last.iter().filter_map(|h| h.eps_surprise).collect();
    let upcoming: Vec<UpcomingEarn> = upcoming
        .iter()
        .map(|(d, r)| UpcomingEarn {
            fiscal_date_ending: d.to_string(),
            eps_estimated: t.num("eps_estimated", *r),
            revenue_estimated: t.num("revenue_estimated", *r),
        })
        .collect();
    EarningData {
        newest_date: history.first().map(|h| h.fiscal_date_ending.clone()),
        avg_eps: mean(last.iter().filter_map(|h| h.eps).collect()),
        avg_eps_surprise: mean(surprises.clone()),
        beat_count: surprises.iter().filter(|s| s.abs() < BEAT_WITHIN).count(),
        miss_count: surprises.iter().filter(|s| s.abs() >= BEAT_WITHIN).count(),
        history_earn_data: serde_json::to_string(&history).unwrap_or_else(|_| "[]".into()),
        upcoming_earn_data: serde_json::to_string(&upcoming).unwrap_or_else(|_| "[]".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_and_growth_by_hand() {
        assert_eq!(ratio(Some(3.0), Some(4.0)), Some(0.75));
        assert_eq!(ratio(Some(3.0), Some(0.0)), None);
        assert_eq!(ratio(None, Some(1.0)), None);
        assert_eq!(
            growth(Some(110.0), Some(100.0)).map(|g| (g * 1e9).round()),
            Some(10e9)
        );
        assert_eq!(growth(Some(-5.0), Some(-10.0)), Some(-50.0));
        assert_eq!(
            eps_surprise(Some(1.1), Some(1.0)).map(|s| (s * 1e9).round()),
            Some(10e9)
        );
        assert_eq!(span("annual"), (1, 5));
        assert_eq!(span("quarter"), (4, 20));
    }
}
