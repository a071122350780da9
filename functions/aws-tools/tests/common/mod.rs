//! Runs localstack/start and localstack/stop on a private moto port, state
//! directory and data directory.

use std::path::PathBuf;
use std::process::Command;

pub struct Emulator {
    pub state: tempfile::TempDir,
    pub data: tempfile::TempDir,
    pub port: u16,
}

impl Emulator {
    pub fn new() -> Emulator {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Emulator {
            state: tempfile::tempdir().unwrap(),
            data: tempfile::tempdir().unwrap(),
            port,
        }
    }

    /// `localstack/<name>` with this emulator's settings, without the
    /// variables cargo sets for a test: `start` runs cargo, and a build
    /// script that reads one (ring's `CARGO_PKG_NAME`) would be rebuilt,
    /// and with it everything above it, in the shared target directory.
    pub fn script(&self, name: &str) -> Command {
        let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut c = Command::new(repo.join("localstack").join(name));
        for (key, _) in std::env::vars_os() {
            let Some(key) = key.to_str() else { continue };
            if key == "OUT_DIR"
                || key.starts_with("CARGO_PKG_")
                || key.starts_with("CARGO_BIN_EXE_")
                || key.starts_with("CARGO_MANIFEST_")
                || matches!(
                    key,
                    "CARGO_CRATE_NAME"
                        | "CARGO_BIN_NAME"
                        | "CARGO_PRIMARY_PACKAGE"
                        | "CARGO_TARGET_TMPDIR"
                )
            {
                c.env_remove(key);
            }
        }
        c.env("MARKETLAB_EMULATOR_DIR", self.state.path())
            .env("MARKETLAB_DATA_DIR", self.data.path())
            .env("MARKETLAB_PROVISION_BIN", env!("CARGO_BIN_EXE_provision"))
            .env("MOTO_PORT", self.port.to_string())
            .env_remove("AWS_ENDPOINT_URL");
        c
    }

    /// Starts moto and provisions a 3-stock sample set; panics with the script's output on failure.
    pub fn start(&self) {
        let out = self
            .script("start")
            .args(["--sample-stocks", "3"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The `export` lines start wrote, as pairs.
    pub fn env(&self) -> Vec<(String, String)> {
        std::fs::read_to_string(self.state.path().join("env"))
            .unwrap()
            .lines()
            .filter_map(|l| {
                l.strip_prefix("export ")?
                    .split_once('=')
                    .map(|(k, v)| (k.to_string(), v.to_string()))
            })
            .collect()
    }

    pub fn stop(&self) {
        assert!(self.script("stop").status().unwrap().success());
    }
}
