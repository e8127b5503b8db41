"""The checked-in JSON schema files, generated from the models (sorted keys, indent 2)."""

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from empathybench.schema.run import RunInfo
from empathybench.schema.summary import RunSummary

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_FILES: dict[str, type[BaseModel]] = {"summary.schema.json": RunSummary, "run.schema.json": RunInfo}
REGENERATE = "python -m empathybench.schema"


def generated(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of `model` as the files hold it (validation mode: what a reader accepts)."""
    return {"$schema": DRAFT, **model.model_json_schema(by_alias=True)}


def render(model: type[BaseModel]) -> str:
    return json.dumps(generated(model), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_schema_files(directory: Path | None = None) -> list[Path]:
    """Write every schema file (into the package's schema/ folder unless `directory` is given)."""
    target = directory or Path(__file__).resolve().parent
    written = []
    for name, model in SCHEMA_FILES.items():
        path = target / name
        path.write_text(render(model), "utf-8")
        written.append(path)
    return written


@cache
def checked_in(name: str) -> dict[str, Any]:
    """A schema file as shipped with the package."""
    return json.loads(resources.files("empathybench.schema").joinpath(name).read_text("utf-8"))
