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
