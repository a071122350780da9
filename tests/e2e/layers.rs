//! What each deployed function links, read from `cargo tree`: the HTTP
//! functions link neither the command line nor the embedded adapters, and
//! the worker links no HTTP crate.

/// The lines `cargo tree --prefix none` prints for `args`.
fn tree(args: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["tree", "--locked", "--offline", "--prefix", "none"])
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn linked(package: &str) -> Vec<String> {
    let out = tree(&["-e", "normal", "-f", "{p}", "-p", package]);
    let mut names: Vec<String> = out
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

/// `name version` -> features of every crate outside the workspace that the
/// packages `args` select depend on over `edges`.
fn features(args: &[&str], edges: &str) -> std::collections::BTreeMap<String, String> {
    let mut all = vec!["--no-dedupe", "-e", edges, "-f", "{p} {f}"];
    all.extend_from_slice(args);
    tree(&all)
        .lines()
        .filter(|l| !l.contains('(') || !l.contains("/functions/") && !l.contains("/engine"))
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let name = format!("{} {}", w.next()?, w.next()?);
            Some((name, w.next().unwrap_or("").to_string()))
        })
        .collect()
}

/// An HTTP function built on its own (`cargo build -p backtest-lambda`, as
/// the deploy, tests/run and the usage test build it) reuses the test build's parquet,
/// arrow and AWS SDK: every crate under them has the same features in both
/// builds. A dev-dependency that turns on a feature of one of them must be
/// pinned in functions/feature-pins.
#[test]
fn a_function_built_alone_shares_the_heavy_dependencies() {
    let workspace = features(&["--workspace"], "normal,build,dev");
    let heavy: std::collections::BTreeSet<String> = ["parquet", "aws-sdk-s3", "aws-sdk-dynamodb"]
        .iter()
        .flat_map(|p| features(&["-p", p], "normal,build").into_keys())
        .collect();
    assert!(
        heavy.len() > 100,
        "{} crates under parquet and the SDK",
        heavy.len()
    );
    for package in ["backtest-lambda", "analytics-lambda", "data-lambda"] {
        let alone = features(&["-p", package], "normal,build");
        let differ: Vec<String> = alone
            .iter()
            .filter(|(name, _)| heavy.contains(*name))
            .filter(|(name, f)| workspace.get(*name) != Some(*f))
            .map(|(name, f)| {
                format!(
                    "{name}: [{f}] alone, [{}] in the workspace",
                    workspace.get(name).map_or("-", String::as_str)
                )
            })
            .collect();
        assert!(
            differ.is_empty(),
            "{package} built alone recompiles: {differ:#?}"
        );
    }
}
