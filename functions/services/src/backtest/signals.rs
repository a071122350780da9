//! Signals (2.4): detection Sentiment -> Technical -> Symbol, the technical
//! indicator map with default parameters, operator codes (2.6), and compiling
//! a condition into the engine's form.

pub use super::catalog::Catalog;
use super::params::{ConditionSpec, FieldError, Result};
use engine::rules::{MaKind, Op, Transform};
use engine::strategy::{Column, Comparison, Technical};
use platform::marketdata::IndicatorMeta;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    Sentiment,
    Symbol,
    Technical,
}

impl Category {
    pub fn prefix(self) -> &'static str {
        match self {
            Category::Sentiment => "SI",
            Category::Symbol => "SY",
            Category::Technical => "TI",
        }
    }
}

/// One entry of the technical-indicator map.
pub struct TechEntry {
    pub name: &'static str,
    pub url: &'static str,
    pub aliases: &'static [&'static str],
    pub indicator: Technical,
    /// Moving-average indicators accept the `MA` comparison.
    pub average: Option<MaKind>,
}

/// The technical-indicator map with default parameters (docs/backtest.md).
pub const TECHNICALS: &[TechEntry] = &[
    TechEntry {
        name: "Relative Strength Index",
        url: "RSI",
        aliases: &["RSI"],
        indicator: Technical::Rsi(14),
        average: None,
    },
    TechEntry {
        name: "Simple Moving Average",
        url: "SMA",
        aliases: &["SMA", "Moving Average"],
        indicator: Technical::Sma(20),
        average: Some(MaKind::Simple),
    },
    TechEntry {
        name: "Exponential Moving Average",
        url: "EMA",
        aliases: &["EMA"],
        indicator: Technical::Ema(20),
        average: Some(MaKind::Exponential),
    },
    TechEntry {
        name: "MACD",
        url: "MACD",
        aliases: &["MACD Line", "Moving Average Convergence Divergence"],
        indicator: Technical::MacdLine(12, 26, 9),
        average: None,
    },
    TechEntry {
        name: "MACD Signal",
        url: "MACD_SIGNAL",
        aliases: &["MACD Signal Line"],
        indicator: Technical::MacdSignal(12, 26, 9),
        average: None,
    },
    TechEntry {
        name: "MACD Histogram",
        url: "MACD_HIST",
        aliases: &["MACD Hist"],
        indicator: Technical::MacdHistogram(12, 26, 9),
        average: None,
    },
    TechEntry {
        name: "Bollinger Upper Band",
        url: "BBANDS_UPPER",
        aliases: &["Bollinger Bands Upper"],
        indicator: Technical::BollingerUpper(20, 2.0),
        average: None,
    },
    TechEntry {
        name: "Bollinger Middle Band",
        url: "BBANDS_MIDDLE",
        aliases: &["Bollinger Bands Middle"],
        indicator: Technical::BollingerMiddle(20, 2.0),
        average: Some(MaKind::Simple),
    },
    TechEntry {
        name: "Bollinger Lower Band",
        url: "BBANDS_LOWER",
        aliases: &["Bollinger Bands Lower"],
        indicator: Technical::BollingerLower(20, 2.0),
        average: None,
    },
    TechEntry {
        name: "Stochastic %K",
        url: "STOCH_K",
        aliases: &["Stochastic", "Stochastic Oscillator"],
        indicator: Technical::StochK(14, 3, 3),
        average: None,
    },
    TechEntry {
        name: "Stochastic %D",
        url: "STOCH_D",
        aliases: &[],
        indicator: Technical::StochD(14, 3, 3),
        average: None,
    },
    TechEntry {
        name: "Average True Range",
        url: "ATR",
        aliases: &["ATR"],
        indicator: Technical::Atr(14),
        average: None,
    },
    TechEntry {
        name: "Average Directional Index",
        url: "ADX",
        aliases: &["ADX"],
        indicator: Technical::Adx(14),
        average: None,
    },
    TechEntry {
        name: "Commodity Channel Index",
        url: "CCI",
        aliases: &["CCI"],
        indicator: Technical::Cci(14),
        average: None,
    },
    TechEntry {
        name: "Williams %R",
        url: "WILLR",
        aliases: &["Williams R", "Williams Percent Range"],
        indicator: Technical::WilliamsR(14),
        average: None,
    },
    TechEntry {
        name: "Rate of Change",
        url: "ROC",
        aliases: &["ROC"],
        indicator: Technical::Roc(10),
        average: None,
    },
    TechEntry {
        name: "Money Flow Index",
        url: "MFI",
        aliases: &["MFI"],
        indicator: Technical::Mfi(14),
        average: None,
    },
    TechEntry {
        name: "On Balance Volume",
        url: "OBV",
        aliases: &["OBV", "On-Balance Volume"],
        indicator: Technical::Obv,
        average: None,
    },
];

