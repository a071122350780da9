//! Report pages of the analytics service's tasks (see [`crate::report`]):
//! `GET /cpm/report/{task_id}` and `GET /smart-scanner-backtest/report/{task_id}`.
//! Owner-checked like the status endpoints; a task not finished yet shows
//! its status and reloads itself.

use crate::analytics::tasks::CPM_KINDS;
use crate::auth::Tenant;
use crate::error::ApiError;
use crate::error::Reply;
use crate::report::figures::figures;
use crate::report::{chart_page, task_heading};
use crate::state::AppState;
use crate::tasks::owned_task;
use axum::extract::Path;
use platform::tasks::TaskKind;
use serde_json::{Value, json};
use services::analytics::cpm::requests::{CpmParams, Mode};
use services::analytics::scanner::backtest::requests::ScannerBacktestParams;
use services::glossary::Kind;

fn text<'a>(params: &'a Value, key: &str) -> &'a str {
    params.get(key).and_then(|v| v.as_str()).unwrap_or("")
}

/// A pattern-match task as a page: the template with the best matches laid
/// over it, the matches; for a backtest also the trades on the price, their
/// compounded return, the metrics and the trade list.
#[utoipa::path(get, path = "/cpm/report/{task_id}", tag = "analytics", params(("task_id" = String, Path, description = "A pattern-match task of the caller (scan or backtest)")),
    responses((status = 200, description = "The report page (a task not finished shows its status and reloads every 2 s)", content_type = "text/html", body = String),
        crate::analytics::AnalyticsErrors))]
pub(crate) async fn cpm_report(t: Tenant, Path(task_id): Path<String>) -> Reply {
    let task = owned_task(&t.state, &t.caller, &task_id, &CPM_KINDS).await?;
    let mode = match task.kind {
        TaskKind::CpmScan => Mode::Scan,
        _ => Mode::Backtest,
    };
    let symbol = text(&task.params, "symbol").trim().to_uppercase();
    let name = match text(&task.params, "name").trim() {
        "" => format!(
            "Pattern {} of {symbol}",
            if mode == Mode::Scan {
                "scan"
            } else {
                "backtest"
            }
        ),
        n => n.to_string(),
    };
    let template = match text(&task.params, "system_pattern") {
        "" => format!(
            "template {} to {}",
            text(&task.params, "start_date"),
            text(&task.params, "end_date")
        ),
        p => format!("pattern {p}"),
    };
    let (heading, waiting) = task_heading(&name, &format!("{symbol} · {template}"), &task);
    if let Some(page) = waiting {
        return Ok(page);
    }
    let result = task.result.clone().unwrap_or(Value::Null);
    let params: CpmParams = serde_json::from_value(task.params.clone()).map_err(|e| {
        tracing::error!(task = %task.id, error = %e, "stored pattern-match parameters");
        ApiError::internal()
    })?;
    cpm_page(&t.state, &name, &heading, &params, mode, result).await
}

/// The page of a pattern-match answer (a task's or the view's).
pub(crate) async fn cpm_page(
    state: &AppState,
    name: &str,
    heading: &str,
    params: &CpmParams,
    mode: Mode,
    result: Value,
) -> Reply {
    let chart = if result["data"].is_object() {
        Some(
            services::analytics::cpm::chart::chart(state.market.as_ref(), params, mode, &result)
                .await?,
        )
    } else {
        None
    };
    let backtest = mode == Mode::Backtest;
    let mut body = format!(
        r#"{heading}
<div class="status" id="nothing" hidden></div>
<ul id="warnings" class="sub"></ul>
<h2>Template and best matches</h2><div id="overlay" class="chart tall"></div>
<p class="sub">Each line is scaled to mean 0 and deviation 1 (correlation sees neither level nor scale); the template is the thick black line.</p>"#
    );
    if backtest {
        body.push_str(
            r#"
<h2>Price and trades</h2><div id="price" class="chart tall"></div>
<h2>Trades compounded and drawdown</h2><div id="equity" class="chart tall"></div>
<h2>Metrics</h2><table class="metrics" id="metrics"></table>"#,
        );
    }
    body.push_str(r#"<h2>Matches</h2><table id="matches"></table>"#);
    if backtest {
        body.push_str(r#"<h2>Trades</h2><table id="trades"></table>"#);
    }
    Ok(chart_page(
        name,
        &body,
        &json!({"mode": if backtest { "backtest" } else { "scan" }, "result": result, "chart": chart}),
        "report-cpm.js",
    ))
}

/// A scanner backtest task as a page: the portfolio's equity with its
/// entries and exits marked, drawdown and cash, each traded symbol's price
/// with its trades, the metrics and the trade list.
#[utoipa::path(get, path = "/smart-scanner-backtest/report/{task_id}", tag = "analytics", params(("task_id" = String, Path, description = "A scanner backtest task of the caller")),
    responses((status = 200, description = "The report page (a task not finished shows its status and reloads every 2 s)", content_type = "text/html", body = String),
        crate::analytics::AnalyticsErrors))]
pub(crate) async fn scanner_report(t: Tenant, Path(task_id): Path<String>) -> Reply {
    let task = owned_task(&t.state, &t.caller, &task_id, &[TaskKind::ScannerBacktest]).await?;
    let name = match text(&task.params, "name").trim() {
        "" => "Scanner backtest".to_string(),
        n => n.to_string(),
    };
    let sub = format!(
        "{} · {} to {}",
        text(&task.params, "find_type"),
        task.params["start_date"].as_str().unwrap_or(""),
        task.params["end_date"].as_str().unwrap_or("")
    );
    let (heading, waiting) = task_heading(&name, &sub, &task);
    if let Some(page) = waiting {
        return Ok(page);
    }
    let result = task.result.clone().unwrap_or(Value::Null);
    // The drawdown is measured from the capital, as `MAX RISK` is.
    let capital = serde_json::from_value::<ScannerBacktestParams>(task.params.clone())
        .ok()
        .and_then(|p| p.validate().ok())
        .map(|q| q.capital);
    let prices =
        services::analytics::scanner::backtest::chart::chart(t.state.market.as_ref(), &result)
            .await?;
    Ok(chart_page(
        &name,
        &format!(
            r#"{heading}
<div class="status" id="nothing" hidden></div>
<h2>Equity, entries and exits</h2><div id="equity" class="chart tall"></div>
<h2>Drawdown and cash</h2><div id="drawdown" class="chart"></div>
<h2>Price and trades of <select id="symbol"></select></h2><div id="price" class="chart tall"></div>
<h2>Metrics</h2><table class="metrics" id="metrics"></table>
<h2>Against the benchmark</h2><table class="metrics" id="relative"></table>
<h2>Trades</h2><table id="trades"></table>"#
        ),
        &json!({
            "result": result,
            "prices": prices,
            "capital": capital,
            // The labels and units of the glossary (docs/results.md): the
            // spec's keys (`MAX RISK`, a positive percent) read into them.
            "figures": figures(Kind::ScannerBacktest),
        }),
        "report-scanner.js",
    ))
}
