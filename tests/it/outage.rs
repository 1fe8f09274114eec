//! The database goes away under load and comes back: PostgreSQL ends every connection
//! (as a fast shutdown does: `pg_terminate_backend`, FATAL 57P01) and then refuses new
//! ones (a TCP proxy in front of it stops forwarding), for a few seconds, while clients
//! send verdicts and reads to a running `tandem serve`. Runs on PostgreSQL only (under
//! `.ci/run`'s second pass); the cluster itself serves the other tests meanwhile, so it
//! is the proxy that stops, not the cluster. A frozen database is both a frozen proxy and
//! a throw-away cluster of the test's own whose processes are stopped (SIGSTOP).

use crate::helpers::{
    PASSWORD, clip_line, eventually, start_server, test_database_url, write_manifest,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tandem::Config;
use tandem::domain::Role;
use tokio::net::{TcpListener, TcpStream};

/// A TCP proxy to the database that can stop and start forwarding, or freeze: hold
/// every connection open and answer nothing, as a stopped host does (its kernel still
/// accepts and acknowledges).
struct Proxy {
    port: u16,
    up: Arc<AtomicBool>,
    frozen: tokio::sync::watch::Sender<bool>,
    links: Arc<Mutex<Vec<tokio::task::AbortHandle>>>,
}

impl Proxy {
    async fn start(upstream: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = Arc::new(AtomicBool::new(true));
        let frozen = tokio::sync::watch::Sender::new(false);
        let links: Arc<Mutex<Vec<tokio::task::AbortHandle>>> = Arc::default();
        let (up2, links2, frozen2) = (up.clone(), links.clone(), frozen.clone());
        tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if !up2.load(Ordering::SeqCst) {
                    drop(client); // refused: the database is not there
                    continue;
                }
                let upstream = upstream.clone();
                let mut thawed = frozen2.subscribe();
                let mut frozen = frozen2.subscribe();
                let link = tokio::spawn(async move {
                    // Frozen: held open, silent; closed when thawed.
                    let now_frozen = *frozen.borrow();
                    if now_frozen {
                        let _ = thawed.wait_for(|f| !*f).await.is_ok();
                        return;
                    }
                    if let Ok(mut server) = TcpStream::connect(&upstream).await {
                        tokio::select! {
                            _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                            _ = async { frozen.wait_for(|f| *f).await.is_ok() } => {
                                let _ = thawed.wait_for(|f| !*f).await.is_ok();
                            }
                        }
                    }
                });
                links2.lock().unwrap().push(link.abort_handle());
            }
        });
        Proxy {
            port,
            up,
            frozen,
            links,
        }
    }

    /// Every connection, open or new, is held and nothing is forwarded, until thawed
    /// (then the held ones are closed).
    fn freeze(&self, frozen: bool) {
        self.frozen.send_replace(frozen);
    }

    /// Every open connection is cut and new ones are refused.
    fn stop(&self) {
        self.up.store(false, Ordering::SeqCst);
        for link in self.links.lock().unwrap().drain(..) {
            link.abort();
        }
    }

    fn resume(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

/// A campaign of `clips` clips with two validators (a token for val00), served by a
/// `tandem serve` that reaches the database `url` through a [`Proxy`].
struct Behind {
    dir: tempfile::TempDir,
    proxy: Proxy,
    server: crate::helpers::ServerProcess,
    token: String,
    /// The database URL's path (its name and options).
    path: String,
}

/// A campaign of `clips` clips stored at `url` in a new data folder, two validators, and
/// val00's token.
async fn campaign_at(url: &str, clips: usize) -> (tempfile::TempDir, std::path::PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let src = dir.path().join("src");
    let config = Config::new(&data, Some(url.to_string())).unwrap();
    let store = tandem::Store::open(&config.database_url).await.unwrap();
    let task = tandem::domain::taxonomy::Taxonomy::vgenst().tasks[0]
        .code
        .clone();
    let lines: Vec<serde_json::Value> = (0..clips)
        .map(|k| clip_line(&src, &format!("clip{k:04}"), &task, &[]))
        .collect();
    let m = write_manifest(&src, "m.jsonl", &lines);
    tandem::app::import_manifest(&store, &config, "default", &m)
        .await
        .unwrap();
    let hash = tandem::auth::hash_password(PASSWORD).unwrap();
    for (name, index) in [("val00", 0), ("val01", 1)] {
        store
            .add_user(
                name,
                Role::Validator,
                &hash,
                Some("default".into()),
                Some(index),
            )
            .await
            .unwrap();
    }
    let token = store.create_token("val00", "test").await.unwrap();
    store.close().await;
    (dir, data, token)
}

async fn campaign_behind_a_proxy(url: String, clips: usize) -> Behind {
    let (dir, data, token) = campaign_at(&url, clips).await;
    let rest = url.strip_prefix("postgres://").unwrap();
    let (user, rest) = rest.split_once('@').unwrap();
    let (hostport, path) = rest.split_once('/').unwrap();
    let proxy = Proxy::start(hostport.to_string()).await;
    let via = format!("postgres://{user}@127.0.0.1:{}/{path}", proxy.port);
    let server = start_server(&data, Some(&via), &[]);
    Behind {
        dir,
        proxy,
        server,
        token,
        path: path.to_string(),
    }
}

/// One answered request: when it was sent, how long it took, its status and whether a
/// 503 said when to try again.
#[derive(Debug, Clone)]
struct Answer {
    sent: Instant,
    took: Duration,
    status: u16,
    retry_after: bool,
    what: &'static str,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_goes_away_under_load_gets_503s_not_500s_or_hangs_and_comes_back() {
    let Some(url) = test_database_url().await else {
        eprintln!("skipped: set TANDEM_TEST_POSTGRES to run the database outage test");
        return;
    };
    const CLIPS: usize = 120;
    const WRITERS: usize = 4;
    let Behind {
        dir: _dir,
        proxy,
        server,
        token,
        path,
    } = campaign_behind_a_proxy(url.clone(), CLIPS).await;
    let base = server.base.clone();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();

    let answers: Arc<Mutex<Vec<Answer>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let acknowledged: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut load = Vec::new();
    for w in 0..WRITERS + 2 {
        let (client, base, token) = (client.clone(), base.clone(), token.clone());
        let (answers, stop, acknowledged) = (answers.clone(), stop.clone(), acknowledged.clone());
        load.push(tokio::spawn(async move {
            let mut k = w;
            while !stop.load(Ordering::SeqCst) {
                let (what, req) = if w < WRITERS {
                    // Each writer its own clips, one verdict each.
                    let clip = format!("clip{:04}", k % CLIPS);
                    k += WRITERS;
                    let req = client
                        .post(format!(
                            "{base}/api/v1/campaigns/default/items/1/{clip}/verdict"
                        ))
                        .bearer_auth(&token)
                        .json(&serde_json::json!({"verdict": "valid"}));
                    ("verdict", (req, Some(clip)))
                } else if w == WRITERS {
                    let req = client
                        .get(format!("{base}/api/v1/campaigns/default/queue/1"))
                        .bearer_auth(&token);
                    ("queue", (req, None))
                } else {
                    ("readyz", (client.get(format!("{base}/readyz")), None))
                };
                let (req, clip) = req;
                let sent = Instant::now();
                let r = req.send().await.expect("every request is answered");
                let status = r.status().as_u16();
                let retry_after = r.headers().contains_key("retry-after");
                let body = r.text().await.unwrap_or_default();
                if status == 500 {
                    eprintln!("500 for {what}: {body}");
                }
                if status == 201 {
                    acknowledged.lock().unwrap().push(clip.unwrap());
                }
                answers.lock().unwrap().push(Answer {
                    sent,
                    took: sent.elapsed(),
                    status,
                    retry_after,
                    what,
                });
                if status == 503 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }));
    }

    // The load runs: verdicts are acknowledged.
    let acknowledged_by = |at: Instant, n: usize| {
        let answers = answers.clone();
        move || {
            let n_ok = answers
                .lock()
                .unwrap()
                .iter()
                .filter(|a| a.what == "verdict" && matches!(a.status, 200 | 201) && a.sent >= at)
                .count();
            std::future::ready((n_ok >= n).then_some(()))
        }
    };
    let started = Instant::now();
    eventually(
        "verdicts under load",
        Duration::from_secs(20),
        acknowledged_by(started, 20),
    )
    .await;
    // The database goes away: its backends for this database end with FATAL 57P01 (as
    // in a fast shutdown), then no connection reaches it.
    let admin = crate::helpers::sql_pool(&std::env::var("TANDEM_TEST_POSTGRES").unwrap()).await;
    let db_name = path.split('?').next().unwrap().to_string();
    let down_at = Instant::now();
    sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1")
        .bind(&db_name)
        .execute(&admin)
        .await
        .unwrap();
    proxy.stop();
    // Away until a verdict and /readyz have each been answered 503 while it is.
    eventually(
        "a verdict and /readyz refused while the database is away",
        Duration::from_secs(20),
        || {
            let answers = answers.lock().unwrap();
            let refused = |what: &str| {
                answers
                    .iter()
                    .any(|a| a.what == what && a.status == 503 && a.sent >= down_at)
            };
            std::future::ready((refused("verdict") && refused("readyz")).then_some(()))
        },
    )
    .await;
    let ready = client.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(
        ready.status().as_u16(),
        503,
        "not ready while the database is gone"
    );
    proxy.resume();
    let up_at = Instant::now();
    // Back without a restart: the first verdict answered (recorded, or a repeat) after
    // the database returned.
    let recovered = loop {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let ok = answers
            .lock()
            .unwrap()
            .iter()
            .any(|a| a.what == "verdict" && matches!(a.status, 200 | 201) && a.sent >= up_at);
        if ok {
            break up_at.elapsed();
        }
        assert!(
            up_at.elapsed() < Duration::from_secs(20),
            "verdicts are acknowledged again within 20 s of the database's return"
        );
    };
    // More verdicts after the first, then the load stops.
    eventually(
        "verdicts acknowledged after the return",
        Duration::from_secs(20),
        acknowledged_by(up_at, 10),
    )
    .await;
    stop.store(true, Ordering::SeqCst);
    for t in load {
        t.await.unwrap();
    }
    let answers = answers.lock().unwrap().clone();
    let during: Vec<&Answer> = answers
        .iter()
        .filter(|a| a.sent >= down_at && a.sent < up_at)
        .collect();
    let worst = answers.iter().map(|a| a.took).max().unwrap();
    let unavailable = answers.iter().filter(|a| a.status == 503).count();
    eprintln!(
        "{} requests, {} while the database was away, {unavailable} answered 503; the slowest took {worst:?}; verdicts acknowledged again {recovered:?} after its return",
        answers.len(),
        during.len()
    );
    // No 500: a database that is away is unavailable, said with Retry-After.
    let wrong: Vec<&Answer> = answers
        .iter()
        .filter(|a| !matches!(a.status, 200 | 201 | 503))
        .collect();
    assert!(wrong.is_empty(), "{wrong:?}");
    assert!(
        answers
            .iter()
            .filter(|a| a.status == 503)
            .all(|a| a.retry_after)
    );
    assert!(
        during
            .iter()
            .any(|a| a.what == "verdict" && a.status == 503),
        "verdicts were refused while it was away"
    );
    assert!(
        during.iter().any(|a| a.what == "readyz" && a.status == 503),
        "/readyz said so"
    );
    // Bounded: no request waited past the connection wait (10 s) and a margin.
    assert!(worst < Duration::from_secs(12), "{worst:?}");

    // Every acknowledged verdict is stored.
    let db = crate::helpers::sql_pool(&url).await;
    let stored: Vec<(String,)> = sqlx::query_as(
        "SELECT c.clip_key FROM decisions d JOIN items i ON i.id = d.item_id
         JOIN clip_versions v ON v.id = i.clip_version_id JOIN clips c ON c.id = v.clip_id",
    )
    .fetch_all(&db)
    .await
    .unwrap();
    let stored: std::collections::HashSet<String> = stored.into_iter().map(|(k,)| k).collect();
    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(!acknowledged.is_empty());
    for clip in &acknowledged {
        assert!(
            stored.contains(clip),
            "{clip} was acknowledged and is stored"
        );
    }
    drop(server);
}

/// The database freezes (a stopped host, a silent partition: connections stay open,
/// nothing answers) while requests keep arriving: each is answered within the request's
/// deadline for the database (10 s) and a margin, a 503 with Retry-After where it needed
/// the database, and the server works again once the database does. Before, a request
/// on a pooled connection waited without end, and one that arrived while the revocation
/// stamp's shared read was stuck waited for that read and then its own (20 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_database_answers_every_request_within_its_deadline_and_comes_back() {
    let Some(url) = test_database_url().await else {
        eprintln!("skipped: set TANDEM_TEST_POSTGRES to run the database outage test");
        return;
    };
    let Behind {
        dir: _dir,
        proxy,
        server,
        token,
        ..
    } = campaign_behind_a_proxy(url, 40).await;
    frozen_and_thawed(&server.base, &token, |frozen| proxy.freeze(frozen)).await;
    drop(server);
}

/// The same with the database's own processes stopped (SIGSTOP of a throw-away cluster:
/// its kernel still accepts connections, its backends answer nothing), then continued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_cluster_answers_every_request_within_its_deadline_and_comes_back() {
    if test_database_url().await.is_none() {
        eprintln!("skipped: set TANDEM_TEST_POSTGRES to run the database outage test");
        return;
    }
    let cluster = Cluster::start();
    let (_dir, data, token) = campaign_at(&cluster.url(), 40).await;
    let server = start_server(&data, Some(&cluster.url()), &[]);
    frozen_and_thawed(&server.base, &token, |frozen| {
        cluster.signal(if frozen { "STOP" } else { "CONT" })
    })
    .await;
    drop(server);
}

