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

/// What a shell block of the docs did, run as written.
struct Ran {
    success: bool,
    stdout: String,
    stderr: String,
    /// The state directory the block's `localstack/start` wrote.
    state: tempfile::TempDir,
}

impl Ran {
    /// A file the block left in its state directory ("" if none).
    fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.state.path().join(name)).unwrap_or_default()
    }

    /// What it printed and the last lines of each log it left, for a
    /// failure's message.
    fn told(&self) -> String {
        let mut told = format!("--- stdout\n{}\n--- stderr\n{}", self.stdout, self.stderr);
        let mut logs: Vec<_> = std::fs::read_dir(self.state.path())
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .collect();
        logs.sort();
        for log in logs {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            told += &format!(
                "\n--- {} (last 40 lines)\n{}",
                log.display(),
                lines[lines.len().saturating_sub(40)..].join("\n")
            );
        }
        told
    }
}

/// How long a block may run before the test stops it: a hang guard only
/// (the blocks take a minute or two, their first function build included).
const BLOCK_GUARD: std::time::Duration = std::time::Duration::from_secs(900);

/// Runs the first shell block under `heading` of `doc` (under docs/) as
/// written, from the repository's root, from a clean environment: `PATH`
/// (with the reference venv first, where `pip install cargo-lambda` put
/// it), `HOME`, and the variables the block reads for free ports and its
/// own state directory; nothing else (no build settings, no AWS variables)
/// but the suite's outbound log, which keeps servers it starts on this
/// machine. Whatever it leaves running is killed.
fn run_block(doc: &str, heading: &str) -> Ran {
    use std::os::unix::process::CommandExt;
    let guide = std::fs::read_to_string(root().join("docs").join(doc)).unwrap();
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
    command
        .env_clear()
        .args(["-euo", "pipefail", "-c", block])
        .current_dir(root())
        .env(
            "PATH",
            format!(
                "{}:{}",
                venv.join("bin").display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("HOME", std::env::var_os("HOME").expect("HOME"))
        .env("PORT", free())
        .env("MOTO_PORT", free())
        .env("MARKETLAB_EMULATOR_DIR", state.path())
        .env("MARKETLAB_VENV", &venv)
        .process_group(0);
    if let Some(log) = std::env::var_os("MARKETLAB_OUTBOUND_LOG") {
        command.env("MARKETLAB_OUTBOUND_LOG", log);
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
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > BLOCK_GUARD {
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    // Whatever the block left running (it stops all on success).
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{group}")])
        .status();
    let _ = child.wait();
    let ran = Ran {
        success: status.is_some_and(|s| s.success()),
        stdout: std::fs::read_to_string(&stdout).unwrap(),
        stderr: std::fs::read_to_string(&stderr).unwrap(),
        state,
    };
    assert!(
        status.is_some(),
        "the block ran past {BLOCK_GUARD:?}\n{}",
        ran.told()
    );
    ran
}

/// The lines of cargo's output that compiled a crate: a build not reused.
fn compiled(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|l| l.trim_start().starts_with("Compiling "))
        .collect()
}

/// The lines of an output that are JSON log records (a function's or a
/// service's), not what a command printed for its reader.
fn log_records(output: &str) -> Vec<&str> {
    output
        .lines()
        .filter(|l| {
            serde_json::from_str::<serde_json::Value>(l).is_ok_and(|v| {
                v.get("level").is_some()
                    || v.get("fields").is_some_and(|f| f.get("message").is_some())
            })
        })
        .collect()
}

/// The target directory `infra/build-env` names from a clean environment.
fn shared_target() -> PathBuf {
    PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/marketlab/target")
}

#[test]
fn a_build_not_reused_and_log_lines_are_told() {
    let log = "\
 INFO starting Runtime server runtime_addr=127.0.0.1:9000
   Compiling platform v0.1.0 (/repo/functions/platform)
   Compiling serde v1.0.228
    Finished `dev` profile [unoptimized + debuginfo] target(s) in 1m 02s
     Running `/home/u/.cache/marketlab/target/debug/backtest`
";
    assert_eq!(compiled(log).len(), 2);
    assert!(compiled(&log.replace("Compiling", "Checked")).is_empty());
    let out = "1000 rows, each once\n{\"timestamp\":\"t\",\"level\":\"INFO\",\"fields\":{\"message\":\"m\"}}\n{\"fields\":{\"message\":\"poller exited (137); starting another\"}}\n{\"total\": 0, \"tasks\": []}\n";
    assert_eq!(log_records(out).len(), 2);
}

/// docs/deploy.md "Local AWS", its shell block run as written from a clean
/// environment: the emulator, the poller and the ingest function started
/// by `localstack/start`, the functions under `cargo lambda watch` with
/// only the environment file it wrote and the build settings the block
/// sources, a signed-in request answered, everything stopped. The test
/// build was reused: cargo ran the function from the shared target
/// directory and compiled nothing.
#[test]
fn local_aws_by_the_deploy_guide_s_commands_alone() {
    let ran = run_block("deploy.md", "## Local AWS");
    assert!(ran.success, "{}", ran.told());
    let answer: serde_json::Value = ran
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v.get("total").is_some())
        .unwrap_or_else(|| panic!("no JSON answer in {}", ran.stdout));
    assert!(answer["tasks"].is_array(), "{answer}");
    for stopped in ["poller stopped", "ingest stopped", "emulator stopped"] {
        assert!(ran.stdout.contains(stopped), "{stopped}: {}", ran.stdout);
    }
    // The poller and the ingest function came up with the file's
    // environment and stopped cleanly.
    let log = ran.file("poller.log");
    assert!(log.contains("poller started"), "{log}");
    assert!(!log.contains("starting another"), "{log}");
    let log = ran.file("ingest.log");
    assert!(log.contains("ingest polling"), "{log}");
    assert!(!log.contains("starting another"), "{log}");
    let env = ran.file("env");
    for var in [
        "MARKETLAB_QUEUE_URL",
        "MARKETLAB_WEBHOOK_QUEUE_URL",
        "MARKETLAB_INGEST_QUEUE_URL",
        "AWS_ENDPOINT_URL_SQS",
    ] {
        assert!(
            env.contains(&format!("export {var}=http://127.0.0.1:")),
            "{var}: {env}"
        );
    }
    // The build was reused.
    let functions = ran.file("functions.log");
    let running = format!("Running `{}/debug/backtest`", shared_target().display());
    assert!(functions.contains(&running), "{running} in {functions}");
    assert_eq!(
        compiled(&functions),
        Vec::<&str>::new(),
        "the test build was not reused"
    );
}

/// docs/deploy.md "Try recovery", its shell block run as written: with the
/// recovery settings scaled down, a poller killed (SIGKILL) while a
/// 1,000-strategy batch runs is started again by its supervisor and the
/// batch has every row once; a message that is not a job reaches the
/// dead-letter queue, is listed and redriven; everything stopped. It
/// prints its result lines and no log record.
#[test]
fn trying_recovery_by_the_deploy_guide_s_commands_alone() {
    let ran = run_block("deploy.md", "### Try recovery");
    assert!(ran.success, "{}", ran.told());
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
    for output in [&ran.stdout, &ran.stderr] {
        assert_eq!(log_records(output), Vec::<&str>::new(), "{output}");
    }
    let log = ran.file("poller.log");
    assert!(
        log.contains("poller exited (137); starting another"),
        "{log}"
    );
    assert!(log.contains("a message that is not a job message"), "{log}");
    assert!(!log_records(&ran.file("functions.log")).is_empty());
}

/// docs/data-updates.md "On the local stack", its shell block run as
/// written from a clean environment: a file copied under the bucket's
/// `incoming/` with the AWS CLI on the stack `localstack/start` made is
/// imported by the ingest function reading the ingest queue, moved to
/// `ingested/` with its report, and a warm backtest function answers its
/// new session.
#[test]
fn data_updates_on_the_local_stack_by_the_guide_s_commands_alone() {
    let ran = run_block("data-updates.md", "### On the local stack");
    assert!(ran.success, "{}", ran.told());
    let sessions: Vec<&str> = ran
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("latest session: "))
        .collect();
    assert_eq!(sessions, ["2026-11-20", "2026-11-23"], "{}", ran.stdout);
    // The report the CLI printed: the file went in, nothing refused.
    let at = ran.stdout.find('{').expect("the report");
    let report: serde_json::Value = serde_json::Deserializer::from_str(&ran.stdout[at..])
        .into_iter()
        .next()
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}: {}", ran.stdout));
    assert_eq!(report["errors"], 0, "{report}");
    let log = ran.file("ingest.log");
    assert!(log.contains("market data: ingested"), "{log}");
    assert!(log.contains("AAPL.csv"), "{log}");
    assert!(ran.stdout.contains("ingest stopped"), "{}", ran.stdout);
}
