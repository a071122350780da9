//! The wall clock as a port, for what is counted in calendar windows (the
//! rate limits' minutes, usage days): production reads the system clock, a
//! test sets the time and moves it on instead of waiting for a minute to
//! turn.

use chrono::{DateTime, TimeDelta, Utc};
use parking_lot::Mutex;

pub trait Clock: Send + Sync + std::fmt::Debug {
    fn now(&self) -> DateTime<Utc>;
}

/// The system's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that stands still until told to move.
#[derive(Debug)]
pub struct ManualClock(Mutex<DateTime<Utc>>);

impl ManualClock {
    pub fn new(at: DateTime<Utc>) -> Self {
        ManualClock(Mutex::new(at))
    }

    /// Stopped `seconds` into the current minute of the system clock (so
    /// that stores expiring entries by the system clock keep them).
    pub fn into_this_minute(seconds: i64) -> Self {
        let minute = Utc::now().timestamp().div_euclid(60) * 60;
        Self::new(DateTime::from_timestamp(minute + seconds, 0).expect("in range"))
    }

    pub fn set(&self, at: DateTime<Utc>) {
        *self.0.lock() = at;
    }

    pub fn advance(&self, by: TimeDelta) {
        *self.0.lock() += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.0.lock()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_told() {
        let c = ManualClock::into_this_minute(5);
        let t = c.now();
        assert_eq!(t.timestamp().rem_euclid(60), 5);
        assert_eq!(c.now(), t);
        c.advance(TimeDelta::seconds(60));
        assert_eq!(c.now() - t, TimeDelta::seconds(60));
        c.set(t);
        assert_eq!(c.now(), t);
        let system = SystemClock.now();
        assert!((Utc::now() - system).num_seconds().abs() < 5);
    }
}
