//! A batch's strategies checked before anything is queued: each one
//! prepared, a failure named where the caller made it (a list's index, a
//! grid's path and value), and a grid whose points repeat a strategy
//! refused.

use super::Expanded;
use crate::backtest::prepare::prepare;
use crate::{Error, FieldError, Result};
use platform::marketdata::MarketData;
use serde_json::{Map, Value};

/// Grids of up to this many points have every point checked; a larger one
/// its probes ([`super::Points::probes`]: every value of every path, the
/// other paths at their first, and the last point), so a million-point
/// grid is checked in the time of its lists; a point that still fails runs
/// as its row's error, as a list batch's strategy would.
pub const CHECK_EVERY: usize = 20_000;

/// Checks every strategy (a grid past [`CHECK_EVERY`] points: its probes);
/// the first invalid one names its index and field, or for a grid the path
/// and value that made it invalid. A grid whose points are not all
/// different strategies is refused, naming the path that changes nothing:
/// its rows would repeat one strategy and the overfitting statistics would
/// count the copies as trials.
pub async fn check(market: &dyn MarketData, e: &Expanded) -> Result<Defaults> {
    if e.portfolio {
        return check_portfolios(market, e).await;
    }
    // Fingerprint hash -> the first point with it.
    let mut seen: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    let mut defaults = Defaults::default();
    let points: Vec<usize> = match e.base {
        Some(_) if e.len() > CHECK_EVERY => e.varied.probes(),
        _ => (0..e.len()).collect(),
    };
    let probed = points.len() < e.len();
    for i in points {
        let s = e.strategy(i)?;
        let prepared = prepare(market, &s).await.map_err(|err| match err {
            Error::Invalid(f) => e.locate(i, f).into(),
            Error::Unknown(f) => Error::Unknown(e.locate(i, f)),
            other => other,
        })?;
        defaults.add(&prepared);
        if e.base.is_none() {
            continue;
        }
        let print = fingerprint(&prepared);
        let Some(&j) = seen.get(&hash(&print)) else {
            seen.insert(hash(&print), i);
            continue;
        };
        // Equal hashes: compare the fingerprints themselves.
        let earlier = prepare(market, &e.strategy(j)?).await?;
        if fingerprint(&earlier) == print {
            return Err(e.repeated(j, i).into());
        }
    }
    if probed {
        defaults.stand_for(e.len());
    }
    Ok(defaults)
}

/// [`check`] for a grid of portfolios: each point prepared as
/// `POST /backtest/portfolio` prepares it (the universe read once), and
/// two points that are one portfolio refused.
async fn check_portfolios(market: &dyn MarketData, e: &Expanded) -> Result<Defaults> {
    use crate::backtest::portfolio::{Reuse, prepare_with};
    let mut reuse = Reuse::default();
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut defaults = Defaults::default();
    let points: Vec<usize> = if e.len() > CHECK_EVERY {
        e.varied.probes()
    } else {
        (0..e.len()).collect()
    };
    for i in points {
        let p = prepare_with(market, &e.strategy(i)?, &mut reuse)
            .await
            .map_err(|err| match err {
                Error::Invalid(f) => e.locate(i, f).into(),
                Error::Unknown(f) => Error::Unknown(e.locate(i, f)),
                other => other,
            })?;
        defaults.applied.extend(p.defaults.clone());
        defaults.strategies += 1;
        // What the run depends on: the typed request, its name aside.
        let mut params = p.params;
        params.name = None;
        let print = serde_json::to_string(&params).map_err(platform::PortError::internal)?;
        if let Some(&j) = seen.get(&print) {
            return Err(e.repeated(j, i).into());
        }
        seen.insert(print, i);
    }
    Ok(defaults)
}

/// The defaults of 2.1 a batch's strategies were given, and how many
/// strategies run with the default maximum holding.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Defaults {
    /// Each default applied to at least one strategy (the end date aside:
    /// it is the latest date in the data).
    pub applied: Map<String, Value>,
    /// Strategies that left `risk_control` out.
    pub holding: usize,
    pub strategies: usize,
}

impl Defaults {
    fn add(&mut self, p: &crate::backtest::prepare::Prepared) {
        let applied = p.parsed.defaults_applied();
        self.holding += usize::from(applied.contains_key("risk_control"));
        self.strategies += 1;
        self.applied.extend(applied);
    }

    /// Probes' defaults made to stand for a grid's `points`: a default the
    /// probes all took, every point took (the path that would change it
    /// is not varied); one only some took, about as many.
    fn stand_for(&mut self, points: usize) {
        let probes = self.strategies.max(1);
        self.holding = if self.holding == probes {
            points
        } else {
            (self.holding as f64 / probes as f64 * points as f64).round() as usize
        };
        self.strategies = points;
    }

