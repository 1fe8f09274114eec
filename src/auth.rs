//! Secrets: argon2id password hashes, generated passwords, API tokens (stored as
//! SHA-256 digests) and random identifiers.

use crate::error::{Error, Result};
use argon2::password_hash::phc::{Output, ParamsString, PasswordHash, Salt};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use sha2::{Digest, Sha256};

/// Shortest password a person may choose.
pub const MIN_PASSWORD_CHARS: usize = 12;

/// Fills `buf` from the operating system's random source.
pub fn random_bytes(buf: &mut [u8]) -> Result<()> {
    getrandom::fill(buf).map_err(|e| Error::fault("no randomness available", e))
}

pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 15)]));
    }
    s
}

pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

/// A random identifier of `bytes` bytes, hex-encoded.
pub fn random_id(bytes: usize) -> Result<String> {
    let mut buf = vec![0u8; bytes];
    random_bytes(&mut buf)?;
    Ok(hex(&buf))
}

/// A generated password: 20 characters from an alphabet without look-alikes (~115 bits).
pub fn generate_password() -> Result<String> {
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut out = String::with_capacity(20);
    while out.len() < 20 {
        let mut b = [0u8; 32];
        random_bytes(&mut b)?;
        for x in b {
            // Rejection sampling keeps every character equally likely.
            let limit = 256 - (256 % ALPHABET.len());
            if usize::from(x) < limit && out.len() < 20 {
                out.push(char::from(ALPHABET[usize::from(x) % ALPHABET.len()]));
            }
        }
    }
    Ok(out)
}

pub fn check_password_strength(password: &str) -> Result<()> {
    if password.chars().count() < MIN_PASSWORD_CHARS {
        return Err(Error::Invalid(format!(
            "the password must have at least {MIN_PASSWORD_CHARS} characters"
        )));
    }
    Ok(())
}

/// Runs `f` with this thread's argon2 working memory of at least `blocks` blocks.
/// The memory is allocated once per thread and reused: allocating 19 MiB for every
/// hash (as the crate's own helpers do) grew the process by that much per sign-in,
/// because the allocator could not reuse the aligned blocks it was given back.
fn with_memory<R>(blocks: usize, f: impl FnOnce(&mut [Block]) -> R) -> R {
    thread_local! {
        static MEMORY: std::cell::RefCell<Vec<Block>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    MEMORY.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() < blocks {
            m.resize(blocks, Block::default());
        }
        f(&mut m[..blocks])
    })
}

/// The hash of `password` with `salt` under `argon`, into `out`.
fn argon2_into(argon: &Argon2<'_>, password: &str, salt: &[u8], out: &mut [u8]) -> Result<()> {
    with_memory(argon.params().block_count(), |memory| {
        argon.hash_password_into_with_memory(password.as_bytes(), salt, out, memory)
    })
    .map_err(|e| Error::fault("password hashing failed", e))
}

/// An argon2id PHC string for `password`, with a random salt.
pub fn hash_password(password: &str) -> Result<String> {
    let argon = Argon2::default();
    let mut salt = [0u8; 16];
    random_bytes(&mut salt)?;
    let mut out = [0u8; Params::DEFAULT_OUTPUT_LEN];
    argon2_into(&argon, password, &salt, &mut out)?;
    fn bad(e: impl std::error::Error + Send + Sync + 'static) -> Error {
        Error::fault("password hashing failed", e)
    }
    let phc = PasswordHash {
        algorithm: Algorithm::default().ident(),
        version: Some(Version::default().into()),
        params: ParamsString::try_from(argon.params()).map_err(bad)?,
        salt: Some(Salt::new(&salt).map_err(bad)?),
        hash: Some(Output::new(&out).map_err(bad)?),
    }
    .to_string();
    Ok(phc)
}

/// Whether `password` matches the stored PHC string (compared in constant time).
pub fn verify_password(password: &str, phc: &str) -> bool {
    let Ok(parsed) = PasswordHash::new(phc) else {
        return false;
    };
    let (Some(salt), Some(expected)) = (&parsed.salt, &parsed.hash) else {
        return false;
    };
    let Ok(algorithm) = Algorithm::try_from(parsed.algorithm.as_str()) else {
        return false;
    };
    let version = match parsed.version.map(Version::try_from) {
        None => Version::default(),
        Some(Ok(v)) => v,
        Some(Err(_)) => return false,
    };
    let Ok(params) = Params::try_from(&parsed) else {
        return false;
    };
    let argon = Argon2::new(algorithm, version, params);
    let expected = expected.as_ref();
    let mut out = vec![0u8; expected.len()];
    if argon2_into(&argon, password, salt.as_ref(), &mut out).is_err() {
        return false;
    }
    out.len() == expected.len()
        && out
            .iter()
            .zip(expected)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// A new API token: what the user keeps (`tdm_` and 64 hex digits) and what is stored.
pub fn generate_token() -> Result<(String, String)> {
    let token = format!("tdm_{}", random_id(32)?);
    let digest = token_digest(&token);
    Ok((token, digest))
}

pub fn token_digest(token: &str) -> String {
    sha256_hex(token.as_bytes())
}

/// The threads that compute argon2, one per core, and the slots that admit work to
/// them: each computation holds 19 MiB of working memory (kept per thread, see
/// [`with_memory`]), so a fixed set of threads keeps the process's memory fixed
/// however many sign-ins arrive at once.
struct Hashers {
    /// One per thread: a computation holds its slot until it is done, even when the
    /// sign-in that asked for it has gone, so that the queue (as deep as there are
    /// threads) always has room and handing a job over never waits.
    slots: std::sync::Arc<tokio::sync::Semaphore>,
    jobs: std::sync::mpsc::SyncSender<Box<dyn FnOnce() + Send>>,
}

fn hashers() -> &'static Hashers {
    static HASHERS: std::sync::OnceLock<Hashers> = std::sync::OnceLock::new();
    HASHERS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
        let (tx, rx) = std::sync::mpsc::sync_channel::<Box<dyn FnOnce() + Send>>(cores);
        let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
        for i in 0..cores {
            let rx = rx.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("tandem-argon2-{i}"))
                .spawn(move || {
                    loop {
                        let job = match rx.lock() {
                            Ok(r) => r.recv(),
                            Err(_) => return,
                        };
                        match job {
                            Ok(job) => job(),
                            Err(_) => return,
                        }
                    }
                });
            if let Err(e) = spawned {
                tracing::error!(error = %e, "cannot start a password thread");
            }
        }
        Hashers {
            slots: std::sync::Arc::new(tokio::sync::Semaphore::new(cores)),
            jobs: tx,
        }
    })
}

