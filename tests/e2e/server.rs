//! Runs the embedded server on 127.0.0.1 with a private database, over one
//! sample market directory generated per test process.

use api::AppState;
use marketlab::server::{Embedded, ServerConfig};
use platform::accounts::AccountStore;
use platform::accounts::add_account;
use platform::marketdata::LocalDir;
use platform::worker::JobRegistry;
use sample::{SampleConfig, generate};
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// Stocks in the test sample set: enough for every table, quick to generate.
pub const TEST_STOCKS: usize = 12;

/// The sample set for this test process, generated on first use in the
/// system temporary directory; sets left by test processes that have ended
/// are removed first.
pub fn market_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        const PREFIX: &str = "marketlab-e2e-market-";
        let base = std::env::temp_dir();
        if let Ok(entries) = std::fs::read_dir(&base) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if let Some(pid) = name.strip_prefix(PREFIX)
                    && !Path::new("/proc").join(pid).exists()
                {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let dir = base.join(format!("{PREFIX}{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let config = SampleConfig {
            stocks: TEST_STOCKS,
            intraday_days: 10,
            ..SampleConfig::default()
        };
        generate(&config, &LocalDir::new(&dir)).expect("sample data for tests");
        dir
    })
}

/// A private copy of the test sample set, for tests that change the market
/// directory (the scanner's day files).
pub fn private_market() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    sample_into(dir.path());
    dir
}

/// Writes the test sample set into `dir`.
pub fn sample_into(dir: &Path) {
    let config = SampleConfig {
        stocks: TEST_STOCKS,
        intraday_days: 10,
        ..SampleConfig::default()
    };
    generate(&config, &LocalDir::new(dir)).expect("sample data for tests");
}

/// The scanner's day files of a market directory, as the servers read them.
pub fn scanner_store(market: &Path) -> Arc<dyn platform::scanner::ScannerStore> {
    Arc::new(platform::scanner::ParquetScannerStore::new(
        Arc::new(LocalDir::new(market)),
        platform::scanner::READ_TTL,
    ))
}

pub type Registry = Arc<dyn Fn(&AppState) -> JobRegistry + Send + Sync>;

pub struct Options {
    pub database: PathBuf,
    pub registry: Registry,
    pub grace: Duration,
    pub workers: usize,
    pub data_legacy_json: bool,
    pub limits: api::limits::Limits,
    pub connections: api::serve::ConnectionLimits,
    pub scan: services::analytics::scanner::nightly::Schedule,
    pub market_dir: PathBuf,
    /// What test-mode keys read (the shared sample set by default).
    pub test_market_dir: PathBuf,
    /// A batch inbox directory to sweep (none by default).
    pub inbox: Option<PathBuf>,
    /// How often reads look for imports by another process.
    pub data_check: Duration,
    /// Usage counting and plan limits (on by default).
    pub metering: bool,
    /// The clock metering counts minutes and days on (the system's by
    /// default; a `ManualClock` to cross a minute without waiting for it).
    pub clock: Arc<dyn platform::clock::Clock>,
    /// Webhook delivery: loopback receivers allowed, a retry schedule of
    /// fractions of a second.
    pub webhooks: marketlab::server::WebhookSettings,
}

impl Options {
    pub fn new(database: PathBuf) -> Self {
        Options {
            database,
            registry: Arc::new(api::jobs::registry),
            grace: Duration::from_secs(5),
            workers: 2,
            data_legacy_json: false,
            limits: Default::default(),
            connections: Default::default(),
            // The shared market directory is scanned once, by whichever
            // server starts first; no daily runs in tests.
            scan: services::analytics::scanner::nightly::Schedule {
                at_start: true,
                daily_at: None,
                follow: false,
            },
            market_dir: market_dir().to_path_buf(),
            test_market_dir: market_dir().to_path_buf(),
            inbox: None,
            data_check: platform::marketdata::generation::DEFAULT_CHECK,
            metering: true,
            clock: Arc::new(platform::clock::SystemClock),
            webhooks: marketlab::server::WebhookSettings {
                allow_loopback: true,
                schedule: "0.2,0.4,0.8".parse().expect("a schedule"),
                timeouts: deliveries::Timeouts {
                    connect: Duration::from_secs(2),
                    answer: Duration::from_secs(2),
                },
                parallel: 4,
            },
        }
    }
}

