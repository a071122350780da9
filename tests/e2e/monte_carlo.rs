//! Monte Carlo over HTTP: a backtest's bands are the engine's bootstrap of
//! the task's own trades and equity curve (recomputed here from the task's
//! answer and chart), the same seed gives the same answer, wrong settings
//! are named, and a batch row's answer is its strategy's as a backtest.

use engine::backtest::monte_carlo::{Plan, Resampling, bands, simulate};
use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::tasks::{NewTask, TaskKind};
use serde_json::{Value, json};
use std::time::Duration;
use tests::server::{TestServer, eventually};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

fn strategy(period: &str) -> Value {
    json!({"symbol": "SPX", "start_date": "2010-01-04", "risk_control": "-5//21",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Symbol Close"},
            "rule": {"comparison_type": "SVMA", "type_name": "CrossAbove", "comparison_value": "0", "period": period}}},
        "exit": {"rule_type": "RiskControlOnly"}})
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn close(ours: &[f64], theirs: &[f64], what: &str) {
    assert_eq!(ours.len(), theirs.len(), "{what}");
    for (a, b) in ours.iter().zip(theirs) {
        assert!(
            (a - b).abs() <= 1e-9 * b.abs().max(1.0),
            "{what}: {a} vs {b}"
        );
    }
}

