//! Company data for the stock universe: profiles, statements, earnings, news,
//! filings, holders, insider trades, ratings, price targets and predictions.
//! Fundamentals are scaled to the simulated market value so ratios are plausible.

use super::rng::{self, Rng};
use super::schema;
use super::table::TableBuilder;
use super::universe::{AssetSpec, SECTORS};
use crate::row;
use arrow_array::RecordBatch;
use chrono::{Datelike, Duration, NaiveDate};
use engine::Bars;

const FIRST_NAMES: [&str; 16] = [
    "Alex", "Morgan", "Jordan", "Taylor", "Casey", "Riley", "Jamie", "Avery", "Quinn", "Parker",
    "Drew", "Reese", "Sydney", "Rowan", "Elliot", "Hayden",
];
const LAST_NAMES: [&str; 16] = [
    "Whitfield",
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Castillo",
    "Nakamura",
    "Brennan",
    "Hollis",
    "Abernathy",
    "Sato",
    "Delgado",
    "Fairbanks",
    "Kowalski",
    "Ashford",
    "Mercer",
    "Vance",
];
const INSTITUTIONS: [&str; 15] = [
    "Harborview Capital Management",
    "Northgate Asset Management",
    "Summit Ridge Advisors",
    "Bluewater Investment Partners",
    "Granite Peak Capital",
    "Evergreen Index Trust",
    "Crescent Bay Holdings",
    "Ironwood Global Investors",
    "Lakeshore Pension Fund",
    "Meridian Capital Group",
    "Silverline Asset Management",
    "Redwood Equity Partners",
    "Atlas Point Advisors",
    "Brightwater Wealth",
    "Keystone Investment Trust",
];
const FUNDS: [&str; 12] = [
    "Total Market Index Fund",
    "500 Index Fund",
    "Growth Index Fund",
    "Value Index Fund",
    "Dividend Appreciation Fund",
    "Mid-Cap Index Fund",
    "Balanced Index Fund",
    "Institutional Index Fund",
    "Extended Market Fund",
    "Quality Factor Fund",
    "Momentum Factor Fund",
    "Sector Select Fund",
];
const HEADLINES: [&str; 12] = [
    "{n} reports quarterly results ahead of expectations",
    "{n} shares move after analyst update",
    "{n} announces new product line",
    "{n} expands buyback program",
    "Analysts weigh {n}'s guidance for the coming year",
    "{n} names new chief financial officer",
    "{n} completes acquisition in {i}",
    "What {n}'s latest filing says about margins",
    "{n} raises dividend",
    "{n} faces supply constraints, management says",
    "Institutional investors add to {n} positions",
    "{n} to present at industry conference",
];

fn person(rng: &mut Rng) -> String {
    format!(
        "{} {}",
        FIRST_NAMES[rng::index(rng, 16)],
        LAST_NAMES[rng::index(rng, 16)]
    )
}

fn quarter_end(year: i32, q: u32) -> NaiveDate {
    let (m, d) = [(3, 31), (6, 30), (9, 30), (12, 31)][q as usize];
    NaiveDate::from_ymd_opt(year, m, d).expect("valid quarter end")
}

/// Close on or before `date`.
fn close_on(bars: &Bars, date: NaiveDate) -> f64 {
    let i = bars.time.partition_point(|t| t.date() <= date);
    bars.close[i.saturating_sub(1).min(bars.len() - 1)]
}

fn r2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

pub struct CompanyTables {
    profiles: TableBuilder,
    metrics: TableBuilder,
    income: TableBuilder,
    balance: TableBuilder,
    cash: TableBuilder,
    earnings: TableBuilder,
    news: TableBuilder,
    filings: TableBuilder,
    institutions: TableBuilder,
    funds: TableBuilder,
    insiders: TableBuilder,
    ratings: TableBuilder,
    targets: TableBuilder,
    predictions: TableBuilder,
}

