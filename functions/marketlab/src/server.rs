//! The embedded default: every service on one 127.0.0.1 port, a SQLite task
//! and account store, an in-process queue with a worker pool, and a local
//! Parquet directory that is filled with the sample set on first start.

use api::serve::AbortOnDrop;
use api::state::AppState;
use chrono::TimeDelta;
use platform::PortError;
use platform::accounts::{AccountStore, Authenticator, SqliteAccountStore};
use platform::keys::{KeyChecker, Pepper, SqliteKeyStore};
use platform::marketdata::{LocalDir, ParquetMarketData};
use platform::metering::Metering;
use platform::queue::{JobQueue, LocalQueue};
use platform::quota::SqliteQuotaStore;
use platform::scanner::{ParquetScannerStore, READ_TTL};
use platform::sqlite::Database;
use platform::tasks::{SqliteTaskStore, TaskStore};
use platform::usage::SqliteUsageStore;
use platform::worker::{JobRegistry, WorkerDeps, WorkerPool, recover};
use sample::{SampleConfig, generate};
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The demo account created on first start; README.md quotes it.
pub const DEMO_EMAIL: &str = "demo@marketlab.local";
pub const DEMO_PASSWORD: &str = "demo-password";
/// A trial account, to show trial truncation.
pub const TRIAL_EMAIL: &str = "trial@marketlab.local";
pub const TRIAL_PASSWORD: &str = "trial-password";

#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The Parquet layout of docs/data-layout.md; filled with the sample set when empty.
    pub market_dir: PathBuf,
    /// The data test-mode keys work on, in the same layout; filled with the
    /// sample set when empty. It may be `market_dir` itself.
    pub test_market_dir: PathBuf,
    /// The SQLite file holding tasks and accounts.
    pub database: PathBuf,
    pub addr: SocketAddr,
    pub workers: usize,
    /// Used only when the market directory is empty.
    pub sample: SampleConfig,
    /// Create the demo and trial accounts if they do not exist.
    pub demo_accounts: bool,
    /// How long running jobs may take to finish at shutdown.
    pub shutdown_grace: Duration,
    /// Data service: legacy double-encoded JSON bodies (off by default).
    pub data_legacy_json: bool,
    /// Body size and time limits of each request.
    pub limits: api::limits::Limits,
    /// Request-head deadline and open-connection cap of the listener.
    pub connections: api::serve::ConnectionLimits,
    /// When the nightly scanner runs in this process.
    pub scan: services::analytics::scanner::nightly::Schedule,
    /// A directory swept for batch files (`<e-mail>/<name>.jsonl`), or none.
    pub inbox: Option<PathBuf>,
    /// How often a read looks for imports made by another process (the
    /// data generation): the bound on serving a new session.
    pub data_check: Duration,
    /// How long past the close of a session missing from the data before
    /// the data are reported stale (a logged error; the lag is a gauge).
    /// Not for the sample set as generated, whose age is logged once at
    /// INFO instead (`crate::freshness`).
    pub stale_after: Duration,
    /// The largest file the market directory's `incoming/` takes.
    pub inbox_max_bytes: u64,
    /// Count usage and apply plan limits (on by default).
    pub metering: bool,
    /// The clock usage days and rate-limit minutes are counted on (the
    /// system's; tests set and move their own).
    pub clock: Arc<dyn platform::clock::Clock>,
    /// How webhooks are delivered.
    pub webhooks: WebhookSettings,
}

/// The operator's webhook settings.
#[derive(Debug, Clone)]
pub struct WebhookSettings {
    /// Allow plain http to loopback receivers (tests, a local consumer);
    /// other private addresses stay refused.
    pub allow_loopback: bool,
    pub schedule: platform::webhooks::RetrySchedule,
    pub timeouts: deliveries::Timeouts,
    /// Deliveries sent at once (each account and endpoint to its share:
    /// `deliveries::PER_ACCOUNT`, `deliveries::PER_ENDPOINT`).
    pub parallel: usize,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        WebhookSettings {
            allow_loopback: false,
            schedule: Default::default(),
            timeouts: Default::default(),
            parallel: 64,
        }
    }
}

/// The key webhook secrets derive from, kept beside the database (0600),
/// made on first start.
fn webhook_key(
    database: &std::path::Path,
) -> Result<platform::webhooks::signing::Keyring, PortError> {
    use platform::webhooks::signing::Keyring;
    let text = secret_file(database, "webhooks.key")?;
    Keyring::decode(&text).map_err(|e| PortError::fault(database.display().to_string(), e))
}

