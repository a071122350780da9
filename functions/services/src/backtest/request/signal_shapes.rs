//! Signals (2.4): one shape per category, read from the raw form.

use super::*;

/// A signal as sent: its category (`type`, detected from the name when
/// left out), name and parameters.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignalData {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<SignalParams>,
}

/// A signal's parameters: its extremes, and a Technical indicator's own period.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(
    feature = "openapi",
    schema(
        title = "SignalExtremesAndPeriod",
        as = SignalExtremesAndPeriod,
        description = "Override the signal's extremes (20/80) and set the indicator's own period"
    )
)]
pub struct SignalParams {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = -1e6, maximum = 1e6, nullable = false))]
    pub extreme_optimism: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = -1e6, maximum = 1e6, nullable = false))]
    pub extreme_pessimism: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(minimum = 1, maximum = 1000, nullable = false)
    )]
    pub period: Option<usize>,
}

/// Override the signal's extremes (Sentiment: the catalog's; Technical: 20/80)
#[cfg(feature = "openapi")]
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(title = "SignalExtremes")]
#[allow(dead_code)]
pub struct SignalExtremes {
    #[schema(minimum = -1e6, maximum = 1e6, nullable = false)]
    extreme_optimism: Option<f64>,
    #[schema(minimum = -1e6, maximum = 1e6, nullable = false)]
    extreme_pessimism: Option<f64>,
}

impl SignalData {
    pub(super) fn from_raw(raw: RawSignal, path: &str) -> Result<SignalData> {
        let name = text(&raw.name.0, &format!("{path}.name"))?
            .trim()
            .to_string();
        if name.is_empty() {
            return Err(FieldError::new(format!("{path}.name"), "must not be empty"));
        }
        let kind = raw
            .kind
            .map(|Loose(t)| text(&t, &format!("{path}.type")))
            .transpose()?;
        let params = match raw.params {
            None => None,
            Some(p) => {
                let at = format!("{path}.params");
                let extreme = |x: Option<Loose>, k: &str| {
                    x.map(|Loose(x)| number(&x, &format!("{at}.{k}")))
                        .transpose()
                };
                let period_at = format!("{at}.period");
                let period = p.period.map(|Loose(x)| count(&x, &period_at)).transpose()?;
                if period == Some(0) {
                    return Err(FieldError::new(period_at, "must be at least 1"));
                }
                Some(SignalParams {
                    extreme_optimism: extreme(p.extreme_optimism, "extreme_optimism")?,
                    extreme_pessimism: extreme(p.extreme_pessimism, "extreme_pessimism")?,
                    period,
                })
            }
        };
        Ok(SignalData { kind, name, params })
    }

    pub(super) fn spec(&self) -> SignalRef {
        let p = self.params.as_ref();
        SignalRef {
            kind: self.kind.clone(),
            name: self.name.clone(),
            extreme_optimism: p.and_then(|p| p.extreme_optimism),
            extreme_pessimism: p.and_then(|p| p.extreme_pessimism),
            period: p.and_then(|p| p.period),
        }
    }

    /// The category `type` names, lower-cased (none: detected later).
    pub(super) fn category(&self) -> Option<String> {
        self.kind.as_deref().map(|k| k.trim().to_ascii_lowercase())
    }
}

/// An indicator of the catalog (`GET /backtest/indicators/list`); `type` may be left out
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "SentimentSignal"))]
pub struct SentimentSignal {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(schema_with = sentiment_kind, required = false))]
    pub kind: Option<String>,
    /// The chart name or code of an indicator of GET /backtest/indicators/list
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 200))]
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = SignalExtremes, required = false))]
    pub params: Option<SignalParams>,
}

/// A column of the traded symbol's bars
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "SymbolSignal"))]
pub struct SymbolSignal {
    #[serde(rename = "type")]
    #[cfg_attr(feature = "openapi", schema(schema_with = symbol_kind, required = true))]
    pub kind: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = symbol_columns))]
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = SignalExtremes, required = false))]
    pub params: Option<SignalParams>,
}

