//! Where Tandem keeps its data: a data folder holding `tandem.db` and `media/`, and
//! the database URL (the SQLite file in the data folder unless `DATABASE_URL` says
//! otherwise); and how the server treats its clients (time-outs, the connection cap,
//! the reverse proxies it trusts).
//!
//! What it holds, part by part:
//!
//! the data folder (refused when it cannot be written) and database URL, the process's
//! `AWS_*` variables (read once, never stored or printed), the server's limits
//! (`ServerSettings`: time-outs, the connection cap, the shutdown grace), the input limits
//! (`Limits`, from `TANDEM_MAX_*`), trusted proxies

use crate::error::{Error, Result};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Clone)]
pub struct Config {
    pub data_dir: PathBuf,
    pub media_dir: PathBuf,
    pub database_url: String,
    /// Mark cookies `Secure` (serve behind HTTPS).
    pub secure_cookies: bool,
    pub server: ServerSettings,
    /// Reverse proxies whose `X-Forwarded-For` names the client (none by default: the
    /// client is the peer of the connection).
    pub trusted_proxies: Vec<IpNet>,
    /// Limits on what an import or upload may read.
    pub limits: Limits,
    /// The folders (canonical) under which the admin's "import from a folder" may read
    /// a manifest (`serve --import-root`); none: that import is off (uploads work).
    pub import_roots: Vec<PathBuf>,
    /// This process's `AWS_*` variables (endpoint, region, credentials of an S3-compatible
    /// media store), read once at start; never printed, never stored.
    pub aws: Vec<(String, String)>,
    /// The memory kept for recently read blocks of a bucket's objects
    /// (`TANDEM_MEDIA_CACHE_MB`, 64 by default, 0: none).
    pub media_cache_bytes: u64,
    /// How long an open stored file, or a bucket object's size and date, is reused before
    /// it is asked again ([`OPEN_FILE_REUSE`]; stored files are named by their hash and
    /// never change, so only a removed file is seen late). Tests set it to zero.
    pub open_file_reuse: Duration,
    /// A pause for the known items, once due, is written at a random moment between
    /// half this and this after the check that found it (`app::known`), so that its
    /// moment does not point at the verdict that triggered it.
    pub known_pause_delay: Duration,
}

/// How long an open stored file is reused by default.
pub const OPEN_FILE_REUSE: Duration = Duration::from_secs(10);

/// The longest delay of a pause for the known items by default (`--known-pause-delay`).
pub const KNOWN_PAUSE_DELAY: Duration = Duration::from_secs(60);

impl std::fmt::Debug for Config {
    // The database URL may hold a password: never print it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("data_dir", &self.data_dir)
            .field("database_url", &redact_url(&self.database_url))
            .field("secure_cookies", &self.secure_cookies)
            .field("server", &self.server)
            .field("trusted_proxies", &self.trusted_proxies)
            .field("import_roots", &self.import_roots)
            .finish_non_exhaustive()
    }
}

/// The URL with any password replaced by `***`.
pub fn redact_url(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@') {
            Some((userinfo, host)) => match userinfo.split_once(':') {
                Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
                None => url.to_string(),
            },
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// The URL without its password, and the password (percent-decoded), for a program
/// that must not see it on its command line: `user:pass@host` in the authority, or a
/// `password=` query parameter.
pub fn split_password(url: &str) -> (String, Option<String>) {
    let mut password = None;
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let base = match base.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@') {
            Some((userinfo, host)) => match userinfo.split_once(':') {
                Some((user, pass)) => {
                    password = Some(percent_decode(pass));
                    format!("{scheme}://{user}@{host}")
                }
                None => base.to_string(),
            },
            None => base.to_string(),
        },
        None => base.to_string(),
    };
    let query: Vec<&str> = query
        .map(|q| {
            q.split('&')
                .filter(|kv| match kv.strip_prefix("password=") {
                    Some(p) => {
                        password = Some(percent_decode(p));
                        false
                    }
                    None => true,
                })
                .collect()
        })
        .unwrap_or_default();
    let url = if query.is_empty() {
        base
    } else {
        format!("{base}?{}", query.join("&"))
    };
    (url, password)
}

