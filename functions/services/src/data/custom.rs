//! Custom indicators (4.6): an account's definitions, and their calculation
//! from two indicators it may read.

use super::format::{push_key, push_num, push_str};
use super::{Readable, catalog, indicator, series};
use crate::error::{Error, Result};
use platform::accounts::{Account, CustomIndicator};
use platform::marketdata::{IndicatorSeries, MarketData};
use std::sync::Arc;

/// A stored definition, checked: what to combine, how, at which frequency.
#[derive(Debug, Clone)]
pub struct Calculation {
    pub url: String,
    how: engine::custom::Combine,
    freq: engine::Frequency,
    ma: usize,
    inputs: [String; 2],
}

/// The account's definition named `url`, checked; a stored value that cannot
/// be calculated is 400 naming it.
pub fn definition(account: &Account, url: &str) -> Result<Calculation> {
    let def = account
        .custom_indicators
        .iter()
        .find(|c| c.url == url)
        .ok_or_else(|| Error::NotFound(format!("custom indicator '{url}' not found")))?;
    let stored = |what: &str, why: String| {
        Error::invalid("url", format!("custom indicator '{url}': {what} {why}"))
    };
    let how = engine::custom::Combine::parse(&def.calculate).ok_or_else(|| {
        stored(
            "calculate",
            format!(
                "'{}' is not ratio, difference, sum, product or average",
                def.calculate
            ),
        )
    })?;
    let freq = match def.timeframe.to_ascii_lowercase().as_str() {
        "daily" => engine::Frequency::Daily,
        "weekly" => engine::Frequency::Weekly,
        "monthly" => engine::Frequency::Monthly,
        other => {
            return Err(stored(
                "timeframe",
                format!("'{other}' is not Daily, Weekly or Monthly"),
            ));
        }
    };
    let ma = def
        .ma
        .trim()
        .parse()
        .map_err(|_| stored("ma", format!("'{}' is not a whole number", def.ma)))?;
    Ok(Calculation {
        url: url.to_string(),
        how,
        freq,
        ma,
        inputs: [def.indicator_1_url.clone(), def.indicator_2_url.clone()],
    })
}

/// The two input series, if the account may read both (405 otherwise).
pub async fn inputs(
    market: &dyn MarketData,
    account: &Account,
    c: &Calculation,
) -> Result<[Arc<IndicatorSeries>; 2]> {
    let cat = catalog(market).await?;
    indicator(account, &cat, &c.inputs[0])?;
    indicator(account, &cat, &c.inputs[1])?;
    Ok([
        series(market, &c.inputs[0]).await?,
        series(market, &c.inputs[1]).await?,
    ])
}

/// The calculated series over the inputs' whole histories (its averages
/// need them); engine work, for the blocking pool.
pub fn calculate(c: &Calculation, [a, b]: &[Arc<IndicatorSeries>; 2]) -> IndicatorSeries {
    let (time, close) = engine::custom::calculate(
        (&a.time, &a.close),
        (&b.time, &b.close),
        c.how,
        c.freq,
        c.ma,
    );
    let n = time.len();
    IndicatorSeries {
        time,
        close,
        sentiment: vec![None; n],
    }
}

/// `[{"DT", "close", "symbol"}]` of the readings the account may see.
pub fn answer(account: &Account, url: &str, calculated: IndicatorSeries) -> String {
    let r = Readable::new(account, Arc::new(calculated));
    let s = r.series();
    let mut out = String::with_capacity(r.all().len() * 70 + 2);
    out.push('[');
    for (k, i) in r.all().range().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str("{\"DT\":\"");
        push_key(&mut out, s.time[i]);
        out.push_str("\",\"close\":");
        push_num(&mut out, s.close[i]);
        out.push_str(",\"symbol\":");
        push_str(&mut out, url);
        out.push('}');
    }
    out.push(']');
    out
}

/// A definition as `getUserIndicators` lists it.
pub fn listed(c: &CustomIndicator) -> serde_json::Value {
    serde_json::json!({
        "indicator_1_url": c.indicator_1_url,
        "indicator_2_url": c.indicator_2_url,
        "name": c.name,
        "url": c.url,
        "upper_extreme_value": c.upper_extreme_value,
        "lower_extreme_value": c.lower_extreme_value,
        "timeframe": c.timeframe,
        "ma": c.ma,
        "calculate": c.calculate,
        "create_date": c.create_date.format("%Y-%m-%dT%H:%M:%S%.6f").to_string(),
        "indicator_weight": null,
        "mul_indicator": null,
        "combine_type": null,
        "benchmark": null,
        "next_process": null,
        "tech_code": null,
    })
}
