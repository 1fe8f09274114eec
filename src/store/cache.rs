//! What a server keeps in memory to spare the database a statement: the campaigns and
//! studies (a second), the accounts behind API tokens and the browser sessions that fetch
//! clips (two seconds, and each only under the revocation stamp it was read with: a
//! disable, a token revocation, a sign-out or a role change anywhere makes them unused at
//! once), the clip behind a media token (a clip version's file never changes), the file
//! behind a study clip token (never changes either), and whether a person may see a clip
//! (two seconds, for the same roles: who holds a clip in their queue changes with the
//! review; another server sees that within two seconds).

use super::accounts::{CampaignRole, User};
use super::catalog::Campaign;
use super::sessions::{GrantedMedia, Session};
use super::study::{Study, StudyMedia};
use crate::clock::Clock;
use aes::Aes128;
use aes::cipher::{BlockDecrypt, BlockEncrypt, KeyInit};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

const CAMPAIGN_TTL: Duration = Duration::from_secs(1);
const PEOPLE_TTL: Duration = Duration::from_secs(2);
/// Entries a map holds at most before it is emptied (a crude bound on memory).
const MAX_ENTRIES: usize = 50_000;

/// Copies by key, each with the moment it was read.
type Copies<K, T> = Mutex<HashMap<K, (Instant, T)>>;

#[derive(Default)]
pub(super) struct Caches {
    campaigns: Mutex<HashMap<String, (Instant, Campaign)>>,
    studies: Mutex<HashMap<i64, (Instant, Study)>>,
    tokens: Copies<String, Stamped<Option<User>>>,
    media: Mutex<HashMap<i64, GrantedMedia>>,
    may_see: Copies<(i64, i64), (Vec<CampaignRole>, bool)>,
    sessions: Copies<String, Stamped<Option<Session>>>,
    study_media: Mutex<HashMap<String, StudyMedia>>,
    cipher: OnceLock<Aes128>,
    /// The store's clock: the copies' ages are measured on it.
    clock: Clock,
}

fn fresh<T: Clone>(entry: Option<&(Instant, T)>, ttl: Duration, now: Instant) -> Option<T> {
    entry
        .filter(|(at, _)| now.saturating_duration_since(*at) < ttl)
        .map(|(_, v)| v.clone())
}

/// A copy and the revocation stamp it was read under.
type Stamped<T> = (i64, T);

/// The copy if it is fresh and was read under `stamp`.
fn current<T: Clone>(entry: Option<&(Instant, Stamped<T>)>, stamp: i64, now: Instant) -> Option<T> {
    fresh(entry, PEOPLE_TTL, now)
        .filter(|(read_under, _)| *read_under == stamp)
        .map(|(_, v)| v)
}

fn bounded<K, V>(map: &mut HashMap<K, V>) {
    if map.len() >= MAX_ENTRIES {
        map.clear();
    }
}

impl Caches {
    pub(super) fn new(clock: Clock) -> Caches {
        Caches {
            clock,
            ..Caches::default()
        }
    }

    pub(super) fn campaign(&self, name: &str) -> Option<Campaign> {
        // Here and below, a poisoned lock is a cache miss: the database answers.
        let m = self.campaigns.lock().ok()?;
        fresh(m.get(name), CAMPAIGN_TTL, self.clock.instant())
    }

    pub(super) fn put_campaign(&self, c: &Campaign) {
        if let Ok(mut m) = self.campaigns.lock() {
            bounded(&mut m);
            m.insert(c.name.clone(), (self.clock.instant(), c.clone()));
        }
    }

    pub(super) fn forget_campaigns(&self) {
        if let Ok(mut m) = self.campaigns.lock() {
            m.clear();
        }
        if let Ok(mut m) = self.studies.lock() {
            m.clear();
        }
    }

    pub(super) fn study(&self, id: i64) -> Option<Study> {
        let m = self.studies.lock().ok()?;
        fresh(m.get(&id), CAMPAIGN_TTL, self.clock.instant())
    }

    pub(super) fn put_study(&self, s: &Study) {
        if let Ok(mut m) = self.studies.lock() {
            bounded(&mut m);
            m.insert(s.id, (self.clock.instant(), s.clone()));
        }
    }

    pub(super) fn token(&self, digest: &str, stamp: i64) -> Option<Option<User>> {
        let m = self.tokens.lock().ok()?;
        current(m.get(digest), stamp, self.clock.instant())
    }

    pub(super) fn put_token(&self, digest: &str, stamp: i64, user: Option<User>) {
        if let Ok(mut m) = self.tokens.lock() {
            bounded(&mut m);
            m.insert(digest.to_string(), (self.clock.instant(), (stamp, user)));
        }
    }

    pub(super) fn session(&self, id_hash: &str, stamp: i64) -> Option<Option<Session>> {
        let m = self.sessions.lock().ok()?;
        current(m.get(id_hash), stamp, self.clock.instant())
    }

