//! Report pages in a real browser: headless Chromium (Debian's package)
//! loads each page from the embedded server. The numbers on the page are
//! the task's JSON, nothing is logged to the console, no request leaves
//! 127.0.0.1, and a screenshot of each page is kept under the test's output
//! directory (`$CARGO_TARGET_TMPDIR/report-pages`).

mod tasks;
mod views;

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use tests::server::{TestServer, eventually};

const DEMO: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));
const OTHER: (&str, &str) = ("other@example.test", "other-password");

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
pub(super) struct Rendered {
    dom: String,
    console: String,
    /// Every URL the browser asked for.
    urls: Vec<String>,
}

/// Loads `url` (with the demo's credentials) in headless Chromium, waits for
/// its scripts, and keeps a screenshot as `<name>.png`.
pub(super) fn render(base: &str, path: &str, name: &str, budget_ms: u32) -> Rendered {
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
pub(super) fn cells(dom: &str) -> Vec<(String, Value)> {
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

pub(super) fn assert_clean(page: &Rendered, name: &str) {
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

/// The values of the cells keyed `key`, in page order.
pub(super) fn column(cells: &[(String, Value)], key: &str) -> Vec<Value> {
    cells
        .iter()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
        .collect()
}

/// The one cell keyed `key`.
pub(super) fn one(cells: &[(String, Value)], key: &str) -> Value {
    match column(cells, key).as_slice() {
        [v] => v.clone(),
        other => panic!("{key}: {} cells", other.len()),
    }
}

/// `data-<attr>` of the page's body (render time, ready flag).
pub(super) fn body_data(dom: &str, attr: &str) -> String {
    dom.split(&format!("data-{attr}=\""))
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or("?")
        .to_string()
}

/// Renders `path`, checks it is clean and ready, and prints its render time.
pub(super) fn render_ready(base: &str, path: &str, name: &str) -> Rendered {
    // Virtual time: an idle page reaches the budget at once, so a generous
    // one costs nothing and leaves a loaded machine room to draw.
    let page = render(base, path, name, 60_000);
    assert_clean(&page, name);
    // The page's end first: a long DOM is cut in the middle by CI's log.
    assert!(
        page.dom.contains(r#"data-ready="true""#),
        "{name}: not ready; the page ends: {}\n\nthe whole page: {}",
        &page.dom[page
            .dom
            .floor_char_boundary(page.dom.len().saturating_sub(4000))..],
        page.dom
    );
    println!(
        "{name}: rendered in {} ms in headless Chromium",
        body_data(&page.dom, "render-ms")
    );
    page
}

/// A task's JSON once it finished with SUCCESS.
pub(super) async fn finished(server: &TestServer, status_path: &str) -> Value {
    let done = eventually(Duration::from_secs(120), || async {
        server.get(status_path, DEMO).await.1["status"] == "SUCCESS"
    })
    .await;
    let task = server.get(status_path, DEMO).await.1;
    assert!(done, "{status_path}: {task}");
    task
}

/// The id a submit answered 202 with.
pub(super) async fn submit(server: &TestServer, path: &str, body: &Value) -> String {
    let (status, r) = server.post(path, DEMO, body).await;
    assert_eq!(status, 202, "{path}: {r}");
    r["task_id"].as_str().unwrap().to_string()
}

/// Another tenant's request for the page is 404.
pub(super) async fn hidden_from_others(server: &TestServer, path: &str) {
    server.add_account(OTHER.0, OTHER.1, "pro").await;
    let (status, _) = server.get(path, Some(OTHER)).await;
    assert_eq!(status, 404, "{path} for another tenant");
}

/// Two numbers equal to a relative `tolerance`.
pub(super) fn near(a: &Value, b: &Value, tolerance: f64, what: &str) {
    let (x, y) = (
        a.as_f64().unwrap_or(f64::NAN),
        b.as_f64().unwrap_or(f64::NAN),
    );
    assert!(
        (x - y).abs() <= tolerance * y.abs().max(1.0),
        "{what}: {x} against {y}"
    );
}

/// Numbers as `f64` throughout: a page's `45` is the answer's `45.0`.
fn norm(v: Value) -> Value {
    match v {
        Value::Number(n) => {
            serde_json::Number::from_f64(n.as_f64().unwrap()).map_or(Value::Null, Value::Number)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(norm).collect()),
        other => other,
    }
}

/// What a page shows equals what the API answered, number for number.
#[track_caller]
pub(super) fn assert_same(shown: impl Into<Value>, want: impl Into<Value>, what: &str) {
    let (shown, want) = (norm(shown.into()), norm(want.into()));
    assert_eq!(shown, want, "{what}");
}
