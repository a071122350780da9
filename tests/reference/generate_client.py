"""Generates a Python client from an OpenAPI document (JSON on stdin) with
openapi-python-client, as a new user would, and checks what it made.

Prints {"warnings": [...], "modules": n, "import_failures": [...],
"round_trips": n, "round_trip_failures": [...]}: every line the generator
printed that is not a plain progress line, every generated module that fails
to import, and every schema example (and the request examples given on
stdin's "x-examples") that the generated model does not read back unchanged.
"""

import importlib
import json
import pkgutil
import subprocess
import sys
import tempfile
from pathlib import Path

PACKAGE = "generated_marketlab"
# Lines openapi-python-client prints on a clean run.
PROGRESS = ("Generating ",)


def snake(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and (not name[i - 1].isupper() or (i + 1 < len(name) and name[i + 1].islower())):
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def main():
    given = json.load(sys.stdin)
    doc, extra = given["document"], given.get("examples", {})
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "openapi.json").write_text(json.dumps(doc))
        # No post hooks: the formatter (ruff) is not a dependency of the check.
        (tmp / "config.yaml").write_text("post_hooks: []\n")
        gen = subprocess.run(
            [str(Path(sys.executable).parent / "openapi-python-client"), "generate",
             "--path", str(tmp / "openapi.json"), "--meta", "none",
             "--output-path", str(tmp / PACKAGE), "--config", str(tmp / "config.yaml")],
            capture_output=True, text=True, cwd=tmp,
        )
        lines = [line for line in (gen.stdout + gen.stderr).splitlines() if line.strip()]
        warnings = [line for line in lines if not line.startswith(PROGRESS)]
        if gen.returncode != 0:
            warnings.append(f"exit status {gen.returncode}")
        sys.path.insert(0, str(tmp))
        failures, count = [], 0
        package = importlib.import_module(PACKAGE)
        for info in pkgutil.walk_packages(package.__path__, PACKAGE + "."):
            count += 1
            try:
                importlib.import_module(info.name)
            except Exception as e:  # every failure is reported, not only the first
                failures.append(f"{info.name}: {type(e).__name__}: {e}")
        models = importlib.import_module(PACKAGE + ".models")
        examples = [(name, s["example"]) for name, s in doc["components"]["schemas"].items() if "example" in s]
        examples += [(name, ex) for name, items in extra.items() for ex in items]
        trips, trip_failures = 0, []
        for name, example in examples:
            model = getattr(models, name, None)
            if model is None:
                trip_failures.append(f"{name}: no model")
                continue
            try:
                back = model.from_dict(example).to_dict()
            except Exception as e:
                trip_failures.append(f"{name}: {type(e).__name__}: {e}")
                continue
            trips += 1
            if back != example:
                trip_failures.append(f"{name}: {example} read back as {back}")
    json.dump({"warnings": warnings, "modules": count, "import_failures": failures,
               "round_trips": trips, "round_trip_failures": trip_failures}, sys.stdout)


if __name__ == "__main__":
    main()
