//! Running the Python reference scripts of tests/reference.

use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The reference interpreter, if there is one: `MARKETLAB_PYTHON`, else the
/// venv tests/run makes.
pub fn find() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("MARKETLAB_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let home = std::env::var("HOME").unwrap_or_default();
    Some(PathBuf::from(home).join(".cache/marketlab/venv/bin/python")).filter(|p| p.exists())
}

/// The reference interpreter; a missing venv fails the test with what to run.
pub fn python() -> PathBuf {
    find().expect(
        "the reference venv is missing: run tests/run, which installs tests/reference/requirements.txt",
    )
}

/// Runs `tests/reference/<script>` with `input` as JSON on stdin; returns its JSON output.
pub fn run(script: &str, input: &Value) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("reference")
        .join(script);
    let mut child = Command::new(python())
        .arg(&path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("reference python starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{script} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("reference output is JSON")
}
