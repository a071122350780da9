//! The sample set is deterministic and statistically sane.

use chrono::NaiveDate;
use engine::stats::{excess_kurtosis, log_returns, mean, pearson, std_dev};
use platform::marketdata::{LocalDir, MarketData, ParquetMarketData, layout};
use sample::{SampleConfig, generate};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

fn small(seed: u64) -> SampleConfig {
    SampleConfig {
        seed,
        stocks: 40,
        intraday_days: 20,
        ..SampleConfig::default()
    }
}

fn read_all(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(
                    p.strip_prefix(root).unwrap().display().to_string(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    out
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let (a, b, c) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    generate(&small(7), &LocalDir::new(a.path())).unwrap();
    generate(&small(7), &LocalDir::new(b.path())).unwrap();
    generate(&small(8), &LocalDir::new(c.path())).unwrap();
    let (fa, fb, fc) = (read_all(a.path()), read_all(b.path()), read_all(c.path()));
    assert!(fa.len() > 100, "only {} objects", fa.len());
    assert_eq!(fa.keys().collect::<Vec<_>>(), fb.keys().collect::<Vec<_>>());
    for (k, v) in &fa {
        assert!(
            v == &fb[k],
            "{k} differs between two runs with the same seed"
        );
    }
    assert_ne!(
        fa[&layout::daily_prices("SPX")],
        fc[&layout::daily_prices("SPX")]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn prices_are_statistically_sane() {
    let dir = tempfile::tempdir().unwrap();
    let summary = generate(&small(DEFAULT), &LocalDir::new(dir.path())).unwrap();
    let md = ParquetMarketData::new(Arc::new(LocalDir::new(dir.path())));
    assert_eq!(
        md.latest_date().await.unwrap(),
        NaiveDate::from_ymd_opt(2026, 11, 20).unwrap()
    );
    assert_eq!(
        summary.latest_date,
        Some(NaiveDate::from_ymd_opt(2026, 11, 20).unwrap())
    );

    let spx = md.daily("SPX").await.unwrap();
    assert_eq!(spx.date(0), NaiveDate::from_ymd_opt(1990, 1, 2).unwrap());
    spx.validate().unwrap();
    let r = log_returns(&spx.close);
    let vol = std_dev(&r).unwrap() * 252f64.sqrt();
    assert!(
        (0.10..0.30).contains(&vol),
        "SPX annualised volatility {vol}"
    );
    assert!(
        excess_kurtosis(&r).unwrap() > 1.0,
        "returns should be fat-tailed"
    );
    // Volatility clusters: squared returns are autocorrelated.
    let sq: Vec<f64> = r.iter().map(|x| x * x).collect();
    let ac = pearson(&sq[1..], &sq[..sq.len() - 1]).unwrap();
    assert!(ac > 0.05, "squared-return autocorrelation {ac}");

    let symbols = md.symbols().await.unwrap();
    let stocks: Vec<_> = symbols
        .iter()
        .filter(|s| s.asset_class == "stock")
        .collect();
    assert_eq!(stocks.len(), 40);
    let mut corrs = Vec::new();
    for s in symbols.iter() {
        let bars = md.daily(&s.symbol).await.unwrap();
        bars.validate()
            .unwrap_or_else(|e| panic!("{}: {e}", s.symbol));
        for i in 0..bars.len() {
            let (o, h, l, c, v) = (
                bars.open[i],
                bars.high[i],
                bars.low[i],
                bars.close[i],
                bars.volume[i],
            );
            assert!(
                [o, h, l, c, v].iter().all(|x| x.is_finite()),
                "{} NaN at {i}",
                s.symbol
            );
            assert!(
                h >= o.max(c) && l <= o.min(c) && l > 0.0,
                "{} bar {i}",
                s.symbol
            );
        }
        assert_eq!(bars.date(0), s.first_date);
        assert_eq!(bars.date(bars.len() - 1), s.last_date);
        if s.asset_class == "stock" {
            let aligned = spx.slice_dates(Some(s.first_date), None);
            assert_eq!(
                aligned.len(),
                bars.len(),
                "{} shares the SPX calendar",
                s.symbol
            );
            corrs.push(pearson(&log_returns(&bars.close), &log_returns(&aligned.close)).unwrap());
        }
    }
    let avg = mean(&corrs).unwrap();
    assert!(
        avg > 0.3 && corrs.iter().all(|c| *c > 0.0),
        "stock/SPX correlations {corrs:?}"
    );
    // Bonds hedge equities a little; gold barely moves with them.
    let tlt = md.daily("TLT").await.unwrap();
    let c = pearson(&log_returns(&tlt.close), &log_returns(&spx.close)).unwrap();
    assert!((-0.5..0.2).contains(&c), "TLT/SPX correlation {c}");
}

const DEFAULT: u64 = sample::DEFAULT_SEED;

#[tokio::test(flavor = "multi_thread")]
async fn indicators_intraday_and_tables_are_present_and_consistent() {
    let dir = tempfile::tempdir().unwrap();
    generate(&small(DEFAULT), &LocalDir::new(dir.path())).unwrap();
    let md = ParquetMarketData::new(Arc::new(LocalDir::new(dir.path())));
    let catalog = md.indicator_catalog().await.unwrap();
    for kind in ["optix", "trend", "reltrend", "other"] {
        assert!(
            catalog.iter().any(|m| m.kind == kind),
            "no {kind} indicator"
        );
    }
    for freq in ["Daily", "Weekly", "Monthly"] {
        assert!(
            catalog.iter().any(|m| m.updated == freq),
            "no {freq} indicator"
        );
    }
    assert!(catalog.iter().any(|m| m.subtype == "model"));
    assert!(catalog.iter().any(|m| m.internal));
    assert!(catalog.iter().any(|m| m.chart_name.ends_with("Ratio Rank")));
    for m in catalog.iter() {
        let s = md.indicator_series(&m.url).await.unwrap();
        assert!(!s.time.is_empty(), "{} is empty", m.url);
        assert!(s.time.windows(2).all(|w| w[0] < w[1]), "{} unsorted", m.url);
        assert!(s.close.iter().all(|v| v.is_finite()), "{} has NaN", m.url);
        if m.kind == "optix" {
            assert!(s.close.iter().all(|v| (0.0..=100.0).contains(v)));
        }
        if m.updated == "Weekly" {
            let gaps: Vec<i64> = s
                .time
                .windows(2)
                .map(|w| (w[1] - w[0]).num_days())
                .collect();
            assert!(
                gaps.iter().all(|g| (1..=13).contains(g)),
                "{} weekly gaps {:?}",
                m.url,
                &gaps[..5]
            );
        }
        assert_eq!(
            m.intraday,
            md.indicator_intraday(&m.url).await.is_ok(),
            "{}",
            m.url
        );
    }

    // 30-minute bars: 13 a session, and they aggregate to the daily bar.
    let spx = md.daily("SPX").await.unwrap();
    let ib = md.intraday("SPX").await.unwrap();
    ib.validate().unwrap();
    assert_eq!(ib.len(), 20 * 13);
    for d in 0..20 {
        let day = &ib.time[d * 13..(d + 1) * 13];
        let i = spx.len() - 20 + d;
        assert!(day.iter().all(|t| t.date() == spx.date(i)));
        let rng = d * 13..(d + 1) * 13;
        assert_eq!(ib.open[d * 13], spx.open[i]);
        assert_eq!(ib.close[d * 13 + 12], spx.close[i]);
        let hi = ib.high[rng.clone()]
            .iter()
            .cloned()
            .fold(f64::MIN, f64::max);
        let lo = ib.low[rng].iter().cloned().fold(f64::MAX, f64::min);
        assert_eq!((hi, lo), (spx.high[i], spx.low[i]));
    }
    assert_eq!(
        ib.time[0].time(),
        chrono::NaiveTime::from_hms_opt(9, 30, 0).unwrap()
    );

    for name in layout::TABLES {
        let t = md
            .table(name)
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(t.num_rows() > 0, "{name} is empty");
    }
    let chains = md.table("option_chains").await.unwrap();
    let strikes = platform::marketdata::codec::f64_col(&chains, "strike").unwrap();
    let bids = platform::marketdata::codec::f64_col(&chains, "bid").unwrap();
    let asks = platform::marketdata::codec::f64_col(&chains, "ask").unwrap();
    assert!(
        (0..chains.num_rows()).all(|i| strikes.value(i) > 0.0 && bids.value(i) <= asks.value(i))
    );
}
