//! The `marketlab` command line: serve, generate sample data, import bars,
//! manage accounts.

use crate::operator::{AccountCommand, PlansArgs, UsageArgs};
use crate::server::{self, ServerConfig};
use anyhow::{Context, Result, bail};
use chrono::NaiveDate;
use clap::{Args, Parser, Subcommand};
use platform::accounts::SqliteAccountStore;
use platform::keys::Pepper;
use platform::marketdata::{LocalDir, ParquetMarketData};
use platform::sqlite::Database;
use sample::{DEFAULT_SEED, DEFAULT_STOCKS, FULL_UNIVERSE, SampleConfig, generate};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Parser, Debug)]
#[command(
    name = "marketlab",
    version,
    about = "Market analytics APIs: backtests, analytics tools and indicator data"
)]
pub struct Cli {
    /// Where market data (market/) and state (state/) live.
    #[arg(
        long,
        global = true,
        env = "MARKETLAB_DATA_DIR",
        default_value = "data"
    )]
    pub data_dir: PathBuf,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve every service on one port (the default command).
    Serve(ServeArgs),
    /// Write the deterministic sample data set into <data-dir>/market.
    SampleData(SampleArgs),
    /// Import daily bars for one symbol.
    #[command(subcommand)]
    Import(crate::imports::ImportCommand),
    /// Manage accounts.
    #[command(subcommand)]
    Accounts(AccountCommand),
    /// Make, list and revoke an account's API keys.
    #[command(subcommand)]
    Keys(crate::keys::KeyCommand),
    /// List the plans with the services they grant and their limits; `set`
    /// changes a plan's limits for every running instance (within 30 s).
    Plans(PlansArgs),
    /// Usage per account for a month, beside the plan's limits; `--csv`
    /// writes the export an invoicing system reads.
    Usage(UsageArgs),
    /// Run a batch of backtests here, with a progress bar, and write its
    /// table beside the file.
    #[command(subcommand)]
    Batch(BatchCommand),
    /// Run the nightly scanner now: every stock's signals on one session,
    /// written as that date's scanner file (replacing an earlier scan of it).
    /// With `--from`, record the history of every session from then to
    /// `--date` instead (what scanner backtests read; no day files).
    Scan(ScanArgs),
}

#[derive(Subcommand, Debug)]
pub enum BatchCommand {
    /// FILE: JSON lines of strategies (`.jsonl`), or a batch request
    /// (`.json`: `strategies`, or `strategy` and `grid`). The table goes to
    /// FILE's name with `.results.csv` and `.results.parquet`.
    Run { file: PathBuf },
}

