//! JSON log lines for every binary, the HTTP functions and the worker alike.

use tracing_subscriber::EnvFilter;

/// Installs the JSON subscriber; `RUST_LOG` overrides the default `info` level.
pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .with_current_span(true)
        .try_init();
}
