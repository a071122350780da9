//! The operator's commands over any adapters: plan limits (`marketlab plans`)
//! and usage per account with its CSV export (`marketlab usage`). The
//! embedded CLI runs them on the SQLite file; on AWS the `operator` binary
//! runs them on the tables.

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use platform::accounts::{AccountStore, PLANS, plan};
use platform::metering::compute_ms;
use platform::quota::{PlanLimits, QuotaStore, default_limits};
use platform::usage::UsageStore;
use std::io::Write;

#[derive(Subcommand, Debug)]
pub enum AccountCommand {
    /// Add an account, or replace the one with this e-mail.
    Add {
        #[arg(long)]
        email: String,
        /// The password; read from MARKETLAB_PASSWORD when omitted.
        #[arg(long, env = "MARKETLAB_PASSWORD", hide_env_values = true)]
        password: String,
        /// A plan code (see `marketlab plans`).
        #[arg(long, default_value = "pro")]
        plan: String,
        /// Indicator codes selected for the data service (comma-separated).
        #[arg(long, value_delimiter = ',')]
        select: Vec<String>,
    },
    /// List accounts (e-mail, plan, selections).
    List,
    /// Move an account to another plan.
    SetPlan {
        #[arg(long)]
        email: String,
        /// A plan code (see `plans`).
        #[arg(long)]
        plan: String,
    },
    /// Add (or replace, by url) a custom indicator of an account: two
    /// indicators combined on a timeframe, optionally smoothed.
    AddIndicator {
        #[arg(long)]
        email: String,
        /// Identifier used by getUserIndicatorData?url=.
        #[arg(long)]
        url: String,
        #[arg(long)]
        name: String,
        #[arg(long)]
        indicator_1: String,
        #[arg(long)]
        indicator_2: String,
        /// ratio, difference, sum, product or average.
        #[arg(long, default_value = "ratio")]
        calculate: String,
        /// Daily, Weekly or Monthly.
        #[arg(long, default_value = "Daily")]
        timeframe: String,
        /// Moving-average periods (0 for none).
        #[arg(long, default_value_t = 0)]
        ma: usize,
        #[arg(long, default_value_t = 0.0)]
        upper: f64,
        #[arg(long, default_value_t = 0.0)]
        lower: f64,
    },
}

#[derive(Args, Debug)]
pub struct PlansArgs {
    #[command(subcommand)]
    pub command: Option<PlansCommand>,
}

#[derive(Subcommand, Debug)]
pub enum PlansCommand {
    /// Set a plan's limits; limits not given keep their current values.
    Set {
        /// The plan's code (see `marketlab plans`).
        code: String,
        /// Authenticated requests per minute, per service.
        #[arg(long)]
        requests_per_minute: Option<u32>,
        /// Tasks running at once; more wait in PENDING.
        #[arg(long)]
        concurrent_tasks: Option<u32>,
        /// Task compute per calendar month, in minutes.
        #[arg(long)]
        monthly_compute_minutes: Option<u64>,
        /// Strategies one batch may hold (a grid's combinations), at most
        /// 1,000,000.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=platform::quota::MAX_BATCH as u64))]
        max_batch: Option<u64>,
    },
}

#[derive(Args, Debug)]
pub struct UsageArgs {
    /// One account (default: every account).
    #[arg(long)]
    pub account: Option<String>,
    /// The month, YYYY-MM (default: the current month, UTC).
    #[arg(long)]
    pub month: Option<String>,
    /// CSV rows (account, day, metric, quantity) instead of the summary.
    #[arg(long)]
    pub csv: bool,
}

/// A plan's limits: an operator's, else the defaults; and whether they were set.
async fn effective(quotas: &dyn QuotaStore, code: &str) -> Result<(PlanLimits, bool)> {
    Ok(match quotas.plan_limits(code).await? {
        Some(l) => (l, true),
        None => (default_limits(code), false),
    })
}

/// Lists the plans, or sets one's limits.
pub async fn plans(
    quotas: &dyn QuotaStore,
    command: Option<PlansCommand>,
    out: &mut impl Write,
) -> Result<()> {
    if let Some(PlansCommand::Set {
        code,
        requests_per_minute,
        concurrent_tasks,
        monthly_compute_minutes,
        max_batch,
    }) = command
    {
        let Some(p) = plan(&code) else {
            let codes: Vec<&str> = PLANS.iter().map(|p| p.code).collect();
            bail!("unknown plan '{code}' (one of: {})", codes.join(", "));
        };
        let (mut limits, _) = effective(quotas, &code).await?;
        if let Some(n) = requests_per_minute {
            limits.requests_per_minute = n;
        }
        if let Some(n) = concurrent_tasks {
            limits.concurrent_tasks = n;
        }
        if let Some(n) = monthly_compute_minutes {
            limits.monthly_compute_minutes = n;
        }
        if let Some(n) = max_batch {
            limits.max_batch = Some(n as usize);
        }
        quotas.set_plan_limits(&code, limits).await?;
        writeln!(
            out,
            "plan {code}: {} requests/min per service, {} concurrent tasks, {} compute minutes/month, {} strategies per batch (instances apply it within {} s)",
            limits.requests_per_minute,
            limits.concurrent_tasks,
            limits.monthly_compute_minutes,
            limits.batch_size(p),
            platform::metering::PLAN_CACHE.as_secs()
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "{:<20} {:<46} {:<27} {:>9} {:>6} {:>9} {:>9}",
        "plan", "name", "services", "req/min", "tasks", "min/month", "batch"
    )?;
    for p in PLANS {
        let (l, set) = effective(quotas, p.code).await?;
        let services: Vec<String> = p.services.iter().map(|s| s.to_string()).collect();
        writeln!(
            out,
            "{:<20} {:<46} {:<27} {:>9} {:>6} {:>9} {:>9}{}",
            p.code,
            p.name,
            services.join(","),
            l.requests_per_minute,
            l.concurrent_tasks,
            l.monthly_compute_minutes,
            l.batch_size(p),
            if set { "  (set)" } else { "" }
        )?;
    }
    Ok(())
}

pub struct Stores<'a> {
    pub usage: &'a dyn UsageStore,
    pub quotas: &'a dyn QuotaStore,
    pub accounts: &'a dyn AccountStore,
}

