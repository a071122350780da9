//! StrategyParams (backtest-service 2.1-2.7): the typed request
//! ([`super::request::Strategy`]) with every default of the spec applied and
//! reported. Errors name the field's path.

use super::request::{Loose, Strategy};
pub use super::rules::{ConditionSpec, QualifierSpec, RuleBlock, RuleSpec, RuleType, SignalRef};
pub(super) use super::values::{MAX_CAPITAL, MAX_COUNT, date, integer, number, sent, text};
use chrono::NaiveDate;
use engine::backtest::{Direction, RiskControl, TradePrice};
use serde_json::{Map, Value, json};

pub use crate::error::FieldError;

pub type Result<T> = std::result::Result<T, FieldError>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BtFrequency {
    Daily,
    Hourly,
    Weekly,
    Monthly,
}

impl BtFrequency {
    pub fn as_str(self) -> &'static str {
        match self {
            BtFrequency::Daily => "Daily",
            BtFrequency::Hourly => "Hourly",
            BtFrequency::Weekly => "Weekly",
            BtFrequency::Monthly => "Monthly",
        }
    }
    pub fn engine(self) -> engine::Frequency {
        match self {
            BtFrequency::Daily => engine::Frequency::Daily,
            BtFrequency::Hourly => engine::Frequency::Hourly,
            BtFrequency::Weekly => engine::Frequency::Weekly,
            BtFrequency::Monthly => engine::Frequency::Monthly,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct StrategyParams {
    pub symbol: String,
    pub name: Option<String>,
    pub benchmark: String,
    pub direction: Direction,
    pub frequency: BtFrequency,
    pub strategy: String,
    pub model: String,
    pub capital: f64,
    pub capital_alloc: f64,
    pub commission: f64,
    pub slippage: f64,
    pub start_date: NaiveDate,
    /// `None`: the latest date in the data.
    pub end_date: Option<NaiveDate>,
    pub trade_price: TradePrice,
    pub risk: RiskControl,
    pub entry: RuleBlock,
    pub exit: RuleBlock,
    /// CSV mode's bars (2.8), read once.
    pub csv: Option<std::sync::Arc<super::csv::Upload>>,
}

/// The parsed request and what the service filled in.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub params: StrategyParams,
    /// The caller's object, duplicate keys resolved (last wins).
    pub user_supplied: Value,
    pub warnings: Vec<String>,
}

impl Parsed {
    /// The defaults of 2.1 the caller left out (end_date aside: it depends
    /// on the data).
    pub fn defaults_applied(&self) -> Map<String, Value> {
        DEFAULTS
            .iter()
            .filter(|(k, _)| *k != "end_date" && given(&self.user_supplied, k).is_none())
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }
}

/// A field the caller gave (null counts as not given).
fn given<'a>(body: &'a Value, k: &str) -> Option<&'a Value> {
    body.get(k).filter(|x| !x.is_null())
}

