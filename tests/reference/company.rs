//! Company statements' derived fields against pandas: every field of every
//! period of five years, both periods, on several companies, within 1e-9.

use serde_json::{Value, json};
use services::analytics::company::{self, CompanyParams};
use tests::server::market_dir;

fn same(ours: &Value, theirs: &Value, what: &str) {
    match (ours, theirs) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            assert!(
                (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                "{what}: {a} vs {b}"
            );
        }
        _ => assert_eq!(ours, theirs, "{what}"),
    }
}

fn parsed(s: &str) -> Value {
    serde_json::from_str(s).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn statement_fields_equal_pandas() {
    use platform::marketdata::{LocalDir, MarketData, ParquetMarketData};
    let md = ParquetMarketData::new(std::sync::Arc::new(LocalDir::new(market_dir())));
    let symbols: Vec<String> = md
        .symbols()
        .await
        .unwrap()
        .iter()
        .filter(|s| s.asset_class == "stock")
        .step_by(7)
        .take(6)
        .map(|s| s.symbol.clone())
        .collect();
    let want = tests::reference::run(
        "company_statements.py",
        &json!({"dir": market_dir(), "symbols": symbols}),
    );
    let mut fields = 0;
    for sym in &symbols {
        for (period, name) in [("annual", "annually"), ("quarter", "quarterly")] {
            let q = CompanyParams {
                symbol: Some(sym.clone()),
                period: Some(name.into()),
            }
            .validate()
            .unwrap();
            let ours = [
                (
                    "income",
                    parsed(&company::get_income(&md, &q).await.unwrap().data.income_data),
                ),
                (
                    "balance",
                    parsed(
                        &company::get_balance(&md, &q)
                            .await
                            .unwrap()
                            .data
                            .balance_data,
                    ),
                ),
                (
                    "cash",
                    parsed(&company::get_cash(&md, &q).await.unwrap().data.cash_data),
                ),
            ];
            for (table, rows) in ours {
                let theirs = want[sym][period][table].as_array().unwrap();
                let rows = rows.as_array().unwrap();
                assert_eq!(rows.len(), theirs.len(), "{sym} {period} {table}");
                assert_eq!(rows.len(), if period == "annual" { 5 } else { 20 });
                for (a, b) in rows.iter().zip(theirs) {
                    for (k, v) in b.as_object().unwrap() {
                        same(&a[k], v, &format!("{sym} {period} {table} {k}"));
                        fields += 1;
                    }
                }
            }
        }
        let q = CompanyParams {
            symbol: Some(sym.clone()),
            period: None,
        }
        .validate()
        .unwrap();
        let e = company::get_earning(&md, &q)
            .await
            .unwrap()
            .data
            .earning_data;
        let theirs = &want[sym]["earnings"];
        let ours = serde_json::to_value(&e).unwrap();
        for k in [
            "newest_date",
            "avg_eps",
            "avg_eps_surprise",
            "beat_count",
            "miss_count",
        ] {
            same(&ours[k], &theirs[k], &format!("{sym} {k}"));
        }
        let history = parsed(&e.history_earn_data);
        let theirs = theirs["history"].as_array().unwrap();
        assert_eq!(history.as_array().unwrap().len(), theirs.len());
        for (a, b) in history.as_array().unwrap().iter().zip(theirs) {
            for (k, v) in b.as_object().unwrap() {
                same(&a[k], v, &format!("{sym} earnings {k}"));
                fields += 1;
            }
        }
    }
    assert!(fields > 2000, "{fields} fields compared");
}
