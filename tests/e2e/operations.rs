//! A request for every operation of the three API documents, shared by the
//! benchmarks that walk them all (spec scale, cost).

use serde_json::{Value, json};

/// One timed operation: its documented key, the request, its label.
pub struct Op {
    pub key: &'static str,
    pub method: &'static str,
    pub path: String,
    pub body: Option<Value>,
    /// Submits repeat one Idempotency-Key: the first creates the task, the
    /// rest are replays (validation and the key's lookup, nothing queued).
    pub idempotent: bool,
}

pub fn get(key: &'static str, path: impl Into<String>) -> Op {
    Op {
        key,
        method: "GET",
        path: path.into(),
        body: None,
        idempotent: false,
    }
}

pub fn post(key: &'static str, path: &str, body: Value, idempotent: bool) -> Op {
    Op {
        key,
        method: "POST",
        path: path.into(),
        body: Some(body),
        idempotent,
    }
}

pub fn strategy() -> Value {
    crate::server::optix_strategy()
}

pub fn pattern() -> Value {
    json!({"symbol": "SPX", "system_pattern": "double_bottom", "corr_per": 85, "time_in_market": 21})
}

pub fn scanner_trial() -> Value {
    json!({"name": "spec-scale bench", "start_date": "2026-08-03", "end_date": "2026-11-20",
        "find_type": "stock/etf", "signals": ["All"], "total_capital": 100000,
        "long_short_ratio": "0.7/0.3", "commission": 0.05, "daily_limit": 3})
}

/// A small monthly rotation over three sample stocks.
pub fn portfolio() -> Value {
    json!({"universe": ["AAPL", "MSFT", "NVDA"], "start_date": "2020-01-02", "end_date": "2021-12-31",
        "weights": {"schedule": {"every": "month"}, "select": {"method": "top", "k": 1, "by": {"momentum": 20}}}})
}

pub fn correlation() -> Value {
    json!({"benchmark": "SPX", "stock_comparison": ["IVV", "TLT"], "start_date": "2020-01-02", "end_date": "2024-12-31"})
}

