//! The backtest service as a Lambda function behind the HTTP API.

#[tokio::main]
async fn main() -> Result<(), lambda_http::Error> {
    lambda_functions::serve_group(api::routes::Group::Backtest).await
}
