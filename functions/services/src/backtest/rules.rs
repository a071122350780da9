//! Rule blocks (2.3-2.7) as signal resolution and compilation read them:
//! each condition with its path in the request, every default applied. The
//! request's own typed parts ([`super::request`]) build them.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleType {
    SingleCondition,
    Scoring,
    TimeOrder,
    RiskControlOnly,
}

impl RuleType {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleType::SingleCondition => "SingleCondition",
            RuleType::Scoring => "Scoring",
            RuleType::TimeOrder => "TimeOrder",
            RuleType::RiskControlOnly => "RiskControlOnly",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct SignalRef {
    pub kind: Option<String>,
    pub name: String,
    pub extreme_optimism: Option<f64>,
    pub extreme_pessimism: Option<f64>,
    /// `params.period`: a Technical indicator's own period.
    pub period: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RuleSpec {
    /// `SV`, `SVMA`, `SVEMA` or `MA`.
    pub comparison_type: String,
    pub type_name: String,
    /// As written by the caller (kept for the encoding).
    pub comparison_value: Option<String>,
    pub period: Option<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct QualifierSpec {
    pub operator: String,
    pub period: usize,
    /// `S` or `E`.
    pub ma_type: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ConditionSpec {
    /// Path of the condition in the request, for error messages.
    pub path: String,
    pub signal: SignalRef,
    pub rule: RuleSpec,
    pub qualifier: Option<QualifierSpec>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RuleBlock {
    pub rule_type: RuleType,
    pub delay_bars: usize,
    pub conditions: Vec<ConditionSpec>,
    pub score_threshold: Option<usize>,
    pub signals_in_market: usize,
}

/// Conditions one rule block may hold: each is a signal computed over the
/// whole history, so the count bounds a backtest's work and memory.
pub const MAX_CONDITIONS: usize = 50;
