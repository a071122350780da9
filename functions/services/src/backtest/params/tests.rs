//! Parsing with defaults, spellings and errors by path.

use super::*;

fn minimal() -> Value {
    json!({
        "symbol": "spx",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"}, "rule": {"type_name": ">", "comparison_value": "100"}}},
        "exit": {"rule_type": "RiskControlOnly"},
    })
}

#[test]
fn defaults_are_applied_and_reported() {
    let p = parse(&minimal()).unwrap();
    assert_eq!(p.params.symbol, "SPX");
    assert_eq!(
        (
            p.params.capital,
            p.params.capital_alloc,
            p.params.commission
        ),
        (100000.0, 1.0, 0.0)
    );
    assert_eq!(p.params.trade_price, TradePrice::CurrentClose);
    assert_eq!(
        p.params.risk,
        RiskControl {
            stop_loss_pct: None,
            take_profit_pct: None,
            max_holding_bars: Some(21)
        }
    );
    assert_eq!(p.params.start_date.to_string(), "1800-10-01");
    assert_eq!(p.defaults_applied()["capital_alloc"], json!("1.000000"));
    assert_eq!(p.defaults_applied()["risk_control"], json!("//21"));
    assert_eq!(p.defaults_applied()["adjusted"], json!(true));
    assert_eq!(
        p.defaults_applied().len(),
        18,
        "every 2.1 default but end_date, and the split adjustment"
    );
    assert!(p.params.end_date.is_none());
}

#[test]
fn strings_and_numbers_both_accepted() {
    let mut b = minimal();
    b["capital_alloc"] = json!(0.5);
    b["commission"] = json!("0.001");
    b["slippage"] = json!(0.002);
    b["win_rate"] = json!("0.0000");
    b["trade_price"] = json!("0");
    let p = parse(&b).unwrap();
    assert_eq!(
        (
            p.params.capital_alloc,
            p.params.commission,
            p.params.slippage
        ),
        (0.5, 0.001, 0.002)
    );
    assert_eq!(p.params.trade_price, TradePrice::NextOpen);
    assert!(!p.defaults_applied().contains_key("commission"));
}

#[test]
fn errors_name_the_field() {
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"entry": minimal()["entry"], "exit": {"rule_type": "RiskControlOnly"}}),
            "'symbol': is required",
        ),
        (
            json!({"symbol": "A", "entry": {}, "exit": {}}),
            "'entry.rule_type': is required",
        ),
        (
            json!({"symbol": "A", "exit": {"rule_type": "RiskControlOnly"}}),
            "'entry': is required",
        ),
        (
            json!({"symbol": "A", "entry": {"rule_type": "Scoring", "condition": {"signal": {"name": "x"}, "rule": {"type_name": ">"}}}, "exit": {"rule_type": "RiskControlOnly"}}),
            "'entry.condition': must be an array",
        ),
        (
            json!({"symbol": "A", "entry": {"rule_type": "TimeOrder", "condition": {"steps": []}}, "exit": {"rule_type": "RiskControlOnly"}}),
            "entry.condition.steps",
        ),
        (
            json!({"symbol": "A", "entry": {"rule_type": "Sometimes"}, "exit": {"rule_type": "RiskControlOnly"}}),
            "'entry.rule_type': 'Sometimes'",
        ),
        (
            json!({"symbol": "A", "entry": {"rule_type": "RiskControlOnly"}, "exit": {"rule_type": "RiskControlOnly"}}),
            "exit only",
        ),
    ];
    for (body, want) in cases {
        let e = parse(&body).unwrap_err();
        assert!(e.to_string().contains(want), "{body}: {e}");
    }
    for (field, value, want) in [
        (
            "start_date",
            json!("2020-13-01"),
            "'start_date': must be a date YYYY-MM-DD, got '2020-13-01'",
        ),
        ("trade_price", json!(3), "'trade_price': 3 is not"),
        (
            "capital_alloc",
            json!("1.5"),
            "'capital_alloc': 1.5 must be",
        ),
        (
            "commission",
            json!("abc"),
            "'commission': 'abc' is not a number",
        ),
        ("direction", json!("Sideways"), "'direction': 'sideways'"),
        ("frequency", json!("Yearly"), "frequency"),
        (
            "risk_control",
            json!("-5/10"),
            "'risk_control': '-5/10' must have three segments",
        ),
        ("risk_control", json!("x//"), "stop-loss 'x'"),
        ("risk_control", json!("//2.5"), "max-holding 2.5"),
    ] {
        let mut b = minimal();
        b[field] = value;
        let e = parse(&b).unwrap_err();
        assert!(e.to_string().contains(want), "{field}: {e}");
    }
}

#[test]
fn an_unknown_field_anywhere_is_refused_with_the_field_meant() {
    let mut b = minimal();
    b["comission"] = json!(0.001);
    assert_eq!(
        parse(&b).unwrap_err().to_string(),
        "parameter 'comission': unknown field (did you mean 'commission'?)"
    );
    let mut b = minimal();
    b["entry"]["condition"]["rule"]["perod"] = json!(5);
    assert_eq!(
        parse(&b).unwrap_err().to_string(),
        "parameter 'entry.condition.rule.perod': unknown field (did you mean 'period'?)"
    );
    for (at, key) in [
        ("/entry", "score_threshold"),
        ("/entry/condition", "qualifer"),
        ("/entry/condition/signal", "parms"),
        ("/exit", "delay_bars"),
    ] {
        let mut b = minimal();
        b.pointer_mut(at).unwrap()[key] = json!(1);
        let e = parse(&b).unwrap_err();
        let path = format!("{}.{key}", at[1..].replace('/', "."));
        assert_eq!(e.field, path, "{e}");
        assert!(e.reason.starts_with("unknown field"), "{e}");
    }
    let mut b = minimal();
    b["entry"]["condition"]["signal"]["params"] = json!({"period": 5, "extreme_optimsm": 1});
    assert_eq!(
        parse(&b).unwrap_err().to_string(),
        "parameter 'entry.condition.signal.params.extreme_optimsm': unknown field (did you mean 'extreme_optimism'?)"
    );
    // Every field of 2.1 is known.
    let mut b = minimal();
    b["description"] = json!({"Introduction": "x"});
    b["win_rate"] = json!("0.0000");
    b["csv_mode"] = json!(false);
    assert!(parse(&b).is_ok());
}

