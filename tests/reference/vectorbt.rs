//! A grid of SMA crossovers through the batch engine path (one workspace of
//! shared averages and crossings, the simulation on firings) gives
//! vectorbt's results on every pair: trade count and total return.

use engine::backtest::simulate;
use engine::indicators::sma;
use engine::rules::Op;
use engine::workspace::Workspace;
use serde_json::json;
use tests::reference::crossover_rule;

#[test]
fn sma_crossover_grid_matches_vectorbt_on_every_pair() {
    let fast: Vec<usize> = (2..=41).collect();
    let slow: Vec<usize> = (1..=40).map(|k| 5 * k).collect();
    let start = 300;
    let sample: Vec<[usize; 2]> = fast
        .iter()
        .flat_map(|f| slow.iter().map(move |s| [*f, *s]))
        .collect();
    let r = tests::reference::run(
        "vectorbt_sma_grid.py",
        &json!({"goog": true, "fast": fast, "slow": slow, "start": start, "sample": sample, "exact": true}),
    );
    assert_eq!(r["combos"], 1600);
    let bars = tests::reference::bars_from(&r["bars"]);
    let settings = tests::reference::close_fills(start);
    let mut ws = Workspace::new(&bars);
    let (mut traded, mut theirs_wrong) = (0, 0);
    for t in r["results"].as_array().unwrap() {
        let (f, s) = (
            t["fast"].as_u64().unwrap() as usize,
            t["slow"].as_u64().unwrap() as usize,
        );
        let entry = ws.block(&crossover_rule(f, s, Op::CrossAbove));
        let exit = ws.block(&crossover_rule(f, s, Op::CrossBelow));
        let m = simulate(&bars, &entry, &exit, &settings).metrics;
        traded += usize::from(m.total_trades > 0);
        let wrong = t["vbt_sign_errors"].as_array().unwrap();
        if !wrong.is_empty() {
            // vectorbt's averages order fast and slow differently from the
            // correctly rounded exact means on these bars; ours agree with
            // those means.
            let (a, b) = (sma(&bars.close, f), sma(&bars.close, s));
            for w in wrong {
                let (i, exact) = (w[0].as_u64().unwrap() as usize, w[1].as_i64().unwrap());
                let ours = a[i].partial_cmp(&b[i]).unwrap() as i64;
                assert_eq!(ours, exact, "SMA {f}/{s} bar {i}: {} - {}", a[i], b[i]);
            }
            theirs_wrong += 1;
            continue;
        }
        assert_eq!(
            m.total_trades as u64,
            t["trades"].as_u64().unwrap(),
            "SMA {f}/{s}: trades"
        );
        let want = t["total_return"].as_f64().unwrap();
        assert!(
            (m.total_return - want).abs() <= 1e-9 * want.abs().max(1.0),
            "SMA {f}/{s}: total return {} vs {want}",
            m.total_return
        );
    }
    assert!(traded > 1500, "most pairs trade: {traded}");
    eprintln!(
        "{theirs_wrong} of 1,600 pairs differ where vectorbt's rolling mean misorders the averages"
    );
    assert!(
        theirs_wrong < 16,
        "vectorbt's rounding decides few pairs: {theirs_wrong}"
    );
}
