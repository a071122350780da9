//! Deterministic sample data set.
