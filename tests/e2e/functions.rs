//! The HTTP functions as Lambda runs them: each serves its own group's
//! routes and answers 404 for another group's (what each links is checked
//! in `layers`).

use marketlab::server::{DEMO_EMAIL, DEMO_PASSWORD};
use tests::runtime_api::{Function, http_event, workspace_binary};

#[tokio::test(flavor = "multi_thread")]
async fn each_http_function_serves_only_its_own_group() {
    let tests::emulator::Deployment { names, .. } = tests::emulator::deployment().await;
    let env = tests::emulator::function_env(&names);
    let auth = tests::runtime_api::basic(DEMO_EMAIL, DEMO_PASSWORD);
    let own = [
        ("backtest", "/backtest/indicators/list"),
        ("analytics", "/seasonality/get-predefined-holidays"),
        ("data", "/ws/getAllSymbols"),
    ];
    let binaries = tokio::task::spawn_blocking(move || {
        own.map(|(binary, _)| (binary, workspace_binary(binary)))
    })
    .await
    .unwrap();
    for (binary, path) in binaries {
        let mut function = Function::new(&path, binary, 1024, &env).await;
        for (group, route) in own {
            let answer = function
                .invoke(http_event("GET", route, None, Some(&auth)))
                .await
                .answer;
            let want = if group == binary { 200 } else { 404 };
            assert_eq!(
                answer["statusCode"], want,
                "{binary} function, {route}: {answer}"
            );
        }
    }
}