pub fn technical(name: &str) -> Option<&'static TechEntry> {
    TECHNICALS.iter().find(|t| {
        t.name.eq_ignore_ascii_case(name)
            || t.url.eq_ignore_ascii_case(name)
            || t.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    })
}

/// Default extremes of Technical signals (optimism / pessimism).
pub const TECHNICAL_EXTREMES: (f64, f64) = (20.0, 80.0);

/// Where a resolved signal's values come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    Column(Column),
    /// The indicator with its parameters (its own period when given).
    Technical(Technical),
    /// An indicator of the catalog, by code.
    Indicator(String),
    /// CSV column Entry1..5 (0-4) or Exit1..5 (5-9).
    CsvColumn(usize),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub category: Category,
    /// Canonical name used in the encoding.
    pub name: String,
    pub optimism: f64,
    pub pessimism: f64,
    pub origin: Origin,
    /// The indicator's own frequency (Sentiment only).
    pub updated: Option<String>,
}

const COLUMNS: [(&str, Column); 5] = [
    ("Open", Column::Open),
    ("High", Column::High),
    ("Low", Column::Low),
    ("Close", Column::Close),
    ("Volume", Column::Volume),
];
const CSV_COLUMNS: [&str; 10] = [
    "Entry1", "Entry2", "Entry3", "Entry4", "Entry5", "Exit1", "Exit2", "Exit3", "Exit4", "Exit5",
];