/// A technical indicator with one period that `params.period` can set
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "TechnicalSignal"))]
pub struct TechnicalSignal {
    #[serde(rename = "type")]
    #[cfg_attr(feature = "openapi", schema(schema_with = technical_kind, required = true))]
    pub kind: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = periodic_technicals))]
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = SignalParams, required = false))]
    pub params: Option<SignalParams>,
}

/// A technical indicator whose parameters are fixed
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "FixedTechnicalSignal"))]
pub struct FixedTechnicalSignal {
    #[serde(rename = "type")]
    #[cfg_attr(feature = "openapi", schema(schema_with = technical_kind, required = true))]
    pub kind: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = fixed_technicals))]
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = SignalExtremes, required = false))]
    pub params: Option<SignalParams>,
}

/// A moving-average technical indicator (the `MA` comparison's signal)
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", schema(title = "MovingAverageSignal"))]
pub struct MovingAverageSignal {
    #[serde(rename = "type")]
    #[cfg_attr(feature = "openapi", schema(schema_with = technical_kind, required = true))]
    pub kind: Option<String>,
    #[cfg_attr(feature = "openapi", schema(schema_with = average_technicals))]
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = SignalParams, required = false))]
    pub params: Option<SignalParams>,
}

/// A signal a qualifier may transform: Sentiment or Symbol
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(untagged)]
pub enum QualifiableSignal {
    Sentiment(SentimentSignal),
    Symbol(SymbolSignal),
}

/// A signal of any category
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(untagged)]
pub enum AnySignal {
    Sentiment(SentimentSignal),
    Symbol(SymbolSignal),
    Technical(TechnicalSignal),
    FixedTechnical(FixedTechnicalSignal),
}

/// The shape a signal takes: by its `type`, and a technical's by whether
/// it has one period to set. A signal without `type` is a Sentiment's
/// shape here; its category is detected from the name when it is resolved
/// against the catalog (2.4).
pub(super) fn shape(s: SignalData) -> AnySignal {
    match s.category().as_deref() {
        Some("symbol") => AnySignal::Symbol(SymbolSignal {
            kind: s.kind,
            name: s.name,
            params: s.params,
        }),
        Some("technical") if signals::technical(&s.name).is_some_and(|t| !periodic(t)) => {
            AnySignal::FixedTechnical(FixedTechnicalSignal {
                kind: s.kind,
                name: s.name,
                params: s.params,
            })
        }
        Some("technical") => AnySignal::Technical(TechnicalSignal {
            kind: s.kind,
            name: s.name,
            params: s.params,
        }),
        _ => AnySignal::Sentiment(SentimentSignal {
            kind: s.kind,
            name: s.name,
            params: s.params,
        }),
    }
}

impl AnySignal {
    pub(super) fn of(s: SignalData) -> AnySignal {
        shape(s)
    }

    pub(super) fn data(&self) -> SignalData {
        match self {
            AnySignal::Sentiment(s) => signal_data!(s),
            AnySignal::Symbol(s) => signal_data!(s),
            AnySignal::Technical(s) => signal_data!(s),
            AnySignal::FixedTechnical(s) => signal_data!(s),
        }
    }
}

impl QualifiableSignal {
    /// A Symbol signal, or any other in a Sentiment's shape (a Technical
    /// one is refused with its qualifier when it is compiled).
    pub(super) fn of(s: SignalData) -> QualifiableSignal {
        match shape(s) {
            AnySignal::Symbol(s) => QualifiableSignal::Symbol(s),
            AnySignal::Sentiment(s) => QualifiableSignal::Sentiment(s),
            AnySignal::Technical(TechnicalSignal { kind, name, params })
            | AnySignal::FixedTechnical(FixedTechnicalSignal { kind, name, params }) => {
                QualifiableSignal::Sentiment(SentimentSignal { kind, name, params })
            }
        }
    }

    pub(super) fn data(&self) -> SignalData {
        match self {
            QualifiableSignal::Sentiment(s) => signal_data!(s),
            QualifiableSignal::Symbol(s) => signal_data!(s),
        }
    }
}

/// Indicators with one period a signal's `params.period` can set.
pub(super) fn periodic(t: &signals::TechEntry) -> bool {
    t.indicator.with_period(1).is_some()
}
