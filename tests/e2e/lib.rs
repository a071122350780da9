//! Shared test support: the port contract suites every adapter must pass, and
//! a harness that runs the embedded server on a loopback port.

pub mod aws_meter;
pub mod bench;
pub mod contract;
pub mod emf;
pub mod emulator;
#[path = "keys_client.rs"]
pub mod keys;
pub mod market_files;
pub mod operations;
pub mod plan_costs;
pub mod pollers;
pub mod reference;
pub mod runtime_api;
pub mod server;
pub mod spawned;

/// `command` with the variables `cargo test` sets for a test process
/// removed, so a cargo it runs (directly, or through `cargo lambda watch` or
/// a documented script) builds as a user's would. Build scripts that watch
/// one of them (ring's watches `CARGO_MANIFEST_DIR` and `CARGO_PKG_*`) would
/// otherwise run again, and every crate above them be compiled again, on
/// each switch between the suite's builds and the tests' own.
pub fn as_outside_cargo_test(command: &mut std::process::Command) -> &mut std::process::Command {
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        let set_by_cargo_test = name == "OUT_DIR"
            || name.starts_with("CARGO_PKG_")
            || matches!(
                name,
                "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_MANIFEST_LINKS"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_BIN_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "CARGO_TARGET_TMPDIR"
            )
            || name.starts_with("CARGO_BIN_EXE_");
        if set_by_cargo_test {
            command.env_remove(name);
        }
    }
    command
}
