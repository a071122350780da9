//! Deterministic sample data set: every endpoint answers out of the box, and
//! the same seed always writes the same bytes. docs/sample-data.md explains
//! how each part is made.

mod company;
mod indicators;
pub mod mark;
mod options;
mod prices;
mod recessions;
mod reports;
mod rng;
pub mod schema;
pub mod table;
mod universe;

pub mod import;

pub use indicators::{sentiment_level, trend_score};
pub use prices::INTRADAY_BARS_PER_DAY;
pub use reports::REPORT_TYPES;

use arrow_array::RecordBatch;
use chrono::NaiveDate;
use engine::Bars;
use platform::PortError;
use platform::marketdata::codec::{self, to_parquet};
use platform::marketdata::{IndicatorMeta, LocalDir, SymbolInfo, layout};
use prices::FactorPaths;
use std::collections::BTreeSet;
use universe::{AssetSpec, SECTORS};

/// The full stock universe (the S&P 1500).
pub const FULL_UNIVERSE: usize = 1500;
/// The default universe: large enough for screens and scanners, small enough
/// that a first start takes seconds.
pub const DEFAULT_STOCKS: usize = 300;
pub const DEFAULT_SEED: u64 = 20_240_601;

#[derive(Debug, Clone)]
pub struct SampleConfig {
    pub seed: u64,
    pub stocks: usize,
    pub start: NaiveDate,
    pub end: NaiveDate,
    /// Sessions of 30-minute history for the intraday symbols.
    pub intraday_days: usize,
    /// At least this many underlyings carry an option chain: the stocks and
    /// ETFs, then as many option-only underlyings (tickers `X0000` on, no
    /// other data) as it takes. The option scanner's scale; 0 adds none.
    pub option_underlyings: usize,
    /// The indicator catalog topped up to at least this many entries, with
    /// more indicator families on the stocks, each with its daily series;
    /// 0 adds none.
    pub catalog_entries: usize,
    /// Of those, at least this many sentiment readings (type `optix`).
    pub sentiment_entries: usize,
}

/// The spec's sizes: 1,500 stocks, option chains on 4,200 underlyings and a
/// catalog of 22,100 indicators (the list shows 22k+) of which 6,284 are
/// sentiment readings.
pub const SPEC_STOCKS: usize = FULL_UNIVERSE;
pub const SPEC_OPTION_UNDERLYINGS: usize = 4_200;
pub const SPEC_CATALOG: usize = 22_100;
pub const SPEC_SENTIMENT: usize = 6_284;

impl SampleConfig {
    /// The spec-scale set (docs/sample-data.md#spec-scale).
    pub fn spec_scale(self) -> SampleConfig {
        SampleConfig {
            stocks: SPEC_STOCKS,
            option_underlyings: SPEC_OPTION_UNDERLYINGS,
            catalog_entries: SPEC_CATALOG,
            sentiment_entries: SPEC_SENTIMENT,
            ..self
        }
    }
}

impl Default for SampleConfig {
    fn default() -> Self {
        SampleConfig {
            seed: DEFAULT_SEED,
            stocks: DEFAULT_STOCKS,
            start: NaiveDate::from_ymd_opt(1990, 1, 2).expect("valid date"),
            end: NaiveDate::from_ymd_opt(2026, 11, 20).expect("valid date"),
            intraday_days: 250,
            option_underlyings: 0,
            catalog_entries: 0,
            sentiment_entries: 0,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub symbols: usize,
    pub indicators: usize,
    pub objects: usize,
    pub bytes: u64,
    pub latest_date: Option<NaiveDate>,
}

const INTRADAY_SYMBOLS: [&str; 6] = ["SPX", "NDX", "IVV", "XLK", "AAPL", "MSFT"];

fn group_of(spec: &AssetSpec) -> &'static str {
    match (spec.symbol.as_str(), spec.asset_class) {
        ("SPX" | "NDX" | "RUT", _) => "Core",
        ("HSI", _) => "International",
        (_, "stock") => "Stocks",
        (_, "commodity") => "Commodities",
        (_, "currency") => "Currencies",
        _ if spec.sector.is_some() => "Sectors",
        _ => "ETFs",
    }
}

/// What one worker thread produced.
#[derive(Default)]
struct Part {
    symbols: Vec<SymbolInfo>,
    catalog: Vec<IndicatorMeta>,
    tables: Vec<(&'static str, RecordBatch)>,
    objects: usize,
    bytes: u64,
}

struct Writer<'a> {
    out: &'a LocalDir,
    objects: usize,
    bytes: u64,
}

impl Writer<'_> {
    fn put(&mut self, key: &str, batch: &RecordBatch) -> Result<(), PortError> {
        let data = to_parquet(batch)?;
        self.objects += 1;
        self.bytes += data.len() as u64;
        self.out.put_sync(key, &data)
    }
}