/// Defaults of 2.1, as the spec writes them (built once).
static DEFAULTS: std::sync::LazyLock<Vec<(&'static str, Value)>> =
    std::sync::LazyLock::new(defaults);

fn defaults() -> Vec<(&'static str, Value)> {
    vec![
        ("benchmark", json!("SPX")),
        ("direction", json!("Long")),
        ("frequency", json!("Daily")),
        ("strategy", json!("Single")),
        ("model", json!("cash")),
        ("capital", json!(100000)),
        ("capital_alloc", json!("1.000000")),
        ("commission", json!("0.0000")),
        ("slippage", json!("0.0000")),
        ("start_date", json!("1800-10-01")),
        ("end_date", Value::Null),
        ("trade_price", json!(2)),
        ("risk_control", json!("//21")),
        ("exclude_oo", json!(0)),
        ("market_environment", json!(0)),
        ("index_moving_average_slope", json!(0)),
        ("opted", json!(0)),
        ("win_rate", json!("0.0000")),
    ]
}

/// Fields accepted without further semantics (the spec gives none beyond the
/// default); a non-default value is kept in the echo and reported as ignored.
const INERT: [&str; 5] = [
    "exclude_oo",
    "market_environment",
    "index_moving_average_slope",
    "opted",
    "win_rate",
];

/// Risk control `stop/take/max-bars`: each segment empty or a number.
pub fn parse_risk(s: &str) -> Result<RiskControl> {
    let path = "risk_control";
    let parts: Vec<&str> = s.split('/').collect();
    if parts.len() != 3 {
        return Err(FieldError::new(
            path,
            format!(
                "'{s}' must have three segments stop-loss/take-profit/max-holding-bars, e.g. -5/10/21 or //21"
            ),
        ));
    }
    let seg = |i: usize, what: &str| -> Result<Option<f64>> {
        let p = parts[i].trim();
        if p.is_empty() {
            return Ok(None);
        }
        p.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .map(Some)
            .ok_or_else(|| FieldError::new(path, format!("{what} '{p}' is not a number")))
    };
    let stop = seg(0, "stop-loss")?.map(f64::abs);
    let take = seg(1, "take-profit")?;
    if take.is_some_and(|t| t < 0.0) {
        return Err(FieldError::new(path, "take-profit must not be negative"));
    }
    let max = match seg(2, "max-holding")? {
        None => None,
        Some(m) if (1.0..=MAX_COUNT as f64).contains(&m) && m.fract() == 0.0 => Some(m as usize),
        Some(_) => {
            return Err(FieldError::new(
                path,
                format!(
                    "max-holding {} must be a whole number of bars, 1 to {MAX_COUNT}",
                    parts[2].trim()
                ),
            ));
        }
    };
    if stop == Some(0.0) {
        return Err(FieldError::new(
            path,
            "a stop-loss of 0% would exit at once; leave the segment empty for none",
        ));
    }
    Ok(RiskControl {
        stop_loss_pct: stop,
        take_profit_pct: take,
        max_holding_bars: max,
    })
}

/// The request's fields: each as given, else its default of 2.1.
struct Fields<'a>(&'a Strategy);

impl<'a> Fields<'a> {
    fn get(&self, k: &str) -> &'a Value {
        self.optional(k).unwrap_or_else(|| {
            &DEFAULTS
                .iter()
                .find(|(d, _)| *d == k)
                .expect("a field with a default")
                .1
        })
    }

    /// An optional field (null counts as not given).
    fn optional(&self, k: &str) -> Option<&'a Value> {
        let s = self.0;
        let field = match k {
            "name" => &s.name,
            "benchmark" => &s.benchmark,
            "direction" => &s.direction,
            "frequency" => &s.frequency,
            "strategy" => &s.strategy,
            "model" => &s.model,
            "capital" => &s.capital,
            "capital_alloc" => &s.capital_alloc,
            "commission" => &s.commission,
            "slippage" => &s.slippage,
            "start_date" => &s.start_date,
            "end_date" => &s.end_date,
            "trade_price" => &s.trade_price,
            "risk_control" => &s.risk_control,
            "exclude_oo" => &s.exclude_oo,
            "market_environment" => &s.market_environment,
            "index_moving_average_slope" => &s.index_moving_average_slope,
            "opted" => &s.opted,
            "win_rate" => &s.win_rate,
            "csv_mode" => &s.csv_mode,
            other => unreachable!("'{other}' is not a scalar field of a strategy"),
        };
        field.as_ref().map(|Loose(v)| v).filter(|v| !v.is_null())
    }
}

/// The typed request of `body` (a JSON object, duplicate keys resolved).
/// CSV mode's rows are read by their own reader; the typed request only
/// notes that they were sent.
pub fn request(body: &Value) -> Result<Strategy> {
    let Some(fields) = body.as_object() else {
        return Err(FieldError::new("body", "must be a JSON object"));
    };
    let top: Map<String, Value> = fields
        .iter()
        .map(|(k, v)| match k.as_str() {
            "csv_data" => (k.clone(), Value::Bool(true)),
            _ => (k.clone(), v.clone()),
        })
        .collect();
    crate::error::from_json(Value::Object(top))
}

