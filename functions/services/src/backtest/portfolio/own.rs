//! A caller's own daily bars per symbol, sent with a portfolio as
//! multipart parts `bars.<SYMBOL>` (each read as CSV mode reads one
//! symbol's bars: CSV text, Parquet or an Arrow stream). They are stored
//! once in the uploads store, named in the task's params by digest
//! (`own_bars`), and read before the stored data of the same name by the
//! universe and the benchmark alike: for this task only, and for nobody
//! else.

use crate::backtest::csv::{self, SIGNAL_COLUMNS, Upload};
use crate::{FieldError, Result};
use async_trait::async_trait;
use chrono::NaiveDate;
use engine::Bars;
use platform::PortError;
use platform::marketdata::{IndicatorMeta, IndicatorSeries, MarketData, RecordBatch, SymbolInfo};
use platform::uploads::Uploads;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Where a task's params name its own bars (symbol to the upload's summary).
pub const FIELD: &str = "own_bars";
/// The multipart part of a symbol's bars is this prefix and the symbol.
pub const PART: &str = "bars.";

/// Symbols' own bars, by symbol as the universe names them.
#[derive(Default)]
pub struct OwnBars {
    /// Each symbol's upload (what is stored) and its bars (what is read).
    sent: BTreeMap<String, (Arc<Upload>, Arc<Bars>)>,
}

impl OwnBars {
    /// The parts sent, each `(symbol, its bars)`: a symbol sent twice or
    /// one with signal columns (a portfolio reads prices only) is refused
    /// by its part.
    pub fn check(sent: Vec<(String, Upload)>) -> std::result::Result<OwnBars, FieldError> {
        let mut own = OwnBars::default();
        for (symbol, upload) in sent {
            let part = format!("{PART}{symbol}");
            if let Some((name, _)) = SIGNAL_COLUMNS
                .iter()
                .zip(&upload.signals)
                .find(|(_, v)| v.iter().any(|x| *x != 0.0))
            {
                return Err(FieldError::new(
                    part,
                    format!(
                        "column '{name}': a portfolio reads prices only (Date, Open, High, Low, Close, Volume)"
                    ),
                ));
            }
            if own.add(symbol, Arc::new(upload)).is_some() {
                return Err(FieldError::new(part, "is sent twice"));
            }
        }
        Ok(own)
    }

    /// Refuses bars no symbol of the portfolio reads: a misspelt part
    /// would otherwise leave the stored symbol in its place unnoticed.
    fn all_read(&self, p: &super::Prepared) -> std::result::Result<(), FieldError> {
        let benchmark = p.params.benchmark.as_deref().unwrap_or("SPX");
        match self
            .sent
            .keys()
            .find(|s| *s != benchmark && !p.params.universe.contains(s))
        {
            Some(s) => Err(FieldError::new(
                format!("{PART}{s}"),
                "is a symbol the universe and the benchmark do not name",
            )),
            None => Ok(()),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.sent.is_empty()
    }

    fn add(&mut self, symbol: String, upload: Arc<Upload>) -> Option<()> {
        let bars = Arc::new(upload.bars.clone());
        self.sent.insert(symbol, (upload, bars)).map(|_| ())
    }

    fn daily(&self, symbol: &str) -> Option<Arc<Bars>> {
        self.sent.get(symbol).map(|(_, b)| b.clone())
    }

    /// Stores each symbol's bars for `owner` and returns what the task's
    /// params keep under [`FIELD`]: each symbol's summary and digest.
    pub async fn store(&self, uploads: &Uploads, owner: &str) -> Result<Value> {
        let mut out = Map::new();
        for (symbol, (upload, _)) in &self.sent {
            let stored = uploads.put(owner, upload.clone()).await?;
            let mut summary = csv::summary(upload, &stored.digest, stored.bytes);
            if let Some(o) = summary.as_object_mut() {
                o.remove("signal_columns");
            }
            out.insert(symbol.clone(), summary);
        }
        Ok(Value::Object(out))
    }

    /// The own bars a task's params name, taken out of `params` (which is
    /// then the request as sent).
    pub async fn load(uploads: &Uploads, owner: &str, params: &mut Value) -> Result<OwnBars> {
        let Some(named) = params.as_object_mut().and_then(|o| o.remove(FIELD)) else {
            return Ok(OwnBars::default());
        };
        let mut own = OwnBars::default();
        for (symbol, summary) in named.as_object().into_iter().flatten() {
            let digest = summary["sha256"].as_str().unwrap_or_default();
            let upload = uploads.get(owner, digest).await?.ok_or_else(|| {
                crate::Error::NotFound(format!(
                    "the bars sent for {symbol} are gone; submit the portfolio again"
                ))
            })?;
            own.add(symbol.clone(), upload);
        }
        Ok(own)
    }
}

/// Checks a portfolio submit (`body` and the own bars `sent` with it)
/// against the data, their bars before the stored ones, and stores the
/// bars for `owner`: the params the task keeps, which name them by digest.
pub async fn accept(
    market: &dyn MarketData,
    uploads: &Uploads,
    owner: &str,
    body: Value,
    sent: Vec<(String, Upload)>,
) -> Result<Value> {
    let own = OwnBars::check(sent)?;
    let prepared = super::prepare(&WithOwn { market, own: &own }, &body).await?;
    if own.is_empty() {
        // Its job, in this process, runs it as checked here (rules that
        // read own bars are prepared again, on them).
        super::handed::hand(market.memo(), owner, &body, prepared);
        return Ok(body);
    }
    own.all_read(&prepared)?;
    let stored = own.store(uploads, owner).await?;
    let mut params = body;
    if let Some(o) = params.as_object_mut() {
        o.insert(FIELD.into(), stored);
    }
    Ok(params)
}

/// The market data with a task's own bars before the stored ones.
pub struct WithOwn<'a> {
    pub market: &'a dyn MarketData,
    pub own: &'a OwnBars,
}

