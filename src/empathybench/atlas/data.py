"""The atlas document: the one that ships with the package (`atlas.json`, made by `empathybench atlas build`), or
another build given as a file. A file is read bounded and checked before use: a bad one is one UserError line."""

import json
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from empathybench.errors import UserError

FORMAT = "empathybench-atlas"
FORMAT_VERSION = 1
ATLAS_FILE = "atlas.json"
MAX_ATLAS_BYTES = 64 * 1024 * 1024  # the shipped atlas is well under 1 MB
ENTRY_KEYS = frozenset({"instrument", "model", "model_id", "status", "primary", "value", "ci95", "n", "items"})


def shipped_path() -> Path:
    return Path(str(resources.files(__package__).joinpath(ATLAS_FILE)))


def check_atlas(document: Any, where: str) -> dict[str, Any]:
    """The document if it is an atlas of this format; else one UserError line naming what is wrong."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise UserError(f'{where} is not an EmpathyBench atlas (no "format": "{FORMAT}")')
    if document.get("format_version") != FORMAT_VERSION:
        raise UserError(
            f"{where} is atlas format version {str(document.get('format_version'))[:20]}; this EmpathyBench reads "
            f"version {FORMAT_VERSION} (rebuild it with `empathybench atlas build`)"
        )
    entries, instruments = document.get("entries"), document.get("instruments")
    if not isinstance(entries, list) or not isinstance(instruments, dict):
        raise UserError(f"{where}: an atlas has a list of 'entries' and a map of 'instruments'")
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict) or not entry.keys() >= ENTRY_KEYS:
            raise UserError(f"{where}: entry {number} lacks one of {', '.join(sorted(ENTRY_KEYS))}")
        if entry["instrument"] not in instruments:
            raise UserError(f"{where}: entry {number} names an instrument the atlas does not describe")
    return document


def read_atlas(path: Path) -> dict[str, Any]:
    """An atlas file given on the command line."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise UserError(f"no such file: {path}") from None
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror}") from None
    if size > MAX_ATLAS_BYTES:
        raise UserError(f"{path} is {size} bytes; an atlas is at most {MAX_ATLAS_BYTES // 2**20} MB")
    try:
        document = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise UserError(f"{path} is not a JSON file: {str(exc)[:200]}") from None
    return check_atlas(document, str(path))


@cache
def shipped_atlas() -> Mapping[str, Any]:
    """The atlas that ships with the package."""
    return read_atlas(shipped_path())


def load_atlas(path: Path | None = None) -> Mapping[str, Any]:
    return shipped_atlas() if path is None else read_atlas(path)