#[derive(Args, Debug, Clone)]
pub struct ScanArgs {
    /// The session to scan (YYYY-MM-DD); default the latest in the store.
    #[arg(long)]
    pub date: Option<NaiveDate>,
    /// Backfill the history from this session (YYYY-MM-DD) to `--date`.
    #[arg(long)]
    pub from: Option<NaiveDate>,
}

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Address to listen on. Keep the loopback default unless a proxy fronts it.
    #[arg(long, env = "MARKETLAB_HOST", default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub host: IpAddr,
    #[arg(long, env = "MARKETLAB_PORT", default_value_t = 8080)]
    pub port: u16,
    /// Worker tasks running queued jobs; 0 takes submissions and runs
    /// nothing (they run at the next start with workers).
    #[arg(long, env = "MARKETLAB_WORKERS", default_value_t = 2)]
    pub workers: usize,
    /// Data service: answer with the legacy double-encoded JSON string body.
    #[arg(long, env = "MARKETLAB_DATA_LEGACY_JSON")]
    pub data_legacy_json: bool,
    /// Seconds a connection may take to send a request head, counted from its
    /// opening or its previous answer; silent and idle connections close after it.
    #[arg(long, env = "MARKETLAB_HEADER_TIMEOUT", default_value_t = 20.0)]
    pub header_timeout: f64,
    /// Seconds a client may take to send a request body.
    #[arg(long, env = "MARKETLAB_BODY_TIMEOUT", default_value_t = 30.0)]
    pub body_timeout: f64,
    /// Seconds an answer may take once the request is in.
    #[arg(long, env = "MARKETLAB_REQUEST_TIMEOUT", default_value_t = 60.0)]
    pub request_timeout: f64,
    /// Largest request body in bytes.
    #[arg(long, env = "MARKETLAB_BODY_LIMIT", default_value_t = 6 * 1024 * 1024)]
    pub body_limit: usize,
    /// Open connections at once.
    #[arg(long, env = "MARKETLAB_MAX_CONNECTIONS", default_value_t = 1024)]
    pub max_connections: usize,
    /// Open connections from one client address at once; past it a new
    /// connection is answered 429 and closed.
    #[arg(long, env = "MARKETLAB_CONNECTIONS_PER_ADDRESS", default_value_t = 256)]
    pub connections_per_address: usize,
    /// Time of day (UTC, HH:MM) of the daily scanner run; 04:40 UTC is
    /// 11:40 PM in New York in winter.
    #[arg(long, env = "MARKETLAB_SCAN_AT", default_value = "04:40")]
    pub scan_at: chrono::NaiveTime,
    /// No scanner runs in this process: neither at start nor daily.
    #[arg(long, env = "MARKETLAB_NO_SCAN")]
    pub no_scan: bool,
    /// Deliver webhooks over plain http to loopback receivers (a local
    /// consumer, tests); other private addresses stay refused.
    #[arg(long, env = "MARKETLAB_WEBHOOKS_ALLOW_LOOPBACK")]
    pub webhooks_allow_loopback: bool,
    /// Seconds between a failed webhook attempt and the next, comma-separated
    /// (default: 5,300,1800,7200,18000,36000,36000, about 27.5 hours).
    #[arg(long, env = "MARKETLAB_WEBHOOK_RETRY_SECONDS")]
    pub webhook_retry_seconds: Option<platform::webhooks::RetrySchedule>,
    /// Seconds between checks for market data imported by another process
    /// (the `marketlab import` commands): a new session is served at most
    /// this long after its import.
    #[arg(long, env = "MARKETLAB_DATA_CHECK_SECONDS", default_value_t = 30.0)]
    pub data_check_seconds: f64,
    /// The largest file the market directory's `incoming/` takes, in bytes;
    /// a larger one is refused unread, with its report.
    #[arg(long, env = "MARKETLAB_INBOX_MAX_BYTES", default_value_t = sample::import::inbox::MAX_BYTES)]
    pub inbox_max_bytes: u64,
    /// The data test-mode API keys work on (`<data-dir>/test-market` by
    /// default, filled with the sample set when empty); may be the market
    /// directory itself when that holds the sample set.
    #[arg(long, env = "MARKETLAB_TEST_MARKET_DIR")]
    pub test_market_dir: Option<PathBuf>,
    /// Serve Prometheus metrics at `/metrics` on this address (for
    /// operators: keep it off the tenants' network). Off when not given.
    #[arg(long, env = "MARKETLAB_METRICS_ADDR")]
    pub metrics_addr: Option<SocketAddr>,
    #[command(flatten)]
    pub sample: SampleArgs,
}

impl Default for ServeArgs {
    fn default() -> Self {
        ServeArgs {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 8080,
            workers: 2,
            data_legacy_json: false,
            header_timeout: 20.0,
            body_timeout: 30.0,
            request_timeout: 60.0,
            body_limit: 6 * 1024 * 1024,
            max_connections: 1024,
            connections_per_address: 256,
            scan_at: chrono::NaiveTime::from_hms_opt(4, 40, 0).expect("a time"),
            no_scan: false,
            webhooks_allow_loopback: false,
            webhook_retry_seconds: None,
            metrics_addr: None,
            data_check_seconds: 30.0,
            inbox_max_bytes: sample::import::inbox::MAX_BYTES,
            test_market_dir: None,
            sample: SampleArgs::default(),
        }
    }
}

