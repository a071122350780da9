//! CloudWatch Embedded Metric Format documents read as CloudWatch reads
//! them: every document among a function's stdout lines checked against
//! the specification (the `_aws` metadata, dimension sets naming string
//! members, metric names naming numbers, units from CloudWatch's list),
//! then flattened to one datum per metric.

use serde_json::Value;
use std::collections::BTreeMap;

/// CloudWatch's units (MetricDatum.Unit).
const UNITS: &[&str] = &[
    "Seconds",
    "Microseconds",
    "Milliseconds",
    "Bytes",
    "Kilobytes",
    "Megabytes",
    "Gigabytes",
    "Terabytes",
    "Bits",
    "Kilobits",
    "Megabits",
    "Gigabits",
    "Terabits",
    "Percent",
    "Count",
    "Bytes/Second",
    "Kilobytes/Second",
    "Megabytes/Second",
    "Gigabytes/Second",
    "Terabytes/Second",
    "Bits/Second",
    "Kilobits/Second",
    "Megabits/Second",
    "Gigabits/Second",
    "Terabits/Second",
    "Count/Second",
    "None",
];

/// One metric of one document.
#[derive(Debug, Clone)]
pub struct Datum {
    pub namespace: String,
    pub name: String,
    pub unit: Option<String>,
    pub dimensions: BTreeMap<String, String>,
    pub values: Vec<f64>,
}

/// Every EMF document among `lines` (others are skipped), checked; panics
/// naming the rule a document breaks.
pub fn read(lines: &[String]) -> Vec<Datum> {
    let mut out = Vec::new();
    for line in lines {
        let Ok(doc) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some(aws) = doc.get("_aws") else { continue };
        let fail = |why: &str| -> ! { panic!("invalid EMF ({why}): {line}") };
        let ts = aws["Timestamp"]
            .as_u64()
            .unwrap_or_else(|| fail("Timestamp"));
        let now = chrono::Utc::now().timestamp_millis() as u64;
        if ts + 3_600_000 < now || ts > now + 60_000 {
            fail("Timestamp not within the last hour");
        }
        let directives = aws["CloudWatchMetrics"]
            .as_array()
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| fail("CloudWatchMetrics"));
        for d in directives {
            let ns = d["Namespace"]
                .as_str()
                .filter(|n| !n.is_empty() && n.len() <= 255)
                .unwrap_or_else(|| fail("Namespace"));
            let sets = d["Dimensions"]
                .as_array()
                .unwrap_or_else(|| fail("Dimensions"));
            let mut dimensions = BTreeMap::new();
            for set in sets {
                let set = set
                    .as_array()
                    .filter(|s| s.len() <= 30)
                    .unwrap_or_else(|| fail("DimensionSet"));
                for name in set {
                    let name = name.as_str().unwrap_or_else(|| fail("dimension name"));
                    let value = doc[name]
                        .as_str()
                        .filter(|v| !v.is_empty() && v.len() <= 1024)
                        .unwrap_or_else(|| fail("a dimension names no string member"));
                    dimensions.insert(name.to_string(), value.to_string());
                }
            }
            let metrics = d["Metrics"]
                .as_array()
                .filter(|m| m.len() <= 100)
                .unwrap_or_else(|| fail("Metrics"));
            for m in metrics {
                let name = m["Name"]
                    .as_str()
                    .filter(|n| !n.is_empty() && n.len() <= 1024)
                    .unwrap_or_else(|| fail("metric Name"));
                let unit = match &m["Unit"] {
                    Value::Null => None,
                    Value::String(u) if UNITS.contains(&u.as_str()) => Some(u.clone()),
                    _ => fail("Unit"),
                };
                let values = match &doc[name] {
                    Value::Number(n) => vec![n.as_f64().unwrap()],
                    Value::Array(a) if !a.is_empty() && a.len() <= 100 => a
                        .iter()
                        .map(|v| {
                            v.as_f64()
                                .unwrap_or_else(|| fail("a value is not a number"))
                        })
                        .collect(),
                    _ => fail("a metric names no number"),
                };
                out.push(Datum {
                    namespace: ns.to_string(),
                    name: name.to_string(),
                    unit,
                    dimensions: dimensions.clone(),
                    values,
                });
            }
        }
    }
    out
}

fn matching<'a>(
    data: &'a [Datum],
    name: &'a str,
    dims: &'a [(&str, &str)],
) -> impl Iterator<Item = &'a Datum> {
    data.iter()
        .filter(move |d| d.name == name)
        .filter(move |d| {
            dims.iter()
                .all(|(k, v)| d.dimensions.get(*k).map(String::as_str) == Some(*v))
        })
}

/// The sum of the values of `name` whose dimensions include `dims` (a counter's total).
pub fn sum(data: &[Datum], name: &str, dims: &[(&str, &str)]) -> f64 {
    matching(data, name, dims).flat_map(|d| &d.values).sum()
}

/// How many values of `name` there are (a histogram's observations).
pub fn count(data: &[Datum], name: &str, dims: &[(&str, &str)]) -> usize {
    matching(data, name, dims).map(|d| d.values.len()).sum()
}

/// The last value of `name` (a gauge's latest).
pub fn last(data: &[Datum], name: &str, dims: &[(&str, &str)]) -> Option<f64> {
    matching(data, name, dims)
        .last()
        .and_then(|d| d.values.last().copied())
}
