//! Secrets: argon2id password hashes, generated passwords, API tokens (stored as
//! SHA-256 digests) and random identifiers.

use crate::error::{Error, Result};
use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use sha2::{Digest, Sha256};

/// Shortest password a person may choose.
pub const MIN_PASSWORD_CHARS: usize = 12;

/// Fills `buf` from the operating system's random source.
pub fn random_bytes(buf: &mut [u8]) -> Result<()> {
    getrandom::fill(buf).map_err(|e| Error::Internal(format!("no randomness available: {e}")))
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

/// An argon2id PHC string for `password`, with a random salt.
pub fn hash_password(password: &str) -> Result<String> {
    Argon2::default()
        .hash_password(password.as_bytes())
        .map(|h| h.to_string())
        .map_err(|e| Error::Internal(format!("password hashing failed: {e}")))
}

/// Whether `password` matches the stored PHC string.
pub fn verify_password(password: &str, phc: &str) -> bool {
    match PasswordHash::new(phc) {
        Ok(parsed) => Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
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

    #[test]
    fn hex_and_sha256() {
        assert_eq!(hex(&[0, 15, 255]), "000fff");
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
