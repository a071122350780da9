//! What each deployed function links, read from `cargo tree`: the HTTP
//! functions link neither the command line nor the embedded adapters, and
//! the worker links no HTTP crate.

fn linked(package: &str) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "tree",
            "--locked",
            "--offline",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(["-f", "{p}", "-p", package])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    names
}

fn assert_free_of(package: &str, banned: &[&str]) {
    let names = linked(package);
    assert!(
        names.iter().any(|n| n == "platform"),
        "{package}: {names:?}"
    );
    let found: Vec<&String> = names
        .iter()
        .filter(|n| banned.contains(&n.as_str()))
        .collect();
    assert!(found.is_empty(), "{package} links {found:?}");
}

#[test]
fn http_functions_link_only_the_http_layer() {
    for package in ["backtest-lambda", "analytics-lambda", "data-lambda"] {
        assert_free_of(
            package,
            &["clap", "indicatif", "rusqlite", "sample", "marketlab"],
        );
    }
}

#[test]
fn the_worker_links_no_http_crate() {
    assert_free_of(
        "worker",
        &[
            "axum",
            "tower-http",
            "lambda_http",
            "utoipa",
            "clap",
            "rusqlite",
            "api",
        ],
    );
}
