//! Company detail, reports over HTTP: exact field names, values recomputed
//! from the tables, and the refusals.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::{LocalDir, MarketData, ParquetMarketData, columns};
use serde_json::{Value, json};
use std::sync::Arc;
use tests::server::{TestServer, market_dir};

const USER: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

pub(crate) fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

pub(crate) fn sorted(v: &[&str]) -> Vec<String> {
    let mut k: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    k.sort();
    k
}

/// A JSON-string field, parsed.
fn parsed(v: &Value) -> Value {
    serde_json::from_str(v.as_str().expect("a JSON string")).unwrap()
}

pub(crate) fn close(a: &Value, b: f64, what: &str) {
    let a = a.as_f64().unwrap_or_else(|| panic!("{what}: {a}"));
    assert!(
        (a - b).abs() <= 1e-9 * b.abs().max(1.0),
        "{what}: {a} vs {b}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn company_detail_endpoints_answer_every_record() {
    let (s, _dir) = TestServer::fresh().await;
    let md = ParquetMarketData::new(Arc::new(LocalDir::new(market_dir())));
    let get = |path: String| {
        let s = &s;
        async move {
            let (status, body) = s.get(&path, USER).await;
            assert_eq!(
                (status, &body["code"]),
                (200, &json!(200)),
                "{path}: {body}"
            );
            assert!(
                body["msg"].as_str().unwrap().contains("AAPL") || path.contains("get_pred"),
                "{path}: {}",
                body["msg"]
            );
            body["data"].clone()
        }
    };
    let bars = md.daily("AAPL").await.unwrap();
    let last_close = bars.close[bars.len() - 1];

    // Profile, latest metrics, trading figures.
    let p = get("/company_detail/get_profile?symbol=aapl".into()).await;
    assert_eq!(
        keys(&p),
        sorted(&["profile", "latest_detail", "trading_stat"])
    );
    for f in ["companyName", "exchange", "industry", "description"] {
        assert!(p["profile"][f].is_string(), "{f}");
    }
    assert_eq!(
        keys(&p["latest_detail"]),
        sorted(&[
            "date",
            "market_cap",
            "pe_ratio",
            "pb_ratio",
            "price_to_sales_ratio",
            "ev_to_sales",
            "enterprise_value_over_ebitda",
            "beta",
            "roe",
            "current_ratio",
            "free_cash_flow_yield",
            "dividend_yield"
        ])
    );
    let ts = &p["trading_stat"];
    for f in [
        "price",
        "open_price",
        "previous_close",
        "day_high",
        "day_low",
        "year_high",
        "year_low",
        "volume",
        "avg_volume",
        "atr14",
        "ma200_distance",
        "relative_volume",
    ] {
        assert!(ts[f].is_number(), "trading_stat.{f}: {ts}");
    }
    close(&ts["price"], last_close, "price");
    let n = bars.len();
    let ma200 = bars.close[n - 200..].iter().sum::<f64>() / 200.0;
    close(
        &ts["ma200_distance"],
        (last_close / ma200 - 1.0) * 100.0,
        "ma200_distance",
    );
    let year_high = bars.high[n - 252..]
        .iter()
        .copied()
        .fold(f64::MIN, f64::max);
    close(&ts["year_high"], year_high, "year_high");

    // market_pred: the same parts, each with its description.
    let m = get("/company_detail/market_pred?symbol=AAPL".into()).await;
    assert_eq!(
        keys(&m),
        sorted(&[
            "profile_info",
            "latest_detail",
            "trading_stat",
            "rating_data",
            "pt_data"
        ])
    );
    assert_eq!(m["profile_info"]["meta"]["symbol"], "AAPL");
    for part in ["latest_detail", "trading_stat", "rating_data", "pt_data"] {
        assert!(m[part]["meta"]["description"].is_string(), "{part}");
    }
    assert_eq!(m["trading_stat"]["data"], p["trading_stat"]);

    // Analysis: counts and their percent of the total; targets newest first.
    let a = get("/company_detail/get_analysis?symbol=AAPL".into()).await;
    let r = &a["rating_data"];
    let names = ["buy", "hold", "sell", "strong_buy", "strong_sell"];
    let total: f64 = names
        .iter()
        .map(|k| r[format!("analyst_ratings_{k}")].as_f64().unwrap())
        .sum();
    assert!(total > 0.0);
    for k in names {
        let c = r[format!("analyst_ratings_{k}")].as_f64().unwrap();
        close(
            &r[format!("analyst_ratings_{k}_percent")],
            c / total * 100.0,
            k,
        );
    }
    let pt = parsed(&a["pt_data"]);
    let pt = pt.as_array().unwrap();
    assert!(!pt.is_empty());
    assert_eq!(
        keys(&pt[0]),
        sorted(&[
            "date",
            "target_mean",
            "price_min",
            "price_max",
            "num",
            "accuracy_mean"
        ])
    );
    assert!(
        pt.windows(2)
            .all(|w| w[0]["date"].as_str() >= w[1]["date"].as_str())
    );

    // Earnings: the averages and counts over the last 12 reported quarters.
    let e = &get("/company_detail/get_earning?symbol=AAPL".into()).await["earning_data"];
    assert_eq!(
        keys(e),
        sorted(&[
            "newest_date",
            "avg_eps",
            "avg_eps_surprise",
            "beat_count",
            "miss_count",
            "history_earn_data",
            "upcoming_earn_data"
        ])
    );
    let history = parsed(&e["history_earn_data"]);
    let history = history.as_array().unwrap();
    assert_eq!(
        keys(&history[0]),
        sorted(&[
            "fiscal_date_ending",
            "eps",
            "eps_estimated",
            "eps_surprise",
            "revenue",
            "revenue_estimated",
            "revenue_surprise",
            "qoq_growth",
            "yoy_growth"
        ])
    );
    let last12 = &history[..12];
    let avg = last12
        .iter()
        .map(|h| h["eps"].as_f64().unwrap())
        .sum::<f64>()
        / 12.0;
    close(&e["avg_eps"], avg, "avg_eps");
    let surprises: Vec<f64> = last12
        .iter()
        .map(|h| (h["eps"].as_f64().unwrap() / h["eps_estimated"].as_f64().unwrap() - 1.0) * 100.0)
        .collect();
    let beats = surprises.iter().filter(|s| s.abs() < 10.0).count();
    assert_eq!(
        (e["beat_count"].as_u64(), e["miss_count"].as_u64()),
        (Some(beats as u64), Some(12 - beats as u64))
    );
    close(
        &history[0]["qoq_growth"],
        (history[0]["revenue"].as_f64().unwrap() / history[1]["revenue"].as_f64().unwrap() - 1.0)
            * 100.0,
        "qoq",
    );
    close(
        &history[0]["yoy_growth"],
        (history[0]["revenue"].as_f64().unwrap() / history[4]["revenue"].as_f64().unwrap() - 1.0)
            * 100.0,
        "yoy",
    );
    let upcoming = parsed(&e["upcoming_earn_data"]);
    for u in upcoming.as_array().unwrap() {
        assert_eq!(
            keys(u),
            sorted(&["fiscal_date_ending", "eps_estimated", "revenue_estimated"])
        );
    }

    // Statements: five years, newest first, derived fields from their rows.
    let income = parsed(&get("/company_detail/get_income?symbol=AAPL".into()).await["income_data"]);
    let income = income.as_array().unwrap();
    assert_eq!(income.len(), 5);
    assert_eq!(
        keys(&income[0]),
        sorted(&[
            "date",
            "filling_date",
            "revenue",
            "gross_profit",
            "operating_income",
            "net_income",
            "ebitda",
            "gross_profit_ratio",
            "operating_income_ratio",
            "net_income_ratio",
            "ebitdaratio",
            "eps",
            "epsdiluted",
            "revenue_growth_yoy",
            "gross_profit_growth_yoy",
            "operating_income_growth_yoy",
            "net_income_growth_yoy",
            "ebitda_growth_yoy",
            "gross_margin",
            "operating_margin",
            "net_margin",
            "ebitda_margin"
        ])
    );
    for it in income {
        assert_eq!(it["gross_margin"], it["gross_profit_ratio"]);
        assert_eq!(it["ebitda_margin"], it["ebitdaratio"]);
        close(
            &it["net_income_ratio"],
            it["net_income"].as_f64().unwrap() / it["revenue"].as_f64().unwrap(),
            "net ratio",
        );
    }
    close(
        &income[0]["revenue_growth_yoy"],
        (income[0]["revenue"].as_f64().unwrap() / income[1]["revenue"].as_f64().unwrap() - 1.0)
            * 100.0,
        "growth",
    );
    let quarterly = parsed(
        &get("/company_detail/get_income?symbol=AAPL&period=quarterly".into()).await["income_data"],
    );
    assert_eq!(quarterly.as_array().unwrap().len(), 20);
    let balance =
        parsed(&get("/company_detail/get_balance?symbol=AAPL".into()).await["balance_data"]);
    let b0 = &balance[0];
    assert_eq!(
        keys(b0),
        sorted(&[
            "date",
            "filling_date",
            "cash_and_cash_equivalents",
            "total_current_assets",
            "total_assets",
            "total_current_liabilities",
            "long_term_debt",
            "total_liabilities",
            "total_stockholders_equity",
            "total_debt",
            "current_ratio",
            "debt_to_equity"
        ])
    );
    close(
        &b0["debt_to_equity"],
        b0["total_liabilities"].as_f64().unwrap()
            / b0["total_stockholders_equity"].as_f64().unwrap(),
        "d/e",
    );
    let cash = parsed(
        &get("/company_detail/get_cash?symbol=AAPL&period=quarterly".into()).await["cash_data"],
    );
    let c0 = &cash[0];
    assert_eq!(
        keys(c0),
        sorted(&[
            "date",
            "filling_date",
            "net_cash_provided_by_operating_activities",
            "capital_expenditure",
            "free_cash_flow",
            "net_change_in_cash",
            "cash_at_end_of_period",
            "cash_at_beginning_of_period",
            "fcf_to_ocf_ratio"
        ])
    );
    let ocf = c0["net_cash_provided_by_operating_activities"]
        .as_f64()
        .unwrap();
    close(
        &c0["free_cash_flow"],
        ocf - c0["capital_expenditure"].as_f64().unwrap().abs(),
        "fcf",
    );

    // News and filings: the latest 50, newest first.
    let news = get("/company_detail/get_news?symbol=AAPL".into()).await;
    let news = news["news_data"].as_array().unwrap().clone();
    assert!(!news.is_empty() && news.len() <= 50);
    assert_eq!(
        keys(&news[0]),
        sorted(&["news_title", "news_url", "published_date"])
    );
    assert!(
        news.windows(2)
            .all(|w| w[0]["published_date"].as_str() >= w[1]["published_date"].as_str())
    );
    let table = md.table("news").await.unwrap();
    let mine = columns::texts(&table, "symbol")
        .unwrap()
        .iter()
        .filter(|s| s.as_deref() == Some("AAPL"))
        .count();
    assert_eq!(news.len(), mine.min(50));
    let sec = get("/company_detail/get_sec?symbol=AAPL".into()).await;
    assert_eq!(
        keys(&sec["sec_data"][0]),
        sorted(&["sec_type", "filling_date", "link", "description"])
    );

    // Holders: the top 10, valued at the latest close; insiders' value.
    let h = get("/company_detail/get_holder?symbol=AAPL".into()).await;
    let inst = parsed(&h["holder_data"]["institutional_holders"]);
    let inst = inst.as_array().unwrap();
    assert!(!inst.is_empty() && inst.len() <= 10);
    assert_eq!(
        keys(&inst[0]),
        sorted(&[
            "date_reported",
            "holder",
            "shares",
            "change_percent",
            "value"
        ])
    );
    close(
        &inst[0]["value"],
        inst[0]["shares"].as_f64().unwrap() * last_close,
        "holder value",
    );
    assert!(
        inst.windows(2)
            .all(|w| w[0]["shares"].as_f64() >= w[1]["shares"].as_f64())
    );
    assert!(parsed(&h["holder_data"]["fund_holders"]).is_array());
    let ins = parsed(&h["insider_data"]["data"]);
    let i0 = &ins[0];
    assert_eq!(
        keys(i0),
        sorted(&[
            "transaction_date",
            "reporting_name",
            "type",
            "securities_transacted",
            "price",
            "value"
        ])
    );
    close(
        &i0["value"],
        i0["securities_transacted"].as_f64().unwrap() * i0["price"].as_f64().unwrap(),
        "insider value",
    );

    // Predictions: every company on the latest date, no symbol needed.
    let (status, pred) = s.get("/company_detail/get_pred", USER).await;
    assert_eq!(status, 200, "{pred}");
    let all = parsed(&pred["data"]["all_pred_data"]);
    let all = all.as_array().unwrap();
    assert!(all.len() > 10);
    assert_eq!(
        keys(&all[0]),
        sorted(&[
            "Ticker",
            "Target",
            "PredictEndDate",
            "Close",
            "MeanAcc",
            "history_count",
            "latest_rating"
        ])
    );
    assert!(all.iter().all(|p| {
        ["Strong Sell", "Sell", "Hold", "Buy", "Strong Buy"]
            .contains(&p["latest_rating"].as_str().unwrap())
    }));

    // Refusals: unknown symbol 404, missing symbol and bad period 400.
    let (status, r) = s
        .get("/company_detail/get_income?symbol=NOSUCH", USER)
        .await;
    assert_eq!((status, &r["code"]), (404, &json!(404)), "{r}");
    for (path, field) in [
        ("/company_detail/get_profile", "symbol"),
        (
            "/company_detail/get_income?symbol=AAPL&period=weekly",
            "period",
        ),
        ("/company_detail/get_news?symbol=A%20B", "symbol"),
    ] {
        let (status, r) = s.get(path, USER).await;
        assert_eq!((status, &r["code"]), (400, &json!(400)), "{path}: {r}");
        assert!(r["msg"].as_str().unwrap().contains(field), "{path}: {r}");
    }
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn reports_newest_first_by_type() {
    let (s, _dir) = TestServer::fresh().await;
    let (_, types) = s.get("/reports/get-predefined-report-types", USER).await;
    let keys: Vec<&str> = types["data"]["report_types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        ["quantedge", "modeledge", "sentimentedge", "tradingedge"]
    );
    let (status, latest) = s.get("/reports", USER).await;
    assert_eq!(status, 200);
    assert_eq!(latest["count"], 5);
    assert!(latest.get("type").is_none(), "type only when filtered");
    let data = latest["data"].as_array().unwrap();
    assert_eq!(
        keys_of(&data[0]),
        ["author", "post_content", "publish_date", "title", "url"]
    );
    assert!(
        data.windows(2)
            .all(|w| w[0]["publish_date"].as_str() >= w[1]["publish_date"].as_str())
    );
    let (_, some) = s.get("/reports?report_type=modeledge&n=10", USER).await;
    assert_eq!(
        (&some["type"], &some["count"]),
        (&json!("modeledge"), &json!(10))
    );
    assert!(
        some["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["url"].as_str().unwrap().contains("/modeledge/"))
    );
    for (q, field) in [
        ("n=11", "n"),
        ("n=0", "n"),
        ("report_type=gossip", "report_type"),
    ] {
        let (status, r) = s.get(&format!("/reports?{q}"), USER).await;
        assert_eq!(status, 400, "{q}");
        assert!(r["msg"].as_str().unwrap().contains(field), "{q}: {r}");
    }
    s.stop().await;
}

fn keys_of(v: &Value) -> Vec<String> {
    keys(v)
}
