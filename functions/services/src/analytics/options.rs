//! The smart option scanner (analytics 2.7, 4.6): short puts worth selling
//! from the `option_chains` table, with their probability of profit and an
//! expected-value score (`engine::options::short_put`). docs/analytics.md
//! gives the listing rules and every formula.
//!
//! A date's listing is built once and kept with the table it came from;
//! a request then filters and pages it along a kept order, so a universe of
//! thousands of underlyings answers in milliseconds.

use crate::error::{Error, Result};
use chrono::NaiveDate;
use engine::options::short_put;
use parking_lot::Mutex;
use platform::PortError;
use platform::marketdata::{MarketData, columns};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

#[cfg(feature = "openapi")]
use utoipa::{IntoParams, ToSchema};

/// The table the scanner reads.
pub const CHAINS: &str = "option_chains";
/// The yearly risk-free rate of the probabilities (the sample chains' rate).
pub const RATE: f64 = 0.04;
/// Listed: puts struck from this share of the underlying's close...
pub const MIN_MONEYNESS: f64 = 0.70;
/// ...up to (not including) the close: out of the money.
pub const MAX_MONEYNESS: f64 = 1.0;
/// Days to expiration listed.
pub const MIN_DTE: i64 = 1;
pub const MAX_DTE: i64 = 60;
/// Liquidity floor: a bid, a last price worth selling, some open interest.
pub const MIN_CREDIT: f64 = 0.05;
pub const MIN_OPEN_INTEREST: i64 = 10;
/// Items of one answer: default and most.
pub const DEFAULT_LIMIT: usize = 200;
pub const MAX_LIMIT: usize = 5_000;

/// Query of `GET /smart-option-scanner/options`.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "openapi", derive(IntoParams), into_params(parameter_in = Query))]
pub struct OptionParams {
    /// The chains' date, YYYY-MM-DD; default the latest in the table.
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, format = Date, example = "2026-11-20"))]
    pub date: Option<String>,
    /// Only this underlying (any case).
    #[cfg_attr(
        feature = "openapi",
        param(pattern = "^[A-Za-z0-9._^-]{1,32}$", example = "AAPL")
    )]
    pub ticker: Option<String>,
    /// Only contracts with `POP_est` at least this (percent, 0-100).
    #[cfg_attr(feature = "openapi", param(value_type = Option<f64>, minimum = 0, maximum = 100))]
    pub min_pop: Option<String>,
    /// Only contracts expiring within this many days (1-60).
    #[cfg_attr(feature = "openapi", param(value_type = Option<i64>, minimum = 1, maximum = 60))]
    pub max_dte: Option<String>,
    /// Only contracts with at least this open interest.
    #[cfg_attr(feature = "openapi", param(value_type = Option<i64>, minimum = 0))]
    pub min_oi: Option<String>,
    /// Order: `cagr` (default), `ev_score`, `POP_est`, `return_per`, `IV`,
    /// `OI` or `Volume`, highest first; `DTE`, soonest first. Ties by
    /// ticker, expiration, then strike.
    #[cfg_attr(feature = "openapi", param(value_type = Option<String>, pattern = "^(cagr|ev_score|POP_est|return_per|IV|OI|Volume|DTE)$"))]
    pub sort: Option<String>,
    /// Contracts to answer (default 200, at most 5,000); `count` is all that pass.
    #[cfg_attr(feature = "openapi", param(value_type = Option<i64>, minimum = 1, maximum = 5000))]
    pub limit: Option<String>,
}

/// The orders a caller may ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sort {
    Cagr,
    EvScore,
    Pop,
    ReturnPer,
    Iv,
    Oi,
    Volume,
    Dte,
}

const SORTS: [(&str, Sort); 8] = [
    ("cagr", Sort::Cagr),
    ("ev_score", Sort::EvScore),
    ("POP_est", Sort::Pop),
    ("return_per", Sort::ReturnPer),
    ("IV", Sort::Iv),
    ("OI", Sort::Oi),
    ("Volume", Sort::Volume),
    ("DTE", Sort::Dte),
];

