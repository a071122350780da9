//! Billing plans and the services they grant. Plans are code, not data: a new
//! plan is a reviewed change, and every adapter agrees on what a code means.

use serde::Serialize;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Service {
    Backtest,
    Analytics,
    Data,
}

impl fmt::Display for Service {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Service::Backtest => "backtest",
            Service::Analytics => "analytics",
            Service::Data => "data",
        })
    }
}

#[derive(Debug, PartialEq, Serialize)]
pub struct Plan {
    pub code: &'static str,
    pub name: &'static str,
    pub services: &'static [Service],
    /// Trial accounts get truncated full-history data responses.
    pub trial: bool,
    /// Indicator groups a data plan includes besides the user's selections;
    /// `None` means every indicator.
    pub base_groups: Option<&'static [&'static str]>,
    /// Strategies one batch backtest may hold.
    pub max_batch: usize,
}

use Service::*;

pub const PLANS: &[Plan] = &[
    Plan {
        code: "pro",
        name: "Professional (all services)",
        services: &[Backtest, Analytics, Data],
        trial: false,
        base_groups: None,
        max_batch: 20000,
    },
    Plan {
        code: "trial",
        name: "Trial (all services, truncated data history)",
        services: &[Backtest, Analytics, Data],
        trial: true,
        base_groups: Some(&["Core"]),
        max_batch: 100,
    },
    Plan {
        code: "backtest",
        name: "Strategy backtesting",
        services: &[Backtest],
        trial: false,
        base_groups: None,
        max_batch: 10000,
    },
    Plan {
        code: "analytics",
        name: "Analytics tools",
        services: &[Analytics],
        trial: false,
        base_groups: None,
        max_batch: 0,
    },
    Plan {
        code: "data",
        name: "Data plan",
        services: &[Data],
        trial: false,
        base_groups: Some(&["Core", "Sectors"]),
        max_batch: 0,
    },
    Plan {
        code: "light-data-yearly",
        name: "Light Data Yearly plan",
        services: &[Data],
        trial: false,
        base_groups: Some(&["Core"]),
        max_batch: 0,
    },
    Plan {
        code: "premium-data-yearly",
        name: "Premium Data Yearly plan",
        services: &[Data],
        trial: false,
        base_groups: None,
        max_batch: 0,
    },
    Plan {
        code: "none",
        name: "No active subscription",
        services: &[],
        trial: false,
        base_groups: Some(&[]),
        max_batch: 0,
    },
];

pub fn plan(code: &str) -> Option<&'static Plan> {
    PLANS.iter().find(|p| p.code == code)
}
