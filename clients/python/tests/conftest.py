"""Starts the embedded server for the suite: the marketlab binary
(`--marketlab`, or MARKETLAB_BIN, or the build's debug binary) on
127.0.0.1 with a fresh data directory and its sample set, a second account
on a plan of 4 requests a minute (for the 429 test), and stops it at the end.
Prints one closing line `python client: P passed, F failed` (tests/run
counts it).

Every test that takes `client` or `connect` runs twice: with `Client`, and
with `AsyncClient` behind `Blocked`, which runs each awaitable it answers
on one event loop. So the async client passes the blocking client's suite,
case for case."""

import asyncio
import contextlib
import inspect
import os
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

DEMO = ("demo@marketlab.local", "demo-password")
LIMITED = ("limited@example.com", "limited-password")


def pytest_addoption(parser):
    parser.addoption("--marketlab", default=None, help="the marketlab binary")


def binary(config) -> Path:
    given = config.getoption("--marketlab") or os.environ.get("MARKETLAB_BIN")
    if given:
        return Path(given)
    target = os.environ.get("CARGO_TARGET_DIR", str(Path.home() / ".cache/marketlab/target"))
    return Path(target) / "debug" / "marketlab"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def data_dir():
    """The server's data directory (its sample market data under `market/`)."""
    with tempfile.TemporaryDirectory() as work:
        yield Path(work) / "data"


@pytest.fixture(scope="session")
def server(request, data_dir):
    exe = binary(request.config)
    assert exe.exists(), f"{exe} is missing: build it with `cargo build -p marketlab`"
    work, data = data_dir.parent, data_dir
    run = lambda *args: subprocess.run([str(exe), "--data-dir", str(data), *args], check=True, capture_output=True)
    run("plans", "set", "trial", "--requests-per-minute", "4")
    run("accounts", "add", "--email", LIMITED[0], "--password", LIMITED[1], "--plan", "trial")
    # Webhooks to the tests' receiver on 127.0.0.1.
    with serving(exe, data, "--webhooks-allow-loopback", "--webhook-retry-seconds", "0.5,1") as url:
        yield url


@contextlib.contextmanager
def serving(exe: Path, data: Path, *options: str) -> Iterator[str]:
    """The embedded server on `data` (its sample set of 40 stocks) and a free
    loopback port, with `options`: its URL once `/health` answers; stopped
    at the end."""
    port = free_port()
    log_path = data.parent / "server.log"
    log = open(log_path, "wb")
    proc = subprocess.Popen(
        [str(exe), "--data-dir", str(data), "serve", "--port", str(port), "--stocks", "40", *options],
        stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    try:
        while True:
            assert proc.poll() is None, log_path.read_text()[-3000:]
            try:
                with urllib.request.urlopen(url + "/health", timeout=2):
                    break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start within 180 s"
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def env(server, monkeypatch_session):
    monkeypatch_session.setenv("MARKETLAB_URL", server)
    monkeypatch_session.setenv("MARKETLAB_USER", DEMO[0])
    monkeypatch_session.setenv("MARKETLAB_PASSWORD", DEMO[1])
    return server


@pytest.fixture(scope="session")
def monkeypatch_session():
    patch = pytest.MonkeyPatch()
    yield patch
    patch.undo()


class Blocked:
    """An `AsyncClient`, or one of its tasks, used as the blocking one is:
    what it answers as an awaitable is awaited here, and the async objects
    it hands out are wrapped alike."""

    def __init__(self, target, loop):
        self._target, self._loop = target, loop

    def __repr__(self):
        return f"Blocked({self._target!r})"

    def _blocking(self, value):
        from marketlab import AsyncClient
        from marketlab.tasks import AsyncTask

        if inspect.isawaitable(value):
            value = self._loop.run_until_complete(value)
        if inspect.ismethod(value) and inspect.iscoroutinefunction(value):
            method = value
            return lambda *args, **kwargs: self._blocking(method(*args, **kwargs))
        if isinstance(value, (AsyncClient, AsyncTask)):
            return Blocked(value, self._loop)
        return value

    def __getattr__(self, name):
        return self._blocking(getattr(self._target, name))

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self._loop.run_until_complete(self._target.close())


@pytest.fixture(scope="session")
def loop():
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture(scope="session", params=["sync", "async"])
def kind(request):
    """Which client the test runs with."""
    return request.param


@pytest.fixture(scope="session")
def connect(kind, loop):
    """`connect(url, user, password, **options)`: a `Client`, or an
    `AsyncClient` used through `Blocked`."""
    from marketlab import AsyncClient, Client

    def make(*args, **options):
        if kind == "sync":
            return Client(*args, **options)
        return Blocked(AsyncClient(*args, **options), loop)

    return make


@pytest.fixture(scope="session")
def client(env, connect):
    with connect(env, *DEMO) as c:
        yield c


def pytest_terminal_summary(terminalreporter):
    stats = terminalreporter.stats
    passed = len(stats.get("passed", []))
    failed = len(stats.get("failed", [])) + len(stats.get("error", []))
    terminalreporter.write_line(f"python client: {passed} passed, {failed} failed")
