//! US business-cycle recessions as the NBER dates them (peak and trough
//! months since 1948): public reference data, not simulated. The pattern
//! matcher labels trades entered inside one `Rec`.

use super::schema;
use super::table::TableBuilder;
use crate::row;
use arrow_array::RecordBatch;
use chrono::NaiveDate;

/// (peak, trough) as (year, month).
const NBER: [((i32, u32), (i32, u32)); 12] = [
    ((1948, 11), (1949, 10)),
    ((1953, 7), (1954, 5)),
    ((1957, 8), (1958, 4)),
    ((1960, 4), (1961, 2)),
    ((1969, 12), (1970, 11)),
    ((1973, 11), (1975, 3)),
    ((1980, 1), (1980, 7)),
    ((1981, 7), (1982, 11)),
    ((1990, 7), (1991, 3)),
    ((2001, 3), (2001, 11)),
    ((2007, 12), (2009, 6)),
    ((2020, 2), (2020, 4)),
];

/// `peak` and `trough` as the first days of their months.
pub fn us_recessions() -> RecordBatch {
    let first = |(y, m): (i32, u32)| NaiveDate::from_ymd_opt(y, m, 1).expect("valid month");
    let mut t = TableBuilder::new(schema::US_RECESSIONS);
    for (peak, trough) in NBER {
        t.push(row![first(peak), first(trough)]);
    }
    t.finish()
}