impl Default for CompanyTables {
    fn default() -> Self {
        CompanyTables {
            profiles: TableBuilder::new(schema::PROFILES),
            metrics: TableBuilder::new(schema::KEY_METRICS),
            income: TableBuilder::new(schema::INCOME_STATEMENTS),
            balance: TableBuilder::new(schema::BALANCE_SHEETS),
            cash: TableBuilder::new(schema::CASH_FLOWS),
            earnings: TableBuilder::new(schema::EARNINGS),
            news: TableBuilder::new(schema::NEWS),
            filings: TableBuilder::new(schema::SEC_FILINGS),
            institutions: TableBuilder::new(schema::INSTITUTIONAL_HOLDERS),
            funds: TableBuilder::new(schema::FUND_HOLDERS),
            insiders: TableBuilder::new(schema::INSIDER_TRADES),
            ratings: TableBuilder::new(schema::ANALYST_RATINGS),
            targets: TableBuilder::new(schema::PRICE_TARGETS),
            predictions: TableBuilder::new(schema::PREDICTIONS),
        }
    }
}

impl CompanyTables {
    pub fn add(&mut self, seed: u64, spec: &AssetSpec, bars: &Bars) {
        if bars.is_empty() {
            return;
        }
        let mut rng = rng::stream(seed, &format!("company-{}", spec.symbol));
        let sym = spec.symbol.as_str();
        let latest = bars.date(bars.len() - 1);
        let last_close = bars.close[bars.len() - 1];
        let sector = spec.sector.map(|s| SECTORS[s].0).unwrap_or("Diversified");
        let industry = spec.industry.clone().unwrap_or_default();
        let big = spec.universes.iter().any(|u| u == "sp500");
        let shares = (rng::normal(&mut rng) * 0.6 + if big { 21.0 } else { 18.5 })
            .exp()
            .round();
        let market_cap = shares * last_close;
        let ps = rng::uniform(&mut rng, 0.8, 7.0);
        let growth = (0.07 + 0.08 * rng::normal(&mut rng)).clamp(-0.15, 0.4);
        let gross_m = rng::uniform(&mut rng, 0.22, 0.72);
        let op_m = (gross_m - rng::uniform(&mut rng, 0.05, 0.25)).max(0.02);
        let pays_dividend = rng::chance(&mut rng, 0.7);
        let div_yield = if pays_dividend {
            rng::uniform(&mut rng, 0.004, 0.045)
        } else {
            0.0
        };
        let asset_mult = rng::uniform(&mut rng, 0.8, 2.5);
        let equity_share = rng::uniform(&mut rng, 0.3, 0.6);
        let firm = Firm {
            sym,
            gross_m,
            op_m,
            shares,
            asset_mult,
            equity_share,
        };

        self.profiles.push(row![
            sym, spec.name.as_str(), spec.exchange.unwrap_or("NYSE"), sector, industry.as_str(),
            format!("{} operates in the {} industry within the {} sector, serving customers in North America and abroad.", spec.name, industry.to_lowercase(), sector.to_lowercase()),
            person(&mut rng), format!("https://www.{}.example.com", sym.to_lowercase()), "US",
            (shares / 50_000.0).round().max(50.0) as i64, bars.date(0),
        ]);

        // Statements: eight fiscal years and twenty quarters, revenue growing back
        // from today's level implied by the price-to-sales ratio.
        let revenue_now = market_cap / ps;
        let year_now = latest.year() - if latest.month() < 3 { 2 } else { 1 };
        let mut annual_eps = Vec::new();
        for k in (0..8).rev() {
            let year = year_now - k;
            let rev = revenue_now / (1.0 + growth).powi(k) * (1.0 + 0.03 * rng::normal(&mut rng));
            let end = quarter_end(year, 3);
            let eps = self.statement(&mut rng, &firm, "annual", end, rev, div_yield * market_cap);
            annual_eps.push(eps);
        }
        let mut quarters = Vec::new();
        let mut q_end = quarter_end(latest.year(), latest.month0() / 3);
        if q_end + Duration::days(35) > latest {
            q_end = prev_quarter(q_end);
        }
        for _ in 0..20 {
            quarters.push(q_end);
            q_end = prev_quarter(q_end);
        }
        quarters.reverse();
        let n_q = quarters.len() as i32;
        for (k, end) in quarters.iter().enumerate() {
            let back = (n_q - 1 - k as i32) as f64 / 4.0;
            let rev = revenue_now / 4.0 / (1.0 + growth).powf(back)
                * (1.0 + 0.05 * rng::normal(&mut rng));
            let eps = self.statement(
                &mut rng,
                &firm,
                "quarter",
                *end,
                rev,
                div_yield * market_cap / 4.0,
            );
            let report = *end + Duration::days(25 + rng::index(&mut rng, 15) as i64);
            let surprise = 0.06 * rng::normal(&mut rng);
            self.earnings.push(row![
                sym,
                *end,
                report,
                r2(eps),
                r2(eps / (1.0 + surprise)),
                rev.round(),
                (rev * (1.0 - 0.03 * rng::normal(&mut rng))).round()
            ]);
        }
        let next = next_quarter(*quarters.last().expect("20 quarters"));
        let last_rev = revenue_now / 4.0 * (1.0 + growth / 4.0);
        self.earnings.push(row![
            sym,
            next,
            next + Duration::days(30),
            None::<f64>,
            r2(annual_eps.last().copied().unwrap_or(1.0) / 4.0 * (1.0 + growth / 4.0)),
            None::<f64>,
            last_rev.round()
        ]);

        let eps_ttm = annual_eps.last().copied().unwrap_or(1.0);
        let eps_prev = annual_eps
            .get(annual_eps.len().wrapping_sub(2))
            .copied()
            .unwrap_or(eps_ttm);
        let equity = revenue_now * asset_mult * equity_share;
        let net_income = eps_ttm * shares;
        let ebitda = revenue_now * op_m * 1.2;
        let cash = revenue_now * asset_mult * 0.35 * 0.3;
        let debt = revenue_now * asset_mult * (1.0 - equity_share) * 0.45 * 1.15;
        let ev = market_cap + debt - cash;
        let fcf = net_income * 1.2 - revenue_now * 0.06;
        self.metrics.push(row![
            sym,
            latest,
            shares,
            market_cap.round(),
            r2(last_close / eps_ttm),
            r2(market_cap / equity),
            r2(ps),
            r2(ev / revenue_now),
            r2(ev / ebitda),
            r2(spec.beta),
            r2(net_income / equity * 100.0) / 100.0,
            r2(0.35 / (0.4 * (1.0 - equity_share) / equity_share).max(0.1)),
            r2(fcf / market_cap * 100.0) / 100.0,
            r2(div_yield * 100.0) / 100.0,
            if eps_ttm > 0.0 {
                r2(div_yield * last_close / eps_ttm * 100.0) / 100.0
            } else {
                0.0
            },
            r2((eps_ttm / eps_prev - 1.0) * 100.0),
        ]);

        // News and filings over the last year.
        let n_news = 50 + rng::index(&mut rng, 20);
        for k in 0..n_news {
            let day = latest - Duration::days(rng::index(&mut rng, 365) as i64);
            let at = day
                .and_hms_opt(
                    6 + rng::index(&mut rng, 14) as u32,
                    rng::index(&mut rng, 60) as u32,
                    0,
                )
                .expect("valid time");
            let title = HEADLINES[rng::index(&mut rng, HEADLINES.len())]
                .replace("{n}", &spec.name)
                .replace("{i}", &industry.to_lowercase());
            let source = [
                "Market Wire",
                "Daily Ledger",
                "Street Journal",
                "Finance Desk",
            ][rng::index(&mut rng, 4)];
            self.news.push(row![
                sym,
                at,
                title,
                format!("https://news.example.com/{}/{}", sym.to_lowercase(), k + 1),
                source
            ]);
        }
        let edgar = |t: &str| {
            format!("https://www.sec.gov/cgi-bin/browse-edgar?action=getcompany&CIK={sym}&type={t}")
        };
        for (k, end) in quarters.iter().enumerate() {
            let (kind, desc) = if end.month() == 12 {
                ("10-K", "Annual report")
            } else {
                ("10-Q", "Quarterly report")
            };
            let filed = *end + Duration::days(30 + (k % 10) as i64);
            if filed <= latest {
                self.filings.push(row![sym, kind, filed, edgar(kind), desc]);
            }
        }
        for _ in 0..(20 + rng::index(&mut rng, 15)) {
            let filed = latest - Duration::days(rng::index(&mut rng, 900) as i64);
            let (kind, desc) = [
                ("8-K", "Current report"),
                ("4", "Statement of changes in beneficial ownership"),
                ("SC 13G", "Beneficial ownership report"),
                ("DEF 14A", "Definitive proxy statement"),
            ][rng::index(&mut rng, 4)];
            self.filings.push(row![sym, kind, filed, edgar(kind), desc]);
        }

        // Holders as of the last quarter end, largest first.
        let reported = *quarters.last().expect("quarters");
        for (table, names, share) in [
            (&mut self.institutions, &INSTITUTIONS[..], 0.09),
            (&mut self.funds, &FUNDS[..], 0.03),
        ] {
            let mut weights: Vec<f64> = (0..names.len())
                .map(|_| rng::uniform(&mut rng, 0.2, 1.0))
                .collect();
            weights.sort_by(|a, b| b.total_cmp(a));
            let start = rng::index(&mut rng, names.len());
            for (k, w) in weights.iter().enumerate() {
                let holder = names[(start + k) % names.len()];
                table.push(row![
                    sym,
                    reported,
                    holder,
                    (shares * share * w).round(),
                    r2(5.0 * rng::normal(&mut rng))
                ]);
            }
        }
        for _ in 0..(8 + rng::index(&mut rng, 12)) {
            let day = latest - Duration::days(rng::index(&mut rng, 730) as i64);
            let kind = if rng::chance(&mut rng, 0.3) {
                "Buy"
            } else {
                "Sell"
            };
            self.insiders.push(row![
                sym,
                day,
                person(&mut rng),
                kind,
                (rng::uniform(&mut rng, 1.0, 60.0) * 1000.0).round(),
                r2(close_on(bars, day))
            ]);
        }

        // Monthly rating counts and price targets for two years; a prediction now.
        let analysts = 8 + rng::index(&mut rng, 30);
        let tilt = rng::normal(&mut rng);
        for m in (0..24).rev() {
            let day = latest - Duration::days(30 * m);
            let mut counts = [0i64; 5];
            for _ in 0..analysts {
                let x = (tilt + rng::normal(&mut rng)) * 0.9 + 2.2;
                counts[(x.round().clamp(0.0, 4.0)) as usize] += 1;
            }
            // counts index 0 = strong sell ... 4 = strong buy.
            self.ratings.push(row![
                sym, day, counts[4], counts[3], counts[2], counts[1], counts[0]
            ]);
            let c = close_on(bars, day);
            let mean = c * (1.0 + 0.1 + 0.08 * rng::normal(&mut rng));
            self.targets.push(row![
                sym,
                day,
                r2(mean),
                r2(mean * rng::uniform(&mut rng, 0.6, 0.9)),
                r2(mean * rng::uniform(&mut rng, 1.1, 1.5)),
                analysts as i64,
                r2(rng::uniform(&mut rng, 40.0, 85.0))
            ]);
        }
        let target = last_close * (1.0 + 0.06 * tilt + 0.05 * rng::normal(&mut rng));
        let change = target / last_close - 1.0;
        let rating = match change {
            c if c > 0.08 => "Strong Buy",
            c if c > 0.02 => "Buy",
            c if c > -0.02 => "Hold",
            c if c > -0.08 => "Sell",
            _ => "Strong Sell",
        };
        self.predictions.push(row![
            sym,
            latest,
            r2(target),
            latest + Duration::days(91),
            r2(last_close),
            r2(rng::uniform(&mut rng, 50.0, 80.0)),
            (20 + rng::index(&mut rng, 80)) as i64,
            rating
        ]);
    }