/// A PostgreSQL cluster of the test's own, in a folder of its own on a free port (run
/// as the `postgres` account when the test runs as root, as `.ci/run` does for CI's),
/// stopped at once when dropped.
struct Cluster {
    dir: tempfile::TempDir,
    bin: std::path::PathBuf,
    port: u16,
    as_root: bool,
}

impl Cluster {
    fn start() -> Cluster {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL's programs under /usr/lib/postgresql (TANDEM_TEST_POSTGRES is set)")
            .flatten()
            .map(|e| e.path().join("bin"))
            .filter(|b| b.join("initdb").exists())
            .max()
            .expect("PostgreSQL's initdb");
        let dir = tempfile::tempdir().unwrap();
        let as_root = rustix::process::geteuid().is_root();
        if as_root {
            let owned = std::process::Command::new("chown")
                .arg("postgres")
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(owned.success(), "chown postgres {}", dir.path().display());
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let c = Cluster {
            dir,
            bin,
            port,
            as_root,
        };
        let data = c.dir.path().join("data");
        c.run(
            "initdb",
            &["-D", data.to_str().unwrap(), "-A", "trust", "-U", "tandem"],
        );
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            c.dir.path().display()
        );
        c.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().unwrap(),
                "-l",
                c.dir.path().join("log").to_str().unwrap(),
                "-w",
                "-o",
                &options,
                "start",
            ],
        );
        c
    }

    /// One of PostgreSQL's programs, as the account that owns the cluster.
    fn command(&self, program: &str, args: &[&str]) -> std::process::Command {
        let path = self.bin.join(program);
        let mut c = if self.as_root {
            let mut c = std::process::Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            std::process::Command::new(path)
        };
        c.args(args);
        c
    }

    fn run(&self, program: &str, args: &[&str]) {
        let out = self.command(program, args).output().unwrap();
        assert!(
            out.status.success(),
            "{program} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn url(&self) -> String {
        format!("postgres://tandem@127.0.0.1:{}/postgres", self.port)
    }

    /// The postmaster and every process it started.
    fn processes(&self) -> Vec<i32> {
        let pid_file = self.dir.path().join("data/postmaster.pid");
        let main: Option<i32> = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.lines().next().and_then(|l| l.trim().parse().ok()));
        let Some(main) = main else {
            return Vec::new();
        };
        let mut all = vec![main];
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            // pid (comm) state ppid ...: the fields after the last `)`.
            let after = stat.rsplit_once(')').map(|(_, a)| a).unwrap_or("");
            let ppid = after.split_whitespace().nth(1).and_then(|p| p.parse().ok());
            if ppid == Some(main) {
                all.extend(e.file_name().to_str().and_then(|p| p.parse::<i32>().ok()));
            }
        }
        all
    }

    /// Sends every process of the cluster `SIG` (`STOP`, `CONT`).
    fn signal(&self, sig: &str) {
        let pids: Vec<String> = self.processes().iter().map(i32::to_string).collect();
        assert!(!pids.is_empty(), "the cluster is not running");
        let sent = std::process::Command::new("kill")
            .arg(format!("-{sig}"))
            .args(&pids)
            .status()
            .unwrap();
        assert!(sent.success(), "kill -{sig} {pids:?}");
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let pids: Vec<String> = self.processes().iter().map(i32::to_string).collect();
        if !pids.is_empty() {
            let _ = std::process::Command::new("kill")
                .arg("-CONT")
                .args(&pids)
                .status();
        }
        let data = self.dir.path().join("data");
        let args = ["-D", data.to_str().unwrap_or(""), "-m", "immediate", "stop"];
        let _ = self.command("pg_ctl", &args).output();
    }
}

