//! The web service: `serve` (with how the server treats its clients), `demo` (a demo
//! campaign built in its own folder, then served) and `healthcheck` (asks a running
//! server).

use crate::config::Config;
use crate::error::{Error, Result};
use crate::store::Store;
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on
    #[arg(long, default_value = "127.0.0.1:8080", env = "TANDEM_BIND")]
    bind: String,
    /// Mark session cookies Secure (when users reach Tandem over HTTPS)
    #[arg(long, env = "TANDEM_SECURE_COOKIES")]
    secure_cookies: bool,
    #[command(flatten)]
    server: ServerArgs,
}

/// How the server treats its clients.
#[derive(Args, Debug, Clone)]
pub struct ServerArgs {
    /// Open connections at most (further clients wait to be accepted) [default: 4096,
    /// or fewer when the open-files limit is lower]
    #[arg(long, env = "TANDEM_MAX_CONNECTIONS", value_name = "N")]
    pub max_connections: Option<usize>,
    /// Open connections at most from one client address, so that one client cannot take
    /// them all (a trusted proxy's own connections are not capped) [default: a
    /// sixteenth of --max-connections, at least 8]
    #[arg(long, env = "TANDEM_MAX_CONNECTIONS_PER_CLIENT", value_name = "N")]
    pub max_connections_per_client: Option<usize>,
    /// Seconds a client has to send a request's head (also how long an idle
    /// connection stays open)
    #[arg(
        long,
        env = "TANDEM_HEADER_TIMEOUT",
        default_value_t = 60,
        value_name = "SECONDS"
    )]
    pub header_timeout: u64,
    /// Seconds a request body may take, one more for every --body-min-rate bytes it
    /// has sent; past that it is cut (a body trickled a byte at a time cannot hold a
    /// connection)
    #[arg(
        long,
        env = "TANDEM_BODY_TIMEOUT",
        default_value_t = 20,
        value_name = "SECONDS"
    )]
    pub body_timeout: u64,
    /// The least rate of a request body after its --body-timeout, in bytes a second
    #[arg(
        long,
        env = "TANDEM_BODY_MIN_RATE",
        default_value_t = 500,
        value_name = "BYTES"
    )]
    pub body_min_rate: u64,
    /// Seconds the server keeps answering after a stop signal while /readyz answers
    /// 503, so that a load balancer stops sending first (0: close at once)
    #[arg(
        long,
        env = "TANDEM_DRAIN",
        default_value_t = 5,
        value_name = "SECONDS"
    )]
    pub drain: u64,
    /// Seconds the requests in flight get to finish on shutdown
    #[arg(
        long,
        env = "TANDEM_SHUTDOWN_GRACE",
        default_value_t = 10,
        value_name = "SECONDS"
    )]
    pub shutdown_grace: u64,
    /// A reverse proxy (address or network, e.g. 10.0.0.0/8) whose X-Forwarded-For
    /// names the client; repeat for several, or separate with commas. Without one, the
    /// client is the peer of the connection.
    #[arg(
        long = "trusted-proxy",
        env = "TANDEM_TRUSTED_PROXIES",
        value_delimiter = ',',
        value_name = "NET"
    )]
    pub trusted_proxies: Vec<String>,
    /// A folder under which the admin's "import from a folder" may read manifests (and
    /// their videos, under the manifest's folder); repeat for several. Without one,
    /// importing from a folder on the server is off: an admin uploads a zip instead
    #[arg(long = "import-root", value_name = "DIR")]
    pub import_roots: Vec<PathBuf>,
    /// Seconds at most before a pause for the known items, once due, takes effect: it
    /// comes at a random moment between half this and this, so that it does not point
    /// at the verdict that triggered it
    #[arg(
        long,
        env = "TANDEM_KNOWN_PAUSE_DELAY",
        default_value_t = 60,
        value_name = "SECONDS"
    )]
    pub known_pause_delay: u64,
}