async fn backtest(s: &TestServer, body: &Value) -> String {
    let (status, sub) = s.post("/backtest/start_backtest", DEMO, body).await;
    assert_eq!(status, 202, "{sub}");
    let id = sub["task_id"].as_str().unwrap().to_string();
    s.succeeded(&format!("/backtest/status/{id}"), DEMO).await;
    id
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backtests_bands_are_the_bootstrap_of_its_own_trades_and_returns() {
    let (s, _dir) = TestServer::fresh().await;
    let id = backtest(&s, &strategy("50")).await;
    let (_, task) = s.get(&format!("/backtest/status/{id}"), DEMO).await;
    let result = &task["result"];
    let (_, chart) = s.get(&format!("/backtest/chart/{id}"), DEMO).await;
    let path = format!("/backtest/monte-carlo/{id}?draws=700&seed=7");
    let (status, mc) = s.get(&path, DEMO).await;
    assert_eq!(status, 200, "{mc}");
    // The same query, the same answer; another seed, another.
    assert_eq!(s.get(&path, DEMO).await.1, mc);
    let (_, other) = s
        .get(
            &format!("/backtest/monte-carlo/{id}?draws=700&seed=8"),
            DEMO,
        )
        .await;
    assert_ne!(other["trades"], mc["trades"]);
    assert_eq!(
        (mc["draws"].as_u64(), mc["seed"].as_u64()),
        (Some(700), Some(7))
    );
    assert_eq!(
        numbers(&mc["percentiles"]),
        vec![5.0, 25.0, 50.0, 75.0, 95.0]
    );
    assert_eq!(mc["notes"], json!([]));
    // The run itself is the task's own answer: 2.11's percent there,
    // fractions here (money for the final equity).
    for (figure, key, scale) in [
        ("cagr", "CAGR", 100.0),
        ("max_drawdown", "Max Drawdown", 100.0),
        ("final_equity", "Final Capital", 1.0),
    ] {
        close(
            &[mc["actual"][figure].as_f64().unwrap()],
            &[result[key].as_f64().unwrap() / scale],
            figure,
        );
    }
    let deepest = mc["actual"]["max_drawdown"].as_f64().unwrap();
    assert!((-1.0..0.0).contains(&deepest), "a fraction: {deepest}");

    // The bands again, from the task's answer and chart through the engine.
    let times: Vec<&str> = chart["time"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let day = |t: &str| chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d").unwrap();
    let years = (day(times[times.len() - 1]) - day(times[0])).num_days() as f64 / 365.25;
    let capital = result["Initial Capital"].as_f64().unwrap();
    let trades: Vec<f64> = numbers(&result["Each Return"])
        .iter()
        .map(|r| 1.0 + r / 100.0)
        .collect();
    let equity = numbers(&chart["equity"]);
    let returns: Vec<f64> = equity.windows(2).map(|w| w[1] / w[0]).collect();
    let block = (returns.len() as f64).cbrt().round() as usize;
    assert_eq!(mc["block"].as_u64(), Some(block as u64));
    assert!(trades.len() > 20, "{}", trades.len());
    for (name, growth, how) in [
        ("trades", &trades, Resampling::Independent),
        ("returns", &returns, Resampling::Blocks(block)),
    ] {
        let plan = Plan {
            how,
            draws: 700,
            seed: 7,
            years,
            max_points: 250,
        };
        let sim = simulate(growth, &plan, &|| true).expect("not stopped");
        let b = bands(&sim, &[5.0, 25.0, 50.0, 75.0, 95.0]);
        let got = &mc[name];
        assert_eq!(got["steps"].as_u64(), Some(growth.len() as u64), "{name}");
        // CAGR and drawdown as the engine's fractions, equity in capital.
        close(&numbers(&got["cagr"]), &b.cagr, name);
        close(&numbers(&got["max_drawdown"]), &b.max_drawdown, name);
        let cap = |v: &[f64]| v.iter().map(|x| x * capital).collect::<Vec<_>>();
        close(&numbers(&got["final_equity"]), &cap(&b.final_equity), name);
        for (j, band) in b.fan.iter().enumerate() {
            close(&numbers(&got["fan"]["equity"][j]), &cap(band), name);
        }
        let bands = numbers(&got["cagr"]);
        assert!(bands.windows(2).all(|w| w[0] <= w[1]), "{name}: {bands:?}");
    }
    // The returns' fan is dated by the bars it reaches.
    let fan = &mc["returns"]["fan"];
    let steps = numbers(&fan["step"]);
    assert_eq!(fan["time"][0], json!(times[0]));
    assert_eq!(fan["time"][steps.len() - 1], json!(times[times.len() - 1]));
    assert_eq!(mc["trades"]["fan"]["time"], json!([]));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn settings_are_named_and_others_tasks_are_not_found() {
    let (s, _dir) = TestServer::fresh().await;
    let id = backtest(&s, &strategy("20")).await;
    for (query, field) in [
        ("draws=0", "'draws'"),
        ("draws=10001", "'draws'"),
        ("draws=many", "'draws'"),
        ("seed=-1", "'seed'"),
        ("seed=4294967296", "'seed'"),
        ("block=0", "'block'"),
    ] {
        let (status, body) = s
            .get(&format!("/backtest/monte-carlo/{id}?{query}"), DEMO)
            .await;
        assert_eq!(status, 400, "{query}: {body}");
        assert!(
            body["detail"].as_str().unwrap().contains(field),
            "{query}: {body}"
        );
    }
    // A block longer than the run is the run, said in a note.
    let (status, long) = s
        .get(
            &format!("/backtest/monte-carlo/{id}?block=100000&draws=50"),
            DEMO,
        )
        .await;
    assert_eq!(status, 200, "{long}");
    assert_eq!(long["block"], long["returns"]["steps"]);
    assert!(
        long["notes"][0].as_str().unwrap().contains("longer than"),
        "{long}"
    );
    s.add_account("eve@example.test", "eve-password", "pro")
        .await;
    let eve = Some(("eve@example.test", "eve-password"));
    let (status, _) = s.get(&format!("/backtest/monte-carlo/{id}"), eve).await;
    assert_eq!(status, 404);
    // A task that has not succeeded has no Monte Carlo yet.
    let pending = s
        .state
        .tasks
        .create(NewTask {
            owner: DEMO_EMAIL.into(),
            kind: TaskKind::StrategyBacktest,
            params: json!({}),
        })
        .await
        .unwrap();
    let (status, body) = s
        .get(&format!("/backtest/monte-carlo/{}", pending.id), DEMO)
        .await;
    assert_eq!(status, 409, "{body}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_rows_monte_carlo_is_its_strategy_run_alone() {
    let (s, _dir) = TestServer::fresh().await;
    let periods = ["10", "20", "50"];
    let body =
        json!({"strategy": strategy("10"), "grid": {"entry.condition.rule.period": periods}});
    let (status, sub) = s.post("/backtest/batch", DEMO, &body).await;
    assert_eq!(status, 202, "{sub}");
    let batch = sub["task_id"].as_str().unwrap().to_string();
    assert!(
        eventually(Duration::from_secs(60), || async {
            s.get(&format!("/backtest/batch/{batch}"), DEMO).await.1["status"] == "SUCCESS"
        })
        .await
    );
    let (_, rows) = s
        .get(&format!("/backtest/batch/{batch}/results"), DEMO)
        .await;
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["params"]["entry.condition.rule.period"] == "50")
        .unwrap_or_else(|| panic!("{rows}"))["index"]
        .as_i64()
        .unwrap();
    let (status, of_row) = s
        .get(
            &format!("/backtest/batch/{batch}/monte-carlo?row={row}&draws=300&seed=3&block=10"),
            DEMO,
        )
        .await;
    assert_eq!(status, 200, "{of_row}");
    let alone = backtest(&s, &strategy("50")).await;
    let (_, of_backtest) = s
        .get(
            &format!("/backtest/monte-carlo/{alone}?draws=300&seed=3&block=10"),
            DEMO,
        )
        .await;
    assert_eq!(of_row, of_backtest);
    // A row past the batch's last is not found; a malformed one is named.
    let (status, body) = s
        .get(&format!("/backtest/batch/{batch}/monte-carlo?row=3"), DEMO)
        .await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["detail"].as_str().unwrap().contains("3 rows"),
        "{body}"
    );
    for (query, field) in [
        ("row=x", "'row'"),
        ("row=-1", "'row'"),
        ("", "'row'"),
        ("row=0&draws=0", "'draws'"),
    ] {
        let (status, body) = s
            .get(
                &format!("/backtest/batch/{batch}/monte-carlo?{query}"),
                DEMO,
            )
            .await;
        assert_eq!(status, 400, "{query}: {body}");
        assert!(
            body["detail"].as_str().unwrap().contains(field),
            "{query}: {body}"
        );
    }
    s.add_account("eve@example.test", "eve-password", "pro")
        .await;
    let (status, _) = s
        .get(
            &format!("/backtest/batch/{batch}/monte-carlo?row=0"),
            Some(("eve@example.test", "eve-password")),
        )
        .await;
    assert_eq!(status, 404);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn heavy_reads_are_metered_as_compute_and_refused_once_the_month_is_spent() {
    let (s, dir) = TestServer::fresh().await;
    let id = backtest(&s, &strategy("50")).await;
    let usage = || async {
        s.state.metering.as_ref().unwrap().flush().await.unwrap();
        s.get("/usage", DEMO).await.1["total"]["compute_ms"].clone()
    };
    assert_eq!(
        usage().await["monte_carlo"],
        Value::Null,
        "{}",
        usage().await
    );
    let started = std::time::Instant::now();
    let (status, mc) = s
        .get(
            &format!("/backtest/monte-carlo/{id}?draws=5000&block=1"),
            DEMO,
        )
        .await;
    let took = started.elapsed().as_millis() as u64;
    assert_eq!(status, 200, "{mc}");
    let form = [
        ("benchmark", "SPX"),
        ("stock_comparison", "IVV,TLT"),
        ("start_date", "2000-01-03"),
        ("end_date", "2024-12-31"),
    ];
    let corr = reqwest::Client::new()
        .post(s.url("/symbol_corr"))
        .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
        .form(&form)
        .send()
        .await
        .unwrap();
    let corr: Value = corr.json().await.unwrap();
    assert_eq!(corr["code"], 211, "{corr}");
    let counted = usage().await;
    let ran = counted["monte_carlo"].as_u64().unwrap_or(0);
    // The draws' run time on the pool: some of the request's, never more.
    assert!(ran > 0 && ran <= took, "{counted}: {ran} ms of {took}");
    assert!(counted["symbol_corr"].as_u64().is_some(), "{counted}");
    // The month spent: the operator's limit, read by a new server on the
    // same database (a running one keeps a plan's limits for a while).
    crate::usage::set_limits(
        &s,
        "pro",
        platform::quota::PlanLimits {
            requests_per_minute: 1000,
            concurrent_tasks: 4,
            monthly_compute_minutes: 0,
            max_batch: None,
        },
    )
    .await;
    s.stop().await;
    let s = TestServer::start(tests::server::Options::new(dir.path().join("db.sqlite"))).await;
    let (status, spent) = s
        .get(&format!("/backtest/monte-carlo/{id}?draws=100"), DEMO)
        .await;
    assert_eq!(status, 429, "{spent}");
    assert!(
        spent["detail"]
            .as_str()
            .unwrap()
            .contains("monthly_compute_minutes = 0"),
        "{spent}"
    );
    s.stop().await;
}
