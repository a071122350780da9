//! The query parameters of the data service as documented; the handlers
//! parse them with the service's own status codes (400, 406, 410).

/// `days` of the per-symbol history operations.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct Days {
    /// Records (market days for intraday) counted back from the latest; a trial account gets at most 90.
    #[param(minimum = 1, example = 5)]
    days: i64,
}

/// `days` of the bulk operation.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct BulkDays {
    /// 1 to 90; anything else is 410.
    #[param(minimum = 1, maximum = 90, example = 5)]
    days: i64,
}

/// A date as `YYYYMMDD`; anything else is 406.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct DateParam {
    #[param(
        pattern = "^(18|19|20|21)[0-9]{2}((0[13578]|1[02])(0[1-9]|[12][0-9]|3[01])|(0[469]|11)(0[1-9]|[12][0-9]|30)|02(0[1-9]|1[0-9]|2[0-8]))$",
        example = "20261120"
    )]
    date: String,
}

#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct UserIndicatorsParams {
    /// Default true.
    all: Option<bool>,
    /// `-create_date` (default, newest first) or `create_date`.
    #[param(pattern = "^-?create_date$")]
    ordering: Option<String>,
}

#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct CustomUrl {
    /// The custom indicator's identifier.
    #[param(example = "CUSTOM_TECH_SPREAD", pattern = "^\\S+$")]
    url: String,
}