impl ServerArgs {
    /// Applies these settings to a configuration.
    pub fn apply(&self, config: &mut Config) -> Result<()> {
        let secs = |n: u64, what: &str| {
            if n == 0 {
                Err(Error::Invalid(format!("{what} must be at least 1 second")))
            } else {
                Ok(std::time::Duration::from_secs(n))
            }
        };
        config.server.header_read_timeout = secs(self.header_timeout, "--header-timeout")?;
        config.server.body_grace = secs(self.body_timeout, "--body-timeout")?;
        if self.body_min_rate == 0 {
            return Err(Error::Invalid(
                "--body-min-rate must be at least 1 byte a second".into(),
            ));
        }
        config.server.body_min_rate = self.body_min_rate;
        config.server.shutdown_grace = std::time::Duration::from_secs(self.shutdown_grace);
        config.server.drain = std::time::Duration::from_secs(self.drain);
        if let Some(n) = self.max_connections {
            if n == 0 {
                return Err(Error::Invalid(
                    "--max-connections must be at least 1".into(),
                ));
            }
            config.server.max_connections = n;
        }
        if let Some(n) = self.max_connections_per_client {
            if n == 0 {
                return Err(Error::Invalid(
                    "--max-connections-per-client must be at least 1".into(),
                ));
            }
            config.server.max_connections_per_client = Some(n);
        }
        config.trusted_proxies = self
            .trusted_proxies
            .iter()
            .filter(|p| !p.trim().is_empty())
            .map(|p| {
                crate::config::IpNet::parse(p)
                    .map_err(|m| Error::Invalid(format!("--trusted-proxy: {m}")))
            })
            .collect::<Result<_>>()?;
        config.set_import_roots(&self.import_roots)?;
        config.known_pause_delay = std::time::Duration::from_secs(self.known_pause_delay);
        Ok(())
    }
}

impl ServeArgs {
    /// `tandem serve`: the server on the opened store until a stop signal.
    pub(super) async fn run(self, config: &Config, store: &Store) -> Result<()> {
        let mut config = config.clone();
        config.secure_cookies = self.secure_cookies;
        self.server.apply(&mut config)?;
        let (listener, addr) = crate::server::listen(&self.bind).await?;
        tracing::info!(%addr, data_dir = %config.data_dir.display(), "Tandem is listening");
        println!("Tandem is listening on http://{addr}");
        crate::app::media::warm_up(store, &config);
        crate::app::known::catch_up(store);
        crate::server::serve_until_stopped(listener, config, store.clone()).await
    }
}

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Address to listen on
    #[arg(long, default_value = "127.0.0.1:8080")]
    bind: String,
    /// Instead of the small demo, a campaign whose decisions follow the paper's
    /// Tables 11-13 (1,200 clips, 9,800 questions)
    #[arg(long)]
    paper_scale: bool,
    /// The small demo on another protocol: a shipped one (vgenst, glimpse,
    /// tumtraffic) or a protocol file
    #[arg(long, conflicts_with = "paper_scale")]
    protocol: Option<String>,
}

impl DemoArgs {
    /// `tandem demo`: the demo campaign built anew in `data_dir`, then served.
    pub(super) async fn run(self, data_dir: &Path, database_url: Option<String>) -> Result<()> {
        let protocol = match self.protocol.as_deref() {
            None => None,
            Some(name) => Some(match crate::domain::protocol::shipped(name) {
                Some(text) => crate::domain::protocol::parse(text).map_err(|problems| {
                    Error::Internal(format!("the shipped protocol `{name}`: {problems:?}"))
                })?,
                None if !Path::new(name).exists() => {
                    return Err(Error::Invalid(format!(
                        "--protocol `{name}` is neither a shipped protocol (vgenst, glimpse, tumtraffic) nor a file"
                    )));
                }
                None => {
                    crate::io::protocol::read(Path::new(name), &crate::config::Limits::from_env()?)?
                }
            }),
        };
        crate::demo::run(
            data_dir,
            database_url,
            &self.bind,
            self.paper_scale,
            protocol,
        )
        .await
    }
}

#[derive(Args, Debug)]
pub struct HealthcheckArgs {
    /// The address the server listens on (0.0.0.0 is asked on 127.0.0.1)
    #[arg(long, default_value = "127.0.0.1:8080", env = "TANDEM_BIND")]
    bind: String,
}

impl HealthcheckArgs {
    /// `tandem healthcheck`: one plain HTTP/1.0 request to the local server's /healthz.
    pub(super) async fn run(self) -> Result<()> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let addr = self
            .bind
            .replacen("0.0.0.0", "127.0.0.1", 1)
            .replacen("[::]", "[::1]", 1);
        let ask = async {
            let mut s = tokio::net::TcpStream::connect(&addr).await?;
            s.write_all(format!("GET /healthz HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
                .await?;
            let mut head = vec![0u8; 64];
            let n = s.read(&mut head).await?;
            head.truncate(n);
            Ok::<_, std::io::Error>(String::from_utf8_lossy(&head).to_string())
        };
        let head = tokio::time::timeout(std::time::Duration::from_secs(5), ask)
            .await
            .map_err(|_| Error::Invalid(format!("{addr} did not answer within 5 s")))?
            .map_err(|e| Error::io(format!("cannot reach {addr}"), e))?;
        match head.split_whitespace().nth(1) {
            Some("200") => {
                println!("healthy");
                Ok(())
            }
            other => Err(Error::Invalid(format!(
                "{addr}/healthz answered {}",
                other.unwrap_or("nothing")
            ))),
        }
    }
}
