//! A grid's points prepared as typed values: the base strategy parsed and
//! resolved once, each point's values set on the typed fields they fill.
//!
//! Written into the base's JSON and parsed whole, a point's strategy cost a
//! quarter of a million-strategy grid's CPU. Typed here are the leaves whose
//! reading depends on their own value alone: a condition's
//! `signal.params.period`, `rule.period` and `rule.comparison_value`, and
//! `risk_control`, each read by the checks the parser applies to it
//! (`values::count`, `text`, `number`, `params::parse_risk`). The blocks a
//! point changes are resolved and compiled again as `prepare` does. A grid
//! with any other path goes the JSON way; so does a point whose value the
//! typed reading refuses, where the parser names the error as before.

use super::super::params::{self, ConditionSpec, StrategyParams};
use super::super::prepare::{self, Block, Prepared};
use super::super::run::Ready;
use super::super::signals::{Catalog, Origin};
use super::super::values::{count, number, text};
use platform::PortError;
use platform::marketdata::MarketData;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// A typed leaf of a condition.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Leaf {
    SignalPeriod,
    RulePeriod,
    ComparisonValue,
}

/// The leaves a condition's grid path may end in, after the condition's own path.
const LEAVES: [(&str, Leaf); 3] = [
    ("signal.params.period", Leaf::SignalPeriod),
    ("rule.period", Leaf::RulePeriod),
    ("rule.comparison_value", Leaf::ComparisonValue),
];

/// Where a grid path's value goes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Target {
    Risk,
    Condition {
        exit: bool,
        index: usize,
        leaf: Leaf,
    },
}

impl Leaf {
    /// Sets the leaf as the parser reads it (`request::signal_shapes` and
    /// `rule_shapes`); `None` where it would refuse the value or read it as
    /// absent.
    fn set(self, c: &mut ConditionSpec, v: &Value) -> Option<()> {
        match self {
            Leaf::SignalPeriod => {
                let n = count(v, "").ok().filter(|n| *n > 0)?;
                c.signal.period = Some(n);
            }
            Leaf::RulePeriod => {
                if v.as_str() == Some("") {
                    return None;
                }
                let n = count(v, "").ok().filter(|n| *n > 0)?;
                c.rule.period = Some(n);
            }
            Leaf::ComparisonValue => {
                let t = text(v, "").ok()?;
                if !t.trim().is_empty() {
                    number(&Value::String(t.clone()), "").ok()?;
                }
                c.rule.comparison_value = Some(t);
            }
        }
        Some(())
    }
}

/// A point's strategy: the base's with the point's leaves set.
pub struct Point {
    pub params: StrategyParams,
    pub entry: Block,
    pub exit: Block,
    end: chrono::NaiveDate,
}

impl Point {
    pub fn ready(&self) -> Ready<'_> {
        Ready {
            params: &self.params,
            entry: &self.entry,
            exit: &self.exit,
            end: self.params.end_date.unwrap_or(self.end),
        }
    }
}

/// A grid's base, prepared, and where each of its keys' paths goes.
pub struct TypedGrid {
    base: Prepared,
    catalog: Arc<Catalog>,
    keys: HashMap<String, Vec<Target>>,
    /// The indicators whose readings the base's preparation found.
    indicators: HashSet<String>,
}

