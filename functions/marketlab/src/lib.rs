//! The command line: the embedded server (every service on one port, a
//! SQLite file, an in-process queue and the sample data set) and the
//! operator's commands. It links no AWS SDK: the AWS tools are the
//! `aws-tools` package, and the HTTP Lambda functions do not link this one.

pub mod cli;
pub mod freshness;
pub mod imports;
pub mod keys;
pub mod metrics;
pub mod operator;
pub mod runtime;
pub mod server;
pub mod updates;
