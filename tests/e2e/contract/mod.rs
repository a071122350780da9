//! Contract suites: each takes a port as a trait object and checks the
//! behaviour every adapter promises. Owners, keys and ids are unique per run,
//! so the suites also run against shared cloud resources.

pub mod accounts;
pub mod blobs;
pub mod failures;
pub mod keys;
pub mod market;
pub mod metering;
pub mod queue;
pub mod quota;
pub mod scanner;
pub mod task_attempts;
pub mod task_damage;
pub mod task_ends;
pub mod tasks;
pub mod usage;
pub mod webhooks;

/// A name no other run uses.
pub fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4().simple())
}
