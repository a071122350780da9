//! What every account store promises, and credential checks over it.

use super::unique;
use platform::accounts::{
    Account, AccountRecord, AccountStore, Authenticator, Verdict, hash_password,
};
use std::sync::Arc;
use std::time::Duration;

fn record(email: &str, password: &str, plan: &str) -> AccountRecord {
    AccountRecord {
        email: email.into(),
        password_hash: hash_password(password).unwrap(),
        plan: plan.into(),
        selected_indicators: vec!["SPX_OPTIX".into()],
        created_at: platform::tasks::now(),
        custom_indicators: vec![platform::accounts::CustomIndicator {
            url: "CUSTOM_X".into(),
            name: "X over Y".into(),
            indicator_1_url: "SPX_OPTIX".into(),
            indicator_2_url: "AAII_BULL".into(),
            calculate: "ratio".into(),
            timeframe: "Weekly".into(),
            ma: "0".into(),
            upper_extreme_value: 1.5,
            lower_extreme_value: 0.5,
            create_date: platform::tasks::now(),
        }],
    }
}

pub async fn run_all(store: Arc<dyn AccountStore>) {
    let email = format!("{}@example.test", unique("user"));
    assert_eq!(store.get(&email).await.unwrap(), None);
    let rec = record(&email, "correct horse", "pro");
    store.put(rec.clone()).await.unwrap();
    assert_eq!(store.get(&email).await.unwrap(), Some(rec.clone()));
    assert_eq!(
        store
            .get(&format!("  {}  ", email.to_uppercase()))
            .await
            .unwrap(),
        Some(rec.clone()),
        "e-mails are case-insensitive"
    );
    assert!(
        !rec.password_hash.contains("correct horse") && rec.password_hash.starts_with("$argon2"),
        "only a salted hash is stored"
    );
    let replaced = AccountRecord {
        plan: "backtest".into(),
        ..rec.clone()
    };
    store.put(replaced.clone()).await.unwrap();
    assert_eq!(store.get(&email).await.unwrap().unwrap().plan, "backtest");
    assert!(store.list().await.unwrap().iter().any(|a| a.email == email));

    let auth = Authenticator::embedded(store.clone(), Duration::from_secs(60)).unwrap();
    let valid = |v: Verdict| -> Option<Account> {
        match v {
            Verdict::Valid(a) => Some(a),
            Verdict::Denied => None,
            Verdict::Locked(d) => panic!("locked for {d:?}"),
        }
    };
    let ok = valid(auth.verify(&email, "correct horse", None).await.unwrap())
        .expect("valid credentials");
    assert_eq!(
        (ok.email.as_str(), ok.plan.code),
        (email.as_str(), "backtest")
    );
    assert_eq!(ok.selected_indicators, vec!["SPX_OPTIX".to_string()]);
    assert_eq!(
        ok.custom_indicators.len(),
        1,
        "custom indicators are kept with the account"
    );
    assert_eq!(ok.custom_indicators[0].indicator_2_url, "AAII_BULL");
    // Cached success must not let a wrong password through.
    assert_eq!(
        valid(auth.verify(&email, "correct horse", None).await.unwrap()).map(|a| a.email),
        Some(email.clone())
    );
    assert_eq!(
        valid(auth.verify(&email, "wrong horse", None).await.unwrap()),
        None
    );
    assert_eq!(valid(auth.verify(&email, "", None).await.unwrap()), None);
    assert_eq!(
        valid(
            auth.verify("nobody@example.test", "correct horse", None)
                .await
                .unwrap()
        ),
        None
    );
    let unknown_plan = format!("{}@example.test", unique("user"));
    store
        .put(record(&unknown_plan, "pw-123456", "no-such-plan"))
        .await
        .unwrap();
    assert_eq!(
        valid(auth.verify(&unknown_plan, "pw-123456", None).await.unwrap()),
        None,
        "an unknown plan grants nothing"
    );
}
