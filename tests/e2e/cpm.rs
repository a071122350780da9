//! Pattern matching: the use case on a small made-up series whose every
//! figure is worked out by hand, then the endpoints over HTTP (both
//! synchronous forms, both task kinds, universe searches, tenants).

use chrono::NaiveDate;
use engine::Bars;
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::{BlobStore, LocalDir, MarketData, ParquetMarketData, codec, layout};
use platform::worker::Progress;
use serde_json::{Value, json};
use services::analytics::cpm::{self, requests::CpmParams, requests::Mode};
use std::sync::Arc;
use std::time::Duration;
use tests::server::{TestServer, eventually};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

/// The made-up series: a tent template (bars 0-4), an exact double-size copy
/// (5-9) followed by a rise, an exact 1.5x copy (13-17) followed by a fall,
/// and noise. Sessions from 2023-01-17, so the first copy ends in January
/// (bar 9, 2023-01-30) and the second in February (bar 17, 2023-02-09).
const CLOSES: [f64; 24] = [
    10.0, 12.0, 14.0, 12.0, 10.0, // template
    20.0, 24.0, 28.0, 24.0, 20.0, // copy A
    19.0, 26.0, 25.0, // after A
    30.0, 33.0, 36.0, 33.0, 30.0, // copy B
    33.0, 27.0, 24.0, // after B
    25.0, 26.0, 40.0,
];

fn bars(dates: &[NaiveDate], closes: &[f64]) -> Bars {
    let mut b = Bars::with_capacity(closes.len());
    for (d, c) in dates.iter().zip(closes) {
        b.push(d.and_hms_opt(0, 0, 0).unwrap(), *c, *c, *c, *c, 1000.0);
    }
    b
}

fn day(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
}

/// A market directory with TENT (the series above), its weekly twin TENTW
/// (each week's sessions all at that week's value), SPX rising to the end of
/// January 2023 and falling after, and one recession: December 2022 to
/// January 2023.
async fn made_up_market(dir: &std::path::Path) -> Arc<ParquetMarketData> {
    let blobs: Arc<dyn BlobStore> = Arc::new(LocalDir::new(dir));
    let md = Arc::new(ParquetMarketData::new(blobs.clone()));
    let sessions = engine::calendar::sessions(day("2021-01-04"), day("2023-12-29"));
    let tent: Vec<NaiveDate> = sessions
        .iter()
        .copied()
        .filter(|d| *d >= day("2023-01-17"))
        .take(CLOSES.len())
        .collect();
    assert_eq!((tent[9], tent[17]), (day("2023-01-30"), day("2023-02-09")));
    sample::import::store_daily(&md, "TENT", &bars(&tent, &CLOSES), Default::default())
        .await
        .unwrap();
    // Weekly: from the week of 2023-01-02, every session of week k at CLOSES[k].
    let mut weekly_dates = Vec::new();
    let mut weekly_closes = Vec::new();
    for d in sessions.iter().filter(|d| **d >= day("2023-01-02")) {
        let week = ((*d - day("2023-01-02")).num_days() / 7) as usize;
        if week >= CLOSES.len() {
            break;
        }
        weekly_dates.push(*d);
        weekly_closes.push(CLOSES[week]);
    }
    sample::import::store_daily(
        &md,
        "TENTW",
        &bars(&weekly_dates, &weekly_closes),
        Default::default(),
    )
    .await
    .unwrap();
    let spx: Vec<NaiveDate> = sessions
        .iter()
        .copied()
        .filter(|d| *d <= day("2023-06-30"))
        .collect();
    let spx_closes: Vec<f64> = spx
        .iter()
        .enumerate()
        .map(|(i, d)| {
            if *d < day("2023-02-01") {
                100.0 + i as f64
            } else {
                50.0
            }
        })
        .collect();
    sample::import::store_daily(&md, "SPX", &bars(&spx, &spx_closes), Default::default())
        .await
        .unwrap();
    let mut table = sample::table::TableBuilder::new(&[
        ("peak", sample::table::Kind::Date),
        ("trough", sample::table::Kind::Date),
    ]);
    table.push(sample::row![day("2022-12-01"), day("2023-01-01")]);
    blobs
        .put(
            &layout::table(cpm::RECESSIONS_TABLE),
            codec::to_parquet(&table.finish()).unwrap(),
        )
        .await
        .unwrap();
    md
}

