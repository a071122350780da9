//! Report pages: HTML a person opens in a browser, with charts drawn by
//! TradingView's lightweight-charts (Apache 2.0), vendored at a pinned
//! version and served by the API itself, so pages work with no internet.
//! A task's page carries its data inline as JSON (a 30-year daily backtest
//! is a few hundred KB); pages over data that can run to MBs (a batch's
//! table) and the analytics views fetch the API's JSON from the browser.
//! Every user-supplied string reaches the DOM as text.

pub mod figures;

use crate::compression::Precompressed;
use crate::routes::schema_names::documented;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;

/// The vendored chart library; its licence is served beside it.
pub const CHARTS_VERSION: &str = "5.2.1";
const CHARTS_JS: &str = include_str!(
    "../../assets/vendor/lightweight-charts-5.2.1/lightweight-charts.standalone.production.js"
);
const CHARTS_LICENSE: &str = include_str!("../../assets/vendor/lightweight-charts-5.2.1/LICENSE");

/// Text made safe inside HTML elements and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON to inline in a `<script type="application/json">`: no `<`, `>` or
/// `&` can end the element or start markup (each stays valid JSON as a
/// `\u` escape, which only ever occurs inside strings).
pub fn inline_json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value)
        .unwrap_or_else(|_| "null".into())
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// A whole page. `body` is trusted markup (built with [`escape`]).
pub fn page(title: &str, body: &str, refresh: bool) -> Response {
    let refresh = if refresh {
        r#"<meta http-equiv="refresh" content="2">"#
    } else {
        ""
    };
    let html = format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">{refresh}
<title>{title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/report.css">
</head><body>
<pre id="errors" hidden></pre>
{body}
</body></html>"#,
        title = escape(title),
    );
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        html,
    )
        .into_response()
}

/// A page with charts: `body` (trusted markup), the data inlined as JSON
/// for `script` (an asset's name) to draw, after the chart library and
/// the shared helpers.
pub fn chart_page(title: &str, body: &str, data: &impl serde::Serialize, script: &str) -> Response {
    page(
        title,
        &format!(
            r#"{body}
<p class="sub">Charts by <a href="/assets/lightweight-charts.LICENSE">TradingView Lightweight Charts</a> {CHARTS_VERSION}</p>
<script type="application/json" id="report-data">{}</script>
<script src="/assets/lightweight-charts.js"></script>
<script src="/assets/report-common.js"></script>
<script src="/assets/{script}"></script>"#,
            inline_json(data)
        ),
        false,
    )
}

/// The heading of a task's page, and what it shows while the task is not
/// finished (status, reloading) or failed (the error, as text); `None`
/// once it succeeded.
pub fn task_heading(
    name: &str,
    sub: &str,
    task: &platform::tasks::Task,
) -> (String, Option<Response>) {
    use platform::tasks::TaskStatus;
    let heading = format!(
        r#"<h1 id="name">{}</h1>
<p class="sub">{} &middot; task {} &middot; <span id="status">{}</span></p>"#,
        escape(name),
        escape(sub),
        task.id,
        task.status
    );
    let waiting = match task.status {
        TaskStatus::Pending | TaskStatus::Running => Some(page(
            name,
            &format!(
                r#"{heading}<div class="status">The task is {}{}; this page reloads every 2 s.</div>"#,
                task.status.as_str().to_lowercase(),
                task.progress
                    .map(|p| format!(" ({p}%)"))
                    .unwrap_or_default()
            ),
            true,
        )),
        TaskStatus::Failed => Some(page(
            name,
            &format!(
                r#"{heading}<div class="status" id="task-error">{}</div>"#,
                escape(task.error.as_deref().unwrap_or("failed"))
            ),
            false,
        )),
        TaskStatus::Success => None,
    };
    (heading, waiting)
}

/// A file the pages load, served with a day's caching.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

