//! The engine against independent reference implementations run in Python
//! (the venv that tests/run prepares; `MARKETLAB_PYTHON` points at it).

mod analytics;
mod backtesting;
mod calendar;
mod company;
mod cpm;
mod empyrical;
mod infra;
mod monte_carlo;
mod openapi;
mod options;
mod overfitting;
mod portfolio;
mod scanner;
mod screens;
mod seasonality;
mod talib;
mod vectorbt;