/// How long a sign-in waits for a free hashing slot before it is told to retry: a
/// room of participants signing in at once is served, a flood is not queued forever.
pub const HASHING_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs one argon2 computation on the password threads, behind their slots; when
/// none frees up within [`HASHING_WAIT`], answers 429 with a retry delay.
pub async fn with_hashing_slot<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T> {
    let h = hashers();
    let busy = || Error::TooMany {
        message: "the server is busy checking other passwords; try again in a moment".into(),
        retry_after: 2,
    };
    let permit = tokio::time::timeout(HASHING_WAIT, h.slots.clone().acquire_owned())
        .await
        .map_err(|_| busy())?
        .map_err(|_| Error::Internal("the password slots are closed".into()))?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    // The slot travels with the job and is freed when the computation ends; the queue
    // has a place for every slot, so this never blocks the async thread.
    h.jobs
        .try_send(Box::new(move || {
            let _ = tx.send(work());
            drop(permit);
        }))
        .map_err(|e| match e {
            std::sync::mpsc::TrySendError::Full(_) => busy(),
            std::sync::mpsc::TrySendError::Disconnected(_) => {
                Error::Internal("the password threads stopped".into())
            }
        })?;
    rx.await
        .map_err(|_| Error::Internal("a password computation failed".into()))
}

/// Hashes a password on the password threads.
pub async fn hash_password_limited(password: String) -> Result<String> {
    with_hashing_slot(move || hash_password(&password)).await?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_verifies_against_its_own_hash_only() {
        let h = hash_password("correct horse battery").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify_password("correct horse battery", &h));
        assert!(!verify_password("correct horse battery!", &h));
        assert!(!verify_password("x", "not a hash"));
    }

    #[test]
    fn hashes_made_by_the_crate_itself_still_verify() {
        use argon2::password_hash::PasswordHasher;
        let h = Argon2::default()
            .hash_password(b"an older account's password")
            .unwrap()
            .to_string();
        assert!(verify_password("an older account's password", &h));
        assert!(!verify_password("an older account's passwords", &h));
    }

    #[test]
    fn generated_passwords_and_tokens_differ() {
        let a = generate_password().unwrap();
        let b = generate_password().unwrap();
        assert_eq!(a.len(), 20);
        assert_ne!(a, b);
        let (t, d) = generate_token().unwrap();
        assert!(t.starts_with("tdm_") && t.len() == 68);
        assert_eq!(token_digest(&t), d);
        assert_ne!(t, d);
    }

    /// A sign-in whose request is dropped while its hash runs keeps its slot until the
    /// hash is done: otherwise later sign-ins take the freed slots, fill the queue and
    /// block the async thread that hands them over.
    #[test]
    fn a_dropped_sign_in_keeps_its_slot_until_its_hash_is_done() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let slots = hashers().slots.clone();
        let cores = slots.available_permits();
        let gate = std::sync::Arc::new(std::sync::Barrier::new(cores + 1));
        let (started_tx, started_rx) = std::sync::mpsc::channel::<()>();
        rt.block_on(async {
            let mut asked = Vec::new();
            for _ in 0..cores {
                let (gate, started) = (gate.clone(), started_tx.clone());
                asked.push(tokio::spawn(with_hashing_slot(move || {
                    let _ = started.send(());
                    gate.wait();
                })));
            }
            for _ in 0..cores {
                tokio::task::yield_now().await;
                let _ = started_rx.recv_timeout(std::time::Duration::from_secs(10));
            }
            // The sign-ins go away while their hashes run.
            for a in &asked {
                a.abort();
            }
            for a in asked {
                let _ = a.await;
            }
            assert_eq!(
                slots.available_permits(),
                0,
                "a dropped sign-in freed its slot"
            );
        });
        gate.wait();
        for _ in 0..100 {
            if slots.available_permits() == cores {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(
            slots.available_permits(),
            cores,
            "the slots came back once hashed"
        );
    }

    #[test]
    fn hex_and_sha256() {
        assert_eq!(hex(&[0, 15, 255]), "000fff");
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
