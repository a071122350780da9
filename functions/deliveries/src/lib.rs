//! Sending webhook deliveries: one attempt (sign, send over HTTPS to the
//! checked address, record, schedule the next) and the embedded server's
//! delivery loop. A crate of its own so the HTTPS client (rustls) stays
//! off the path of everything that only records events.

mod deliver;
#[cfg(feature = "sqlite")]
mod embedded;
mod send;

pub use deliver::{Deliverer, describe};
#[cfg(feature = "sqlite")]
pub use embedded::{PER_ACCOUNT, PER_ENDPOINT, deliver_forever};
pub use send::{Timeouts, post};
