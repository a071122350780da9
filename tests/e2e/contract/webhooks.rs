//! The webhook store's contract: endpoints, alerts and deliveries per
//! account, a delivery recorded once per endpoint and id, its log newest
//! first, and every read bounded by its account.

use super::unique;
use chrono::TimeDelta;
use platform::tasks::now;
use platform::webhooks::{
    Alert, Delivery, DeliveryStatus, Endpoint, EventType, WebhookStore, new_id,
};
use std::sync::Arc;

fn endpoint(account: &str, events: Vec<EventType>) -> Endpoint {
    Endpoint {
        id: new_id("ep_"),
        account: account.into(),
        url: "https://93.184.216.34/hook".into(),
        events,
        description: "contract".into(),
        created_at: now(),
        secret_version: 1,
        previous_until: None,
        disabled: None,
        last_success: None,
    }
}

fn delivery(e: &Endpoint, id: &str, minutes_ago: i64) -> Delivery {
    let at = now() - TimeDelta::minutes(minutes_ago);
    Delivery {
        id: id.into(),
        endpoint: e.id.clone(),
        account: e.account.clone(),
        event: EventType::TaskFinished,
        payload: format!("{{\"id\":\"{id}\"}}"),
        created_at: at,
        status: DeliveryStatus::Pending,
        attempts: Vec::new(),
        tries: 0,
        next_attempt: Some(at),
        ticket: 1,
        failures: 0,
    }
}

pub async fn run_all(store: Arc<dyn WebhookStore>) {
    let (me, you) = (unique("me"), unique("you"));
    let mine = endpoint(&me, vec![EventType::TaskFinished]);
    let all = endpoint(&me, vec![]);
    let yours = endpoint(&you, vec![EventType::ScanCompleted]);
    for e in [&mine, &all, &yours] {
        store.put_endpoint(e).await.unwrap();
    }
    let listed = store.endpoints(&me).await.unwrap();
    assert_eq!(listed.len(), 2);
    assert!(listed.contains(&mine) && listed.contains(&all));
    assert_eq!(
        store.endpoint(&me, &mine.id).await.unwrap(),
        Some(mine.clone())
    );
    assert_eq!(
        store.endpoint(&you, &mine.id).await.unwrap(),
        None,
        "another account's id"
    );
    // Replaced in place.
    let mut changed = mine.clone();
    changed.secret_version = 2;
    store.put_endpoint(&changed).await.unwrap();
    assert_eq!(
        store
            .endpoint(&me, &mine.id)
            .await
            .unwrap()
            .unwrap()
            .secret_version,
        2
    );
    // Updated on the record as stored now: a change made meanwhile (a
    // rotation) stands; another account's id, or a deleted endpoint, is
    // not written (a late update never brings one back).
    let stale_success = now();
    let updated = store
        .update_endpoint(
            &me,
            &mine.id,
            Box::new(move |e| e.last_success = Some(stale_success)),
        )
        .await
        .unwrap()
        .expect("the endpoint is there");
    assert_eq!(
        (updated.secret_version, updated.last_success),
        (2, Some(stale_success))
    );
    assert_eq!(store.endpoint(&me, &mine.id).await.unwrap(), Some(updated));
    let touch = || Box::new(|e: &mut Endpoint| e.secret_version += 10);
    assert_eq!(
        store
            .update_endpoint(&you, &mine.id, touch())
            .await
            .unwrap(),
        None
    );
    let gone = endpoint(&me, vec![]);
    store.put_endpoint(&gone).await.unwrap();
    assert!(store.delete_endpoint(&me, &gone.id).await.unwrap());
    assert_eq!(
        store.update_endpoint(&me, &gone.id, touch()).await.unwrap(),
        None
    );
    assert_eq!(store.endpoint(&me, &gone.id).await.unwrap(), None);
    // Across accounts, for the nightly scan's events.
    let scan: Vec<String> = store
        .subscribed(EventType::ScanCompleted)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert!(scan.contains(&all.id) && scan.contains(&yours.id) && !scan.contains(&mine.id));

    // Deliveries: once per endpoint and id; the log newest first.
    let (older, newer) = (delivery(&mine, "msg_a", 10), delivery(&mine, "msg_b", 1));
    assert!(store.add_delivery(&older).await.unwrap());
    assert!(store.add_delivery(&newer).await.unwrap());
    assert!(
        !store.add_delivery(&older).await.unwrap(),
        "the same id again"
    );
    assert!(
        store
            .add_delivery(&delivery(&all, "msg_a", 0))
            .await
            .unwrap(),
        "another endpoint"
    );
    let log = store.deliveries(&me, &mine.id, 10).await.unwrap();
    let ids: Vec<&str> = log.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["msg_b", "msg_a"]);
    assert_eq!(store.deliveries(&me, &mine.id, 1).await.unwrap().len(), 1);
    assert!(
        store
            .deliveries(&you, &mine.id, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let mut sent = older.clone();
    sent.status = DeliveryStatus::Delivered;
    sent.tries = 1;
    store.put_delivery(&sent).await.unwrap();
    assert_eq!(
        store.delivery(&me, &mine.id, "msg_a").await.unwrap(),
        Some(sent)
    );
    assert_eq!(store.delivery(&you, &mine.id, "msg_a").await.unwrap(), None);

    // Alerts.
    let alert = Alert {
        id: new_id("alert_"),
        account: me.clone(),
        name: "winners".into(),
        signals: vec!["MA".into()],
        tickers: vec![],
        min_win_rate: Some(60.0),
        min_trades: None,
        created_at: now(),
    };
    store.put_alert(&alert).await.unwrap();
    assert_eq!(store.alerts(&me).await.unwrap(), vec![alert.clone()]);
    assert!(store.alerts(&you).await.unwrap().is_empty());
    assert!(store.all_alerts().await.unwrap().contains(&alert));
    assert!(!store.delete_alert(&you, &alert.id).await.unwrap());
    assert!(store.delete_alert(&me, &alert.id).await.unwrap());
    assert!(store.alerts(&me).await.unwrap().is_empty());

    // Deleting: only the owner's, once; its log is no longer read.
    assert!(!store.delete_endpoint(&you, &mine.id).await.unwrap());
    assert!(store.delete_endpoint(&me, &mine.id).await.unwrap());
    assert!(!store.delete_endpoint(&me, &mine.id).await.unwrap());
    assert_eq!(store.endpoints(&me).await.unwrap(), vec![all]);
}
