"""The JSON schema of summary.json: generated from empathybench.schema's models (kept here for older imports)."""

from typing import Any

from empathybench.schema.files import checked_in
from empathybench.schema.summary import SUMMARY_SCHEMA_ID, SUMMARY_SCHEMA_VERSION

__all__ = ["SUMMARY_SCHEMA_ID", "SUMMARY_SCHEMA_VERSION", "summary_schema"]


def summary_schema() -> dict[str, Any]:
    return checked_in("summary.schema.json")
