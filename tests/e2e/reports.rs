//! Report pages in a real browser: headless Chromium (Debian's package)
//! loads each page from the embedded server. The numbers on the page are
//! the task's JSON, nothing is logged to the console, no request leaves
//! 127.0.0.1, and a screenshot of each page is kept under the test's output
//! directory (`$CARGO_TARGET_TMPDIR/report-pages`).

use api::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tests::server::{Options, TestServer, eventually};

fn chromium() -> PathBuf {
    let path = std::env::var_os("MARKETLAB_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        path.exists(),
        "{} is missing: tests/run installs Debian's chromium",
        path.display()
    );
    path
}

fn out_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-pages");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What the browser made of a page.
struct Rendered {
    dom: String,
    console: String,
    /// Every URL the browser asked for.
    urls: Vec<String>,
}

/// Loads `url` (with the demo's credentials) in headless Chromium, waits for
/// its scripts, and keeps a screenshot as `<name>.png`.
fn render(base: &str, path: &str, name: &str, budget_ms: u32) -> Rendered {
    let dir = out_dir();
    let profile = tempfile::tempdir().unwrap();
    let netlog = dir.join(format!("{name}.netlog.json"));
    let authority = base.trim_start_matches("http://");
    let url = format!(
        "http://{}:{}@{authority}{path}",
        DEMO_EMAIL.replace('@', "%40"),
        DEMO_PASSWORD
    );
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-default-apps",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1280,2200",
            // The browser's own calls home (clock, safety lists, metrics) off:
            // what the net log shows is the page's.
            "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,Translate,AutofillServerCommunication,CertificateTransparencyComponentUpdater",
            "--disable-client-side-phishing-detection",
            "--disable-domain-reliability",
            "--no-pings",
            "--disable-breakpad",
            "--metrics-recording-only",
            "--enable-logging=stderr",
            "--v=0",
            // Anything but the server fails to resolve: nothing can leave.
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--log-net-log={}", netlog.display()))
        .arg(format!(
            "--screenshot={}",
            dir.join(format!("{name}.png")).display()
        ))
        .arg(format!("--virtual-time-budget={budget_ms}"))
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .expect("chromium runs");
    let console = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "chromium failed: {console}");
    // The page's requests: those made for its top frame (the browser's own
    // housekeeping has a network isolation key of its own).
    let log: Value = serde_json::from_str(&std::fs::read_to_string(&netlog).unwrap()).unwrap();
    let start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"].clone();
    let urls = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == start_job)
        .filter(|e| {
            e["params"]["network_isolation_key"]
                .as_str()
                .is_some_and(|k| k.starts_with("http://127.0.0.1"))
        })
        .filter_map(|e| e["params"]["url"].as_str().map(str::to_string))
        .collect();
    Rendered {
        dom: String::from_utf8_lossy(&out.stdout).to_string(),
        console,
        urls,
    }
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// `(data-key, data-value)` of every marked cell, in page order.
fn cells(dom: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut rest = dom;
    while let Some(at) = rest.find("data-key=\"") {
        rest = &rest[at + 10..];
        let key = &rest[..rest.find('"').unwrap()];
        let v = rest.find("data-value=\"").unwrap() + 12;
        let value = &rest[v..v + rest[v..].find('"').unwrap()];
        out.push((
            unescape(key),
            serde_json::from_str(&unescape(value)).unwrap(),
        ));
    }
    out
}

