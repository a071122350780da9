//! `GET /backtest/report/{task_id}`: a backtest task as a page (see
//! [`crate::report`]). Owner-checked like the status endpoint; a task not
//! finished yet shows its status and reloads itself.

use crate::auth::Caller;
use crate::error::ApiError;
use crate::report::{escape, inline_json, page};
use crate::state::AppState;
use axum::Extension;
use axum::extract::{Path, State};
use axum::response::Response;
use platform::tasks::{TaskKind, TaskStatus};
use serde_json::json;

/// The task as an HTML page: price with the trades marked, equity and
/// drawdown, the metrics and the trade list.
#[utoipa::path(get, path = "/backtest/report/{task_id}", tag = "backtest", params(("task_id" = String, Path, description = "A backtest task of the caller")),
    responses((status = 200, description = "The report page (a task not finished shows its status and reloads every 2 s)", content_type = "text/html", body = String),
        (status = 404, description = "No such task of the caller", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn backtest_report(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    Path(task_id): Path<String>,
) -> Result<Response, ApiError> {
    let task =
        crate::routes::tasks::owned_task(&state, &caller, &task_id, &[TaskKind::StrategyBacktest])
            .await?;
    let text = |k: &str| task.params.get(k).and_then(|v| v.as_str()).unwrap_or("");
    let name = match text("name") {
        "" => format!("{} backtest", text("symbol")),
        n => n.to_string(),
    };
    let heading = format!(
        r#"<h1 id="name">{}</h1>
<p class="sub">{} &middot; task {} &middot; <span id="status">{}</span></p>"#,
        escape(&name),
        escape(text("symbol")),
        task.id,
        task.status
    );
    Ok(match task.status {
        TaskStatus::Pending | TaskStatus::Running => page(
            &name,
            &format!(
                r#"{heading}<div class="status">The backtest is {}{}; this page reloads every 2 s.</div>"#,
                task.status.as_str().to_lowercase(),
                task.progress
                    .map(|p| format!(" ({p}%)"))
                    .unwrap_or_default()
            ),
            true,
        ),
        TaskStatus::Failed => page(
            &name,
            &format!(
                r#"{heading}<div class="status" id="task-error">{}</div>"#,
                escape(task.error.as_deref().unwrap_or("failed"))
            ),
            false,
        ),
        TaskStatus::Success => {
            let chart =
                services::backtest::chart::chart(state.market.as_ref(), &task.params).await?;
            let data = inline_json(&json!({"result": task.result, "chart": chart}));
            page(
                &name,
                &format!(
                    r#"{heading}
<h2>Price and trades</h2><div id="price" class="chart tall"></div>
<h2>Equity and drawdown</h2><div id="equity" class="chart tall"></div>
<p class="sub"><span id="points"></span> bars &middot; charts by <a href="/assets/lightweight-charts.LICENSE">TradingView Lightweight Charts</a> {}</p>
<h2>Metrics</h2><table class="metrics" id="metrics"></table>
<h2>Trades</h2>
<table><thead><tr><th>#</th><th>Entry</th><th>Exit</th><th>Return %</th><th>Exit reason</th></tr></thead><tbody id="trades"></tbody></table>
<script type="application/json" id="report-data">{data}</script>
<script src="/assets/lightweight-charts.js"></script>
<script src="/assets/report-backtest.js"></script>"#,
                    crate::report::CHARTS_VERSION
                ),
                false,
            )
        }
    })
}
