"""Constraints between fields that JSON Schema cannot state; the generated
requests keep every schema constraint and gain these."""

import schemathesis