/// `%XX` escapes decoded (a URL's password may hold any byte).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            // Not a `%XX` escape: the `%` is kept as typed.
            && let Some(v) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Config {
    /// Creates the data folder if needed and checks that it can be written.
    pub fn new(data_dir: &Path, database_url: Option<String>) -> Result<Config> {
        std::fs::create_dir_all(data_dir).map_err(|e| {
            Error::io(
                format!("cannot create the data folder {}", data_dir.display()),
                e,
            )
        })?;
        check_writable(data_dir)?;
        let database_url = match database_url.filter(|u| !u.trim().is_empty()) {
            Some(u) => u,
            None => sqlite_url(&data_dir.join("tandem.db")),
        };
        Ok(Config {
            data_dir: data_dir.to_path_buf(),
            media_dir: data_dir.join("media"),
            database_url,
            secure_cookies: false,
            server: ServerSettings::default(),
            trusted_proxies: Vec::new(),
            limits: Limits::from_env()?,
            import_roots: Vec::new(),
            aws: std::env::vars()
                .filter(|(k, _)| k.starts_with("AWS_"))
                .collect(),
            // Unset or not text: the default size (`media_cache_bytes` refuses a bad number).
            media_cache_bytes: media_cache_bytes(std::env::var("TANDEM_MEDIA_CACHE_MB").ok())?,
            open_file_reuse: OPEN_FILE_REUSE,
            known_pause_delay: KNOWN_PAUSE_DELAY,
        })
    }

    /// Sets the folders "import from a folder" may read under, each an existing folder
    /// (kept with its symbolic links resolved).
    pub fn set_import_roots(&mut self, dirs: &[PathBuf]) -> Result<()> {
        self.import_roots = dirs
            .iter()
            .map(|d| match d.canonicalize() {
                Ok(real) if real.is_dir() => Ok(real),
                Ok(_) => Err(Error::Invalid(format!(
                    "--import-root {}: not a folder",
                    d.display()
                ))),
                Err(e) => Err(Error::io(format!("--import-root {}", d.display()), e)),
            })
            .collect::<Result<_>>()?;
        Ok(())
    }

    /// The manifest at `given` (an absolute path) with its symbolic links resolved, when
    /// it is a file under one of the import roots; `None` otherwise, alike whether or
    /// not the file exists, so that the answer tells nothing about the rest of the disk.
    pub async fn manifest_under_import_root(&self, given: &str) -> Option<PathBuf> {
        let path = Path::new(given);
        if !path.is_absolute()
            || path
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
            || !self.import_roots.iter().any(|r| path.starts_with(r))
        {
            return None;
        }
        // A path that cannot be resolved is not inside a root: refused.
        let real = tokio::fs::canonicalize(path).await.ok()?;
        self.import_roots
            .iter()
            .any(|r| real.starts_with(r))
            .then_some(real)
    }
}

/// What one server process lets a client hold.
#[derive(Debug, Clone)]
pub struct ServerSettings {
    /// A request's head must arrive whole within this time (also how long an idle
    /// kept-alive connection stays open).
    pub header_read_timeout: Duration,
    /// A request body may take this long, and a second more for every
    /// `body_min_rate` bytes it has sent; past that it is cut.
    pub body_grace: Duration,
    /// The least rate a request body keeps after its grace, in bytes a second.
    pub body_min_rate: u64,
    /// Open connections at most; further clients wait to be accepted.
    pub max_connections: usize,
    /// Open connections at most from one client address (none: a sixteenth of
    /// `max_connections`, at least 8); a trusted proxy's own connections are not capped.
    pub max_connections_per_client: Option<usize>,
    /// On a stop, how long the server keeps accepting and answering while `/readyz`
    /// says 503, so that a load balancer stops sending first; then the listener closes.
    pub drain: Duration,
    /// On shutdown, requests in flight get this long to finish; then they are cut.
    pub shutdown_grace: Duration,
}

impl ServerSettings {
    /// The cap of open connections from one client address in force.
    pub fn per_client_cap(&self) -> usize {
        self.max_connections_per_client
            .unwrap_or((self.max_connections / 16).max(8))
            .max(1)
    }

    /// How many connections that have not sent a whole request yet the server holds
    /// before new ones get a short time for their head ([`HURRIED_HEADER_TIMEOUT`]).
    pub fn unsent_budget(&self) -> usize {
        (self.max_connections / 4).max(8)
    }
}

/// The time a new connection has for its request head while many connections hold
/// none yet (under pressure, a slow head is cut sooner).
pub const HURRIED_HEADER_TIMEOUT: Duration = Duration::from_secs(5);

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            header_read_timeout: Duration::from_secs(60),
            body_grace: Duration::from_secs(20),
            body_min_rate: 500,
            max_connections: default_max_connections(),
            max_connections_per_client: None,
            drain: Duration::ZERO,
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

/// The connection cap by default: 4,096, or less when the process may open fewer files
/// (each connection is one; the database, videos and ffmpeg need some too).
pub fn default_max_connections() -> usize {
    let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
    match soft {
        Some(n) => usize::try_from(n.saturating_sub(128))
            .unwrap_or(4096)
            .clamp(16, 4096),
        None => 4096,
    }
}

