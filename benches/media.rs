//! Clip serving against nginx, both measured by wrk in the same run on the same file:
//!
//! - random 64 KiB byte ranges of a 20 MB clip at 1 and 32 connections;
//! - 1 KiB ranges and a frame strip (about 20 KB) on one kept-alive connection, where
//!   a reply written in two pieces without TCP_NODELAY waits for the client's delayed
//!   ACK (about 40 ms).
//!
//! Tandem serves the clip under a validator's opaque URL with the validator's API token
//! (the grant checked on every request, from the in-memory caches); nginx (Debian's
//! package, started here with its own configuration: `sendfile`, no access log, as many
//! workers as cores) serves the same bytes as a static file. The runs are interleaved,
//! three of each, and the median printed.
//!
//! - random 64 KiB ranges of the same clip with the media in an S3-compatible bucket
//!   (s3s-fs, the S3 protocol served from a folder, run in this process on a local
//!   port): through Tandem (its signed ranged GETs) beside the S3 server read directly
//!   by wrk (anonymous reads allowed, as a public-read bucket), Tandem with its block
//!   cache off (`TANDEM_MEDIA_CACHE_MB=0`: every range one signed GET) and Tandem from
//!   its data folder, at 32 connections, interleaved, in the same run. The clip (20 MB)
//!   fits the default 64 MB cache: the first row is a clip being watched, the second
//!   the bucket's own cost.
//!
//! Run: `cargo bench --bench media` (needs `wrk` and `nginx`: `apt install wrk nginx`;
//! the strip rows need `ffmpeg`). `TANDEM_BENCH_SECONDS` sets each run's length
//! (default 5).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tandem::domain::Role;
use tandem::{Config, Store};

