//! The real `marketlab` binary in its own process, on free loopback ports,
//! its standard output kept line by line (the JSON logs included); killed
//! when dropped.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

pub struct Spawned {
    child: Child,
    /// `http://127.0.0.1:<port>`, the tenants' listener.
    pub base: String,
    /// `http://127.0.0.1:<port>/metrics` when `--metrics-addr` was given.
    pub metrics: Option<String>,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Spawned {
    /// `marketlab --data-dir <dir> serve --port 0 <args>` with `RUST_LOG=<log>`;
    /// answers once it is listening.
    pub fn start(binary: &Path, dir: &Path, args: &[&str], log: &str) -> Spawned {
        Spawned::start_with(binary, dir, args, log, &[])
    }

    /// [`Self::start`] with more environment variables.
    pub fn start_with(
        binary: &Path,
        dir: &Path,
        args: &[&str],
        log: &str,
        env: &[(&str, &str)],
    ) -> Spawned {
        let mut child = Command::new(binary)
            .args(["--data-dir"])
            .arg(dir)
            .args(["serve", "--port", "0"])
            .args(args)
            .env("RUST_LOG", log)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("marketlab starts");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut metrics = None;
        let mut before = Vec::new();
        let base = loop {
            let line = lines.next().expect("a line").expect("stdout");
            if let Some(rest) = line.strip_prefix("marketlab metrics on ") {
                metrics = Some(rest.trim().to_string());
            }
            if let Some(rest) = line.strip_prefix("marketlab listening on ") {
                break rest.split_whitespace().next().unwrap().to_string();
            }
            before.push(line);
        };
        // The rest is kept as it comes, so the process never blocks on it.
        let kept = Arc::new(Mutex::new(before));
        let into = kept.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                into.lock().unwrap().push(line);
            }
        });
        Spawned {
            child,
            base,
            metrics,
            lines: kept,
        }
    }

    /// What it has written to stdout (but the line saying where it listens).
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }
}
