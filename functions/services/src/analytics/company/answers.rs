//! The company detail records (analytics 2.7), field names as the spec
//! writes them. Fields the spec marks as JSON strings are `String`s holding
//! the JSON of the item types below; a value the data lack is `null`.

#![allow(non_snake_case)]

use serde::Serialize;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Profile {
    pub symbol: String,
    pub companyName: String,
    pub exchange: Option<String>,
    pub industry: Option<String>,
    pub description: Option<String>,
    pub sector: Option<String>,
    pub ceo: Option<String>,
    pub website: Option<String>,
    pub country: Option<String>,
    pub fullTimeEmployees: Option<i64>,
    /// YYYY-MM-DD.
    pub ipoDate: Option<String>,
}

/// The latest key metrics.
#[derive(Debug, Clone, Serialize, Default)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct LatestDetail {
    /// YYYY-MM-DD of the metrics.
    pub date: Option<String>,
    /// USD.
    pub market_cap: Option<f64>,
    pub pe_ratio: Option<f64>,
    pub pb_ratio: Option<f64>,
    pub price_to_sales_ratio: Option<f64>,
    pub ev_to_sales: Option<f64>,
    pub enterprise_value_over_ebitda: Option<f64>,
    pub beta: Option<f64>,
    pub roe: Option<f64>,
    pub current_ratio: Option<f64>,
    pub free_cash_flow_yield: Option<f64>,
    pub dividend_yield: Option<f64>,
}

/// The latest session's trading figures, from the daily bars.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct TradingStat {
    /// YYYY-MM-DD of the latest session.
    pub date: String,
    /// The latest close.
    pub price: f64,
    pub open_price: f64,
    pub previous_close: Option<f64>,
    pub day_high: f64,
    pub day_low: f64,
    /// Highest high and lowest low of the last 252 sessions.
    pub year_high: f64,
    pub year_low: f64,
    pub volume: f64,
    /// Average volume of the last 63 sessions.
    pub avg_volume: f64,
    /// Wilder's average true range over 14 sessions.
    pub atr14: Option<f64>,
    /// Simple moving averages of the close.
    pub ma20: Option<f64>,
    pub ma50: Option<f64>,
    pub ma200: Option<f64>,
    /// Percent: (price / MA - 1) x 100.
    pub ma20_distance: Option<f64>,
    pub ma50_distance: Option<f64>,
    pub ma200_distance: Option<f64>,
    /// volume / avg_volume.
    pub relative_volume: Option<f64>,
}

/// The latest analyst ratings: counts and percent of their total.
#[derive(Debug, Clone, Serialize, Default)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct RatingData {
    /// YYYY-MM-DD of the ratings.
    pub date: Option<String>,
    pub analyst_ratings_buy: i64,
    pub analyst_ratings_hold: i64,
    pub analyst_ratings_sell: i64,
    pub analyst_ratings_strong_buy: i64,
    pub analyst_ratings_strong_sell: i64,
    pub analyst_ratings_buy_percent: f64,
    pub analyst_ratings_hold_percent: f64,
    pub analyst_ratings_sell_percent: f64,
    pub analyst_ratings_strong_buy_percent: f64,
    pub analyst_ratings_strong_sell_percent: f64,
}

/// An item of `pt_data`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct PriceTarget {
    pub date: String,
    pub target_mean: Option<f64>,
    pub price_min: Option<f64>,
    pub price_max: Option<f64>,
    pub num: Option<i64>,
    /// Percent.
    pub accuracy_mean: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct EarningData {
    /// The latest reported quarter's fiscal_date_ending.
    pub newest_date: Option<String>,
    /// Average EPS of the last 12 reported quarters.
    pub avg_eps: Option<f64>,
    /// Average of their eps_surprise (percent).
    pub avg_eps_surprise: Option<f64>,
    /// Of those quarters: |eps_surprise| under 10%...
    pub beat_count: usize,
    /// ...and at or over 10%.
    pub miss_count: usize,
    /// JSON array of `HistoryEarn`, newest first.
    pub history_earn_data: String,
    /// JSON array of `UpcomingEarn`, soonest first.
    pub upcoming_earn_data: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct HistoryEarn {
    pub fiscal_date_ending: String,
    pub eps: Option<f64>,
    pub eps_estimated: Option<f64>,
    /// Percent: (eps / eps_estimated - 1) x 100.
    pub eps_surprise: Option<f64>,
    pub revenue: Option<f64>,
    pub revenue_estimated: Option<f64>,
    /// revenue - revenue_estimated (currency).
    pub revenue_surprise: Option<f64>,
    /// Percent change of revenue from the previous quarter.
    pub qoq_growth: Option<f64>,
    /// Percent change of revenue from the quarter a year before.
    pub yoy_growth: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct UpcomingEarn {
    pub fiscal_date_ending: String,
    pub eps_estimated: Option<f64>,
    pub revenue_estimated: Option<f64>,
}

/// An item of `income_data`; ratios are fractions of revenue, margins equal them.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct IncomeItem {
    pub date: String,
    pub filling_date: Option<String>,
    pub revenue: Option<f64>,
    pub gross_profit: Option<f64>,
    pub operating_income: Option<f64>,
    pub net_income: Option<f64>,
    pub ebitda: Option<f64>,
    pub gross_profit_ratio: Option<f64>,
    pub operating_income_ratio: Option<f64>,
    pub net_income_ratio: Option<f64>,
    pub ebitdaratio: Option<f64>,
    pub eps: Option<f64>,
    pub epsdiluted: Option<f64>,
    /// Percent change from the same period a year before.
    pub revenue_growth_yoy: Option<f64>,
    pub gross_profit_growth_yoy: Option<f64>,
    pub operating_income_growth_yoy: Option<f64>,
    pub net_income_growth_yoy: Option<f64>,
    pub ebitda_growth_yoy: Option<f64>,
    pub gross_margin: Option<f64>,
    pub operating_margin: Option<f64>,
    pub net_margin: Option<f64>,
    pub ebitda_margin: Option<f64>,
}

/// An item of `balance_data`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct BalanceItem {
    pub date: String,
    pub filling_date: Option<String>,
    pub cash_and_cash_equivalents: Option<f64>,
    pub total_current_assets: Option<f64>,
    pub total_assets: Option<f64>,
    pub total_current_liabilities: Option<f64>,
    pub long_term_debt: Option<f64>,
    pub total_liabilities: Option<f64>,
    pub total_stockholders_equity: Option<f64>,
    pub total_debt: Option<f64>,
    /// total_current_assets / total_current_liabilities.
    pub current_ratio: Option<f64>,
    /// total_liabilities / total_stockholders_equity.
    pub debt_to_equity: Option<f64>,
}