/// The file beside the database holding the pepper API keys are hashed with.
pub const KEY_PEPPER_FILE: &str = "api-keys.key";

/// A deployment secret kept beside the database as `name` (0600): read, or
/// made from system randomness on first start.
pub fn secret_file(database: &std::path::Path, name: &str) -> Result<String, PortError> {
    use platform::webhooks::signing::Keyring;
    let path = database.with_file_name(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let key = Keyring::generate()
                .map_err(|e| PortError::fault(name.to_string(), e.to_string()))?
                .encode();
            let mut open = std::fs::OpenOptions::new();
            open.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
            let mut file = open
                .open(&path)
                .map_err(|e| PortError::unavailable_by(path.display().to_string(), e))?;
            std::io::Write::write_all(&mut file, key.as_bytes())
                .map_err(|e| PortError::unavailable_by(path.display().to_string(), e))?;
            Ok(key)
        }
        Err(e) => Err(PortError::unavailable_by(path.display().to_string(), e)),
    }
}

impl ServerConfig {
    /// The standard layout under one data directory.
    pub fn in_dir(data_dir: &std::path::Path, addr: SocketAddr) -> Self {
        ServerConfig {
            market_dir: data_dir.join("market"),
            test_market_dir: data_dir.join("test-market"),
            database: data_dir.join("state").join("marketlab.sqlite"),
            addr,
            workers: 2,
            sample: SampleConfig::default(),
            demo_accounts: true,
            shutdown_grace: Duration::from_secs(30),
            data_legacy_json: false,
            limits: Default::default(),
            connections: Default::default(),
            scan: Default::default(),
            inbox: Some(data_dir.join("inbox")),
            data_check: platform::marketdata::generation::DEFAULT_CHECK,
            stale_after: crate::updates::STALE_AFTER,
            inbox_max_bytes: sample::import::inbox::MAX_BYTES,
            metering: true,
            clock: Arc::new(platform::clock::SystemClock),
            webhooks: Default::default(),
        }
    }
}

/// How often the inbox is swept.
pub const INBOX_SWEEP: Duration = Duration::from_secs(2);

/// Sweeps the inbox until dropped; a failed sweep is logged and retried.
async fn sweep_inbox(dir: PathBuf, state: AppState, accounts: Arc<dyn AccountStore>) {
    use services::backtest::batch_files::{Inbox, sweep};
    let files = LocalDir::new(&dir);
    let returns = platform::returns::ReturnStore::new(state.uploads.blobs().clone());
    loop {
        if dir.exists() {
            let inbox = Inbox {
                files: &files,
                prefix: "",
                market: state.market.as_ref(),
                tasks: state.tasks.as_ref(),
                queue: state.queue.as_ref(),
                accounts: accounts.as_ref(),
                metering: state.metering.as_deref(),
                returns: Some(&returns),
            };
            match sweep(&inbox).await {
                Ok(s) if s != Default::default() => tracing::info!(
                    submitted = s.submitted,
                    refused = s.refused,
                    written = s.written,
                    "batch inbox swept"
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "batch inbox sweep failed"),
            }
        }
        tokio::time::sleep(INBOX_SWEEP).await;
    }
}

/// A started embedded deployment: its state and its workers.
pub struct Embedded {
    pub state: AppState,
    pub accounts: Arc<dyn AccountStore>,
    workers: WorkerPool,
    /// The scanner's schedule; stops with the server.
    scanner: AbortOnDrop,
    /// Imports what arrives in incoming/ and scans completed sessions.
    follower: AbortOnDrop,
    /// The first scan of a test-mode set made at this start.
    test_scan: Option<AbortOnDrop>,
    /// The batch inbox's sweeper; stops with the server.
    inbox: Option<AbortOnDrop>,
    /// Writes usage counts every few seconds; a last flush at shutdown.
    flusher: Option<AbortOnDrop>,
    /// Sends webhook deliveries; stops with the server (pending ones are
    /// rows in the database and go out after the next start).
    deliveries: AbortOnDrop,
    shutdown_grace: Duration,
    connections: api::serve::ConnectionLimits,
    /// The job queue, for its depth and oldest-age gauges.
    jobs: Arc<LocalQueue>,
}

