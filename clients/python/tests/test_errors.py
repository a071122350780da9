"""API errors are exceptions of one hierarchy, never a parse failure: an
analytics envelope whose `code` is an error raises though it came in an
HTTP 200 (the spec's JSON), and an error to a request for an Arrow stream
raises from its JSON body. The scanner before any scan, on a server started
with `--no-scan` (as docs/scanner.md describes it)."""

import json
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import DEMO, binary, serving
from marketlab import InsufficientData, MarketlabError, NoData, UnknownSymbol

ARROW = "application/vnd.apache.arrow.stream"


@pytest.fixture(scope="module")
def no_scan_server(request):
    """A second server, on a fresh data directory, that never scans."""
    exe = binary(request.config)
    assert exe.exists(), f"{exe} is missing: build it with `cargo build -p marketlab`"
    with tempfile.TemporaryDirectory() as work:
        with serving(exe, Path(work) / "data", "--no-scan") as url:
            yield url


@pytest.fixture(scope="module")
def no_scan(no_scan_server, connect):
    with connect(no_scan_server, *DEMO) as c:
        yield c


def test_the_scanner_before_any_scan_raises_no_data(no_scan):
    # python.md's scanner block, before the first scan.
    with pytest.raises(NoData) as e:
        no_scan.scanner()
    assert (e.value.status, e.value.code, e.value.message) == (404, 407, "No scan has run yet")
    assert isinstance(e.value, MarketlabError) and isinstance(e.value, LookupError)
    assert e.value.body == {"code": 407, "msg": "No scan has run yet", "data": None}
    # The Arrow request is answered 404 with the JSON envelope ...
    with pytest.raises(NoData) as raw:
        no_scan.request("GET", "/smart-stock-scanner/latest-day-all", headers={"Accept": ARROW})
    assert raw.value.status == 404 and raw.value.code == 407
    # ... and the spec's JSON keeps its HTTP 200, which the package raises all the same.
    answer = no_scan.request("GET", "/smart-stock-scanner/single/AAPL")
    assert answer.status_code == 200 and answer.json()["code"] == 407
    with pytest.raises(NoData) as history:
        no_scan.scanner_history("AAPL")
    assert (history.value.status, history.value.code, history.value.message) == (404, 407, "No scan has run yet")


def test_an_unknown_ticker_stays_unknown_symbol_on_the_arrow_request(no_scan):
    with pytest.raises(UnknownSymbol) as e:
        no_scan.scanner(ticker="NOSUCH")
    assert (e.value.status, e.value.code, e.value.field) == (404, 404, "ticker")
    assert not isinstance(e.value, NoData)


def test_insufficient_data_is_one_exception_as_json_and_as_arrow(no_scan):
    # The Arrow request (rolling correlation) is answered 422 ...
    with pytest.raises(InsufficientData) as arrow:
        no_scan.correlation("SPX", ["IVV", "TLT"], "2024-01-01", "2024-01-20")
    # ... the JSON one (asset correlation) 200 with code 411.
    with pytest.raises(InsufficientData) as plain:
        no_scan.asset_correlation("2024-01-06", "2024-01-07")
    for e in (arrow.value, plain.value):
        assert (e.status, e.code) == (422, 411) and e.body["code"] == 411 and e.message


class _Legacy(BaseHTTPRequestHandler):
    """A server of the spec's envelope that answers every request, the Arrow
    one too, with an error in an HTTP 200 (as this one did before)."""

    answer = {"code": 407, "msg": "No scan has run yet", "data": None}

    def log_message(self, *_):
        pass

    def do_GET(self):
        self._send(json.dumps(self.answer).encode(), "application/json")

    def _send(self, body: bytes, media: str):
        self.send_response(200)
        self.send_header("Content-Type", media)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture()
def legacy():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Legacy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_json_where_an_arrow_stream_was_asked_for_is_never_a_parse_failure(legacy, connect):
    with connect(legacy, *DEMO, max_retries=0) as c:
        with pytest.raises(NoData) as e:
            c.scanner()
        assert (e.value.status, e.value.code, e.value.message) == (404, 407, "No scan has run yet")
        # An answer that is neither a stream nor an error envelope says so.
        _Legacy.answer = {"code": 200, "msg": "ok", "data": []}
        try:
            with pytest.raises(MarketlabError, match="not an Arrow stream") as other:
                c.scanner()
            assert type(other.value) is MarketlabError and other.value.status == 200
        finally:
            _Legacy.answer = {"code": 407, "msg": "No scan has run yet", "data": None}


def test_a_pattern_task_that_matched_nothing_raises_no_data(client):
    """The task succeeds with the spec's code 407 and no `data`: its reads
    raise `NoData`, never an error of the package's own."""
    task = client.cpm_scan("SPX", corr_per=99, time_in_market=21, system_pattern="double_bottom",
                           start_date="2026-11-01").wait(timeout=120)
    assert task.record["result"]["code"] == 407 and task.record["result"].get("data") is None
    with pytest.raises(NoData) as e:
        task.patterns
    assert e.value.code == 407 and e.value.status == 404
    with pytest.raises(NoData):
        task.result
