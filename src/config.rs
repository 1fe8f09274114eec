//! Where Tandem keeps its data: a data folder holding `tandem.db` and `media/`, and
//! the database URL (the SQLite file in the data folder unless `DATABASE_URL` says
//! otherwise).

use crate::error::{Error, Result};
use crate::store::Store;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Config {
    pub data_dir: PathBuf,
    pub media_dir: PathBuf,
    pub database_url: String,
    /// Mark cookies `Secure` (serve behind HTTPS).
    pub secure_cookies: bool,
}

impl Config {
    /// Creates the data folder if needed.
    pub fn new(data_dir: &Path, database_url: Option<String>) -> Result<Config> {
        std::fs::create_dir_all(data_dir).map_err(|e| {
            Error::io(
                format!("cannot create the data folder {}", data_dir.display()),
                e,
            )
        })?;
        let database_url = match database_url.filter(|u| !u.trim().is_empty()) {
            Some(u) => u,
            None => Store::sqlite_url(&data_dir.join("tandem.db")),
        };
        Ok(Config {
            data_dir: data_dir.to_path_buf(),
            media_dir: data_dir.join("media"),
            database_url,
            secure_cookies: false,
        })
    }

    pub async fn open_store(&self) -> Result<Store> {
        Store::open(&self.database_url).await
    }
}
