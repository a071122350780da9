//! The smart stock scanner (analytics 2.5, 4.4): its signals from the
//! engine's registry, the nightly job that writes each date's items, and
//! the queries that read them back (never scanning per request).

pub mod answers;
pub mod backtest;
pub mod follow;
pub mod history;
pub mod nightly;
pub mod requests;

use crate::error::{Error, Result};
use answers::{
    ScannerBacktestInfo, ScannerDayAnswer, ScannerDayData, ScannerItem, ScannerSingleAnswer,
    ScannerSingleData, SignalInfo, SignalList,
};
use chrono::NaiveDate;
use engine::scanner::{Category, SIGNALS};
use platform::marketdata::MarketData;
use platform::scanner::{ScanDay, ScanRow, ScanTrade, ScannerStore};
use requests::{Day, Single};
use std::collections::BTreeMap;

/// Scan dates one `single` request may read, and with trade lists.
pub const MAX_SCAN_DATES: usize = 64;
pub const MAX_SCAN_DATES_WITH_BACKTEST: usize = 21;

/// `GET /smart-stock-scanner/get-predefined-signals`: every signal, flat and
/// by category (categories in the spec's order).
pub fn predefined_signals() -> SignalList {
    let info = |s: &engine::scanner::Signal| SignalInfo {
        name: s.name,
        category: s.category.name(),
        description: s.description,
        horizon: s.horizon().name(),
        time_in_market: s.horizon().hold(),
    };
    let mut categories = BTreeMap::new();
    for c in Category::ALL {
        categories.insert(
            c.name(),
            SIGNALS
                .iter()
                .filter(|s| s.category == c)
                .map(info)
                .collect(),
        );
    }
    SignalList {
        signals: SIGNALS.iter().map(info).collect(),
        categories,
    }
}

fn percent(x: f64) -> String {
    format!("{x:.2}%")
}

/// A stored row as the API writes it.
fn item(date: NaiveDate, row: &ScanRow, trades: Option<Vec<ScanTrade>>) -> ScannerItem {
    let f = &row.figures;
    let day = date.to_string();
    let backtest_info = trades.map(|trades| ScannerBacktestInfo {
        date: day.clone(),
        Direction: row.direction.as_str(),
        Symbol: row.symbol.clone(),
        signal: row.signal.clone(),
        Market: row.market.clone(),
        AnnualReturn: f.annual_return,
        TradeNumber: f.trade_number,
        AvgWin: f.avg_win,
        AvgLoss: f.avg_loss,
        WinRate: f.win_rate,
        MedianReturn: f.median_return,
        AvgReturn: f.avg_return,
        Z_Score: f.z_score,
        StdDev: f.std_dev,
        MaxRisk: f.max_risk,
        TimeInMarket: f.avg_hold,
        Close: row.close,
        EachReturn: trades.iter().map(|t| t.ret).collect(),
        EntryTradeDate: trades.iter().map(|t| t.entry_date.to_string()).collect(),
        ExitTradeDate: trades.iter().map(|t| t.exit_date.to_string()).collect(),
        EntryTradePrice: trades.iter().map(|t| t.entry_price).collect(),
        ExitTradePrice: trades.iter().map(|t| t.exit_price).collect(),
        ExitReason: trades.iter().map(|t| t.reason.as_str()).collect(),
    });
    ScannerItem {
        Date: day,
        Symbol: row.symbol.clone(),
        Close: row.close,
        Direction: row.direction.as_str(),
        signal: row.signal.clone(),
        Category: row.horizon.name(),
        WinRate: percent(f.win_rate),
        ProfitTarget: percent(row.profit_target),
        StopLoss: percent(row.stop_loss),
        TimeInMarket: row.time_in_market.to_string(),
        AvgWin: f.avg_win,
        AvgLoss: f.avg_loss,
        AvgReturn: f.avg_return,
        MedianReturn: f.median_return,
        AnnualReturn: f.annual_return,
        StdDev: f.std_dev,
        MaxRisk: f.max_risk,
        SharpeRatio: f.sharpe_ratio,
        TradeNumber: f.trade_number,
        Z_Score: f.z_score,
        ExpectedReturn: f.expected_return,
        TrendScore: row.trend_score,
        RelTrendScore: row.rel_trend_score,
        Optix: row.optix,
        backtest_info,
    }
}

/// The indices of `symbol`'s rows (rows are ordered by symbol).
fn rows_of(rows: &[ScanRow], symbol: &str) -> std::ops::Range<usize> {
    let from = rows.partition_point(|r| r.symbol.as_str() < symbol);
    let to = rows.partition_point(|r| r.symbol.as_str() <= symbol);
    from..to
}

/// The items of rows `picked` of a day, with their trade lists when asked.
async fn items_of(
    store: &dyn ScannerStore,
    day: &ScanDay,
    picked: &[usize],
    include_backtest: bool,
) -> Result<Vec<ScannerItem>> {
    let mut trades = if include_backtest {
        store
            .trades(day, picked)
            .await?
            .into_iter()
            .map(Some)
            .collect()
    } else {
        vec![None; picked.len()]
    };
    Ok(picked
        .iter()
        .zip(trades.iter_mut())
        .map(|(r, t)| item(day.date, &day.rows[*r], t.take()))
        .collect())
}

