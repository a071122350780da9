//! The portfolio's outcome as the 2.6 result: metrics, trade list and
//! per-trade arrays, plus the daily equity and cash.

use super::Item;
use super::answers::{
    ScannerBacktestAnswer, ScannerBacktestData, TradeArrays, TradeListItem, TradeStats,
};
use super::requests::ScannerBacktest;
use chrono::NaiveDate;
use engine::scanner::portfolio;
use engine::scanner::{Direction, SIGNALS};
use engine::stats::TradeReturns;

pub(super) fn answer(
    q: &ScannerBacktest,
    calendar: &[NaiveDate],
    benchmark: &[f64],
    found: &[Item],
    o: &portfolio::Outcome,
) -> ScannerBacktestAnswer {
    let returns: Vec<f64> = o.positions.iter().map(|p| p.ret).collect();
    let r = TradeReturns::of(&returns);
    let last_equity = *o.equity.last().unwrap_or(&q.capital);
    let (mut peak, mut deepest) = (q.capital, 0.0f64);
    for e in &o.equity {
        peak = peak.max(*e);
        deepest = deepest.max(1.0 - e / peak);
    }
    let mut in_market = vec![false; calendar.len()];
    for p in &o.positions {
        let end = p.exit.map_or(calendar.len() - 1, |e| e.0);
        for flag in &mut in_market[p.entry_day..=end] {
            *flag = true;
        }
    }
    let sessions = calendar.len() as f64;
    let mut arrays = TradeArrays::default();
    let mut list = Vec::with_capacity(o.positions.len());
    for p in &o.positions {
        let it = &found[p.candidate];
        let signal = SIGNALS[it.signal].name.to_string();
        let held = p
            .exit
            .map_or(calendar.len() - p.entry_day, |e| e.0 + 1 - p.entry_day);
        arrays.start_date.push(calendar[p.entry_day].to_string());
        arrays.symbol.push(it.symbol.to_string());
        arrays.signal.push(signal.clone());
        arrays.direction.push(it.direction.as_str());
        arrays.time_in_market.push(it.hold);
        arrays.profit_target.push(it.profit_target);
        arrays.stop_loss.push(it.stop_loss);
        arrays.kelly.push(p.fraction);
        arrays.stay_in_market.push(if p.exit.is_some() {
            0
        } else {
            it.hold.saturating_sub(held)
        });
        arrays.shares.push(p.shares);
        arrays.price.push(p.entry_price);
        arrays.close.push(p.last_price);
        arrays.float_profit.push(p.profit);
        arrays
            .order_status
            .push(p.exit.map_or("Open", |e| e.2.as_str()));
        arrays
            .exit_date
            .push(p.exit.map(|e| calendar[e.0].to_string()));
        arrays.action.push(match (p.exit, it.direction) {
            (None, _) => "Hold",
            (Some(_), Direction::Long) => "Sell",
            (Some(_), Direction::Short) => "Buy",
        });
        list.push(TradeListItem {
            Date: calendar[it.day].to_string(),
            Symbol: it.symbol.to_string(),
            Close: it.close,
            Direction: it.direction.as_str(),
            Signal: signal,
            ProfitTarget: it.profit_target,
            StopLoss: it.stop_loss,
            TimeInMarket: it.hold,
            WinRate: it.figures.win_rate,
            Kelly: p.fraction,
            ExpectedReturn: it.figures.expected_return,
            Optix: it.optix,
            TrendScore: it.trend,
            RelTrendScore: it.rel,
        });
    }
    ScannerBacktestAnswer {
        code: 200,
        msg: "Finish Scanner trader!".into(),
        data: Some(ScannerBacktestData {
            stats: TradeStats::new((last_equity / q.capital - 1.0) * 100.0, &r),
            max_risk: deepest * 100.0,
            time_in_market: in_market.iter().filter(|f| **f).count() as f64 / sessions * 100.0,
            std_dev: r.std_dev,
            z_score: r.z_score,
            buy_and_hold: (benchmark[benchmark.len() - 1] / benchmark[0] - 1.0) * 100.0,
            average_position: o.exposure.iter().sum::<f64>() / sessions,
            trade_list: serde_json::to_string(&list).unwrap_or_else(|_| "[]".into()),
            result: arrays,
            dates: calendar.iter().map(|d| d.to_string()).collect(),
            equity: o.equity.clone(),
            cash: o.cash.clone(),
            skipped_trades: o.skipped,
        }),
    }
}