/// The limits in force, read once from the environment (`TANDEM_MAX_*`): how much an import or upload may read (`io::limits`
/// applies them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Largest manifest or study sets file.
    pub manifest_bytes: u64,
    /// Longest line of a manifest, sets or CSV file.
    pub line_bytes: usize,
    /// Largest decisions, resolutions or responses CSV file.
    pub csv_bytes: u64,
    /// Largest upload (a zip of clips).
    pub upload_bytes: u64,
    /// Most bytes an uploaded archive may unpack to.
    pub unzip_bytes: u64,
    /// Highest compression ratio of an archive entry (videos hardly compress; a higher
    /// ratio is a bomb, not a clip).
    pub zip_ratio: u64,
    /// Free space kept on the data folder's disk for the database, beyond what an
    /// import or upload needs.
    pub free_space_margin: u64,
    /// Free space on the disk of a SQLite database below which the health checks answer
    /// 503: a write that needs new space fails there, whatever a probe that rewrites one
    /// row in pages SQLite already holds says.
    pub health_free_bytes: u64,
    /// Most bytes the finished export jobs' files hold together: the oldest go first.
    pub job_files_bytes: u64,
}

const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            manifest_bytes: GIB,
            line_bytes: 4 * MIB as usize,
            csv_bytes: GIB,
            upload_bytes: 8 * GIB,
            unzip_bytes: 64 * GIB,
            zip_ratio: 100,
            free_space_margin: 256 * MIB,
            health_free_bytes: 32 * MIB,
            job_files_bytes: 4 * GIB,
        }
    }
}

/// The settings, their environment variables, and how each is described.
const SETTINGS: [(&str, &str); 9] = [
    ("TANDEM_MAX_MANIFEST_BYTES", "manifest_bytes"),
    ("TANDEM_MAX_LINE_BYTES", "line_bytes"),
    ("TANDEM_MAX_CSV_BYTES", "csv_bytes"),
    ("TANDEM_MAX_UPLOAD_BYTES", "upload_bytes"),
    ("TANDEM_MAX_UNZIP_BYTES", "unzip_bytes"),
    ("TANDEM_MAX_ZIP_RATIO", "zip_ratio"),
    ("TANDEM_FREE_SPACE_MARGIN_BYTES", "free_space_margin"),
    ("TANDEM_HEALTH_MIN_FREE_BYTES", "health_free_bytes"),
    ("TANDEM_MAX_JOB_FILES_BYTES", "job_files_bytes"),
];

impl Limits {
    /// The defaults, each replaced by its environment variable when set.
    pub fn from_env() -> Result<Limits> {
        Limits::from_lookup(|k| std::env::var(k).ok())
    }

    fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Limits> {
        let mut l = Limits::default();
        for (var, field) in SETTINGS {
            let Some(v) = get(var).filter(|v| !v.trim().is_empty()) else {
                continue;
            };
            let n: u64 = v.trim().parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                Error::Invalid(format!("{var} must be a positive whole number (got `{v}`)"))
            })?;
            match field {
                "manifest_bytes" => l.manifest_bytes = n,
                "line_bytes" => l.line_bytes = usize::try_from(n).unwrap_or(usize::MAX),
                "csv_bytes" => l.csv_bytes = n,
                "upload_bytes" => l.upload_bytes = n,
                "unzip_bytes" => l.unzip_bytes = n,
                "zip_ratio" => l.zip_ratio = n,
                "health_free_bytes" => l.health_free_bytes = n,
                "job_files_bytes" => l.job_files_bytes = n,
                _ => l.free_space_margin = n,
            }
        }
        Ok(l)
    }
}

/// The bucket's block cache in bytes, from `TANDEM_MEDIA_CACHE_MB` (whole megabytes,
/// at most 65,536; 0 turns it off; 64 when unset).
fn media_cache_bytes(value: Option<String>) -> Result<u64> {
    let Some(v) = value.filter(|v| !v.trim().is_empty()) else {
        return Ok(64 * 1024 * 1024);
    };
    match v.trim().parse::<u64>() {
        Ok(mb) if mb <= 65_536 => Ok(mb * 1024 * 1024),
        _ => Err(Error::Invalid(format!(
            "TANDEM_MEDIA_CACHE_MB must be a whole number of megabytes from 0 to 65536 (got `{v}`)"
        ))),
    }
}

/// The URL of the SQLite database file inside a data folder.
pub fn sqlite_url(path: &Path) -> String {
    format!("sqlite://{}?mode=rwc", path.display())
}