#[derive(Args, Debug, Clone)]
pub struct SampleArgs {
    /// Seed of the sample set: the same seed always writes the same bytes.
    #[arg(long, env = "MARKETLAB_SEED", default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Stocks in the sample universe.
    #[arg(long, env = "MARKETLAB_STOCKS", default_value_t = DEFAULT_STOCKS)]
    pub stocks: usize,
    /// Use the full 1500-stock universe (overrides --stocks).
    #[arg(long)]
    pub full_universe: bool,
    /// The spec's sizes: 1500 stocks, option chains on 4200 underlyings, a
    /// catalog of 22,000 indicators (6,284 sentiment), each with its series.
    #[arg(long, env = "MARKETLAB_SPEC_SCALE")]
    pub spec_scale: bool,
    /// Last session of the sample set.
    #[arg(long, default_value = "2026-11-20")]
    pub end: NaiveDate,
}

impl Default for SampleArgs {
    fn default() -> Self {
        SampleArgs {
            seed: DEFAULT_SEED,
            stocks: DEFAULT_STOCKS,
            full_universe: false,
            spec_scale: false,
            end: SampleConfig::default().end,
        }
    }
}

impl SampleArgs {
    pub fn config(&self) -> SampleConfig {
        let config = SampleConfig {
            seed: self.seed,
            stocks: if self.full_universe {
                FULL_UNIVERSE
            } else {
                self.stocks
            },
            end: self.end,
            ..SampleConfig::default()
        };
        if self.spec_scale {
            config.spec_scale()
        } else {
            config
        }
    }
}

pub async fn run(cli: Cli) -> Result<()> {
    let data_dir = cli.data_dir.clone();
    match cli.command.unwrap_or(Command::Serve(ServeArgs::default())) {
        Command::Serve(args) => serve(&data_dir, args).await,
        Command::SampleData(args) => {
            let out = LocalDir::new(data_dir.join("market"));
            if !out.is_empty() {
                bail!(
                    "{} already holds market data; remove it first to regenerate",
                    out.root().display()
                );
            }
            let started = std::time::Instant::now();
            let config = args.config();
            let summary = tokio::task::spawn_blocking(move || generate(&config, &out)).await??;
            println!(
                "wrote {} objects ({:.1} MB): {} symbols, {} indicators, latest date {} in {:.1} s",
                summary.objects,
                summary.bytes as f64 / 1e6,
                summary.symbols,
                summary.indicators,
                summary
                    .latest_date
                    .map(|d| d.to_string())
                    .unwrap_or_default(),
                started.elapsed().as_secs_f64()
            );
            Ok(())
        }
        Command::Import(cmd) => crate::imports::import(&data_dir, cmd).await,
        Command::Scan(args) => scan(&data_dir, args).await,
        Command::Batch(BatchCommand::Run { file }) => batch_run(&data_dir, &file).await,
        Command::Accounts(cmd) => accounts(&data_dir, cmd).await,
        Command::Keys(cmd) => {
            let database = data_dir.join("state").join("marketlab.sqlite");
            let db = Database::open(&database)?;
            let pepper =
                Pepper::from_text(&server::secret_file(&database, server::KEY_PEPPER_FILE)?)
                    .map_err(anyhow::Error::msg)?;
            let store = platform::keys::SqliteKeyStore::new(db.clone());
            let accounts = SqliteAccountStore::new(db);
            crate::keys::keys(
                &store,
                &accounts,
                &pepper,
                cmd,
                &mut std::io::stdout().lock(),
            )
            .await
        }
        Command::Plans(args) => {
            let db = Database::open(&data_dir.join("state").join("marketlab.sqlite"))?;
            let quotas = platform::quota::SqliteQuotaStore::new(db);
            let mut out = std::io::stdout().lock();
            crate::operator::plans(&quotas, args.command, &mut out).await
        }
        Command::Usage(args) => {
            let db = Database::open(&data_dir.join("state").join("marketlab.sqlite"))?;
            let stores = crate::operator::Stores {
                usage: &platform::usage::SqliteUsageStore::new(db.clone()),
                quotas: &platform::quota::SqliteQuotaStore::new(db.clone()),
                accounts: &SqliteAccountStore::new(db),
            };
            let mut out = std::io::stdout().lock();
            crate::operator::usage(&stores, &args, &mut out).await
        }
    }
}