pub struct TestServer {
    pub base: String,
    pub state: AppState,
    pub accounts: Arc<dyn AccountStore>,
    stop: Option<oneshot::Sender<()>>,
    join: Option<JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    pub async fn start(opts: Options) -> TestServer {
        let config = ServerConfig {
            market_dir: opts.market_dir,
            test_market_dir: opts.test_market_dir,
            database: opts.database,
            addr: SocketAddr::new(Ipv4Addr::LOCALHOST.into(), 0),
            workers: opts.workers,
            sample: SampleConfig::default(),
            demo_accounts: true,
            shutdown_grace: opts.grace,
            data_legacy_json: opts.data_legacy_json,
            limits: opts.limits,
            connections: opts.connections,
            scan: opts.scan,
            inbox: opts.inbox,
            data_check: opts.data_check,
            stale_after: marketlab::updates::STALE_AFTER,
            inbox_max_bytes: sample::import::inbox::MAX_BYTES,
            metering: opts.metering,
            clock: opts.clock,
            webhooks: opts.webhooks,
        };
        let registry = opts.registry.clone();
        let embedded: Embedded = marketlab::server::start(&config, move |s| registry(s))
            .await
            .expect("server starts");
        let (state, accounts) = (embedded.state.clone(), embedded.accounts.clone());
        let listener = tokio::net::TcpListener::bind(config.addr)
            .await
            .expect("bind loopback");
        let base = format!("http://{}", listener.local_addr().unwrap());
        let (tx, rx) = oneshot::channel();
        let join = tokio::spawn(embedded.serve(listener, async {
            let _ = rx.await;
        }));
        TestServer {
            base,
            state,
            accounts,
            stop: Some(tx),
            join: Some(join),
        }
    }

    /// A server over a fresh private database.
    pub async fn fresh() -> (TestServer, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        (
            TestServer::start(Options::new(dir.path().join("db.sqlite"))).await,
            dir,
        )
    }

    /// Lifts the pro plan's requests per minute out of a bench's way, so
    /// every request takes the metered path and none is refused.
    pub async fn without_rate_limit(&self) {
        self.state
            .metering
            .as_ref()
            .expect("metering on")
            .quota_store()
            .set_plan_limits(
                "pro",
                platform::quota::PlanLimits {
                    requests_per_minute: 100_000_000,
                    ..platform::quota::default_limits("pro")
                },
            )
            .await
            .expect("plan limits set");
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn add_account(&self, email: &str, password: &str, plan: &str) {
        add_account(self.accounts.as_ref(), email, password, plan, vec![])
            .await
            .expect("account saved");
    }

    /// GET with Basic credentials; returns status and JSON body.
    pub async fn get(&self, path: &str, user: Option<(&str, &str)>) -> (u16, serde_json::Value) {
        self.send(path, reqwest::Client::new().get(self.url(path)), user)
            .await
    }

    /// GET with Basic credentials; status and body, of any type.
    pub async fn get_raw(&self, path: &str, user: Option<(&str, &str)>) -> (u16, bytes::Bytes) {
        let mut req = reqwest::Client::new().get(self.url(path));
        if let Some((u, p)) = user {
            req = req.basic_auth(u, Some(p));
        }
        let resp = req.send().await.expect("request");
        (resp.status().as_u16(), resp.bytes().await.unwrap())
    }

    /// [`Self::get_raw`] with the body as text.
    pub async fn get_text(&self, path: &str, user: Option<(&str, &str)>) -> (u16, String) {
        let (status, body) = self.get_raw(path, user).await;
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    /// POST a JSON body with Basic credentials; returns status and JSON body.
    pub async fn post(
        &self,
        path: &str,
        user: Option<(&str, &str)>,
        body: &serde_json::Value,
    ) -> (u16, serde_json::Value) {
        self.send(
            path,
            reqwest::Client::new().post(self.url(path)).json(body),
            user,
        )
        .await
    }

    /// POSTs a `multipart/form-data` body of `(name, content type, bytes)`
    /// parts ([`multipart`]).
    pub async fn post_form(
        &self,
        path: &str,
        user: Option<(&str, &str)>,
        parts: &[(&str, &str, &[u8])],
    ) -> (u16, serde_json::Value) {
        let (content_type, body) = multipart(parts);
        let req = reqwest::Client::new()
            .post(self.url(path))
            .header("content-type", content_type)
            .body(body);
        self.send(path, req, user).await
    }

    async fn send(
        &self,
        path: &str,
        mut req: reqwest::RequestBuilder,
        user: Option<(&str, &str)>,
    ) -> (u16, serde_json::Value) {
        if let Some((u, p)) = user {
            req = req.basic_auth(u, Some(p));
        }
        let resp = req.send().await.expect("request");
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text)
                .unwrap_or_else(|_| panic!("{path}: body is not JSON: {text}")),
        )
    }

