//! Leaf schemas the derived ones refer to by `schema_with`: enums of
//! the spec's names (some built from the technical map), patterns.
use super::signal_shapes::periodic;
use super::*;
use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
use utoipa::openapi::{Object, RefOr, Schema};

fn strings<'a>(names: impl IntoIterator<Item = &'a str>) -> Object {
    ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::String))
        .enum_values(Some(names.into_iter().collect::<Vec<_>>()))
        .build()
}

macro_rules! one_name {
    ($($f:ident = $name:expr),+ $(,)?) => {
        $(pub fn $f() -> Object {
            strings([$name])
        })+
    };
}
one_name!(
    single_condition_tag = "SingleCondition",
    scoring_tag = "Scoring",
    time_order_tag = "TimeOrder",
    risk_control_only_tag = "RiskControlOnly",
    sentiment_kind = "Sentiment",
    symbol_kind = "Symbol",
    technical_kind = "Technical",
    sv = "SV",
    ma = "MA",
);

pub fn own_average() -> Object {
    strings(["SVMA", "SVEMA"])
}
pub fn main_operators() -> Object {
    strings(MAIN_OPERATORS)
}
pub fn consecutive_operators() -> Object {
    strings(CONSECUTIVE)
}
pub fn extreme_operators() -> Object {
    strings(EXTREMES)
}
pub fn qualifier_operators() -> Object {
    strings(QUALIFIERS)
}
pub fn ma_types() -> Object {
    strings(["S", "E"])
}
pub fn symbol_columns() -> Object {
    strings(SYMBOL_COLUMNS)
}
/// A field's schema with its description (`schema_with` takes no doc comment).
fn described(mut o: Object, text: &str) -> Object {
    o.description = Some(text.to_string());
    o
}
pub fn direction_schema() -> Object {
    described(strings(["Long", "Short"]), "Default Long")
}
pub fn frequency_schema() -> Object {
    described(
        strings(["Daily", "Hourly", "Weekly", "Monthly"]),
        "Default Daily",
    )
}

fn technicals(keep: impl Fn(&signals::TechEntry) -> bool) -> Object {
    strings(
        signals::TECHNICALS
            .iter()
            .filter(|t| keep(t))
            .map(|t| t.name),
    )
}
pub fn periodic_technicals() -> Object {
    technicals(periodic)
}
pub fn fixed_technicals() -> Object {
    technicals(|t| !periodic(t))
}
pub fn average_technicals() -> Object {
    technicals(|t| t.average.is_some())
}

/// A number, as text.
pub fn number_text() -> Object {
    ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::String))
        .pattern(Some(r"^-?[0-9]{1,6}(\.[0-9]{1,4})?$"))
        .description(Some("A number, as text"))
        .build()
}

pub fn trade_price_schema() -> Object {
    ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::Integer))
        .enum_values(Some([0, 1, 2]))
        .description(Some("0 next open, 1 next close, 2 current close (default)"))
        .build()
}

pub fn inert_schema() -> Object {
    ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::Integer))
        .enum_values(Some([0]))
        .description(Some(
            "Accepted for compatibility; other values are reported as ignored",
        ))
        .build()
}

pub fn description_schema() -> Object {
    let text: RefOr<Schema> = ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::String))
        .max_length(Some(2000))
        .into();
    ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::Object))
        .max_properties(Some(20))
        .additional_properties(Some(text))
        .description(Some(
            "Free-text entries such as Introduction and Rules, kept with the task",
        ))
        .build()
}