/// A positive number of seconds from a flag.
fn seconds(flag: &str, value: f64) -> Result<std::time::Duration> {
    if !(value.is_finite() && value > 0.0 && value <= 86_400.0) {
        anyhow::bail!(
            "--{flag} must be a number of seconds above 0 and at most 86400, got {value}"
        );
    }
    Ok(std::time::Duration::from_secs_f64(value))
}

async fn serve(data_dir: &Path, args: ServeArgs) -> Result<()> {
    // Installed before anything records, so the first requests count.
    let prometheus = args
        .metrics_addr
        .map(|_| crate::metrics::install())
        .transpose()?;
    let _spans = platform::telemetry::otlp::install("marketlab").then(|| {
        api::serve::AbortOnDrop(tokio::spawn(platform::telemetry::otlp::export_forever()))
    });
    let config = ServerConfig {
        workers: args.workers,
        data_legacy_json: args.data_legacy_json,
        sample: args.sample.config(),
        limits: api::limits::Limits {
            body_bytes: args.body_limit.max(1),
            body_timeout: seconds("body-timeout", args.body_timeout)?,
            request_timeout: seconds("request-timeout", args.request_timeout)?,
            ..Default::default()
        },
        connections: api::serve::ConnectionLimits {
            header_timeout: seconds("header-timeout", args.header_timeout)?,
            max_connections: args.max_connections.max(1),
            per_address: args.connections_per_address.max(1),
            ..Default::default()
        },
        data_check: seconds("data-check-seconds", args.data_check_seconds)?,
        inbox_max_bytes: args.inbox_max_bytes,
        test_market_dir: args
            .test_market_dir
            .clone()
            .unwrap_or_else(|| data_dir.join("test-market")),
        scan: services::analytics::scanner::nightly::Schedule {
            at_start: !args.no_scan,
            daily_at: (!args.no_scan).then_some(args.scan_at),
            follow: !args.no_scan,
        },
        webhooks: server::WebhookSettings {
            allow_loopback: args.webhooks_allow_loopback,
            schedule: args.webhook_retry_seconds.clone().unwrap_or_default(),
            ..Default::default()
        },
        ..ServerConfig::in_dir(data_dir, SocketAddr::new(args.host, args.port))
    };
    let embedded = server::start(&config, api::jobs::registry)
        .await
        .context("starting the embedded server")?;
    let listener = tokio::net::TcpListener::bind(config.addr)
        .await
        .with_context(|| format!("binding {}", config.addr))?;
    let addr = listener.local_addr()?;
    let _metrics = match (prometheus, args.metrics_addr) {
        (Some(handle), Some(at)) => {
            let listener = tokio::net::TcpListener::bind(at)
                .await
                .with_context(|| format!("binding the metrics address {at}"))?;
            let at = listener.local_addr()?;
            println!("marketlab metrics on http://{at}/metrics");
            let app = crate::metrics::router(
                handle,
                embedded.observe(),
                embedded.state.clone(),
                config.workers,
            );
            Some(api::serve::AbortOnDrop(tokio::spawn(async move {
                let _ = api::serve::serve(
                    listener,
                    app,
                    api::serve::ConnectionLimits::default(),
                    std::future::pending(),
                )
                .await;
            })))
        }
        _ => None,
    };
    tracing::info!(%addr, data_dir = %data_dir.display(), "listening");
    println!(
        "marketlab listening on http://{addr} (data in {})",
        data_dir.display()
    );
    println!(
        "  demo account: {} / {}",
        server::DEMO_EMAIL,
        server::DEMO_PASSWORD
    );
    println!(
        "  try: curl -u {}:{} http://{addr}/health",
        server::DEMO_EMAIL,
        server::DEMO_PASSWORD
    );
    embedded.serve(listener, server::shutdown_signal()).await?;
    Ok(())
}