    /// The task record at `path` once it is SUCCESS (30 s at most; a task
    /// that fails or never finishes fails the test with its record).
    pub async fn succeeded(&self, path: &str, user: Option<(&str, &str)>) -> serde_json::Value {
        let done = eventually(Duration::from_secs(30), || async {
            matches!(
                self.get(path, user).await.1["status"].as_str(),
                Some("SUCCESS" | "FAILED")
            )
        })
        .await;
        let (_, task) = self.get(path, user).await;
        assert!(done && task["status"] == "SUCCESS", "{task}");
        task
    }

    /// Stops accepting requests, lets running jobs finish within the grace period.
    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(j) = self.join.take() {
            j.await
                .expect("server task")
                .expect("server shut down cleanly");
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

/// Polls until `check` holds or `timeout` passes.
pub async fn eventually<F, Fut>(timeout: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    while tokio::time::Instant::now() < deadline {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

/// A strategy on the sample data with a few dozen trades: buy when SPX's
/// Optix crosses below 30, sell when it crosses above 70, from 2005.
pub fn optix_strategy() -> serde_json::Value {
    serde_json::json!({
        "symbol": "SPX", "start_date": "2005-01-01", "risk_control": "-8//63",
        "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossBelow", "comparison_value": "30"}}},
        "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossAbove", "comparison_value": "70"}}}
    })
}

/// An application state over `tasks` and `queue`, with the market data of
/// `market` and the demo account (pro) in a store of its own; unmetered and
/// without webhooks: for tests that wire a port their own way.
pub async fn bare_state(
    tasks: Arc<dyn platform::tasks::TaskStore>,
    queue: Arc<dyn platform::queue::JobQueue>,
    market: &Path,
) -> AppState {
    use platform::accounts::{Authenticator, SqliteAccountStore};
    let accounts = Arc::new(SqliteAccountStore::new(
        platform::sqlite::Database::in_memory().expect("a database"),
    ));
    add_account(
        accounts.as_ref(),
        marketlab::server::DEMO_EMAIL,
        marketlab::server::DEMO_PASSWORD,
        "pro",
        vec![],
    )
    .await
    .expect("the demo account");
    AppState {
        tasks,
        queue,
        market: Arc::new(platform::marketdata::ParquetMarketData::new(Arc::new(
            LocalDir::new(market),
        ))),
        uploads: platform::uploads::Uploads::new(Arc::new(LocalDir::new(market))),
        scanner: scanner_store(market),
        auth: Arc::new(
            Authenticator::embedded(accounts, Duration::from_secs(60)).expect("an authenticator"),
        ),
        data_legacy_json: false,
        limits: Default::default(),
        metering: None,
        webhooks: None,
        compute: Default::default(),
        long_polls: api::state::long_polls(&Default::default()),
        batch_reads: Default::default(),
        test_data: None,
    }
}

/// `state`'s embedded router served on 127.0.0.1 until the sender is used
/// (or dropped): its base URL, the stop, and the serving task.
pub async fn serve_state(
    state: &AppState,
) -> (String, oneshot::Sender<()>, JoinHandle<std::io::Result<()>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let base = format!("http://{}", listener.local_addr().expect("an address"));
    let (tx, rx) = oneshot::channel::<()>();
    let server = tokio::spawn(
        axum::serve(listener, api::routes::embedded(state))
            .with_graceful_shutdown(async {
                let _ = rx.await;
            })
            .into_future(),
    );
    (base, tx, server)
}

/// A `multipart/form-data` body of `(name, content type, bytes)` parts,
/// each as a file of its name, and its content type.
pub fn multipart(parts: &[(&str, &str, &[u8])]) -> (String, Vec<u8>) {
    let boundary = "----marketlab-test-boundary";
    let mut body = Vec::new();
    for (name, ct, data) in parts {
        body.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{name}\"\r\nContent-Type: {ct}\r\n\r\n")
                .as_bytes(),
        );
        body.extend_from_slice(data);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}
