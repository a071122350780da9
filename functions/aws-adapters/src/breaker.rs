//! After a call to a service times out, its next calls fail at once for a
//! window (one operation timeout per service, [`SERVICES`]):
//! a request that waits on several calls to a hung
//! DynamoDB, S3 or SQS answers 503 after one timeout instead of one per
//! call, and the instance's other requests do not each wait it out. The
//! first call after the window goes through and finds out whether the
//! service answers again.

use aws_sdk_sqs::config::interceptors::{
    BeforeSerializationInterceptorContextRef, FinalizerInterceptorContextRef,
};
use aws_sdk_sqs::config::{ConfigBag, Intercept, RuntimeComponents};
use parking_lot::Mutex;
use std::sync::Arc;
use std::time::{Duration, Instant};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The services a request can wait on one after another (DynamoDB, S3,
/// SQS). A breaker stays open one operation timeout per service: a request
/// whose calls to the three time out one after another (the last at three
/// timeouts) never finds the first one's breaker closed again and waits
/// out a timeout of that service twice.
pub const SERVICES: u32 = 3;

/// One per service client (its clones share it).
#[derive(Debug, Clone)]
pub struct Breaker {
    service: &'static str,
    open_for: Duration,
    timed_out: Arc<Mutex<Option<Instant>>>,
}

impl Breaker {
    /// Calls to `service` fail at once for `open_for` after one timed out.
    pub fn new(service: &'static str, open_for: Duration) -> Self {
        Breaker {
            service,
            open_for,
            timed_out: Arc::default(),
        }
    }

    /// How long ago a call timed out, while that is within the window.
    fn open(&self) -> Option<Duration> {
        self.timed_out
            .lock()
            .map(|t| t.elapsed())
            .filter(|ago| *ago < self.open_for)
    }
}

/// Why a call was not made.
#[derive(Debug, thiserror::Error)]
#[error(
    "{service} did not answer a call {ago:.1?} ago; not called again for {open_for:?} after one"
)]
pub struct NotCalled {
    service: &'static str,
    ago: Duration,
    open_for: Duration,
}

impl NotCalled {
    /// Whether `e` failed because a breaker did not make the call (the
    /// SDK wraps an interceptor's error as a construction failure).
    pub fn caused(e: &(dyn std::error::Error + 'static)) -> bool {
        std::iter::successors(Some(e), |e| e.source()).any(|e| e.is::<NotCalled>())
    }
}

impl Intercept for Breaker {
    fn name(&self) -> &'static str {
        "Breaker"
    }

    fn read_before_execution(
        &self,
        _context: &BeforeSerializationInterceptorContextRef<'_>,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        match self.open() {
            Some(ago) => Err(Box::new(NotCalled {
                service: self.service,
                ago,
                open_for: self.open_for,
            })),
            None => Ok(()),
        }
    }

    fn read_after_execution(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _runtime_components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Some(Err(e)) = context.output_or_error()
            && (e.is_timeout_error() || e.as_connector_error().is_some_and(|c| c.is_timeout()))
        {
            if self.open().is_none() {
                tracing::warn!(
                    service = self.service,
                    "a call timed out; calls fail at once for a while"
                );
            }
            *self.timed_out.lock() = Some(Instant::now());
        }
        Ok(())
    }
}
