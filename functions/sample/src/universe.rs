//! The symbols of the sample set and how each loads on the simulated factors.

use super::rng::{self, Rng};
use std::collections::HashSet;

/// Systematic drivers every asset return is built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Factor {
    Sector(usize),
    Size,
    Intl,
    Emerging,
    Asia,
    Rates,
    Credit,
    RealEstate,
    Gold,
    Commodity,
    Oil,
    Dollar,
}

/// Annual volatility of each non-market factor.
pub fn factor_vol(f: Factor) -> f64 {
    match f {
        Factor::Sector(_) => 0.10,
        Factor::Size => 0.08,
        Factor::Intl => 0.10,
        Factor::Emerging => 0.16,
        Factor::Asia => 0.18,
        Factor::Rates => 0.10,
        Factor::Credit => 0.05,
        Factor::RealEstate => 0.14,
        Factor::Gold => 0.15,
        Factor::Commodity => 0.16,
        Factor::Oil => 0.30,
        Factor::Dollar => 0.08,
    }
}

/// Whether a factor's volatility rises with the market's (risk-on factors do).
pub fn follows_market_vol(f: Factor) -> bool {
    matches!(
        f,
        Factor::Sector(_)
            | Factor::Size
            | Factor::Intl
            | Factor::Emerging
            | Factor::Asia
            | Factor::Credit
            | Factor::RealEstate
    )
}

pub const SECTORS: [(&str, &str); 11] = [
    ("Technology", "XLK"),
    ("Financials", "XLF"),
    ("Energy", "XLE"),
    ("Health Care", "XLV"),
    ("Industrials", "XLI"),
    ("Consumer Staples", "XLP"),
    ("Consumer Discretionary", "XLY"),
    ("Utilities", "XLU"),
    ("Materials", "XLB"),
    ("Real Estate", "XLRE"),
    ("Communication Services", "XLC"),
];

const SECTOR_BETAS: [f64; 11] = [1.2, 1.1, 1.0, 0.8, 1.05, 0.6, 1.1, 0.5, 1.0, 0.9, 1.0];

#[derive(Debug, Clone)]
pub struct AssetSpec {
    pub symbol: String,
    pub name: String,
    pub asset_class: &'static str,
    pub sector: Option<usize>,
    pub industry: Option<String>,
    pub exchange: Option<&'static str>,
    pub universes: Vec<String>,
    pub beta: f64,
    pub loadings: Vec<(Factor, f64)>,
    /// Annual idiosyncratic volatility.
    pub idio_vol: f64,
    /// Annual drift added to the factor returns.
    pub alpha: f64,
    pub start_price: f64,
    /// Average daily volume in shares (or contracts).
    pub volume: f64,
    /// Index into the session list of the first bar (later listings start later).
    pub first_session: usize,
}

#[allow(clippy::too_many_arguments)]
fn asset(
    symbol: &str,
    name: &str,
    class: &'static str,
    beta: f64,
    loadings: &[(Factor, f64)],
    idio: f64,
    price: f64,
    volume: f64,
) -> AssetSpec {
    AssetSpec {
        symbol: symbol.into(),
        name: name.into(),
        asset_class: class,
        sector: None,
        industry: None,
        exchange: None,
        universes: Vec::new(),
        beta,
        loadings: loadings.to_vec(),
        idio_vol: idio,
        alpha: 0.0,
        start_price: price,
        volume,
        first_session: 0,
    }
}

