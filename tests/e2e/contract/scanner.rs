//! What every scanner store promises: a date's items read back to the bit,
//! a re-run replaces its date whole, other readers see writes once their
//! cache time is up, and the dates list in order.

use chrono::NaiveDate;
use engine::scanner::stats::{ExitReason, Figures};
use engine::scanner::{Direction, signal};
use platform::scanner::{HistoryMonth, Reading, ScanDay, ScanRow, ScanTrade, ScannerStore};

fn date(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

/// A day of `n` items with trades of every exit reason.
pub fn day(on: &str, n: usize, salt: f64) -> ScanDay {
    let names = ["MA", "Hammer", "Optix #3", "Symbol 52-Week Low"];
    let rows = (0..n)
        .map(|i| {
            let name = names[i % names.len()];
            let trades: Vec<ScanTrade> = (0..i % 5)
                .map(|k| ScanTrade {
                    entry_date: date("2020-01-02") + chrono::Days::new(30 * k as u64),
                    exit_date: date("2020-01-09") + chrono::Days::new(30 * k as u64),
                    entry_price: 100.0 + k as f64 / 3.0,
                    exit_price: 101.0 + salt,
                    ret: (k as f64 - 1.5) / 7.0,
                    reason: [
                        ExitReason::TimeIsUp,
                        ExitReason::ProfitTarget,
                        ExitReason::StopLoss,
                    ][k % 3],
                })
                .collect();
            ScanRow {
                symbol: format!("S{i:04}"),
                signal: name.into(),
                horizon: signal(name).unwrap().horizon(),
                reading: Reading {
                    direction: if i % 2 == 0 {
                        Direction::Long
                    } else {
                        Direction::Short
                    },
                    close: 50.0 + i as f64 / 7.0 + salt,
                    profit_target: 4.0 + 1.0 / 3.0,
                    stop_loss: 3.25,
                    time_in_market: signal(name).unwrap().horizon().hold() as u32,
                    figures: Figures {
                        trade_number: trades.len(),
                        win_rate: 100.0 / 3.0,
                        avg_win: 0.1 + salt,
                        avg_loss: -0.2,
                        avg_return: 1e-12,
                        median_return: -0.0,
                        std_dev: f64::MAX,
                        annual_return: 1e300,
                        max_risk: 12.5,
                        sharpe_ratio: -1.25,
                        z_score: 0.5,
                        expected_return: 0.75,
                        avg_hold: 4.2,
                    },
                    trend_score: (i % 3 != 0).then_some(7.0),
                    rel_trend_score: Some(3.0),
                    optix: (i % 4 != 2).then_some(41.5 + i as f64),
                },
                market: "Uptrend".into(),
                trades,
            }
        })
        .collect();
    ScanDay {
        date: date(on),
        rows,
    }
}

/// The day as `day` answers it: the items without their trade lists.
fn summary(day: &ScanDay) -> ScanDay {
    let mut s = day.clone();
    for r in &mut s.rows {
        r.trades.clear();
    }
    s
}

/// Reads `day` back from `store` and checks the trade lists of some rows.
async fn same(store: &dyn ScannerStore, day: &ScanDay) {
    let got = store.day(day.date).await.unwrap().unwrap();
    assert!(*got == summary(day), "the items of {} differ", day.date);
    let n = day.rows.len();
    if n == 0 {
        assert!(store.trades(&got, &[]).await.unwrap().is_empty());
        return;
    }
    // Scattered rows in any order, a repeat, and one contiguous run.
    let rows: Vec<usize> = [n - 1, 0, n / 2, n / 2 + 1, n / 3, 0]
        .into_iter()
        .filter(|r| *r < n)
        .collect();
    let lists = store.trades(&got, &rows).await.unwrap();
    for (r, list) in rows.iter().zip(&lists) {
        assert_eq!(*list, day.rows[*r].trades, "row {r}");
    }
    let all: Vec<usize> = (0..n).collect();
    let lists = store.trades(&got, &all).await.unwrap();
    assert!(lists.iter().zip(&day.rows).all(|(l, r)| *l == r.trades));
    assert!(store.trades(&got, &[n]).await.is_err());
}

/// `fresh` opens another reader over the same storage with no cache time,
/// as another process (a second function instance) would see it.
pub async fn run_all(store: &dyn ScannerStore, fresh: &dyn ScannerStore) {
    assert!(store.dates().await.unwrap().is_empty());
    assert_eq!(store.day(date("2026-11-20")).await.unwrap(), None);

    let first = day("2026-11-20", 300, 0.0);
    store.put(first.clone()).await.unwrap();
    same(store, &first).await;
    same(fresh, &first).await;
    let old = fresh.day(first.date).await.unwrap().unwrap();

    // Re-running a date replaces it whole, here and for other readers.
    let again = day("2026-11-20", 7, 0.5);
    store.put(again.clone()).await.unwrap();
    same(store, &again).await;
    same(fresh, &again).await;
    // Trade lists asked by a reader holding the replaced version: refused
    // (a retry reads the new one), never another item's trades.
    assert!(matches!(
        fresh.trades(&old, &[150, 299]).await,
        Err(platform::PortError::Unavailable { .. } | platform::PortError::Invalid(_))
    ));

    // Dates in order, whoever wrote them; an empty day is still a scan.
    let earlier = day("2026-11-19", 0, 0.0);
    fresh.put(earlier.clone()).await.unwrap();
    store.put(day("2025-01-02", 1, 0.0)).await.unwrap();
    assert_eq!(
        *fresh.dates().await.unwrap(),
        vec![date("2025-01-02"), date("2026-11-19"), date("2026-11-20")]
    );
    same(store, &earlier).await;
    // A reader sees its own writes at once (another's once its cache time is up).
    let seen = store.dates().await.unwrap();
    assert!(seen.contains(&date("2025-01-02")) && seen.contains(&date("2026-11-20")));
    assert!(seen.is_sorted());
    assert_eq!(fresh.day(date("2026-11-21")).await.unwrap(), None);

    history(store, fresh).await;
}

/// The history: `put` recorded each day above; months merge session by
/// session, a re-recorded session is replaced whole, and an item reads back
/// to the bit.
async fn history(store: &dyn ScannerStore, fresh: &dyn ScannerStore) {
    let nov = fresh.history(date("2026-11-01")).await.unwrap().unwrap();
    assert_eq!(nov.sessions, vec![date("2026-11-19"), date("2026-11-20")]);
    assert_eq!(
        nov,
        HistoryMonth::of_day(&day("2026-11-20", 7, 0.5)).merged(HistoryMonth::of_day(&day(
            "2026-11-19",
            0,
            0.0
        )))
    );
    assert_eq!(nov.items.len(), 7);
    let it = &nov.items[3];
    assert_eq!(&*nov.symbols[it.symbol as usize], "S0003");
    assert_eq!(
        engine::scanner::SIGNALS[it.signal as usize].name,
        "Symbol 52-Week Low"
    );
    assert_eq!(it.figures.std_dev, f64::MAX);
    assert_eq!(it.figures.median_return.to_bits(), (-0.0f64).to_bits());
    let row = &day("2026-11-20", 7, 0.5).rows[3];
    assert_eq!(
        (it.optix, it.trend_score, it.rel_trend_score, it.close),
        (row.optix, row.trend_score, row.rel_trend_score, row.close)
    );
    assert_eq!(
        store
            .history(date("2025-01-01"))
            .await
            .unwrap()
            .unwrap()
            .items
            .len(),
        1
    );
    assert_eq!(store.history(date("2026-10-01")).await.unwrap(), None);

    // A backfill of several sessions at once keeps the month's others and
    // replaces its own.
    let mut backfill = HistoryMonth::of_day(&day("2026-11-18", 3, 0.25))
        .merged(HistoryMonth::of_day(&day("2026-11-19", 2, 0.25)));
    backfill.sessions.sort();
    fresh.put_history(backfill.clone()).await.unwrap();
    let nov = store.history(date("2026-11-01")).await.unwrap().unwrap();
    assert_eq!(
        nov.sessions,
        vec![date("2026-11-18"), date("2026-11-19"), date("2026-11-20")]
    );
    let on = |k: u32| nov.items.iter().filter(|i| i.session == k).count();
    assert_eq!((on(0), on(1), on(2)), (3, 2, 7));
    assert!(nov.items.is_sorted_by_key(|i| i.session));
    // Sessions of two months at once are refused, naming nothing written.
    let mut two = HistoryMonth::of_day(&day("2026-10-30", 1, 0.0));
    two.sessions.push(date("2026-11-02"));
    assert!(store.put_history(two).await.is_err());
    assert_eq!(store.history(date("2026-10-01")).await.unwrap(), None);
}