/// `marketlab scan`: the nightly job by hand, with a progress bar.
async fn scan(data_dir: &Path, args: ScanArgs) -> Result<()> {
    use platform::scanner::{ParquetScannerStore, READ_TTL};
    use platform::worker::Progress;
    let dir = Arc::new(LocalDir::new(data_dir.join("market")));
    if dir.is_empty() {
        bail!(
            "{} holds no market data: run `marketlab sample-data` or `marketlab serve` first",
            dir.root().display()
        );
    }
    let market = ParquetMarketData::new(dir.clone());
    let store = ParquetScannerStore::new(dir, READ_TTL);
    let progress = Progress::default();
    let bar = indicatif::ProgressBar::new(100).with_style(
        indicatif::ProgressStyle::with_template("scanning [{bar:40}] {pos:>3}% {elapsed}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let started = std::time::Instant::now();
    let show = |progress: &Progress| bar.set_position(progress.get().into());
    if let Some(from) = args.from {
        use services::analytics::scanner::history::backfill;
        let job = backfill(&market, &store, from, args.date, &progress);
        let s = until_done(job, &progress, show).await;
        bar.finish_and_clear();
        let s = s.map_err(|e| anyhow::anyhow!("{e}"))?;
        println!(
            "recorded the history of {} sessions from {} to {} ({} months): {} signals fired, in {:.1} s",
            s.sessions,
            s.from,
            s.to,
            s.months,
            s.items,
            started.elapsed().as_secs_f64()
        );
        return Ok(());
    }
    let job = services::analytics::scanner::nightly::run(&market, &store, args.date, &progress);
    let s = until_done(job, &progress, show).await;
    bar.finish_and_clear();
    let s = s.map_err(|e| anyhow::anyhow!("{e}"))?;
    println!(
        "scanned {}: {} stocks, {} signals fired, in {:.1} s (wrote {})",
        s.date,
        s.stocks,
        s.items,
        started.elapsed().as_secs_f64(),
        platform::scanner::key(s.date)
    );
    // The day's webhook events, recorded in the server's database: a
    // running server sends them within a second, a stopped one at its start.
    let db = Database::open(&data_dir.join("state").join("marketlab.sqlite"))?;
    let rows = Arc::new(platform::webhooks::SqliteWebhooks::new(db));
    let events = platform::webhooks::emit::Events {
        store: rows.clone(),
        outbox: rows,
    };
    services::analytics::scanner::nightly::tell(&events, &store, s.date).await;
    Ok(())
}

/// `marketlab batch run FILE`.
async fn batch_run(data_dir: &Path, file: &Path) -> Result<()> {
    use platform::worker::Progress;
    use services::backtest::{batch, batch_files};
    let dir = Arc::new(LocalDir::new(data_dir.join("market")));
    if dir.is_empty() {
        bail!(
            "{} holds no market data: run `marketlab sample-data` or `marketlab serve` first",
            dir.root().display()
        );
    }
    let market = ParquetMarketData::new(dir);
    let text =
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_default();
    let request: serde_json::Value = if file.extension().is_some_and(|e| e == "json") {
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", file.display()))?
    } else {
        batch_files::parse_lines(&stem, &text)
            .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?
    };
    let expanded = batch::expand(&request, usize::MAX)
        .map_err(|e| anyhow::anyhow!("{}", api::error::ApiError::from(e).message))?;
    let defaults = batch::check(&market, &expanded)
        .await
        .map_err(|e| anyhow::anyhow!("{}", api::error::ApiError::from(e).message))?;
    for warning in defaults.warnings() {
        eprintln!("warning: {warning}");
    }
    let progress = Progress::default();
    let bar = indicatif::ProgressBar::new(100).with_style(
        indicatif::ProgressStyle::with_template("backtesting [{bar:40}] {pos:>3}% {elapsed}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let started = std::time::Instant::now();
    // The chunks keep their returns where the service's would, in a blob
    // store of their own (removed after), and the statistics are the
    // service's computation over them.
    let statistics = batch::StatisticsParams::of_request(&request);
    let id = uuid::Uuid::new_v4().to_string();
    let scratch = data_dir.join("batch-returns").join(&id);
    let returns = platform::returns::ReturnStore::new(Arc::new(LocalDir::new(&scratch)));
    let ran = until_done(
        batch::run_chunks(
            &market,
            &expanded,
            statistics.as_ref(),
            &returns,
            &id,
            &progress,
        ),
        &progress,
        |p| bar.set_position(p.get().into()),
    )
    .await;
    bar.finish_and_clear();
    let ran_for = started.elapsed();
    let stats = match (&ran, &statistics) {
        (Ok(rows), Some(settings)) if rows.len() >= 2 => {
            let layout = batch::Layout {
                total: rows.len(),
                chunk: batch::chunk_size(&expanded),
            };
            Some(batch::statistics::compute(&returns, &id, layout, settings).await)
        }
        _ => None,
    };
    let _ = std::fs::remove_dir_all(&scratch);
    let rows = ran.map_err(|e| anyhow::anyhow!("the batch stopped: {e}"))?;
    let stats = stats.transpose()?;
    let paths: Vec<String> = expanded.varied.paths();
    let base = file.with_extension("");
    let csv = base.with_extension("results.csv");
    let parquet = base.with_extension("results.parquet");
    std::fs::write(&csv, batch::to_csv(&paths, &rows))?;
    let companion = base.with_extension("statistics.json");
    if let Some(st) = &stats {
        std::fs::write(&companion, serde_json::to_vec_pretty(st)?)?;
    }
    let table = platform::marketdata::columns::to_parquet_with(
        batch_files::table(&paths, &rows),
        batch_files::metadata(stats.as_ref()),
    )?;
    std::fs::write(&parquet, table)?;
    let failed = rows.iter().filter(|r| r.error.is_some()).count();
    println!(
        "ran {} strategies ({failed} failed) in {:.1} s: {} and {}",
        rows.len(),
        ran_for.as_secs_f64(),
        csv.display(),
        parquet.display()
    );
    if let Some(st) = &stats {
        let dsr = st
            .deflated_sharpe
            .as_ref()
            .and_then(|d| d.deflated_sharpe_ratio)
            .map_or("-".to_string(), |d| format!("{d:.3}"));
        let pbo = st
            .overfitting
            .as_ref()
            .map_or("-".to_string(), |o| format!("{:.3}", o.pbo));
        println!(
            "statistics in {:.1} s: deflated Sharpe ratio {dsr}, probability of backtest overfitting {pbo}: {}",
            (started.elapsed() - ran_for).as_secs_f64(),
            companion.display()
        );
    }
    Ok(())
}

/// Drives `job`, showing its progress every tenth of a second.
async fn until_done<T>(
    job: impl std::future::Future<Output = T>,
    progress: &platform::worker::Progress,
    show: impl Fn(&platform::worker::Progress),
) -> T {
    tokio::pin!(job);
    loop {
        tokio::select! {
            done = &mut job => return done,
            _ = tokio::time::sleep(std::time::Duration::from_millis(100)) => show(progress),
        }
    }
}

async fn accounts(data_dir: &Path, cmd: AccountCommand) -> Result<()> {
    let db = Database::open(&data_dir.join("state").join("marketlab.sqlite"))?;
    let store = SqliteAccountStore::new(db);
    crate::operator::accounts(&store, cmd, &mut std::io::stdout().lock()).await
}

/// Whether `e` is a write to a pipe whose reader has gone.
pub fn closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
