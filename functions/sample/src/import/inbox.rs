//! The `incoming/` prefix of the market data (a directory embedded, the
//! bucket on AWS): each file put there is imported, then moved with its
//! validation report to `ingested/` or, refused, to `rejected/`. The kind of
//! a file is its name: `<SYMBOL>.csv` or `<SYMBOL>.parquet` (one symbol's
//! bars), `<name>.json` (a Polygon or Alpaca answer, its symbols inside),
//! `<name>.actions.csv` (splits and dividends).
//!
//! What comes in is trusted for nothing: a directory's inbox takes regular
//! files with one link only, never opening a link, a device, a FIFO or a
//! second name of a file kept elsewhere (their names are removed, reported
//! by name, nothing read); a file past the size limit is refused unread;
//! files are moved by rename, never copied; parsing runs on the import
//! thread, at a lower priority than requests, reading the file as a stream.

use super::report::{Finding, Report, Severity, rule};
use super::{ImportError, Options, SymbolRows};
use async_trait::async_trait;
use bytes::Bytes;
use platform::PortError;
use platform::marketdata::staging::Staging;
use platform::marketdata::{BlobStore, ParquetMarketData};
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;

pub const INCOMING: &str = "incoming/";
pub const INGESTED: &str = "ingested/";
pub const REJECTED: &str = "rejected/";

/// The largest inbox file taken by default (`MARKETLAB_INBOX_MAX_BYTES`):
/// a symbol's whole history is a few MB, a day of every US stock as JSON
/// about 2 MB.
pub const MAX_BYTES: u64 = 64 << 20;

/// The size limit from `MARKETLAB_INBOX_MAX_BYTES`, else [`MAX_BYTES`].
pub fn max_bytes_from_env() -> u64 {
    std::env::var("MARKETLAB_INBOX_MAX_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MAX_BYTES)
}

/// What became of one incoming file.
#[derive(Debug)]
pub struct Taken {
    /// The file's name under `incoming/`.
    pub name: String,
    pub report: Report,
    /// Where its report (`<name>.report.json`) is, and the file unless it
    /// was removed (a link, a device, a FIFO).
    pub moved_to: String,
    /// Sessions added, across its symbols.
    pub added: usize,
    /// The generation its import published (none when refused).
    pub generation: Option<u64>,
}

/// A file's bytes to parse: an open regular file read as a stream, or an
/// object read whole (bounded by the size limit).
pub enum Source {
    File(std::fs::File),
    Bytes(Bytes),
}

/// A local entry's identity (device, inode): what was opened is what is
/// moved, not whatever was put at its name meanwhile.
pub type FileId = (u64, u64);

/// What to do with an entry once taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    /// Moved (renamed) to `ingested/` or `rejected/`: the entry of this
    /// identity, when it is known (a directory's inbox).
    Move(Option<FileId>),
    /// Its name removed from `incoming/`: a link or a special file, whose
    /// target stays where it is and is not copied anywhere.
    Remove,
}

/// An entry opened for an import.
pub enum Opened {
    /// No longer there (another sweep took it).
    Gone,
    /// Not taken: why (no byte of it quoted) and what becomes of it.
    Refused {
        rule: &'static str,
        reason: String,
        settle: Settle,
    },
    File(Source, Option<FileId>),
}

/// Where incoming files wait: a directory, or a bucket's prefix.
#[async_trait]
pub trait Inbox: Send + Sync {
    /// The names waiting, sorted (a day's files sort by date).
    async fn waiting(&self) -> Result<Vec<String>, PortError>;
    /// Opens `name` if it is a file to take of at most `limit` bytes.
    async fn open(&self, name: &str, limit: u64) -> Result<Opened, PortError>;
    /// Moves `name` to `dir` (or removes it) and writes its report there
    /// as `<name>.report.json`.
    async fn settle(
        &self,
        name: &str,
        dir: &str,
        settle: Settle,
        report: Vec<u8>,
    ) -> Result<(), PortError>;
}

/// The inbox of a local market directory.
pub struct LocalInbox {
    root: PathBuf,
}