/// A checked query.
#[derive(Debug, Clone)]
pub struct OptionQuery {
    pub date: Option<NaiveDate>,
    pub ticker: Option<String>,
    pub min_pop: f64,
    pub max_dte: i64,
    pub min_oi: i64,
    pub sort: Sort,
    pub limit: usize,
}

fn present(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

fn number(field: &str, v: &Option<String>, lo: f64, hi: f64) -> Result<Option<f64>> {
    present(v)
        .map(|s| {
            s.parse::<f64>()
                .ok()
                .filter(|x| (lo..=hi).contains(x))
                .ok_or_else(|| {
                    Error::invalid(
                        field,
                        format!("must be a number from {lo} to {hi}, got '{s}'"),
                    )
                })
        })
        .transpose()
}

fn integer(field: &str, v: &Option<String>, lo: i64, hi: i64) -> Result<Option<i64>> {
    present(v)
        .map(|s| {
            s.parse::<i64>()
                .ok()
                .filter(|x| (lo..=hi).contains(x))
                .ok_or_else(|| {
                    Error::invalid(
                        field,
                        format!("must be a whole number from {lo} to {hi}, got '{s}'"),
                    )
                })
        })
        .transpose()
}

impl OptionParams {
    pub fn validate(&self) -> Result<OptionQuery> {
        let date = present(&self.date)
            .map(|s| crate::dates::field("date", s))
            .transpose()?;
        let ticker = match present(&self.ticker) {
            None => None,
            Some(t)
                if (1..=32).contains(&t.len())
                    && t.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "._^-".contains(c)) =>
            {
                Some(t.to_ascii_uppercase())
            }
            Some(t) => {
                return Err(Error::invalid(
                    "ticker",
                    format!("'{t}' is not a ticker (letters, digits and . _ ^ -, 1-32)"),
                ));
            }
        };
        let sort = match present(&self.sort) {
            None => Sort::Cagr,
            Some(s) => SORTS
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(s))
                .map(|(_, k)| *k)
                .ok_or_else(|| {
                    let names: Vec<&str> = SORTS.iter().map(|(n, _)| *n).collect();
                    Error::invalid(
                        "sort",
                        format!("must be one of {}, got '{s}'", names.join(", ")),
                    )
                })?,
        };
        Ok(OptionQuery {
            date,
            ticker,
            min_pop: number("min_pop", &self.min_pop, 0.0, 100.0)?.unwrap_or(0.0),
            max_dte: integer("max_dte", &self.max_dte, MIN_DTE, MAX_DTE)?.unwrap_or(MAX_DTE),
            min_oi: integer("min_oi", &self.min_oi, 0, i64::MAX)?.unwrap_or(0),
            sort,
            limit: integer("limit", &self.limit, 1, MAX_LIMIT as i64)?
                .map_or(DEFAULT_LIMIT, |l| l as usize),
        })
    }
}

/// A short put on the list (2.7). Percent fields are unrounded.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[allow(non_snake_case)]
pub struct OptionItem {
    /// The underlying.
    pub ticker: String,
    /// The underlying's close on the chains' date.
    pub close: f64,
    /// Expiration, YYYY-MM-DD.
    pub expirDate: String,
    /// Calendar days from the chains' date (the last trade date) to expiration.
    pub DTE: i64,
    pub strike: f64,
    /// Break-even at expiration: strike - credit.
    pub be: f64,
    /// Percent: the Black-Scholes probability that the underlying ends above
    /// `be` at expiration (the contract's IV, a 4% rate, DTE / 365 years).
    pub POP_est: f64,
    /// Premium per share, from the last price.
    pub credit: f64,
    /// Cash securing one contract: strike x 100.
    pub margin: f64,
    /// Percent: credit x 100 / margin x 100.
    pub return_per: f64,
    pub ContractSymbol: String,
    /// Percent a year: ev_score x 252 / DTE.
    pub cagr: f64,
    /// Percent of margin: (POP x net credit - (1 - POP) x tail loss) / margin,
    /// net credit = credit x 100 x 0.98, tail loss = (strike - spot x
    /// exp(-1.2 x IV x sqrt(DTE / 365))) x 100 - net credit, at least 0.
    pub ev_score: f64,
    pub Volume: i64,
    /// Open interest.
    pub OI: i64,
    /// Implied volatility (0.25 = 25%).
    pub IV: f64,
    pub Delta: f64,
    /// Per volatility point.
    pub Vega: f64,
}

