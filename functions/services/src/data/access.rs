//! Which indicators an account may read.
//!
//! A plan without base groups (pro, premium) subscribes to every public
//! indicator; a plan with base groups subscribes to those groups' indicators
//! plus the account's own selections. Internal records are never served.

use platform::accounts::Account;
use platform::marketdata::IndicatorMeta;

fn in_base(account: &Account, m: &IndicatorMeta) -> bool {
    match account.plan.base_groups {
        None => true,
        Some(groups) => m.groups.iter().any(|g| groups.contains(&g.as_str())),
    }
}

fn selected(account: &Account, m: &IndicatorMeta) -> bool {
    account.selected_indicators.iter().any(|s| s == &m.url)
}

/// Whether the account may read this indicator.
pub fn may_read(account: &Account, m: &IndicatorMeta) -> bool {
    !m.internal && (in_base(account, m) || selected(account, m))
}

/// What decides [`subscribed`] for an account: accounts with equal keys read
/// the same indicators (every account of an all-access plan does).
pub fn view_key(account: &Account) -> String {
    match account.plan.base_groups {
        None => "all".into(),
        Some(_) => {
            let mut selected = account.selected_indicators.clone();
            selected.sort();
            format!("{}:{}", account.plan.code, selected.join(","))
        }
    }
}

/// Every indicator the account may read, in catalog order.
pub fn subscribed<'a>(account: &Account, catalog: &'a [IndicatorMeta]) -> Vec<&'a IndicatorMeta> {
    catalog.iter().filter(|m| may_read(account, m)).collect()
}

/// The user's selections plus the plan's base indicators (for plans that have
/// base groups); for all-access plans, the selections alone.
pub fn user_selected<'a>(
    account: &Account,
    catalog: &'a [IndicatorMeta],
) -> Vec<&'a IndicatorMeta> {
    catalog
        .iter()
        .filter(|m| {
            !m.internal
                && (selected(account, m)
                    || (account.plan.base_groups.is_some() && in_base(account, m)))
        })
        .collect()
}