/// Copies the files under `from` to `to`, making directories as needed.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// Generates the sample set into `dir` if it is empty; true if it did.
async fn fill_with_sample(dir: &LocalDir, sample: &SampleConfig) -> Result<bool, PortError> {
    if !dir.is_empty() {
        return Ok(false);
    }
    tracing::info!(dir = %dir.root().display(), stocks = sample.stocks, "market directory is empty: generating the sample data set");
    let (sample, dir) = (sample.clone(), dir.clone());
    let started = std::time::Instant::now();
    let summary = tokio::task::spawn_blocking(move || generate(&sample, &dir))
        .await
        .map_err(PortError::internal)??;
    tracing::info!(
        symbols = summary.symbols,
        indicators = summary.indicators,
        objects = summary.objects,
        megabytes = summary.bytes / 1_000_000,
        seconds = started.elapsed().as_secs_f64(),
        "sample data ready"
    );
    Ok(true)
}

/// Prepares data, stores, accounts and workers, and re-queues any task a
/// previous run left unfinished. `registry` maps task kinds to job handlers.
pub async fn start(
    config: &ServerConfig,
    registry: impl FnOnce(&AppState) -> JobRegistry,
) -> Result<Embedded, PortError> {
    platform::memory::return_large_blocks();
    platform::pool::init(None);
    let market_dir = LocalDir::new(&config.market_dir);
    let generated = fill_with_sample(&market_dir, &config.sample).await?;
    let test_dir = LocalDir::new(&config.test_market_dir);
    let test_filled = if generated && test_dir.is_empty() {
        // The sample set just made is the test set too: copied, not made again.
        let (from, to) = (config.market_dir.clone(), config.test_market_dir.clone());
        tokio::task::spawn_blocking(move || copy_tree(&from, &to))
            .await
            .map_err(PortError::internal)?
            .map_err(|e| {
                PortError::unavailable_by(config.test_market_dir.display().to_string(), e)
            })?;
        true
    } else {
        fill_with_sample(&test_dir, &config.sample).await?
    };
    let db = Database::open(&config.database)?;
    let accounts: Arc<dyn AccountStore> = Arc::new(SqliteAccountStore::new(db.clone()));
    if config.demo_accounts {
        ensure_account(accounts.as_ref(), DEMO_EMAIL, DEMO_PASSWORD, "pro").await?;
        ensure_account(accounts.as_ref(), TRIAL_EMAIL, TRIAL_PASSWORD, "trial").await?;
    }
    let metering = config.metering.then(|| {
        Arc::new(
            Metering::new(
                Arc::new(SqliteUsageStore::new(db.clone())),
                Arc::new(SqliteQuotaStore::new(db.clone())),
                accounts.clone(),
            )
            .with_clock(config.clock.clone()),
        )
    });
    let key_store = Arc::new(SqliteKeyStore::new(db.clone()));
    let webhook_rows = Arc::new(platform::webhooks::SqliteWebhooks::new(db.clone()));
    let hooks = platform::webhooks::Hooks {
        store: webhook_rows.clone(),
        outbox: webhook_rows.clone(),
        keys: webhook_key(&config.database)?,
        policy: platform::webhooks::address::Policy {
            allow_loopback: config.webhooks.allow_loopback,
            ..Default::default()
        },
    };
    let tasks: Arc<dyn TaskStore> = Arc::new(SqliteTaskStore::new(db));
    let (local_queue, receiver) = LocalQueue::new();
    let jobs = local_queue.clone();
    let queue: Arc<dyn JobQueue> = Arc::new(local_queue);
    let parquet =
        Arc::new(ParquetMarketData::new(Arc::new(market_dir.clone())).checking(config.data_check));
    crate::updates::recover(&parquet, &config.market_dir).await?;
    // Test mode on the live directory itself shares its reads and caches.
    let test_data = if config.test_market_dir == config.market_dir {
        api::state::TestData {
            market: parquet.clone(),
            scanner: Arc::new(ParquetScannerStore::new(
                Arc::new(market_dir.clone()),
                READ_TTL,
            )),
        }
    } else {
        api::state::TestData {
            market: Arc::new(
                ParquetMarketData::new(Arc::new(test_dir.clone())).checking(config.data_check),
            ),
            scanner: Arc::new(ParquetScannerStore::new(Arc::new(test_dir), READ_TTL)),
        }
    };
    let state = AppState {
        tasks: tasks.clone(),
        queue: queue.clone(),
        market: parquet.clone(),
        uploads: platform::uploads::Uploads::new(Arc::new(market_dir.clone())),
        scanner: Arc::new(ParquetScannerStore::new(Arc::new(market_dir), READ_TTL)),
        auth: Arc::new(
            Authenticator::embedded(accounts.clone(), Duration::from_secs(300))?
                .with_clock(config.clock.clone())
                .with_keys(
                    KeyChecker::new(
                        key_store,
                        Pepper::from_text(&secret_file(&config.database, KEY_PEPPER_FILE)?)
                            .map_err(|e| PortError::fault("API key pepper", e))?,
                    )
                    .with_clock(config.clock.clone()),
                ),
        ),
        data_legacy_json: config.data_legacy_json,
        limits: api::limits::Limits {
            // Workers here wake waiting reads themselves: a re-read every
            // 2 s at most often is a safety net, and no counts are read.
            long_poll_reread: if config.workers > 0 {
                config.limits.long_poll_reread.max(Duration::from_secs(2))
            } else {
                config.limits.long_poll_reread
            },
            long_poll_check: config
                .limits
                .long_poll_check
                .filter(|_| config.workers == 0),
            ..config.limits
        },
        metering: metering.clone(),
        webhooks: Some(hooks.clone()),
        compute: Default::default(),
        long_polls: api::state::long_polls(&config.limits),
        batch_reads: Default::default(),
        test_data: Some(test_data),
    };
    let returns = platform::returns::ReturnStore::new(state.uploads.blobs().clone());
    let deps = WorkerDeps {
        tasks: tasks.clone(),
        handlers: Arc::new(registry(&state)),
        lease: TimeDelta::minutes(15),
        max_attempts: 3,
        stall: std::time::Duration::from_secs(15 * 60),
        // A batch dropped in the inbox gets its table as its last chunk
        // ends; then the owner's webhooks are told.
        after: Some(Arc::new(platform::worker::AfterEach(
            config
                .inbox
                .as_ref()
                .map(|dir| {
                    Arc::new(services::backtest::batch_files::FileResults {
                        files: Arc::new(LocalDir::new(dir)),
                        prefix: String::new(),
                        tasks: tasks.clone(),
                        returns: Some(returns.clone()),
                    }) as Arc<dyn platform::worker::AfterJob>
                })
                .into_iter()
                .chain([Arc::new(services::webhooks::TaskEvents {
                    events: hooks.events(),
                    tasks: tasks.clone(),
                    returns: Some(returns.clone()),
                }) as Arc<dyn platform::worker::AfterJob>])
                .collect(),
        ))),
        metering: metering.clone(),
        queue: queue.clone(),
        // Long-polls here hear the announcement.
        count_ends: false,
    };
    let workers = WorkerPool::start(config.workers, receiver, queue.clone(), deps);
    let recovered = recover(tasks.as_ref(), queue.as_ref()).await?;
    if recovered > 0 {
        tracing::info!(
            tasks = recovered,
            "re-queued tasks left unfinished by the previous run"
        );
    }
    // The scan at start comes before the data follower's first look, in
    // its task, so the two never scan one session at once.
    let scanner = AbortOnDrop(tokio::spawn(
        services::analytics::scanner::nightly::scheduled(
            state.market.clone(),
            state.scanner.clone(),
            services::analytics::scanner::nightly::Schedule {
                at_start: false,
                ..config.scan
            },
            Some(hooks.events()),
        ),
    ));
    // A test set made at this start gets its scan once; nothing follows it.
    let test_scan =
        (test_filled && config.test_market_dir != config.market_dir && config.scan.at_start)
            .then(|| state.test_data.clone())
            .flatten()
            .map(|t| {
                AbortOnDrop(tokio::spawn(
                    services::analytics::scanner::nightly::scheduled(
                        t.market,
                        t.scanner,
                        services::analytics::scanner::nightly::Schedule {
                            at_start: true,
                            daily_at: None,
                            follow: false,
                        },
                        None,
                    ),
                ))
            });
    crate::freshness::announce(&parquet).await;
    let follower = AbortOnDrop(tokio::spawn(crate::updates::follow_data(
        crate::updates::Follower {
            market: parquet,
            market_dir: config.market_dir.clone(),
            scanner: state.scanner.clone(),
            events: Some(hooks.events()),
            scan_at_start: config.scan.at_start,
            follow: config.scan.follow,
            stale_after: config.stale_after,
            inbox_max_bytes: config.inbox_max_bytes,
        },
    )));
    let deliverer = Arc::new(deliveries::Deliverer {
        store: hooks.store.clone(),
        outbox: hooks.outbox.clone(),
        keys: hooks.keys.clone(),
        policy: hooks.policy.clone(),
        schedule: config.webhooks.schedule.clone(),
        timeouts: config.webhooks.timeouts,
    });
    let deliveries = AbortOnDrop(tokio::spawn(deliveries::deliver_forever(
        webhook_rows,
        deliverer,
        config.webhooks.parallel,
    )));
    let flusher = metering
        .clone()
        .map(|m| AbortOnDrop(tokio::spawn(m.flush_forever())));
    let inbox = config.inbox.clone().map(|dir| {
        AbortOnDrop(tokio::spawn(sweep_inbox(
            dir,
            state.clone(),
            accounts.clone(),
        )))
    });
    Ok(Embedded {
        state,
        accounts,
        workers,
        scanner,
        follower,
        test_scan,
        inbox,
        flusher,
        deliveries,
        shutdown_grace: config.shutdown_grace,
        connections: config.connections,
        jobs: Arc::new(jobs),
    })
}