    /// One income statement, balance sheet and cash-flow row; returns EPS.
    #[allow(clippy::too_many_arguments)]
    fn statement(
        &mut self,
        rng: &mut Rng,
        firm: &Firm,
        period: &str,
        end: NaiveDate,
        rev: f64,
        dividends: f64,
    ) -> f64 {
        let filed = end + Duration::days(if period == "annual" { 55 } else { 35 });
        let scale = if period == "annual" { 1.0 } else { 4.0 };
        let gross = rev * (firm.gross_m + 0.02 * rng::normal(rng));
        let op = rev * (firm.op_m + 0.02 * rng::normal(rng));
        let net = op * 0.76;
        let eps = net / firm.shares;
        self.income.push(row![
            firm.sym,
            period,
            end,
            filed,
            rev.round(),
            gross.round(),
            op.round(),
            net.round(),
            (op * 1.2).round(),
            r2(eps),
            r2(eps * 0.98)
        ]);
        let assets = rev * scale * firm.asset_mult;
        let equity = assets * firm.equity_share;
        let liabilities = assets - equity;
        let current_assets = assets * 0.35;
        let cash = current_assets * 0.3;
        let ltd = liabilities * 0.45;
        self.balance.push(row![
            firm.sym,
            period,
            end,
            filed,
            cash.round(),
            current_assets.round(),
            assets.round(),
            (liabilities * 0.4).round(),
            ltd.round(),
            liabilities.round(),
            equity.round(),
            (ltd * 1.15).round()
        ]);
        let ocf = net * rng::uniform(rng, 1.0, 1.4);
        let capex = -rev * rng::uniform(rng, 0.03, 0.1);
        let change = (ocf + capex - dividends) * 0.2;
        self.cash.push(row![
            firm.sym,
            period,
            end,
            filed,
            ocf.round(),
            capex.round(),
            change.round(),
            cash.round(),
            (cash - change).round(),
            (-dividends).round()
        ]);
        eps
    }

