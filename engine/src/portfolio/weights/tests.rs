use super::*;
use crate::portfolio::sizing::rolling_volatility;
use crate::portfolio::{Costs, TradePrice};

fn common() -> Common {
    Common {
        capital: 1_000.0,
        costs: Costs {
            commission: 0.0,
            slippage: 0.0,
            fractional: true,
            max_leverage: 1.0,
        },
        trade_price: TradePrice::CurrentClose,
        start: 0,
        snapshots: Vec::new(),
    }
}

fn panel(a: &[f64], b: &[f64]) -> Panel {
    Panel {
        open: vec![a.to_vec(), b.to_vec()],
        close: vec![a.to_vec(), b.to_vec()],
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9 * b.abs().max(1.0)
}

fn rules(rebalance: Vec<usize>, select: Select, weighting: Weighting, tolerance: f64) -> Rules {
    Rules {
        rebalance,
        select,
        weighting,
        tolerance,
    }
}

#[test]
fn equal_weights_are_restored_at_each_rebalance_beyond_the_tolerance() {
    let p = panel(&[10.0, 20.0, 20.0, 10.0], &[10.0, 10.0, 10.0, 20.0]);
    let out = simulate(
        &p,
        &rules(vec![0, 2], Select::All, Weighting::Equal, 0.0),
        &common(),
    );
    // Bar 2: worth 1,500, A 1,000 -> 750, B 500 -> 750.
    let want = [1_000.0, 1_500.0, 1_500.0, 37.5 * 10.0 + 75.0 * 20.0];
    for (got, want) in out.equity.iter().zip(want) {
        assert!(close(*got, want), "{got} {want}");
    }
    let units: Vec<(usize, usize, f64)> = out
        .orders
        .iter()
        .map(|o| (o.bar, o.symbol, o.units))
        .collect();
    assert_eq!(
        units,
        [(0, 0, 50.0), (0, 1, 50.0), (2, 0, -12.5), (2, 1, 25.0)]
    );
    assert!(out.trips.iter().all(|t| t.reason == ExitReason::Open));
    // Weights 2/3 and 1/3 are within 0.2 of a half: no trade.
    let out = simulate(
        &p,
        &rules(vec![0, 2], Select::All, Weighting::Equal, 0.2),
        &common(),
    );
    assert_eq!(out.orders.len(), 2);
    assert!(close(
        *out.equity.last().unwrap(),
        50.0 * 10.0 + 50.0 * 20.0
    ));
}

#[test]
fn the_top_momentum_symbol_is_rotated_into() {
    let p = panel(&[10.0, 20.0, 20.0, 10.0], &[10.0, 10.0, 12.0, 20.0]);
    let top = Select::Top {
        k: 1,
        by: Score::Momentum(1),
    };
    let out = simulate(
        &p,
        &rules(vec![1, 2], top, Weighting::Equal, 0.0),
        &common(),
    );
    // Bar 1: A rose 100%: all in A at 20. Bar 2: B rose 20%, A 0%: A sold
    // whole at 20, B bought with it at 12.
    let units: Vec<(usize, usize, f64)> = out
        .orders
        .iter()
        .map(|o| (o.bar, o.symbol, o.units))
        .collect();
    assert_eq!(units[..2], [(1, 0, 50.0), (2, 0, -50.0)]);
    assert!(close(units[2].2, 1_000.0 / 12.0) && units[2].1 == 1);
    assert!(close(*out.equity.last().unwrap(), 1_000.0 / 12.0 * 20.0));
    assert_eq!(out.trips[0].reason, ExitReason::Rebalance);
    // Bottom 1 picks B, then A.
    let bottom = Select::Bottom {
        k: 1,
        by: Score::Momentum(1),
    };
    let out = simulate(
        &p,
        &rules(vec![1, 2], bottom, Weighting::Equal, 0.0),
        &common(),
    );
    let picked: Vec<usize> = out
        .orders
        .iter()
        .filter(|o| o.units > 0.0)
        .map(|o| o.symbol)
        .collect();
    assert_eq!(picked, [1, 0]);
}

#[test]
fn fixed_and_inverse_volatility_weights() {
    let p = panel(
        &[10.0, 11.0, 10.0, 11.0, 10.0],
        &[10.0, 12.0, 10.0, 12.0, 10.0],
    );
    let out = simulate(
        &p,
        &rules(
            vec![0],
            Select::All,
            Weighting::Fixed(vec![0.25, 0.75]),
            0.0,
        ),
        &common(),
    );
    let units: Vec<f64> = out.orders.iter().map(|o| o.units).collect();
    assert_eq!(units, [25.0, 75.0]);
    let out = simulate(
        &p,
        &rules(
            vec![3],
            Select::All,
            Weighting::InverseVolatility { bars: 2 },
            0.0,
        ),
        &common(),
    );
    let (va, vb) = (
        rolling_volatility(&p.close[0], 2)[3],
        rolling_volatility(&p.close[1], 2)[3],
    );
    let wa = (1.0 / va) / (1.0 / va + 1.0 / vb);
    assert!(close(out.orders[0].units * 11.0, wa * 1_000.0));
    assert!(close(out.orders[1].units * 12.0, (1.0 - wa) * 1_000.0));
}

fn with_commission(capital: f64, commission: f64, max_leverage: f64) -> Common {
    let mut c = common();
    c.capital = capital;
    c.costs.commission = commission;
    c.costs.max_leverage = max_leverage;
    c
}

#[test]
fn each_trade_pays_its_own_commission_as_bt_rebalances() {
    let p = panel(&[10.0, 12.0], &[10.0, 8.0]);
    let out = simulate(
        &p,
        &rules(vec![0, 1], Select::All, Weighting::Equal, 0.0),
        &with_commission(2_002.0, 0.001, 1.0),
    );
    // Bar 0: each buy spends 1,001, of which 1 is commission: 100 units at
    // 10 apiece (not 100.1 for the first and what is left for the last).
    let o = &out.orders;
    assert!(
        close(o[0].units, 100.0) && close(o[1].units, 100.0),
        "{o:?}"
    );
    assert!(close(o[0].fee, 1.0) && close(o[1].fee, 1.0));
    assert!(out.cash[0].abs() < 1e-9);
    // Bar 1: worth 1,200 + 800 = 2,000, a target of 1,000 each. The sale
    // of A raises its 200 of excess net of commission (200 / 0.999 sold),
    // the buy of B spends 200, commission included.
    let sold = 200.0 / (12.0 * 0.999);
    assert_eq!((o[2].bar, o[2].symbol, o[3].symbol), (1, 0, 1));
    assert!(close(-o[2].units, sold) && close(o[2].fee, 200.0 / 0.999 * 0.001));
    assert!(close(o[3].units, 200.0 / 1.001 / 8.0));
    assert!(close(o[3].fee, 200.0 - 200.0 / 1.001));
    assert!(out.cash[1].abs() < 1e-9, "{}", out.cash[1]);
    let a = (100.0 - sold) * 12.0;
    let b = 800.0 + 200.0 / 1.001;
    assert!(close(out.equity[1], a + b) && close(a + b, 2_000.0 - 0.2 / 0.999 - 0.2 / 1.001));
}

#[test]
fn the_commission_of_a_whole_sale_is_taken_from_every_buy_in_proportion() {
    // Momentum over 2 bars; bar 2 picks A and B, bar 3 B and C (A, 0.8,
    // is the lowest of 3.0, 1.0 and 0.8).
    let p = Panel {
        open: vec![
            vec![10.0, 10.0, 20.0, 18.0],
            vec![10.0, 5.0, 25.0, 20.0],
            vec![10.0, 5.0, 10.0, 10.0],
        ],
        close: vec![
            vec![10.0, 10.0, 20.0, 18.0],
            vec![10.0, 5.0, 25.0, 20.0],
            vec![10.0, 5.0, 10.0, 10.0],
        ],
    };
    let top = Select::Top {
        k: 2,
        by: Score::Momentum(2),
    };
    let r = rules(vec![2, 3], top, Weighting::Equal, 0.0);
    let out = simulate(&p, &r, &with_commission(2_002.0, 0.001, 1.0));
    let o = &out.orders;
    // Bar 2: 50 A at 20 and 40 B at 25, each 1,000 and 1 of commission.
    assert!(close(o[0].units, 50.0) && close(o[1].units, 40.0), "{o:?}");
    // Bar 3: worth 50 x 18 + 40 x 20 = 1,700, a target of 850 each. A sold
    // whole raises 900 less 0.9; the buys ask for 50 (B) and 850 (C), 0.9
    // more than the cash: each gets 899.1 / 900 of its amount, so B bears
    // 0.05 of that commission and C 0.85 (not C all of it).
    assert_eq!(
        o[2..].iter().map(|o| (o.bar, o.symbol)).collect::<Vec<_>>(),
        [(3, 0), (3, 1), (3, 2)]
    );
    assert!(close(o[2].units, -50.0) && close(o[2].fee, 0.9));
    let share = 899.1 / 900.0;
    assert!(close(o[3].units, 50.0 * share / 1.001 / 20.0), "{:?}", o[3]);
    assert!(
        close(o[4].units, 850.0 * share / 1.001 / 10.0),
        "{:?}",
        o[4]
    );
    assert!(close(o[3].units * 20.0 + o[3].fee, 49.95));
    assert!(close(o[4].units * 10.0 + o[4].fee, 849.15));
    assert!(out.cash[3].abs() < 1e-9, "{}", out.cash[3]);
    assert_eq!(out.trips[0].reason, ExitReason::Rebalance);
    // With room to borrow, the buys spend their whole amounts and the cash
    // is short by the sale's commission, as bt's is.
    let out = simulate(&p, &r, &with_commission(2_002.0, 0.001, 2.0));
    let o = &out.orders;
    assert!(close(o[3].units * 20.0 + o[3].fee, 50.0));
    assert!(close(o[4].units * 10.0 + o[4].fee, 850.0));
    assert!(close(out.cash[3], -0.9), "{}", out.cash[3]);
}