async fn ensure_account(
    store: &dyn AccountStore,
    email: &str,
    password: &str,
    plan_code: &str,
) -> Result<(), PortError> {
    let custom = demo_custom_indicators();
    // Every shipped custom indicator's inputs are selected, so the trial
    // (Core indicators only) can calculate them too.
    let mut selected = vec!["SPX_OPTIX".to_string(), "AAII_BULL".to_string()];
    for c in &custom {
        for input in [&c.indicator_1_url, &c.indicator_2_url] {
            if !selected.contains(input) {
                selected.push(input.clone());
            }
        }
    }
    match store.get(email).await? {
        None => {
            store
                .put(platform::accounts::new_record(
                    email, password, plan_code, selected, custom,
                )?)
                .await?;
        }
        // An account made by an earlier version gains what it lacks.
        Some(mut record)
            if selected
                .iter()
                .any(|s| !record.selected_indicators.contains(s)) =>
        {
            for s in selected {
                if !record.selected_indicators.contains(&s) {
                    record.selected_indicators.push(s);
                }
            }
            store.put(record).await?;
        }
        Some(_) => {}
    }
    Ok(())
}

/// Two worked examples for the demo account's custom indicators.
pub fn demo_custom_indicators() -> Vec<platform::accounts::CustomIndicator> {
    let at = chrono::NaiveDate::from_ymd_opt(2026, 1, 5)
        .and_then(|d| d.and_hms_opt(12, 0, 0))
        .unwrap_or_default();
    vec![
        platform::accounts::CustomIndicator {
            url: "CUSTOM_OPTIX_AAII".into(),
            name: "S&P 500 Optix over AAII bulls (weekly, 4-week average)".into(),
            indicator_1_url: "SPX_OPTIX".into(),
            indicator_2_url: "AAII_BULL".into(),
            calculate: "ratio".into(),
            timeframe: "Weekly".into(),
            ma: "4".into(),
            upper_extreme_value: 2.0,
            lower_extreme_value: 0.8,
            create_date: at,
        },
        platform::accounts::CustomIndicator {
            url: "CUSTOM_TECH_SPREAD".into(),
            name: "Technology Optix minus S&P 500 Optix (10-day average)".into(),
            indicator_1_url: "XLK_OPTIX".into(),
            indicator_2_url: "SPX_OPTIX".into(),
            calculate: "difference".into(),
            timeframe: "Daily".into(),
            ma: "10".into(),
            upper_extreme_value: 15.0,
            lower_extreme_value: -15.0,
            create_date: at + chrono::TimeDelta::days(1),
        },
    ]
}

impl Embedded {
    /// Sets the gauges read at a scrape rather than kept up to date.
    pub fn observe(&self) -> crate::metrics::Observe {
        let jobs = self.jobs.clone();
        Arc::new(move || jobs.observe())
    }

    /// Serves every group on `listener` until `shutdown` resolves, then lets
    /// running jobs finish within the grace period; the rest resume on the next start.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let app = api::routes::embedded(&self.state);
        api::serve::serve(listener, app, self.connections, shutdown).await?;
        tracing::info!("http server stopped; waiting for running jobs");
        drop(self.scanner);
        drop(self.follower);
        drop(self.test_scan);
        drop(self.inbox);
        self.workers.shutdown(self.shutdown_grace).await;
        drop(self.flusher);
        drop(self.deliveries);
        if let Some(m) = &self.state.metering
            && let Err(e) = m.flush().await
        {
            tracing::warn!(error = %e, "usage counts not written at shutdown");
        }
        Ok(())
    }
}

pub use platform::worker::shutdown_signal;