/// Usage of one account or all for a month: a summary, or CSV rows.
pub async fn usage(stores: &Stores<'_>, args: &UsageArgs, out: &mut impl Write) -> Result<()> {
    let month = match &args.month {
        Some(m) => services::usage::parse_month(m).map_err(anyhow::Error::msg)?,
        None => chrono::Utc::now().date_naive(),
    };
    let (first, last) = platform::metering::month_bounds(month);
    let accounts = match &args.account {
        Some(email) => {
            let email = platform::accounts::normalize_email(email);
            vec![
                stores
                    .accounts
                    .get(&email)
                    .await?
                    .with_context(|| format!("no account {email}"))?,
            ]
        }
        None => stores.accounts.list().await?,
    };
    if args.csv {
        writeln!(out, "{}", services::usage::CSV_HEADER)?;
    } else {
        writeln!(
            out,
            "{:<32} {:<12} {:>9} {:>9} {:>9} {:>12} {:>10} {:>14}",
            "account",
            "plan",
            "backtest",
            "analytics",
            "data",
            "compute min",
            "data rows",
            "data bytes"
        )?;
    }
    for a in accounts {
        let days = stores.usage.days(&a.email, first..=last).await?;
        if args.csv {
            for row in services::usage::csv_rows(&a.email, &a.plan, &days) {
                writeln!(out, "{row}")?;
            }
            continue;
        }
        let (limits, _) = effective(stores.quotas, &a.plan).await?;
        let sum =
            |counter: &str| -> u64 { days.iter().filter_map(|d| d.counters.get(counter)).sum() };
        writeln!(
            out,
            "{:<32} {:<12} {:>9} {:>9} {:>9} {:>12} {:>10} {:>14}",
            a.email,
            a.plan,
            sum("requests:backtest"),
            sum("requests:analytics"),
            sum("requests:data"),
            format!(
                "{:.1}/{}",
                compute_ms(&days) as f64 / 60_000.0,
                limits.monthly_compute_minutes
            ),
            sum("rows:data"),
            sum("bytes:data"),
        )?;
    }
    Ok(())
}

/// The account commands over any account store: `marketlab accounts` on
/// the SQLite file, `operator accounts` on the DynamoDB table.
pub async fn accounts(
    store: &dyn AccountStore,
    cmd: AccountCommand,
    out: &mut impl Write,
) -> Result<()> {
    match cmd {
        AccountCommand::Add {
            email,
            password,
            plan,
            select,
        } => {
            platform::accounts::add_account(store, &email, &password, &plan, select).await?;
            writeln!(
                out,
                "account {} saved with plan {plan}",
                email.trim().to_lowercase()
            )?;
        }
        AccountCommand::AddIndicator {
            email,
            url,
            name,
            indicator_1,
            indicator_2,
            calculate,
            timeframe,
            ma,
            upper,
            lower,
        } => {
            if engine::custom::Combine::parse(&calculate).is_none() {
                bail!(
                    "--calculate '{calculate}' is not ratio, difference, sum, product or average"
                );
            }
            if !["Daily", "Weekly", "Monthly"].contains(&timeframe.as_str()) {
                bail!("--timeframe '{timeframe}' is not Daily, Weekly or Monthly");
            }
            let mut record = store
                .get(&email)
                .await?
                .with_context(|| format!("no account {email}"))?;
            record.custom_indicators.retain(|c| c.url != url);
            record
                .custom_indicators
                .push(platform::accounts::CustomIndicator {
                    url: url.clone(),
                    name,
                    indicator_1_url: indicator_1,
                    indicator_2_url: indicator_2,
                    calculate,
                    timeframe,
                    ma: ma.to_string(),
                    upper_extreme_value: upper,
                    lower_extreme_value: lower,
                    create_date: platform::tasks::now(),
                });
            store.put(record).await?;
            writeln!(
                out,
                "custom indicator {url} saved for {}",
                email.trim().to_lowercase()
            )?;
        }
        AccountCommand::SetPlan { email, plan: code } => {
            if plan(&code).is_none() {
                let codes: Vec<&str> = PLANS.iter().map(|p| p.code).collect();
                bail!("unknown plan '{code}' (one of: {})", codes.join(", "));
            }
            let mut record = store
                .get(&email)
                .await?
                .with_context(|| format!("no account {email}"))?;
            record.plan = code.clone();
            store.put(record).await?;
            writeln!(
                out,
                "account {} moved to plan {code}",
                email.trim().to_lowercase()
            )?;
        }
        AccountCommand::List => {
            for a in store.list().await? {
                writeln!(
                    out,
                    "{:<36} {:<22} {}",
                    a.email,
                    a.plan,
                    a.selected_indicators.join(",")
                )?;
            }
        }
    }
    Ok(())
}
