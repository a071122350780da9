//! The operator's commands on the AWS deployment's tables (named by the
//! template's environment): `operator plans [set CODE ...]` and
//! `operator usage [--account E] [--month M] [--csv]`, as `marketlab plans`
//! and `marketlab usage` on the embedded server.

use anyhow::Result;
use aws_adapters::{Clients, DynamoAccountStore, DynamoQuotaStore, DynamoUsageStore, Names};
use clap::{Parser, Subcommand};
use marketlab::operator::{PlansArgs, Stores, UsageArgs};

#[derive(Parser)]
#[command(
    name = "operator",
    about = "Plan limits and usage on the AWS deployment"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the plans and their limits, or set one's limits.
    Plans(PlansArgs),
    /// Usage per account for a month; `--csv` for invoicing.
    Usage(UsageArgs),
}

#[tokio::main]
async fn main() -> Result<()> {
    let cli = Cli::parse();
    let (clients, names) = (Clients::from_env().await, Names::from_env());
    let quotas = DynamoQuotaStore::new(clients.dynamodb.clone(), &names.limits_table);
    let mut out = std::io::stdout().lock();
    match cli.command {
        Command::Plans(args) => marketlab::operator::plans(&quotas, args.command, &mut out).await,
        Command::Usage(args) => {
            let stores = Stores {
                usage: &DynamoUsageStore::new(clients.dynamodb.clone(), names.usage_table.clone()),
                quotas: &quotas,
                accounts: &DynamoAccountStore::new(clients.dynamodb.clone(), &names.accounts_table),
            };
            marketlab::operator::usage(&stores, &args, &mut out).await
        }
    }
}