    /// The warning a batch carries when the default maximum holding is in
    /// force: it closes every trade of those strategies after 21 bars.
    pub fn warnings(&self) -> Vec<String> {
        let Some(default) = self.applied.get("risk_control").and_then(Value::as_str) else {
            return Vec::new();
        };
        vec![format!(
            "risk_control was not sent for {} of {} strategies, and its default '{default}' closes their trades at the maximum holding; send risk_control '//' for no risk control, or the limits you mean",
            self.holding, self.strategies
        )]
    }
}

fn hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// What a strategy's backtest depends on: its bars, account settings and
/// compiled rules (not its name, the fields without effect, or a rule field
/// its comparison does not read).
fn fingerprint(p: &crate::backtest::prepare::Prepared) -> String {
    let s = p.params();
    let block = |b: &crate::backtest::prepare::Block| {
        let conditions: Vec<String> = b
            .conditions
            .iter()
            .map(|c| {
                let r = &c.resolved;
                format!(
                    "{:?}/{}/{}/{:?}/{:?}",
                    r.origin, r.optimism, r.pessimism, r.category, c.compiled
                )
            })
            .collect();
        format!(
            "{:?}/{}/{:?}/{}/{conditions:?}",
            b.rule_type, b.delay_bars, b.score_threshold, b.signals_in_market
        )
    };
    let csv = s.csv.as_ref().map(|u| std::sync::Arc::as_ptr(u) as usize);
    format!(
        "{}|{}|{:?}|{:?}|{}|{}|{}|{}|{}|{}|{:?}|{:?}|{csv:?}|{}|{}",
        s.symbol,
        s.benchmark,
        s.direction,
        s.frequency,
        s.capital,
        s.capital_alloc,
        s.commission,
        s.slippage,
        s.start_date,
        p.end_date(),
        s.trade_price,
        s.risk,
        block(&p.entry),
        block(&p.exit),
    )
}

impl Expanded {
    /// A strategy's mistake, named where the caller made it: a list's
    /// `strategies[i].field`; a grid's `grid.<path>` with the value that
    /// made it invalid, or `strategy.field` when the base itself is wrong.
    fn locate(&self, i: usize, f: FieldError) -> FieldError {
        if self.base.is_none() {
            return f.within(&format!("strategies[{i}]"));
        }
        let point = self.varied.get(i);
        for (key, value) in &point {
            for path in key.split(',').map(str::trim) {
                let listed = bracketed(path);
                let inside = f
                    .field
                    .strip_prefix(path)
                    .or_else(|| f.field.strip_prefix(listed.as_str()));
                let reason = match inside {
                    Some("") if f.reason.starts_with("unknown field") => f.reason.clone(),
                    Some("") => format!("the value {}: {}", sent(value), f.reason),
                    Some(rest) if rest.starts_with(['.', '[']) => {
                        format!("the value {}: {}: {}", sent(value), f.field, f.reason)
                    }
                    _ => continue,
                };
                return FieldError::new(format!("grid.{key}"), reason);
            }
        }
        let root = if self.portfolio {
            "portfolio"
        } else {
            "strategy"
        };
        if point.is_empty() {
            return f.within(root);
        }
        let point = serde_json::to_string(&point).unwrap_or_default();
        FieldError::new(
            format!("{root}.{}", f.field),
            format!("{} (at the grid's point {point})", f.reason),
        )
    }

    /// Points `j` and `i` (`j < i`) of a grid are one strategy: the first
    /// path whose values differ between them changes nothing.
    fn repeated(&self, j: usize, i: usize) -> FieldError {
        let (a, b) = (&self.varied.get(j), &self.varied.get(i));
        let key = a
            .iter()
            .find(|(k, v)| b.get(*k) != Some(*v))
            .map(|(k, _)| k.clone())
            .unwrap_or_default();
        FieldError::new(
            format!("grid.{key}"),
            format!(
                "the values {} and {} give the same strategy (points {j} and {i} of the grid): the backtest does not read this path here, so its rows would repeat one strategy",
                sent(&a[&key]),
                sent(&b[&key]),
            ),
        )
    }
}

/// A grid path as fields are named in errors: a list's index in brackets
/// (`universe.1` is `universe[1]`).
fn bracketed(path: &str) -> String {
    let mut out = String::new();
    for segment in path.split('.') {
        if !out.is_empty() && segment.parse::<usize>().is_ok() {
            out.push_str(&format!("[{segment}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(segment);
        }
    }
    out
}

/// A value as the caller wrote it, for messages.
pub(super) fn sent(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{s}'"),
        other => other.to_string(),
    }
}
