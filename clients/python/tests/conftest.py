"""Starts the embedded server for the suite: the marketlab binary
(`--marketlab`, or MARKETLAB_BIN, or the build's debug binary) on
127.0.0.1 with a fresh data directory and its sample set, a second account
on a plan of 4 requests a minute (for the 429 test), and stops it at the end.
Prints one closing line `python client: P passed, F failed` (tests/run
counts it)."""

import os
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

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
    port = free_port()
    log = open(Path(work) / "server.log", "wb")
    proc = subprocess.Popen(
        [str(exe), "--data-dir", str(data), "serve", "--port", str(port), "--stocks", "40",
         # Webhooks to the tests' receiver on 127.0.0.1.
         "--webhooks-allow-loopback", "--webhook-retry-seconds", "0.5,1"],
        stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        assert proc.poll() is None, (Path(work) / "server.log").read_text()[-3000:]
        try:
            with urllib.request.urlopen(url + "/health", timeout=2):
                break
        except OSError:
            assert time.monotonic() < deadline, "the server did not start within 180 s"
            time.sleep(0.3)
    try:
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


@pytest.fixture(scope="session")
def client(env):
    from marketlab import Client

    with Client.from_env() as c:
        yield c


def pytest_terminal_summary(terminalreporter):
    stats = terminalreporter.stats
    passed = len(stats.get("passed", []))
    failed = len(stats.get("failed", [])) + len(stats.get("error", []))
    terminalreporter.write_line(f"python client: {passed} passed, {failed} failed")
