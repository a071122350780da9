//! docs/architecture.md stays true: every file path it names and every page
//! it links exists.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The paths a text names in backticks under the project's top folders,
/// and the pages it links, relative to the text's folder.
fn named_paths(text: &str) -> (Vec<String>, Vec<String>) {
    const TOP: [&str; 6] = [
        "engine/",
        "functions/",
        "tests/",
        "docs/",
        "infra/",
        "localstack/",
    ];
    let mut files = Vec::new();
    let mut take = |word: &str| {
        let word = word.trim_end_matches([':', '.', ')']);
        // A placeholder (`functions/<group>-lambda/`) names no one path.
        if TOP.iter().any(|t| word.starts_with(t)) && !word.contains(['<', '*', '{']) {
            files.push(word.to_string());
        }
    };
    // Outside code fences, the words in backticks; inside, every word.
    for (k, block) in text.split("```").enumerate() {
        if k % 2 == 1 {
            block.split_whitespace().for_each(&mut take);
        } else {
            for quoted in block.split('`').skip(1).step_by(2) {
                quoted.split([' ', ',']).for_each(&mut take);
            }
        }
    }
    let mut links = Vec::new();
    for part in text.split("](").skip(1) {
        let target = part.split(')').next().unwrap_or_default();
        let page = target.split('#').next().unwrap_or_default();
        if !page.is_empty() && !page.contains("://") {
            links.push(page.to_string());
        }
    }
    (files, links)
}

#[test]
fn every_path_the_architecture_names_exists() {
    let text = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let (files, links) = named_paths(&text);
    assert!(files.len() >= 40, "paths found: {files:?}");
    let missing: Vec<&String> = files
        .iter()
        .filter(|f| !root().join(f.trim_end_matches('/')).exists())
        .collect();
    assert!(missing.is_empty(), "named but missing: {missing:?}");
    let broken: Vec<&String> = links
        .iter()
        .filter(|l| !root().join("docs").join(l).exists())
        .collect();
    assert!(broken.is_empty(), "linked but missing: {broken:?}");
}

#[test]
fn a_path_that_does_not_exist_is_found() {
    let (files, links) = named_paths(
        "see `functions/api/src/nowhere.rs` and [a page](gone.md#part)\n```\nengine/src/gone.rs  why\n```\n",
    );
    assert_eq!(
        files,
        ["functions/api/src/nowhere.rs", "engine/src/gone.rs"]
    );
    assert_eq!(links, ["gone.md"]);
}

/// What a shell block of docs/deploy.md did, run as written.
struct Ran {
    success: bool,
    stdout: String,
    stderr: String,
    /// The state directory the block's `localstack/start` wrote.
    state: tempfile::TempDir,
}

/// Runs the first shell block under `heading` of docs/deploy.md as written,
/// with free ports and its own state directory through the variables the
/// block reads, the reference venv on `PATH` (where `pip install
/// cargo-lambda` put it) and no AWS variables of the test's own; whatever
/// it leaves running is killed.
fn run_deploy_block(heading: &str) -> Ran {
    use std::os::unix::process::CommandExt;
    let guide = std::fs::read_to_string(root().join("docs/deploy.md")).unwrap();
    let section = &guide[guide.find(heading).expect("the section")..];
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("its shell block");
    let free = || {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
            .to_string()
    };
    let state = tempfile::tempdir().unwrap();
    let venv = tests::reference::python()
        .parent()
        .and_then(|bin| bin.parent())
        .unwrap()
        .to_path_buf();
    let mut command = std::process::Command::new("bash");
    tests::as_outside_cargo_test(&mut command)
        .args(["-euo", "pipefail", "-c", block])
        .current_dir(root())
        .env("PORT", free())
        .env("MOTO_PORT", free())
        .env("MARKETLAB_EMULATOR_DIR", state.path())
        .env("MARKETLAB_VENV", &venv)
        .env(
            "PATH",
            format!(
                "{}:{}",
                venv.join("bin").display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .process_group(0);
    for (key, _) in std::env::vars() {
        if key.starts_with("AWS_") {
            command.env_remove(key);
        }
    }
    // Files, not pipes: what the block starts in the background may hold
    // its output open after it ends.
    let (stdout, stderr) = (state.path().join("out"), state.path().join("err"));
    let mut child = command
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let group = child.id();
    let status = child.wait().unwrap();
    // Whatever the block left running (it stops all on success).
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{group}")])
        .status();
    Ran {
        success: status.success(),
        stdout: std::fs::read_to_string(&stdout).unwrap(),
        stderr: std::fs::read_to_string(&stderr).unwrap(),
        state,
    }
}

/// docs/deploy.md "Local AWS", its shell block run as written: the emulator
/// and the poller started by `localstack/start`, the functions under `cargo
/// lambda watch` with only the environment file it wrote, a signed-in
/// request answered, everything stopped.
#[test]
fn local_aws_by_the_deploy_guide_s_commands_alone() {
    let ran = run_deploy_block("## Local AWS");
    assert!(ran.success, "{}\n{}", ran.stdout, ran.stderr);
    let answer: serde_json::Value = ran
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v.get("total").is_some())
        .unwrap_or_else(|| panic!("no JSON answer in {}", ran.stdout));
    assert!(answer["tasks"].is_array(), "{answer}");
    assert!(ran.stdout.contains("poller stopped"), "{}", ran.stdout);
    assert!(ran.stdout.contains("emulator stopped"), "{}", ran.stdout);
    // The poller came up with the file's environment and stopped cleanly.
    let log = std::fs::read_to_string(ran.state.path().join("poller.log")).unwrap();
    assert!(log.contains("poller started"), "{log}");
    assert!(!log.contains("starting another"), "{log}");
}

/// docs/deploy.md "Try recovery", its shell block run as written: with the
/// recovery settings scaled down, a poller killed (SIGKILL) while a
/// 1,000-strategy batch runs is started again by its supervisor and the
/// batch has every row once; a message that is not a job reaches the
/// dead-letter queue, is listed and redriven; everything stopped.
#[test]
fn trying_recovery_by_the_deploy_guide_s_commands_alone() {
    let ran = run_deploy_block("### Try recovery");
    assert!(ran.success, "{}\n{}", ran.stdout, ran.stderr);
    for printed in [
        "1000 rows, each once",
        "times\tnot a job",
        "sent 1 messages from ",
        "poller stopped",
        "emulator stopped",
    ] {
        assert!(
            ran.stdout.contains(printed),
            "{printed:?} in {}",
            ran.stdout
        );
    }
    let log = std::fs::read_to_string(ran.state.path().join("poller.log")).unwrap();
    assert!(
        log.contains("poller exited (137); starting another"),
        "{log}"
    );
    assert!(log.contains("a message that is not a job message"), "{log}");
}
