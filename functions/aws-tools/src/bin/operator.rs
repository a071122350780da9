//! The operator's commands on the AWS deployment's tables (named by the
//! template's environment): `operator accounts add|list|set-plan|add-indicator`,
//! `operator keys create|list|revoke`,
//! `operator plans [set CODE ...]` and `operator usage [--account E]
//! [--month M] [--csv]` and `operator dlq list|redrive [--queue jobs|webhooks|ingest]`
//! (the last AWS only), as `marketlab accounts`, `marketlab plans` and
//! `marketlab usage` on the embedded server (the same code over the ports).

use anyhow::Result;
use aws_adapters::{Clients, DynamoAccountStore, DynamoQuotaStore, DynamoUsageStore, Names};
use aws_tools::dlq::DlqCommand;
use clap::{Parser, Subcommand};
use marketlab::operator::{AccountCommand, PlansArgs, Stores, UsageArgs};

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

#[tokio::main]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    let (clients, names) = (Clients::from_env().await, Names::from_env());
    let quotas = DynamoQuotaStore::new(clients.dynamodb.clone(), &names.limits_table);
    let mut out = std::io::stdout().lock();
    match cli.command {
        Command::Accounts(cmd) => {
            let store = DynamoAccountStore::new(clients.dynamodb.clone(), &names.accounts_table);
            marketlab::operator::accounts(&store, cmd, &mut out).await
        }
        Command::Keys(cmd) => {
            let pepper = aws_adapters::wiring::key_pepper().ok_or_else(|| {
                anyhow::anyhow!("set MARKETLAB_API_KEY_PEPPER to the deployment's API key pepper")
            })?;
            let store =
                aws_adapters::DynamoKeyStore::new(clients.dynamodb.clone(), &names.keys_table);
            let accounts = DynamoAccountStore::new(clients.dynamodb.clone(), &names.accounts_table);
            marketlab::keys::keys(&store, &accounts, &pepper, cmd, &mut out).await
        }
        Command::Plans(args) => marketlab::operator::plans(&quotas, args.command, &mut out).await,
        Command::Usage(args) => {
            let stores = Stores {
                usage: &DynamoUsageStore::new(clients.dynamodb.clone(), names.usage_table.clone()),
                quotas: &quotas,
                accounts: &DynamoAccountStore::new(clients.dynamodb.clone(), &names.accounts_table),
            };
            marketlab::operator::usage(&stores, &args, &mut out).await
        }
        Command::Dlq(cmd) => aws_tools::dlq::run(&clients, &names, cmd, &mut out).await,
    }
}
