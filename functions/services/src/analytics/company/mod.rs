//! Company detail (analytics 2.7, 4.9): profile, trading figures, analyst
//! views, earnings, statements, news, filings, holders and predictions,
//! each from its reference table (docs/data-layout.md) and the daily bars.
//! Derived fields are computed here (`statements`), never read.

pub mod answers;
pub mod statements;
pub mod tables;

use crate::error::{Error, Result};
use answers::*;
use chrono::NaiveDate;
use engine::Bars;
use platform::PortError;
use platform::marketdata::MarketData;
use serde::Deserialize;
use std::sync::Arc;
use tables::{Table, load};

#[cfg(feature = "openapi")]
use utoipa::IntoParams;

/// News and filings answered at most.
pub const LATEST_ITEMS: usize = 50;
/// Holders answered per list.
pub const TOP_HOLDERS: usize = 10;
/// Insider trades answered at most.
pub const INSIDER_ITEMS: usize = 100;

/// Query of the company endpoints.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(IntoParams), into_params(parameter_in = Query))]
pub struct CompanyParams {
    /// The company's symbol (any case).
    #[cfg_attr(feature = "openapi", param(value_type = String, pattern = "^[A-Za-z0-9._^-]{1,32}$", example = "AAPL"))]
    pub symbol: Option<String>,
    /// `annually` (default) or `quarterly`; read by income, balance and cash.
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, pattern = "^(annually|quarterly)$"))]
    pub period: Option<String>,
}

/// A checked query: the symbol in upper case, the statements' period as
/// the tables write it (`annual` or `quarter`).
#[derive(Debug, Clone)]
pub struct CompanyQuery {
    pub symbol: String,
    pub period: &'static str,
}

impl CompanyParams {
    pub fn validate(&self) -> Result<CompanyQuery> {
        let symbol = self
            .symbol
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| Error::invalid("symbol", "is required"))?;
        if !(1..=32).contains(&symbol.len())
            || !symbol
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._^-".contains(c))
        {
            return Err(Error::invalid(
                "symbol",
                format!("'{symbol}' is not a ticker (letters, digits and . _ ^ -, 1-32)"),
            ));
        }
        let period = match self
            .period
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            None | Some("annually") => "annual",
            Some("quarterly") => "quarter",
            Some(p) => {
                return Err(Error::invalid(
                    "period",
                    format!("must be annually or quarterly, got '{p}'"),
                ));
            }
        };
        Ok(CompanyQuery {
            symbol: symbol.to_ascii_uppercase(),
            period,
        })
    }
}

/// What an answer says it holds, naming the symbol.
pub struct Answer<T> {
    pub msg: String,
    pub data: T,
}

fn answer<T>(what: &str, symbol: &str, data: T) -> Answer<T> {
    Answer {
        msg: format!("{what} of {symbol}"),
        data,
    }
}

/// The symbol's catalog entry; an unknown symbol is 404.
async fn known(market: &dyn MarketData, symbol: &str) -> Result<platform::marketdata::SymbolInfo> {
    market
        .symbols()
        .await?
        .iter()
        .find(|s| s.symbol == symbol)
        .cloned()
        .ok_or_else(|| Error::unknown_symbol("symbol", symbol))
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "[]".into())
}

fn day(d: Option<NaiveDate>) -> Option<String> {
    d.map(|d| d.to_string())
}

/// A symbol's rows newest first by the date column `col`.
fn newest_first(t: &Table, symbol: &str, col: &str) -> Vec<usize> {
    let mut rows = t.rows_of(symbol).to_vec();
    rows.sort_by(|a, b| t.time(col, *b).cmp(&t.time(col, *a)).then(a.cmp(b)));
    rows
}

