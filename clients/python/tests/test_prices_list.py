"""`prices()` of a list of symbols answers one frame shaped like yfinance's
multi-symbol download: columns (field, symbol), index `Date` in
datetime64[ns], each symbol's values those of its own frame."""

import io

import httpx
import pandas as pd
import pyarrow as pa
import pytest

from marketlab import Client, UnknownSymbol

FIELDS = ["Open", "High", "Low", "Close", "Volume"]


@pytest.mark.parametrize("adjusted", [True, False])
def test_a_list_answers_one_frame_of_the_single_symbol_frames(client, adjusted):
    symbols = ["KO", "PEP", "SPX"]
    window = {"start": "2019-06-03", "end": "2021-06-30", "adjusted": adjusted}
    frame = client.prices(symbols, **window)

    assert frame.columns.names == ["field", "symbol"]
    assert list(frame.columns) == [(f, s) for f in FIELDS for s in symbols]
    assert frame.index.name == "Date" and str(frame.index.dtype) == "datetime64[ns]"
    assert frame.attrs == {"symbols": symbols, "adjusted": adjusted}
    assert frame.index.is_monotonic_increasing and frame.index.is_unique
    for symbol in symbols:
        one = client.prices(symbol, **window)
        assert str(one.index.dtype) == "datetime64[ns]" and one.index.name == "Date"
        assert list(one.columns) == FIELDS and one.attrs["symbol"] == symbol
        mine = frame.xs(symbol, axis=1, level="symbol")
        mine.columns.name = None
        pd.testing.assert_frame_equal(mine, one, check_exact=True)
        pd.testing.assert_series_equal(frame["Close"][symbol], one["Close"].rename(symbol), check_exact=True)
    # The peers' idiom: one field of every symbol, as a frame.
    closes = frame["Close"]
    assert list(closes.columns) == symbols and len(closes) == len(frame)
    assert closes.loc["2020-03-02", "KO"] == client.prices("KO", **window).loc["2020-03-02", "Close"]


def test_a_list_is_fetched_once_per_symbol_in_its_order(client):
    frame = client.prices(["pep", "KO", "PEP"], start="2020-01-02", end="2020-01-31")
    assert list(frame.columns.get_level_values("symbol").unique()) == ["PEP", "KO"]
    assert frame.attrs["symbols"] == ["PEP", "KO"]
    pd.testing.assert_series_equal(frame[("Close", "PEP")],
                                   client.prices("PEP", start="2020-01-02", end="2020-01-31")["Close"].rename(("Close", "PEP")))
    # One symbol in a list is still the list's shape.
    single = client.prices(["KO"], start="2020-01-02", end="2020-01-31")
    assert list(single.columns) == [(f, "KO") for f in FIELDS]


def test_an_unknown_symbol_in_a_list_is_named(client):
    with pytest.raises(UnknownSymbol) as raised:
        client.prices(["KO", "NOSUCH"])
    assert "NOSUCH" in str(raised.value) and "['KO'" not in str(raised.value)
    with pytest.raises(ValueError, match="non-empty list"):
        client.prices([])


def arrow_bars(dates: list[str], first: float) -> bytes:
    n = len(dates)
    table = pa.table({
        "Date": pa.array(pd.to_datetime(dates).date, type=pa.date32()),
        "Open": [first + i for i in range(n)], "High": [first + i + 1 for i in range(n)],
        "Low": [first + i - 1 for i in range(n)], "Close": [first + i + 0.5 for i in range(n)],
        "Volume": [1000.0 * (i + 1) for i in range(n)],
    })
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def test_symbols_with_other_sessions_are_joined_on_the_union_of_dates():
    # Two symbols on different calendars (a holiday of one market is a
    # session of the other): the rows are the union, NaN where a symbol
    # has no bar, and each symbol's bars are still its own.
    served = {
        "/ws/prices/AAA": ["2024-01-02", "2024-01-03", "2024-01-05"],
        "/ws/prices/BBB": ["2024-01-03", "2024-01-04", "2024-01-05", "2024-01-08"],
    }
    first = {"/ws/prices/AAA": 10.0, "/ws/prices/BBB": 200.0}

    def answer(request: httpx.Request) -> httpx.Response:
        assert request.url.params["format"] == "arrow"
        return httpx.Response(200, content=arrow_bars(served[request.url.path], first[request.url.path]),
                              headers={"content-type": "application/vnd.apache.arrow.stream"})

    client = Client("http://marketlab.example", api_key="mk_test_example")
    client.http = httpx.Client(base_url=client.url, transport=httpx.MockTransport(answer))
    with client:
        frame = client.prices(["AAA", "BBB"])
        assert list(frame.index.strftime("%Y-%m-%d")) == ["2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05", "2024-01-08"]
        assert str(frame.index.dtype) == "datetime64[ns]"
        assert frame[("Close", "AAA")].isna().tolist() == [False, False, True, False, True]
        assert frame[("Close", "BBB")].isna().tolist() == [True, False, False, False, False]
        for symbol in ("AAA", "BBB"):
            one = client.prices(symbol)
            mine = frame.xs(symbol, axis=1, level="symbol").dropna(how="all")
            mine.columns.name = None
            pd.testing.assert_frame_equal(mine, one, check_exact=True, check_freq=False)
        assert frame.loc["2024-01-05", ("Open", "AAA")] == 12.0 and frame.loc["2024-01-05", ("Volume", "BBB")] == 3000.0
