//! Portfolios checked at their submit, handed to the job that runs them in
//! the same process (the embedded server), so the job does not check them
//! against the data again (15 ms for 500 symbols). Kept for a few seconds
//! and a few tasks: a job that runs later, or in another process (AWS),
//! prepares its portfolio itself.

use super::Prepared;
use parking_lot::Mutex;
use serde_json::Value;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

/// Portfolios held at once, and for how long.
const HELD: usize = 8;
const FOR: Duration = Duration::from_secs(5);

type Entry = (String, Instant, Arc<Prepared>);
static HANDED: LazyLock<Mutex<Vec<Entry>>> = LazyLock::new(Mutex::default);

/// The key of `owner`'s portfolio whose task params are `params`, on the
/// market data whose memo is `memo` (two servers in one process, as in
/// tests, must not take each other's).
fn key(memo: &platform::memo::Memo, owner: &str, params: &Value) -> String {
    format!("{:p}\n{owner}\n{params}", memo)
}

/// Hands `prepared`, checked on the data of `memo` for `owner`'s task of
/// `params`, to its job.
pub fn hand(memo: &platform::memo::Memo, owner: &str, params: &Value, prepared: Prepared) {
    let mut held = HANDED.lock();
    held.retain(|(_, at, _)| at.elapsed() < FOR);
    if held.len() >= HELD {
        held.remove(0);
    }
    held.push((key(memo, owner, params), Instant::now(), Arc::new(prepared)));
}

/// The portfolio handed for `owner`'s task of `params`, if it is still
/// held: the earliest handed, taken once (the same request submitted again
/// after an import is checked again and runs on the new data).
pub fn taken(memo: &platform::memo::Memo, owner: &str, params: &Value) -> Option<Arc<Prepared>> {
    let key = key(memo, owner, params);
    let mut held = HANDED.lock();
    held.retain(|(_, at, _)| at.elapsed() < FOR);
    let at = held.iter().position(|(k, _, _)| *k == key)?;
    Some(held.remove(at).2)
}