#[test]
fn overflowing_numbers_are_refused_with_the_value_as_sent() {
    for (field, value, want) in [
        (
            "capital",
            json!(1.7e308),
            "'capital': 1.7e+308 is out of range",
        ),
        (
            "capital",
            json!(2e12),
            "'capital': 2000000000000.0 is above the largest capital",
        ),
        (
            "capital",
            json!("1e13"),
            "'capital': '1e13' is above the largest capital",
        ),
        (
            "trade_price",
            json!(1e308),
            "'trade_price': 1e+308 is out of range",
        ),
        (
            "trade_price",
            json!("9e18"),
            "'trade_price': '9e18' is out of range",
        ),
        (
            "commission",
            json!(-1e300),
            "'commission': -1e+300 is out of range",
        ),
        ("risk_control", json!("//1e300"), "max-holding 1e300"),
    ] {
        let mut b = minimal();
        b[field] = value;
        let e = parse(&b).unwrap_err();
        assert!(e.to_string().contains(want), "{field}: {e}");
    }
    let mut b = minimal();
    b["capital"] = json!(1e12);
    assert_eq!(parse(&b).unwrap().params.capital, 1e12);
}

#[test]
fn risk_control_segments() {
    assert_eq!(
        parse_risk("-5/10/21").unwrap(),
        RiskControl {
            stop_loss_pct: Some(5.0),
            take_profit_pct: Some(10.0),
            max_holding_bars: Some(21)
        }
    );
    assert_eq!(
        parse_risk("5//").unwrap(),
        RiskControl {
            stop_loss_pct: Some(5.0),
            take_profit_pct: None,
            max_holding_bars: None
        }
    );
    assert_eq!(parse_risk("//").unwrap(), RiskControl::default());
}

#[test]
fn a_block_holds_at_most_fifty_conditions() {
    let cond = json!({"signal": {"name": "X"}, "rule": {"type_name": "<", "comparison_value": 10}});
    let mut b = minimal();
    b["entry"] =
        json!({"rule_type": "Scoring", "condition": vec![cond.clone(); 50], "score_threshold": 1});
    assert_eq!(parse(&b).unwrap().params.entry.conditions.len(), 50);
    b["entry"]["condition"] = json!(vec![cond; 51]);
    let e = parse(&b).unwrap_err().to_string();
    assert!(
        e.contains("entry.condition") && e.contains("at most 50"),
        "{e}"
    );
}

#[test]
fn qualifier_beside_or_inside_rule_and_voters_spelling() {
    let cond = |q_inside: bool| {
        let q = json!({"comparison_operator": "Range Rank", "calculation_period": "252", "ma_type": "S"});
        let mut c =
            json!({"signal": {"name": "X"}, "rule": {"type_name": "<", "comparison_value": 10}});
        if q_inside {
            c["rule"]["qualifier"] = q
        } else {
            c["qualifier"] = q
        }
        c
    };
    for inside in [false, true] {
        let mut b = minimal();
        b["entry"] = json!({"rule_type": "Scoring", "voters": [cond(inside), cond(inside)], "score_threshold": 2});
        let p = parse(&b).unwrap();
        assert_eq!(p.params.entry.conditions.len(), 2);
        assert_eq!(
            p.params.entry.conditions[0]
                .qualifier
                .as_ref()
                .unwrap()
                .period,
            252
        );
    }
}

#[test]
fn csv_rows_are_validated_with_row_and_column() {
    let mut b = minimal();
    b["csv_mode"] = json!(true);
    b["csv_data"] = json!([
        {"Date": "2024-01-02", "Open": 10, "High": 11, "Low": 9, "Close": 10.5, "Volume": 100, "Entry1": 1, "Extra": "dropped"},
        {"Date": "2024-01-03", "Open": 10, "High": 9, "Low": 9.5, "Close": 9.6, "Volume": 100}
    ]);
    let e = parse(&b).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("parameter 'csv_data[1].High': High 9 is below Low 9.5"),
        "{e}"
    );
    b["csv_data"][1]["High"] = json!(11);
    let p = parse(&b).unwrap();
    let rows = p.params.csv.unwrap();
    let first: Vec<f64> = rows.signals.iter().map(|s| s[0]).collect();
    assert_eq!(first, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    b["csv_data"][1]["Date"] = json!("2024-01-01");
    assert!(
        parse(&b)
            .unwrap_err()
            .to_string()
            .contains("csv_data[1].Date")
    );
    b["csv_data"][1]["Date"] = json!("2024-01-04");
    b["csv_data"][1].as_object_mut().unwrap().remove("Volume");
    assert_eq!(
        parse(&b).unwrap_err().to_string(),
        "parameter 'csv_data[1].Volume': is required"
    );
}
