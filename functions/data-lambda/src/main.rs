//! The data service as a Lambda function behind the HTTP API.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    api::logging::init();
    let state = lambda_functions::aws_state().await;
    lambda_functions::serve_http(
        &state,
        api::routes::service(&state, api::routes::Group::Data),
    )
    .await
}