/// Indexes, the 18 cross-asset ETFs, sector ETFs and commodity futures.
pub fn market_assets() -> Vec<AssetSpec> {
    use Factor::*;
    let mut v = vec![
        asset("SPX", "S&P 500 Index", "index", 1.0, &[], 0.0, 353.4, 1.6e9),
        asset(
            "NDX",
            "Nasdaq-100 Index",
            "index",
            1.15,
            &[(Sector(0), 0.6)],
            0.03,
            223.8,
            1.1e9,
        ),
        asset(
            "RUT",
            "Russell 2000 Index",
            "index",
            1.1,
            &[(Size, 1.0)],
            0.02,
            168.3,
            9.0e8,
        ),
        asset(
            "HSI",
            "Hang Seng Index",
            "index",
            0.45,
            &[(Asia, 1.0)],
            0.05,
            2838.1,
            1.2e9,
        ),
        asset(
            "IVV",
            "iShares Core S&P 500 ETF",
            "etf",
            1.0,
            &[],
            0.005,
            35.3,
            4.0e6,
        ),
        asset(
            "IJH",
            "iShares Core S&P Mid-Cap ETF",
            "etf",
            1.08,
            &[(Size, 0.5)],
            0.02,
            12.1,
            1.5e6,
        ),
        asset(
            "IJR",
            "iShares Core S&P Small-Cap ETF",
            "etf",
            1.12,
            &[(Size, 1.0)],
            0.02,
            9.8,
            3.0e6,
        ),
        asset(
            "EFA",
            "iShares MSCI EAFE ETF",
            "etf",
            0.8,
            &[(Intl, 1.0)],
            0.03,
            30.2,
            1.8e7,
        ),
        asset(
            "SCZ",
            "iShares MSCI EAFE Small-Cap ETF",
            "etf",
            0.8,
            &[(Intl, 1.0), (Size, 0.4)],
            0.04,
            22.4,
            1.5e6,
        ),
        asset(
            "EEM",
            "iShares MSCI Emerging Markets ETF",
            "etf",
            0.85,
            &[(Emerging, 1.0)],
            0.04,
            18.7,
            3.0e7,
        ),
        asset(
            "AGG",
            "iShares Core U.S. Aggregate Bond ETF",
            "etf",
            -0.02,
            &[(Rates, 0.35)],
            0.01,
            62.0,
            6.0e6,
        ),
        asset(
            "SHY",
            "iShares 1-3 Year Treasury Bond ETF",
            "etf",
            -0.01,
            &[(Rates, 0.1)],
            0.004,
            51.0,
            2.5e6,
        ),
        asset(
            "IEF",
            "iShares 7-10 Year Treasury Bond ETF",
            "etf",
            -0.04,
            &[(Rates, 0.6)],
            0.01,
            55.0,
            5.0e6,
        ),
        asset(
            "TLT",
            "iShares 20+ Year Treasury Bond ETF",
            "etf",
            -0.08,
            &[(Rates, 1.35)],
            0.02,
            48.0,
            1.8e7,
        ),
        asset(
            "TIP",
            "iShares TIPS Bond ETF",
            "etf",
            0.02,
            &[(Rates, 0.5), (Commodity, 0.05)],
            0.01,
            58.0,
            2.0e6,
        ),
        asset(
            "LQD",
            "iShares iBoxx $ Investment Grade Corporate Bond ETF",
            "etf",
            0.05,
            &[(Rates, 0.7), (Credit, 0.3)],
            0.01,
            60.0,
            1.2e7,
        ),
        asset(
            "VNQ",
            "Vanguard Real Estate ETF",
            "etf",
            0.85,
            &[(RealEstate, 1.0), (Rates, 0.3)],
            0.03,
            24.0,
            4.0e6,
        ),
        asset(
            "GLD",
            "SPDR Gold Shares",
            "etf",
            0.02,
            &[(Gold, 1.0), (Dollar, -0.3), (Rates, 0.15)],
            0.01,
            40.0,
            8.0e6,
        ),
        asset(
            "DBC",
            "Invesco DB Commodity Index Tracking Fund",
            "etf",
            0.2,
            &[(Commodity, 1.0), (Oil, 0.2)],
            0.03,
            15.0,
            2.0e6,
        ),
        asset(
            "HYG",
            "iShares iBoxx $ High Yield Corporate Bond ETF",
            "etf",
            0.3,
            &[(Credit, 0.8), (Rates, 0.2)],
            0.02,
            45.0,
            2.5e7,
        ),
        asset(
            "USO",
            "United States Oil Fund",
            "etf",
            0.3,
            &[(Oil, 1.0), (Commodity, 0.4)],
            0.05,
            30.0,
            6.0e6,
        ),
        asset(
            "DXY",
            "U.S. Dollar Index",
            "currency",
            -0.05,
            &[(Dollar, 1.0)],
            0.01,
            93.5,
            0.0,
        ),
        asset(
            "GC",
            "Gold Futures",
            "commodity",
            0.0,
            &[(Gold, 1.0), (Dollar, -0.2)],
            0.02,
            400.0,
            2.0e5,
        ),
        asset(
            "SI",
            "Silver Futures",
            "commodity",
            0.15,
            &[(Gold, 1.1), (Commodity, 0.4)],
            0.12,
            5.2,
            8.0e4,
        ),
        asset(
            "CL",
            "Crude Oil Futures",
            "commodity",
            0.25,
            &[(Oil, 1.0), (Commodity, 0.3)],
            0.08,
            22.0,
            5.0e5,
        ),
        asset(
            "NG",
            "Natural Gas Futures",
            "commodity",
            0.1,
            &[(Commodity, 0.5)],
            0.45,
            2.1,
            3.0e5,
        ),
        asset(
            "HG",
            "Copper Futures",
            "commodity",
            0.35,
            &[(Commodity, 0.9)],
            0.12,
            1.1,
            9.0e4,
        ),
        asset(
            "ZC",
            "Corn Futures",
            "commodity",
            0.05,
            &[(Commodity, 0.6)],
            0.2,
            2.4,
            3.0e5,
        ),
        asset(
            "ZS",
            "Soybean Futures",
            "commodity",
            0.05,
            &[(Commodity, 0.6)],
            0.17,
            5.6,
            2.0e5,
        ),
        asset(
            "ZW",
            "Wheat Futures",
            "commodity",
            0.05,
            &[(Commodity, 0.6)],
            0.24,
            3.8,
            1.5e5,
        ),
    ];
    for (i, ((sector, etf), beta)) in SECTORS.iter().zip(SECTOR_BETAS).enumerate() {
        let mut a = asset(
            etf,
            &format!("{sector} Select Sector SPDR Fund"),
            "etf",
            beta,
            &[(Sector(i), 1.0)],
            0.02,
            20.0,
            8.0e6,
        );
        a.sector = Some(i);
        v.push(a);
    }
    for a in &mut v {
        a.exchange = Some(match a.asset_class {
            "index" | "currency" => "INDEX",
            "commodity" => "CME",
            _ => "NYSEARCA",
        });
        if a.asset_class == "etf" {
            a.universes.push("etf".into());
        }
        if a.asset_class == "commodity" {
            a.universes.push("commodity".into());
        }
    }
    v
}

