//! A flood of connections beside a normal client: while it holds, a client at another
//! address asks `/healthz` and signs in. Printed: that client's times with the flood,
//! and, as the same run's reference, the same requests without it (a sign-in's own time
//! is mostly its argon2 hash). Three floods (`TANDEM_BENCH_FLOOD_KIND`):
//!
//! - `trickle` (the default): 5,000 connections from one address (127.0.0.1) that send
//!   the start of a request, then one header line every 4 s, never the end;
//! - `silent`: 4,200 connections from 20 addresses (127.0.1.1-20, 210 each: under the
//!   per-address cap) that send nothing;
//! - `slow-body`: as many, each a whole POST head, then one body byte every 10 s.
//!
//! The server is `tandem serve` with its defaults (4,096 connections, 256 per client
//! address), a process of its own, as in production; the normal client is 127.0.0.2.
//!
//! Run: `cargo bench --bench flood`. `TANDEM_BENCH_FLOOD` sets the number of flooding
//! connections, `TANDEM_BENCH_FLOOD_ADDRESSES` the addresses they come from.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PASSWORD: &str = "a long flood bench password";

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn tandem(data: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tandem"));
    c.arg("--data-dir").arg(data);
    c
}

/// A client at `from` that opens a new connection for every request.
fn client_at(from: IpAddr) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(from)
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap()
}

/// The sign-in form's cookie and token, then the sign-in itself: the time of both
/// requests and whether it signed in.
async fn sign_in(client: &reqwest::Client, base: &str) -> (Duration, bool) {
    let start = Instant::now();
    let Ok(page) = client.get(format!("{base}/login")).send().await else {
        return (start.elapsed(), false);
    };
    let cookie = page
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("tandem_prelogin="))
        .and_then(|c| c.split(';').next())
        .unwrap_or_default()
        .to_string();
    let text = page.text().await.unwrap_or_default();
    let token = text
        .split("name=\"_csrf\" value=\"")
        .nth(1)
        .and_then(|t| t.split('"').next())
        .unwrap_or_default()
        .to_string();
    let r = client
        .post(format!("{base}/login"))
        .header("Cookie", cookie)
        .form(&[
            ("_csrf", token.as_str()),
            ("name", "admin1"),
            ("password", PASSWORD),
            ("next", "/"),
        ])
        .send()
        .await;
    let ok = r.is_ok_and(|r| r.status() == reqwest::StatusCode::SEE_OTHER);
    (start.elapsed(), ok)
}

fn percentile(times: &mut [Duration], p: f64) -> f64 {
    times.sort();
    let i = ((times.len() as f64 - 1.0) * p).round() as usize;
    times[i].as_secs_f64() * 1000.0
}