/// `data` of the option scanner.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct OptionData {
    /// The chains' date, YYYY-MM-DD.
    pub as_of_date: String,
    /// Always `put`.
    pub option_type: &'static str,
    /// Every underlying with a contract that passes, ascending.
    pub tickers: Vec<String>,
    /// Contracts that pass (`option_data` holds the first `limit`).
    pub count: usize,
    pub option_data: Vec<OptionItem>,
}

/// The answer: code 200 with data, or 407 with `data: null` when the date
/// has no chains or nothing passes.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct OptionAnswer {
    pub code: u16,
    pub msg: String,
    pub data: Option<OptionData>,
}

/// One date's listed contracts, in table order, with the orders asked so far.
struct Listing {
    date: NaiveDate,
    items: Vec<OptionItem>,
    /// Index of each item's ticker in `tickers`.
    ticker_of: Vec<u32>,
    tickers: Vec<String>,
    by_ticker: HashMap<String, Vec<u32>>,
    orders: Mutex<HashMap<Sort, Arc<Vec<u32>>>>,
}

fn key(it: &OptionItem, sort: Sort) -> f64 {
    match sort {
        Sort::Cagr => -it.cagr,
        Sort::EvScore => -it.ev_score,
        Sort::Pop => -it.POP_est,
        Sort::ReturnPer => -it.return_per,
        Sort::Iv => -it.IV,
        Sort::Oi => -(it.OI as f64),
        Sort::Volume => -(it.Volume as f64),
        Sort::Dte => it.DTE as f64,
    }
}

fn ordering(a: &OptionItem, b: &OptionItem, sort: Sort) -> std::cmp::Ordering {
    key(a, sort)
        .total_cmp(&key(b, sort))
        .then_with(|| a.ticker.cmp(&b.ticker))
        .then_with(|| a.expirDate.cmp(&b.expirDate))
        .then_with(|| a.strike.total_cmp(&b.strike))
        .then_with(|| a.ContractSymbol.cmp(&b.ContractSymbol))
}

impl Listing {
    fn order(&self, sort: Sort) -> Arc<Vec<u32>> {
        if let Some(o) = self.orders.lock().get(&sort) {
            return o.clone();
        }
        let mut o: Vec<u32> = (0..self.items.len() as u32).collect();
        o.sort_unstable_by(|a, b| {
            ordering(&self.items[*a as usize], &self.items[*b as usize], sort)
        });
        let o = Arc::new(o);
        self.orders.lock().insert(sort, o.clone());
        o
    }
}

/// The latest date of a chain table, kept in `memo` with the table it came from.
fn latest_date(
    memo: &platform::memo::Memo,
    table: &Arc<platform::marketdata::RecordBatch>,
) -> Result<Option<NaiveDate>> {
    const KEY: &str = "option chains' latest date";
    if let Some(d) = memo.get::<_, Option<NaiveDate>>(KEY, table) {
        return Ok(*d);
    }
    let d = columns::dates(table, "as_of")?.into_iter().flatten().max();
    memo.put(
        KEY,
        table,
        Arc::new(d),
        std::mem::size_of::<Option<NaiveDate>>(),
    );
    Ok(d)
}