/// An item of `cash_data`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct CashItem {
    pub date: String,
    pub filling_date: Option<String>,
    pub net_cash_provided_by_operating_activities: Option<f64>,
    /// Negative: cash spent.
    pub capital_expenditure: Option<f64>,
    /// Operating cash flow minus the capital spent: ocf - |capex|.
    pub free_cash_flow: Option<f64>,
    pub net_change_in_cash: Option<f64>,
    pub cash_at_end_of_period: Option<f64>,
    pub cash_at_beginning_of_period: Option<f64>,
    /// free_cash_flow / operating cash flow.
    pub fcf_to_ocf_ratio: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct NewsItem {
    pub news_title: String,
    pub news_url: String,
    /// YYYY-MM-DD HH:MM:SS.
    pub published_date: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct SecItem {
    /// 10-K, 10-Q, 8-K, ...
    pub sec_type: String,
    pub filling_date: String,
    pub link: String,
    pub description: String,
}

/// An item of `insider_data.data`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct InsiderItem {
    pub transaction_date: String,
    pub reporting_name: String,
    /// `Buy` or `Sell`.
    pub r#type: String,
    pub securities_transacted: Option<f64>,
    pub price: Option<f64>,
    /// securities_transacted x price.
    pub value: Option<f64>,
}

/// An item of the holder lists.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct HolderItem {
    pub date_reported: String,
    pub holder: String,
    pub shares: Option<f64>,
    pub change_percent: Option<f64>,
    /// shares x the latest close.
    pub value: Option<f64>,
}

/// An item of `all_pred_data`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct PredItem {
    pub Ticker: String,
    pub Target: Option<f64>,
    pub PredictEndDate: Option<String>,
    pub Close: Option<f64>,
    pub MeanAcc: Option<f64>,
    pub history_count: Option<i64>,
    /// `Strong Sell`, `Sell`, `Hold`, `Buy` or `Strong Buy`.
    pub latest_rating: Option<String>,
}

/// `data` of `get_profile`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ProfileData {
    pub profile: Profile,
    pub latest_detail: LatestDetail,
    pub trading_stat: TradingStat,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Meta {
    pub description: &'static str,
    /// On `profile_info` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
}

/// One part of `market_pred`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Section<T> {
    pub meta: Meta,
    pub data: T,
}

/// `data` of `market_pred`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct MarketPredData {
    pub profile_info: Section<Profile>,
    pub latest_detail: Section<LatestDetail>,
    pub trading_stat: Section<TradingStat>,
    pub rating_data: Section<RatingData>,
    /// A JSON array of `PriceTarget`, newest first.
    pub pt_data: Section<String>,
}

/// `data` of `get_analysis`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct AnalysisData {
    pub rating_data: RatingData,
    /// A JSON array of `PriceTarget`, newest first.
    pub pt_data: String,
}

/// `data` of `get_earning`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct EarningAnswer {
    pub earning_data: EarningData,
}

/// `data` of `get_income`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct IncomeData {
    /// A JSON array of `IncomeItem`, newest first.
    pub income_data: String,
}

/// `data` of `get_balance`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct BalanceData {
    /// A JSON array of `BalanceItem`, newest first.
    pub balance_data: String,
}

/// `data` of `get_cash`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct CashData {
    /// A JSON array of `CashItem`, newest first.
    pub cash_data: String,
}

/// `data` of `get_news`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct NewsData {
    /// The latest 50, newest first.
    pub news_data: Vec<NewsItem>,
}

/// `data` of `get_sec`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct SecData {
    /// The latest 50, newest first.
    pub sec_data: Vec<SecItem>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct InsiderData {
    /// A JSON array of `InsiderItem`, newest first (at most 100).
    pub data: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Holders {
    /// JSON arrays of `HolderItem`: the 10 largest by shares.
    pub institutional_holders: String,
    pub fund_holders: String,
}

/// `data` of `get_holder`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct HolderData {
    pub insider_data: InsiderData,
    pub holder_data: Holders,
}

/// `data` of `get_pred`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct PredData {
    /// A JSON array of `PredItem`: every company on the latest date, by ticker.
    pub all_pred_data: String,
}