/// Well-known tickers first, so examples read naturally; synthetic ones after.
const KNOWN: [(&str, &str, usize, &str); 60] = [
    ("AAPL", "Apple Inc.", 0, "NASDAQ"),
    ("MSFT", "Microsoft Corporation", 0, "NASDAQ"),
    ("NVDA", "NVIDIA Corporation", 0, "NASDAQ"),
    ("AMZN", "Amazon.com, Inc.", 6, "NASDAQ"),
    ("GOOGL", "Alphabet Inc.", 10, "NASDAQ"),
    ("META", "Meta Platforms, Inc.", 10, "NASDAQ"),
    ("TSLA", "Tesla, Inc.", 6, "NASDAQ"),
    ("JPM", "JPMorgan Chase & Co.", 1, "NYSE"),
    ("V", "Visa Inc.", 1, "NYSE"),
    ("JNJ", "Johnson & Johnson", 3, "NYSE"),
    ("XOM", "Exxon Mobil Corporation", 2, "NYSE"),
    ("PG", "The Procter & Gamble Company", 5, "NYSE"),
    ("UNH", "UnitedHealth Group Incorporated", 3, "NYSE"),
    ("HD", "The Home Depot, Inc.", 6, "NYSE"),
    ("MA", "Mastercard Incorporated", 1, "NYSE"),
    ("CVX", "Chevron Corporation", 2, "NYSE"),
    ("ABBV", "AbbVie Inc.", 3, "NYSE"),
    ("KO", "The Coca-Cola Company", 5, "NYSE"),
    ("PEP", "PepsiCo, Inc.", 5, "NASDAQ"),
    ("COST", "Costco Wholesale Corporation", 5, "NASDAQ"),
    ("WMT", "Walmart Inc.", 5, "NYSE"),
    ("BAC", "Bank of America Corporation", 1, "NYSE"),
    ("MRK", "Merck & Co., Inc.", 3, "NYSE"),
    ("AVGO", "Broadcom Inc.", 0, "NASDAQ"),
    ("ADBE", "Adobe Inc.", 0, "NASDAQ"),
    ("CSCO", "Cisco Systems, Inc.", 0, "NASDAQ"),
    ("CRM", "Salesforce, Inc.", 0, "NYSE"),
    ("NFLX", "Netflix, Inc.", 10, "NASDAQ"),
    ("AMD", "Advanced Micro Devices, Inc.", 0, "NASDAQ"),
    ("INTC", "Intel Corporation", 0, "NASDAQ"),
    ("ORCL", "Oracle Corporation", 0, "NYSE"),
    ("QCOM", "QUALCOMM Incorporated", 0, "NASDAQ"),
    ("TXN", "Texas Instruments Incorporated", 0, "NASDAQ"),
    (
        "IBM",
        "International Business Machines Corporation",
        0,
        "NYSE",
    ),
    ("WFC", "Wells Fargo & Company", 1, "NYSE"),
    ("GS", "The Goldman Sachs Group, Inc.", 1, "NYSE"),
    ("MS", "Morgan Stanley", 1, "NYSE"),
    ("C", "Citigroup Inc.", 1, "NYSE"),
    ("PFE", "Pfizer Inc.", 3, "NYSE"),
    ("LLY", "Eli Lilly and Company", 3, "NYSE"),
    ("TMO", "Thermo Fisher Scientific Inc.", 3, "NYSE"),
    ("ABT", "Abbott Laboratories", 3, "NYSE"),
    ("CAT", "Caterpillar Inc.", 4, "NYSE"),
    ("BA", "The Boeing Company", 4, "NYSE"),
    ("GE", "General Electric Company", 4, "NYSE"),
    ("HON", "Honeywell International Inc.", 4, "NASDAQ"),
    ("UPS", "United Parcel Service, Inc.", 4, "NYSE"),
    ("DE", "Deere & Company", 4, "NYSE"),
    ("MCD", "McDonald's Corporation", 6, "NYSE"),
    ("NKE", "NIKE, Inc.", 6, "NYSE"),
    ("SBUX", "Starbucks Corporation", 6, "NASDAQ"),
    ("DIS", "The Walt Disney Company", 10, "NYSE"),
    ("T", "AT&T Inc.", 10, "NYSE"),
    ("VZ", "Verizon Communications Inc.", 10, "NYSE"),
    ("NEE", "NextEra Energy, Inc.", 7, "NYSE"),
    ("DUK", "Duke Energy Corporation", 7, "NYSE"),
    ("SO", "The Southern Company", 7, "NYSE"),
    ("LIN", "Linde plc", 8, "NYSE"),
    ("AMT", "American Tower Corporation", 9, "NYSE"),
    ("PLD", "Prologis, Inc.", 9, "NYSE"),
];

