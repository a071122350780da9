"""Prices out, and inputs as a notebook has them: a plain string is one
symbol, and a date is accepted as text, `date`, `datetime`,
`pd.Timestamp` or `numpy.datetime64` wherever one is taken."""

import datetime as dt

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from marketlab import MarketlabError, UnknownSymbol
from test_client import sma_cross


def test_prices_equal_the_stored_parquet_bars(client, data_dir):
    frame = client.prices("SPX", start="2015-03-02", end=dt.date(2016, 2, 29))
    path = data_dir / "market" / "prices" / "daily" / "SPX.parquet"
    stored = pq.read_table(path).to_pandas()
    stored.index = pd.DatetimeIndex(pd.to_datetime(stored.pop("date")), name="Date").as_unit("ns")
    stored = stored.loc["2015-03-02":"2016-02-29"].rename(columns=str.capitalize)
    assert len(frame) > 240 and str(frame.index.dtype) == "datetime64[ns]"
    pd.testing.assert_frame_equal(frame, stored[["Open", "High", "Low", "Close", "Volume"]], check_exact=True, check_freq=False)
    assert frame.attrs["symbol"] == "SPX"
    # As traded: SPX has no recorded split, so the same bars, said so.
    traded = client.prices("SPX", start="2015-03-02", end=dt.date(2016, 2, 29), adjusted=False)
    assert traded.attrs["adjusted"] is False and frame.attrs["adjusted"] is True
    pd.testing.assert_frame_equal(traded, frame, check_exact=True)
    # Without a range, the whole series; the symbol in any case.
    assert len(client.prices("spx")) == pq.read_metadata(path).num_rows
    with pytest.raises(UnknownSymbol) as e:
        client.prices("NOSUCH")
    assert e.value.field == "ticker"
    with pytest.raises(MarketlabError) as e:
        client.prices("SPX", start="2016-02-01", end="2016-01-01")
    assert e.value.status == 400 and e.value.field == "start"


def test_prices_run_a_backtest_as_the_stored_symbol_does(client):
    bars = client.prices("SPX")
    # The whole series sent back, so the averages are warm at 2010 as on
    # the stored symbol.
    stored = client.backtest(sma_cross()).wait(timeout=120)
    own = client.backtest(sma_cross(csv_mode=True), bars=bars).wait(timeout=120)
    for metric in ("total_trades", "total_return", "max_drawdown", "sharpe"):
        assert own.result[metric] == stored.result[metric], metric


def test_one_symbol_as_a_string(client):
    one = client.correlation("SPX", "AAPL", "2020-01-01", "2021-01-01")
    listed = client.correlation("SPX", ["AAPL"], "2020-01-01", "2021-01-01")
    pd.testing.assert_frame_equal(one, listed)


@pytest.mark.parametrize("start, end", [
    (dt.date(2020, 1, 2), dt.date(2020, 12, 31)),
    (dt.datetime(2020, 1, 2), dt.datetime(2020, 12, 31)),
    (pd.Timestamp("2020-01-02"), pd.Timestamp("2020-12-31")),
    (np.datetime64("2020-01-02"), np.datetime64("2020-12-31")),
])
def test_dates_of_every_kind_read_as_their_text(client, start, end):
    text = client.correlation("SPX", ["AAPL", "MSFT"], "2020-01-02", "2020-12-31")
    pd.testing.assert_frame_equal(client.correlation("SPX", ["AAPL", "MSFT"], start, end), text)
    pd.testing.assert_frame_equal(client.prices("SPX", start, end), client.prices("SPX", "2020-01-02", "2020-12-31"))


def test_dates_and_numpy_numbers_inside_a_strategy_are_sent_as_json(client):
    strategy = sma_cross(np.int64(10), np.int64(20), start_date=pd.Timestamp("2010-01-01"))
    strategy["capital"] = np.float64(100000.0)
    a = client.backtest(strategy).wait(timeout=120)
    b = client.backtest(sma_cross(start_date="2010-01-01", capital=100000.0)).wait(timeout=120)
    assert a.result["total_return"] == b.result["total_return"]
    with pytest.raises(ValueError, match="JSON"):
        client.validate({**sma_cross(), "capital": float("nan")})
    with pytest.raises(ValueError, match="time of day"):
        client.prices("SPX", start=dt.datetime(2020, 1, 2, 9, 30))