impl LocalInbox {
    /// The inbox of the market directory `root` (its `incoming/`).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        LocalInbox { root: root.into() }
    }
}

fn io(what: &str) -> impl Fn(std::io::Error) -> PortError + '_ {
    move |e| PortError::unavailable_by(what.to_string(), e)
}

/// An entry's kind, when it is not a regular file with one link.
fn not_a_file(meta: &std::fs::Metadata) -> Option<(String, Settle)> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let t = meta.file_type();
    let (what, settle) = if t.is_symlink() {
        ("a symbolic link", Settle::Remove)
    } else if t.is_dir() {
        ("a directory", Settle::Move(Some(id_of(meta))))
    } else if t.is_fifo() {
        ("a FIFO", Settle::Remove)
    } else if t.is_socket() {
        ("a socket", Settle::Remove)
    } else if t.is_block_device() || t.is_char_device() {
        ("a device", Settle::Remove)
    } else if !t.is_file() {
        ("not a regular file", Settle::Remove)
    } else if meta.nlink() > 1 {
        return Some((
            format!(
                "a file with {} hard links (a second name of a file kept elsewhere)",
                meta.nlink()
            ),
            Settle::Remove,
        ));
    } else {
        return None;
    };
    Some((what.to_string(), settle))
}

const REGULAR_ONLY: &str = "; the inbox takes regular files only";

fn id_of(meta: &std::fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

fn open_local(path: &std::path::Path, limit: u64) -> std::io::Result<Opened> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Opened::Gone),
        Err(e) => return Err(e),
    };
    if let Some((what, settle)) = not_a_file(&meta) {
        return Ok(Opened::Refused {
            rule: rule::NOT_A_FILE,
            reason: format!("{what}{REGULAR_ONLY}"),
            settle,
        });
    }
    if meta.len() > limit {
        return Ok(too_large(meta.len(), limit, Some(id_of(&meta))));
    }
    // No link followed, no wait on a FIFO put there since the look above.
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Opened::Gone),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Ok(Opened::Refused {
                rule: rule::NOT_A_FILE,
                reason: format!("a symbolic link{REGULAR_ONLY}"),
                settle: Settle::Remove,
            });
        }
        Err(e) => return Err(e),
    };
    let opened = file.metadata()?;
    if opened.dev() != meta.dev() || opened.ino() != meta.ino() {
        return Ok(Opened::Refused {
            rule: rule::NOT_A_FILE,
            reason: "replaced while it was being opened".into(),
            settle: Settle::Remove,
        });
    }
    if let Some((what, settle)) = not_a_file(&opened) {
        return Ok(Opened::Refused {
            rule: rule::NOT_A_FILE,
            reason: format!("{what}{REGULAR_ONLY}"),
            settle,
        });
    }
    Ok(Opened::File(Source::File(file), Some(id_of(&opened))))
}

fn too_large(len: u64, limit: u64, id: Option<FileId>) -> Opened {
    Opened::Refused {
        rule: rule::TOO_LARGE,
        reason: format!(
            "{len} bytes, over the inbox's limit of {limit} bytes (MARKETLAB_INBOX_MAX_BYTES)"
        ),
        settle: Settle::Move(id),
    }
}

