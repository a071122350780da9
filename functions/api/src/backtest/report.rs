//! `GET /backtest/report/{task_id}` and `GET /backtest/batch/{batch_id}/report`:
//! a backtest task or a batch as a page (see [`crate::report`]).
//! Owner-checked like the status endpoints; a task not finished yet shows
//! its status and reloads itself.

use crate::auth::Tenant;
use crate::error::Reply;
use crate::report::figures::{self, figures};
use crate::report::{chart_page, escape, page};
use axum::extract::Path;
use platform::tasks::TaskKind;
use serde_json::json;
use services::backtest::monte_carlo;
use services::glossary::Kind;

/// The task as an HTML page: price with the trades marked, equity and
/// drawdown, the metrics and the trade list.
#[utoipa::path(get, path = "/backtest/report/{task_id}", tag = "backtest", params(("task_id" = String, Path, description = "A backtest task of the caller")),
    responses((status = 200, description = "The report page (a task not finished shows its status and reloads every 2 s)", content_type = "text/html", body = String),
        (status = 404, description = "No such task of the caller", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn backtest_report(t: Tenant, Path(task_id): Path<String>) -> Reply {
    let task =
        crate::tasks::owned_task(&t.state, &t.caller, &task_id, &[TaskKind::StrategyBacktest])
            .await?;
    let text = |k: &str| task.params.get(k).and_then(|v| v.as_str()).unwrap_or("");
    let name = match text("name") {
        "" => format!("{} backtest", text("symbol")),
        n => n.to_string(),
    };
    let (heading, waiting) = crate::report::task_heading(&name, text("symbol"), &task);
    if let Some(page) = waiting {
        return Ok(page);
    }
    let chart =
        services::backtest::chart::task_chart(t.state.market.as_ref(), &t.state.uploads, &task)
            .await?;
    let upload = services::backtest::task_upload(&t.state.uploads, &task, false).await?;
    let settings = monte_carlo::Settings {
        draws: monte_carlo::DEFAULT_DRAWS,
        seed: 0,
        block: None,
    };
    // A run too long for the default draws shows why instead of a fan.
    let place = crate::compute::admit(&t, "monte_carlo").await?;
    let loaded = monte_carlo::load(t.state.market.as_ref(), &task.params, upload).await?;
    let monte_carlo = match crate::backtest::monte_carlo::draw(place, loaded, settings).await {
        Ok(m) => json!(m),
        Err(e) if e.status == 400 => json!({"error": e.message}),
        Err(e) => return Err(e),
    };
    Ok(chart_page(
        &name,
        &format!(
            r#"{heading}
<h2>Price and trades</h2><div id="price" class="chart tall"></div>
<h2>Equity and drawdown</h2><div id="equity" class="chart tall"></div>
<p class="sub"><span id="points"></span> bars</p>
<h2>Metrics</h2><table class="metrics" id="metrics"></table>
<h2>Against the benchmark</h2><table class="metrics" id="relative"></table>
<h2>Monte Carlo</h2>
<p class="sub">{draws} paths of each kind, seed 0: the trades drawn again with replacement, and the bar returns drawn in circular blocks (docs/backtest.md#monte-carlo; <a href="/backtest/monte-carlo/{id}?draws={draws}&amp;seed=0">as JSON</a>, other seeds and sizes there).</p>
<table id="monte-carlo"></table><div id="monte-carlo-notes"></div>
<h3>Equity paths, bar returns drawn in blocks (percentiles)</h3><div id="fan-returns" class="chart"></div>
<h3>Equity paths, trades drawn again (percentiles, by trade)</h3><div id="fan-trades" class="chart"></div>
<h2>Trades</h2><table id="trades"></table>"#,
            draws = monte_carlo::DEFAULT_DRAWS,
            id = task.id
        ),
        &json!({
            "result": task.result,
            "chart": chart,
            "monte_carlo": monte_carlo,
            // The labels and units of the glossary (docs/results.md), as
            // every result page has them.
            "figures": figures(Kind::Backtest),
        }),
        "report-backtest.js",
    ))
}

/// The series the report page draws, as data: every bar's time, close,
/// equity and drawdown of the window, and each trade's fills (what a
/// notebook plots). Only for a finished task: one that is not is a 409.
#[utoipa::path(get, path = "/backtest/chart/{task_id}", tag = "backtest", operation_id = "backtest_chart",
    params(("task_id" = String, Path, description = "A backtest task of the caller")),
    responses((status = 200, description = "The series, one value per bar of the backtest's window", body = services::backtest::chart::Chart),
        (status = 404, description = "No such task of the caller", body = crate::openapi::ErrorDetail),
        (status = 409, description = "The task has not succeeded (PENDING, RUNNING or FAILED)", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn backtest_chart(
    t: Tenant,
    Path(task_id): Path<String>,
) -> Result<axum::Json<services::backtest::chart::Chart>, crate::error::ApiError> {
    let task = super::monte_carlo::succeeded(&t, &task_id).await?;
    let chart =
        services::backtest::chart::task_chart(t.state.market.as_ref(), &t.state.uploads, &task)
            .await?;
    Ok(axum::Json(chart))
}

/// A batch as a page: its results as a table to sort (the best 1,000 rows
/// by the chosen column), with the total returns as bars. The page fetches
/// the rows from the results endpoint (a batch's table can run to MBs).
#[utoipa::path(get, path = "/backtest/batch/{batch_id}/report", tag = "backtest", operation_id = "batch_report",
    params(("batch_id" = String, Path, description = "A batch of the caller")),
    responses((status = 200, description = "The report page (a batch not finished shows its progress and reloads every 2 s)", content_type = "text/html", body = String),
        (status = 404, description = "No such batch of the caller", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn batch_report(t: Tenant, Path(batch_id): Path<String>) -> Reply {
    let (record, s) = standing(&t, &batch_id).await?;
    // A grid of portfolios answers a row's figures as a batch of
    // strategies does, its buy and hold the benchmark's.
    let kind = match record
        .params
        .get("request")
        .and_then(|r| r.get("portfolio"))
    {
        Some(p) if !p.is_null() => Kind::PortfolioGridRow,
        _ => Kind::BatchRow,
    };
    let name = match s.name.as_str() {
        "" => "Batch".to_string(),
        n => n.to_string(),
    };
    let heading = format!(
        r#"<h1 id="name">{}</h1>
<p class="sub">{} strategies &middot; batch {} &middot; <span id="status">{}</span></p>"#,
        escape(&name),
        s.total,
        s.batch_id,
        s.status
    );
    Ok(match (s.status, s.error) {
        (_, Some(error)) => failed(&name, &heading, &error),
        ("SUCCESS", None) => chart_page(
            &name,
            &format!(
                r#"{heading}
<p class="sub">Download the table as <a href="/backtest/batch/{id}/results?format=csv">CSV</a> or <a href="/backtest/batch/{id}/results?format=parquet">Parquet</a>; click a heading to sort.</p>{walk}
<h2>Total return of each strategy, best first</h2><div id="returns" class="chart"></div>
<section id="overfitting" hidden><h2>Is the best row luck?</h2>
<p class="sub">The Deflated Sharpe Ratio of the best row against the best of N skill-less trials, and the Probability of Backtest Overfitting by combinatorially symmetric cross-validation (docs/backtest.md#overfitting).</p>
<table class="metrics" id="statistics"></table><div id="notes"></div>
<h3>Logit of the in-sample best's out-of-sample rank, per split (at or below 0: overfit)</h3><div id="logits" class="chart"></div></section>
<section id="heat" hidden><h2>Heat map <select id="heat-metric"></select></h2><table id="heatmap" class="heatmap"></table></section>
<section id="monte-carlo-section" hidden><h2>Monte Carlo of the best row, <span id="monte-carlo-row"></span></h2>
<p class="sub">1,000 paths of each kind, seed 0, its strategy run again (docs/backtest.md#monte-carlo; other rows, seeds and sizes at <code>/backtest/batch/{id}/monte-carlo?row=N</code>).</p>
<table id="monte-carlo"></table><div id="monte-carlo-notes"></div>
<h3>Equity paths, bar returns drawn in blocks (percentiles)</h3><div id="fan-returns" class="chart"></div>
<h3>Equity paths, trades drawn again (percentiles, by trade)</h3><div id="fan-trades" class="chart"></div></section>
<h2>Results <span class="sub" id="shown"></span></h2><table id="rows"></table>"#,
                id = s.batch_id,
                walk = if s.walk_forward.is_some() {
                    format!(
                        r#"<p class="sub" id="walk-forward-link">Its <a href="/backtest/batch/{}/walk-forward">walk-forward analysis</a>.</p>"#,
                        s.batch_id
                    )
                } else {
                    String::new()
                }
            ),
            &json!({"batch_id": s.batch_id, "paths": s.paths, "statistics": s.statistics,
                "metrics": figures(kind).metrics}),
            "report-batch.js",
        ),
        (status, None) => running(&name, &heading, status, s.done, s.total),
    })
}

/// A batch's walk-forward as a page: the stitched out-of-sample equity and
/// drawdown, the summary with walk-forward efficiency, and each window's
/// pick. A batch without a walk-forward is 404; one not finished shows its
/// progress and reloads.
#[utoipa::path(get, path = "/backtest/batch/{batch_id}/walk-forward", tag = "backtest", operation_id = "batch_walk_forward",
    params(("batch_id" = String, Path, description = "A batch of the caller submitted with `walk_forward`")),
    responses((status = 200, description = "The walk-forward page (a batch not finished shows its progress and reloads every 2 s)", content_type = "text/html", body = String),
        (status = 404, description = "No such batch of the caller, or it has no walk-forward", body = crate::openapi::ErrorDetail)))]
pub(crate) async fn batch_walk_forward(t: Tenant, Path(batch_id): Path<String>) -> Reply {
    let (record, s) = standing(&t, &batch_id).await?;
    let asked = record
        .params
        .get("request")
        .is_some_and(|r| services::backtest::batch::WalkForwardParams::of_request(r).is_some());
    if !asked {
        return Err(crate::error::ApiError::new(
            404,
            format!("batch '{batch_id}' was not submitted with a walk_forward"),
        ));
    }
    let name = match s.name.as_str() {
        "" => "Walk-forward".to_string(),
        n => format!("{n}: walk-forward"),
    };
    let heading = format!(
        r#"<h1 id="name">{}</h1>
<p class="sub">{} strategies &middot; batch {} &middot; <span id="status">{}</span> &middot; <a href="/backtest/batch/{}/report">all rows</a></p>"#,
        escape(&name),
        s.total,
        s.batch_id,
        s.status,
        s.batch_id
    );
    Ok(match (s.status, s.error, s.walk_forward) {
        (_, Some(error), _) => failed(&name, &heading, &error),
        ("SUCCESS", None, Some(w)) => chart_page(
            &name,
            &format!(
                r#"{heading}
<p class="sub">Each in-sample window's best strategy run on the out-of-sample window after it; the out-of-sample runs chained (docs/batches.md#walk-forward).</p>
<table class="metrics" id="summary"></table><div id="notes"></div>
<h2>Out of sample</h2><table class="metrics" id="metrics"></table>
<h2>Out-of-sample equity</h2><div id="equity" class="chart"></div>
<h2>Windows</h2><table id="windows"></table>"#
            ),
            &json!({
                "batch_id": s.batch_id,
                "figures": figures(Kind::WalkForward),
                // A window's `score`: the metric it was picked by.
                "pick": serde_json::to_value(w.settings.metric)
                    .ok()
                    .and_then(|m| m.as_str().and_then(|m| figures::metric(m, "score"))),
                "walk_forward": w,
            }),
            "report-walk-forward.js",
        ),
        (status, _, _) => running(&name, &heading, status, s.done, s.total),
    })
}

/// The caller's batch record and where it stands (with its statistics and
/// walk-forward once finished).
async fn standing(
    t: &Tenant,
    batch_id: &str,
) -> Result<
    (
        platform::tasks::Task,
        services::backtest::batch::BatchStatus,
    ),
    crate::error::ApiError,
> {
    let record =
        crate::tasks::owned_task(&t.state, &t.caller, batch_id, &[TaskKind::BatchBacktest]).await?;
    let returns = platform::returns::ReturnStore::new(t.state.uploads.blobs().clone());
    let s = services::backtest::batch::status(
        t.state.tasks.as_ref(),
        Some(&returns),
        &record,
        services::backtest::batch::Rows::Read,
    )
    .await?;
    Ok((record, s))
}

/// A batch page of a batch that failed: why.
fn failed(name: &str, heading: &str, error: &str) -> axum::response::Response {
    page(
        name,
        &format!(
            r#"{heading}<div class="status" id="task-error">{}</div>"#,
            escape(error)
        ),
        false,
    )
}

/// A batch page of a batch still running: its progress, reloading.
fn running(
    name: &str,
    heading: &str,
    status: &str,
    done: usize,
    total: usize,
) -> axum::response::Response {
    page(
        name,
        &format!(
            r#"{heading}<div class="status">The batch is {}: {done} of {total} strategies done; this page reloads every 2 s.</div>"#,
            status.to_lowercase()
        ),
        true,
    )
}
