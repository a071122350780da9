//! Report pages: HTML a person opens in a browser, with charts drawn by
//! TradingView's lightweight-charts (Apache 2.0), vendored at a pinned
//! version and served by the API itself, so pages work with no internet.
//! A page carries its data inline as JSON (a 30-year daily backtest is a few
//! hundred KB) and every user-supplied string reaches the DOM as text.

use axum::http::header;
use axum::response::{IntoResponse, Response};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The vendored chart library; its licence is served beside it.
pub const CHARTS_VERSION: &str = "5.2.1";
const CHARTS_JS: &str = include_str!(
    "../assets/vendor/lightweight-charts-5.2.1/lightweight-charts.standalone.production.js"
);
const CHARTS_LICENSE: &str = include_str!("../assets/vendor/lightweight-charts-5.2.1/LICENSE");
const REPORT_CSS: &str = include_str!("../assets/report/report.css");
const BACKTEST_JS: &str = include_str!("../assets/report/backtest.js");

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
<link rel="stylesheet" href="/assets/report.css">
</head><body>
{body}
<pre id="errors" hidden></pre>
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

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        body,
    )
        .into_response()
}

/// The chart library (lightweight-charts, standalone build).
#[utoipa::path(get, path = "/assets/lightweight-charts.js", tag = "public", security(()), responses((status = 200, description = "TradingView lightweight-charts 5.2.1, standalone production build (Apache 2.0)", content_type = "text/javascript", body = String)))]
pub async fn charts_js() -> Response {
    asset("text/javascript; charset=utf-8", CHARTS_JS)
}

/// The chart library's licence.
#[utoipa::path(get, path = "/assets/lightweight-charts.LICENSE", tag = "public", security(()), responses((status = 200, description = "Apache License 2.0 of lightweight-charts", content_type = "text/plain", body = String)))]
pub async fn charts_license() -> Response {
    asset("text/plain; charset=utf-8", CHARTS_LICENSE)
}

/// The report pages' style sheet.
#[utoipa::path(get, path = "/assets/report.css", tag = "public", security(()), responses((status = 200, description = "Report pages' style sheet", content_type = "text/css", body = String)))]
pub async fn report_css() -> Response {
    asset("text/css; charset=utf-8", REPORT_CSS)
}

/// The backtest report's script.
#[utoipa::path(get, path = "/assets/report-backtest.js", tag = "public", security(()), responses((status = 200, description = "The backtest report page's script", content_type = "text/javascript", body = String)))]
pub async fn backtest_js() -> Response {
    asset("text/javascript; charset=utf-8", BACKTEST_JS)
}

/// The public assets of report pages.
pub fn asset_routes<S: Clone + Send + Sync + 'static>() -> OpenApiRouter<S> {
    OpenApiRouter::new()
        .routes(routes!(charts_js))
        .routes(routes!(charts_license))
        .routes(routes!(report_css))
        .routes(routes!(backtest_js))
}

#[cfg(test)]
mod tests {
    use super::*;

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