async fn answer(md: &dyn MarketData, mode: Mode, body: Value) -> Result<Value, services::Error> {
    let params: CpmParams = serde_json::from_value(body).unwrap();
    let p = cpm::prepare(md, &params, mode).await?;
    Ok(serde_json::to_value(cpm::run(md, p, &Progress::default()).await?).unwrap())
}

/// Pearson correlation x 100, written out here rather than taken from the engine.
fn corr(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let sab: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let saa: f64 = a.iter().map(|x| (x - ma) * (x - ma)).sum();
    let sbb: f64 = b.iter().map(|y| (y - mb) * (y - mb)).sum();
    100.0 * sab / (saa * sbb).sqrt()
}

fn close(a: &Value, b: f64) {
    let a = a.as_f64().unwrap_or_else(|| panic!("{a} is not a number"));
    assert!((a - b).abs() < 1e-9, "{a} vs {b}");
}

#[tokio::test(flavor = "multi_thread")]
async fn hand_made_series_every_field() {
    let dir = tempfile::tempdir().unwrap();
    let md = made_up_market(dir.path()).await;
    let md = md.as_ref();
    let base = json!({"symbol": "TENT", "corr_per": 95, "time_in_market": 3,
        "start_date": "2023-01-17", "end_date": "2023-01-23", "lookback_period": "All"});

    // Windows clear of the template (start >= 5, end <= 23): the two copies
    // are exact (100); no other window reaches 95 (checked by hand below).
    let others: Vec<f64> = (5..=19)
        .filter(|s| *s != 5 && *s != 13)
        .map(|s| corr(&CLOSES[0..5], &CLOSES[s..s + 5]))
        .collect();
    assert!(others.iter().all(|c| *c < 95.0), "{others:?}");

    let bt = answer(md, Mode::Backtest, base.clone()).await.unwrap();
    assert_eq!(
        (bt["code"].as_u64(), bt["msg"].as_str()),
        (Some(200), Some("Finish CPM!"))
    );
    let data = &bt["data"];
    assert_eq!(data["count"], 2);
    assert!(data.get("warnings").is_none());
    // Both exact: the earlier window first.
    let p = &data["patterns"];
    assert_eq!(p[0]["StartDate"], "2023-01-24");
    assert_eq!(p[0]["EndDate"], "2023-01-30");
    close(&p[0]["Corr"], 100.0);
    close(&p[0]["Close"], 20.0);
    assert_eq!(p[0]["BarsNum"], 5);
    assert_eq!(
        (&p[1]["StartDate"], &p[1]["EndDate"]),
        (&json!("2023-02-03"), &json!("2023-02-09"))
    );
    close(&p[1]["Close"], 30.0);
    assert!(p[0].get("Symbol").is_none());

    let info = &data["backtest_info"];
    let t = &info["trades"];
    // A: in at 20 (bar 9), path 19, 26, 25: +25%, best +30%, worst -5%.
    assert_eq!(t[0]["StartDate"], "2023-01-24");
    assert_eq!(t[0]["EndDate"], "2023-01-30");
    close(&t[0]["Correlation Percentage"], 100.0);
    close(&t[0]["Close"], 20.0);
    assert_eq!(t[0]["BarsNum"], 5);
    close(&t[0]["EachReturn"], 25.0);
    assert_eq!(t[0]["ExitDate"], "2023-02-02");
    close(&t[0]["ExitPrice"], 25.0);
    close(&t[0]["MaxGain"], 30.0);
    close(&t[0]["MaxLoss"], -5.0);
    // SPX above its 200-session average in January; a recession month.
    assert_eq!(t[0]["MarketCondition"], json!(["Bull", "Rec"]));
    // B: in at 30 (bar 17), path 33, 27, 24: -20%, best +10%, worst -20%.
    close(&t[1]["EachReturn"], -20.0);
    assert_eq!(t[1]["ExitDate"], "2023-02-14");
    close(&t[1]["ExitPrice"], 24.0);
    close(&t[1]["MaxGain"], 10.0);
    close(&t[1]["MaxLoss"], -20.0);
    assert_eq!(t[1]["MarketCondition"], json!(["Bear"]));
    // 1.25 x 0.8 = 1: total 0%; mean and median of (25, -20) = 2.5.
    close(&info["TOTAL RETURN"], 0.0);
    close(&info["MEDIAN RETURN"], 2.5);
    close(&info["AVERAGE RETURN"], 2.5);
    close(&info["WIN RATE"], 50.0);
    close(&info["AVERAGE WIN"], 25.0);
    close(&info["AVERAGE LOSS"], -20.0);
    assert_eq!(
        (
            &info["TOTAL TRADES"],
            &info["TOTAL POSITIVE"],
            &info["TOTAL NEGATIVE"]
        ),
        (&json!(2), &json!(1), &json!(1))
    );
    // 10 -> 40 over the whole series; 6 of the 23 bars after the first held.
    close(&info["BUY & HOLD"], 300.0);
    close(&info["TIME IN MARKET"], 600.0 / 23.0);

    // Short: the signs flip.
    let mut short = base.clone();
    short["direction"] = json!("Short");
    let s = answer(md, Mode::Backtest, short).await.unwrap();
    let st = &s["data"]["backtest_info"]["trades"];
    close(&st[0]["EachReturn"], -25.0);
    close(&st[0]["MaxGain"], 5.0);
    close(&st[0]["MaxLoss"], -30.0);
    close(&st[1]["EachReturn"], 20.0);
    close(
        &s["data"]["backtest_info"]["TOTAL RETURN"],
        (0.75 * 1.2 - 1.0) * 100.0,
    );

    // The scan answers the same matches without trades.
    let scan = answer(md, Mode::Scan, base.clone()).await.unwrap();
    assert_eq!(scan["msg"], "Found matching patterns!");
    assert_eq!(scan["data"]["patterns"], data["patterns"]);
    assert!(scan["data"].get("backtest_info").is_none());

    // The moving-average filter at the match's last bar: A ends at 20 under
    // its 2-bar average (22), B at 30 under 31.5. Above: nothing (407).
    let mut above = base.clone();
    above["ma"] = json!(2);
    above["ma_condition"] = json!(1);
    let none = answer(md, Mode::Backtest, above).await.unwrap();
    assert_eq!(
        (none["code"].as_u64(), &none["data"]),
        (Some(407), &Value::Null)
    );
    assert!(
        none["msg"]
            .as_str()
            .unwrap()
            .starts_with("No matching patterns found")
    );
    let mut below = base.clone();
    below["ma"] = json!(2);
    below["ma_condition"] = json!(2);
    assert_eq!(
        answer(md, Mode::Scan, below).await.unwrap()["data"]["count"],
        2
    );

    // Overlaps: every window at or above 1 (two windows correlate exactly 0:
    // rounding would decide them), against those sharing no bar
    // with a better one; both computed here from the hand correlation.
    let mut windows: Vec<(f64, usize)> = (5..=19)
        .map(|s| (corr(&CLOSES[0..5], &CLOSES[s..s + 5]), s))
        .filter(|(c, _)| *c >= 1.0)
        .collect();
    // Best first; the two exact copies tie at 100 (to rounding), earlier first.
    let rounded = |c: f64| (c * 1e9).round() as i64;
    windows.sort_by(|a, b| rounded(b.0).cmp(&rounded(a.0)).then(a.1.cmp(&b.1)));
    let mut kept: Vec<(f64, usize)> = Vec::new();
    for w in &windows {
        if kept.iter().all(|k| w.1 + 4 < k.1 || w.1 > k.1 + 4) {
            kept.push(*w);
        }
    }
    assert!(kept.len() < windows.len(), "the case must have overlaps");
    for (exclude, want) in [(0, &windows), (1, &kept)] {
        let mut q = base.clone();
        q["corr_per"] = json!(1);
        q["exclude_overlap"] = json!(exclude);
        let got = answer(md, Mode::Scan, q).await.unwrap();
        let got = got["data"]["patterns"].as_array().unwrap().clone();
        assert_eq!(got.len(), want.len(), "exclude_overlap {exclude}");
        for (g, (c, s)) in got.iter().zip(want.iter()) {
            close(&g["Corr"], *c);
            let start = engine::calendar::sessions(day("2023-01-17"), day("2023-03-31"))[*s];
            assert_eq!(g["StartDate"], start.to_string());
        }
    }

    // Weekly: the same figures on weekly closes, dated by each week's last session.
    let weekly = answer(
        md,
        Mode::Backtest,
        json!({"symbol": "TENTW", "corr_per": 95, "time_in_market": 3, "timeframe": "Weekly",
               "start_date": "2023-01-02", "end_date": "2023-02-03", "lookback_period": "All"}),
    )
    .await
    .unwrap();
    let wi = &weekly["data"]["backtest_info"];
    assert_eq!(weekly["data"]["count"], 2);
    assert_eq!(weekly["data"]["patterns"][0]["StartDate"], "2023-02-10");
    assert_eq!(weekly["data"]["patterns"][0]["EndDate"], "2023-03-10");
    close(&wi["trades"][0]["EachReturn"], 25.0);
    assert_eq!(wi["trades"][0]["ExitDate"], "2023-03-31");
    close(&wi["TOTAL RETURN"], 0.0);
    close(&wi["TIME IN MARKET"], 600.0 / 23.0);

    // Common Pattern mode: the double top read at 20 bars (its shortest
    // daily length; the series is too short for 40), dates ignored.
    let points = [
        (0.0, 0.0),
        (0.25, 1.0),
        (0.5, 0.45),
        (0.75, 1.0),
        (1.0, 0.0),
    ];
    let template: Vec<f64> = (0..20)
        .map(|k| {
            let t = k as f64 / 19.0;
            let w = points.windows(2).find(|w| t <= w[1].0).unwrap();
            w[0].1 + (w[1].1 - w[0].1) * (t - w[0].0) / (w[1].0 - w[0].0)
        })
        .collect();
    let mut want: Vec<(f64, usize)> = (0..=4)
        .map(|s| (corr(&template, &CLOSES[s..s + 20]), s))
        .filter(|(c, _)| *c >= 0.0)
        .collect();
    want.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let shape = answer(
        md,
        Mode::Scan,
        json!({"symbol": "TENT", "corr_per": 0, "time_in_market": 3, "system_pattern": "double_top",
               "exclude_overlap": 0, "lookback_period": "All", "start_date": "1999-01-01"}),
    )
    .await
    .unwrap();
    let got = shape["data"]["patterns"].as_array().unwrap();
    assert!(!want.is_empty());
    assert_eq!(got.len(), want.len(), "{shape}");
    for (g, (c, _)) in got.iter().zip(&want) {
        close(&g["Corr"], *c);
        assert_eq!(g["BarsNum"], 20);
    }

    // Values the data cannot serve name their field.
    for (body, field) in [
        (
            json!({"symbol": "NOPE", "corr_per": 80, "time_in_market": 3, "start_date": "2023-01-17", "end_date": "2023-01-23"}),
            None,
        ),
        (
            json!({"symbol": "TENT", "corr_per": 80, "time_in_market": 3, "start_date": "2023-01-17", "end_date": "2023-01-19"}),
            Some("start_date"),
        ),
        (
            json!({"symbol": "TENT", "corr_per": 80, "time_in_market": 3, "start_date": "2020-01-01", "end_date": "2020-12-31"}),
            Some("start_date"),
        ),
        (
            json!({"symbol": "TENT", "corr_per": 80, "time_in_market": 3, "start_date": "2023-01-17", "end_date": "2023-01-23", "universe": "NOPE,TENT"}),
            Some("universe"),
        ),
    ] {
        match (answer(md, Mode::Scan, body.clone()).await, field) {
            (Err(services::Error::Unknown(f)), None) => {
                assert_eq!(f.field, "symbol");
                assert!(f.reason.contains("NOPE"), "{f}")
            }
            (Err(services::Error::Invalid(f)), Some(want)) => {
                assert_eq!(f.field, want, "{body}")
            }
            (other, _) => panic!("{body}: {other:?}"),
        }
    }
}

