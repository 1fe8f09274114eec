//! What the server measures about itself, in Prometheus' text format (`GET /metrics`,
//! admins only): requests and their latency per route, the SQL statements each request
//! sent, the SQLite writer's batches and commit times, PostgreSQL's retried writes, and
//! how long requests waited for a database connection.
//!
//! The store owns its [`StoreMetrics`] (one per opened database) and the web layer its
//! [`WebMetrics`] (one per application state); [`Metrics`] puts both in one registry.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::time::Duration;

/// Log lines that could not be written (standard error on a full disk, a pipe whose
/// reader left): one per process, as the log is.
pub static LOG_LINES_DROPPED: std::sync::LazyLock<Counter> =
    std::sync::LazyLock::new(Counter::default);

/// Buckets for durations in seconds: 50 µs to about 13 s.
fn seconds() -> Histogram {
    Histogram::new(exponential_buckets(0.000_05, 2.0, 19))
}

/// Buckets for counts: 1 to 512.
fn counts() -> Histogram {
    Histogram::new(exponential_buckets(1.0, 2.0, 10))
}

type Seconds = Family<PoolLabels, Histogram, fn() -> Histogram>;

/// Which connection pool a wait was for.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PoolLabels {
    pub pool: &'static str,
}

/// A route as the route table names it (`/c/{campaign}/review/{stage}/{item}`), so that
/// the labels stay few whatever the URLs hold.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RouteLabels {
    pub method: &'static str,
    pub route: &'static str,
}

/// A route with the class of its answer (2xx, 3xx, 4xx, 5xx).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct AnswerLabels {
    pub method: &'static str,
    pub route: &'static str,
    pub status: &'static str,
}

/// The database's side.
#[derive(Debug)]
pub struct StoreMetrics {
    /// Jobs committed together by the SQLite writer.
    pub batch_jobs: Histogram,
    /// Time of each batch's COMMIT (SQLite) or each write's COMMIT (PostgreSQL).
    pub commit_seconds: Histogram,
    /// Batches or writes whose commit failed (nothing of them was stored).
    pub failed_commits: Counter,
    /// Writes tried again after a serialization failure or a deadlock (PostgreSQL).
    pub write_retries: Counter,
    /// Time spent waiting for a connection, per pool (`read`, `write`).
    pub pool_wait_seconds: Seconds,
    /// Writes that raised the revocation stamp and waited out a listening server's lease,
    /// not its answer (a server frozen or cut off; PostgreSQL, `store::stamp`).
    pub stamp_lease_waits: Counter,
    /// Times the SQLite writer's thread stopped on a panic and was started again.
    pub writer_restarts: Counter,
}

impl Default for StoreMetrics {
    fn default() -> Self {
        StoreMetrics {
            batch_jobs: counts(),
            commit_seconds: seconds(),
            failed_commits: Counter::default(),
            write_retries: Counter::default(),
            pool_wait_seconds: Family::new_with_constructor(seconds),
            stamp_lease_waits: Counter::default(),
            writer_restarts: Counter::default(),
        }
    }
}

impl StoreMetrics {
    pub fn waited(&self, pool: &'static str, waited: Duration) {
        self.pool_wait_seconds
            .get_or_create(&PoolLabels { pool })
            .observe(waited.as_secs_f64());
    }

    fn register(&self, r: &mut Registry) {
        r.register(
            "tandem_writer_batch_jobs",
            "Writes committed together in one SQLite transaction",
            self.batch_jobs.clone(),
        );
        r.register(
            "tandem_commit_seconds",
            "Time of a COMMIT",
            self.commit_seconds.clone(),
        );
        r.register(
            "tandem_failed_commits",
            "Commits that failed (nothing of them was stored)",
            self.failed_commits.clone(),
        );
        r.register(
            "tandem_write_retries",
            "Writes tried again after a serialization failure or deadlock",
            self.write_retries.clone(),
        );
        r.register(
            "tandem_pool_wait_seconds",
            "Time waited for a database connection",
            self.pool_wait_seconds.clone(),
        );
        r.register(
            "tandem_stamp_lease_waits",
            "Revocations that waited out a listening server's lease, not its answer",
            self.stamp_lease_waits.clone(),
        );
        r.register(
            "tandem_writer_restarts",
            "Times the SQLite writer stopped on a panic and was started again",
            self.writer_restarts.clone(),
        );
    }
}