/// `n` /healthz and `m` sign-ins from `from`, one after another: each one's p50 and
/// max in ms, and how many failed.
async fn measure(from: IpAddr, base: &str, n: usize, m: usize) -> [(f64, f64, usize); 2] {
    let client = client_at(from);
    let mut health = Vec::new();
    let mut failed = 0;
    for _ in 0..n {
        let start = Instant::now();
        let ok = client
            .get(format!("{base}/healthz"))
            .send()
            .await
            .is_ok_and(|r| r.status() == reqwest::StatusCode::OK);
        health.push(start.elapsed());
        failed += usize::from(!ok);
    }
    let mut logins = Vec::new();
    let mut login_failed = 0;
    for _ in 0..m {
        let (t, ok) = sign_in(&client, base).await;
        logins.push(t);
        login_failed += usize::from(!ok);
    }
    [
        (
            percentile(&mut health, 0.5),
            percentile(&mut health, 1.0),
            failed,
        ),
        (
            percentile(&mut logins, 0.5),
            percentile(&mut logins, 1.0),
            login_failed,
        ),
    ]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let kind = std::env::var("TANDEM_BENCH_FLOOD_KIND").unwrap_or_else(|_| "trickle".into());
    // What a flooding connection sends first, then again and again (every `every`).
    // (A slow body is sent by an insider with a token, to a route that reads its body:
    // without one, the request is refused before its body is read.)
    let (first, again, every): (&str, &[u8], u64) = match kind.as_str() {
        "trickle" => (
            "GET /healthz HTTP/1.1\r\nHost: tandem\r\n",
            b"X-Trickle: 1\r\n",
            4,
        ),
        "silent" => ("", b"", 4),
        "slow-body" => (
            "POST /api/v1/users/admin1/tokens HTTP/1.1\r\nHost: tandem\r\nAuthorization: Bearer TOKEN\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n",
            b"a",
            10,
        ),
        other => panic!(
            "TANDEM_BENCH_FLOOD_KIND: no flood called `{other}` (trickle, silent, slow-body)"
        ),
    };
    let number = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let one_address = kind == "trickle";
    let flood: usize = number("TANDEM_BENCH_FLOOD", if one_address { 5000 } else { 4200 });
    let addresses: usize = number(
        "TANDEM_BENCH_FLOOD_ADDRESSES",
        if one_address { 1 } else { 20 },
    )
    .clamp(1, 250);
    // The flood's sockets and the server's: well above the default of 1,024 files.
    let hard = rustix::process::getrlimit(rustix::process::Resource::Nofile).maximum;
    rustix::process::setrlimit(
        rustix::process::Resource::Nofile,
        rustix::process::Rlimit {
            current: hard,
            maximum: hard,
        },
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let mut add = tandem(&data)
        .args([
            "user",
            "add",
            "admin1",
            "--role",
            "admin",
            "--password-stdin",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    add.stdin
        .take()
        .unwrap()
        .write_all(PASSWORD.as_bytes())
        .unwrap();
    assert!(add.wait().unwrap().success());
    let made = tandem(&data)
        .args(["token", "create", "admin1"])
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&made.stdout).into_owned() + &String::from_utf8_lossy(&made.stderr);
    let token = text
        .split_whitespace()
        .find(|w| w.starts_with("tdm_"))
        .expect("`tandem token create` printed a token")
        .to_string();
    let first = first.replace("TOKEN", &token).into_bytes();
    let mut child = tandem(&data)
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("RUST_LOG", "error")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _server = Killed(child);
    let addr = line
        .trim()
        .strip_prefix("Tandem is listening on http://")
        .unwrap()
        .to_string();
    let base = format!("http://{addr}");
    let normal: IpAddr = [127, 0, 0, 2].into();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let quiet = rt.block_on(measure(normal, &base, 50, 5));

    // The flood, from `addresses` addresses in turn.
    let mut held: Vec<TcpStream> = Vec::with_capacity(flood);
    let mut closed = 0usize;
    let server: std::net::SocketAddr = addr.parse().unwrap();
    for k in 0..flood {
        let from: IpAddr = if addresses == 1 {
            [127, 0, 0, 1].into()
        } else {
            [127, 0, 1, 1 + (k % addresses) as u8].into()
        };
        let connected = rt.block_on(async {
            let s = tokio::net::TcpSocket::new_v4()?;
            s.bind((from, 0).into())?;
            tokio::time::timeout(Duration::from_secs(5), s.connect(server))
                .await
                .map_err(std::io::Error::other)?
        });
        match connected.and_then(|s| s.into_std()) {
            Ok(mut s) => {
                s.set_nonblocking(false).unwrap();
                if s.write_all(&first).is_ok() {
                    s.set_nonblocking(true).unwrap();
                    held.push(s);
                } else {
                    closed += 1;
                }
            }
            Err(_) => closed += 1,
        }
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let trickler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut open = held;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if !again.is_empty() {
                    open.retain_mut(|s| s.write_all(again).is_ok());
                }
                for _ in 0..every * 10 {
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
            // Whether the server still holds each: a closed one reads as the end.
            let mut still = 0;
            for s in &mut open {
                let mut b = [0u8; 1];
                match s.read(&mut b) {
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => still += 1,
                    _ => {}
                }
            }
            still
        })
    };
    // Let a trickle round pass, then measure under the flood.
    std::thread::sleep(Duration::from_secs(5));
    let flooded = rt.block_on(measure(normal, &base, 50, 5));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let still_held = trickler.join().unwrap();

    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "\nFlood bench: {flood} {kind} connections from {addresses} address(es) ({cores} cores)\n"
    );
    println!(
        "| what | p50 | max | failed | the flooding connections |\n| --- | ---: | ---: | ---: | --- |"
    );
    let row = |what: &str, r: (f64, f64, usize), note: &str| {
        println!(
            "| {what} | {:.1} ms | {:.1} ms | {} | {note} |",
            r.0, r.1, r.2
        );
    };
    row(
        "/healthz, another address, no flood (reference)",
        quiet[0],
        "",
    );
    row(
        "sign-in, another address, no flood (reference)",
        quiet[1],
        "",
    );
    row(
        "/healthz, another address, during the flood",
        flooded[0],
        &format!(
            "{still_held} still open at the end, the rest closed by the server ({closed} not connected within 5 s)"
        ),
    );
    row("sign-in, another address, during the flood", flooded[1], "");
}
