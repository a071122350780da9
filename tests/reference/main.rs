//! The engine against independent reference implementations run in Python
//! (the venv that tests/run prepares; `MARKETLAB_PYTHON` points at it).

mod backtesting;
mod calendar;
mod correlation;
mod infra;
mod openapi;
mod talib;
