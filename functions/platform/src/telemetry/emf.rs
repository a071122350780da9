//! The metrics of a Lambda function as CloudWatch Embedded Metric Format:
//! one JSON document per dimension set on stdout after each invocation,
//! which CloudWatch Logs turns into metrics with no API call and no agent.
//! Counters are the invocation's counts (reset at each flush), so the Sum
//! statistic adds up across instances. Dimensions are the `service`
//! (backtest, analytics, data, worker, webhooks, scanner) and the labels of
//! `super` (bounded sets): never an account.

use metrics_cloudwatch_embedded::{Builder, Collector};
use std::sync::atomic::{AtomicBool, Ordering};

/// The namespace when `MARKETLAB_METRICS_NAMESPACE` is unset.
pub const NAMESPACE: &str = "MarketLab";

pub struct Emf {
    collector: &'static Collector,
    warm: AtomicBool,
}

impl Emf {
    /// Installs the EMF recorder for `service` when running on Lambda (the
    /// Runtime API is present); elsewhere nothing is installed and `None`
    /// comes back. `MARKETLAB_METRICS=off` leaves it out on Lambda too.
    pub fn install(service: &'static str) -> Option<&'static Emf> {
        std::env::var_os("AWS_LAMBDA_RUNTIME_API")?;
        if std::env::var("MARKETLAB_METRICS").is_ok_and(|v| v == "off") {
            return None;
        }
        let namespace =
            std::env::var("MARKETLAB_METRICS_NAMESPACE").unwrap_or_else(|_| NAMESPACE.into());
        let collector = match Builder::new()
            .cloudwatch_namespace(namespace)
            .with_dimension("service", service)
            .init()
        {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "metrics not installed");
                return None;
            }
        };
        super::describe();
        Some(Box::leak(Box::new(Emf {
            collector,
            warm: AtomicBool::new(false),
        })))
    }

    /// Counts the instance's first invocation as a cold start.
    pub fn invoked(&self) {
        if !self.warm.swap(true, Ordering::Relaxed) {
            super::cold_start();
        }
    }

    /// Writes what the invocation recorded, as EMF lines on stdout.
    pub fn flush(&self) {
        let out = std::io::stdout().lock();
        if let Err(e) = self.collector.flush(std::io::LineWriter::new(out)) {
            tracing::warn!(error = %e, "metrics not written");
        }
    }
}
