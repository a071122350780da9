"""Validates an OpenAPI document (JSON on stdin) with openapi-spec-validator.
Prints {"version": ..., "operations": ["METHOD /path", ...]}; exits non-zero
with the validator's message when the document is invalid."""
import json
import sys

from openapi_spec_validator import validate


def main():
    doc = json.load(sys.stdin)
    validate(doc)
    ops = sorted(f"{m.upper()} {p}" for p, item in doc["paths"].items() for m in item if m in ("get", "post", "put", "delete", "patch"))
    json.dump({"version": doc["openapi"], "operations": ops}, sys.stdout)


if __name__ == "__main__":
    main()