/// Lists the puts of `date` that pass the listing rules.
fn listing(table: &platform::marketdata::RecordBatch, date: NaiveDate) -> Result<Listing> {
    use platform::marketdata::columns::view;
    let bad = |e: PortError| Error::Port(e);
    let as_of = view::dates(table, "as_of").map_err(bad)?;
    let kind = view::texts(table, "option_type").map_err(bad)?;
    let underlying = view::texts(table, "underlying").map_err(bad)?;
    let spot = view::numbers(table, "underlying_price").map_err(bad)?;
    let expiration = view::dates(table, "expiration").map_err(bad)?;
    let strike = view::numbers(table, "strike").map_err(bad)?;
    let bid = view::numbers(table, "bid").map_err(bad)?;
    let last = view::numbers(table, "last").map_err(bad)?;
    let volume = view::integers(table, "volume").map_err(bad)?;
    let oi = view::integers(table, "open_interest").map_err(bad)?;
    let iv = view::numbers(table, "iv").map_err(bad)?;
    let delta = view::numbers(table, "delta").map_err(bad)?;
    let vega = view::numbers(table, "vega").map_err(bad)?;
    let contract = view::texts(table, "contract_symbol").map_err(bad)?;
    let mut out = Listing {
        date,
        items: Vec::new(),
        ticker_of: Vec::new(),
        tickers: Vec::new(),
        by_ticker: HashMap::new(),
        orders: Mutex::new(HashMap::new()),
    };
    let mut ticker_ids: HashMap<String, u32> = HashMap::new();
    for i in 0..table.num_rows() {
        if as_of.get(i) != Some(date) || kind.get(i) != Some("put") {
            continue;
        }
        let (Some(ticker), Some(s), Some(exp), Some(k), Some(l), Some(v)) = (
            underlying.get(i),
            spot.get(i),
            expiration.get(i),
            strike.get(i),
            last.get(i),
            iv.get(i),
        ) else {
            continue;
        };
        let dte = (exp - date).num_days();
        let open_interest = oi.get(i).unwrap_or(0);
        let listed = s > 0.0
            && k >= MIN_MONEYNESS * s
            && k < MAX_MONEYNESS * s
            && (MIN_DTE..=MAX_DTE).contains(&dte)
            && bid.get(i).is_some_and(|b| b > 0.0)
            && l >= MIN_CREDIT
            && open_interest >= MIN_OPEN_INTEREST
            && v > 0.0
            && v.is_finite();
        if !listed {
            continue;
        }
        let p = short_put(s, k, l, v, dte, RATE);
        let id = *ticker_ids.entry(ticker.to_string()).or_insert_with(|| {
            out.tickers.push(ticker.to_string());
            (out.tickers.len() - 1) as u32
        });
        out.by_ticker
            .entry(ticker.to_string())
            .or_default()
            .push(out.items.len() as u32);
        out.ticker_of.push(id);
        out.items.push(OptionItem {
            ticker: ticker.to_string(),
            close: s,
            expirDate: exp.to_string(),
            DTE: dte,
            strike: k,
            be: p.break_even,
            POP_est: p.pop * 100.0,
            credit: p.credit,
            margin: p.margin,
            return_per: p.return_per,
            ContractSymbol: contract.get(i).unwrap_or_default().to_string(),
            cagr: p.cagr,
            ev_score: p.ev_score,
            Volume: volume.get(i).unwrap_or(0),
            OI: open_interest,
            IV: v,
            Delta: delta.get(i).unwrap_or(f64::NAN),
            Vega: vega.get(i).unwrap_or(f64::NAN),
        });
    }
    Ok(out)
}