/// The ticker as stored; unknown to the market data (whatever its
/// spelling) is not found.
async fn known_ticker(market: &dyn MarketData, raw: &str) -> Result<String> {
    let t = super::ticker(raw);
    if market.symbols().await?.iter().any(|s| s.symbol == t) {
        Ok(t)
    } else {
        Err(Error::unknown_symbol("ticker", &t))
    }
}

fn nothing<T>(msg: String) -> (u16, String, Option<T>) {
    (407, msg, None)
}

/// `GET /smart-stock-scanner/single/{ticker}`: the ticker's items on the
/// scan dates of the range, by date, then signal.
pub async fn single(
    market: &dyn MarketData,
    store: &dyn ScannerStore,
    ticker: &str,
    q: &Single,
) -> Result<ScannerSingleAnswer> {
    let ticker = known_ticker(market, ticker).await?;
    let dates = store.dates().await?;
    let (code, msg, data) = match dates.last() {
        None => nothing("No scan has run yet".into()),
        Some(latest) => {
            let (start, end) = (q.start.unwrap_or(*latest), q.end.unwrap_or(*latest));
            let in_range: Vec<NaiveDate> = dates
                .iter()
                .copied()
                .filter(|d| (start..=end).contains(d))
                .collect();
            let most = if q.include_backtest {
                MAX_SCAN_DATES_WITH_BACKTEST
            } else {
                MAX_SCAN_DATES
            };
            if in_range.len() > most {
                let with = if q.include_backtest {
                    " with include_backtest"
                } else {
                    ""
                };
                return Err(Error::invalid(
                    "start_date",
                    format!(
                        "the range holds {} scan dates; at most {most} per request{with}",
                        in_range.len()
                    ),
                ));
            }
            let mut items = Vec::new();
            for d in &in_range {
                if let Some(day) = store.day(*d).await? {
                    let picked: Vec<usize> = rows_of(&day.rows, &ticker).collect();
                    items.extend(items_of(store, &day, &picked, q.include_backtest).await?);
                }
            }
            if items.is_empty() {
                nothing(format!(
                    "No signal fired for {ticker} on the scan dates from {start} to {end}"
                ))
            } else {
                let as_of = in_range.last().expect("items come from a date");
                (
                    200,
                    format!("{} signals for {ticker}", items.len()),
                    Some(ScannerSingleData {
                        as_of_date: as_of.to_string(),
                        ticker,
                        scanner_data: items,
                    }),
                )
            }
        }
    };
    Ok(ScannerSingleAnswer { code, msg, data })
}

/// `GET /smart-stock-scanner/latest-day-all`: a date's items of one horizon,
/// by symbol, then signal.
pub async fn latest_day_all(
    market: &dyn MarketData,
    store: &dyn ScannerStore,
    q: &Day,
) -> Result<ScannerDayAnswer> {
    let ticker = match &q.ticker {
        Some(t) => Some(known_ticker(market, t).await?),
        None => None,
    };
    let dates = store.dates().await?;
    let Some(latest) = dates.last() else {
        return Ok(ScannerDayAnswer {
            code: 407,
            msg: "No scan has run yet".into(),
            data: None,
        });
    };
    let date = q.date.unwrap_or(*latest);
    let Some(day) = store.day(date).await? else {
        return Ok(ScannerDayAnswer {
            code: 407,
            msg: format!(
                "No scan on {date}: scans cover {} dates from {} to {latest}",
                dates.len(),
                dates[0]
            ),
            data: None,
        });
    };
    let rows = match &ticker {
        Some(t) => rows_of(&day.rows, t),
        None => 0..day.rows.len(),
    };
    let matching: Vec<usize> = rows.filter(|r| day.rows[*r].horizon == q.horizon).collect();
    if matching.is_empty() {
        let whom = ticker.map_or(String::new(), |t| format!(" for {t}"));
        return Ok(ScannerDayAnswer {
            code: 407,
            msg: format!("No {} signal fired{whom} on {date}", q.horizon.name()),
            data: None,
        });
    }
    let mut tickers: Vec<String> = matching
        .iter()
        .map(|r| day.rows[*r].symbol.clone())
        .collect();
    tickers.dedup();
    let page = &matching[q.offset.min(matching.len())..]
        [..q.limit.min(matching.len().saturating_sub(q.offset))];
    let items = items_of(store, &day, page, q.include_backtest).await?;
    Ok(ScannerDayAnswer {
        code: 200,
        msg: format!(
            "{} {} signals on {date}; items {} to {}",
            matching.len(),
            q.horizon.name(),
            q.offset.min(matching.len()),
            q.offset.min(matching.len()) + items.len()
        ),
        data: Some(ScannerDayData {
            as_of_date: date.to_string(),
            tickers,
            count: matching.len(),
            scanner_data: items,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_signal_listed_flat_and_by_category() {
        let list = predefined_signals();
        assert_eq!(list.signals.len(), 37);
        assert_eq!(list.categories.len(), 6);
        assert_eq!(list.categories["Optix Signal"].len(), 7);
        assert_eq!(list.categories.values().map(Vec::len).sum::<usize>(), 37);
        let hammer = list.signals.iter().find(|s| s.name == "Hammer").unwrap();
        assert_eq!(
            (hammer.category, hammer.horizon, hammer.time_in_market),
            ("Candlestick Pattern", "SwingAI", 5)
        );
    }
}
