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

/// The README's first command builds `marketlab`: it links no AWS SDK, no
/// aws-lc (a C build of minutes), no Lambda runtime and no Lambda event
/// types, none of which the embedded server runs.
#[test]
fn the_embedded_binary_links_no_aws_or_lambda_crate() {
    let names = linked("marketlab");
    assert!(
        names.iter().any(|n| n == "platform") && names.iter().any(|n| n == "rustls"),
        "{names:?}"
    );
    let aws: Vec<&String> = names
        .iter()
        .filter(|n| {
            n.starts_with("aws-sdk-")
                || n.starts_with("aws-lc")
                || n.starts_with("aws-smithy")
                || n.starts_with("aws-config")
                || n.starts_with("lambda_")
                || n.starts_with("aws_lambda_events")
                || ["aws-adapters", "lambda-functions"].contains(&n.as_str())
        })
        .collect();
    assert!(aws.is_empty(), "marketlab links {aws:?}");
}

/// Every `cargo run` the README gives selects its package (`-p`): `--bin`
/// alone resolves the features of every default member, so the first
/// command would compile the AWS SDK and aws-lc after all.
#[test]
fn the_readme_builds_the_embedded_binary_alone() {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"),
    )
    .unwrap();
    let runs: Vec<&str> = readme
        .lines()
        .filter(|l| l.trim_start().starts_with("cargo run"))
        .collect();
    assert!(
        runs.first()
            .is_some_and(|l| l.starts_with("cargo run --release -p marketlab ")),
        "{runs:?}"
    );
    let unselected: Vec<&&str> = runs.iter().filter(|l| !l.contains(" -p ")).collect();
    assert!(unselected.is_empty(), "{unselected:?}");
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

/// Each HTTP function, resolved as its own build resolves it (`cargo build
/// -p <package>`, `sam build` from the package's directory), turns on only
/// its own group of `api`: its binary holds no other group's routes.
#[test]
fn each_http_function_builds_api_with_its_group_only() {
    for (package, group) in [
        ("backtest-lambda", "backtest"),
        ("analytics-lambda", "analytics"),
        ("data-lambda", "data"),
    ] {
        let api: Vec<String> = tree(&["-e", "normal,features", "-f", "{p} {f}", "-p", package])
            .lines()
            .filter(|l| l.starts_with("api v"))
            .map(|l| l.split_whitespace().nth(3).unwrap_or_default().to_string())
            .collect();
        assert!(!api.is_empty(), "{package} links api");
        assert!(
            api.iter().all(|f| f == group),
            "{package} builds api with [{}]",
            api.join("], [")
        );
    }
}

/// Every build command the project documents or runs builds one function
/// package at a time (cargo unifies the features of the packages one
/// command selects), and the template builds each HTTP function from its
/// package's own directory.
#[test]
fn no_build_command_merges_two_functions() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap();
    let packages = ["backtest-lambda", "analytics-lambda", "data-lambda"];
    let mut files = vec![
        repo.join("README.md"),
        repo.join("tests/run"),
        repo.join("infra/build-functions"),
        repo.join(".ci/run"),
    ];
    for dir in ["docs", "tests/benches"] {
        for entry in walk(&repo.join(dir)) {
            files.push(entry);
        }
    }
    let mut merged = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for line in text.lines().filter(|l| l.contains("cargo ")) {
            let named = packages.iter().filter(|p| line.contains(*p)).count();
            if named > 1 {
                merged.push(format!("{}: {line}", file.display()));
            }
        }
    }
    assert!(merged.is_empty(), "{merged:#?}");
    let template = std::fs::read_to_string(repo.join("infra/template.yaml")).unwrap();
    for (package, binary) in [
        ("backtest-lambda", "backtest"),
        ("analytics-lambda", "analytics"),
        ("data-lambda", "data"),
    ] {
        let at = template
            .find(&format!("Binary: {binary}\n"))
            .unwrap_or_else(|| panic!("the template builds {binary}"));
        let code_uri = template[at..]
            .lines()
            .find_map(|l| l.trim().strip_prefix("CodeUri: "))
            .unwrap();
        assert_eq!(code_uri, format!("../functions/{package}"), "{binary}");
        let manifest =
            std::fs::read_to_string(repo.join("functions").join(package).join("Cargo.toml"))
                .unwrap();
        assert!(
            manifest.contains(&format!("name = \"{binary}\"")),
            "{package}"
        );
    }
}

/// The files under `dir`, recursively.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}