async fn listing_of(
    market: &dyn MarketData,
    date: Option<NaiveDate>,
) -> Result<Option<Arc<Listing>>> {
    let table = match market.table(CHAINS).await {
        Ok(t) => t,
        Err(PortError::NotFound(_)) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let date = match date {
        Some(d) => d,
        None => match latest_date(market.memo(), &table)? {
            Some(d) => d,
            None => return Ok(None),
        },
    };
    // Listings are kept in the store's memo with the table they came from
    // (a reloaded table lists again).
    let key = format!("option listing {date}");
    if let Some(l) = market.memo().get(&key, &table) {
        return Ok(Some(l));
    }
    let t = table.clone();
    let l = tokio::task::spawn_blocking(move || listing(&t, date))
        .await
        .map_err(|e| Error::Port(PortError::fault("option listing failed", e)))??;
    let l = Arc::new(l);
    let bytes = l.items.len() * std::mem::size_of::<OptionItem>() + 1024;
    market.memo().put(&key, &table, l.clone(), bytes);
    Ok(Some(l))
}

/// `GET /smart-option-scanner/options`.
pub async fn options(market: &dyn MarketData, q: &OptionQuery) -> Result<OptionAnswer> {
    let none = |msg: String| OptionAnswer {
        code: 407,
        msg,
        data: None,
    };
    let Some(l) = listing_of(market, q.date).await? else {
        return Ok(none(match q.date {
            Some(d) => format!("No option chains on {d}"),
            None => "No option chains in the data".into(),
        }));
    };
    let passes =
        |it: &OptionItem| it.POP_est >= q.min_pop && it.DTE <= q.max_dte && it.OI >= q.min_oi;
    let (mut count, mut page, mut seen) = (0, Vec::new(), vec![false; l.tickers.len()]);
    let mut visit = |k: u32| {
        let it = &l.items[k as usize];
        if !passes(it) {
            return;
        }
        count += 1;
        seen[l.ticker_of[k as usize] as usize] = true;
        if page.len() < q.limit {
            page.push(it.clone());
        }
    };
    // Without a filter every listed put passes: the page is the order's head.
    let unfiltered = q.min_pop <= 0.0 && q.max_dte >= MAX_DTE && q.min_oi <= 0;
    match &q.ticker {
        Some(t) => {
            let mut mine = l.by_ticker.get(t).cloned().unwrap_or_default();
            mine.sort_by(|a, b| ordering(&l.items[*a as usize], &l.items[*b as usize], q.sort));
            mine.into_iter().for_each(&mut visit);
        }
        None if unfiltered => {
            let order = l.order(q.sort);
            page = order
                .iter()
                .take(q.limit)
                .map(|k| l.items[*k as usize].clone())
                .collect();
            count = l.items.len();
            seen = vec![true; l.tickers.len()];
        }
        None => l.order(q.sort).iter().copied().for_each(&mut visit),
    }
    if count == 0 {
        return Ok(none(format!("No put on {} passes the filters", l.date)));
    }
    let mut tickers: Vec<String> = l
        .tickers
        .iter()
        .zip(&seen)
        .filter(|(_, s)| **s)
        .map(|(t, _)| t.clone())
        .collect();
    tickers.sort();
    Ok(OptionAnswer {
        code: 200,
        msg: format!("Short puts on {}", l.date),
        data: Some(OptionData {
            as_of_date: l.date.to_string(),
            option_type: "put",
            tickers,
            count,
            option_data: page,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> Result<OptionQuery> {
        let mut p = OptionParams::default();
        for (k, v) in pairs {
            let v = Some(v.to_string());
            match *k {
                "date" => p.date = v,
                "ticker" => p.ticker = v,
                "min_pop" => p.min_pop = v,
                "max_dte" => p.max_dte = v,
                "min_oi" => p.min_oi = v,
                "sort" => p.sort = v,
                "limit" => p.limit = v,
                _ => unreachable!(),
            }
        }
        p.validate()
    }

    #[test]
    fn parameters_are_checked_naming_the_field() {
        let q = params(&[]).unwrap();
        assert_eq!(
            (q.sort, q.limit, q.max_dte, q.min_pop),
            (Sort::Cagr, 200, 60, 0.0)
        );
        let q = params(&[("ticker", "aapl"), ("sort", "dte"), ("min_pop", "80")]).unwrap();
        assert_eq!(
            (q.ticker.as_deref(), q.sort, q.min_pop),
            (Some("AAPL"), Sort::Dte, 80.0)
        );
        for (field, value) in [
            ("date", "2026-13-01"),
            ("ticker", "A B"),
            ("min_pop", "101"),
            ("min_pop", "x"),
            ("max_dte", "0"),
            ("max_dte", "61"),
            ("min_oi", "-1"),
            ("sort", "luck"),
            ("limit", "5001"),
        ] {
            let e = params(&[(field, value)]).unwrap_err();
            assert!(e.to_string().contains(field), "{field}: {e}");
        }
    }
}
