//! Research reports and the FOMC decision-day table.

use super::rng;
use super::schema;
use super::table::TableBuilder;
use crate::row;
use arrow_array::RecordBatch;
use chrono::{Datelike, Duration, NaiveDate, Weekday};
use engine::calendar::{last_weekday, nth_weekday};

pub const REPORT_TYPES: [(&str, &str); 4] = [
    ("quantedge", "QuantEdge"),
    ("modeledge", "ModelEdge"),
    ("sentimentedge", "SentimentEdge"),
    ("tradingedge", "TradingEdge"),
];

const TOPICS: [&str; 10] = [
    "sentiment extremes in equities",
    "seasonal tendencies into month end",
    "breadth divergences",
    "the bond market's signal for stocks",
    "commodity hedger positioning",
    "volatility regimes",
    "sector rotation",
    "earnings season drift",
    "the dollar and emerging markets",
    "trend persistence after breakouts",
];

/// Twenty reports per type, one type a week in turn, newest on the latest date.
pub fn reports(seed: u64, latest: NaiveDate) -> RecordBatch {
    let mut rng = rng::stream(seed, "reports");
    let mut t = TableBuilder::new(schema::REPORTS);
    for k in 0..80 {
        let (kind, name) = REPORT_TYPES[k % 4];
        let date = latest - Duration::days(2 * k as i64);
        let topic = TOPICS[rng::index(&mut rng, TOPICS.len())];
        let title = format!("{name}: {}{}", topic[..1].to_uppercase(), &topic[1..]);
        let body = format!(
            "<h2>{title}</h2><p>This week's {name} note looks at {topic}. We review the current readings, how similar setups resolved in the past, and what would change our view.</p><ul><li>Current reading versus its 3-year range</li><li>Forward returns after similar readings</li><li>What we are watching next</li></ul>"
        );
        let slug: String = title
            .to_lowercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let author = ["Research Desk", "Quant Team", "Strategy Group"][rng::index(&mut rng, 3)];
        t.push(row![
            kind,
            title,
            body,
            author,
            format!(
                "/reports/{kind}/{}-{}",
                date.format("%Y%m%d"),
                slug.trim_matches('-')
            ),
            date
        ]);
    }
    t.finish()
}

/// Eight scheduled decision days a year in the usual pattern (late January,
/// mid March, early May, mid June, late July, mid September, early November,
/// mid December), through the end of the latest year. Import the official
/// table to replace it.
pub fn fomc_dates(first_year: i32, latest: NaiveDate) -> RecordBatch {
    let mut t = TableBuilder::new(schema::FOMC_DATES);
    for y in first_year..=latest.year() {
        let wed = Weekday::Wed;
        for d in [
            last_weekday(y, 1, wed),
            nth_weekday(y, 3, wed, 3),
            nth_weekday(y, 5, wed, 1),
            nth_weekday(y, 6, wed, 3),
            last_weekday(y, 7, wed),
            nth_weekday(y, 9, wed, 3),
            nth_weekday(y, 11, wed, 1),
            nth_weekday(y, 12, wed, 2),
        ] {
            t.push(row![d, "scheduled"]);
        }
    }
    t.finish()
}
