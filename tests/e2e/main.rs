//! End-to-end tests of the embedded deployment over real HTTP on 127.0.0.1.

mod analytics;
mod backtest;
mod batch;
mod company;
mod compression;
mod contract_aws;
mod contract_embedded;
mod cost_meter;
mod cpm;
mod data;
mod dates;
mod hardening;
mod http_auth;
mod http_tasks;
mod imports;
mod jobs;
mod lambda_watch;
mod options;
mod reports;
mod restart;
mod scanner;
mod scanner_backtest;
mod screens;
mod shapes;
mod usage;