fn assert_clean(page: &Rendered, name: &str) {
    assert!(
        page.dom.contains(r#"<pre id="errors" hidden="""#),
        "{name}: the page reported errors: {}",
        page.dom
    );
    for line in page.console.lines() {
        assert!(
            !(line.contains("CONSOLE") || line.contains("Uncaught")),
            "{name}: console: {line}"
        );
    }
    assert!(
        !page.urls.is_empty(),
        "{name}: the net log recorded requests"
    );
    for u in &page.urls {
        assert!(
            u.starts_with("http://127.0.0.1:") || u.starts_with("data:") || u.starts_with("blob:"),
            "{name}: a request left 127.0.0.1: {u}"
        );
    }
}

async fn submit(server: &TestServer, body: &Value) -> String {
    let (status, r) = server
        .post(
            "/backtest/start_backtest",
            Some((DEMO_EMAIL, DEMO_PASSWORD)),
            body,
        )
        .await;
    assert_eq!(status, 202, "{r}");
    r["task_id"].as_str().unwrap().to_string()
}

async fn finished(server: &TestServer, id: &str) -> Value {
    let path = format!("/backtest/status/{id}");
    let demo = Some((DEMO_EMAIL, DEMO_PASSWORD));
    let done = eventually(Duration::from_secs(60), || async {
        server.get(&path, demo).await.1["status"] == "SUCCESS"
    })
    .await;
    assert!(done, "task {id} finished");
    server.get(&path, demo).await.1
}

#[tokio::test(flavor = "multi_thread")]
async fn a_backtest_report_shows_the_tasks_numbers_in_a_browser() {
    let (server, _dir) = TestServer::fresh().await;
    // Thirty years of daily SPX, with a name that tries to be markup.
    let hostile = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>";
    let id = submit(&server, &{
        let mut s = tests::server::optix_strategy();
        s["name"] = json!(hostile);
        s["start_date"] = json!("1995-01-03");
        s
    })
    .await;
    let task = finished(&server, &id).await;
    let result = &task["result"];
    // The task links its page.
    assert_eq!(task["report_url"], format!("/backtest/report/{id}"));
    let page = render(
        &server.base,
        task["report_url"].as_str().unwrap(),
        "backtest",
        15_000,
    );
    assert_clean(&page, "backtest");
    assert!(page.dom.contains(r#"data-ready="true""#), "{}", page.dom);
    let render_ms = page
        .dom
        .split("data-render-ms=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or("?");
    let bars = page
        .dom
        .split("<span id=\"points\">")
        .nth(1)
        .and_then(|r| r.split('<').next())
        .unwrap_or("?")
        .to_string();
    println!(
        "backtest report: {bars} daily bars, {} trades, rendered in {render_ms} ms in headless Chromium",
        result["Total Trades"]
    );
    // The user's string is text, not markup.
    assert!(page.dom.contains(
        "&lt;script&gt;document.title='pwned'&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"
    ));
    assert!(!page.dom.contains("<img src=\"x\""));
    assert!(!page.dom.contains("<title>pwned"));
    // Every metric and every trade on the page is the task's own.
    let cells = cells(&page.dom);
    for key in [
        "Total Return (%)",
        "CAGR",
        "Sharpe Ratio",
        "Max Drawdown",
        "Win Rate",
        "Total Trades",
        "Final Capital",
    ] {
        let shown = cells
            .iter()
            .find(|(k, _)| k == key)
            .unwrap_or_else(|| panic!("{key} shown"));
        assert_eq!(shown.1, result[key], "{key}");
    }
    let column = |key: &str| -> Vec<Value> {
        cells
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .collect()
    };
    for key in ["EntryDate", "ExitDate", "Each Return", "Exit Reason"] {
        assert_eq!(Value::Array(column(key)), result[key], "{key}");
    }
    assert!(result["Total Trades"].as_u64().unwrap() > 5);
    // Charts were drawn: lightweight-charts puts canvases in both containers.
    assert!(page.dom.matches("<canvas").count() >= 4, "charts drawn");

    // Another tenant's report reads as absent.
    let other = ("other@example.test", "other-password");
    server.add_account(other.0, other.1, "pro").await;
    let (status, _) = server
        .get(&format!("/backtest/report/{id}"), Some(other))
        .await;
    assert_eq!(status, 404);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unfinished_tasks_report_shows_its_status_and_reloads() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = Options::new(dir.path().join("db.sqlite"));
    options.workers = 0;
    let server = TestServer::start(options).await;
    let id = submit(
        &server,
        &json!({
            "symbol": "SPX", "risk_control": "//10",
            "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "Relative Strength Index"}, "rule": {"type_name": "CrossBelow", "comparison_value": "30"}}},
            "exit": {"rule_type": "RiskControlOnly"}
        }),
    )
    .await;
    let page = render(
        &server.base,
        &format!("/backtest/report/{id}"),
        "backtest-pending",
        1_000,
    );
    assert_clean(&page, "backtest-pending");
    assert!(
        page.dom.contains(r#"<span id="status">PENDING</span>"#),
        "{}",
        page.dom
    );
    assert!(page.dom.contains(r#"http-equiv="refresh""#));
    server.stop().await;
}