/// Polls a task until it is finished; returns its task object.
async fn finished(s: &TestServer, id: &str, user: Option<(&str, &str)>) -> Value {
    let path = format!("/cpm/status/{id}");
    let done = eventually(Duration::from_secs(60), || async {
        let (_, b) = s.get(&path, user).await;
        b["status"] == "SUCCESS" || b["status"] == "FAILED"
    })
    .await;
    let (status, body) = s.get(&path, user).await;
    assert!(done && status == 200, "{body}");
    body
}

fn query(body: &Value) -> String {
    body.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join("&")
}

#[tokio::test(flavor = "multi_thread")]
async fn endpoints_over_http() {
    let (s, _dir) = TestServer::fresh().await;
    s.add_account("other@example.test", "other-password", "pro")
        .await;
    let other = Some(("other@example.test", "other-password"));

    let (status, list) = s.get("/cpm/get-predefined-patterns", DEMO).await;
    assert_eq!(status, 200);
    assert_eq!(
        list,
        json!({"patterns": ["head_and_shoulder_top", "head_and_shoulder_bottom", "double_top",
            "double_bottom", "triple_tap", "rounding_bottom", "ascending_channel", "descending_channel"]})
    );

    // The synchronous forms: POST JSON and GET query answer alike.
    let custom = json!({"symbol": "SPX", "corr_per": 60, "time_in_market": 21,
        "start_date": "2024-03-01", "end_date": "2024-05-31"});
    let (status, scan) = s.post("/cpm/scan", DEMO, &custom).await;
    assert_eq!(
        (status, &scan["code"], &scan["msg"]),
        (200, &json!(200), &json!("Found matching patterns!")),
        "{scan}"
    );
    let count = scan["data"]["count"].as_u64().unwrap();
    assert!(count > 0 && scan["data"]["patterns"].as_array().unwrap().len() as u64 == count);
    assert_eq!(
        scan["data"]["warnings"].as_array().unwrap().len(),
        1,
        "corr_per 60 warns"
    );
    let corrs: Vec<f64> = scan["data"]["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["Corr"].as_f64().unwrap())
        .collect();
    assert!(
        corrs.windows(2).all(|w| w[0] >= w[1]) && corrs.iter().all(|c| *c >= 60.0),
        "best first: {corrs:?}"
    );
    assert_eq!(
        s.get(&format!("/cpm/scan?{}", query(&custom)), DEMO).await,
        (200, scan.clone())
    );
    let (status, bt) = s.post("/cpm/scan_with_backtest", DEMO, &custom).await;
    assert_eq!((status, &bt["msg"]), (200, &json!("Finish CPM!")));
    assert_eq!(bt["data"]["patterns"], scan["data"]["patterns"]);
    let info = &bt["data"]["backtest_info"];
    let trades = info["trades"].as_array().unwrap();
    assert_eq!(info["TOTAL TRADES"], trades.len());
    assert_eq!(
        info["TOTAL POSITIVE"].as_u64().unwrap() + info["TOTAL NEGATIVE"].as_u64().unwrap(),
        trades.iter().filter(|t| t["EachReturn"] != 0.0).count() as u64
    );
    let compounded = trades.iter().fold(1.0, |a, t| {
        a * (1.0 + t["EachReturn"].as_f64().unwrap() / 100.0)
    });
    assert!((info["TOTAL RETURN"].as_f64().unwrap() - (compounded - 1.0) * 100.0).abs() < 1e-9);
    for t in trades {
        let r = t["ExitPrice"].as_f64().unwrap() / t["Close"].as_f64().unwrap() - 1.0;
        assert!(
            (t["EachReturn"].as_f64().unwrap() - 100.0 * r).abs() < 1e-9,
            "{t}"
        );
        assert!(t["MaxGain"].as_f64().unwrap() >= t["EachReturn"].as_f64().unwrap().max(0.0));
        assert!(t["MaxLoss"].as_f64().unwrap() <= t["EachReturn"].as_f64().unwrap().min(0.0));
        let labels = t["MarketCondition"].as_array().unwrap();
        assert!(labels[0] == "Bull" || labels[0] == "Bear", "{t}");
    }
    assert_eq!(
        s.get(&format!("/cpm/scan_with_backtest?{}", query(&custom)), DEMO)
            .await,
        (200, bt.clone())
    );

    // Nothing at 100%: code 407 in an HTTP 200.
    let mut exact = custom.clone();
    exact["corr_per"] = json!(100);
    let (status, none) = s.post("/cpm/scan", DEMO, &exact).await;
    assert_eq!(
        (status, &none["code"], &none["data"]),
        (200, &json!(407), &Value::Null)
    );

    // Bad values: 400 in the analytics envelope, naming the field.
    for (body, field) in [
        (
            json!({"symbol": "SPX", "corr_per": 101, "time_in_market": 21, "system_pattern": "double_top"}),
            "corr_per",
        ),
        (
            json!({"symbol": "SPX", "corr_per": "high", "time_in_market": 21, "system_pattern": "double_top"}),
            "corr_per",
        ),
        (
            json!({"symbol": "SPX", "corr_per": 80, "time_in_market": 1, "system_pattern": "double_top"}),
            "time_in_market",
        ),
        (
            json!({"symbol": "SPX", "corr_per": 80, "time_in_market": 21}),
            "start_date",
        ),
        (
            json!({"symbol": "SPX", "corr_per": 80, "time_in_market": 21, "system_pattern": "wedge"}),
            "system_pattern",
        ),
        (
            json!({"symbol": "SPX", "corr_per": 80, "time_in_market": 21, "system_pattern": "double_top", "timeframe": "Hourly"}),
            "timeframe",
        ),
        (
            json!({"symbol": "SPX", "corr_per": 80, "time_in_market": 21, "system_pattern": "double_top", "ma_condition": 1}),
            "ma",
        ),
        (
            json!({"symbol": "SPX", "corr_per": 80, "time_in_market": 21, "system_pattern": "double_top", "corr_pct": 1}),
            "corr_pct",
        ),
        (
            json!({"corr_per": 80, "time_in_market": 21, "system_pattern": "double_top"}),
            "symbol",
        ),
        (
            json!({"symbol": "SPX", "corr_per": 80, "time_in_market": 21, "system_pattern": "double_top", "universe": "sp500"}),
            "universe",
        ),
    ] {
        let (status, e) = s.post("/cpm/scan", DEMO, &body).await;
        assert_eq!(
            (status, &e["code"], &e["data"]),
            (400, &json!(400), &Value::Null),
            "{body}: {e}"
        );
        assert!(
            e["msg"].as_str().unwrap().contains(&format!("'{field}'")),
            "{field}: {e}"
        );
    }
    let (_, e) = s
        .post("/cpm/scan", DEMO, &json!({"symbol": "SPX", "corr_per": 80, "time_in_market": 21, "system_pattern": "double_top", "universe": "sp500"}))
        .await;
    assert!(
        e["msg"].as_str().unwrap().contains("POST /cpm/scan/start"),
        "{e}"
    );
    let (status, e) = s
        .get(
            "/cpm/scan?symbol=NOPE&corr_per=80&time_in_market=21&system_pattern=double_top",
            DEMO,
        )
        .await;
    assert_eq!((status, &e["code"]), (404, &json!(404)));
    assert_eq!(
        s.get(
            "/cpm/scan?symbol=SPX&corr_per=80&time_in_market=21&system_pattern=double_top",
            None
        )
        .await
        .0,
        401
    );

    // Tasks: the same answers as the synchronous forms, with the task's id.
    let (status, sub) = s.post("/cpm/scan/start", DEMO, &custom).await;
    assert_eq!(status, 202, "{sub}");
    assert!(
        sub["message"].as_str().unwrap().contains("warning"),
        "{sub}"
    );
    let scan_id = sub["task_id"].as_str().unwrap().to_string();
    let task = finished(&s, &scan_id, DEMO).await;
    assert_eq!(task["status"], "SUCCESS", "{task}");
    assert_eq!(task["username"], DEMO_EMAIL);
    assert_eq!(
        serde_json::from_str::<Value>(task["params"].as_str().unwrap()).unwrap(),
        custom
    );
    let mut want = scan.clone();
    want["task_id"] = json!(scan_id);
    assert_eq!(task["result"], want);
    let pattern = json!({"symbol": "AAPL", "corr_per": 80, "time_in_market": 10,
        "system_pattern": "double_bottom", "timeframe": "Weekly", "lookback_period": "All"});
    let (status, sub) = s.post("/cpm/backtest/start", DEMO, &pattern).await;
    assert_eq!(status, 202, "{sub}");
    let bt_id = sub["task_id"].as_str().unwrap().to_string();
    let task = finished(&s, &bt_id, DEMO).await;
    let (_, now) = s.post("/cpm/scan_with_backtest", DEMO, &pattern).await;
    assert_eq!(task["result"]["msg"], now["msg"]);
    assert_eq!(task["result"]["data"], now["data"]);

    // Lists: newest first, filtered by mode and status; another tenant sees none.
    let (_, all) = s.get("/cpm/tasks", DEMO).await;
    assert_eq!(all["total"], 2);
    assert_eq!(all["tasks"][0]["task_id"], bt_id.as_str());
    assert_eq!(all["tasks"][0]["mode"], "backtest");
    assert_eq!(all["tasks"][0]["symbol"], "AAPL");
    assert_eq!(all["tasks"][0]["system_pattern"], "double_bottom");
    assert_eq!(all["tasks"][1]["system_pattern"], Value::Null);
    let (_, scans) = s.get("/cpm/tasks?mode=scan&status=SUCCESS", DEMO).await;
    assert_eq!(
        (
            scans["total"].as_u64(),
            scans["tasks"][0]["task_id"].as_str()
        ),
        (Some(1), Some(scan_id.as_str()))
    );
    assert_eq!(s.get(&format!("/cpm/status/{scan_id}"), other).await.0, 404);
    assert_eq!(s.get("/cpm/tasks", other).await.1["total"], 0);
    assert_eq!(
        s.get(&format!("/backtest/status/{scan_id}"), DEMO).await.0,
        404,
        "not a strategy task"
    );

    // An Idempotency-Key makes a retried submit the same task.
    let keyed = || {
        reqwest::Client::new()
            .post(s.url("/cpm/scan/start"))
            .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
            .header("Idempotency-Key", "cpm-retry-1")
            .json(&custom)
            .send()
    };
    let first: Value = keyed().await.unwrap().json().await.unwrap();
    let again = keyed().await.unwrap();
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    assert_eq!(
        again.json::<Value>().await.unwrap()["task_id"],
        first["task_id"]
    );

    // A universe search: the template across stocks, best first across
    // symbols; each match's Corr equals pattern_corr of the same windows.
    let stocks: Vec<String> = s
        .state
        .market
        .symbols()
        .await
        .unwrap()
        .iter()
        .filter(|x| x.asset_class == "stock")
        .map(|x| x.symbol.clone())
        .collect();
    let search = json!({"symbol": "SPX", "corr_per": 70, "time_in_market": 21,
        "start_date": "2024-03-01", "end_date": "2024-05-31", "universe": stocks.join(","), "max_matches": 7});
    let (status, sub) = s.post("/cpm/scan/start", DEMO, &search).await;
    assert_eq!(status, 202, "{sub}");
    let task = finished(&s, sub["task_id"].as_str().unwrap(), DEMO).await;
    let found = task["result"]["data"]["patterns"].as_array().unwrap();
    assert_eq!(found.len(), 7, "{task}");
    let corrs: Vec<f64> = found.iter().map(|p| p["Corr"].as_f64().unwrap()).collect();
    assert!(corrs.windows(2).all(|w| w[0] >= w[1]), "{corrs:?}");
    let symbols: std::collections::HashSet<&str> = found
        .iter()
        .map(|p| p["Symbol"].as_str().unwrap())
        .collect();
    assert!(
        symbols.len() > 1,
        "matches from several stocks: {symbols:?}"
    );
    for p in found {
        let (_, pc) = s
            .post(
                "/pattern_corr",
                DEMO,
                &json!({"referenceSymbol": "SPX", "referenceStartDate": "2024-03-01", "referenceEndDate": "2024-05-31",
                    "comparisonSymbol": p["Symbol"], "comparisonStartDate": p["StartDate"], "comparisonEndDate": p["EndDate"]}),
            )
            .await;
        close(&pc["data"]["pattern_corr"], p["Corr"].as_f64().unwrap());
    }
    s.stop().await;
}
