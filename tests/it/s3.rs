//! A real S3 server for the tests: s3s-fs (the S3 protocol served from a folder) on a
//! local port, with credentials, reached over HTTP by Tandem's own S3 client exactly as
//! a bucket on MinIO or AWS would be. It can be stopped (every connection cut) and
//! started again on the same port, for the fault tests.

use crate::helpers::*;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use tempfile::TempDir;

pub const BUCKET: &str = "tandem-media";
const ACCESS_KEY: &str = "TANDEMTESTKEY";
const SECRET_KEY: &str = "tandem-test-secret-key";

pub struct S3Server {
    pub addr: SocketAddr,
    pub root: PathBuf,
    _dir: TempDir,
    running: Option<tokio::task::JoinHandle<()>>,
    gate: Arc<Gate>,
}

/// Stops the server from inside, at a chosen moment of an upload: after `parts_left`
/// more parts of a multipart upload (-1: never), every request is cut unanswered, as
/// when the server goes down; `down` says that it did.
struct Gate {
    parts_left: AtomicI64,
    down: AtomicBool,
}

impl Gate {
    fn new() -> Arc<Gate> {
        Arc::new(Gate {
            parts_left: AtomicI64::new(-1),
            down: AtomicBool::new(false),
        })
    }

    /// Whether `req` finds the server down (a part past the chosen count takes it down).
    fn cuts<B>(&self, req: &hyper::Request<B>) -> bool {
        if self.down.load(Ordering::SeqCst) {
            return true;
        }
        let is_part = req.method() == hyper::Method::PUT
            && req.uri().query().is_some_and(|q| q.contains("partNumber="));
        if is_part
            && self
                .parts_left
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                    (n >= 0).then(|| n - 1)
                })
                == Ok(0)
        {
            self.down.store(true, Ordering::SeqCst);
            return true;
        }
        false
    }
}

impl S3Server {
    pub async fn start() -> S3Server {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("s3");
        std::fs::create_dir_all(root.join(BUCKET)).expect("bucket folder");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let mut s = S3Server {
            addr,
            root,
            _dir: dir,
            running: None,
            gate: Gate::new(),
        };
        s.running = Some(serve(listener, s.root.clone(), s.gate.clone()));
        s
    }

    /// Goes down when the part after the next `parts` parts of a multipart upload
    /// arrives (that part and every later request cut unanswered), until `restart`.
    pub fn stop_after_parts(&self, parts: i64) {
        self.gate.parts_left.store(parts, Ordering::SeqCst);
    }

    /// Whether the server went down by [`S3Server::stop_after_parts`].
    pub fn went_down(&self) -> bool {
        self.gate.down.load(Ordering::SeqCst)
    }

    /// Stops answering: the listener closes and every open connection is cut.
    pub fn stop(&mut self) {
        if let Some(h) = self.running.take() {
            h.abort();
        }
    }

    /// Answers again on the same port.
    pub async fn restart(&mut self) {
        self.stop();
        let mut tries = 0;
        let listener = loop {
            match tokio::net::TcpListener::bind(self.addr).await {
                Ok(l) => break l,
                Err(e) if tries < 50 => {
                    tries += 1;
                    let _ = e;
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                Err(e) => panic!("cannot bind {} again: {e}", self.addr),
            }
        };
        self.gate = Gate::new();
        self.running = Some(serve(listener, self.root.clone(), self.gate.clone()));
    }

    /// The `AWS_*` variables a Tandem process needs to reach this server.
    pub fn vars(&self) -> Vec<(String, String)> {
        [
            ("AWS_ENDPOINT", format!("http://{}", self.addr)),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY.into()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_KEY.into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// The objects stored under `prefix` (their names after it), as files in the
    /// server's folder.
    pub fn objects(&self, prefix: &str) -> Vec<String> {
        let dir = self.root.join(BUCKET).join(prefix);
        let mut out: Vec<String> = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .flatten()
                    .filter(|e| e.path().is_file())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .filter(|n| !n.starts_with('.'))
                    .collect()
            })
            .unwrap_or_default();
        out.sort();
        out
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Why a connection was dropped.
type Cut = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Serves S3 on `listener` until the task is aborted (then every connection too), or
/// until `gate` says it is down.
fn serve(
    listener: tokio::net::TcpListener,
    root: PathBuf,
    gate: Arc<Gate>,
) -> tokio::task::JoinHandle<()> {
    let fs = s3s_fs::FileSystem::new(&root).expect("s3s-fs");
    let mut builder = s3s::service::S3ServiceBuilder::new(fs);
    builder.set_auth(s3s::auth::SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
    let service = builder.build();
    tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                continue;
            };
            let (service, gate) = (service.clone(), gate.clone());
            let svc = hyper::service::service_fn(move |req| {
                let (service, cut) = (service.clone(), gate.cuts(&req));
                async move {
                    if cut {
                        // An error from the service: hyper drops the connection unanswered.
                        return Err(std::io::Error::other("the S3 server went down"));
                    }
                    hyper::service::Service::call(&service, req)
                        .await
                        .map_err(|e| std::io::Error::other(Cut::from(e)))
                }
            });
            connections.spawn(async move {
                let _ = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(hyper_util::rt::TokioIo::new(socket), svc)
                .await;
            });
            while connections.try_join_next().is_some() {}
        }
    })
}

/// A test server whose media live in a bucket of a fresh S3 server (under `prefix`).
pub async fn spawn_app_on_s3(prefix: &str) -> (TestApp, S3Server) {
    spawn_app_on_s3_with(prefix, |_| {}).await
}

/// As [`spawn_app_on_s3`], with the server's configuration changed by `tweak` first.
pub async fn spawn_app_on_s3_with(
    prefix: &str,
    tweak: impl FnOnce(&mut tandem::config::Config),
) -> (TestApp, S3Server) {
    let s3 = S3Server::start().await;
    let vars = s3.vars();
    let app = spawn_app_with(move |c| {
        c.aws = vars;
        tweak(c);
    })
    .await;
    app.store
        .set_media_location(&format!("s3://{BUCKET}/{prefix}"))
        .await
        .expect("media in the bucket");
    (app, s3)
}
