use super::*;
use crate::error::from_json;

fn check(v: Value) -> std::result::Result<Map<String, Value>, String> {
    let p: PortfolioParams = from_json(v).map_err(|e| e.to_string())?;
    p.check().map_err(|e| e.to_string())
}

/// A rule that takes no parameter (`equal`, `all`) refuses a key beside
/// its `method`, as the rules with parameters refuse a stray one: a
/// `weights` under `equal` is not silently fixed weights.
#[test]
fn a_key_beside_a_parameterless_method_is_named() {
    let weights = |select: Value, weighting: Value| {
        check(
            json!({"universe": ["A", "B"], "weights": {"schedule": {"every": "month"},
            "select": select, "weighting": weighting}}),
        )
    };
    let e = weights(
        json!({"method": "all", "kk": 1}),
        json!({"method": "equal"}),
    )
    .unwrap_err();
    assert_eq!(e, "parameter 'weights.select.kk': unknown field");
    let e = weights(
        json!({"method": "all"}),
        json!({"method": "equal", "weights": {"A": 1}}),
    )
    .unwrap_err();
    assert!(
        e.starts_with("parameter 'weights.weighting.weights': unknown field"),
        "{e}"
    );
    weights(json!({"method": "all"}), json!({"method": "equal"})).unwrap();
    let entry = json!({"rule_type": "SingleCondition", "condition": {"signal": {"name": "RSI"}, "rule": {"type_name": "<", "comparison_value": 30}}});
    let e = check(
        json!({"universe": ["A"], "signals": {"entry": entry, "exit": entry,
        "sizing": {"method": "equal", "fraction": 0.5}}}),
    )
    .unwrap_err();
    assert!(
        e.starts_with("parameter 'signals.sizing.fraction': unknown field"),
        "{e}"
    );
}

/// JSON has one number type: `2.0` is the count 2, `2.5` is no count.
#[test]
fn counts_may_be_written_as_whole_floats() {
    let with_k = |k: Value, bars: Value| {
        check(
            json!({"universe": ["A", "B"], "weights": {"schedule": {"every": "month"},
            "select": {"method": "top", "k": k, "by": {"momentum": bars}}}}),
        )
    };
    with_k(json!(2.0), json!(20.0)).unwrap();
    with_k(json!(2), json!(20)).unwrap();
    let e = with_k(json!(2.5), json!(20)).unwrap_err();
    assert!(
        e.contains("weights.select") && e.contains("whole number"),
        "{e}"
    );
    let e = with_k(json!(2), json!(20.5)).unwrap_err();
    assert!(e.contains("whole number"), "{e}");
    let entry = json!({"rule_type": "SingleCondition", "condition": {"signal": {"name": "RSI"}, "rule": {"type_name": "<", "comparison_value": 30}}});
    let ranked = |period: Value| {
        check(
            json!({"universe": ["A", "B"], "signals": {"entry": entry, "exit": entry, "max_positions": 2.0,
            "rank_by": {"by": {"technical": {"name": "RSI", "period": period}}}}}),
        )
    };
    ranked(json!(14.0)).unwrap();
    ranked(json!(null)).unwrap();
    assert!(ranked(json!(14.5)).unwrap_err().contains("whole number"));
}

#[test]
fn mistakes_name_their_field() {
    let entry = json!({"rule_type": "SingleCondition", "condition": {"signal": {"name": "RSI"}, "rule": {"type_name": "<", "comparison_value": 30}}});
    let exit = json!({"rule_type": "SingleCondition", "condition": {"signal": {"name": "RSI"}, "rule": {"type_name": ">", "comparison_value": 70}}});
    let ok = json!({"universe": ["A", "B"], "signals": {"entry": entry, "exit": exit, "max_positions": 2}});
    let d = check(ok.clone()).unwrap();
    assert_eq!(d["signals.sizing"], json!({"method": "equal"}));
    let with = |path: &[&str], v: Value| {
        let mut b = ok.clone();
        let mut at = &mut b;
        for p in &path[..path.len() - 1] {
            at = &mut at[*p];
        }
        at[path[path.len() - 1]] = v;
        check(b).unwrap_err()
    };
    assert!(with(&["universe"], json!(["A", "A"])).contains("'universe[1]'"));
    let e = with(&["end_date"], json!("0081-01-05"));
    assert!(
        e.contains("'end_date': must be a date between 1800-01-01 and 2199-12-31"),
        "{e}"
    );
    assert!(with(&["universe"], json!(vec!["X"; 0])).contains("'universe'"));
    let many: Vec<String> = (0..501).map(|i| format!("S{i}")).collect();
    assert!(with(&["universe"], json!(many)).contains("'universe': has 501 symbols"));
    assert!(
        with(&["signals", "max_position"], json!(3))
            .contains("'signals.max_position': unknown field")
    );
    assert!(
        with(
            &["signals", "sizing"],
            json!({"method": "fixed_fraction", "fraction": 1.5})
        )
        .contains("'signals.sizing.fraction'")
    );
    assert!(with(&["signals", "sizing"], json!({"method": "kelley"})).contains("kelly"));
    assert!(
        with(
            &["signals", "rank_by"],
            json!({"by": {"technical": {"name": "Nope"}}})
        )
        .contains("'signals.rank_by.by.technical.name'")
    );
    assert!(with(&["weights"], json!({"schedule": {"every": "month"}})).contains("one of the two"));
    let weights =
        |w: Value| check(json!({"universe": ["A", "B"], "weights": w})).map_err(|e| e.to_string());
    let fixed = |a: f64, b: f64| {
        weights(
            json!({"schedule": {"every": "month"}, "weighting": {"method": "fixed", "weights": {"A": a, "B": b}}}),
        )
    };
    assert!(fixed(0.5, 0.5).is_ok());
    assert!(
        fixed(0.5, 0.4)
            .unwrap_err()
            .contains("'weights.weighting.weights': sum to 0.9")
    );
    assert!(
        weights(json!({"schedule": {"every": "fortnight"}}))
            .unwrap_err()
            .contains("'weights.schedule.every'")
    );
    assert!(weights(json!({"schedule": {"every": "month"}, "select": {"method": "top", "k": 3, "by": {"momentum": 20}}})).unwrap_err().contains("'weights.select.k'"));
    assert!(weights(json!({"schedule": {"every": "month"}, "weighting": {"method": "fixed", "weights": {"C": 1.0}}})).unwrap_err().contains("'weights.weighting.weights.C'"));
}
