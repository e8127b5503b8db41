"""The checked-in JSON schema files, generated from the models (sorted keys, indent 2)."""

import json
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from empathybench.errors import UserError
from empathybench.schema.run import RunInfo
from empathybench.schema.summary import RunSummary

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_FILES: dict[str, type[BaseModel]] = {"summary.schema.json": RunSummary, "run.schema.json": RunInfo}
REGENERATE = "python -m empathybench.schema"
Model = TypeVar("Model", bound=BaseModel)


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


def checked(model: type[Model], data: dict[str, Any], what: str) -> Model:
    """`data` validated by `model` before it is written; a mismatch is one line naming the first problem."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise UserError(
            f"{what} does not follow its schema ({exc.error_count()} problem(s); first: {where}: {first['msg']})"
        ) from None
