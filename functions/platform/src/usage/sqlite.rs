//! Usage counters in the embedded database: one row per account, day and
//! counter, added to with an upsert.

use super::{Count, DateSpan, UsageDay, UsageStore};
use crate::sqlite::Database;
use crate::{PortError, PortResult};
use async_trait::async_trait;
use chrono::NaiveDate;
use rusqlite::params;

pub struct SqliteUsageStore {
    db: Database,
}

impl SqliteUsageStore {
    pub fn new(db: Database) -> Self {
        SqliteUsageStore { db }
    }
}

#[async_trait]
impl UsageStore for SqliteUsageStore {
    async fn add(&self, counts: &[Count]) -> Result<(), PortError> {
        let counts = counts.to_vec();
        self.db
            .run(move |c| {
                let tx = c.transaction()?;
                {
                    let mut stmt = tx.prepare_cached(
                        "INSERT INTO usage (account, day, counter, n) VALUES (?1, ?2, ?3, ?4)
                         ON CONFLICT (account, day, counter) DO UPDATE SET n = n + excluded.n",
                    )?;
                    for k in &counts {
                        stmt.execute(params![
                            k.account,
                            k.day.to_string(),
                            k.counter,
                            i64::try_from(k.n).unwrap_or(i64::MAX)
                        ])?;
                    }
                }
                tx.commit()
            })
            .await
    }

    async fn days(&self, account: &str, span: DateSpan) -> PortResult<Vec<UsageDay>> {
        let (from, to) = (*span.start(), *span.end());
        let account = account.to_string();
        let rows: Vec<(String, String, i64)> = self
            .db
            .run(move |c| {
                let mut stmt = c.prepare_cached(
                    "SELECT day, counter, n FROM usage
                     WHERE account = ?1 AND day >= ?2 AND day <= ?3 ORDER BY day, counter",
                )?;
                stmt.query_map(params![account, from.to_string(), to.to_string()], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?
                .collect()
            })
            .await?;
        let mut out: Vec<UsageDay> = Vec::new();
        for (day, counter, n) in rows {
            let day: NaiveDate = day
                .parse()
                .map_err(|e| PortError::fault(format!("usage day '{day}'"), e))?;
            if out.last().is_none_or(|d| d.day != day) {
                out.push(UsageDay {
                    day,
                    counters: Default::default(),
                });
            }
            let last = out.last_mut().expect("pushed");
            last.counters.insert(counter, n.max(0) as u64);
        }
        Ok(out)
    }
}
