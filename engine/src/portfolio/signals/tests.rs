use super::*;
use crate::portfolio::sizing::rolling_volatility;
use crate::portfolio::{Costs, TradePrice};

fn costs(commission: f64) -> Costs {
    Costs {
        commission,
        slippage: 0.0,
        fractional: true,
        max_leverage: 1.0,
    }
}

fn common(tp: TradePrice, commission: f64) -> Common {
    Common {
        capital: 1_000.0,
        costs: costs(commission),
        trade_price: tp,
        start: 0,
        snapshots: vec![2],
    }
}

fn fired(n: usize, on: &[usize]) -> Fired {
    Fired::from_bools(&(0..n).map(|i| on.contains(&i)).collect::<Vec<_>>())
}

fn rules(max_positions: usize, sizing: Sizing, rank: Option<Rank>) -> Rules {
    Rules {
        max_positions,
        sizing,
        rank,
        risk: RiskControl::default(),
        bars_per_year: 252.0,
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9 * b.abs().max(1.0)
}

#[test]
fn ranked_entries_take_the_free_slots_and_an_exit_frees_one_the_same_bar() {
    let closes = vec![
        vec![10.0, 11.0, 12.0, 12.0],
        vec![20.0, 20.0, 22.0, 24.0],
        vec![5.0, 5.0, 5.0, 6.0],
    ];
    let panel = Panel {
        open: closes.clone(),
        close: closes,
    };
    let entries = [fired(4, &[0, 1]), fired(4, &[0]), fired(4, &[0])];
    let exits = [fired(4, &[]), fired(4, &[1]), fired(4, &[])];
    let rank = Rank {
        by: RankBy::Values(vec![vec![1.0; 4], vec![3.0; 4], vec![2.0; 4]]),
        descending: true,
    };
    let out = simulate(
        &panel,
        &entries,
        &exits,
        &rules(2, Sizing::Equal, Some(rank)),
        &common(TradePrice::CurrentClose, 0.0),
    );
    // Bar 0: B and C outrank A; 500 each. Bar 1: B exits at 20, A takes its
    // slot with half of the 1,000 the account is worth.
    let a = 500.0 / 11.0;
    let want = [1_000.0, 1_000.0, a * 12.0 + 500.0, a * 12.0 + 600.0];
    for (got, want) in out.equity.iter().zip(want) {
        assert!(close(*got, want), "{got} {want}");
    }
    let symbols: Vec<(usize, f64)> = out.orders.iter().map(|o| (o.symbol, o.units)).collect();
    assert_eq!(symbols.len(), 4);
    assert_eq!(
        (symbols[0], symbols[1], symbols[2].0),
        ((1, 25.0), (2, 100.0), 1)
    );
    assert!(close(symbols[3].1, a) && symbols[3].0 == 0);
    assert_eq!(out.crowded_out, 1);
    assert_eq!(out.trips.len(), 3);
    assert_eq!(out.trips[0].reason, ExitReason::Signal);
    assert_eq!(out.trips[2].reason, ExitReason::Open);
    // B held from bar 0 to its exit on 1; C (from 0) and A (from 1) to the last bar, 3.
    let held: Vec<usize> = out.trips.iter().map(|t| t.bars_held).collect();
    assert_eq!(held, [1, 3, 2]);
    // Profits add up to the account's gain.
    let gain: f64 = out.profit.iter().sum();
    assert!(close(gain, want[3] - 1_000.0));
    // Weights at bar 2's close.
    let w = &out.snapshots[0];
    assert_eq!(w.len(), 2);
    assert!(close(w[0].1, a * 12.0 / want[2]) && close(w[1].1, 500.0 / want[2]));
}

#[test]
fn next_open_fills_a_fraction_of_the_cash_and_a_symbol_waits_a_bar_after_its_exit() {
    let nan = f64::NAN;
    let panel = Panel {
        open: vec![
            vec![10.0, 10.0, 11.0, 12.0, 13.0],
            vec![20.0, nan, 21.0, 22.0, 23.0],
        ],
        close: vec![
            vec![10.0, 11.0, 12.0, 13.0, 14.0],
            vec![20.0, nan, 21.0, 22.0, 23.0],
        ],
    };
    let entries = [fired(5, &[0, 1, 2]), fired(5, &[0])];
    let exits = [fired(5, &[1]), fired(5, &[])];
    let out = simulate(
        &panel,
        &entries,
        &exits,
        &rules(5, Sizing::FixedFraction(0.5), None),
        &common(TradePrice::NextOpen, 0.01),
    );
    // Bar 1: A at the open of 10 with half the cash, fees inside it; B has
    // no open that day and is passed over.
    let u1 = 500.0 / 1.01 / 10.0;
    // Bar 2: A's exit (signal bar 1) at the open of 11; its entry of bar 1
    // is ignored; bar 3 enters again (signal bar 2) with half the cash.
    let cash2 = 500.0 + u1 * 11.0 * 0.99;
    let u3 = cash2 / 2.0 / 1.01 / 12.0;
    let want = [
        1_000.0,
        500.0 + u1 * 11.0,
        cash2,
        cash2 / 2.0 + u3 * 13.0,
        cash2 / 2.0 + u3 * 14.0,
    ];
    for (got, want) in out.equity.iter().zip(want) {
        assert!(close(*got, want), "{got} {want}");
    }
    assert_eq!(
        out.orders.iter().map(|o| o.bar).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert!(out.orders.iter().all(|o| o.symbol == 0));
    assert!(close(out.orders[0].fee, 500.0 - 500.0 / 1.01));
}

#[test]
fn stop_loss_and_max_holding_close_positions_on_closes() {
    let closes = vec![vec![100.0, 97.0, 94.0, 96.0], vec![50.0, 51.0, 52.0, 53.0]];
    let panel = Panel {
        open: closes.clone(),
        close: closes,
    };
    let entries = [fired(4, &[0]), fired(4, &[0])];
    let exits = [fired(4, &[]), fired(4, &[])];
    let mut r = rules(2, Sizing::Equal, None);
    r.risk = RiskControl {
        stop_loss_pct: Some(5.0),
        take_profit_pct: None,
        max_holding_bars: Some(3),
    };
    let out = simulate(
        &panel,
        &entries,
        &exits,
        &r,
        &common(TradePrice::CurrentClose, 0.0),
    );
    let reasons: Vec<(usize, Option<usize>, ExitReason)> = out
        .trips
        .iter()
        .map(|t| (t.symbol, t.exit_bar, t.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            (0, Some(2), ExitReason::StopLoss),
            (1, Some(3), ExitReason::MaxHolding)
        ]
    );
}

#[test]
fn volatility_and_kelly_sizes() {
    // Two symbols entering together; B moves twice as much as A.
    let a: Vec<f64> = (0..8)
        .map(|i| 100.0 * (1.0 + 0.01 * [0.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0][i]))
        .collect();
    let b: Vec<f64> = (0..8)
        .map(|i| 100.0 * (1.0 + 0.02 * [0.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0][i]))
        .collect();
    let panel = Panel {
        open: vec![a.clone(), b.clone()],
        close: vec![a.clone(), b.clone()],
    };
    let entries = [fired(8, &[4]), fired(8, &[4])];
    let exits = [fired(8, &[]), fired(8, &[])];
    let c = common(TradePrice::CurrentClose, 0.0);
    let vol = |s: &[f64]| rolling_volatility(s, 3)[4];
    let (va, vb) = (vol(&a), vol(&b));
    let value = |out: &Outcome, sym: usize| {
        let o = out.orders.iter().find(|o| o.symbol == sym).unwrap();
        o.units * o.price
    };
    // Inverse volatility: a slot of 500 times the median (the mean of two)
    // over each.
    let out = simulate(
        &panel,
        &entries,
        &exits,
        &rules(2, Sizing::InverseVolatility { bars: 3 }, None),
        &c,
    );
    let typical = (va + vb) / 2.0;
    assert!(close(value(&out, 0), 500.0 * typical / va));
    // Cash runs short for B, which gets what is left.
    assert!(close(value(&out, 1), 1_000.0 - 500.0 * typical / va));
    // Volatility target 10% a year over 2 slots: 5% / (vol x sqrt 252).
    let out = simulate(
        &panel,
        &entries,
        &exits,
        &rules(
            2,
            Sizing::VolatilityTarget {
                bars: 3,
                annual: 0.10,
            },
            None,
        ),
        &c,
    );
    assert!(close(value(&out, 0), 0.05 / (va * 252f64.sqrt()) * 1_000.0));
    assert!(close(value(&out, 1), 0.05 / (vb * 252f64.sqrt()) * 1_000.0));
    // Kelly without enough closed trades: a slot each.
    let out = simulate(
        &panel,
        &entries,
        &exits,
        &rules(
            2,
            Sizing::Kelly {
                cap: 0.25,
                min_trades: 1,
            },
            None,
        ),
        &c,
    );
    assert!(close(value(&out, 0), 500.0) && close(value(&out, 1), 500.0));
}

#[test]
fn kelly_sizes_from_the_symbol_s_own_closed_trades() {
    // A wins 10% twice, then enters a third time sized by Kelly (W = 1, so
    // the cap).
    let c = vec![10.0, 11.0, 10.0, 11.0, 10.0, 10.0];
    let panel = Panel {
        open: vec![c.clone()],
        close: vec![c],
    };
    let entries = [fired(6, &[0, 2, 4])];
    let exits = [fired(6, &[1, 3])];
    let out = simulate(
        &panel,
        &entries,
        &exits,
        &rules(
            4,
            Sizing::Kelly {
                cap: 0.3,
                min_trades: 2,
            },
            None,
        ),
        &common(TradePrice::CurrentClose, 0.0),
    );
    let last = out.orders.last().unwrap();
    assert_eq!(last.bar, 4);
    // Equity 1,000 + 25 (a slot of 250 up 10%) + 25.625 (a slot of 1,025 / 4).
    assert!(close(last.units * last.price, 0.3 * 1_050.625));
}
