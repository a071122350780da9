//! Query parameters documented from a request's own schema: a request read
//! both as a JSON body and as a query string is described once, as a schema,
//! and its query form follows from it.

use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{SchemaType, Type};
use utoipa::openapi::{RefOr, Required, Schema};

/// One query parameter for each property of `T`'s object schema, with the
/// property's description and schema; required as the schema requires. A
/// query string has no null: an optional property's `null` type is dropped.
pub fn from_schema<T: utoipa::PartialSchema>() -> Vec<Parameter> {
    let RefOr::T(Schema::Object(object)) = T::schema() else {
        panic!("query parameters come from an inline object schema");
    };
    object
        .properties
        .iter()
        .map(|(name, property)| {
            let mut property = property.clone();
            let mut description = None;
            if let RefOr::T(Schema::Object(p)) = &mut property {
                description = p.description.take();
                if let SchemaType::Array(types) = &p.schema_type {
                    let present: Vec<Type> = types
                        .iter()
                        .filter(|t| **t != Type::Null)
                        .cloned()
                        .collect();
                    if let [one] = present.as_slice() {
                        p.schema_type = SchemaType::Type(one.clone());
                    }
                }
            }
            let required = if object.required.contains(name) {
                Required::True
            } else {
                Required::False
            };
            ParameterBuilder::new()
                .name(name)
                .parameter_in(ParameterIn::Query)
                .required(required)
                .description(description)
                .schema(Some(property))
                .build()
        })
        .collect()
}

/// Declares `IntoParams` for request types through [`from_schema`].
macro_rules! query_params_from_schema {
    ($($request:ty),+) => {
        $(impl utoipa::IntoParams for $request {
            fn into_params(
                _: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
            ) -> Vec<utoipa::openapi::path::Parameter> {
                $crate::query_params::from_schema::<$request>()
            }
        })+
    };
}
pub(crate) use query_params_from_schema;
