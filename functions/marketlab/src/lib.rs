//! The command line: the embedded server (every service on one port, a
//! SQLite file, an in-process queue and the sample data set), the
//! operator's commands, and the AWS provisioning and operator tools. The
//! HTTP Lambda functions do not link this package.

pub mod cli;
pub mod metrics;
pub mod operator;
pub mod server;