    pub(super) fn put_session(&self, id_hash: &str, stamp: i64, s: Option<Session>) {
        if let Ok(mut m) = self.sessions.lock() {
            bounded(&mut m);
            m.insert(id_hash.to_string(), (self.clock.instant(), (stamp, s)));
        }
    }

    pub(super) fn forget_session(&self, id_hash: &str) {
        if let Ok(mut m) = self.sessions.lock() {
            m.remove(id_hash);
        }
    }

    pub(super) fn study_media(&self, token: &str) -> Option<StudyMedia> {
        self.study_media.lock().ok()?.get(token).cloned()
    }

    pub(super) fn put_study_media(&self, token: &str, m: &StudyMedia) {
        if let Ok(mut map) = self.study_media.lock() {
            bounded(&mut map);
            map.insert(token.to_string(), m.clone());
        }
    }

    pub(super) fn media(&self, version: i64) -> Option<GrantedMedia> {
        self.media.lock().ok()?.get(&version).cloned()
    }

    pub(super) fn put_media(&self, version: i64, m: &GrantedMedia) {
        if let Ok(mut map) = self.media.lock() {
            bounded(&mut map);
            map.insert(version, m.clone());
        }
    }

    /// Whether `user` may see a clip version, if answered less than two seconds ago for
    /// the same person with the same roles.
    pub(super) fn may_see(&self, user: &User, version: i64) -> Option<bool> {
        let m = self.may_see.lock().ok()?;
        let (at, (roles, ok)) = m.get(&(user.id, version))?;
        (self.clock.instant().saturating_duration_since(*at) < PEOPLE_TTL && *roles == user.roles)
            .then_some(*ok)
    }

    pub(super) fn put_may_see(&self, user: &User, version: i64, ok: bool) {
        if let Ok(mut m) = self.may_see.lock() {
            bounded(&mut m);
            m.insert(
                (user.id, version),
                (self.clock.instant(), (user.roles.clone(), ok)),
            );
        }
    }

    pub(super) fn set_media_key(&self, key: [u8; 16]) {
        if let Ok(c) = Aes128::new_from_slice(&key) {
            let _ = self.cipher.set(c);
        }
    }

    /// 32 hex digits: (user, version) as one encrypted block; none without the key
    /// (a token in the clear would name its clip and let anyone forge another's).
    pub(super) fn media_token(&self, user: i64, version: i64) -> Option<String> {
        let c = self.cipher.get()?;
        let mut block = [0u8; 16];
        block[..8].copy_from_slice(&user.to_le_bytes());
        block[8..].copy_from_slice(&version.to_le_bytes());
        let mut b: aes::Block = block.into();
        c.encrypt_block(&mut b);
        Some(crate::auth::hex(&b))
    }

    pub(super) fn open_media_token(&self, token: &str) -> Option<(i64, i64)> {
        if token.len() != 32 || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let mut block = [0u8; 16];
        for (i, byte) in block.iter_mut().enumerate() {
            // A token that is not hex is no token: `None`, as for an unknown one.
            *byte = u8::from_str_radix(token.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        let mut b: aes::Block = block.into();
        self.cipher.get()?.decrypt_block(&mut b);
        // Fixed 8-byte halves of a 16-byte block: these conversions cannot fail.
        let user = i64::from_le_bytes(b[..8].try_into().ok()?);
        let version = i64::from_le_bytes(b[8..].try_into().ok()?);
        (user > 0 && version > 0).then_some((user, version))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_tokens_open_to_what_they_were_made_of_and_nothing_else() {
        let c = Caches::default();
        c.set_media_key([7; 16]);
        let t = c.media_token(12, 345).unwrap();
        assert_eq!(t.len(), 32);
        assert!(!t.contains("345"));
        assert_eq!(c.open_media_token(&t), Some((12, 345)));
        assert_eq!(c.media_token(12, 345).unwrap(), t, "the same each time");
        assert_ne!(c.media_token(13, 345).unwrap(), t);
        // A changed digit opens to nonsense, not to a neighbour's clip.
        let mut forged = t.clone().into_bytes();
        forged[0] = if forged[0] == b'0' { b'1' } else { b'0' };
        let forged = String::from_utf8(forged).unwrap();
        assert_ne!(c.open_media_token(&forged), Some((12, 345)));
        assert_eq!(c.open_media_token("not hex at all, not 32 long"), None);
        let other = Caches::default();
        other.set_media_key([8; 16]);
        assert_ne!(other.open_media_token(&t), Some((12, 345)));
    }

    #[test]
    fn without_a_key_no_token_is_made_and_none_opens() {
        let c = Caches::default();
        assert_eq!(c.media_token(12, 345), None, "a token in the clear");
        let mut plain = [0u8; 16];
        plain[..8].copy_from_slice(&12_i64.to_le_bytes());
        plain[8..].copy_from_slice(&345_i64.to_le_bytes());
        assert_eq!(c.open_media_token(&crate::auth::hex(&plain)), None);
    }
}