/// The symbol's daily bars, if it has any.
async fn bars(market: &dyn MarketData, symbol: &str) -> Result<Option<Arc<Bars>>> {
    match market.daily(symbol).await {
        Ok(b) if !b.is_empty() => Ok(Some(b)),
        Ok(_) | Err(PortError::NotFound(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

async fn profile(market: &dyn MarketData, symbol: &str) -> Result<Profile> {
    let info = known(market, symbol).await?;
    let t = load(market, "profiles", "symbol").await?;
    let row = t.rows_of(symbol).last().copied();
    let text = |c: &str| row.and_then(|r| t.text(c, r)).map(str::to_string);
    Ok(Profile {
        symbol: symbol.to_string(),
        companyName: text("companyName").unwrap_or(info.name),
        exchange: text("exchange").or(info.exchange),
        industry: text("industry").or(info.industry),
        description: text("description"),
        sector: text("sector").or(info.sector),
        ceo: text("ceo"),
        website: text("website"),
        country: text("country"),
        fullTimeEmployees: row.and_then(|r| t.int("fullTimeEmployees", r)),
        ipoDate: day(row.and_then(|r| t.date("ipoDate", r))),
    })
}

async fn latest_detail(market: &dyn MarketData, symbol: &str) -> Result<LatestDetail> {
    let t = load(market, "key_metrics", "symbol").await?;
    let Some(r) = newest_first(&t, symbol, "date").first().copied() else {
        return Ok(LatestDetail::default());
    };
    let n = |c: &str| t.num(c, r);
    Ok(LatestDetail {
        date: day(t.date("date", r)),
        market_cap: n("market_cap"),
        pe_ratio: n("pe_ratio"),
        pb_ratio: n("pb_ratio"),
        price_to_sales_ratio: n("price_to_sales_ratio"),
        ev_to_sales: n("ev_to_sales"),
        enterprise_value_over_ebitda: n("enterprise_value_over_ebitda"),
        beta: n("beta"),
        roe: n("roe"),
        current_ratio: n("current_ratio"),
        free_cash_flow_yield: n("free_cash_flow_yield"),
        dividend_yield: n("dividend_yield"),
    })
}

/// The latest session's figures (definitions on `TradingStat`).
pub fn trading_stat(b: &Bars) -> TradingStat {
    let n = b.len();
    let last = n - 1;
    let year = n.saturating_sub(252);
    let recent = n.saturating_sub(63);
    let avg_volume = b.volume[recent..].iter().sum::<f64>() / (n - recent) as f64;
    let ma = |p: usize| (n >= p).then(|| b.close[n - p..].iter().sum::<f64>() / p as f64);
    let distance = |m: Option<f64>| {
        m.filter(|m| *m != 0.0)
            .map(|m| (b.close[last] / m - 1.0) * 100.0)
    };
    let atr = engine::indicators::atr(&b.high, &b.low, &b.close, 14);
    let (ma20, ma50, ma200) = (ma(20), ma(50), ma(200));
    TradingStat {
        date: b.date(last).to_string(),
        price: b.close[last],
        open_price: b.open[last],
        previous_close: last.checked_sub(1).map(|p| b.close[p]),
        day_high: b.high[last],
        day_low: b.low[last],
        year_high: b.high[year..].iter().copied().fold(f64::MIN, f64::max),
        year_low: b.low[year..].iter().copied().fold(f64::MAX, f64::min),
        volume: b.volume[last],
        avg_volume,
        atr14: atr.last().copied().filter(|x| !x.is_nan()),
        ma20,
        ma50,
        ma200,
        ma20_distance: distance(ma20),
        ma50_distance: distance(ma50),
        ma200_distance: distance(ma200),
        relative_volume: (avg_volume > 0.0).then(|| b.volume[last] / avg_volume),
    }
}

async fn trading(market: &dyn MarketData, symbol: &str) -> Result<TradingStat> {
    let b = bars(market, symbol)
        .await?
        .ok_or_else(|| Error::unknown_symbol("symbol", symbol))?;
    Ok(trading_stat(&b))
}

async fn ratings(market: &dyn MarketData, symbol: &str) -> Result<RatingData> {
    let t = load(market, "analyst_ratings", "symbol").await?;
    let Some(r) = newest_first(&t, symbol, "date").first().copied() else {
        return Ok(RatingData::default());
    };
    let c = |name: &str| t.int(name, r).unwrap_or(0);
    let (sb, b, h, s, ss) = (
        c("strong_buy"),
        c("buy"),
        c("hold"),
        c("sell"),
        c("strong_sell"),
    );
    let total = (sb + b + h + s + ss) as f64;
    let pct = |x: i64| {
        if total > 0.0 {
            x as f64 / total * 100.0
        } else {
            0.0
        }
    };
    Ok(RatingData {
        date: day(t.date("date", r)),
        analyst_ratings_buy: b,
        analyst_ratings_hold: h,
        analyst_ratings_sell: s,
        analyst_ratings_strong_buy: sb,
        analyst_ratings_strong_sell: ss,
        analyst_ratings_buy_percent: pct(b),
        analyst_ratings_hold_percent: pct(h),
        analyst_ratings_sell_percent: pct(s),
        analyst_ratings_strong_buy_percent: pct(sb),
        analyst_ratings_strong_sell_percent: pct(ss),
    })
}

async fn targets(market: &dyn MarketData, symbol: &str) -> Result<String> {
    let t = load(market, "price_targets", "symbol").await?;
    let items: Vec<PriceTarget> = newest_first(&t, symbol, "date")
        .into_iter()
        .filter_map(|r| {
            Some(PriceTarget {
                date: t.date("date", r)?.to_string(),
                target_mean: t.num("target_mean", r),
                price_min: t.num("price_min", r),
                price_max: t.num("price_max", r),
                num: t.int("num", r),
                accuracy_mean: t.num("accuracy_mean", r),
            })
        })
        .collect();
    Ok(json(&items))
}

/// `GET /company_detail/get_profile`.
pub async fn get_profile(market: &dyn MarketData, q: &CompanyQuery) -> Result<Answer<ProfileData>> {
    let profile = profile(market, &q.symbol).await?;
    Ok(answer(
        "Profile",
        &q.symbol,
        ProfileData {
            profile,
            latest_detail: latest_detail(market, &q.symbol).await?,
            trading_stat: trading(market, &q.symbol).await?,
        },
    ))
}

/// `GET /company_detail/market_pred`.
pub async fn market_pred(
    market: &dyn MarketData,
    q: &CompanyQuery,
) -> Result<Answer<MarketPredData>> {
    let profile = profile(market, &q.symbol).await?;
    let meta = |description: &'static str| Meta {
        description,
        symbol: None,
    };
    Ok(answer(
        "Market overview",
        &q.symbol,
        MarketPredData {
            profile_info: Section {
                meta: Meta {
                    description: "The company's profile",
                    symbol: Some(q.symbol.clone()),
                },
                data: profile,
            },
            latest_detail: Section {
                meta: meta("The latest valuation and quality metrics"),
                data: latest_detail(market, &q.symbol).await?,
            },
            trading_stat: Section {
                meta: meta("The latest session's trading figures"),
                data: trading(market, &q.symbol).await?,
            },
            rating_data: Section {
                meta: meta("The latest analyst ratings"),
                data: ratings(market, &q.symbol).await?,
            },
            pt_data: Section {
                meta: meta("Analyst price targets, newest first (JSON text)"),
                data: targets(market, &q.symbol).await?,
            },
        },
    ))
}

/// `GET /company_detail/get_analysis`.
pub async fn get_analysis(
    market: &dyn MarketData,
    q: &CompanyQuery,
) -> Result<Answer<AnalysisData>> {
    known(market, &q.symbol).await?;
    Ok(answer(
        "Analyst ratings and price targets",
        &q.symbol,
        AnalysisData {
            rating_data: ratings(market, &q.symbol).await?,
            pt_data: targets(market, &q.symbol).await?,
        },
    ))
}

/// `GET /company_detail/get_earning`.
pub async fn get_earning(
    market: &dyn MarketData,
    q: &CompanyQuery,
) -> Result<Answer<EarningAnswer>> {
    known(market, &q.symbol).await?;
    let t = load(market, "earnings", "symbol").await?;
    Ok(answer(
        "Earnings",
        &q.symbol,
        EarningAnswer {
            earning_data: statements::earnings(&t, &q.symbol),
        },
    ))
}

fn period_name(period: &str) -> &'static str {
    if period == "annual" {
        "annual"
    } else {
        "quarterly"
    }
}

/// `GET /company_detail/get_income`.
pub async fn get_income(market: &dyn MarketData, q: &CompanyQuery) -> Result<Answer<IncomeData>> {
    known(market, &q.symbol).await?;
    let t = load(market, "income_statements", "symbol").await?;
    let items = statements::income(&t, &q.symbol, q.period);
    Ok(answer(
        &format!("The {} income statements", period_name(q.period)),
        &q.symbol,
        IncomeData {
            income_data: json(&items),
        },
    ))
}

/// `GET /company_detail/get_balance`.
pub async fn get_balance(market: &dyn MarketData, q: &CompanyQuery) -> Result<Answer<BalanceData>> {
    known(market, &q.symbol).await?;
    let t = load(market, "balance_sheets", "symbol").await?;
    let items = statements::balance(&t, &q.symbol, q.period);
    Ok(answer(
        &format!("The {} balance sheets", period_name(q.period)),
        &q.symbol,
        BalanceData {
            balance_data: json(&items),
        },
    ))
}

/// `GET /company_detail/get_cash`.
pub async fn get_cash(market: &dyn MarketData, q: &CompanyQuery) -> Result<Answer<CashData>> {
    known(market, &q.symbol).await?;
    let t = load(market, "cash_flows", "symbol").await?;
    let items = statements::cash(&t, &q.symbol, q.period);
    Ok(answer(
        &format!("The {} cash flow statements", period_name(q.period)),
        &q.symbol,
        CashData {
            cash_data: json(&items),
        },
    ))
}

/// `GET /company_detail/get_news`.
pub async fn get_news(market: &dyn MarketData, q: &CompanyQuery) -> Result<Answer<NewsData>> {
    known(market, &q.symbol).await?;
    let t = load(market, "news", "symbol").await?;
    let news_data = newest_first(&t, &q.symbol, "published_date")
        .into_iter()
        .take(LATEST_ITEMS)
        .map(|r| NewsItem {
            news_title: t.text("news_title", r).unwrap_or_default().to_string(),
            news_url: t.text("news_url", r).unwrap_or_default().to_string(),
            published_date: t
                .time("published_date", r)
                .map(|d| d.format("%Y-%m-%d %H:%M:%S").to_string())
                .unwrap_or_default(),
        })
        .collect();
    Ok(answer("News", &q.symbol, NewsData { news_data }))
}

/// `GET /company_detail/get_sec`.
pub async fn get_sec(market: &dyn MarketData, q: &CompanyQuery) -> Result<Answer<SecData>> {
    known(market, &q.symbol).await?;
    let t = load(market, "sec_filings", "symbol").await?;
    let sec_data = newest_first(&t, &q.symbol, "filling_date")
        .into_iter()
        .take(LATEST_ITEMS)
        .map(|r| SecItem {
            sec_type: t.text("sec_type", r).unwrap_or_default().to_string(),
            filling_date: day(t.date("filling_date", r)).unwrap_or_default(),
            link: t.text("link", r).unwrap_or_default().to_string(),
            description: t.text("description", r).unwrap_or_default().to_string(),
        })
        .collect();
    Ok(answer("SEC filings", &q.symbol, SecData { sec_data }))
}

/// The ten largest holders by shares (each holder's latest report), valued
/// at `close`.
fn top_holders(t: &Table, symbol: &str, close: Option<f64>) -> Vec<HolderItem> {
    let mut latest: std::collections::BTreeMap<&str, usize> = Default::default();
    for r in newest_first(t, symbol, "date_reported") {
        if let Some(h) = t.text("holder", r) {
            latest.entry(h).or_insert(r);
        }
    }
    let mut rows: Vec<usize> = latest.into_values().collect();
    rows.sort_by(|a, b| {
        let s = |r: &usize| t.num("shares", *r).unwrap_or(f64::MIN);
        s(b).total_cmp(&s(a))
            .then_with(|| t.text("holder", *a).cmp(&t.text("holder", *b)))
    });
    rows.into_iter()
        .take(TOP_HOLDERS)
        .map(|r| {
            let shares = t.num("shares", r);
            HolderItem {
                date_reported: day(t.date("date_reported", r)).unwrap_or_default(),
                holder: t.text("holder", r).unwrap_or_default().to_string(),
                shares,
                change_percent: t.num("change_percent", r),
                value: shares.zip(close).map(|(s, c)| s * c),
            }
        })
        .collect()
}

/// `GET /company_detail/get_holder`.
pub async fn get_holder(market: &dyn MarketData, q: &CompanyQuery) -> Result<Answer<HolderData>> {
    known(market, &q.symbol).await?;
    let close = bars(market, &q.symbol).await?.map(|b| b.close[b.len() - 1]);
    let insiders = load(market, "insider_trades", "symbol").await?;
    let data: Vec<InsiderItem> = newest_first(&insiders, &q.symbol, "transaction_date")
        .into_iter()
        .take(INSIDER_ITEMS)
        .map(|r| {
            let (n, p) = (
                insiders.num("securities_transacted", r),
                insiders.num("price", r),
            );
            InsiderItem {
                transaction_date: day(insiders.date("transaction_date", r)).unwrap_or_default(),
                reporting_name: insiders
                    .text("reporting_name", r)
                    .unwrap_or_default()
                    .to_string(),
                r#type: insiders.text("type", r).unwrap_or_default().to_string(),
                securities_transacted: n,
                price: p,
                value: n.zip(p).map(|(n, p)| n * p),
            }
        })
        .collect();
    let institutions = load(market, "institutional_holders", "symbol").await?;
    let funds = load(market, "fund_holders", "symbol").await?;
    Ok(answer(
        "Insiders and holders",
        &q.symbol,
        HolderData {
            insider_data: InsiderData { data: json(&data) },
            holder_data: Holders {
                institutional_holders: json(&top_holders(&institutions, &q.symbol, close)),
                fund_holders: json(&top_holders(&funds, &q.symbol, close)),
            },
        },
    ))
}

/// `GET /company_detail/get_pred`: every company's prediction on the
/// table's latest date, by ticker.
pub async fn get_pred(market: &dyn MarketData) -> Result<Answer<PredData>> {
    let t = load(market, "predictions", "Ticker").await?;
    let latest = t.all_rows().filter_map(|r| t.date("date", r)).max();
    let mut items: Vec<PredItem> = t
        .all_rows()
        .filter(|r| latest.is_some() && t.date("date", *r) == latest)
        .map(|r| PredItem {
            Ticker: t.text("Ticker", r).unwrap_or_default().to_string(),
            Target: t.num("Target", r),
            PredictEndDate: day(t.date("PredictEndDate", r)),
            Close: t.num("Close", r),
            MeanAcc: t.num("MeanAcc", r),
            history_count: t.int("history_count", r),
            latest_rating: t.text("latest_rating", r).map(str::to_string),
        })
        .collect();
    items.sort_by(|a, b| a.Ticker.cmp(&b.Ticker));
    Ok(Answer {
        msg: match latest {
            Some(d) => format!("Predictions of every company on {d}"),
            None => "No predictions in the data".into(),
        },
        data: PredData {
            all_pred_data: json(&items),
        },
    })
}