    pub fn finish(self) -> Vec<(&'static str, RecordBatch)> {
        vec![
            ("profiles", self.profiles.finish()),
            ("key_metrics", self.metrics.finish()),
            ("income_statements", self.income.finish()),
            ("balance_sheets", self.balance.finish()),
            ("cash_flows", self.cash.finish()),
            ("earnings", self.earnings.finish()),
            ("news", self.news.finish()),
            ("sec_filings", self.filings.finish()),
            ("institutional_holders", self.institutions.finish()),
            ("fund_holders", self.funds.finish()),
            ("insider_trades", self.insiders.finish()),
            ("analyst_ratings", self.ratings.finish()),
            ("price_targets", self.targets.finish()),
            ("predictions", self.predictions.finish()),
        ]
    }
}

fn prev_quarter(end: NaiveDate) -> NaiveDate {
    let q = (end.month0() / 3) as i32;
    if q == 0 {
        quarter_end(end.year() - 1, 3)
    } else {
        quarter_end(end.year(), (q - 1) as u32)
    }
}

fn next_quarter(end: NaiveDate) -> NaiveDate {
    let q = end.month0() / 3;
    if q == 3 {
        quarter_end(end.year() + 1, 0)
    } else {
        quarter_end(end.year(), q + 1)
    }
}
/// What a company's statements are drawn from, year after year.
#[derive(Clone, Copy)]
struct Firm<'a> {
    sym: &'a str,
    gross_m: f64,
    op_m: f64,
    shares: f64,
    asset_mult: f64,
    equity_share: f64,
}
