//! The screens' records (analytics 2.7), field names as the spec writes them.

#![allow(non_snake_case)]

use serde::Serialize;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct SentimentSeasonality {
    pub symbol: String,
    pub name: String,
    /// The Optix indicator's first group (`ETFs`, `Sectors`, `Commodities`).
    pub group: String,
    /// The latest Optix reading and its date.
    pub last_value: f64,
    pub last_update: String,
    /// Percent: the symbol's average return in the latest reading's calendar
    /// month over the earlier years.
    pub AvgReturn: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct SentimentTrend {
    pub symbol: String,
    pub chart_name: String,
    pub name: String,
    pub group: String,
    pub last_value: f64,
    pub last_update: String,
    /// The latest close and its 200-session average.
    pub close: f64,
    pub MA: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Idea {
    pub symbol: String,
    pub chart_name: String,
    /// The screen's date.
    pub date: String,
    /// Optix on the date, and the average of its last 5 readings.
    pub last_value: f64,
    pub five_ma: f64,
    /// The close on the date, and its 200-session average.
    pub equity_close: f64,
    pub ma_200: f64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct HedgerExtreme {
    pub symbol: String,
    pub name: String,
    /// The latest net position (contracts) and its date.
    pub last_value: f64,
    pub last_update: String,
    /// Of the readings of the 3 years to the latest.
    pub three_year_max: f64,
    pub three_year_min: f64,
    /// z-score of the latest against those readings; beyond +-2 is highly extreme.
    pub net_position: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct SectorMa {
    pub symbol: String,
    pub chart_name: String,
    pub name: String,
    pub last_value: f64,
    pub last_update: String,
    /// Percent of the sector's stocks closing above their 10- and 200-session averages.
    pub over_10: Option<f64>,
    pub over_200: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Exhaustion {
    pub chart_name: String,
    pub last_value: f64,
    pub last_update: String,
    pub group: String,
    /// The average of the last 10 readings.
    #[serde(rename = "10MA")]
    #[cfg_attr(feature = "openapi", schema(rename = "10MA"))]
    pub ma10: f64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Dividend {
    pub name: String,
    pub symbol: String,
    /// The key metrics' date, YYYY-MM-DD.
    pub report_date: String,
    /// Percent, as the key metrics hold it.
    pub divyield: f64,
    pub pe_ratio: Option<f64>,
    /// Percent change of the close over 21, 63, 126, 252 and 504 sessions.
    pub onemonthperf: Option<f64>,
    pub threemonthperf: Option<f64>,
    pub sixmonthperf: Option<f64>,
    pub oneyearperf: Option<f64>,
    pub twoyearperf: Option<f64>,
    pub eps_growth: Option<f64>,
    pub payout_ratio: Option<f64>,
}

/// A screen's records: their fields depend on the key's category.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum ScreenRecords {
    SentimentSeasonality(Vec<SentimentSeasonality>),
    SentimentTrend(Vec<SentimentTrend>),
    Ideas(Vec<Idea>),
    HedgerExtremes(Vec<HedgerExtreme>),
    SectorMa(Vec<SectorMa>),
    OptixExhaustion(Vec<Exhaustion>),
    Dividend(Vec<Dividend>),
}

/// `GET /screens`: `{code, data, type}`. Described as one form per kind of
/// record, told apart by `type` (the category names of that kind), so an
/// answer matches exactly one form even when `data` is empty.
#[derive(Debug, Clone, Serialize)]
pub struct ScreenAnswer {
    pub code: u16,
    pub data: ScreenRecords,
    /// The screen's category name.
    pub r#type: &'static str,
}

#[cfg(feature = "openapi")]
mod schema {
    use super::*;
    use utoipa::openapi::schema::{
        ArrayBuilder, Discriminator, ObjectBuilder, OneOfBuilder, SchemaType, Type,
    };
    use utoipa::openapi::{Ref, RefOr, Schema};

    /// The forms' schema names and their records' schemas, in [`ScreenRecords`]' order.
    fn forms() -> [(&'static str, String, RefOr<Schema>); 7] {
        fn of<T: ToSchema>(form: &'static str) -> (&'static str, String, RefOr<Schema>) {
            (form, T::name().into_owned(), T::schema())
        }
        [
            of::<SentimentSeasonality>("ScreenSentimentSeasonality"),
            of::<SentimentTrend>("ScreenSentimentTrend"),
            of::<Idea>("ScreenIdeas"),
            of::<HedgerExtreme>("ScreenHedgerExtremes"),
            of::<SectorMa>("ScreenSectorMa"),
            of::<Exhaustion>("ScreenOptixExhaustion"),
            of::<Dividend>("ScreenDividend"),
        ]
    }

    fn form(records: &str, categories: &[&'static str]) -> ObjectBuilder {
        ObjectBuilder::new()
            .property(
                "code",
                ObjectBuilder::new()
                    .schema_type(SchemaType::Type(Type::Integer))
                    .minimum(Some(0)),
            )
            .required("code")
            .property(
                "data",
                ArrayBuilder::new().items(Ref::from_schema_name(records)),
            )
            .required("data")
            .property(
                "type",
                ObjectBuilder::new()
                    .schema_type(SchemaType::Type(Type::String))
                    .enum_values(Some(categories.iter().copied()))
                    .description(Some("The screen's category name.")),
            )
            .required("type")
    }

    impl utoipa::PartialSchema for ScreenAnswer {
        fn schema() -> RefOr<Schema> {
            let categories = crate::analytics::screens::categories_by_records();
            let mut discriminator = Discriminator::new("type");
            let mut one_of = OneOfBuilder::new().description(Some(
                "`GET /screens`: `{code, data, type}`; `type` (the category) tells which records `data` holds.",
            ));
            for ((name, _, _), cats) in forms().iter().zip(&categories) {
                one_of = one_of.item(Ref::from_schema_name(*name));
                for c in cats {
                    discriminator
                        .mapping
                        .insert(c.to_string(), format!("#/components/schemas/{name}"));
                }
            }
            one_of.discriminator(Some(discriminator)).into()
        }
    }

    impl ToSchema for ScreenAnswer {
        fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
            let categories = crate::analytics::screens::categories_by_records();
            for ((name, records, schema), cats) in forms().into_iter().zip(&categories) {
                schemas.push((name.to_string(), form(&records, cats).into()));
                schemas.push((records, schema));
            }
        }
    }
}