/// Writes the whole sample set into `out`.
pub fn generate(config: &SampleConfig, out: &LocalDir) -> Result<Summary, PortError> {
    let dates = engine::calendar::sessions(config.start, config.end);
    if dates.len() < 300 {
        return Err(PortError::Invalid(
            "the sample range needs at least 300 sessions".into(),
        ));
    }
    let n = dates.len();
    let market = universe::market_assets();
    let stocks = universe::stocks(config.seed, config.stocks, n);
    let factors: Vec<_> = market
        .iter()
        .chain(&stocks)
        .flat_map(|s| s.loadings.iter().map(|(f, _)| *f))
        .collect::<std::collections::HashSet<_>>()
        .into_iter()
        .collect();
    let mut factors = factors;
    factors.sort_by_key(|f| format!("{f:?}"));
    let paths = FactorPaths::simulate(config.seed, n, &factors);

    // Market assets first: SPX is the benchmark of every relative series.
    let spx_spec = market
        .iter()
        .find(|s| s.symbol == "SPX")
        .expect("SPX is in the universe");
    let spx = bars_of(config.seed, spx_spec, &dates, &paths);
    let mut parts = vec![asset_part(config, &market, &dates, &paths, &spx, out)?];

    let threads = std::thread::available_parallelism()
        .map(|p| p.get())
        .unwrap_or(2)
        .clamp(1, 8);
    let chunk = stocks.len().div_ceil(threads).max(1);
    let stock_parts: Vec<Result<Part, PortError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = stocks
            .chunks(chunk)
            .map(|specs| scope.spawn(|| asset_part(config, specs, &dates, &paths, &spx, out)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("generator thread"))
            .collect()
    });
    for p in stock_parts {
        parts.push(p?);
    }
    let chained: usize = parts
        .iter()
        .flat_map(|p| &p.tables)
        .filter(|(name, _)| *name == "option_chains")
        .map(|(_, b)| options::underlyings(b))
        .sum();
    if config.option_underlyings > chained {
        let extra = config.option_underlyings - chained;
        parts.push(option_only(config, extra, &dates, &paths));
    }

    let mut w = Writer {
        out,
        objects: 0,
        bytes: 0,
    };
    let mut catalog: Vec<IndicatorMeta> = indicators::market_wide(config.seed, &spx)
        .into_iter()
        .map(|g| {
            w.put(
                &layout::indicator_series(&g.meta.url),
                &codec::series_to_batch(&g.series, false),
            )?;
            Ok(g.meta)
        })
        .collect::<Result<_, PortError>>()?;
    let mut symbols = Vec::new();
    let mut tables: Vec<(&'static str, Vec<RecordBatch>)> = Vec::new();
    for p in parts {
        symbols.extend(p.symbols);
        catalog.extend(p.catalog);
        w.objects += p.objects;
        w.bytes += p.bytes;
        for (name, batch) in p.tables {
            match tables.iter_mut().find(|(n, _)| *n == name) {
                Some((_, v)) => v.push(batch),
                None => tables.push((name, vec![batch])),
            }
        }
    }
    for (name, batches) in tables {
        let schema = batches[0].schema();
        let all =
            arrow_select::concat::concat_batches(&schema, &batches).map_err(PortError::internal)?;
        w.put(&layout::table(name), &all)?;
    }
    let latest = *dates.last().expect("sessions");
    w.put(
        &layout::table("reports"),
        &reports::reports(config.seed, latest),
    )?;
    w.put(
        &layout::table("fomc_dates"),
        &reports::fomc_dates(config.start.year(), latest),
    )?;
    w.put(
        &layout::table("us_recessions"),
        &recessions::us_recessions(),
    )?;

    // Spec scale: more families on the stocks until the catalog is as large
    // as asked, written as they are made, the stocks shared among threads.
    let sentiment = catalog.iter().filter(|m| m.kind == "optix").count();
    let more_sentiment = config.sentiment_entries.saturating_sub(sentiment);
    let more = config
        .catalog_entries
        .saturating_sub(catalog.len())
        .max(more_sentiment);
    if more > 0 && !stocks.is_empty() {
        let n = stocks.len();
        let share = |total: usize, k: usize| total / n + usize::from(k < total % n);
        let families: Vec<(usize, &AssetSpec, usize, usize)> = stocks
            .iter()
            .enumerate()
            .map(|(k, spec)| {
                let s = share(more_sentiment, k);
                (k, spec, s, share(more - more_sentiment, k))
            })
            .collect();
        let chunk = families.len().div_ceil(threads).max(1);
        let (dates, paths) = (&dates, &paths);
        let made: Vec<FamiliesMade> = std::thread::scope(|scope| {
            let handles: Vec<_> = families
                .chunks(chunk)
                .map(|c| {
                    scope.spawn(move || {
                        let mut w = Writer {
                            out,
                            objects: 0,
                            bytes: 0,
                        };
                        let mut metas = Vec::new();
                        for (_, spec, s, o) in c {
                            let bars = bars_of(config.seed, spec, dates, paths);
                            let group = group_of(spec);
                            for g in indicators::families(
                                config.seed,
                                &spec.symbol,
                                &spec.name,
                                group,
                                &bars,
                                (*s, *o),
                            ) {
                                w.put(
                                    &layout::indicator_series(&g.meta.url),
                                    &codec::series_to_batch(&g.series, false),
                                )?;
                                metas.push(g.meta);
                            }
                        }
                        Ok((metas, w.objects, w.bytes))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("generator thread"))
                .collect()
        });
        for m in made {
            let (metas, objects, bytes) = m?;
            catalog.extend(metas);
            w.objects += objects;
            w.bytes += bytes;
        }
    }

    symbols.sort_by(|a, b| a.symbol.cmp(&b.symbol));
    catalog.sort_by(|a, b| a.url.cmp(&b.url));
    let distinct: BTreeSet<&str> = catalog.iter().map(|m| m.url.as_str()).collect();
    if distinct.len() != catalog.len() {
        return Err(PortError::internal(
            "duplicate indicator codes in the sample set",
        ));
    }
    w.put(
        layout::INDICATOR_CATALOG,
        &codec::catalog_to_batch(&catalog),
    )?;
    mark::write(config, latest, out)?;
    // The symbol catalog goes last: its presence marks a complete data set.
    w.put(layout::SYMBOLS, &codec::symbols_to_batch(&symbols))?;
    Ok(Summary {
        symbols: symbols.len(),
        indicators: catalog.len(),
        objects: w.objects,
        bytes: w.bytes,
        latest_date: Some(latest),
    })
}

use chrono::Datelike;

/// One thread's extra indicators: their catalog entries, objects and bytes written.
type FamiliesMade = Result<(Vec<IndicatorMeta>, usize, u64), PortError>;

fn bars_of(seed: u64, spec: &AssetSpec, dates: &[NaiveDate], paths: &FactorPaths) -> Bars {
    let mut rng = rng::stream(seed, &format!("prices-{}", spec.symbol));
    let returns = prices::asset_returns(&mut rng, spec, paths);
    prices::daily_bars(&mut rng, spec, &returns, dates, paths)
}

/// The chains of `n` underlyings that have nothing else.
fn option_only(config: &SampleConfig, n: usize, dates: &[NaiveDate], paths: &FactorPaths) -> Part {
    let mut specs = universe::stocks(config.seed ^ 0x0F7_0000, n, dates.len());
    let mut chains = options::builder();
    for (k, spec) in specs.iter_mut().enumerate() {
        spec.symbol = format!("X{k:04}");
        let bars = bars_of(config.seed, spec, dates, paths);
        options::add_chain(&mut chains, config.seed, &spec.symbol, &bars);
    }
    Part {
        tables: vec![("option_chains", options::finish(chains))],
        ..Part::default()
    }
}

/// Prices, indicators and (for stocks) company tables and option chains of
/// `specs`, written as they are made so memory stays flat.
fn asset_part(
    config: &SampleConfig,
    specs: &[AssetSpec],
    dates: &[NaiveDate],
    paths: &FactorPaths,
    spx: &Bars,
    out: &LocalDir,
) -> Result<Part, PortError> {
    let seed = config.seed;
    let mut w = Writer {
        out,
        objects: 0,
        bytes: 0,
    };
    let mut part = Part::default();
    let mut company = company::CompanyTables::default();
    let mut chains = options::builder();
    for spec in specs {
        let bars = bars_of(seed, spec, dates, paths);
        w.put(
            &layout::daily_prices(&spec.symbol),
            &codec::bars_to_batch(&bars, false),
        )?;
        let intraday = if INTRADAY_SYMBOLS.contains(&spec.symbol.as_str()) {
            let mut rng = rng::stream(seed, &format!("intraday-{}", spec.symbol));
            let ib = prices::intraday_bars(&mut rng, &bars, config.intraday_days);
            w.put(
                &layout::intraday_prices(&spec.symbol),
                &codec::bars_to_batch(&ib, true),
            )?;
            Some(ib)
        } else {
            None
        };
        let stock = spec.asset_class == "stock";
        let short_name = spec.name.trim_end_matches(" Select Sector SPDR Fund");
        for g in indicators::for_symbol(
            seed,
            &spec.symbol,
            short_name,
            group_of(spec),
            &bars,
            spx,
            intraday.as_ref(),
            stock,
        ) {
            w.put(
                &layout::indicator_series(&g.meta.url),
                &codec::series_to_batch(&g.series, false),
            )?;
            if let Some(is) = &g.intraday {
                w.put(
                    &layout::indicator_intraday(&g.meta.url),
                    &codec::series_to_batch(is, true),
                )?;
            }
            part.catalog.push(g.meta);
        }
        if matches!(spec.symbol.as_str(), "SPX" | "NDX" | "RUT") {
            let g = indicators::seasonality_month(&spec.symbol, &spec.name, &bars);
            w.put(
                &layout::indicator_series(&g.meta.url),
                &codec::series_to_batch(&g.series, false),
            )?;
            part.catalog.push(g.meta);
        }
        if spec.asset_class == "commodity" {
            let g = indicators::hedger(seed, &spec.symbol, &spec.name, &bars);
            w.put(
                &layout::indicator_series(&g.meta.url),
                &codec::series_to_batch(&g.series, false),
            )?;
            part.catalog.push(g.meta);
        }
        if stock {
            company.add(seed, spec, &bars);
        }
        if stock || spec.asset_class == "etf" {
            options::add_chain(&mut chains, seed, &spec.symbol, &bars);
        }
        part.symbols.push(SymbolInfo {
            symbol: spec.symbol.clone(),
            name: spec.name.clone(),
            asset_class: spec.asset_class.into(),
            sector: spec.sector.map(|s| SECTORS[s].0.to_string()),
            industry: spec.industry.clone(),
            exchange: spec.exchange.map(str::to_string),
            universes: spec.universes.clone(),
            first_date: bars.date(0),
            last_date: bars.date(bars.len() - 1),
            has_intraday: intraday.is_some(),
        });
    }
    if specs.iter().any(|s| s.asset_class == "stock") {
        part.tables.extend(company.finish());
    }
    part.tables.push(("option_chains", options::finish(chains)));
    part.objects = w.objects;
    part.bytes = w.bytes;
    Ok(part)
}
