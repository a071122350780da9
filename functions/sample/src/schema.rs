//! The served reference tables' columns (docs/data-layout.md): what the
//! generator writes and what the importer requires, from one list.

use super::table::Kind::{self, *};

pub type Columns = &'static [(&'static str, Kind)];

pub const OPTION_CHAINS: Columns = &[
    ("underlying", Str),
    ("underlying_price", F64),
    ("as_of", Date),
    ("expiration", Date),
    ("option_type", Str),
    ("strike", F64),
    ("bid", F64),
    ("ask", F64),
    ("last", F64),
    ("volume", I64),
    ("open_interest", I64),
    ("iv", F64),
    ("delta", F64),
    ("gamma", F64),
    ("theta", F64),
    ("vega", F64),
    ("contract_symbol", Str),
];

pub const PROFILES: Columns = &[
    ("symbol", Str),
    ("companyName", Str),
    ("exchange", Str),
    ("sector", Str),
    ("industry", Str),
    ("description", Str),
    ("ceo", Str),
    ("website", Str),
    ("country", Str),
    ("fullTimeEmployees", I64),
    ("ipoDate", Date),
];

pub const KEY_METRICS: Columns = &[
    ("symbol", Str),
    ("date", Date),
    ("shares_outstanding", F64),
    ("market_cap", F64),
    ("pe_ratio", F64),
    ("pb_ratio", F64),
    ("price_to_sales_ratio", F64),
    ("ev_to_sales", F64),
    ("enterprise_value_over_ebitda", F64),
    ("beta", F64),
    ("roe", F64),
    ("current_ratio", F64),
    ("free_cash_flow_yield", F64),
    ("dividend_yield", F64),
    ("payout_ratio", F64),
    ("eps_growth", F64),
];

pub const INCOME_STATEMENTS: Columns = &[
    ("symbol", Str),
    ("period", Str),
    ("date", Date),
    ("filling_date", Date),
    ("revenue", F64),
    ("gross_profit", F64),
    ("operating_income", F64),
    ("net_income", F64),
    ("ebitda", F64),
    ("eps", F64),
    ("epsdiluted", F64),
];

pub const BALANCE_SHEETS: Columns = &[
    ("symbol", Str),
    ("period", Str),
    ("date", Date),
    ("filling_date", Date),
    ("cash_and_cash_equivalents", F64),
    ("total_current_assets", F64),
    ("total_assets", F64),
    ("total_current_liabilities", F64),
    ("long_term_debt", F64),
    ("total_liabilities", F64),
    ("total_stockholders_equity", F64),
    ("total_debt", F64),
];

pub const CASH_FLOWS: Columns = &[
    ("symbol", Str),
    ("period", Str),
    ("date", Date),
    ("filling_date", Date),
    ("net_cash_provided_by_operating_activities", F64),
    ("capital_expenditure", F64),
    ("net_change_in_cash", F64),
    ("cash_at_end_of_period", F64),
    ("cash_at_beginning_of_period", F64),
    ("dividends_paid", F64),
];

pub const EARNINGS: Columns = &[
    ("symbol", Str),
    ("fiscal_date_ending", Date),
    ("report_date", Date),
    ("eps", F64),
    ("eps_estimated", F64),
    ("revenue", F64),
    ("revenue_estimated", F64),
];

pub const NEWS: Columns = &[
    ("symbol", Str),
    ("published_date", Time),
    ("news_title", Str),
    ("news_url", Str),
    ("source", Str),
];

pub const SEC_FILINGS: Columns = &[
    ("symbol", Str),
    ("sec_type", Str),
    ("filling_date", Date),
    ("link", Str),
    ("description", Str),
];

pub const INSTITUTIONAL_HOLDERS: Columns = &[
    ("symbol", Str),
    ("date_reported", Date),
    ("holder", Str),
    ("shares", F64),
    ("change_percent", F64),
];

pub const FUND_HOLDERS: Columns = &[
    ("symbol", Str),
    ("date_reported", Date),
    ("holder", Str),
    ("shares", F64),
    ("change_percent", F64),
];

pub const INSIDER_TRADES: Columns = &[
    ("symbol", Str),
    ("transaction_date", Date),
    ("reporting_name", Str),
    ("type", Str),
    ("securities_transacted", F64),
    ("price", F64),
];

pub const ANALYST_RATINGS: Columns = &[
    ("symbol", Str),
    ("date", Date),
    ("strong_buy", I64),
    ("buy", I64),
    ("hold", I64),
    ("sell", I64),
    ("strong_sell", I64),
];

pub const PRICE_TARGETS: Columns = &[
    ("symbol", Str),
    ("date", Date),
    ("target_mean", F64),
    ("price_min", F64),
    ("price_max", F64),
    ("num", I64),
    ("accuracy_mean", F64),
];

pub const PREDICTIONS: Columns = &[
    ("Ticker", Str),
    ("date", Date),
    ("Target", F64),
    ("PredictEndDate", Date),
    ("Close", F64),
    ("MeanAcc", F64),
    ("history_count", I64),
    ("latest_rating", Str),
];

pub const REPORTS: Columns = &[
    ("type", Str),
    ("title", Str),
    ("post_content", Str),
    ("author", Str),
    ("url", Str),
    ("publish_date", Date),
];

pub const FOMC_DATES: Columns = &[("date", Date), ("kind", Str)];

pub const US_RECESSIONS: Columns = &[("peak", Date), ("trough", Date)];

/// Every served table and its columns.
pub const TABLES: [(&str, Columns); 18] = [
    ("option_chains", OPTION_CHAINS),
    ("profiles", PROFILES),
    ("key_metrics", KEY_METRICS),
    ("income_statements", INCOME_STATEMENTS),
    ("balance_sheets", BALANCE_SHEETS),
    ("cash_flows", CASH_FLOWS),
    ("earnings", EARNINGS),
    ("news", NEWS),
    ("sec_filings", SEC_FILINGS),
    ("institutional_holders", INSTITUTIONAL_HOLDERS),
    ("fund_holders", FUND_HOLDERS),
    ("insider_trades", INSIDER_TRADES),
    ("analyst_ratings", ANALYST_RATINGS),
    ("price_targets", PRICE_TARGETS),
    ("predictions", PREDICTIONS),
    ("reports", REPORTS),
    ("fomc_dates", FOMC_DATES),
    ("us_recessions", US_RECESSIONS),
];
