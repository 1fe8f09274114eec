//! File formats (SPEC section 7): the clip manifest, the decisions and resolutions
//! CSV files, and the retained-benchmark export. Used by the CLI and the admin pages.
//!
//! What it holds, part by part:
//!
//! `limits` (every read bounded: regular files, sizes, line lengths, free space),
//! `baseline` (the human baseline's answers as CSV, read, checked whole against the
//! retained questions and the participants with line and field, written), `protocol` (a
//! protocol file read within the manifest limit, its problems one refusal), `objects` (the
//! media store: the data folder's `media/` or an S3-compatible bucket through Apache
//! Arrow's `object_store`, its location (`local`, `s3://BUCKET/PREFIX`) stored in the
//! database and its credentials from each process's `AWS_*` variables; a file put whole or,
//! over 8 MiB, in parts (an object appears complete or not at all), its size and date, a
//! range read whole (a small one through a bounded LRU cache of 256 KiB blocks,
//! `TANDEM_MEDIA_CACHE_MB`, 64 MB by default: objects never change, so a block is never
//! stale) or streamed, a copy fetched for the programs that need a file; a bucket that does
//! not answer is `Unavailable` within seconds, a missing object `NotFound`), `media` (the
//! media folder: videos under their SHA-256, taken in by `Intake`: each file read once,
//! copied while it is hashed and its timing read, several at once, then made durable in one
//! batch by `settle`; the study's served copies, frame strips), `timing` (a video's frame
//! rate and count from an MP4's or QuickTime file's own time-to-sample table, through
//! Mozilla's `mp4parse`, equal to ffprobe's to the frame and the fraction), `manifest`
//! (check a clip manifest whole, hash and sniff videos), `records` (decisions and
//! resolutions CSV in and out), `export` (retained benchmark: V1/V2/V3 when the campaign's
//! protocol asks for them; linked pairs kept only whole), `archive` (unpack an uploaded zip
//! safely, pack an export), `study` (comparison sets and responses, checked whole; the
//! responses export), `video` (ffmpeg: K-frame strips, copies without metadata; ffprobe: a
//! clip's frame rate, whether it is constant, and its frame count, counted when the
//! container does not say: for the containers `timing` does not read)

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