impl TypedGrid {
    /// The grid of `base` over `keys` (each a grid key, its linked paths
    /// comma-separated), or `None` where it goes the JSON way: a base that
    /// does not prepare, or a path that is not a typed leaf.
    pub async fn new<'a>(
        market: &dyn MarketData,
        base: &Value,
        keys: impl IntoIterator<Item = &'a String>,
    ) -> Result<Option<TypedGrid>, PortError> {
        let prepared = match prepare::prepare(market, base).await {
            Ok(p) => p,
            Err(crate::Error::Port(e @ PortError::Unavailable { .. })) => return Err(e),
            Err(_) => return Ok(None),
        };
        let mut targets = HashMap::new();
        for key in keys {
            let paths: Option<Vec<Target>> = key
                .split(',')
                .map(|p| target(base, prepared.params(), p.trim()))
                .collect();
            let Some(paths) = paths else {
                return Ok(None);
            };
            targets.insert(key.clone(), paths);
        }
        let catalog = Catalog::of(market.memo(), market.indicator_catalog().await?);
        let indicators = codes(&prepared.entry)
            .chain(codes(&prepared.exit))
            .cloned()
            .collect();
        Ok(Some(TypedGrid {
            base: prepared,
            catalog,
            keys: targets,
            indicators,
        }))
    }

    /// The point with `varied`'s values, or `None` where it goes the JSON
    /// way (a key this grid does not know, a value the typed reading
    /// refuses, a condition that no longer resolves or reads an indicator
    /// the base does not).
    pub fn point(&self, varied: &Map<String, Value>) -> Option<Point> {
        let mut params = self.base.params().clone();
        let (mut entry, mut exit) = (false, false);
        for (key, v) in varied {
            for t in self.keys.get(key)? {
                set(&mut params, *t, v)?;
                match t {
                    Target::Condition { exit: true, .. } => exit = true,
                    Target::Condition { exit: false, .. } => entry = true,
                    Target::Risk => {}
                }
            }
        }
        let (csv, frequency) = (params.csv.is_some(), params.frequency.as_str());
        let mut warnings = Vec::new();
        let mut again = |changed: bool, b: &params::RuleBlock, was: &Block| match changed {
            true => prepare::block(b, &self.catalog, csv, &mut warnings, frequency).ok(),
            false => Some(was.clone()),
        };
        let entry = again(entry, &params.entry, &self.base.entry)?;
        let exit = again(exit, &params.exit, &self.base.exit)?;
        if codes(&entry)
            .chain(codes(&exit))
            .any(|c| !self.indicators.contains(c))
        {
            return None;
        }
        Some(Point {
            params,
            entry,
            exit,
            end: self.base.latest,
        })
    }
}

/// Sets the value at `t` as the parser would read it there; `None` where it
/// would refuse it or read it as absent.
fn set(params: &mut StrategyParams, t: Target, v: &Value) -> Option<()> {
    match t {
        Target::Risk => {
            params.risk = params::parse_risk(&text(v, "").ok()?).ok()?;
            Some(())
        }
        Target::Condition { exit, index, leaf } => {
            let block = if exit {
                &mut params.exit
            } else {
                &mut params.entry
            };
            leaf.set(&mut block.conditions[index], v)
        }
    }
}

fn codes(b: &Block) -> impl Iterator<Item = &String> {
    b.conditions
        .iter()
        .filter_map(|c| match &c.resolved.origin {
            Origin::Indicator(code) => Some(code),
            _ => None,
        })
}

/// Where `path` goes in the base's typed strategy, if it is a typed leaf
/// that the JSON way would set in place: every object and list item above
/// the leaf is in the base as sent (none would be made), and the condition
/// it names is the one the parser read there.
fn target(base: &Value, params: &StrategyParams, path: &str) -> Option<Target> {
    if path == "risk_control" {
        return base.is_object().then_some(Target::Risk);
    }
    let (condition, leaf) = LEAVES.iter().find_map(|(tail, leaf)| {
        path.strip_suffix(tail)?
            .strip_suffix('.')
            .map(|c| (c, *leaf))
    })?;
    let mut at = base;
    let mut parents: Vec<&str> = path.split('.').collect();
    parents.pop();
    for part in parents {
        at = match at {
            Value::Object(o) => o.get(part)?,
            Value::Array(a) => a.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    if !at.is_object() {
        return None;
    }
    [(false, &params.entry), (true, &params.exit)]
        .into_iter()
        .find_map(|(exit, block)| {
            let index = block
                .conditions
                .iter()
                .position(|c| dotted(&c.path) == condition)?;
            Some(Target::Condition { exit, index, leaf })
        })
}

/// A condition's path as a grid writes it: `entry.condition[1]` is
/// `entry.condition.1`.
fn dotted(path: &str) -> String {
    path.replace('[', ".").replace(']', "")
}

#[cfg(test)]
mod tests;