/// Freezes the database (`freeze(true)`) while twenty requests of four kinds arrive,
/// checks each answer came within the deadline (503 with Retry-After where the database
/// was needed), thaws it and waits for verdicts to be stored again.
async fn frozen_and_thawed(base: &str, token: &str, freeze: impl Fn(bool)) {
    let base = base.to_string();
    let token = token.to_string();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(40))
        .build()
        .unwrap();
    let verdict = |clip: usize| {
        client
            .post(format!(
                "{base}/api/v1/campaigns/default/items/1/clip{clip:04}/verdict"
            ))
            .bearer_auth(&token)
            .json(&serde_json::json!({"verdict": "valid"}))
    };
    let r = verdict(0).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 201);

    freeze(true);
    // Twenty requests of four kinds, one every 300 ms: the later ones arrive while reads
    // begun by the earlier ones are stuck.
    let mut asked = Vec::new();
    for k in 0..20usize {
        let (what, req) = match k % 4 {
            0 => ("verdict", verdict(1 + k)),
            1 => (
                "queue",
                client
                    .get(format!("{base}/api/v1/campaigns/default/queue/1"))
                    .bearer_auth(&token),
            ),
            2 => (
                "me",
                client.get(format!("{base}/api/v1/me")).bearer_auth(&token),
            ),
            _ => ("readyz", client.get(format!("{base}/readyz"))),
        };
        asked.push(tokio::spawn(async move {
            let sent = Instant::now();
            let r = req.send().await;
            let took = sent.elapsed();
            let r =
                r.unwrap_or_else(|e| panic!("{what} (request {k}): no answer after {took:?}: {e}"));
            Answer {
                sent,
                took,
                status: r.status().as_u16(),
                retry_after: r.headers().contains_key("retry-after"),
                what,
            }
        }));
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let mut answers = Vec::new();
    for a in asked {
        answers.push(a.await.unwrap());
    }
    let worst = answers.iter().map(|a| a.took).max().unwrap();
    eprintln!("frozen: the slowest answer took {worst:?}");
    for a in &answers {
        assert!(
            a.took < Duration::from_secs(12),
            "{} answered after {:?}, past the deadline",
            a.what,
            a.took
        );
        // A copy of the token's owner under a stamp still trusted may answer `me`.
        assert!(matches!(a.status, 200 | 503), "{a:?}");
        assert!(a.status != 503 || a.retry_after, "{a:?}");
    }
    for what in ["verdict", "queue", "readyz"] {
        assert!(
            answers.iter().any(|a| a.what == what && a.status == 503),
            "{what} refused while the database is frozen: {answers:?}"
        );
        assert!(
            answers
                .iter()
                .filter(|a| a.what == what)
                .all(|a| a.status == 503),
            "{what} cannot succeed without the database: {answers:?}"
        );
    }

    freeze(false);
    let thawed = Instant::now();
    loop {
        // The same verdict until it is stored (one sent again is recorded once).
        let r = verdict(30).send().await.unwrap();
        if matches!(r.status().as_u16(), 200 | 201) {
            break;
        }
        assert_eq!(r.status().as_u16(), 503);
        assert!(
            thawed.elapsed() < Duration::from_secs(20),
            "verdicts are acknowledged again within 20 s of the thaw"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
