//! Shared test support: the port contract suites every adapter must pass, and
//! a harness that runs the embedded server on a loopback port.

pub mod bench;
pub mod contract;
pub mod emulator;
pub mod reference;
pub mod server;
