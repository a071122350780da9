//! Pattern matching (CPM): find the windows of a price series whose closes
//! correlate with a template (a date range of the series itself, or one of
//! the predefined shapes), and backtest holding after each.

pub mod matches;
pub mod search;
pub mod shapes;
pub mod trades;

pub use matches::{Criteria, Match, ma_filter, select, windows};
pub use search::{Template, sliding_corr, sliding_corr_into};
pub use shapes::{SHAPES, Shape, shape, window_lengths};
pub use trades::{MarketLabels, Summary, Trade, summary, trade};
