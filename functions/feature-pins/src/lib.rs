//! No code: the manifest unifies the features of shared dependencies between
//! the test build and a function's own build (see its Cargo.toml).