#[async_trait]
impl Inbox for LocalInbox {
    async fn waiting(&self) -> Result<Vec<String>, PortError> {
        // No trailing slash: a path ending in one resolves a link.
        let dir = self.root.join(INCOMING.trim_end_matches('/'));
        tokio::task::spawn_blocking(move || {
            if std::fs::symlink_metadata(&dir).is_ok_and(|m| !m.is_dir()) {
                return Err(PortError::Invalid(format!(
                    "{INCOMING} is not a directory of the market directory (a link?): not swept"
                )));
            }
            let entries = match std::fs::read_dir(&dir) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
                Err(e) => return Err(io(INCOMING)(e)),
            };
            let mut names: Vec<String> = entries
                .flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                // A hidden name is a file still being written by its sender.
                .filter(|n| !n.starts_with('.'))
                .collect();
            names.sort();
            Ok(names)
        })
        .await
        .map_err(PortError::internal)?
    }

    async fn open(&self, name: &str, limit: u64) -> Result<Opened, PortError> {
        let path = self.root.join(INCOMING).join(name);
        tokio::task::spawn_blocking(move || open_local(&path, limit))
            .await
            .map_err(PortError::internal)?
            .map_err(io(INCOMING))
    }

    async fn settle(
        &self,
        name: &str,
        dir: &str,
        settle: Settle,
        report: Vec<u8>,
    ) -> Result<(), PortError> {
        let root = self.root.clone();
        let (name, dir) = (name.to_string(), dir.to_string());
        tokio::task::spawn_blocking(move || {
            let from = root.join(INCOMING).join(&name);
            let to_dir = real_dir(&root, &dir)?;
            match settle {
                Settle::Remove => match std::fs::remove_file(&from) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(io(INCOMING)(e)),
                },
                Settle::Move(expected) => move_taken(&from, &to_dir, &name, expected)?,
            }
            platform::marketdata::LocalDir::new(&root)
                .put_sync(&format!("{dir}{name}.report.json"), &report)
        })
        .await
        .map_err(PortError::internal)?
    }
}

/// `root/dir`, made if missing, refused when it is a link: the inbox
/// moves nothing out of the market directory.
fn real_dir(root: &std::path::Path, dir: &str) -> Result<PathBuf, PortError> {
    // No trailing slash: a path ending in one resolves a link.
    let path = root.join(dir.trim_end_matches('/'));
    std::fs::create_dir_all(&path).map_err(io(dir))?;
    match std::fs::symlink_metadata(&path) {
        Ok(m) if m.is_dir() => Ok(path),
        Ok(_) => Err(PortError::Invalid(format!(
            "{dir} is not a directory of the market directory (a link?)"
        ))),
        Err(e) => Err(io(dir)(e)),
    }
}

/// Moves the entry `from` (of identity `expected`) to `to_dir/name`: first
/// to a hidden name there, where its identity is checked, then to its
/// name. An entry put at `from` since it was opened (a link to a secret,
/// say) is not what was read: its name is removed instead, target untouched.
fn move_taken(
    from: &std::path::Path,
    to_dir: &std::path::Path,
    name: &str,
    expected: Option<FileId>,
) -> Result<(), PortError> {
    use std::os::unix::fs::MetadataExt;
    let taking = to_dir.join(format!(".{}.taking", uuid::Uuid::new_v4().simple()));
    match std::fs::rename(from, &taking) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(INCOMING)(e)),
    }
    let meta = std::fs::symlink_metadata(&taking).map_err(io(INCOMING))?;
    let same = expected.is_none_or(|id| id == id_of(&meta))
        && !meta.file_type().is_symlink()
        && (meta.is_dir() || meta.nlink() == 1);
    if !same {
        tracing::warn!(file = %name, "market data: an inbox file was replaced while it was imported; the replacement is removed unread");
        let gone = match meta.is_dir() {
            true => std::fs::remove_dir_all(&taking),
            false => std::fs::remove_file(&taking),
        };
        return gone.map_err(io(INCOMING));
    }
    let to = to_dir.join(name);
    if std::fs::rename(&taking, &to).is_err() {
        // A directory of that name is there already: beside it.
        let other = to_dir.join(format!("{name}.{}", uuid::Uuid::new_v4().simple()));
        std::fs::rename(&taking, &other).map_err(io(INCOMING))?;
    }
    Ok(())
}

/// The inbox of a blob store's `incoming/` prefix (the bucket on AWS, where
/// an object is only bytes: no links).
pub struct BlobInbox {
    blobs: Arc<dyn BlobStore>,
}

impl BlobInbox {
    pub fn new(blobs: Arc<dyn BlobStore>) -> Self {
        BlobInbox { blobs }
    }
}

#[async_trait]
impl Inbox for BlobInbox {
    async fn waiting(&self) -> Result<Vec<String>, PortError> {
        Ok(self
            .blobs
            .list(INCOMING)
            .await?
            .into_iter()
            .filter(|k| !k.ends_with('/'))
            .map(|k| k[INCOMING.len()..].to_string())
            .collect())
    }

