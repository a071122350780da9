//! Every seasonality endpoint over HTTP, standalone and all-in-one, equals the
//! same views computed independently with pandas, to 1e-9.

use super::analytics::{closes, same};
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use tests::server::TestServer;

const USER: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

/// The query parameters of one case; `None` leaves the service's default.
#[derive(Clone, Copy)]
struct Case {
    ticker: &'static str,
    years: Option<(i32, i32)>,
    shift: Option<i64>,
    specific: (Option<u32>, Option<u32>, Option<i64>),
    single: &'static [(Option<u32>, Option<&'static str>)],
    curves: &'static [(Option<i64>, Option<i64>, Option<i64>)],
}

fn query(pairs: &[(&str, Option<String>)]) -> String {
    pairs
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={}", v.replace(' ', "%20"))))
        .collect::<Vec<_>>()
        .join("&")
}

fn month_name(m: u32) -> String {
    engine::seasonality::month_name(m).to_string()
}

async fn check(server: &TestServer, case: Case) {
    let md = server.state.market.clone();
    let (dates, close) = closes(md.as_ref(), case.ticker).await;
    let fomc: Vec<String> = md
        .fomc_dates()
        .await
        .unwrap()
        .iter()
        .map(|d| d.to_string())
        .collect();
    let latest = md.latest_date().await.unwrap().to_string();
    let (_, holidays) = server
        .get("/seasonality/get-predefined-holidays", USER)
        .await;
    let names: Vec<String> = holidays["data"]["holidays"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), 16);
    let expected = tests::reference::run(
        "pandas_seasonality.py",
        &json!({
            "dates": dates, "close": close, "fomc": fomc, "latest": latest,
            "start_year": case.years.map(|y| y.0), "end_year": case.years.map(|y| y.1),
            "holidays": names, "shift": case.shift,
            // The all-in-one has one `shift` for both offset views.
            "specific": [
                {"month": case.specific.0, "day": case.specific.1, "shift": case.specific.2},
                {"month": case.specific.0, "day": case.specific.1, "shift": case.shift},
            ],
            "single": case.single.iter().map(|(m, c)| json!({"month": m, "category": c})).collect::<Vec<_>>(),
            "curves": case.curves.iter().map(|(e, h, x)| json!({"entry": e, "holding": h, "exit": x})).collect::<Vec<_>>(),
        }),
    );
    let common = vec![
        ("ticker", Some(case.ticker.to_string())),
        ("start_year", case.years.map(|y| y.0.to_string())),
        ("end_year", case.years.map(|y| y.1.to_string())),
    ];
    let get = |path: String| async move {
        let (status, body) = server.get(&path, USER).await;
        assert_eq!(status, 200, "{path}: {body}");
        assert_eq!(body["code"], 200, "{path}");
        assert!(body.get("msg").is_none(), "{path}: minimal envelope");
        body["data"].clone()
    };
    let with = |extra: Vec<(&'static str, Option<String>)>| {
        let mut q = common.clone();
        q.extend(extra);
        query(&q)
    };

    for view in [
        "performance-by-week",
        "performance-by-month",
        "performance-by-day-of-month",
        "performance-by-day-of-year",
    ] {
        let ours = get(format!("/seasonality/{view}?{}", with(vec![]))).await;
        same(&ours, &expected[view], &format!("{} {view}", case.ticker));
    }
    let shift = ("shift", case.shift.map(|s| s.to_string()));
    for name in &names {
        let ours = get(format!(
            "/seasonality/performance-around-holiday?{}",
            with(vec![("holiday_name", Some(name.clone())), shift.clone()])
        ))
        .await;
        same(&ours, &expected["holidays"][name], name);
    }
    // The other spelling of Election Day answers under the canonical name.
    let ours = get(format!(
        "/seasonality/performance-around-holiday?{}",
        with(vec![
            ("holiday_name", Some("Election Day (US)".into())),
            shift.clone()
        ])
    ))
    .await;
    same(
        &ours,
        &expected["holidays"]["Election Day(US)"],
        "Election Day (US)",
    );
    let specific = vec![
        ("month", case.specific.0.map(|m| m.to_string())),
        ("day", case.specific.1.map(|d| d.to_string())),
        ("shift", case.specific.2.map(|s| s.to_string())),
    ];
    let ours = get(format!(
        "/seasonality/performance-around-specific-days?{}",
        with(specific.clone())
    ))
    .await;
    same(&ours, &expected["specific"][0], "specific days");
    for (i, (m, c)) in case.single.iter().enumerate() {
        let q = with(vec![
            ("target_month", m.map(month_name)),
            ("category", c.map(str::to_string)),
        ]);
        let ours = get(format!(
            "/seasonality/performance-by-day-of-single-month?{q}"
        ))
        .await;
        same(&ours, &expected["single"][i], &format!("single month {q}"));
    }
    for (i, (e, h, x)) in case.curves.iter().enumerate() {
        let q = with(vec![
            ("entry_day", e.map(|v| v.to_string())),
            ("holding_days", h.map(|v| v.to_string())),
            ("exit_day", x.map(|v| v.to_string())),
        ]);
        let ours = get(format!("/seasonality/one-dollar-curve?{q}")).await;
        assert!(!ours["data"].as_array().unwrap().is_empty() || e.is_none());
        same(&ours, &expected["curves"][i], &format!("curve {q}"));
    }

    // All-in-one with every feature: the first single-month and curve case.
    let (m, c) = case.single[0];
    let (e, h, x) = case.curves[0];
    let mut extra = specific[..2].to_vec();
    extra.extend([
        shift,
        ("target_month", m.map(month_name)),
        ("category", c.map(str::to_string)),
        ("entry_day", e.map(|v| v.to_string())),
        ("holding_days", h.map(|v| v.to_string())),
        ("exit_day", x.map(|v| v.to_string())),
    ]);
    let all = get(format!("/seasonality?{}", with(extra))).await;
    let features = all.as_object().unwrap();
    assert_eq!(features.len(), 8);
    let holiday = features["performance-around-holiday"]["data"]["holiday_name"]
        .as_str()
        .unwrap()
        .to_string();
    if case.years.is_none() {
        // The sample set ends on 2026-11-20: the next event is Thanksgiving.
        assert_eq!(holiday, "Thanksgiving Day");
    }
    let rename = |rows: &Value, pairs: &[(&str, &str)]| -> Value {
        rows.as_array()
            .unwrap()
            .iter()
            .map(|r| {
                // Renamed in place: field order is part of the answer.
                let o = r.as_object().unwrap().iter().map(|(k, v)| {
                    let k = pairs
                        .iter()
                        .find(|(from, _)| from == k)
                        .map_or(k.as_str(), |(_, to)| to);
                    (k.to_string(), v.clone())
                });
                Value::Object(o.collect())
            })
            .collect()
    };
    let means = [("Return", "Mean_Return"), ("Positive", "Positive_Pct")];
    let expect_all = [
        (
            "performance-by-week",
            rename(&expected["performance-by-week"], &means),
        ),
        (
            "performance-by-month",
            rename(
                &expected["performance-by-month"],
                &[means[0], means[1], ("Month", "MonthName")],
            ),
        ),
        (
            "performance-around-holiday",
            expected["holidays"][&holiday].clone(),
        ),
        (
            "performance-by-day-of-single-month",
            expected["single"][0].clone(),
        ),
        (
            "performance-around-specific-days",
            expected["specific"][1].clone(),
        ),
        (
            "performance-by-day-of-month",
            expected["performance-by-day-of-month"].clone(),
        ),
        (
            "performance-by-day-of-year",
            expected["performance-by-day-of-year"].clone(),
        ),
        ("one-dollar-curve", expected["curves"][0].clone()),
    ];
    for (name, want) in expect_all {
        let f = &features[name];
        assert!(
            f["meta"]["description"]
                .as_str()
                .is_some_and(|d| !d.is_empty()),
            "{name} meta"
        );
        same(&f["data"], &want, &format!("all-in-one {name}"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn seasonality_equals_pandas() {
    let (server, _dir) = TestServer::fresh().await;
    // Every default: the latest year - 20 to the latest year, the next holiday,
    // today's month and day, today's trading day held 63 sessions.
    check(
        &server,
        Case {
            ticker: "SPX",
            years: None,
            shift: None,
            specific: (None, None, None),
            single: &[(None, None), (Some(3), Some("trading_day"))],
            curves: &[(None, None, None), (Some(10), Some(30), None)],
        },
    )
    .await;
    // Explicit parameters, a window running into the next year, exit_day overriding.
    check(
        &server,
        Case {
            ticker: "IVV",
            years: Some((1995, 2010)),
            shift: Some(3),
            specific: (Some(2), Some(29), Some(7)),
            single: &[
                (Some(12), Some("trading_day")),
                (Some(2), Some("calendar_day")),
            ],
            curves: &[
                (Some(240), Some(100), None),
                (Some(200), Some(5), Some(240)),
            ],
        },
    )
    .await;
    server.stop().await;
}