/// Every operation with a request that answers 2xx; `ids` are finished tasks.
pub fn operations(ids: &Ids) -> Vec<Op> {
    let q = "symbol=SPX&system_pattern=double_bottom&corr_per=85&time_in_market=21";
    let mut ops = vec![
        get("GET /health", "/health"),
        get("GET /auth-info", "/auth-info"),
        get("GET /assets/{file}", "/assets/lightweight-charts.js"),
        get("GET /usage", "/usage"),
        // Backtest service.
        get("GET /backtest/indicators/list", "/backtest/indicators/list"),
        get(
            "GET /backtest/indicators/metadata",
            "/backtest/indicators/metadata?indicator=SPX_OPTIX",
        ),
        get("GET /backtest/tutorial", "/backtest/tutorial"),
        get("GET /backtest/tasks", "/backtest/tasks?limit=20"),
        get(
            "GET /backtest/status/{task_id}",
            format!("/backtest/status/{}", ids.backtest),
        ),
        get(
            "GET /backtest/report/{task_id}",
            format!("/backtest/report/{}", ids.backtest),
        ),
        get(
            "GET /backtest/chart/{task_id}",
            format!("/backtest/chart/{}", ids.backtest),
        ),
        get("GET /backtest/batches", "/backtest/batches"),
        get(
            "GET /backtest/batch/{batch_id}",
            format!("/backtest/batch/{}", ids.batch),
        ),
        get(
            "GET /backtest/batch/{batch_id}/results",
            format!("/backtest/batch/{}/results", ids.batch),
        ),
        get(
            "GET /backtest/batch/{batch_id}/report",
            format!("/backtest/batch/{}/report", ids.batch),
        ),
        post(
            "POST /backtest/validate",
            "/backtest/validate",
            strategy(),
            false,
        ),
        post(
            "POST /backtest/start_backtest",
            "/backtest/start_backtest",
            strategy(),
            true,
        ),
        post(
            "POST /backtest/batch",
            "/backtest/batch",
            json!({"name": "spec-scale bench", "strategy": strategy(), "grid": {"risk_control": ["//5", "//10"]}}),
            true,
        ),
        // Analytics service.
        get("GET /seasonality", "/seasonality?ticker=SPX"),
        get(
            "GET /seasonality/get-predefined-holidays",
            "/seasonality/get-predefined-holidays",
        ),
        get(
            "GET /seasonality/one-dollar-curve",
            "/seasonality/one-dollar-curve?ticker=SPX",
        ),
        get(
            "GET /seasonality/performance-around-holiday",
            "/seasonality/performance-around-holiday?ticker=SPX",
        ),
        get(
            "GET /seasonality/performance-around-specific-days",
            "/seasonality/performance-around-specific-days?ticker=SPX",
        ),
        get(
            "GET /seasonality/performance-by-day-of-month",
            "/seasonality/performance-by-day-of-month?ticker=SPX",
        ),
        get(
            "GET /seasonality/performance-by-day-of-single-month",
            "/seasonality/performance-by-day-of-single-month?ticker=SPX",
        ),
        get(
            "GET /seasonality/performance-by-day-of-year",
            "/seasonality/performance-by-day-of-year?ticker=SPX",
        ),
        get(
            "GET /seasonality/performance-by-month",
            "/seasonality/performance-by-month?ticker=SPX",
        ),
        get(
            "GET /seasonality/performance-by-week",
            "/seasonality/performance-by-week?ticker=SPX",
        ),
        post("POST /symbol_corr", "/symbol_corr", correlation(), false),
        post("POST /symbol_beta", "/symbol_beta", correlation(), false),
        post(
            "POST /asset_corr",
            "/asset_corr",
            json!({"start_date": "2020-01-02", "end_date": "2024-12-31"}),
            false,
        ),
        post(
            "POST /pattern_corr",
            "/pattern_corr",
            json!({"referenceSymbol": "SPX", "referenceStartDate": "2024-01-02", "referenceEndDate": "2024-06-28", "comparisonSymbol": "NDX", "comparisonStartDate": "2023-01-03", "comparisonEndDate": "2023-06-30"}),
            false,
        ),
        get(
            "GET /cpm/get-predefined-patterns",
            "/cpm/get-predefined-patterns",
        ),
        get("GET /cpm/scan", format!("/cpm/scan?{q}")),
        post("POST /cpm/scan", "/cpm/scan", pattern(), false),
        get(
            "GET /cpm/scan_with_backtest",
            format!("/cpm/scan_with_backtest?{q}"),
        ),
        post(
            "POST /cpm/scan_with_backtest",
            "/cpm/scan_with_backtest",
            pattern(),
            false,
        ),
        post("POST /cpm/scan/start", "/cpm/scan/start", pattern(), true),
        post(
            "POST /cpm/backtest/start",
            "/cpm/backtest/start",
            pattern(),
            true,
        ),
        get(
            "GET /cpm/status/{task_id}",
            format!("/cpm/status/{}", ids.cpm),
        ),
        get(
            "GET /cpm/report/{task_id}",
            format!("/cpm/report/{}", ids.cpm),
        ),
        get("GET /cpm/tasks", "/cpm/tasks"),
        post(
            "POST /backtest/portfolio",
            "/backtest/portfolio",
            portfolio(),
            true,
        ),
        post(
            "POST /smart-scanner-backtest/start",
            "/smart-scanner-backtest/start",
            scanner_trial(),
            true,
        ),
        get(
            "GET /smart-scanner-backtest/status/{task_id}",
            format!("/smart-scanner-backtest/status/{}", ids.scanner),
        ),
        get(
            "GET /smart-scanner-backtest/report/{task_id}",
            format!("/smart-scanner-backtest/report/{}", ids.scanner),
        ),
        get(
            "GET /smart-scanner-backtest/tasks",
            "/smart-scanner-backtest/tasks",
        ),
        get(
            "GET /smart-stock-scanner/get-predefined-signals",
            "/smart-stock-scanner/get-predefined-signals",
        ),
        get(
            "GET /smart-stock-scanner/latest-day-all",
            "/smart-stock-scanner/latest-day-all",
        ),
        get(
            "GET /smart-stock-scanner/single/{ticker}",
            "/smart-stock-scanner/single/AAPL",
        ),
        get(
            "GET /smart-option-scanner/options",
            "/smart-option-scanner/options",
        ),
        get("GET /screens", "/screens?key=etf-sector-ma"),
        get(
            "GET /screens/get-predefined-screens",
            "/screens/get-predefined-screens",
        ),
        get("GET /reports", "/reports"),
        get(
            "GET /reports/get-predefined-report-types",
            "/reports/get-predefined-report-types",
        ),
        get(
            "GET /company_detail/market_pred",
            "/company_detail/market_pred?symbol=AAPL",
        ),
        get("GET /company_detail/get_pred", "/company_detail/get_pred"),
        get("GET /views/seasonality", "/views/seasonality?ticker=SPX"),
        get(
            "GET /views/correlation",
            "/views/correlation?benchmark=SPX&stock_comparison=IVV,TLT&start_date=2020-01-02&end_date=2024-12-31",
        ),
        get("GET /views/pattern", format!("/views/pattern?{q}")),
        // Indicator data service.
        get("GET /ws/getAllSymbols", "/ws/getAllSymbols"),
        get(
            "GET /ws/getAllSymbolswithIndexes",
            "/ws/getAllSymbolswithIndexes",
        ),
        get(
            "GET /ws/getAllUserSelectedSymbols",
            "/ws/getAllUserSelectedSymbols",
        ),
        get(
            "GET /ws/getAllUserSelectedSymbolsWithIndexes",
            "/ws/getAllUserSelectedSymbolsWithIndexes",
        ),
        get("GET /ws/getModelData", "/ws/getModelData"),
        get(
            "GET /ws/getModelSymbolswithIndexes",
            "/ws/getModelSymbolswithIndexes",
        ),
        get(
            "GET /ws/getGroupSymbols/{group}",
            "/ws/getGroupSymbols/Core",
        ),
        get(
            "GET /ws/getSymbolData/{symbol}",
            "/ws/getSymbolData/SPX_OPTIX",
        ),
        get(
            "GET /ws/getSymbolSentimentData/{symbol}",
            "/ws/getSymbolSentimentData/SPX_OPTIX",
        ),
        get(
            "GET /ws/getSymbolDataLimitDays/{symbol}",
            "/ws/getSymbolDataLimitDays/SPX_OPTIX?days=90",
        ),
        get(
            "GET /ws/getSymbolDataSentimentLimitDays/{symbol}",
            "/ws/getSymbolDataSentimentLimitDays/SPX_OPTIX?days=90",
        ),
        get(
            "GET /ws/getSymbolLimitDate/{symbol}",
            "/ws/getSymbolLimitDate/SPX_OPTIX?date=20261120",
        ),
        get("GET /ws/getTodayData", "/ws/getTodayData"),
        get("GET /ws/getTodayDataIndexes", "/ws/getTodayDataIndexes"),
        get(
            "GET /ws/getAllDataForDate",
            "/ws/getAllDataForDate?date=20261120",
        ),
        get(
            "GET /ws/getAllSymbolDataLimitDays",
            "/ws/getAllSymbolDataLimitDays?days=5",
        ),
        get("GET /ws/getIntradaySymbols", "/ws/getIntradaySymbols"),
        get(
            "GET /ws/getSymbolIntradayHistory/{symbol}",
            "/ws/getSymbolIntradayHistory/SPX_OPTIX",
        ),
        get(
            "GET /ws/getSymbolIntradayLimitDays/{symbol}",
            "/ws/getSymbolIntradayLimitDays/SPX_OPTIX?days=5",
        ),
        get("GET /ws/getTodayIntradayData", "/ws/getTodayIntradayData"),
        get("GET /ws/getUserIndicators", "/ws/getUserIndicators"),
        get(
            "GET /ws/getUserIndicatorData",
            "/ws/getUserIndicatorData?url=CUSTOM_TECH_SPREAD",
        ),
        get("GET /ws/usage", "/ws/usage"),
    ];
    for what in [
        "get_analysis",
        "get_balance",
        "get_cash",
        "get_earning",
        "get_holder",
        "get_income",
        "get_news",
        "get_profile",
        "get_sec",
    ] {
        let key: &'static str = Box::leak(format!("GET /company_detail/{what}").into_boxed_str());
        ops.push(get(key, format!("/company_detail/{what}?symbol=AAPL")));
    }
    ops
}

/// Finished tasks the status and report operations read.
pub struct Ids {
    pub backtest: String,
    pub batch: String,
    pub cpm: String,
    pub scanner: String,
}
