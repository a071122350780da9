//! Company detail, reports over HTTP: exact field names, values recomputed
//! from the tables, and the refusals.

use api::server::{DEMO_EMAIL, DEMO_PASSWORD};
use platform::marketdata::{LocalDir, MarketData, ParquetMarketData, columns};
use serde_json::{Value, json};
use std::sync::Arc;
use tests::server::{TestServer, market_dir};

const USER: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
    k.sort();
    k
}

fn sorted(v: &[&str]) -> Vec<String> {
    let mut k: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    k.sort();
    k
}

/// A JSON-string field, parsed.
fn parsed(v: &Value) -> Value {
    serde_json::from_str(v.as_str().expect("a JSON string")).unwrap()
}

fn close(a: &Value, b: f64, what: &str) {
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

#[tokio::test(flavor = "multi_thread")]
async fn every_screen_over_http_with_its_fields() {
    let (s, _dir) = TestServer::fresh().await;
    let md = ParquetMarketData::new(Arc::new(LocalDir::new(market_dir())));
    let (_, list) = s.get("/screens/get-predefined-screens", USER).await;
    let screens = list["data"]["screens"].as_array().unwrap().clone();
    assert_eq!(screens.len(), 15);
    let fields = |key: &str| -> Vec<&str> {
        match key {
            k if k.ends_with("sentiment-seasonality") => vec![
                "symbol",
                "name",
                "group",
                "last_value",
                "last_update",
                "AvgReturn",
            ],
            k if k.ends_with("sentiment-trend") => vec![
                "symbol",
                "chart_name",
                "name",
                "group",
                "last_value",
                "last_update",
                "close",
                "MA",
            ],
            k if k.ends_with("ideas") => vec![
                "symbol",
                "chart_name",
                "date",
                "last_value",
                "five_ma",
                "equity_close",
                "ma_200",
            ],
            "commod-hedger-extremes" => vec![
                "symbol",
                "name",
                "last_value",
                "last_update",
                "three_year_max",
                "three_year_min",
                "net_position",
            ],
            "etf-sector-ma" => vec![
                "symbol",
                "chart_name",
                "name",
                "last_value",
                "last_update",
                "over_10",
                "over_200",
            ],
            "optix-exhaustion" => vec!["chart_name", "last_value", "last_update", "group", "10MA"],
            _ => vec![
                "name",
                "symbol",
                "report_date",
                "divyield",
                "pe_ratio",
                "onemonthperf",
                "threemonthperf",
                "sixmonthperf",
                "oneyearperf",
                "twoyearperf",
                "eps_growth",
                "payout_ratio",
            ],
        }
    };
    let mut listed = 0;
    for sc in &screens {
        let key = sc["key"].as_str().unwrap();
        let path = if key.ends_with("ideas") {
            format!("/screens?key={key}&date=2026-11-12")
        } else {
            format!("/screens?key={key}")
        };
        let (status, r) = s.get(&path, USER).await;
        assert_eq!((status, &r["code"]), (200, &json!(200)), "{key}: {r}");
        assert_eq!(r["type"], sc["category"], "{key}");
        for rec in r["data"].as_array().unwrap() {
            assert_eq!(keys(rec), sorted(&fields(key)), "{key}");
            listed += 1;
        }
    }
    assert!(listed > 50, "{listed} records");

    // Sector breadth: the share of the sector's stocks above their averages.
    let (_, sectors) = s.get("/screens?key=etf-sector-ma", USER).await;
    let symbols = md.symbols().await.unwrap();
    let mut checked = 0;
    for rec in sectors["data"].as_array().unwrap() {
        let etf = symbols
            .iter()
            .find(|x| x.symbol == rec["symbol"].as_str().unwrap())
            .unwrap();
        let (mut above, mut n) = (0, 0);
        for st in symbols
            .iter()
            .filter(|x| x.asset_class == "stock" && x.sector == etf.sector)
        {
            let b = md.daily(&st.symbol).await.unwrap();
            let last = b.len() - 1;
            let ma10 = b.close[last - 9..=last].iter().sum::<f64>() / 10.0;
            n += 1;
            above += (b.close[last] > ma10) as usize;
        }
        if n > 0 {
            close(&rec["over_10"], above as f64 / n as f64 * 100.0, "over_10");
            checked += 1;
        } else {
            assert!(rec["over_10"].is_null());
        }
    }
    assert!(checked > 0);
    // Exhaustion: readings beyond their extremes, with the 10-reading average.
    let (_, ex) = s.get("/screens?key=optix-exhaustion", USER).await;
    let catalog = md.indicator_catalog().await.unwrap();
    for rec in ex["data"].as_array().unwrap() {
        let m = catalog
            .iter()
            .find(|m| m.chart_name == rec["chart_name"].as_str().unwrap())
            .unwrap();
        let series = md.indicator_series(&m.url).await.unwrap();
        let v = *series.close.last().unwrap();
        assert!(v >= m.opt_extreme || v <= m.pess_extreme);
        let tail = &series.close[series.close.len() - 10..];
        close(&rec["10MA"], tail.iter().sum::<f64>() / 10.0, "10MA");
    }
    // The ideas' date is read; a bad key lists the valid ones.
    let (_, ideas) = s
        .get("/screens?key=russell3000-short-ideas&date=2026-11-12", USER)
        .await;
    assert!(
        ideas["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["date"] == "2026-11-12")
    );
    let (status, r) = s.get("/screens?key=best-stocks", USER).await;
    assert_eq!(status, 400);
    let msg = r["msg"].as_str().unwrap();
    assert!(
        msg.contains("key") && msg.contains("etf-sector-ma"),
        "{msg}"
    );
    let (status, r) = s
        .get("/screens?key=stocks-long-ideas&date=12/11/2026", USER)
        .await;
    assert_eq!(status, 400);
    assert!(r["msg"].as_str().unwrap().contains("date"), "{r}");
    s.stop().await;
}

/// A table as CSV text: every text quoted, numbers in their shortest exact form.
fn to_csv(b: &platform::marketdata::RecordBatch) -> String {
    use columns::Column;
    let cols = columns::all(b);
    let mut out = cols
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for i in 0..b.num_rows() {
        let cells: Vec<String> = cols
            .iter()
            .map(|(_, c)| match c {
                Column::Text(v) => v[i]
                    .as_ref()
                    .map_or(String::new(), |s| format!("\"{}\"", s.replace('"', "\"\""))),
                Column::Number(v) => v[i].map_or(String::new(), |x| x.to_string()),
                Column::Integer(v) => v[i].map_or(String::new(), |x| x.to_string()),
                Column::Date(v) => v[i].map_or(String::new(), |d| d.to_string()),
                Column::Time(v) => v[i].map_or(String::new(), |t| {
                    t.format("%Y-%m-%d %H:%M:%S%.f").to_string()
                }),
            })
            .collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn every_table_imports_from_csv_and_parquet_and_is_served() {
    use clap::Parser;
    let source = ParquetMarketData::new(Arc::new(LocalDir::new(market_dir())));
    let data = tempfile::tempdir().unwrap();
    let market = data.path().join("market");
    tests::server::sample_into(&market);
    let run = |args: Vec<String>| {
        let mut argv = vec![
            "marketlab".to_string(),
            "--data-dir".into(),
            data.path().display().to_string(),
            "import".into(),
            "table".into(),
        ];
        argv.extend(args);
        api::cli::run(api::cli::Cli::parse_from(argv))
    };
    let files = tempfile::tempdir().unwrap();
    for (name, _) in sample::schema::TABLES {
        let original = source.table(name).await.unwrap();
        // CSV: written by hand, read back to the same table.
        let csv = files.path().join(format!("{name}.csv"));
        std::fs::write(&csv, to_csv(&original)).unwrap();
        run(vec![
            "--name".into(),
            name.into(),
            csv.display().to_string(),
        ])
        .await
        .unwrap();
        let fresh = ParquetMarketData::new(Arc::new(LocalDir::new(&market)));
        assert_eq!(
            *fresh.table(name).await.unwrap(),
            *original,
            "{name} from CSV"
        );
        // Parquet: the served file itself.
        let pq = files.path().join(format!("{name}.parquet"));
        std::fs::copy(
            market_dir().join(platform::marketdata::layout::table(name)),
            &pq,
        )
        .unwrap();
        run(vec!["--name".into(), name.into(), pq.display().to_string()])
            .await
            .unwrap();
        let fresh = ParquetMarketData::new(Arc::new(LocalDir::new(&market)));
        assert_eq!(
            *fresh.table(name).await.unwrap(),
            *original,
            "{name} from Parquet"
        );
    }
    // Refusals name the file, line and column; nothing is written.
    let bad = files.path().join("bad.csv");
    for (name, text, want) in [
        (
            "reports",
            "type,title\nquantedge,x\n",
            "missing column 'post_content'",
        ),
        (
            "price_targets",
            "symbol,date,target_mean,price_min,price_max,num,accuracy_mean\nAAPL,2026-01-02,abc,1,2,3,4\n",
            "line 2, column target_mean",
        ),
        (
            "price_targets",
            "symbol,date,target_mean,price_min,price_max,num,accuracy_mean\n,2026-01-02,1,1,2,3,4\n",
            "column symbol",
        ),
        (
            "analyst_ratings",
            "symbol,date,strong_buy,buy,hold,sell,strong_sell\nAAPL,01/02/2026,1,2,3,4,5\n",
            "column date",
        ),
        ("nonsense", "a\n1\n", "not a served table"),
    ] {
        std::fs::write(&bad, text).unwrap();
        let e = run(vec![
            "--name".into(),
            name.into(),
            bad.display().to_string(),
        ])
        .await
        .unwrap_err();
        assert!(e.to_string().contains(want), "{name}: {e}");
    }
    // A user's own table is what the server answers with.
    let profiles = source.table("profiles").await.unwrap();
    let renamed = to_csv(&profiles).replace("\"Apple Inc.\"", "\"Apple Computer, Inc.\"");
    assert_ne!(renamed, to_csv(&profiles));
    let csv = files.path().join("profiles.csv");
    std::fs::write(&csv, renamed).unwrap();
    run(vec![
        "--name".into(),
        "profiles".into(),
        csv.display().to_string(),
    ])
    .await
    .unwrap();
    let mut opts = tests::server::Options::new(data.path().join("tasks.sqlite"));
    opts.market_dir = market.clone();
    let s = TestServer::start(opts).await;
    let (_, p) = s.get("/company_detail/get_profile?symbol=AAPL", USER).await;
    assert_eq!(p["data"]["profile"]["companyName"], "Apple Computer, Inc.");
    s.stop().await;
}
