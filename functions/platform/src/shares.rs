//! Fair shares of a bounded resource: each tenant may hold
//! [`Limits::per_tenant`] places and everyone together [`Limits::overall`].
//! A place is a [`Share`], given back when dropped. The compute pool
//! (`crate::pool`) and long-polled status reads are held this way, so one
//! tenant's flood is refused (as the tenant's: 429) before it takes what
//! another tenant's request needs, and the whole stays bounded (503).

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

/// How many places there are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// For one tenant: its share.
    pub per_tenant: usize,
    /// For all tenants together.
    pub overall: usize,
}

/// Why a place was not given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error(
        "this account has {limit} {what} running or waiting, its share; retry when one has finished"
    )]
    Tenant { what: &'static str, limit: usize },
    #[error("the server has {limit} {what} running or waiting, the most it takes; retry shortly")]
    Full { what: &'static str, limit: usize },
}

#[derive(Debug, Default)]
struct Counts {
    tenants: HashMap<String, usize>,
    total: usize,
}

/// The places of one resource; cheap to clone (clones share the counts).
#[derive(Debug, Clone)]
pub struct Shares {
    what: &'static str,
    limits: Limits,
    counts: Arc<Mutex<Counts>>,
}

/// A place held; given back when dropped.
#[derive(Debug)]
pub struct Share {
    tenant: String,
    counts: Arc<Mutex<Counts>>,
}

impl Drop for Share {
    fn drop(&mut self) {
        let mut c = self.counts.lock();
        c.total = c.total.saturating_sub(1);
        if let Some(n) = c.tenants.get_mut(&self.tenant) {
            *n -= 1;
            if *n == 0 {
                c.tenants.remove(&self.tenant);
            }
        }
    }
}

impl Shares {
    /// `what` names the places in a refusal ("computations", "long-polls").
    pub fn new(what: &'static str, limits: Limits) -> Shares {
        Shares {
            what,
            limits,
            counts: Arc::default(),
        }
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Places held: by `tenant`, and by everyone.
    pub fn in_use(&self, tenant: &str) -> (usize, usize) {
        let c = self.counts.lock();
        (c.tenants.get(tenant).copied().unwrap_or(0), c.total)
    }

    /// A place for `tenant`, if its share and the whole have one.
    pub fn admit(&self, tenant: &str) -> Result<Share, Refused> {
        let mut c = self.counts.lock();
        let mine = c.tenants.get(tenant).copied().unwrap_or(0);
        if mine >= self.limits.per_tenant {
            return Err(Refused::Tenant {
                what: self.what,
                limit: self.limits.per_tenant,
            });
        }
        if c.total >= self.limits.overall {
            return Err(Refused::Full {
                what: self.what,
                limit: self.limits.overall,
            });
        }
        c.total += 1;
        *c.tenants.entry(tenant.to_string()).or_default() += 1;
        Ok(Share {
            tenant: tenant.to_string(),
            counts: self.counts.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tenant_has_its_share_and_the_whole_is_bounded() {
        let s = Shares::new(
            "long-polls",
            Limits {
                per_tenant: 2,
                overall: 3,
            },
        );
        let a = [s.admit("a").unwrap(), s.admit("a").unwrap()];
        let e = s.admit("a").unwrap_err();
        assert_eq!(
            e.to_string(),
            "this account has 2 long-polls running or waiting, its share; retry when one has finished"
        );
        let b = s.admit("b").unwrap();
        assert!(matches!(s.admit("c"), Err(Refused::Full { limit: 3, .. })));
        assert_eq!(s.in_use("a"), (2, 3));
        drop(a);
        assert_eq!(s.in_use("a"), (0, 1));
        assert!(s.admit("c").is_ok());
        drop(b);
    }
}