macro_rules! page_asset {
    ($name:literal, $type:expr, $path:literal) => {
        Asset {
            name: $name,
            content_type: $type,
            body: include_str!($path),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

/// Every asset, by the name it is served under.
const ASSETS: &[Asset] = &[
    Asset {
        name: "lightweight-charts.js",
        content_type: JS,
        body: CHARTS_JS,
    },
    Asset {
        name: "lightweight-charts.LICENSE",
        content_type: "text/plain; charset=utf-8",
        body: CHARTS_LICENSE,
    },
    page_asset!(
        "report.css",
        "text/css; charset=utf-8",
        "../../assets/report/report.css"
    ),
    page_asset!("report-common.js", JS, "../../assets/report/common.js"),
    page_asset!("report-backtest.js", JS, "../../assets/report/backtest.js"),
    page_asset!("report-cpm.js", JS, "../../assets/report/cpm.js"),
    page_asset!("report-scanner.js", JS, "../../assets/report/scanner.js"),
    page_asset!("report-batch.js", JS, "../../assets/report/batch.js"),
    page_asset!(
        "report-portfolio.js",
        JS,
        "../../assets/report/portfolio.js"
    ),
    page_asset!(
        "report-walk-forward.js",
        JS,
        "../../assets/report/walk_forward.js"
    ),
    page_asset!(
        "view-seasonality.js",
        JS,
        "../../assets/report/seasonality.js"
    ),
    page_asset!(
        "view-correlation.js",
        JS,
        "../../assets/report/correlation.js"
    ),
];

/// The files the report pages load.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[allow(dead_code)]
enum AssetName {
    #[serde(rename = "lightweight-charts.js")]
    Charts,
    #[serde(rename = "lightweight-charts.LICENSE")]
    ChartsLicense,
    #[serde(rename = "report.css")]
    Css,
    #[serde(rename = "report-common.js")]
    Common,
    #[serde(rename = "report-backtest.js")]
    Backtest,
    #[serde(rename = "report-cpm.js")]
    Cpm,
    #[serde(rename = "report-scanner.js")]
    Scanner,
    #[serde(rename = "report-batch.js")]
    Batch,
    #[serde(rename = "report-portfolio.js")]
    Portfolio,
    #[serde(rename = "report-walk-forward.js")]
    WalkForward,
    #[serde(rename = "view-seasonality.js")]
    Seasonality,
    #[serde(rename = "view-correlation.js")]
    Correlation,
}

/// A file of the report pages: TradingView lightweight-charts 5.2.1
/// (standalone production build, Apache 2.0) and its licence, the style
/// sheet and each page's script. Public: pages load them before any data.
#[utoipa::path(get, path = "/assets/{file}", tag = "public", security(()),
    params(("file" = inline(AssetName), Path, description = "The file's name")),
    responses((status = 200, description = "The file: a script, the style sheet or the licence text",
            content((String = "text/javascript"), (String = "text/css"), (String = "text/plain"))),
        (status = 404, description = "No such file", body = crate::openapi::ErrorDetail)))]
pub async fn asset(
    axum::extract::Path(file): axum::extract::Path<String>,
    headers: axum::http::HeaderMap,
) -> Response {
    // Compressed once each, at first use (the chart library is 160 KB).
    static COMPRESSED: std::sync::OnceLock<Vec<Precompressed>> = std::sync::OnceLock::new();
    let Some(i) = ASSETS.iter().position(|a| a.name == file) else {
        return crate::error::ApiError::not_found(format!("no asset named '{file}'"))
            .into_response();
    };
    let all = COMPRESSED.get_or_init(|| {
        ASSETS
            .iter()
            .map(|a| Precompressed::new(a.content_type, a.body.as_bytes()))
            .collect()
    });
    let mut response = all[i].respond(&headers);
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("public, max-age=86400"),
    );
    response
}

/// The public assets of report pages.
pub fn asset_routes<S: Clone + Send + Sync + 'static>() -> OpenApiRouter<S> {
    OpenApiRouter::new().routes(documented!(asset))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_asset_is_named_in_the_schema() {
        use utoipa::PartialSchema;
        let schema = serde_json::to_value(AssetName::schema()).unwrap();
        let names: Vec<&str> = ASSETS.iter().map(|a| a.name).collect();
        assert_eq!(schema["enum"], serde_json::json!(names));
    }

    #[test]
    fn user_text_cannot_become_markup() {
        assert_eq!(
            escape(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
        let inline =
            inline_json(&serde_json::json!({"name": "</script><script>alert(1)</script>"}));
        assert!(!inline.contains('<') && !inline.contains('>'));
        let back: serde_json::Value = serde_json::from_str(&inline).unwrap();
        assert_eq!(back["name"], "</script><script>alert(1)</script>");
    }
}