/// Refuses a data folder (or a database file in it) that this process cannot write,
/// with a message that says what to do, instead of a pool time-out a minute later.
fn check_writable(data_dir: &Path) -> Result<()> {
    let advice = "Tandem keeps its database and videos there: give the server's user write access, or choose another folder with --data-dir";
    let probe = data_dir.join(format!(".tandem-write-check-{}", std::process::id()));
    match std::fs::File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
        }
        Err(e) => {
            return Err(Error::Invalid(format!(
                "the data folder {} is not writable ({e}); {advice}",
                data_dir.display()
            )));
        }
    }
    for name in ["tandem.db", "tandem.db-wal", "tandem.db-shm"] {
        let file = data_dir.join(name);
        if file.exists()
            && let Err(e) = std::fs::OpenOptions::new().append(true).open(&file)
        {
            return Err(Error::Invalid(format!(
                "the database file {} is not writable ({e}); {advice}",
                file.display()
            )));
        }
    }
    Ok(())
}

/// An address or a network (`10.0.0.0/8`, `::1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpNet {
    addr: IpAddr,
    prefix: u8,
}

impl IpNet {
    pub fn parse(s: &str) -> std::result::Result<IpNet, String> {
        let s = s.trim();
        let (a, p) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = a
            .parse()
            .map_err(|_| format!("`{s}` is not an IP address or network"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match p {
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("`{s}`: the prefix length must be 0 to {max}"))?,
            None => max,
        };
        Ok(IpNet { addr, prefix })
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = match (self.addr, ip) {
            (IpAddr::V4(_), IpAddr::V6(v6)) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            _ => ip,
        };
        match (self.addr, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(n) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(n) & mask == u128::from(a) & mask
            }
            _ => false,
        }
    }
}

impl std::fmt::Display for IpNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_come_from_the_environment_and_bad_ones_are_named() {
        let l =
            Limits::from_lookup(|k| (k == "TANDEM_MAX_LINE_BYTES").then(|| "100".into())).unwrap();
        assert_eq!(l.line_bytes, 100);
        assert_eq!(l.csv_bytes, Limits::default().csv_bytes);
        let e = Limits::from_lookup(|k| (k == "TANDEM_MAX_ZIP_RATIO").then(|| "ten".into()))
            .unwrap_err();
        assert!(e.to_string().contains("TANDEM_MAX_ZIP_RATIO"), "{e}");
    }

    #[test]
    fn the_media_cache_is_64_mb_unless_set_and_a_bad_size_is_named() {
        assert_eq!(media_cache_bytes(None).unwrap(), 64 << 20);
        assert_eq!(media_cache_bytes(Some(" ".into())).unwrap(), 64 << 20);
        assert_eq!(media_cache_bytes(Some("0".into())).unwrap(), 0);
        assert_eq!(media_cache_bytes(Some("256".into())).unwrap(), 256 << 20);
        for bad in ["-1", "lots", "65537", "1.5"] {
            let e = media_cache_bytes(Some(bad.into())).unwrap_err().to_string();
            assert!(
                e.contains("TANDEM_MEDIA_CACHE_MB") && e.contains(bad),
                "{e}"
            );
        }
    }

    #[test]
    fn networks_contain_their_addresses() {
        let n = IpNet::parse("10.1.0.0/16").unwrap();
        assert!(n.contains("10.1.200.3".parse().unwrap()));
        assert!(!n.contains("10.2.0.1".parse().unwrap()));
        assert!(n.contains("::ffff:10.1.0.9".parse().unwrap()));
        let one = IpNet::parse("127.0.0.1").unwrap();
        assert!(one.contains("127.0.0.1".parse().unwrap()));
        assert!(!one.contains("127.0.0.2".parse().unwrap()));
        assert!(
            IpNet::parse("0.0.0.0/0")
                .unwrap()
                .contains("8.8.8.8".parse().unwrap())
        );
        assert!(
            IpNet::parse("::1")
                .unwrap()
                .contains("::1".parse().unwrap())
        );
        assert!(IpNet::parse("10.0.0.0/33").is_err());
        assert!(IpNet::parse("proxy").is_err());
    }

    #[test]
    fn a_password_comes_out_of_the_url_whole() {
        assert_eq!(
            split_password("postgres://tandem:p%40ss%3Aw@db:5432/tandem"),
            (
                "postgres://tandem@db:5432/tandem".to_string(),
                Some("p@ss:w".to_string())
            )
        );
        assert_eq!(
            split_password("postgres://db/tandem?sslmode=require&password=s3cret"),
            (
                "postgres://db/tandem?sslmode=require".to_string(),
                Some("s3cret".to_string())
            )
        );
        assert_eq!(
            split_password("postgres://tandem@db/tandem"),
            ("postgres://tandem@db/tandem".to_string(), None)
        );
    }

    #[test]
    fn passwords_never_print() {
        assert_eq!(
            redact_url("postgres://tandem:secret@db:5432/tandem"),
            "postgres://tandem:***@db:5432/tandem"
        );
        assert_eq!(
            redact_url("sqlite:///data/tandem.db"),
            "sqlite:///data/tandem.db"
        );
    }
}