    async fn open(&self, name: &str, limit: u64) -> Result<Opened, PortError> {
        let key = format!("{INCOMING}{name}");
        match self.blobs.size(&key).await? {
            None => return Ok(Opened::Gone),
            Some(len) if len > limit => return Ok(too_large(len, limit, None)),
            Some(_) => {}
        }
        Ok(match self.blobs.get(&key).await? {
            None => Opened::Gone,
            Some(data) if data.len() as u64 > limit => too_large(data.len() as u64, limit, None),
            Some(data) => Opened::File(Source::Bytes(data), None),
        })
    }

    async fn settle(
        &self,
        name: &str,
        dir: &str,
        settle: Settle,
        report: Vec<u8>,
    ) -> Result<(), PortError> {
        let key = format!("{INCOMING}{name}");
        match settle {
            Settle::Move(_) => self.blobs.rename(&key, &format!("{dir}{name}")).await?,
            Settle::Remove => self.blobs.delete(&key).await?,
        }
        self.blobs
            .put(&format!("{dir}{name}.report.json"), report.into())
            .await
    }
}

enum Parsed {
    Bars(Vec<SymbolRows>, Vec<Finding>),
    Actions(Vec<platform::marketdata::actions::Action>),
}

impl Source {
    /// The source as a stream of at most `limit` bytes (a file that grew
    /// past its checked size fails there).
    fn reader(self, limit: u64) -> Box<dyn Read + Send> {
        match self {
            Source::File(f) => Box::new(super::bounded::Bounded::new(
                std::io::BufReader::with_capacity(256 * 1024, f),
                limit,
            )),
            Source::Bytes(b) => {
                Box::new(super::bounded::Bounded::new(std::io::Cursor::new(b), limit))
            }
        }
    }

    /// The whole source, at most `limit` bytes.
    fn whole(self, name: &str, limit: u64) -> Result<Bytes, ImportError> {
        match self {
            Source::Bytes(b) => Ok(b),
            Source::File(_) => {
                let mut data = Vec::new();
                self.reader(limit)
                    .read_to_end(&mut data)
                    .map_err(|e| super::failing(name)(0, None, format!("unreadable: {e}")))?;
                Ok(data.into())
            }
        }
    }
}

/// Parses a file by its name's kind, streaming what can be streamed; runs
/// on a blocking thread.
fn parse(name: &str, source: Source, limit: u64) -> Result<Parsed, ImportError> {
    let lower = name.to_ascii_lowercase();
    let stem = |ext: &str| name[..name.len() - ext.len()].to_string();
    if lower.ends_with(".actions.csv") {
        let data = source.whole(name, limit)?;
        return super::read_actions_csv(name, &data).map(Parsed::Actions);
    }
    if lower.ends_with(".json") {
        let data = source.whole(name, limit)?;
        let (parts, notes) = super::read_json(name, &data, None)?;
        return Ok(Parsed::Bars(parts, notes));
    }
    if lower.ends_with(".csv") {
        let rows = super::csv_rows_from(name, source.reader(limit), None)?;
        return Ok(Parsed::Bars(
            vec![SymbolRows {
                symbol: stem(".csv"),
                rows,
            }],
            Vec::new(),
        ));
    }
    if lower.ends_with(".parquet") {
        let rows = match source {
            Source::File(f) => super::parquet_rows_from(name, f)?,
            Source::Bytes(b) => super::parquet_rows_from(name, b)?,
        };
        return Ok(Parsed::Bars(
            vec![SymbolRows {
                symbol: stem(".parquet"),
                rows,
            }],
            Vec::new(),
        ));
    }
    Err(ImportError {
        file: name.into(),
        line: 0,
        column: None,
        message: "not a kind of file the inbox takes (<SYMBOL>.csv, <SYMBOL>.parquet, \
                  <name>.json, <name>.actions.csv)"
            .into(),
    })
}

fn refusal(
    name: &str,
    rule: &'static str,
    line: usize,
    column: Option<String>,
    message: String,
) -> Report {
    let mut report = Report::new(name);
    report.add(Finding {
        severity: Severity::Error,
        rule,
        symbol: None,
        line,
        column,
        message,
    });
    report
}

