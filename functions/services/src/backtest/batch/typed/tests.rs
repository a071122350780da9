use super::*;
use serde_json::json;

/// SMA crossings on the entry, a Scoring exit of two conditions.
fn base() -> Value {
    let ma = |op: &str| {
        json!({"signal": {"name": "Simple Moving Average", "params": {"period": "10"}},
               "rule": {"comparison_type": "MA", "type_name": op, "period": "50"}})
    };
    json!({"symbol": "SPX", "start_date": "2006-11-27", "risk_control": "//",
    "entry": {"rule_type": "SingleCondition", "condition": ma("CrossAbove")},
    "exit": {"rule_type": "Scoring", "score_threshold": 1, "condition": [
        ma("CrossBelow"),
        {"signal": {"name": "RSI", "params": {"period": 14}}, "rule": {"type_name": ">", "comparison_value": "70"}}
    ]}})
}

fn parsed(v: &Value) -> StrategyParams {
    params::parse(v).unwrap().params
}

/// Every typed leaf, given values of every kind, reads each one as the
/// parser reads the base with it written in: the same strategy where the
/// typed reading takes it, and it takes every value the parser reads as
/// given (so the JSON way is left only for values it would refuse or read
/// as absent).
#[test]
fn typed_leaves_read_every_value_as_the_parser_reads_it_written_in() {
    let base = base();
    let was = parsed(&base);
    let counts = [
        json!("10"),
        json!(10),
        json!("007"),
        json!(1),
        json!("0"),
        json!(0),
        json!(""),
        json!(" "),
        json!(null),
        json!("abc"),
        json!(-3),
        json!(2.5),
        json!("7.0"),
        json!(7.0),
        json!(1e12),
        json!({"a": 1}),
        json!([1]),
        json!(true),
    ];
    let values = [
        json!("30"),
        json!(30),
        json!(-2.5),
        json!("1.5e1"),
        json!(""),
        json!("  "),
        json!("x"),
        json!(null),
        json!(false),
    ];
    let risks = [
        json!("//"),
        json!("-5/10/21"),
        json!("//0"),
        json!("x"),
        json!("5"),
        json!(5),
        json!(null),
        json!(""),
    ];
    let cases: Vec<(&str, &[Value])> = vec![
        ("entry.condition.signal.params.period", &counts),
        ("entry.condition.rule.period", &counts),
        ("exit.condition.0.signal.params.period", &counts),
        ("exit.condition.0.rule.period", &counts),
        ("exit.condition.1.signal.params.period", &counts),
        ("exit.condition.1.rule.comparison_value", &values),
        ("entry.condition.rule.comparison_value", &values),
        ("risk_control", &risks),
    ];
    let (mut typed, mut refused) = (0, 0);
    for (path, values) in cases {
        let t = target(&base, &was, path).unwrap_or_else(|| panic!("{path} is a typed leaf"));
        for v in values {
            let varied: Map<String, Value> = [(path.to_string(), v.clone())].into_iter().collect();
            let slow = params::parse(&super::super::apply(&base, &varied).unwrap());
            let mut fast = was.clone();
            match set(&mut fast, t, v) {
                Some(()) => {
                    let slow = slow.unwrap_or_else(|e| panic!("{path} = {v}: typed, but {e}"));
                    assert_eq!(fast, slow.params, "{path} = {v}");
                    typed += 1;
                }
                None => {
                    // Refused, or read as absent (a null, an empty rule
                    // period): the JSON way reads those.
                    if slow.is_ok() {
                        let absent = v.is_null() || v.as_str().is_some_and(|s| s.trim().is_empty());
                        assert!(
                            absent,
                            "{path} = {v}: the parser reads it, the typed way does not"
                        );
                    }
                    refused += 1;
                }
            }
        }
    }
    assert!(
        typed >= 30 && refused >= 30,
        "{typed} typed, {refused} refused"
    );
}

/// Paths that are not typed leaves, or that would make an object the base
/// does not have, or name no condition the parser read, go the JSON way.
#[test]
fn other_paths_go_the_json_way() {
    let base = base();
    let was = parsed(&base);
    for path in [
        "commission",
        "symbol",
        "entry.condition.signal.name",
        "entry.condition.rule.type_name",
        "entry.condition.rule.qualifier.calculation_period",
        "entry.condition.0.rule.period",
        "exit.condition.2.rule.period",
        "exit.condition.x.rule.period",
        "exit.conditions.0.rule.period",
        "entry.condition.signal.period",
        "exit.condition.1.rule.period.value",
        "period",
    ] {
        assert_eq!(target(&base, &was, path), None, "{path}");
    }
    // A signal sent without params: the JSON way makes the object.
    let mut bare = base.clone();
    bare["exit"]["condition"][1]["signal"]
        .as_object_mut()
        .unwrap()
        .remove("params");
    let bare_params = parsed(&bare);
    assert_eq!(
        target(&bare, &bare_params, "exit.condition.1.signal.params.period"),
        None
    );
    assert_eq!(
        target(&base, &was, "exit.condition.1.signal.params.period"),
        Some(Target::Condition {
            exit: true,
            index: 1,
            leaf: Leaf::SignalPeriod
        })
    );
}