const CLIP_BYTES: usize = 20 * 1024 * 1024;

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn seconds() -> u64 {
    std::env::var("TANDEM_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A 20 MB file that passes for an MP4 (the bytes after the header are noise: serving
/// does not look at them).
fn clip_bytes() -> Vec<u8> {
    let mut v = b"\0\0\0\x18ftypisom\0\0\0\0isommp41".to_vec();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    while v.len() < CLIP_BYTES {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v.truncate(CLIP_BYTES);
    v
}

fn tandem_server(data: &Path, env: &[(String, String)]) -> (Killed, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .envs(env.iter().cloned())
        .arg("--data-dir")
        .arg(data)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("RUST_LOG", "warn")
        .env_remove("DATABASE_URL")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("Tandem is listening on ")
        .unwrap()
        .to_string();
    (Killed(child), base)
}

fn nginx(dir: &Path, www: &Path) -> (Killed, String) {
    let port = free_port();
    let root = rustix::process::geteuid().is_root();
    let conf = format!(
        "daemon off;\n{user}worker_processes auto;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n\
         events {{ worker_connections 1024; }}\n\
         http {{\n  access_log off;\n  sendfile on;\n  tcp_nodelay on;\n  keepalive_requests 10000000;\n\
           types {{ video/mp4 mp4; image/jpeg jpg; }}\n\
           client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fcgi; uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;\n\
           server {{ listen 127.0.0.1:{port}; root {w}; }}\n}}\n",
        user = if root { "user root;\n" } else { "" },
        d = dir.display(),
        w = www.display(),
    );
    let path = dir.join("nginx.conf");
    std::fs::write(&path, conf).unwrap();
    let child = Killed(
        Command::new("nginx")
            .arg("-p")
            .arg(dir)
            .arg("-e")
            .arg(dir.join("error.log"))
            .arg("-c")
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx (apt install nginx)"),
    );
    let base = format!("http://127.0.0.1:{port}");
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return (child, base);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "nginx did not start: {}",
        std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
    );
}

const SCRIPT: &str = r#"
local counter = 0
function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end
local size, len, token
function init(args)
  size = tonumber(args[1])
  len = tonumber(args[2])
  token = args[3]
  math.randomseed(os.time() * 100 + id)
end
function request()
  local h = {}
  if token ~= nil and token ~= "" then h["Authorization"] = "Bearer " .. token end
  if len > 0 then
    local s = math.random(0, size - len)
    h["Range"] = "bytes=" .. s .. "-" .. (s + len - 1)
  end
  return wrk.format("GET", nil, h)
end
function done(summary, latency, requests)
  io.write(string.format("RESULT %d %d %d %d %d\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), summary.errors.status))
end
"#;

#[derive(Debug, Clone, Copy)]
struct Wrk {
    rate: f64,
    p50_ms: f64,
    p99_ms: f64,
    errors: u64,
}

/// One wrk run: `len`-byte random ranges of a `size`-byte file (0: the whole file).
fn wrk(dir: &Path, url: &str, conns: usize, size: usize, len: usize, token: &str) -> Wrk {
    let script = dir.join("ranges.lua");
    std::fs::write(&script, SCRIPT).unwrap();
    let out = Command::new("wrk")
        .args([
            "-t",
            &conns.min(2).to_string(),
            "-c",
            &conns.to_string(),
            "-d",
            &format!("{}s", seconds()),
            "--latency",
            "-s",
        ])
        .arg(&script)
        .arg(url)
        .args(["--", &size.to_string(), &len.to_string(), token])
        .output()
        .expect("wrk (apt install wrk)");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap_or_else(|| panic!("wrk said: {text}"));
    let f: Vec<f64> = line
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    Wrk {
        rate: f[0] / (f[1] / 1e6),
        p50_ms: f[2] / 1000.0,
        p99_ms: f[3] / 1000.0,
        errors: f[4] as u64,
    }
}

fn median(mut runs: Vec<Wrk>) -> Wrk {
    runs.sort_by(|a, b| a.rate.total_cmp(&b.rate));
    let mid = runs[runs.len() / 2];
    let mut p50: Vec<f64> = runs.iter().map(|r| r.p50_ms).collect();
    let mut p99: Vec<f64> = runs.iter().map(|r| r.p99_ms).collect();
    p50.sort_by(f64::total_cmp);
    p99.sort_by(f64::total_cmp);
    Wrk {
        rate: mid.rate,
        p50_ms: p50[p50.len() / 2],
        p99_ms: p99[p99.len() / 2],
        errors: runs.iter().map(|r| r.errors).sum(),
    }
}

/// Lets any request read (wrk sends unsigned GETs); Tandem's requests are signed.
struct PublicRead;

#[async_trait::async_trait]
impl s3s::access::S3Access for PublicRead {
    async fn check(&self, _cx: &mut s3s::access::S3AccessContext<'_>) -> s3s::S3Result<()> {
        Ok(())
    }
}

const S3_KEY: &str = "BENCHKEY";
const S3_SECRET: &str = "bench-secret-key";

/// An S3 server on a local port serving `root` (each folder a bucket).
fn s3_server(rt: &tokio::runtime::Runtime, root: &Path) -> String {
    let fs = s3s_fs::FileSystem::new(root).unwrap();
    let mut b = s3s::service::S3ServiceBuilder::new(fs);
    b.set_auth(s3s::auth::SimpleAuth::from_single(S3_KEY, S3_SECRET));
    b.set_access(PublicRead);
    let service = b.build();
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    rt.spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                continue;
            };
            let _ = socket.set_nodelay(true);
            let svc = service.clone();
            tokio::spawn(async move {
                let _ = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(hyper_util::rt::TokioIo::new(socket), svc)
                .await;
            });
        }
    });
    format!("http://{addr}")
}