const SYLLABLES: [&str; 24] = [
    "ar", "bel", "cor", "dan", "el", "fen", "gal", "hor", "ix", "jun", "kel", "lum", "mar", "nov",
    "or", "pax", "quin", "ros", "sol", "tar", "ul", "ven", "wex", "zen",
];
const SUFFIXES: [&str; 8] = [
    "Corporation",
    "Inc.",
    "Holdings, Inc.",
    "Group",
    "Technologies, Inc.",
    "Industries",
    "Systems, Inc.",
    "plc",
];
const INDUSTRIES: [[&str; 3]; 11] = [
    ["Software", "Semiconductors", "IT Services"],
    ["Banks", "Insurance", "Capital Markets"],
    [
        "Oil & Gas Exploration",
        "Oil & Gas Equipment",
        "Integrated Oil & Gas",
    ],
    ["Pharmaceuticals", "Biotechnology", "Medical Devices"],
    ["Aerospace & Defense", "Machinery", "Transportation"],
    ["Food Products", "Household Products", "Beverages"],
    ["Retail", "Automobiles", "Hotels & Restaurants"],
    ["Electric Utilities", "Gas Utilities", "Water Utilities"],
    ["Chemicals", "Metals & Mining", "Containers & Packaging"],
    ["REITs", "Real Estate Services", "Real Estate Development"],
    ["Media", "Telecom Services", "Interactive Media"],
];

