//! The smart option scanner over HTTP: filters, order, paging and refusals.

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use serde_json::{Value, json};
use tests::server::TestServer;

const USER: Option<(&str, &str)> = Some((DEMO_EMAIL, DEMO_PASSWORD));

fn items(r: &Value) -> &Vec<Value> {
    r["data"]["option_data"].as_array().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn option_scanner_lists_filters_and_orders_short_puts() {
    let (s, _dir) = TestServer::fresh().await;
    let (status, all) = s.get("/smart-option-scanner/options", USER).await;
    assert_eq!((status, &all["code"]), (200, &json!(200)), "{all}");
    let d = &all["data"];
    assert_eq!(d["option_type"], "put");
    assert_eq!(d["as_of_date"], "2026-11-20");
    let first = &items(&all)[0];
    let fields: Vec<&str> = first
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    let mut want = vec![
        "ticker",
        "close",
        "expirDate",
        "DTE",
        "strike",
        "be",
        "POP_est",
        "credit",
        "margin",
        "return_per",
        "ContractSymbol",
        "cagr",
        "ev_score",
        "Volume",
        "OI",
        "IV",
        "Delta",
        "Vega",
    ];
    let mut got = fields.clone();
    want.sort();
    got.sort();
    assert_eq!(got, want);
    // The default page: 200 of them, best cagr first; every listed put is
    // out of the money, 1-60 days out, with a credit.
    let count = d["count"].as_u64().unwrap() as usize;
    assert!(count > 200, "{count}");
    assert_eq!(items(&all).len(), 200);
    let f = |v: &Value, k: &str| v[k].as_f64().unwrap();
    for w in items(&all).windows(2) {
        assert!(f(&w[0], "cagr") >= f(&w[1], "cagr"));
    }
    for it in items(&all) {
        assert!(f(it, "strike") < f(it, "close") && f(it, "strike") >= 0.7 * f(it, "close"));
        assert!((1.0..=60.0).contains(&f(it, "DTE")));
        assert!((f(it, "be") - (f(it, "strike") - f(it, "credit"))).abs() < 1e-12);
        assert_eq!(f(it, "margin"), f(it, "strike") * 100.0);
        assert!((f(it, "cagr") - f(it, "ev_score") * 252.0 / f(it, "DTE")).abs() < 1e-9);
    }
    let tickers = d["tickers"].as_array().unwrap();
    assert!(tickers.windows(2).all(|w| w[0].as_str() < w[1].as_str()));

    // One underlying, soonest first, every one of its puts.
    let ticker = first["ticker"].as_str().unwrap().to_lowercase();
    let (_, one) = s
        .get(
            &format!("/smart-option-scanner/options?ticker={ticker}&sort=DTE&limit=5000"),
            USER,
        )
        .await;
    assert_eq!(one["data"]["tickers"], json!([first["ticker"]]));
    assert_eq!(
        one["data"]["count"].as_u64().unwrap() as usize,
        items(&one).len()
    );
    assert!(
        items(&one)
            .windows(2)
            .all(|w| f(&w[0], "DTE") <= f(&w[1], "DTE"))
    );
    // Narrowed: each filter holds, and the count shrinks with it.
    let (_, narrow) = s
        .get("/smart-option-scanner/options?min_pop=90&max_dte=20&min_oi=500&sort=ev_score&limit=5000", USER)
        .await;
    let n = narrow["data"]["count"].as_u64().unwrap() as usize;
    assert!(n > 0 && n < count, "{n} of {count}");
    assert_eq!(items(&narrow).len(), n);
    for it in items(&narrow) {
        assert!(f(it, "POP_est") >= 90.0 && f(it, "DTE") <= 20.0 && f(it, "OI") >= 500.0);
    }
    assert!(
        items(&narrow)
            .windows(2)
            .all(|w| f(&w[0], "ev_score") >= f(&w[1], "ev_score"))
    );

    // A date without chains, and a filter nothing passes: 407 without data.
    for path in [
        "/smart-option-scanner/options?date=2026-11-19",
        "/smart-option-scanner/options?min_pop=100",
        "/smart-option-scanner/options?ticker=NOSUCH",
    ] {
        let (status, r) = s.get(path, USER).await;
        assert_eq!(
            (status, &r["code"], &r["data"]),
            (200, &json!(407), &Value::Null),
            "{path}: {r}"
        );
    }
    // Bad values: 400 naming the field.
    for (field, value) in [
        ("date", "yesterday"),
        ("min_pop", "120"),
        ("max_dte", "90"),
        ("min_oi", "many"),
        ("sort", "random"),
        ("limit", "0"),
        ("ticker", "A%20B"),
    ] {
        let (status, r) = s
            .get(
                &format!("/smart-option-scanner/options?{field}={value}"),
                USER,
            )
            .await;
        assert_eq!((status, &r["code"]), (400, &json!(400)), "{field}: {r}");
        assert!(r["msg"].as_str().unwrap().contains(field), "{field}: {r}");
    }
    let (status, _) = s.get("/smart-option-scanner/options", None).await;
    assert_eq!(status, 401);
    s.stop().await;
}
