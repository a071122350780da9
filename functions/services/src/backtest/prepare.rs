//! A request made ready to run: parsed, every signal resolved against the
//! catalog and compiled, symbols checked, warnings collected.

use super::params::{self, ConditionSpec, FieldError, Parsed, RuleType};
use super::signals::{self, Compiled, Origin, Resolved};
use crate::Result;
use engine::rules::Op;
use platform::PortError;
use platform::marketdata::MarketData;
use serde_json::{Map, Value};

#[derive(Debug, Clone)]
pub struct PreparedCondition {
    pub spec: ConditionSpec,
    pub resolved: Resolved,
    pub compiled: Compiled,
}

#[derive(Debug, Clone)]
pub struct Block {
    pub rule_type: RuleType,
    pub delay_bars: usize,
    pub score_threshold: Option<usize>,
    pub signals_in_market: usize,
    pub conditions: Vec<PreparedCondition>,
}

#[derive(Debug, Clone)]
pub struct Prepared {
    pub parsed: Parsed,
    pub entry: Block,
    pub exit: Block,
    /// The latest date in the data: the default end date.
    pub latest: chrono::NaiveDate,
    pub warnings: Vec<String>,
}

impl Prepared {
    pub fn params(&self) -> &params::StrategyParams {
        &self.parsed.params
    }

    /// Defaults of 2.1 the service filled in, with the end date made concrete.
    pub fn defaults_applied(&self) -> Map<String, Value> {
        let mut d = self.parsed.defaults_applied();
        if self.parsed.params.end_date.is_none() {
            d.insert("end_date".into(), Value::String(self.latest.to_string()));
        }
        d
    }

    pub fn end_date(&self) -> chrono::NaiveDate {
        self.parsed.params.end_date.unwrap_or(self.latest)
    }
}

/// A rule block's conditions resolved against the catalog and compiled.
pub(crate) fn block(
    b: &params::RuleBlock,
    catalog: &signals::Catalog,
    csv: bool,
    warnings: &mut Vec<String>,
    frequency: &str,
) -> Result<Block> {
    let mut conditions = Vec::new();
    for spec in &b.conditions {
        let resolved = signals::resolve(spec, catalog, csv)?;
        let compiled = signals::compile(spec, &resolved)?;
        if matches!(compiled.op, Op::Ge | Op::Le) {
            warnings.push(format!("{}.rule.type_name: '{}' is outside the 16 operator codes; it is evaluated exactly and encoded by its symbol", spec.path, spec.rule.type_name));
        }
        if let Some(updated) = &resolved.updated
            && !updated.eq_ignore_ascii_case(frequency)
        {
            warnings.push(format!(
                "{}.signal: '{}' is updated {updated} but the backtest runs {frequency}; each bar uses the latest reading on or before its date (set frequency to {updated} to match)",
                spec.path, resolved.name
            ));
        }
        conditions.push(PreparedCondition {
            spec: spec.clone(),
            resolved,
            compiled,
        });
    }
    Ok(Block {
        rule_type: b.rule_type,
        delay_bars: b.delay_bars,
        score_threshold: b.score_threshold,
        signals_in_market: b.signals_in_market,
        conditions,
    })
}

/// Parses and resolves a request against the market data.
/// A mistake is [`crate::Error::Invalid`] naming its field; a failed
/// dependency is [`crate::Error::Port`].
pub async fn prepare(market: &dyn MarketData, body: &Value) -> Result<Prepared> {
    prepare_with(market, body, None).await
}

/// [`prepare`] with CSV mode's bars already read ([`params::parse_with`]).
pub async fn prepare_with(
    market: &dyn MarketData,
    body: &Value,
    upload: Option<std::sync::Arc<super::csv::Upload>>,
) -> Result<Prepared> {
    // A stored task names its upload beside the strategy's fields.
    let stripped;
    let body = match body.as_object() {
        Some(o) if upload.is_some() && o.contains_key(super::UPLOAD_FIELD) => {
            let mut o = o.clone();
            o.remove(super::UPLOAD_FIELD);
            stripped = Value::Object(o);
            &stripped
        }
        _ => body,
    };
    let parsed = params::parse_with(body, upload)?;
    let p = &parsed.params;
    let catalog = signals::Catalog::of(market.memo(), market.indicator_catalog().await?);
    let latest = market.latest_date().await?;
    let mut warnings = parsed.warnings.clone();
    let csv = p.csv.is_some();
    let frequency = p.frequency.as_str();
    let entry = block(&p.entry, &catalog, csv, &mut warnings, frequency)?;
    let exit = block(&p.exit, &catalog, csv, &mut warnings, frequency)?;
    // A missing symbol or benchmark is an unknown name (404); missing bars
    // of another kind make the request invalid (400).
    let exists = |r: Result<(), PortError>, field: String, missing: String| match r {
        Ok(()) => Ok(()),
        Err(PortError::NotFound(_)) if field == "symbol" || field == "benchmark" => {
            Err(crate::Error::Unknown(FieldError::new(field, missing)))
        }
        Err(PortError::NotFound(_)) => Err(FieldError::new(field, missing).into()),
        Err(PortError::Invalid(m)) => Err(FieldError::new(field, m).into()),
        Err(e) => Err(crate::Error::Port(e)),
    };
    if !csv {
        exists(
            market.daily(&p.symbol).await.map(|_| ()),
            "symbol".into(),
            format!("'{}' is not a known symbol", p.symbol),
        )?;
        if p.frequency == params::BtFrequency::Hourly {
            exists(
                market.intraday(&p.symbol).await.map(|_| ()),
                "frequency".into(),
                format!("Hourly needs 30-minute bars, and '{}' has none", p.symbol),
            )?;
        }
    } else if p.frequency != params::BtFrequency::Daily {
        warnings.push(format!(
            "csv_data rows are used as given; frequency {frequency} only sets the annualisation"
        ));
    }
    exists(
        market.daily(&p.benchmark).await.map(|_| ()),
        "benchmark".into(),
        format!("'{}' is not a known symbol", p.benchmark),
    )?;
    for c in entry.conditions.iter().chain(&exit.conditions) {
        if let Origin::Indicator(code) = &c.resolved.origin {
            exists(
                market.indicator_series(code).await.map(|_| ()),
                format!("{}.signal.name", c.spec.path),
                format!("indicator '{code}' has no readings"),
            )?;
        }
    }
    Ok(Prepared {
        parsed,
        entry,
        exit,
        latest,
        warnings,
    })
}
