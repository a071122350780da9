//! The mark a generated sample set leaves beside its symbol catalog: what
//! made it and its last session. The sample set ends on a fixed day, so it is
//! always behind the calendar; the mark lets a server tell that expected age
//! from real data that stopped arriving.

use crate::SampleConfig;
use chrono::NaiveDate;
use platform::PortError;
use platform::marketdata::{BlobStore, LocalDir};
use serde::{Deserialize, Serialize};

/// Where the mark is kept.
pub const KEY: &str = "reference/sample.json";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleMark {
    pub seed: u64,
    pub stocks: usize,
    /// The set's last session.
    pub last_session: NaiveDate,
}

/// Writes the mark of the set `config` made, ending on `last_session`.
pub(crate) fn write(
    config: &SampleConfig,
    last_session: NaiveDate,
    out: &LocalDir,
) -> Result<(), PortError> {
    let mark = SampleMark {
        seed: config.seed,
        stocks: config.stocks,
        last_session,
    };
    let json = serde_json::to_vec(&mark).map_err(PortError::internal)?;
    out.put_sync(KEY, &json)
}

/// The mark, while the data whose latest session is `latest` are still the
/// sample set: an import that brought a later session made them real data.
/// A missing or unreadable mark marks nothing.
pub async fn still_sample(
    blobs: &dyn BlobStore,
    latest: NaiveDate,
) -> Result<Option<SampleMark>, PortError> {
    let Some(bytes) = blobs.get(KEY).await? else {
        return Ok(None);
    };
    let mark: Option<SampleMark> = serde_json::from_slice(&bytes).ok();
    Ok(mark.filter(|m| m.last_session >= latest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_mark_holds_until_a_later_session_arrives() {
        let dir = tempfile::tempdir().unwrap();
        let out = LocalDir::new(dir.path());
        let d = |s: &str| s.parse::<NaiveDate>().unwrap();
        assert_eq!(still_sample(&out, d("2026-11-20")).await.unwrap(), None);
        write(&SampleConfig::default(), d("2026-11-20"), &out).unwrap();
        let mark = still_sample(&out, d("2026-11-20")).await.unwrap().unwrap();
        assert_eq!(
            (mark.seed, mark.stocks, mark.last_session),
            (crate::DEFAULT_SEED, crate::DEFAULT_STOCKS, d("2026-11-20"))
        );
        assert_eq!(still_sample(&out, d("2026-11-23")).await.unwrap(), None);
        out.put_sync(KEY, b"not json").unwrap();
        assert_eq!(still_sample(&out, d("2026-11-20")).await.unwrap(), None);
    }
}
