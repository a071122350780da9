//! Analytics views: the seasonality and correlation pages fetch the API's
//! JSON themselves, the pattern view answers a pattern search; each page's
//! numbers are checked against the same request made here.

use super::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn the_seasonality_view_draws_the_apis_numbers() {
    let (server, _dir) = TestServer::fresh().await;
    let query = "ticker=SPX&start_year=2006&end_year=2025&holiday_name=Christmas%20Day&shift=3&entry_day=200&holding_days=30";
    let page = render_ready(
        &server.base,
        &format!("/views/seasonality?{query}"),
        "seasonality",
    );
    // The page asked the API itself, from the browser, with the page's credentials.
    assert!(
        page.urls
            .iter()
            .any(|u| u.contains("/seasonality?ticker=SPX")),
        "{:?}",
        page.urls
    );
    let (status, answer) = server
        .get(
            &format!("/seasonality?{query}&features=performance-by-month,performance-by-week,performance-around-holiday,one-dollar-curve"),
            DEMO,
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    let d = &answer["data"];
    let cells = cells(&page.dom);
    let rows = |feature: &str| d[feature]["data"].as_array().unwrap().clone();
    let field = |rows: &[Value], key: &str| rows.iter().map(|r| r[key].clone()).collect::<Vec<_>>();
    let months = rows("performance-by-month");
    assert_eq!(months.len(), 12);
    assert_same(
        column(&cells, "MonthName"),
        field(&months, "MonthName"),
        "MonthName",
    );
    assert_same(
        column(&cells, "month:Mean_Return"),
        field(&months, "Mean_Return"),
        "month:Mean_Return",
    );
    assert_same(
        column(&cells, "month:Positive_Pct"),
        field(&months, "Positive_Pct"),
        "month:Positive_Pct",
    );
    let weeks = rows("performance-by-week");
    assert_same(
        column(&cells, "Weekday"),
        field(&weeks, "Weekday"),
        "Weekday",
    );
    assert_same(
        column(&cells, "week:Mean_Return"),
        field(&weeks, "Mean_Return"),
        "week:Mean_Return",
    );
    let holiday = d["performance-around-holiday"]["data"]["data"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(holiday.len(), 7, "three sessions either side and the day");
    assert_same(
        column(&cells, "holiday:Mean_Return"),
        field(&holiday, "Mean_Return"),
        "holiday:Mean_Return",
    );
    assert_same(
        column(&cells, "holiday:Positive_Pct"),
        field(&holiday, "Positive_Pct"),
        "holiday:Positive_Pct",
    );
    let curve = d["one-dollar-curve"]["data"]["data"].as_array().unwrap();
    assert_same(
        one(&cells, "curve:last"),
        curve.last().unwrap()["Equity"].clone(),
        "curve",
    );
    assert!(page.dom.contains("Christmas Day (±3 sessions)"));
    assert!(
        page.dom.matches("<canvas").count() >= 8,
        "four charts drawn"
    );

    // A mistake is a clear answer before any page: unknown ticker, bad field.
    let (status, body) = server.get("/views/seasonality?ticker=NOPE", DEMO).await;
    assert_eq!(status, 404, "{body}");
    let (status, body) = server
        .get("/views/seasonality?ticker=SPX&shift=abc", DEMO)
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(body["msg"].as_str().unwrap().contains("shift"), "{body}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_correlation_view_draws_heat_maps_and_rolling_lines() {
    let (server, _dir) = TestServer::fresh().await;
    let page = render_ready(
        &server.base,
        "/views/correlation?benchmark=SPX&stock_comparison=IVV,TLT,GLD&start_date=2020-01-02&end_date=2024-12-31&roll_window=63",
        "correlation",
    );
    let request = json!({"benchmark": "SPX", "stock_comparison": ["IVV", "TLT", "GLD"],
        "start_date": "2020-01-02", "end_date": "2024-12-31", "roll_window": 63});
    let (_, corr) = server.post("/symbol_corr", DEMO, &request).await;
    let (_, beta) = server.post("/symbol_beta", DEMO, &request).await;
    let (_, assets) = server
        .post(
            "/asset_corr",
            DEMO,
            &json!({"start_date": "2020-01-02", "end_date": "2024-12-31"}),
        )
        .await;
    assert_eq!(
        (
            corr["code"].clone(),
            beta["code"].clone(),
            assets["code"].clone()
        ),
        (json!(211), json!(211), json!(211))
    );
    let cells = cells(&page.dom);
    // Every cell of both matrices is the answer's.
    for (prefix, rows) in [
        ("corr:", &corr["data"]["corr_matrix"]),
        ("asset:", &assets["data"]["corr_info"]),
    ] {
        let rows = rows.as_array().unwrap();
        let names: Vec<&str> = rows.iter().map(|r| r["index"].as_str().unwrap()).collect();
        for r in rows {
            for n in &names {
                let key = format!("{prefix}{}/{n}", r["index"].as_str().unwrap());
                assert_same(one(&cells, &key), r[*n].clone(), &key);
            }
        }
    }
    // Each line ends on the answer's last value and has one point per defined one.
    for (prefix, rows) in [
        ("rolling:", &corr["data"]["corr_roll"]),
        ("beta:", &beta["data"]["beta_roll"]),
    ] {
        let rows = rows.as_array().unwrap();
        for symbol in ["IVV", "TLT", "GLD"] {
            let defined: Vec<&Value> = rows
                .iter()
                .map(|r| &r[symbol])
                .filter(|v| v.is_number())
                .collect();
            let key = format!("{prefix}{symbol}");
            assert_same(one(&cells, &key), (*defined.last().unwrap()).clone(), &key);
            let points = page
                .dom
                .split(&format!("data-key=\"{key}\""))
                .nth(1)
                .and_then(|r| r.split("data-points=\"").nth(1))
                .and_then(|r| r.split('"').next())
                .unwrap_or("?");
            assert_eq!(points, defined.len().to_string(), "{key}: points drawn");
        }
    }
    assert!(page.dom.matches("<canvas").count() >= 4, "two charts drawn");
    let (status, body) = server
        .get(
            "/views/correlation?benchmark=SPX&stock_comparison=IVV&start_date=2024-01-02",
            DEMO,
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(body["msg"].as_str().unwrap().contains("end_date"), "{body}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_pattern_view_answers_a_search_with_its_backtest() {
    let (server, _dir) = TestServer::fresh().await;
    let query =
        "symbol=SPX&start_date=2024-03-01&end_date=2024-05-31&corr_per=80&time_in_market=10";
    let page = render_ready(&server.base, &format!("/views/pattern?{query}"), "pattern");
    let (status, answer) = server
        .get(&format!("/cpm/scan_with_backtest?{query}"), DEMO)
        .await;
    assert_eq!(status, 200, "{answer}");
    let data = &answer["data"];
    let cells = cells(&page.dom);
    let patterns = data["patterns"].as_array().unwrap();
    assert!(patterns.len() > 5, "{data}");
    for key in ["StartDate", "EndDate", "Corr", "BarsNum"] {
        let want: Vec<Value> = patterns.iter().map(|p| p[key].clone()).collect();
        let shown = column(&cells, key);
        assert_same(shown[..want.len()].to_vec(), want, key);
    }
    for (d, p) in column(&cells, "drawn-corr").iter().zip(patterns).take(10) {
        near(d, &p["Corr"], 1e-9, "the drawn window's correlation");
    }
    let info = &data["backtest_info"];
    for key in ["TOTAL RETURN", "WIN RATE", "TOTAL TRADES"] {
        assert_same(one(&cells, key), info[key].clone(), key);
    }
    near(
        &one(&cells, "compounded-return"),
        &info["TOTAL RETURN"],
        1e-9,
        "compounded",
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_docs_page_and_the_api_description_link_the_views() {
    let (server, _dir) = TestServer::fresh().await;
    let http = reqwest::Client::new();
    let docs = http.get(server.url("/docs")).send().await.unwrap();
    let docs = docs.text().await.unwrap();
    let (_, description) = server.get("/openapi.json", None).await;
    let description = description["info"]["description"].as_str().unwrap();
    let links: Vec<String> = docs
        .split("href=\"")
        .skip(1)
        .filter_map(|r| r.split('"').next())
        .filter(|h| h.starts_with("/views/"))
        .map(|h| h.replace("&amp;", "&"))
        .collect();
    assert_eq!(links.len(), 3, "{docs}");
    for link in &links {
        assert!(
            description.contains(link.as_str()),
            "{link} in the description"
        );
        let page = http
            .get(server.url(link))
            .basic_auth(DEMO_EMAIL, Some(DEMO_PASSWORD))
            .send()
            .await
            .unwrap();
        assert_eq!(page.status(), 200, "{link}");
        assert!(
            page.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/html"),
            "{link}"
        );
    }
    for op in [
        "backtest_report",
        "cpm_report",
        "scanner_report",
        "batch_report",
    ] {
        assert!(description.contains(op), "{op} in the description");
    }
    server.stop().await;
}
