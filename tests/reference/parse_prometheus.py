"""Parses Prometheus text exposition with prometheus_client's own parser,
as a scraper would. Input: {"text": "..."} on stdin. Output: the families
(name, type, unit-free help) and every sample (name, labels, value)."""

import json
import sys

from prometheus_client.parser import text_string_to_metric_families

text = json.load(sys.stdin)["text"]
families = []
samples = []
for family in text_string_to_metric_families(text):
    families.append({"name": family.name, "type": family.type, "help": family.documentation})
    for s in family.samples:
        samples.append({"name": s.name, "labels": s.labels, "value": s.value})
json.dump({"families": families, "samples": samples}, sys.stdout)