/// The HTTP side.
#[derive(Debug)]
pub struct WebMetrics {
    pub requests: Family<AnswerLabels, Counter>,
    pub request_seconds: Family<RouteLabels, Histogram, fn() -> Histogram>,
    pub request_statements: Family<RouteLabels, Histogram, fn() -> Histogram>,
}

impl Default for WebMetrics {
    fn default() -> Self {
        WebMetrics {
            requests: Family::default(),
            request_seconds: Family::new_with_constructor(seconds),
            request_statements: Family::new_with_constructor(statement_counts),
        }
    }
}

/// Buckets for statements per request: 0 to 64.
fn statement_counts() -> Histogram {
    Histogram::new([0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 32.0, 64.0])
}

impl WebMetrics {
    /// Records one answered request.
    pub fn answered(
        &self,
        method: &'static str,
        route: &'static str,
        status: u16,
        took: Duration,
        statements: u64,
    ) {
        let status = match status {
            100..=199 => "1xx",
            200..=299 => "2xx",
            300..=399 => "3xx",
            400..=499 => "4xx",
            _ => "5xx",
        };
        self.requests
            .get_or_create(&AnswerLabels {
                method,
                route,
                status,
            })
            .inc();
        let key = RouteLabels { method, route };
        self.request_seconds
            .get_or_create(&key)
            .observe(took.as_secs_f64());
        self.request_statements
            .get_or_create(&key)
            .observe(statements as f64);
    }
}

/// Every metric of one server, in one registry.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    pub web: WebMetrics,
}

impl Metrics {
    pub fn new(store: &StoreMetrics) -> Metrics {
        let mut registry = Registry::default();
        let web = WebMetrics::default();
        registry.register(
            "tandem_requests",
            "Requests answered, per route and class of status",
            web.requests.clone(),
        );
        registry.register(
            "tandem_request_seconds",
            "Time to answer a request (until its body starts), per route",
            web.request_seconds.clone(),
        );
        registry.register(
            "tandem_request_statements",
            "SQL statements a request sent (its writes included), per route",
            web.request_statements.clone(),
        );
        store.register(&mut registry);
        registry.register(
            "tandem_log_lines_dropped",
            "Log lines that could not be written (a full disk, a closed pipe)",
            LOG_LINES_DROPPED.clone(),
        );
        Metrics { registry, web }
    }

    /// The text exposition of every metric.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_shows_in_the_text_with_its_route_and_statements() {
        let store = StoreMetrics::default();
        let m = Metrics::new(&store);
        m.web.answered(
            "POST",
            "/c/{campaign}/review/{stage}/{item}",
            303,
            Duration::from_millis(2),
            7,
        );
        store.batch_jobs.observe(3.0);
        store.waited("read", Duration::from_micros(10));
        let text = m.encode();
        assert!(
            text.contains(
                "tandem_requests_total{method=\"POST\",route=\"/c/{campaign}/review/{stage}/{item}\",status=\"3xx\"} 1"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "tandem_request_statements_sum{method=\"POST\",route=\"/c/{campaign}/review/{stage}/{item}\"} 7.0"
            ),
            "{text}"
        );
        assert!(text.contains("tandem_writer_batch_jobs_sum 3.0"), "{text}");
        assert!(
            text.contains("tandem_pool_wait_seconds_count{pool=\"read\"} 1"),
            "{text}"
        );
        assert!(text.ends_with("# EOF\n"));
    }
}
