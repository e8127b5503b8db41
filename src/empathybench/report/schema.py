"""The JSON schema of summary.json (report/summary.schema.json, shipped with the package)."""

import json
from functools import cache
from importlib import resources
from typing import Any

SUMMARY_SCHEMA_VERSION = 1
SUMMARY_SCHEMA_ID = "https://empathybench.invalid/schemas/summary-1.json"


@cache
def summary_schema() -> dict[str, Any]:
    text = resources.files("empathybench.report").joinpath("summary.schema.json").read_text("utf-8")
    return json.loads(text)
