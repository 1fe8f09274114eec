//! Timestamps are stored as microseconds since the Unix epoch (UTC) and shown as RFC 3339.
//!
//! Each store has a [`Clock`]: the system's, moved forward only when a test asks
//! ([`Clock::advance`]), so that a test waits for an expiry or a time-to-live by moving
//! its server's clock, not by sleeping. A store's writes run with its clock in scope
//! (`write_tx!`), so [`now_micros`] inside a write is the store's time; the web layer and
//! the jobs ask the store's clock directly (`Store::clock`).

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The time of one store: the system's clock plus what tests moved it forward by.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    ahead_micros: Arc<AtomicI64>,
}

impl Clock {
    /// Now, in microseconds since the epoch.
    pub fn now_micros(&self) -> i64 {
        system_micros().saturating_add(self.ahead())
    }

    /// Now, for measuring a time-to-live (monotonic, moved forward with the clock).
    pub fn instant(&self) -> Instant {
        Instant::now() + Duration::from_micros(self.ahead().unsigned_abs())
    }

    /// Moves this clock (and only this one) forward: a test's way to let a time-to-live,
    /// a throttle or an expiry run out at once.
    pub fn advance(&self, by: Duration) {
        let by = i64::try_from(by.as_micros()).unwrap_or(i64::MAX);
        self.ahead_micros.fetch_add(by, Ordering::Relaxed);
    }

    fn ahead(&self) -> i64 {
        self.ahead_micros.load(Ordering::Relaxed)
    }

    /// Runs `work` with this clock as the one [`now_micros`] reads.
    pub(crate) async fn scope<F: std::future::Future>(&self, work: F) -> F::Output {
        CURRENT.scope(self.clone(), work).await
    }
}

tokio::task_local! {
    static CURRENT: Clock;
}

/// Now, in microseconds since the epoch: the clock of the store whose write is running,
/// the system's outside one.
pub fn now_micros() -> i64 {
    CURRENT
        .try_with(Clock::now_micros)
        .unwrap_or_else(|_| system_micros())
}

fn system_micros() -> i64 {
    micros_of(OffsetDateTime::now_utc())
}

fn micros_of(t: OffsetDateTime) -> i64 {
    i64::try_from(t.unix_timestamp_nanos() / 1000).unwrap_or(i64::MAX)
}

/// Parses an RFC 3339 timestamp (any offset) into microseconds since the epoch.
pub fn parse_rfc3339(s: &str) -> Result<i64, String> {
    OffsetDateTime::parse(s.trim(), &Rfc3339)
        .map(micros_of)
        .map_err(|e| format!("`{s}` is not an RFC 3339 timestamp ({e})"))
}

/// A day (`YYYY-MM-DD`, UTC) or an RFC 3339 timestamp, as the first (`end = false`) or
/// the last (`end = true`) microsecond it names.
pub fn parse_day_or_time(s: &str, end: bool) -> Result<i64, String> {
    let s = s.trim();
    let format = time::macros::format_description!("[year]-[month]-[day]");
    match time::Date::parse(s, &format) {
        Ok(d) => {
            let start = micros_of(d.midnight().assume_utc());
            Ok(if end {
                start + 86_400_000_000 - 1
            } else {
                start
            })
        }
        Err(_) => parse_rfc3339(s)
            .map_err(|_| format!("`{s}` is neither a day (YYYY-MM-DD) nor an RFC 3339 timestamp")),
    }
}

/// Formats microseconds since the epoch as RFC 3339 in UTC.
pub fn to_rfc3339(micros: i64) -> String {
    // A time outside the calendar's range is shown as `@...us` below.
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1000)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_else(|| format!("@{micros}us"))
}

/// Serialises a timestamp as RFC 3339 (for `#[serde(serialize_with)]`).
pub fn ser_time<S: serde::Serializer>(t: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&to_rfc3339(*t))
}

/// Serialises an optional timestamp as RFC 3339 or null.
pub fn ser_opt_time<S: serde::Serializer>(t: &Option<i64>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.serialize_str(&to_rfc3339(*t)),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_utc() {
        let m = parse_rfc3339("2026-03-01T10:15:30+02:00").unwrap();
        assert_eq!(to_rfc3339(m), "2026-03-01T08:15:30Z");
        let m = parse_rfc3339("2026-03-01T08:15:30.25Z").unwrap();
        assert_eq!(to_rfc3339(m), "2026-03-01T08:15:30.25Z");
    }

    #[test]
    fn refuses_what_is_not_rfc3339() {
        assert!(parse_rfc3339("2026-03-01 10:15").is_err());
        assert!(parse_rfc3339("yesterday").is_err());
    }
}

#[cfg(test)]
mod clock_tests {
    use super::*;

    #[tokio::test]
    async fn a_clock_moves_forward_only_where_it_is_in_scope() {
        let clock = Clock::default();
        let before = clock.instant();
        clock.advance(Duration::from_secs(3600));
        assert!(clock.instant() >= before + Duration::from_secs(3600));
        assert!(clock.now_micros() >= system_micros() + 3_599_000_000);
        // Outside a scope, the system's time; inside, the clock's.
        assert!(now_micros() < clock.now_micros() - 3_599_000_000);
        let inside = clock.scope(async { now_micros() }).await;
        assert!(inside >= system_micros() + 3_599_000_000);
        // Another clock is not moved.
        assert!(Clock::default().now_micros() <= system_micros());
    }
}

#[cfg(test)]
mod day_tests {
    use super::*;

    #[test]
    fn a_day_names_its_first_and_last_microsecond() {
        let a = parse_day_or_time("2026-11-30", false).unwrap();
        let b = parse_day_or_time("2026-11-30", true).unwrap();
        assert_eq!(to_rfc3339(a), "2026-11-30T00:00:00Z");
        assert_eq!(b - a, 86_400_000_000 - 1);
        assert_eq!(
            parse_day_or_time("2026-11-30T12:00:00Z", true).unwrap(),
            a + 12 * 3_600_000_000
        );
        assert!(
            parse_day_or_time("30/11/2026", false)
                .unwrap_err()
                .contains("YYYY-MM-DD")
        );
    }
}