/// Resolves a signal name: an explicit `type` is honoured, otherwise the
/// catalog is tried first, then the technical map, then Symbol columns.
pub fn resolve(c: &ConditionSpec, catalog: &Catalog, csv_mode: bool) -> Result<Resolved> {
    let s = &c.signal;
    let path = format!("{}.signal", c.path);
    let wanted = s.kind.as_deref().map(|k| k.trim().to_ascii_lowercase());
    let sentiment = || catalog.find(&s.name);
    let symbol = || -> Option<(String, Origin)> {
        let rest = s
            .name
            .strip_prefix("Symbol ")
            .or_else(|| s.name.strip_prefix("symbol "));
        if let Some(col) = rest {
            return COLUMNS
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(col.trim()))
                .map(|(n, c)| (format!("Symbol {n}"), Origin::Column(*c)));
        }
        if csv_mode {
            return CSV_COLUMNS
                .iter()
                .position(|n| n.eq_ignore_ascii_case(&s.name))
                .map(|i| (CSV_COLUMNS[i].to_string(), Origin::CsvColumn(i)));
        }
        None
    };
    let as_sentiment = |m: &IndicatorMeta| Resolved {
        category: Category::Sentiment,
        name: m.chart_name.clone(),
        optimism: s.extreme_optimism.unwrap_or(m.opt_extreme),
        pessimism: s.extreme_pessimism.unwrap_or(m.pess_extreme),
        origin: Origin::Indicator(m.url.clone()),
        updated: Some(m.updated.clone()),
    };
    let as_technical = |t: &TechEntry| Resolved {
        category: Category::Technical,
        name: t.name.to_string(),
        optimism: s.extreme_optimism.unwrap_or(TECHNICAL_EXTREMES.0),
        pessimism: s.extreme_pessimism.unwrap_or(TECHNICAL_EXTREMES.1),
        origin: Origin::Technical(t.indicator),
        updated: None,
    };
    let as_symbol = |(name, origin): (String, Origin)| Resolved {
        category: Category::Symbol,
        name,
        optimism: s.extreme_optimism.unwrap_or(0.0),
        pessimism: s.extreme_pessimism.unwrap_or(0.0),
        origin,
        updated: None,
    };
    let mut r = match wanted.as_deref() {
        Some("sentiment") => sentiment().map(as_sentiment).ok_or_else(|| FieldError::new(format!("{path}.name"), format!("'{}' is not in the indicator catalog", s.name))),
        Some("technical") => technical(&s.name).map(as_technical).ok_or_else(|| FieldError::new(format!("{path}.name"), format!("'{}' is not a known technical indicator", s.name))),
        Some("symbol") => symbol().map(as_symbol).ok_or_else(|| FieldError::new(format!("{path}.name"), format!("'{}' is not Symbol Open, High, Low, Close or Volume", s.name))),
        Some(other) => Err(FieldError::new(format!("{path}.type"), format!("'{other}' is not Sentiment, Technical or Symbol"))),
        None => sentiment()
            .map(as_sentiment)
            .or_else(|| technical(&s.name).map(as_technical))
            .or_else(|| symbol().map(as_symbol))
            .ok_or_else(|| {
                FieldError::new(format!("{path}.name"), format!("'{}' is not an indicator of the catalog, a technical indicator, or Symbol Open/High/Low/Close/Volume{}",
                    s.name,
                    if csv_mode { " or Entry1-5/Exit1-5" } else { "" }))
            }),
    }?;
    if let Some(p) = s.period {
        let at = format!("{path}.params.period");
        r.origin = match r.origin {
            Origin::Technical(t) => Origin::Technical(t.with_period(p).ok_or_else(|| {
                FieldError::new(at, format!("'{}' has no single period to set; RSI, SMA, EMA, Bollinger Bands, ATR, ADX, CCI, Williams %R, ROC and MFI do", r.name))
            })?),
            _ => {
                return Err(FieldError::new(at, format!("only Technical indicators take a period, and '{}' is a {} signal",
                    r.name,
                    match r.category {
                        Category::Sentiment => "Sentiment",
                        Category::Symbol => "Symbol",
                        Category::Technical => "Technical",
                    })));
            }
        };
    }
    Ok(r)
}

/// An operator name of 2.6 (or `>=`/`<=`): its code (None outside the 16) and class.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OpClass {
    Main(Op),
    Qualifier(u8),
    Special(u8),
}

pub fn operator(name: &str) -> Option<(Option<u8>, OpClass)> {
    let n = name.trim();
    let eq = |s: &str| {
        n.eq_ignore_ascii_case(s) || n.replace(' ', "").eq_ignore_ascii_case(&s.replace(' ', ""))
    };
    Some(match () {
        _ if n == ">" => (Some(0), OpClass::Main(Op::Gt)),
        _ if n == "=" || n == "==" => (Some(1), OpClass::Main(Op::Eq)),
        _ if n == "<" => (Some(2), OpClass::Main(Op::Lt)),
        _ if eq("CrossAbove") => (Some(3), OpClass::Main(Op::CrossAbove)),
        _ if eq("CrossBelow") => (Some(4), OpClass::Main(Op::CrossBelow)),
        _ if eq("Rate Of Change") => (Some(5), OpClass::Qualifier(5)),
        _ if eq("% of Previous Range") => (Some(6), OpClass::Qualifier(6)),
        _ if eq("MA Ratio") => (Some(7), OpClass::Qualifier(7)),
        _ if eq("Range Rank") => (Some(8), OpClass::Qualifier(8)),
        _ if eq("DrawDown %") => (Some(9), OpClass::Qualifier(9)),
        _ if eq("DrawUp %") => (Some(10), OpClass::Qualifier(10)),
        _ if eq("Net Change") => (Some(11), OpClass::Qualifier(11)),
        _ if eq("All-time High") => (Some(12), OpClass::Special(12)),
        _ if eq("All-time Low") => (Some(13), OpClass::Special(13)),
        _ if eq("Consecutive Days Above") => (Some(14), OpClass::Special(14)),
        _ if eq("Consecutive Days Below") => (Some(15), OpClass::Special(15)),
        _ if n == ">=" => (None, OpClass::Main(Op::Ge)),
        _ if n == "<=" => (None, OpClass::Main(Op::Le)),
        _ => return None,
    })
}