/// Parses a request body (already decoded JSON, duplicate keys resolved).
pub fn parse(body: &Value) -> Result<Parsed> {
    parse_with(body, None)
}

/// [`parse`] with CSV mode's bars already read (from `csv_data` as it
/// streamed past, a CSV or Parquet part, or the stored upload); they are
/// used when `csv_mode` is true.
pub fn parse_with(
    body: &Value,
    upload: Option<std::sync::Arc<super::csv::Upload>>,
) -> Result<Parsed> {
    let typed = request(body)?;
    let f = Fields(&typed);
    let symbol = upper(text(&typed.symbol.0, "symbol")?);
    if symbol.is_empty() {
        return Err(FieldError::new("symbol", "must not be empty"));
    }
    let entry = typed.entry.rules();
    let exit = typed.exit.rules();
    let (direction, frequency, trade_price) = trading(&f)?;
    let (capital, capital_alloc, commission, slippage) = money(&f)?;
    let (start_date, end_date) = period(&f)?;
    let risk = parse_risk(&text(f.get("risk_control"), "risk_control")?)?;
    let (strategy, model, mut warnings) = inert(&f)?;
    let csv = csv_rows(&f, body, upload)?;
    if exit.rule_type == RuleType::RiskControlOnly && risk == RiskControl::default() {
        warnings.push("the exit is RiskControlOnly and risk_control sets nothing: positions stay open until the end".into());
    }
    let name = f.optional("name").map(|n| text(n, "name")).transpose()?;
    Ok(Parsed {
        params: StrategyParams {
            symbol,
            name,
            benchmark: upper(text(f.get("benchmark"), "benchmark")?),
            direction,
            frequency,
            strategy,
            model,
            capital,
            capital_alloc,
            commission,
            slippage,
            start_date,
            end_date,
            trade_price,
            risk,
            entry,
            exit,
            csv,
        },
        user_supplied: body.clone(),
        warnings,
    })
}

fn upper(s: String) -> String {
    s.trim().to_ascii_uppercase()
}

/// `direction`, `frequency` and `trade_price`.
fn trading(f: &Fields) -> Result<(Direction, BtFrequency, TradePrice)> {
    let word = |k: &str| -> Result<String> { Ok(text(f.get(k), k)?.trim().to_ascii_lowercase()) };
    let direction = match word("direction")?.as_str() {
        "long" => Direction::Long,
        "short" => Direction::Short,
        other => {
            return Err(FieldError::new(
                "direction",
                format!("'{other}' is not Long or Short"),
            ));
        }
    };
    let frequency = match word("frequency")?.as_str() {
        "daily" => BtFrequency::Daily,
        "hourly" => BtFrequency::Hourly,
        "weekly" => BtFrequency::Weekly,
        "monthly" => BtFrequency::Monthly,
        other => {
            return Err(FieldError::new(
                "frequency",
                format!("'{other}' is not Daily, Hourly, Weekly or Monthly"),
            ));
        }
    };
    let trade_price = match integer(f.get("trade_price"), "trade_price")? {
        0 => TradePrice::NextOpen,
        1 => TradePrice::NextClose,
        2 => TradePrice::CurrentClose,
        other => {
            return Err(FieldError::new(
                "trade_price",
                format!("{other} is not 0 (next open), 1 (next close) or 2 (current close)"),
            ));
        }
    };
    Ok((direction, frequency, trade_price))
}

