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
    /// Split-adjusted bars (the default) or bars as traded.
    pub adjusted: bool,
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
        let mut out: Map<String, Value> = DEFAULTS
            .iter()
            .filter(|(k, _)| *k != "end_date" && given(&self.user_supplied, k).is_none())
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        if given(&self.user_supplied, "adjusted").is_none() {
            out.insert("adjusted".into(), Value::Bool(true));
        }
        out
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
            adjusted: typed.adjusted.unwrap_or(true),
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
mod tests;
