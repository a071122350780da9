//! The operator's commands on the AWS deployment's tables (named by the
//! template's environment): `operator accounts add|list|set-plan|add-indicator`,
//! `operator keys create|list|revoke`,
//! `operator plans [set CODE ...]` and `operator usage [--account E]
//! [--month M] [--csv]` and `operator dlq list|redrive [--queue jobs|webhooks|ingest]`
//! (the last AWS only), as `marketlab accounts`, `marketlab plans` and
//! `marketlab usage` on the embedded server (the same code over the ports).
//! Every error is one line on stderr that names the setting to fix.

use anyhow::Result;
use aws_adapters::{Clients, DynamoAccountStore, DynamoQuotaStore, DynamoUsageStore, Names};
use aws_tools::dlq::DlqCommand;
use aws_tools::settings::{SettingError, required};
use clap::{Parser, Subcommand};
use marketlab::operator::{AccountCommand, PlansArgs, Stores, UsageArgs};
use platform::PortError;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "operator",
    about = "Accounts, plan limits and usage on the AWS deployment"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Add, list and change accounts and their plans.
    #[command(subcommand)]
    Accounts(AccountCommand),
    /// Make, list and revoke an account's API keys (needs
    /// MARKETLAB_API_KEY_PEPPER, the functions' secret).
    #[command(subcommand)]
    Keys(marketlab::keys::KeyCommand),
    /// List the plans and their limits, or set one's limits.
    Plans(PlansArgs),
    /// Usage per account for a month; `--csv` for invoicing.
    Usage(UsageArgs),
    /// What a dead-letter queue holds, or send it all back (docs/operations.md).
    #[command(subcommand)]
    Dlq(DlqCommand),
}

/// Runs the command; an error is printed as one line (the error, then its
/// causes) and the exit status is 1, with no backtrace whatever
/// `RUST_BACKTRACE` says: the operator reads it to fix a setting, and a
/// missing one is named first.
#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("operator: {}", aws_tools::settings::one_line(&e));
            ExitCode::FAILURE
        }
    }
}

/// Names the tables a command used when a store call failed under it, so
/// a table that does not exist points at the setting that named it; a
/// refusal of the command's own arguments is left as it is.
fn on_tables(e: anyhow::Error, tables: &[(&str, &str)]) -> anyhow::Error {
    let store_failed = e.chain().any(|c| {
        matches!(
            c.downcast_ref::<PortError>(),
            Some(PortError::Unavailable { .. } | PortError::Internal { .. })
        )
    });
    if !store_failed {
        return e;
    }
    let named: Vec<String> = tables
        .iter()
        .map(|(setting, table)| format!("{table} ({setting})"))
        .collect();
    e.context(format!("on the tables {}", named.join(", ")))
}

async fn run(cli: Cli) -> Result<()> {
    aws_tools::settings::aws().await?;
    let (clients, names) = (Clients::from_env().await, Names::from_env());
    let quotas = DynamoQuotaStore::new(clients.dynamodb.clone(), &names.limits_table);
    let accounts_table = ("MARKETLAB_ACCOUNTS_TABLE", names.accounts_table.as_str());
    let limits_table = ("MARKETLAB_LIMITS_TABLE", names.limits_table.as_str());
    let mut out = std::io::stdout().lock();
    match cli.command {
        Command::Accounts(cmd) => {
            let store = DynamoAccountStore::new(clients.dynamodb.clone(), &names.accounts_table);
            marketlab::operator::accounts(&store, cmd, &mut out)
                .await
                .map_err(|e| on_tables(e, &[accounts_table]))
        }
        Command::Keys(cmd) => {
            let text = std::env::var("MARKETLAB_API_KEY_PEPPER").unwrap_or_default();
            required(
                "MARKETLAB_API_KEY_PEPPER",
                &text,
                "keys are hashed with the deployment's API key pepper (the functions' secret)",
            )?;
            let pepper =
                platform::keys::Pepper::from_text(&text).map_err(|e| SettingError::Unusable {
                    name: "MARKETLAB_API_KEY_PEPPER",
                    reason: e,
                })?;
            let store =
                aws_adapters::DynamoKeyStore::new(clients.dynamodb.clone(), &names.keys_table);
            let accounts = DynamoAccountStore::new(clients.dynamodb.clone(), &names.accounts_table);
            marketlab::keys::keys(&store, &accounts, &pepper, cmd, &mut out)
                .await
                .map_err(|e| {
                    on_tables(
                        e,
                        &[("MARKETLAB_KEYS_TABLE", &names.keys_table), accounts_table],
                    )
                })
        }
        Command::Plans(args) => marketlab::operator::plans(&quotas, args.command, &mut out)
            .await
            .map_err(|e| on_tables(e, &[limits_table])),
        Command::Usage(args) => {
            let stores = Stores {
                usage: &DynamoUsageStore::new(clients.dynamodb.clone(), names.usage_table.clone()),
                quotas: &quotas,
                accounts: &DynamoAccountStore::new(clients.dynamodb.clone(), &names.accounts_table),
            };
            marketlab::operator::usage(&stores, &args, &mut out)
                .await
                .map_err(|e| {
                    on_tables(
                        e,
                        &[
                            ("MARKETLAB_USAGE_TABLE", &names.usage_table),
                            limits_table,
                            accounts_table,
                        ],
                    )
                })
        }
        Command::Dlq(cmd) => aws_tools::dlq::run(&clients, &names, cmd, &mut out).await,
    }
}