/// `capital`, `capital_alloc`, `commission` and `slippage`.
fn money(f: &Fields) -> Result<(f64, f64, f64, f64)> {
    let capital = number(f.get("capital"), "capital")?;
    if capital <= 0.0 {
        return Err(FieldError::new("capital", "must be positive"));
    }
    if capital > MAX_CAPITAL {
        return Err(FieldError::new(
            "capital",
            format!(
                "{} is above the largest capital, 1e12",
                sent(f.get("capital"))
            ),
        ));
    }
    let capital_alloc = number(f.get("capital_alloc"), "capital_alloc")?;
    if !(capital_alloc > 0.0 && capital_alloc <= 1.0) {
        return Err(FieldError::new(
            "capital_alloc",
            format!("{capital_alloc} must be above 0 and at most 1 (1.0 = 100%)"),
        ));
    }
    let fraction = |k: &str| -> Result<f64> {
        let x = number(f.get(k), k)?;
        if (0.0..0.5).contains(&x) {
            Ok(x)
        } else {
            Err(FieldError::new(
                k,
                format!("{x} must be a fraction per side between 0 and 0.5 (0.001 = 0.1%)"),
            ))
        }
    };
    Ok((
        capital,
        capital_alloc,
        fraction("commission")?,
        fraction("slippage")?,
    ))
}

/// `start_date` and `end_date` (none: the latest date in the data).
fn period(f: &Fields) -> Result<(NaiveDate, Option<NaiveDate>)> {
    let start_date = date(f.get("start_date"), "start_date")?;
    let end_date = f
        .optional("end_date")
        .map(|v| date(v, "end_date"))
        .transpose()?;
    if let Some(e) = end_date
        && e < start_date
    {
        return Err(FieldError::new(
            "end_date",
            format!("{e} is before start_date {start_date}"),
        ));
    }
    Ok((start_date, end_date))
}

/// `strategy`, `model` and the fields this service takes but does not use,
/// with a warning for each that asks for what it does not do.
fn inert(f: &Fields) -> Result<(String, String, Vec<String>)> {
    let mut warnings = Vec::new();
    for k in INERT {
        let v = number(f.get(k), k)?;
        if v != 0.0 {
            warnings.push(format!(
                "{k} = {v} has no effect in this service and was ignored"
            ));
        }
    }
    let strategy = text(f.get("strategy"), "strategy")?;
    let model = text(f.get("model"), "model")?;
    if strategy != "Single" {
        warnings.push(format!(
            "strategy '{strategy}' is run as a single-symbol strategy"
        ));
    }
    if model != "cash" {
        warnings.push(format!("model '{model}' is run as a cash account"));
    }
    Ok((strategy, model, warnings))
}

/// The bars of CSV mode when `csv_mode` is true: those read already, else
/// `csv_data` in the body.
fn csv_rows(
    f: &Fields,
    body: &Value,
    upload: Option<std::sync::Arc<super::csv::Upload>>,
) -> Result<Option<std::sync::Arc<super::csv::Upload>>> {
    let csv_mode = match f.optional("csv_mode") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(FieldError::new(
                "csv_mode",
                format!("expected true or false, got {other}"),
            ));
        }
    };
    if !csv_mode {
        return Ok(None);
    }
    if let Some(u) = upload {
        return Ok(Some(u));
    }
    let data = body
        .get("csv_data")
        .ok_or_else(|| FieldError::new("csv_data", "is required when csv_mode is true"))?;
    Ok(Some(std::sync::Arc::new(super::csv::from_value(data)?)))
}

#[cfg(test)]
mod tests {
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
        assert_eq!(
            p.defaults_applied().len(),
            17,
            "every 2.1 default but end_date"
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
        let cond =
            json!({"signal": {"name": "X"}, "rule": {"type_name": "<", "comparison_value": 10}});
        let mut b = minimal();
        b["entry"] = json!({"rule_type": "Scoring", "condition": vec![cond.clone(); 50], "score_threshold": 1});
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
            let mut c = json!({"signal": {"name": "X"}, "rule": {"type_name": "<", "comparison_value": 10}});
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
}
