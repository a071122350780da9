//! Webhook endpoints (`/webhooks`, open to every account, in the backtest
//! group) and scanner alerts (`/smart-stock-scanner/alerts`, analytics):
//! thin handlers over `services::webhooks`.

#[cfg(feature = "analytics")]
pub mod alerts;
#[cfg(feature = "backtest")]
pub mod endpoints;

use crate::error::ApiError;
use crate::state::AppState;
use platform::webhooks::Hooks;
use serde::Serialize;
use services::webhooks::{AlertView, DeliveryView, EndpointView};
use utoipa::ToSchema;

fn configured(state: &AppState) -> Result<&Hooks, ApiError> {
    state
        .webhooks
        .as_ref()
        .ok_or_else(|| ApiError::not_found("webhooks are not configured in this deployment"))
}

/// The account's endpoints.
#[derive(Serialize, ToSchema)]
pub struct WebhookList {
    pub endpoints: Vec<EndpointView>,
}

/// An endpoint's deliveries, newest first.
#[derive(Serialize, ToSchema)]
pub struct DeliveryList {
    pub deliveries: Vec<DeliveryView>,
}

/// The account's scanner alerts.
#[derive(Serialize, ToSchema)]
pub struct AlertList {
    pub alerts: Vec<AlertView>,
}
