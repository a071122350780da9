"""Checks that the served answers equal their OpenAPI document.

Starts the embedded server (127.0.0.1, a fresh data directory, the sample
set), runs schemathesis against its /openapi.json with the five checks set in
schemathesis.toml, then requires that every documented operation was
exercised and answered 2xx at least once. Prints operations, cases and 2xx
answers per service and one closing line `schemathesis: P passed, F failed`
that tests/run counts.

    python tests/schemathesis/run.py --marketlab target/debug/marketlab [--examples N]

The seed is fixed so CI is reproducible; MARKETLAB_SCHEMATHESIS_SEED=<n>
explores other inputs (do so after changing a schema).
"""

import argparse
import base64
import collections
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import jsonschema

HERE = Path(__file__).resolve().parent
# Operations whose 2xx depends on time, not on the request: a batch's
# results are 409 until its chunks are done, and the stateful phase asks
# right after the submit. tests/e2e/batch.rs checks their 200s.
# A backtest's series, trades and equity likewise are 409 until it has
# succeeded (tests/e2e/own_data.rs and the Python client's tests check
# their 200s).
TIME_DEPENDENT = {
    ("GET", "/backtest/batch/{batch_id}/results"),
    ("GET", "/backtest/chart/{task_id}"),
    ("GET", "/backtest/trades/{task_id}"),
    ("GET", "/backtest/equity/{task_id}"),
}
DEMO = ("demo@marketlab.local", "demo-password")
# A backtest that succeeds (a follow-up's task, and the webhook follow-ups'
# delivery).
STRATEGY = {
    "symbol": "SPX", "start_date": "2005-01-01", "risk_control": "-8//63",
    "entry": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossBelow", "comparison_value": "30"}}},
    "exit": {"rule_type": "SingleCondition", "condition": {"signal": {"name": "S&P 500 Index Optix"}, "rule": {"type_name": "CrossAbove", "comparison_value": "70"}}},
}
# One valid submit per task family. The stateful phase reaches a task's
# status and report operations only when it happens to follow the submit's
# link; these make the "answered 2xx" check independent of that draw.
SUBMITS = {
    # Before "/backtest/": the first family a path starts with is its own.
    "/backtest/portfolio/": (
        "/backtest/portfolio",
        {"universe": ["AAPL", "MSFT", "NVDA"], "start_date": "2020-01-02", "end_date": "2021-12-31",
         "weights": {"schedule": {"every": "month"}}},
    ),
    # A batch with a walk-forward, so that its walk-forward answers too.
    "/backtest/batch/": (
        "/backtest/batch",
        {"strategy": STRATEGY, "grid": {"risk_control": ["-8//63", "-5//21"]},
         "walk_forward": {"in_sample": 750, "out_of_sample": 250}},
    ),
    "/backtest/": ("/backtest/start_backtest", STRATEGY),
    "/cpm/": ("/cpm/scan/start", {"symbol": "SPX", "system_pattern": "double_bottom", "corr_per": 85, "time_in_market": 21}),
    "/smart-scanner-backtest/": (
        "/smart-scanner-backtest/start",
        {"start_date": "2026-08-03", "end_date": "2026-11-20", "find_type": "stock/etf", "signals": ["All"],
         "total_capital": 100000, "long_short_ratio": "0.7/0.3", "daily_limit": 3},
    ),
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(base: str, proc: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"marketlab exited with {proc.returncode} before serving")
        try:
            with urllib.request.urlopen(base + "/openapi.json", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"marketlab did not serve {base} within {seconds:.0f} s")


def operations(document: dict) -> dict:
    """(METHOD, path) -> service tag of every documented operation."""
    out = {}
    for path, item in document["paths"].items():
        for method, op in item.items():
            if method in ("get", "post", "put", "delete", "patch"):
                out[(method.upper(), path)] = (op.get("tags") or ["other"])[0]
    return out


def answers(ndjson: Path) -> dict:
    """(METHOD, path template) -> Counter of answered statuses."""
    seen = collections.defaultdict(collections.Counter)
    for line in ndjson.read_text().splitlines():
        event = json.loads(line)
        finished = event.get("ScenarioFinished")
        if not finished:
            continue
        recorder = finished["recorder"]
        cases = recorder.get("cases", {})
        for case_id, interaction in recorder.get("interactions", {}).items():
            case = cases.get(case_id, {}).get("value", {})
            response = interaction.get("response") or {}
            if "method" in case and "path" in case and "status_code" in response:
                seen[(case["method"].upper(), case["path"])][response["status_code"]] += 1
    return seen


def call(base: str, method: str, path: str, body=None):
    """(status, media type, answer) of one request as the demo user; the
    answer parsed when it is JSON."""
    request = urllib.request.Request(base + path, method=method, data=None if body is None else json.dumps(body).encode())
    request.add_header("Authorization", "Basic " + base64.b64encode(f"{DEMO[0]}:{DEMO[1]}".encode()).decode())
    request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            media = r.headers.get_content_type()
            data = r.read()
            return r.status, media, json.loads(data) if media == "application/json" else data
    except urllib.error.HTTPError as e:
        return e.code, None, None


def webhook_ids(base: str) -> dict | None:
    """A loopback endpoint with one delivery in its log, and an alert: the
    ids the webhook and alert operations take."""
    # The generated cases may have filled the account's endpoints and alerts.
    for kind, path, key in (("endpoints", "/webhooks", "id"), ("alerts", "/smart-stock-scanner/alerts", "id")):
        _, _, listed = call(base, "GET", path)
        items = (listed or {}).get(kind) or ((listed or {}).get("data") or {}).get(kind) or []
        for item in items:
            call(base, "DELETE", f"{path}/{item[key]}")
    status, _, endpoint = call(base, "POST", "/webhooks", {"url": "http://127.0.0.1:9/follow-up", "events": ["task.finished"]})
    if status != 201:
        return None
    status, _, task = call(base, "POST", "/backtest/start_backtest", STRATEGY)
    deadline = time.monotonic() + 60
    delivery = None
    while status == 202 and delivery is None and time.monotonic() < deadline:
        _, _, log = call(base, "GET", f"/webhooks/{endpoint['id']}/deliveries")
        delivery = next(iter((log or {}).get("deliveries", [])), {}).get("id")
        time.sleep(0.3)
    _, _, alert = call(base, "POST", "/smart-stock-scanner/alerts", {"signals": ["MA"]})
    if delivery is None or not alert:
        return None
    return {"{webhook_id}": endpoint["id"], "{delivery_id}": delivery, "{alert_id}": alert["data"]["id"]}


def follow_up(base: str, document: dict, ops: list) -> list:
    """Calls each task, webhook or alert operation no generated case
    answered 2xx once, on a task submitted (or an endpoint and alert made)
    for it, and keeps those whose answer is 2xx and valid against the
    documented schema. Returns the operations still without one."""
    left = []
    hooks = None
    for op, statuses in ops:
        method, path = op
        if any(k in path for k in ("{webhook_id}", "{alert_id}")):
            hooks = hooks or webhook_ids(base)
            if hooks is None:
                left.append((op, {**statuses, "no endpoint, delivery or alert to follow up with": 1}))
                continue
            filled = path
            for key, value in hooks.items():
                filled = filled.replace(key, value)
            status, media, answer = call(base, method, filled)
            if method == "DELETE":
                hooks = None
        else:
            family = next((k for k in SUBMITS if path.startswith(k)), None)
            holder = next((h for h in ("{task_id}", "{batch_id}") if h in path), None)
            if family is None or holder is None:
                left.append((op, statuses))
                continue
            submit, body = SUBMITS[family]
            status, _, sub = call(base, "POST", submit, body)
            task = (sub or {}).get("task_id")
            if status != 202 or not task:
                left.append((op, {**statuses, f"submit {status}": 1}))
                continue
            deadline = time.monotonic() + 60
            while True:
                status, media, answer = call(base, method, path.replace(holder, task))
                if 200 <= status < 300 or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
        if not 200 <= status < 300:
            left.append((op, {**statuses, f"follow-up {status}": 1}))
            continue
        documented = document["paths"][path][method.lower()]["responses"].get(str(status), {}).get("content", {})
        if status == 204 and not documented:
            print(f"  follow-up: {method} {path} answered 204 as documented")
            continue
        if media not in documented:
            left.append((op, {**statuses, f"follow-up {status} {media}, documented {sorted(documented)}": 1}))
            continue
        if media == "application/json":
            pointer = "/".join(p.replace("~", "~0").replace("/", "~1") for p in ("paths", path, method.lower(), "responses", str(status), "content", media, "schema"))
            try:
                jsonschema.Draft202012Validator({**document, "$ref": "#/" + pointer}).validate(answer)
            except jsonschema.ValidationError as e:
                left.append((op, {**statuses, f"follow-up {status} off its schema: {e.message[:200]}": 1}))
                continue
        print(f"  follow-up: {method} {path} answered {status} {media} as documented")
    return left


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--marketlab", required=True, type=Path)
    parser.add_argument("--examples", type=int, default=25, help="generated cases per operation and phase")
    parser.add_argument("--keep", action="store_true", help="keep the data directory and reports")
    args = parser.parse_args()
    # Stopped by tests/run (a failed build): stop the server on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    work = Path(tempfile.mkdtemp(prefix="marketlab-schemathesis-"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = open(work / "server.log", "w")
    # The run checks answers against the document, not the plan's limits
    # (tests/e2e/usage.rs does): the demo's plan gets room for the fuzzing's
    # pace, about 13,000 backtest requests a minute.
    subprocess.run(
        [str(args.marketlab), "plans", "set", "pro", "--data-dir", str(work / "data"), "--requests-per-minute", "1000000"],
        check=True, stdout=log, stderr=subprocess.STDOUT,
    )
    server = subprocess.Popen(
        [str(args.marketlab), "--data-dir", str(work / "data"), "serve", "--port", str(port), "--stocks", "40",
         # Generated webhook endpoints point at loopback (hooks.py).
         "--webhooks-allow-loopback"],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "warn")},
    )
    try:
        wait_ready(base, server, 180)
        with urllib.request.urlopen(base + "/openapi.json") as r:
            documented = operations(json.load(r))
        ndjson = work / "events.ndjson"
        st = Path(sys.executable).with_name("schemathesis")
        command = [
            str(st),
            "--config-file", str(HERE / "schemathesis.toml"),
            "run", base + "/openapi.json",
            "--max-examples", str(args.examples),
            "--seed", os.environ.get("MARKETLAB_SCHEMATHESIS_SEED", "20261123"),
            "--generation-database", "none",
            "--no-color",
            "--report", "ndjson", "--report-ndjson-path", str(ndjson),
        ]
        env = {
            **os.environ,
            "SCHEMATHESIS_HOOKS": "hooks",
            "PYTHONPATH": str(HERE),
            "MARKETLAB_USER": DEMO[0],
            "MARKETLAB_PASSWORD": DEMO[1],
        }
        run = subprocess.run(command, env=env, cwd=work)
        seen = answers(ndjson)
        no_2xx = []
        for op in sorted(documented):
            statuses = seen.get(op)
            if statuses and not any(200 <= s < 300 for s in statuses) and op not in TIME_DEPENDENT:
                no_2xx.append((op, dict(statuses)))
        with urllib.request.urlopen(base + "/openapi.json") as r:
            no_2xx = follow_up(base, json.load(r), no_2xx)
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()

    per_service = collections.defaultdict(lambda: [0, 0, 0])
    missing = []
    for op, service in sorted(documented.items()):
        statuses = seen.get(op)
        if not statuses:
            missing.append(op)
            continue
        ok = sum(n for s, n in statuses.items() if 200 <= s < 300)
        row = per_service[service]
        row[0] += 1
        row[1] += sum(statuses.values())
        row[2] += ok
    print("\nschemathesis per service (operations, cases, 2xx answers):")
    for service, (ops, cases, ok) in sorted(per_service.items()):
        print(f"  {service:<10} {ops:>3} operations {cases:>7} cases {ok:>7} 2xx")
    for op in missing:
        print(f"  not exercised: {op[0]} {op[1]}")
    for op, statuses in no_2xx:
        print(f"  no 2xx answer: {op[0]} {op[1]} {statuses}")
    checks = [
        ("schemathesis checks", run.returncode == 0),
        ("every operation exercised", not missing),
        ("every operation answered 2xx", not no_2xx),
    ]
    for name, ok in checks:
        print(f"schemathesis {'ok  ' if ok else 'FAIL'} {name}")
    failed = sum(1 for _, ok in checks if not ok)
    print(f"schemathesis: {len(checks) - failed} passed, {failed} failed")
    if args.keep or failed:
        print(f"reports and server log: {work}")
    else:
        subprocess.run(["rm", "-rf", str(work)])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
