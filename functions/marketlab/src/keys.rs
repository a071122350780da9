//! The operator's key commands for any account: `marketlab keys` on the
//! SQLite file, `operator keys` on the DynamoDB table. The same use cases
//! as `POST/GET/DELETE /keys`, with the operator as a password login.

use anyhow::{Context, Result};
use clap::Subcommand;
use platform::keys::{KeyStore, Mode, Pepper, Scope};
use std::io::Write;

#[derive(Subcommand, Debug)]
pub enum KeyCommand {
    /// Make a key for an account; the key is printed this once.
    Create {
        #[arg(long)]
        email: String,
        /// What it is for (shown in lists and usage).
        #[arg(long)]
        name: String,
        /// read, submit, manage (comma-separated).
        #[arg(long, value_delimiter = ',', default_value = "read")]
        scopes: Vec<String>,
        /// live or test (the sample data set, its own tasks and usage).
        #[arg(long, default_value = "live")]
        mode: String,
        /// When it stops working (RFC 3339).
        #[arg(long)]
        expires_at: Option<chrono::DateTime<chrono::Utc>>,
    },
    /// An account's keys (never their secrets).
    List {
        #[arg(long)]
        email: String,
    },
    /// Revoke one of an account's keys: refused everywhere within 5 s.
    Revoke {
        #[arg(long)]
        email: String,
        /// The key's id (12 hex digits; the part after `mlk_<mode>_`).
        #[arg(long)]
        id: String,
    },
}

/// Runs `cmd` over the key store; keys are made only for accounts that exist.
pub async fn keys(
    store: &dyn KeyStore,
    accounts: &dyn platform::accounts::AccountStore,
    pepper: &Pepper,
    cmd: KeyCommand,
    out: &mut impl Write,
) -> Result<()> {
    let now = chrono::Utc::now();
    match cmd {
        KeyCommand::Create {
            email,
            name,
            scopes,
            mode,
            expires_at,
        } => {
            let scopes = scopes
                .iter()
                .map(|s| {
                    Scope::parse(s.trim())
                        .with_context(|| format!("--scopes '{s}' is not read, submit or manage"))
                })
                .collect::<Result<Vec<_>>>()?;
            let mode = Mode::parse(&mode)
                .with_context(|| format!("--mode '{mode}' is not live or test"))?;
            let email = platform::accounts::normalize_email(&email);
            if accounts.get(&email).await?.is_none() {
                anyhow::bail!("no account {email}");
            }
            let request = services::keys::KeyRequest {
                name,
                scopes,
                mode: Some(mode),
                expires_at,
            };
            let creator = services::keys::Creator {
                account: &email,
                key: None,
            };
            let made = services::keys::create(store, pepper, creator, request, now).await?;
            writeln!(out, "{}", made.key)?;
            writeln!(
                out,
                "key {} ({}) made for {email}: keep it now, it is not shown again",
                made.view.prefix, made.view.name
            )?;
        }
        KeyCommand::List { email } => {
            let email = platform::accounts::normalize_email(&email);
            let list = services::keys::list(store, &email, now).await?;
            for k in list.keys {
                let scopes: Vec<&str> = k.scopes.iter().map(|s| s.name()).collect();
                writeln!(
                    out,
                    "{:<24} {:<8} {:<20} {:<24} {}",
                    k.prefix,
                    k.status,
                    scopes.join(","),
                    k.name,
                    k.last_used_at
                        .map(|t| t.to_string())
                        .unwrap_or_else(|| "never used".into())
                )?;
            }
        }
        KeyCommand::Revoke { email, id } => {
            let email = platform::accounts::normalize_email(&email);
            let view = services::keys::revoke(store, &email, &id, now).await?;
            writeln!(out, "key {} revoked", view.prefix)?;
        }
    }
    Ok(())
}