/// A file taken into an import, its move still to come (after the commit).
struct Pending {
    name: String,
    report: Report,
    added: usize,
    settle: Settle,
}

/// Reads the entry `name` of `inbox` (at most `limit` bytes) and, when no
/// rule refuses it, writes what it brings aside in `staging`; none when it
/// is gone (another sweep took it). A file that cannot be read is refused
/// with its reason as the report's one error.
async fn take_into(
    market: &ParquetMarketData,
    inbox: &dyn Inbox,
    staging: &mut Staging<'_>,
    name: &str,
    limit: u64,
    options: &Options,
) -> Result<Option<Pending>, PortError> {
    let (report, added, settle) = match inbox.open(name, limit).await? {
        Opened::Gone => return Ok(None),
        Opened::Refused {
            rule,
            reason,
            settle,
        } => (refusal(name, rule, 0, None, reason), 0, settle),
        Opened::File(source, id) => {
            let shown = name.to_string();
            let parsed = super::background::run(move || parse(&shown, source, limit)).await?;
            let (report, added) = match parsed {
                Ok(Parsed::Bars(parts, notes)) => {
                    let done =
                        super::ingest_into(market, staging, name, parts, notes, options).await?;
                    (done.report, done.added)
                }
                Ok(Parsed::Actions(actions)) => {
                    market.stage_actions(staging, actions).await?;
                    (Report::new(name), 0)
                }
                Err(e) => (refusal(name, "unreadable", e.line, e.column, e.message), 0),
            };
            (report, added, Settle::Move(id))
        }
    };
    Ok(Some(Pending {
        name: name.to_string(),
        report,
        added,
        settle,
    }))
}

/// Moves a taken file with its report; `generation`: the commit that
/// served it.
async fn settle(
    inbox: &dyn Inbox,
    p: Pending,
    generation: Option<u64>,
) -> Result<Taken, PortError> {
    let dir = if p.report.refused() {
        REJECTED
    } else {
        INGESTED
    };
    inbox
        .settle(&p.name, dir, p.settle, p.report.to_json())
        .await?;
    Ok(Taken {
        moved_to: format!("{dir}{}", p.name),
        name: p.name,
        report: p.report,
        added: p.added,
        generation,
    })
}

/// Imports the entry `name` of `inbox` (at most `limit` bytes), commits it
/// and moves it; none when it is gone (another sweep took it).
pub async fn take(
    market: &ParquetMarketData,
    inbox: &dyn Inbox,
    name: &str,
    limit: u64,
    options: &Options,
) -> Result<Option<Taken>, PortError> {
    let mut staging = market.staging();
    let Some(p) = take_into(market, inbox, &mut staging, name, limit, options).await? else {
        return Ok(None);
    };
    let generation = match p.report.refused() {
        true => None,
        false => Some(
            market
                .commit_with(staging, |step| options.at.call(step))
                .await?,
        ),
    };
    settle(inbox, p, generation).await.map(Some)
}

/// Takes every file waiting in `inbox`, in name order (a day's files sort
/// by date), as one import: what they bring is committed together, one
/// generation, and only then are they moved (a crash before leaves them
/// in `incoming/`, taken again by the next sweep). Refused files are moved
/// as they are found.
pub async fn sweep(
    market: &ParquetMarketData,
    inbox: &dyn Inbox,
    limit: u64,
    options: &Options,
) -> Result<Vec<Taken>, PortError> {
    let mut staging = market.staging();
    let mut done = Vec::new();
    let mut pending = Vec::new();
    for name in inbox.waiting().await? {
        let Some(p) = take_into(market, inbox, &mut staging, &name, limit, options).await? else {
            continue;
        };
        if p.report.refused() {
            done.push(settle(inbox, p, None).await?);
        } else {
            pending.push(p);
        }
    }
    let generation = match pending.is_empty() || staging.is_empty() {
        true => None,
        false => Some(
            market
                .commit_with(staging, |step| options.at.call(step))
                .await?,
        ),
    };
    for p in pending {
        done.push(settle(inbox, p, generation).await?);
    }
    done.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(done)
}