#[async_trait]
impl MarketData for WithOwn<'_> {
    fn memo(&self) -> &platform::memo::Memo {
        self.market.memo()
    }

    async fn daily(&self, symbol: &str) -> std::result::Result<Arc<Bars>, PortError> {
        match self.own.daily(symbol) {
            Some(b) => Ok(b),
            None => self.market.daily(symbol).await,
        }
    }

    async fn daily_once(&self, symbol: &str) -> std::result::Result<Arc<Bars>, PortError> {
        match self.own.daily(symbol) {
            Some(b) => Ok(b),
            None => self.market.daily_once(symbol).await,
        }
    }

    async fn intraday(&self, symbol: &str) -> std::result::Result<Arc<Bars>, PortError> {
        self.market.intraday(symbol).await
    }

    async fn symbols(&self) -> std::result::Result<Arc<Vec<SymbolInfo>>, PortError> {
        self.market.symbols().await
    }

    async fn indicator_catalog(&self) -> std::result::Result<Arc<Vec<IndicatorMeta>>, PortError> {
        self.market.indicator_catalog().await
    }

    async fn indicator_series(
        &self,
        code: &str,
    ) -> std::result::Result<Arc<IndicatorSeries>, PortError> {
        self.market.indicator_series(code).await
    }

    async fn indicator_series_once(
        &self,
        code: &str,
    ) -> std::result::Result<Arc<IndicatorSeries>, PortError> {
        self.market.indicator_series_once(code).await
    }

    async fn indicator_tail(
        &self,
        code: &str,
    ) -> std::result::Result<Arc<IndicatorSeries>, PortError> {
        self.market.indicator_tail(code).await
    }

    async fn indicator_intraday(
        &self,
        code: &str,
    ) -> std::result::Result<Arc<IndicatorSeries>, PortError> {
        self.market.indicator_intraday(code).await
    }

    async fn table(&self, name: &str) -> std::result::Result<Arc<RecordBatch>, PortError> {
        self.market.table(name).await
    }

    /// The later of the store's latest session and the own bars' last:
    /// a portfolio of bars newer than the store's runs to their end.
    async fn latest_date(&self) -> std::result::Result<NaiveDate, PortError> {
        let own = self
            .own
            .sent
            .values()
            .filter_map(|(_, b)| (!b.is_empty()).then(|| b.date(b.len() - 1)));
        let latest = match self.market.latest_date().await {
            Ok(d) => Some(d),
            Err(PortError::NotFound(_)) => None,
            Err(e) => return Err(e),
        };
        latest
            .into_iter()
            .chain(own)
            .max()
            .ok_or_else(|| PortError::NotFound("market data (the store is empty)".into()))
    }
}
