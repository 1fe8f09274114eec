//! File formats (SPEC section 7): the clip manifest, the decisions and resolutions
//! CSV files, and the retained-benchmark export. Used by the CLI and the admin pages.

pub mod archive;
pub mod baseline;
pub mod export;
pub mod limits;
pub mod manifest;
pub mod media;
pub mod objects;
pub mod protocol;
pub mod records;
pub mod study;
pub mod timing;
pub mod video;
