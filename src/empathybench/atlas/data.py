"""The atlas document: the one that ships with the package (`atlas.json`, made by `empathybench atlas build`), or
another build given as a file. A file is read bounded and checked before use: a bad one is one UserError line."""

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from empathybench.errors import UserError
from empathybench.formatting import printable
from empathybench.instruments.support import read_text_argument
from empathybench.schema.files import checked

FORMAT = "empathybench-atlas"
FORMAT_VERSION = 1
ATLAS_FILE = "atlas.json"
MAX_ATLAS_BYTES = 64 * 1024 * 1024  # the shipped atlas is well under 1 MB


def shipped_path() -> Path:
    return Path(str(resources.files(__package__).joinpath(ATLAS_FILE)))


FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class PublishedFigure(_Open):
    value: FiniteFloat | None
    source: str


class SourceFile(_Open):
    repo: str
    commit: str
    path: str
    sha256: str


class CapabilityFigure(_Open):
    model: str
    model_id: str | None
    family: str | None
    value: FiniteFloat
    source: str


class Capability(_Open):
    label: str
    models: list[CapabilityFigure]


class Margin(_Open):
    value: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    source: str


class AtlasInstrument(_Open):
    title: str
    metric: str
    higher_is_better: bool | None
    summary_metric: str | None
    reproduction_margin: Margin | None = None  # in the units of summary_metric (the reproduction check's m)
    capability: Capability | None = None
    board_placement: dict[str, str] | None = None
    board_figures: list[str] = []
    board_headline: str | None = None


class AtlasIdentity(_Open):
    alias: str
    source: str
    decided_by: str | None = None


class AtlasEntry(_Open):
    """One published model of one instrument (docs/atlas.md, "The data file")."""

    instrument: str
    model: str
    model_id: str | None
    family: str | None
    identity: AtlasIdentity | None = None
    status: Literal["recomputed", "published-only"]
    primary: bool
    value: FiniteFloat | None
    ci95: Annotated[list[FiniteFloat | None], Field(min_length=2, max_length=2)] | None
    n: Annotated[int, Field(ge=0)] | None
    scale: FiniteFloat = 1.0
    offset: FiniteFloat = 0.0
    published: PublishedFigure | None
    difference: FiniteFloat | None = None
    notes: list[str] = []
    settings: dict[str, Any] = {}
    figures: dict[str, Any] = {}
    files: list[SourceFile] = []
    items: dict[str, FiniteFloat] | None


class AtlasDocument(_Open):
    format: Literal["empathybench-atlas"]
    format_version: int
    instruments: dict[str, AtlasInstrument]
    entries: list[AtlasEntry]


def check_atlas(document: Any, where: str, *, validate: bool = True) -> dict[str, Any]:
    """The document if it is an atlas of this format; else one UserError line naming what is wrong. `validate`:
    every entry's fields and types checked (the shipped atlas, built and tested with the package, is not)."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise UserError(f'{where} is not an EmpathyBench atlas (no "format": "{FORMAT}")')
    if document.get("format_version") != FORMAT_VERSION:
        raise UserError(
            f"{where} is atlas format version {printable(document.get('format_version'), 20)}; this EmpathyBench "
            f"reads version {FORMAT_VERSION} (rebuild it with `empathybench atlas build`)"
        )
    if validate:
        checked(AtlasDocument, document, printable(where, 200))
    entries, instruments = document.get("entries"), document.get("instruments")
    if not isinstance(entries, list) or not isinstance(instruments, dict):
        raise UserError(f"{where}: an atlas has a list of 'entries' and a map of 'instruments'")
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or entry.get("instrument") not in instruments:
            raise UserError(f"{where}: entry {number} names an instrument the atlas does not describe")
    return document


def read_atlas(path: Path, *, validate: bool = True) -> dict[str, Any]:
    """An atlas file given on the command line (`validate`: see check_atlas)."""
    text = read_text_argument(path, limit=MAX_ATLAS_BYTES, what="an atlas")
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise UserError(f"{printable(path, 300)} is not a JSON file: {printable(exc, 200)}") from None
    return check_atlas(document, str(path), validate=validate)


@cache
def shipped_atlas() -> Mapping[str, Any]:
    """The atlas that ships with the package."""
    return read_atlas(shipped_path(), validate=False)


def load_atlas(path: Path | None = None) -> Mapping[str, Any]:
    return shipped_atlas() if path is None else read_atlas(path)