fn ma_kind(code: &str) -> MaKind {
    if code == "E" {
        MaKind::Exponential
    } else {
        MaKind::Simple
    }
}

/// A qualifier's transform (codes 5-11).
pub fn qualifier_transform(code: u8, period: usize, ma_type: &str) -> Transform {
    match code {
        5 => Transform::RateOfChange(period),
        6 => Transform::PctOfPreviousRange(period),
        7 => Transform::MaRatio(period, ma_kind(ma_type)),
        8 => Transform::RangeRank(period),
        9 => Transform::DrawDown(period),
        10 => Transform::DrawUp(period),
        _ => Transform::NetChange(period),
    }
}

/// Consecutive-days operators count `period` bars, 3 when not given.
pub const DEFAULT_CONSECUTIVE_BARS: usize = 3;

/// The compiled pieces of one condition (the signal source stays with the caller).
#[derive(Debug, Clone, PartialEq)]
pub struct Compiled {
    pub op: Op,
    pub op_code: Option<u8>,
    pub transform: Option<(u8, Transform, usize, String)>,
    pub comparison: Comparison,
    /// `MA` compares the close itself (unless the signal is a faster average).
    pub close_is_signal: bool,
}

pub fn compile(c: &ConditionSpec, r: &Resolved) -> Result<Compiled> {
    let rp = format!("{}.rule", c.path);
    let (op_code, class) = operator(&c.rule.type_name).ok_or_else(|| FieldError::new(format!("{rp}.type_name"), format!("'{}' is not one of the operators of the spec (>, =, <, >=, <=, CrossAbove, CrossBelow, All-time High, All-time Low, Consecutive Days Above, Consecutive Days Below)", c.rule.type_name)))?;
    let value = || -> Result<f64> {
        match c.rule.comparison_value.as_deref().map(str::trim) {
            None | Some("") => Err(FieldError::new(
                format!("{rp}.comparison_value"),
                format!("is required for '{}'", c.rule.type_name),
            )),
            Some(v) => v.parse::<f64>().map_err(|_| {
                FieldError::new(
                    format!("{rp}.comparison_value"),
                    format!("'{v}' is not a number"),
                )
            }),
        }
    };
    let offset = || {
        c.rule
            .comparison_value
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(|v| v.parse::<f64>().unwrap_or(0.0))
            .unwrap_or(0.0)
    };
    let op = match class {
        OpClass::Main(op) => op,
        OpClass::Qualifier(_) => {
            return Err(FieldError::new(
                format!("{rp}.type_name"),
                format!(
                    "'{}' is a qualifier; put it in qualifier.comparison_operator with a calculation_period",
                    c.rule.type_name
                ),
            ));
        }
        OpClass::Special(12) => Op::AllTimeHigh,
        OpClass::Special(13) => Op::AllTimeLow,
        OpClass::Special(14) => {
            Op::ConsecutiveAbove(c.rule.period.unwrap_or(DEFAULT_CONSECUTIVE_BARS))
        }
        OpClass::Special(_) => {
            Op::ConsecutiveBelow(c.rule.period.unwrap_or(DEFAULT_CONSECUTIVE_BARS))
        }
    };
    let transform = match &c.qualifier {
        None => None,
        Some(q) => {
            if r.category == Category::Technical {
                return Err(FieldError::new(
                    format!("{}.qualifier", c.path),
                    format!(
                        "a Technical signal ('{}') cannot take a qualifier; qualifiers are for Sentiment and Symbol signals",
                        r.name
                    ),
                ));
            }
            match operator(&q.operator) {
                Some((Some(code), OpClass::Qualifier(_))) => Some((
                    code,
                    qualifier_transform(code, q.period, &q.ma_type),
                    q.period,
                    q.ma_type.clone(),
                )),
                _ => {
                    return Err(FieldError::new(
                        format!("{}.qualifier.comparison_operator", c.path),
                        format!(
                            "'{}' is not a qualifier (Rate Of Change, % of Previous Range, MA Ratio, Range Rank, DrawDown %, DrawUp %, Net Change)",
                            q.operator
                        ),
                    ));
                }
            }
        }
    };
    let needs_value = !matches!(op, Op::AllTimeHigh | Op::AllTimeLow);
    let mut close_is_signal = false;
    let comparison = match c.rule.comparison_type.as_str() {
        "SVMA" | "SVEMA" => Comparison::OwnAverage {
            kind: if c.rule.comparison_type == "SVMA" {
                MaKind::Simple
            } else {
                MaKind::Exponential
            },
            period: c.rule.period.expect("checked when parsing"),
            offset_pct: offset(),
        },
        "MA" => {
            let kind = match (&r.origin, r.category) {
                (Origin::Technical(_), Category::Technical) => technical(&r.name).and_then(|t| t.average),
                _ => None,
            }
            .ok_or_else(|| FieldError::new(format!("{rp}.comparison_type"), format!("MA compares the close with a moving average and needs a moving-average Technical signal (Simple/Exponential Moving Average), not '{}'", r.name)))?;
            let own = match r.origin {
                Origin::Technical(
                    Technical::Sma(n) | Technical::Ema(n) | Technical::BollingerMiddle(n, _),
                ) => n,
                _ => 20,
            };
            // With both periods the signal is the faster average of a
            // two-average crossover; otherwise the close meets the average.
            close_is_signal = c.signal.period.is_none() || c.rule.period.is_none();
            Comparison::CloseAverage {
                kind,
                period: c.rule.period.unwrap_or(own),
                offset_pct: offset(),
            }
        }
        _ if needs_value => Comparison::Value(value()?),
        _ => Comparison::Value(0.0),
    };
    Ok(Compiled {
        op,
        op_code,
        transform,
        comparison,
        close_is_signal,
    })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::backtest::params::{RuleSpec, SignalRef};

    pub(crate) fn meta(url: &str, name: &str) -> IndicatorMeta {
        IndicatorMeta {
            url: url.into(),
            chart_name: name.into(),
            market_symbol: "SPX".into(),
            kind: "optix".into(),
            updated: "Weekly".into(),
            sentiment: "2".into(),
            description: String::new(),
            opt_extreme: 75.0,
            pess_extreme: 25.0,
            contrary: true,
            premium: false,
            chart_type: "line".into(),
            groups: vec![],
            subtype: String::new(),
            internal: false,
            intraday: false,
        }
    }

    fn cond(name: &str, type_name: &str, value: Option<&str>) -> ConditionSpec {
        ConditionSpec {
            path: "entry.condition".into(),
            signal: SignalRef {
                kind: None,
                name: name.into(),
                extreme_optimism: None,
                extreme_pessimism: None,
                period: None,
            },
            rule: RuleSpec {
                comparison_type: "SV".into(),
                type_name: type_name.into(),
                comparison_value: value.map(str::to_string),
                period: None,
            },
            qualifier: None,
        }
    }

    #[test]
    fn detection_order_sentiment_technical_symbol() {
        // A catalog entry named like a technical indicator wins: Sentiment is tried first.
        let catalog = vec![meta("SPX_OPTIX", "S&P 500 Optix"), meta("RSI_SENT", "RSI")];
        let catalog = Catalog::new(std::sync::Arc::new(catalog));
        let r = resolve(&cond("S&P 500 Optix", ">", Some("1")), &catalog, false).unwrap();
        assert_eq!(
            (r.category, r.optimism, r.pessimism, r.updated.as_deref()),
            (Category::Sentiment, 75.0, 25.0, Some("Weekly"))
        );
        assert_eq!(
            resolve(&cond("RSI", ">", Some("1")), &catalog, false)
                .unwrap()
                .category,
            Category::Sentiment
        );
        let r = resolve(
            &cond("Relative Strength Index", ">", Some("1")),
            &catalog,
            false,
        )
        .unwrap();
        assert_eq!(
            (r.category, r.optimism, r.pessimism),
            (Category::Technical, 20.0, 80.0)
        );
        let r = resolve(&cond("Symbol Volume", ">", Some("1")), &catalog, false).unwrap();
        assert_eq!(
            (r.category, r.origin.clone(), r.optimism),
            (Category::Symbol, Origin::Column(Column::Volume), 0.0)
        );
        assert!(resolve(&cond("Entry1", ">", Some("0")), &catalog, false).is_err());
        assert_eq!(
            resolve(&cond("Entry1", ">", Some("0")), &catalog, true)
                .unwrap()
                .origin,
            Origin::CsvColumn(0)
        );
        assert_eq!(
            resolve(&cond("exit5", ">", Some("0")), &catalog, true)
                .unwrap()
                .origin,
            Origin::CsvColumn(9)
        );
        let e = resolve(&cond("SPX Close", ">", Some("1")), &catalog, false).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("parameter 'entry.condition.signal.name': 'SPX Close' is not"),
            "{e}"
        );
    }

    /// The codes the document lists (its schema exists with `openapi`,
    /// which the workspace's build turns on).
    #[cfg(feature = "openapi")]
    #[test]
    fn all_operator_codes() {
        use crate::backtest::request::{CONSECUTIVE, QUALIFIERS};
        let names: Vec<&str> = [">", "=", "<", "CrossAbove", "CrossBelow"]
            .into_iter()
            .chain(QUALIFIERS)
            .chain(["All-time High", "All-time Low"])
            .chain(CONSECUTIVE)
            .collect();
        for (code, n) in names.iter().enumerate() {
            assert_eq!(operator(n).unwrap().0, Some(code as u8), "{n}");
        }
        assert_eq!(operator(">=").unwrap(), (None, OpClass::Main(Op::Ge)));
        assert_eq!(operator("<=").unwrap(), (None, OpClass::Main(Op::Le)));
        assert!(operator("between").is_none());
    }

    #[test]
    fn compile_errors() {
        let catalog = Catalog::new(std::sync::Arc::new(vec![meta(
            "SPX_OPTIX",
            "S&P 500 Optix",
        )]));
        let mut c = cond("RSI", ">", Some("70"));
        c.qualifier = Some(crate::backtest::params::QualifierSpec {
            operator: "Range Rank".into(),
            period: 21,
            ma_type: "S".into(),
        });
        let r = resolve(&c, &catalog, false).unwrap();
        assert!(
            compile(&c, &r)
                .unwrap_err()
                .to_string()
                .contains("cannot take a qualifier")
        );
        let c = cond("Symbol Close", "Range Rank", Some("70"));
        let r = resolve(&c, &catalog, false).unwrap();
        assert!(
            compile(&c, &r)
                .unwrap_err()
                .to_string()
                .contains("is a qualifier")
        );
        let c = cond("Symbol Close", ">", None);
        assert!(
            compile(&c, &resolve(&c, &catalog, false).unwrap())
                .unwrap_err()
                .to_string()
                .contains("comparison_value': is required")
        );
        let mut c = cond("RSI", ">", Some("0"));
        c.rule.comparison_type = "MA".into();
        assert!(
            compile(&c, &resolve(&c, &catalog, false).unwrap())
                .unwrap_err()
                .to_string()
                .contains("moving-average Technical signal")
        );
        let c = cond("Symbol Close", "All-time High", None);
        assert_eq!(
            compile(&c, &resolve(&c, &catalog, false).unwrap())
                .unwrap()
                .op,
            Op::AllTimeHigh
        );
    }
}
