"""Portfolio inputs are typed: `mypy --strict` (with pandas' and pyarrow's
stubs, the package's `test` extra) passes on the package and on a user's
typed script (tests/typed/portfolio_script.py), and reports each mistake
of tests/typed/misspelt_keys.py (`metod`, `schedul`, `fortnight`, ...) on
its line. The script runs against the server too, so each form its types
allow is one the server takes, and the TypedDicts are compared key by key
and value by value with the served OpenAPI schemas."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import typing
from collections.abc import Mapping
from pathlib import Path

import pytest

import marketlab
from marketlab import portfolio_inputs as inputs

ROOT = Path(__file__).resolve().parents[1]
TYPED = ROOT / "tests" / "typed"
CONFIG = ROOT / "pyproject.toml"


@pytest.fixture(scope="module")
def mypy(tmp_path_factory):
    """`mypy --strict` with the package's configuration, run from its
    source directory (so `-p marketlab` and the scripts' imports read this
    tree's package); the error lines and all it said."""
    cache = tmp_path_factory.mktemp("mypy-cache")

    def run(*args: str) -> tuple[list[str], str]:
        out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--config-file", str(CONFIG),
                              "--cache-dir", str(cache), "--no-color-output", "--show-absolute-path", *args],
                             cwd=ROOT / "src", capture_output=True, text=True)
        said = out.stdout + out.stderr
        return [line for line in out.stdout.splitlines() if ": error:" in line], said

    return run


def test_the_package_and_a_typed_script_pass_mypy_strict(mypy):
    for target in (["-p", "marketlab"], [str(TYPED / "portfolio_script.py")]):
        errors, said = mypy(*target)
        assert errors == [], said
        assert "Success: no issues found" in said, said
    # No missing-stubs escape hatch: pyarrow is checked through its stubs.
    assert "ignore_missing_imports" not in CONFIG.read_text()


def test_mypy_reports_each_misspelt_portfolio_key(mypy):
    script = TYPED / "misspelt_keys.py"
    expected = {}
    for number, line in enumerate(script.read_text().splitlines(), start=1):
        marked = re.search(r"  # error: (.+)$", line)
        if marked:
            expected[number] = marked.group(1)
    assert len(expected) >= 15 and any('"metod"' in line for line in script.read_text().splitlines())
    errors, said = mypy(str(script))
    by_line: dict[int, list[str]] = {}
    for line in errors:
        path, number, message = re.match(r"(.+?):(\d+): error: (.*)$", line).groups()
        assert Path(path).name == script.name, said
        by_line.setdefault(int(number), []).append(message)
    assert sorted(by_line) == sorted(expected), said
    for number, text in expected.items():
        assert any(text in message for message in by_line[number]), (number, text, by_line[number])
    assert any('Extra key "schedul"' in m for m in by_line[next(n for n, t in expected.items() if "schedul" in t)])


def test_the_typed_script_runs_against_the_server(env):
    out = subprocess.run([sys.executable, str(TYPED / "portfolio_script.py")], capture_output=True, text=True,
                         env=dict(os.environ), timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    returns = [float(x) for x in out.stdout.strip().strip("[]").split(",")]
    # Four weight modes and six signal modes, each a total return.
    assert len(returns) == 10 and len(set(returns)) > 1


# -- the TypedDicts against the served schemas --------------------------------

# The one place the types are narrower than the schema: the schema's
# ScoreParams allows `technical` under `weights.select.by`, which the server
# then refuses (a technical signal ranks entries in signal mode only).
NARROWER = {"weights.select.by": {"technical"}}


def plain(where: str) -> str:
    """A place without its variants: `weights.select[top].by` is `weights.select.by`."""
    return re.sub(r"\[[^\]]*\]", "", where).lstrip(".")


def resolve(schema: Mapping, components: Mapping) -> Mapping:
    """A schema with its `$ref` followed and a nullable `oneOf` unwrapped."""
    while True:
        if "$ref" in schema:
            schema = components[schema["$ref"].rsplit("/", 1)[1]]
        elif "oneOf" in schema and any(s.get("type") == "null" for s in schema["oneOf"]):
            (schema,) = [s for s in schema["oneOf"] if s.get("type") != "null"]
        else:
            return schema


def kind(schema: Mapping) -> str:
    t = schema.get("type")
    if isinstance(t, list):
        (t,) = [x for x in t if x != "null"]
    return t


def compare(hint, schema: Mapping, components: Mapping, where: str) -> None:
    ref = schema.get("$ref", "") or next((s.get("$ref", "") for s in schema.get("oneOf", []) if "$ref" in s), "")
    if where.endswith((".entry", ".exit")):
        # The strategy language's blocks: marketlab.strategies' own types.
        assert ref.endswith(("/EntryBlock", "/ExitBlock")) and hint in (marketlab.EntryBlock, marketlab.ExitBlock), where
        return
    schema = resolve(schema, components)
    if typing.is_typeddict(hint):
        assert kind(schema) == "object" and schema.get("additionalProperties") is False, where
        hints = typing.get_type_hints(hint)
        assert set(hints) == set(schema["properties"]), (where, set(hints) ^ set(schema["properties"]))
        assert hint.__required_keys__ == set(schema.get("required", [])), where
        for key, value in hints.items():
            compare(value, schema["properties"][key], components, f"{where}.{key}")
        return
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint == inputs.DateLike:
        assert kind(schema) == "string" and schema.get("format") == "date", where
        return
    if origin is typing.Union:
        variants = [resolve(s, components) for s in schema["oneOf"]]

        def key(s: Mapping) -> str:
            method = s["properties"].get("method", {}).get("enum")
            return method[0] if method else next(iter(s["properties"]))

        def own_key(td) -> str:
            method = typing.get_type_hints(td).get("method")
            return typing.get_args(method)[0] if method else next(iter(typing.get_type_hints(td)))

        served = {key(s): s for s in variants}
        mine = {own_key(td): td for td in args}
        assert set(mine) == set(served) - NARROWER.get(plain(where), set()), (where, set(mine) ^ set(served))
        for name, td in mine.items():
            compare(td, served[name], components, f"{where}[{name}]")
        return
    if origin is typing.Literal:
        assert set(schema["enum"]) == set(args), where
    elif hint is int:
        assert kind(schema) == "integer", where
    elif hint is float:
        assert kind(schema) == "number", where
    elif hint is bool:
        assert kind(schema) == "boolean", where
    elif hint is str:
        assert kind(schema) == "string", where
    elif origin is list:
        assert kind(schema) == "array", where
        compare(args[0], schema["items"], components, f"{where}[]")
    elif origin is Mapping:
        assert kind(schema) == "object" and args == (str, float), where
        assert kind(schema["additionalProperties"]) == "number", where
    else:
        raise AssertionError(f"{where}: no rule for {hint!r}")


def test_the_typed_dicts_mirror_the_served_schema(client):
    components = client.request("GET", "/openapi.json").json()["components"]["schemas"]
    compare(inputs.Portfolio, components["PortfolioParams"], components, "")
    # What portfolio() takes as its two modes are the schema's, not copies.
    hints = typing.get_type_hints(inputs.Portfolio)
    assert hints["signals"] is marketlab.SignalMode and hints["weights"] is marketlab.WeightMode