fn main() {
    for tool in ["wrk", "nginx"] {
        if Command::new(tool).arg("-v").output().is_err() {
            eprintln!("{tool} is not installed (apt install wrk nginx): nothing measured");
            return;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let data = dir.path().join("data");
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("videos")).unwrap();
    let clip = clip_bytes();
    std::fs::write(src.join("videos/big.mp4"), &clip).unwrap();
    std::fs::write(src.join("videos/demo.webm"), tandem::demo::CLIPS[0]).unwrap();
    let manifest = src.join("manifest.jsonl");
    let line = |id: &str, file: &str| {
        serde_json::json!({"clip_id": id, "task": "MC_F_EGO_STA", "file": file, "theme": "t",
            "scene_graph": {}, "scenario": {}, "questions": []})
        .to_string()
    };
    std::fs::write(
        &manifest,
        format!(
            "{}\n{}\n",
            line("BIG", "videos/big.mp4"),
            line("DEMO", "videos/demo.webm")
        ),
    )
    .unwrap();

    // A validator, the two clips in their queue, and their URLs from the API.
    let token = rt.block_on(async {
        let config = Config::new(&data, None).unwrap();
        let store = Store::open(&config.database_url).await.unwrap();
        let hash = tandem::auth::hash_password("a long bench password").unwrap();
        for (i, name) in ["val00", "val01"].iter().enumerate() {
            let index = i as i64;
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
        tandem::app::import_manifest(&store, &config, "default", &manifest)
            .await
            .unwrap();
        let t = store.create_token("val00", "bench").await.unwrap();
        store.close().await;
        t
    });
    let (server, base) = tandem_server(&data, &[]);
    let urls = rt.block_on(async {
        let client = reqwest::Client::new();
        let mut urls = Vec::new();
        for id in ["BIG", "DEMO"] {
            let item: serde_json::Value = client
                .get(format!("{base}/api/v1/campaigns/default/items/1/{id}"))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            urls.push((
                item["clip"]["media_url"].as_str().unwrap().to_string(),
                item["clip"]["strip_url"].as_str().map(str::to_string),
            ));
        }
        // The bytes served are the file's, and the strip is drawn before it is measured.
        let r = client
            .get(format!("{base}{}", urls[0].0))
            .bearer_auth(&token)
            .header("Range", "bytes=1000000-1065535")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 206);
        assert!(r.bytes().await.unwrap()[..] == clip[1_000_000..1_065_536]);
        let mut strip = None;
        if let Some(s) = &urls[1].1 {
            let r = client
                .get(format!("{base}{s}"))
                .bearer_auth(&token)
                .send()
                .await
                .unwrap();
            if r.status() == 200 {
                strip = Some(r.bytes().await.unwrap().to_vec());
            }
        }
        (urls, strip)
    });
    let (urls, strip) = urls;

    // nginx serves the same bytes.
    let www = dir.path().join("www");
    std::fs::create_dir_all(&www).unwrap();
    std::fs::write(www.join("clip.mp4"), &clip).unwrap();
    if let Some(s) = &strip {
        std::fs::write(www.join("strip.jpg"), s).unwrap();
    }
    let ng_dir = dir.path().join("nginx");
    std::fs::create_dir_all(&ng_dir).unwrap();
    let (_nginx, ng) = nginx(&ng_dir, &www);

    println!("| what | connections | server | per second | p50 | p99 | errors | Tandem / nginx |");
    println!("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |");
    let mut cases: Vec<(String, usize, String, String, usize, usize)> = vec![
        (
            "64 KiB random ranges of a 20 MB clip".into(),
            32,
            format!("{base}{}", urls[0].0),
            format!("{ng}/clip.mp4"),
            CLIP_BYTES,
            65_536,
        ),
        (
            "64 KiB random ranges of a 20 MB clip".into(),
            1,
            format!("{base}{}", urls[0].0),
            format!("{ng}/clip.mp4"),
            CLIP_BYTES,
            65_536,
        ),
        (
            "1 KiB random ranges (kept-alive)".into(),
            1,
            format!("{base}{}", urls[0].0),
            format!("{ng}/clip.mp4"),
            CLIP_BYTES,
            1024,
        ),
    ];
    match (&strip, &urls[1].1) {
        (Some(bytes), Some(s)) => cases.push((
            format!("frame strip, {} bytes (kept-alive)", bytes.len()),
            1,
            format!("{base}{s}"),
            format!("{ng}/strip.jpg"),
            bytes.len(),
            0,
        )),
        _ => eprintln!("note: no ffmpeg, so no frame strip to measure"),
    }
    let work = dir.path().join("wrk");
    std::fs::create_dir_all(&work).unwrap();
    for (what, conns, ours, theirs, size, len) in cases {
        let (mut t, mut n) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            t.push(wrk(&work, &ours, conns, size, len, &token));
            n.push(wrk(&work, &theirs, conns, size, len, ""));
        }
        let (t, n) = (median(t), median(n));
        for (server, w) in [("Tandem", t), ("nginx", n)] {
            println!(
                "| {what} | {conns} | {server} | {:.0} | {:.3} ms | {:.3} ms | {} | {} |",
                w.rate,
                w.p50_ms,
                w.p99_ms,
                w.errors,
                if server == "Tandem" {
                    format!("{:.2}x", t.rate / n.rate)
                } else {
                    String::new()
                }
            );
        }
    }
    drop(server);

    // The same clip with the media in a bucket: a copy of the installation migrated
    // there, served by its own Tandem, beside the first (its media still in the data
    // folder) and the S3 server read directly, interleaved in the same run.
    let data_s3 = dir.path().join("data-s3");
    copy_folder(&data, &data_s3);
    let s3_root = dir.path().join("s3");
    std::fs::create_dir_all(s3_root.join("bench")).unwrap();
    let endpoint = s3_server(&rt, &s3_root);
    let env: Vec<(String, String)> = [
        ("AWS_ENDPOINT", endpoint.clone()),
        ("AWS_ALLOW_HTTP", "true".into()),
        ("AWS_REGION", "us-east-1".into()),
        ("AWS_ACCESS_KEY_ID", S3_KEY.into()),
        ("AWS_SECRET_ACCESS_KEY", S3_SECRET.into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let migrated = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .envs(env.iter().cloned())
        .arg("--data-dir")
        .arg(&data_s3)
        .env_remove("DATABASE_URL")
        .args(["media", "migrate", "--to", "s3://bench/media"])
        .output()
        .unwrap();
    assert!(
        migrated.status.success(),
        "{}",
        String::from_utf8_lossy(&migrated.stderr)
    );
    // A third installation on the same bucket, its block cache off (every range one GET).
    let data_s3_raw = dir.path().join("data-s3-raw");
    copy_folder(&data_s3, &data_s3_raw);
    let mut env_raw = env.clone();
    env_raw.push(("TANDEM_MEDIA_CACHE_MB".into(), "0".into()));
    let (_local, local_base) = tandem_server(&data, &[]);
    let (_s3_tandem, s3_base) = tandem_server(&data_s3, &env);
    let (_s3_raw, s3_raw_base) = tandem_server(&data_s3_raw, &env_raw);
    let sha = tandem::auth::sha256_hex(&clip);
    let direct = format!("{endpoint}/bench/media/{sha}");
    let via = format!("{s3_base}{}", urls[0].0);
    let via_raw = format!("{s3_raw_base}{}", urls[0].0);
    let from_disk = format!("{local_base}{}", urls[0].0);
    rt.block_on(async {
        let client = reqwest::Client::new();
        for url in [&via, &via_raw, &direct, &from_disk] {
            // The S3 server is read anonymously, as wrk reads it (a bearer token would be
            // taken for a malformed signature).
            let req = client.get(url);
            let req = if *url == direct {
                req
            } else {
                req.bearer_auth(&token)
            };
            let r = req
                .header("Range", "bytes=1000000-1065535")
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 206, "{url}");
            assert!(
                r.bytes().await.unwrap()[..] == clip[1_000_000..1_065_536],
                "{url}"
            );
        }
    });
    println!();
    println!("| what | connections | server | per second | p50 | p99 | errors | / the S3 server |");
    println!("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |");
    let (mut t, mut r, mut s, mut l) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..3 {
        t.push(wrk(&work, &via, 32, CLIP_BYTES, 65_536, &token));
        r.push(wrk(&work, &via_raw, 32, CLIP_BYTES, 65_536, &token));
        s.push(wrk(&work, &direct, 32, CLIP_BYTES, 65_536, ""));
        l.push(wrk(&work, &from_disk, 32, CLIP_BYTES, 65_536, &token));
    }
    let (t, r, s, l) = (median(t), median(r), median(s), median(l));
    for (server, w) in [
        ("Tandem, media in the bucket", t),
        ("Tandem, media in the bucket, no block cache", r),
        ("the S3 server directly", s),
        ("Tandem, media in the data folder", l),
    ] {
        println!(
            "| 64 KiB random ranges of a 20 MB clip | 32 | {server} | {:.0} | {:.3} ms | {:.3} ms | {} | {:.2}x |",
            w.rate,
            w.p50_ms,
            w.p99_ms,
            w.errors,
            w.rate / s.rate
        );
    }
}

/// Copies a stopped installation's data folder (the database with its WAL, the media).
fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let dest = to.join(e.file_name());
        if e.path().is_dir() {
            copy_folder(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}
