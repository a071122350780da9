//! What every market data source promises, over a store holding the sample set.

use engine::Frequency;
use platform::PortError;
use platform::marketdata::{MarketData, codec, layout};
use std::sync::Arc;

/// `raw` reads an object's bytes straight from the same storage, to compare
/// the port's decoded answers with an independent decode.
pub async fn run_all<F, Fut>(md: Arc<dyn MarketData>, raw: F)
where
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = bytes::Bytes>,
{
    let spx = md.daily("SPX").await.unwrap();
    let direct =
        codec::batch_to_bars(&codec::from_parquet(raw(layout::daily_prices("SPX")).await).unwrap())
            .unwrap();
    assert_eq!(*spx, direct);
    assert!(
        Arc::ptr_eq(&spx, &md.daily("SPX").await.unwrap()),
        "decoded bars are cached"
    );
    spx.validate().unwrap();

    assert!(matches!(
        md.daily("NOPE").await,
        Err(PortError::NotFound(_))
    ));
    assert!(matches!(
        md.daily("../SPX").await,
        Err(PortError::Invalid(_))
    ));

    let start = chrono::NaiveDate::from_ymd_opt(2020, 1, 1);
    let end = chrono::NaiveDate::from_ymd_opt(2020, 12, 31);
    let daily = md.bars("SPX", Frequency::Daily, start, end).await.unwrap();
    assert_eq!(daily.date(0).to_string(), "2020-01-02");
    assert_eq!(daily.date(daily.len() - 1).to_string(), "2020-12-31");
    assert_eq!(daily.len(), 253, "NYSE sessions in 2020");
    let weekly = md.bars("SPX", Frequency::Weekly, start, end).await.unwrap();
    let monthly = md
        .bars("SPX", Frequency::Monthly, start, end)
        .await
        .unwrap();
    assert_eq!(monthly.len(), 12);
    assert_eq!(weekly.len(), 53);
    assert_eq!(monthly.close[11], daily.close[daily.len() - 1]);
    assert_eq!(monthly.open[0], daily.open[0]);
    let vol: f64 = daily.volume.iter().sum();
    assert!((monthly.volume.iter().sum::<f64>() - vol).abs() < 1e-6 * vol);

    let intraday = md.bars("SPX", Frequency::Min30, None, None).await.unwrap();
    assert_eq!(intraday.len() % 13, 0);
    assert_eq!(intraday.date(intraday.len() - 1), spx.date(spx.len() - 1));

    let symbols = md.symbols().await.unwrap();
    let latest = md.latest_date().await.unwrap();
    assert_eq!(latest, spx.date(spx.len() - 1));
    assert!(symbols.iter().any(|s| s.symbol == "SPX" && s.has_intraday));
    for asset in [
        "IVV", "IJH", "IJR", "EFA", "SCZ", "EEM", "AGG", "SHY", "IEF", "TLT", "TIP", "LQD", "VNQ",
        "GLD", "DBC", "HYG", "USO", "DXY", "HSI",
    ] {
        assert!(symbols.iter().any(|s| s.symbol == asset), "{asset} missing");
    }

    let catalog = md.indicator_catalog().await.unwrap();
    let optix = catalog
        .iter()
        .find(|m| m.url == "SPX_OPTIX")
        .expect("SPX_OPTIX in catalog");
    assert_eq!(
        (
            optix.kind.as_str(),
            optix.updated.as_str(),
            optix.market_symbol.as_str()
        ),
        ("optix", "Daily", "SPX")
    );
    let series = md.indicator_series("SPX_OPTIX").await.unwrap();
    assert_eq!(series.time.len(), spx.len());
    assert!(md.indicator_intraday("SPX_OPTIX").await.is_ok());
    assert!(matches!(
        md.indicator_series("NOPE_OPTIX").await,
        Err(PortError::NotFound(_))
    ));

    let chains = md.table("option_chains").await.unwrap();
    assert!(chains.num_rows() > 0);
    assert!(matches!(
        md.table("secrets").await,
        Err(PortError::NotFound(_))
    ));
}
