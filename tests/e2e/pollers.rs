//! Long-running pollers started by the tests: each with a deployment's
//! environment, its JSON log in a file, killed when dropped.

use crate::runtime_api::Killed;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Poller `n` with the deployment's environment and `env` on top, its JSON
/// log in `dir`.
pub fn start(
    poller: &Path,
    names: &aws_adapters::Names,
    env: &[(&str, &str)],
    dir: &Path,
    n: usize,
) -> (Killed, PathBuf) {
    let log = dir.join(format!("poller-{n}.log"));
    let child = Command::new(poller)
        .envs(crate::emulator::function_env(names))
        .env("RUST_LOG", "info")
        .envs(env.iter().copied())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    (Killed(child), log)
}

/// The JSON log lines of a process, one event each.
pub fn events(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The events of `log` with `message`.
pub fn logged(log: &Path, message: &str) -> Vec<Value> {
    events(log)
        .into_iter()
        .filter(|e| e["fields"]["message"] == message)
        .collect()
}
