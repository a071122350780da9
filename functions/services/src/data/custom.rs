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
        .ok_or_else(|| {
            Error::Unknown(crate::FieldError::new(
                "url",
                format!("'{url}' is not a known custom indicator"),
            ))
        })?;
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

/// A definition as `getUserIndicators` lists it (4.6); the spec's record
/// fields this service does not use are always null.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UserIndicator {
    pub indicator_1_url: String,
    pub indicator_2_url: String,
    pub name: String,
    /// The code `getUserIndicatorData?url=` takes.
    pub url: String,
    pub upper_extreme_value: Option<f64>,
    pub lower_extreme_value: Option<f64>,
    /// `Daily`, `Weekly` or `Monthly`.
    pub timeframe: String,
    /// Readings in the simple moving average, `0` for none.
    pub ma: String,
    /// `ratio`, `difference`, `sum`, `product` or `average`.
    pub calculate: String,
    /// `YYYY-MM-DDTHH:MM:SS.ffffff`, UTC.
    pub create_date: String,
    pub indicator_weight: Option<String>,
    pub mul_indicator: Option<String>,
    pub combine_type: Option<String>,
    pub benchmark: Option<String>,
    pub next_process: Option<String>,
    pub tech_code: Option<String>,
}

impl From<&CustomIndicator> for UserIndicator {
    fn from(c: &CustomIndicator) -> Self {
        let finite = |x: f64| x.is_finite().then_some(x);
        UserIndicator {
            indicator_1_url: c.indicator_1_url.clone(),
            indicator_2_url: c.indicator_2_url.clone(),
            name: c.name.clone(),
            url: c.url.clone(),
            upper_extreme_value: finite(c.upper_extreme_value),
            lower_extreme_value: finite(c.lower_extreme_value),
            timeframe: c.timeframe.clone(),
            ma: c.ma.clone(),
            calculate: c.calculate.clone(),
            create_date: c.create_date.format("%Y-%m-%dT%H:%M:%S%.6f").to_string(),
            indicator_weight: None,
            mul_indicator: None,
            combine_type: None,
            benchmark: None,
            next_process: None,
            tech_code: None,
        }
    }
}

/// The account's definitions, newest first unless `oldest_first`.
pub fn user_indicators(account: &Account, oldest_first: bool) -> Vec<UserIndicator> {
    let mut list: Vec<&CustomIndicator> = account.custom_indicators.iter().collect();
    if oldest_first {
        list.sort_by_key(|c| c.create_date);
    } else {
        list.sort_by_key(|c| std::cmp::Reverse(c.create_date));
    }
    list.into_iter().map(UserIndicator::from).collect()
}
