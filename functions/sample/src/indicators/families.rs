//! The indicator families a spec-scale set adds to each stock
//! (docs/sample-data.md#spec-scale): sentiment readings and other 0-100
//! series, named from fixed lists and numbered once a list is used up.

use super::{Generated, meta, optix, with_levels};
use crate::rng;
use engine::Bars;

/// Sentiment readings (type `optix`) a spec-scale set adds to a stock.
const SENTIMENT_FAMILIES: [&str; 6] = [
    "Options Sentiment",
    "News Sentiment",
    "Social Sentiment",
    "Analyst Sentiment",
    "Insider Sentiment",
    "Short Interest Sentiment",
];
/// Other indicators (type `other`, 0-100) it adds.
const OTHER_FAMILIES: [&str; 10] = [
    "Momentum Breadth",
    "Volume Pressure",
    "Volatility Regime",
    "Money Flow",
    "Relative Strength Rank",
    "Accumulation",
    "Earnings Revision",
    "Seasonal Tendency",
    "Mean Reversion",
    "Liquidity",
];

/// The `n`-th name of a family list, numbered once the list is used up.
fn family_name(list: &[&str], n: usize) -> (String, String) {
    let base = list[n % list.len()];
    let round = n / list.len();
    let code = base
        .split(' ')
        .map(|w| w[..1].to_ascii_uppercase())
        .collect::<String>();
    if round == 0 {
        (base.to_string(), code)
    } else {
        (
            format!("{base} {}", round + 1),
            format!("{code}{}", round + 1),
        )
    }
}

/// A spec-scale set's extra indicators of one stock: `counts.0` sentiment
/// readings and `counts.1` others, each a daily series over the stock's
/// sessions drawn like the Optix from its own stream.
pub fn families(
    seed: u64,
    symbol: &str,
    name: &str,
    group: &str,
    bars: &Bars,
    counts: (usize, usize),
) -> Vec<Generated> {
    let mut out = Vec::with_capacity(counts.0 + counts.1);
    for (kind, list, n, contrary) in [
        ("optix", &SENTIMENT_FAMILIES[..], counts.0, true),
        ("other", &OTHER_FAMILIES[..], counts.1, false),
    ] {
        for k in 0..n {
            let (family, code) = family_name(list, k);
            let url = format!("{symbol}_{code}");
            let mut rng = rng::stream(seed, &format!("family-{url}"));
            let values = optix(&mut rng, bars);
            let last = *values.last().unwrap_or(&50.0);
            out.push(Generated {
                meta: meta(
                    &url,
                    &format!("{name} {family}"),
                    symbol,
                    kind,
                    "Daily",
                    &format!("{family} of {name}, 0-100 (spec-scale sample family)."),
                    75.0,
                    25.0,
                    contrary,
                    true,
                    &[group],
                    "",
                    last,
                ),
                series: with_levels(bars.time.clone(), values, 75.0, 25.0),
                intraday: None,
            });
        }
    }
    out
}
