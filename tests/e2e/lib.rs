//! Shared test support: the port contract suites every adapter must pass, and
//! a harness that runs the embedded server on a loopback port.

pub mod aws_meter;
pub mod bench;
pub mod contract;
pub mod emf;
pub mod emulator;
pub mod operations;
pub mod plan_costs;
pub mod reference;
pub mod runtime_api;
pub mod server;
pub mod spawned;
