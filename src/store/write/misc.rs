//! The store's own upkeep: the write probe, the server's media key, where the media live.

use crate::error::Result;
use crate::store::db::{Tx, named, sql};

/// Writes one row: whether the database can write now (a full disk cannot).
pub(crate) async fn probe(tx: &mut impl Tx) -> Result<()> {
    tx.exec(
        sql!(
            "INSERT INTO health (id, checked_at) VALUES (1, :now)
             ON CONFLICT (id) DO UPDATE SET checked_at = :now"
        ),
        named! { now: crate::clock::now_micros() },
    )
    .await?;
    Ok(())
}

/// The key of media tokens, made at the first start (`fresh`, hex) and shared by every
/// server: the one stored.
pub(crate) async fn media_key(tx: &mut impl Tx, fresh: &str) -> Result<String> {
    tx.exec(
        sql!(
            "INSERT INTO server_keys (name, value) VALUES ('media', :fresh)
             ON CONFLICT (name) DO NOTHING"
        ),
        named! { fresh },
    )
    .await?;
    tx.scalar(
        sql!("SELECT value FROM server_keys WHERE name = 'media'"),
        &[],
    )
    .await
}

/// Stores where the installation's media live (`local` or `s3://BUCKET/PREFIX`, checked
/// by the caller).
pub(crate) async fn set_media_location(tx: &mut impl Tx, location: &str) -> Result<()> {
    tx.exec(
        sql!("UPDATE media_store SET location = :location, changed_at = :now WHERE id = 1"),
        named! { location, now: crate::clock::now_micros() },
    )
    .await?;
    Ok(())
}