/// `n` stocks: the well-known names first, then synthetic companies.
pub fn stocks(seed: u64, n: usize, sessions: usize) -> Vec<AssetSpec> {
    let mut rng = rng::stream(seed, "universe");
    let mut taken: HashSet<String> = market_assets().into_iter().map(|a| a.symbol).collect();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let (symbol, name, sector, exchange) = if let Some(&(s, nm, sec, ex)) = KNOWN.get(i) {
            (
                s.to_string(),
                nm.to_string(),
                sec,
                if ex == "NASDAQ" { "NASDAQ" } else { "NYSE" },
            )
        } else {
            let (s, nm) = synthetic_company(&mut rng, &mut taken);
            let ex = if rng::chance(&mut rng, 0.35) {
                "NASDAQ"
            } else {
                "NYSE"
            };
            (s, nm, rng::index(&mut rng, SECTORS.len()), ex)
        };
        taken.insert(symbol.clone());
        out.push(stock_spec(
            &mut rng, i, n, symbol, name, sector, exchange, sessions,
        ));
    }
    // Nasdaq-100: the largest NASDAQ listings among the S&P 500 part.
    let mut ndx = 0;
    for s in out.iter_mut() {
        if ndx < 100 && s.exchange == Some("NASDAQ") && s.universes.iter().any(|u| u == "sp500") {
            s.universes.push("nasdaq100".into());
            ndx += 1;
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn stock_spec(
    rng: &mut Rng,
    i: usize,
    n: usize,
    symbol: String,
    name: String,
    sector: usize,
    exchange: &'static str,
    sessions: usize,
) -> AssetSpec {
    let frac = i as f64 / n.max(1) as f64;
    let (index, size) = if frac < 1.0 / 3.0 {
        ("sp500", 0.0)
    } else if frac < 0.6 {
        ("sp400", 0.5)
    } else {
        ("sp600", 1.0)
    };
    let beta = (1.0 + 0.25 * rng::normal(rng)).clamp(0.35, 2.0) * SECTOR_BETAS[sector].sqrt();
    let sector_load = (0.8 + 0.2 * rng::normal(rng)).clamp(0.3, 1.3);
    // A third of the names list after 1990, at a random point in the first 25 years.
    let first_session = if i >= KNOWN.len() / 2 && rng::chance(rng, 0.33) {
        rng::index(rng, (sessions * 2 / 3).max(1))
    } else {
        0
    };
    AssetSpec {
        symbol,
        name,
        asset_class: "stock",
        sector: Some(sector),
        industry: Some(INDUSTRIES[sector][rng::index(rng, 3)].to_string()),
        exchange: Some(exchange),
        universes: vec![index.into(), "sp1500".into(), "russell3000".into()],
        beta,
        loadings: vec![(Factor::Sector(sector), sector_load), (Factor::Size, size)],
        idio_vol: rng::uniform(rng, 0.12, 0.30) * (1.0 + 0.3 * size),
        alpha: 0.03 * rng::normal(rng),
        start_price: (rng::normal(rng) * 0.8 + 3.2).exp().clamp(3.0, 400.0),
        volume: (rng::normal(rng) * 0.7 + 14.5 - size).exp(),
        first_session,
    }
}

/// A company name of syllables and a ticker from its first letters. The
/// syllables give only about 600 such tickers, fewer than the full universe
/// needs: after many collisions the ticker keeps two letters of the name and
/// draws two more.
fn synthetic_company(rng: &mut Rng, taken: &mut HashSet<String>) -> (String, String) {
    for attempt in 0.. {
        let parts = 2 + rng::index(rng, 2);
        let word: String = (0..parts)
            .map(|_| SYLLABLES[rng::index(rng, SYLLABLES.len())])
            .collect();
        let mut name = word.clone();
        name[..1].make_ascii_uppercase();
        let len = 3 + rng::index(rng, 2);
        let letters: String = word.chars().filter(|c| c.is_ascii_alphabetic()).collect();
        if letters.len() < len {
            continue;
        }
        let ticker = if attempt < 64 {
            letters[..len].to_ascii_uppercase()
        } else {
            let drawn: String = (0..2)
                .map(|_| (b'A' + rng::index(rng, 26) as u8) as char)
                .collect();
            format!("{}{drawn}", letters[..2].to_ascii_uppercase())
        };
        if taken.insert(ticker.clone()) {
            let suffix = SUFFIXES[rng::index(rng, SUFFIXES.len())];
            return (ticker, format!("{name} {suffix}"));
        }
    }
    unreachable!("the loop returns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_universe_has_distinct_tickers() {
        let all = stocks(crate::DEFAULT_SEED, crate::FULL_UNIVERSE, 9000);
        let distinct: HashSet<&str> = all.iter().map(|s| s.symbol.as_str()).collect();
        assert_eq!(distinct.len(), crate::FULL_UNIVERSE);
        assert!(
            all[KNOWN.len()..]
                .iter()
                .all(|s| (3..=4).contains(&s.symbol.len())
                    && s.symbol.bytes().all(|b| b.is_ascii_uppercase()))
        );
        assert!(
            market_assets()
                .iter()
                .all(|a| !distinct.contains(a.symbol.as_str()))
        );
    }
}
