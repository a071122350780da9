//! NYSE sessions and holiday rules for 2000-2030 equal pandas-market-calendars'.

use chrono::NaiveDate;
use engine::calendar::{Holiday, holidays, sessions};
use serde_json::{Value, json};

fn dates(v: &Value) -> Vec<NaiveDate> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn nyse_calendar_matches_pandas_market_calendars() {
    let r = tests::reference::run(
        "nyse_calendar.py",
        &json!({"start": "2000-01-01", "end": "2030-12-31"}),
    );
    let (start, end) = (
        NaiveDate::from_ymd_opt(2000, 1, 1).unwrap(),
        NaiveDate::from_ymd_opt(2030, 12, 31).unwrap(),
    );
    let ours = sessions(start, end);
    let theirs = dates(&r["sessions"]);
    assert_eq!(ours.len(), theirs.len(), "session count");
    assert_eq!(ours, theirs);

    // Each rule on its own, by pandas-market-calendars' names.
    let rules = [
        ("New Years Day", Holiday::NewYearsDay),
        ("Dr. Martin Luther King Jr. Day", Holiday::MlkDay),
        ("Presidents Day", Holiday::PresidentsDay),
        ("Good Friday 1908+", Holiday::GoodFriday),
        ("Memorial Day", Holiday::MemorialDay),
        ("Juneteenth Starting at 2022", Holiday::Juneteenth),
        ("July 4th", Holiday::IndependenceDay),
        ("Labor Day", Holiday::LaborDay),
        ("Thanksgiving", Holiday::Thanksgiving),
        ("Christmas", Holiday::Christmas),
    ];
    for (name, rule) in rules {
        let want = dates(&r["rules"][name]);
        let got: Vec<NaiveDate> = (2000..=2030)
            .filter_map(|y| rule.observed(y))
            .filter(|d| *d >= start && *d <= end)
            .collect();
        assert_eq!(got, want, "{name}");
    }
    let specials: Vec<NaiveDate> = (2000..=2030)
        .flat_map(holidays)
        .filter(|(_, h)| matches!(h, Holiday::Special(_)))
        .map(|(d, _)| d)
        .collect();
    assert_eq!(specials, dates(&r["adhoc"]), "unscheduled closures");
}
