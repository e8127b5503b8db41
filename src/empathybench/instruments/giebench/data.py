"""GIEBench items from the official pre-rendered files or from structured items (specs/giebench.md §2.1, §6).

Official files (data/{Raw,ID,COT}-Prompt.json at the pinned commit) map an item key to a record with at least
`prompt` (rendered), `correct` (gold letter) and `category` (dimension), per SOURCE.md; the real files could
not be inspected, so anything beyond those three fields is optional here.

Structured items (JSON): {"items": [{"id", "dimension", "identity", "question", "answers": [4], "correct_index"}]}
(a bare list is accepted too); they are rendered with our templates and a seeded option shuffle.
"""

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from empathybench.data.fetch import FetchedFile, fetch_pinned, git_blob_sha1_of, sha256_of
from empathybench.data.registry import pin
from empathybench.errors import DataError, UserError
from empathybench.instruments.giebench.render import (
    CONDITIONS,
    LETTERS,
    gold_letter,
    option_permutation,
    render_prompt,
)

OFFICIAL_FILENAMES: dict[str, str] = {condition: f"{condition}-Prompt.json" for condition in CONDITIONS}
OFFICIAL_KEYS: dict[str, str] = {
    condition: f"upstream/GIEBench/GIEBench/data/{filename}" for condition, filename in OFFICIAL_FILENAMES.items()
}
DIMENSIONS: tuple[str, ...] = (
    "Country",
    "Orientation",
    "Age",
    "Gender",
    "Personality",
    "Skin",
    "Faith",
    "Education",
    "Economy",
    "Party",
    "Occupation",
)
# Source spellings that differ from the published tables (§5.8: "Orentation" in file names and keys).
_DIMENSION_ALIASES = {"orentation": "Orientation"}
_IDENTITY_IN_PROMPT = re.compile(r"The user belongs to the (.+?) group\.")
UNKNOWN_IDENTITY = "(unknown)"


@dataclass(frozen=True)
class GIEItem:
    """One topic with its prompt and gold letter per condition."""

    item_id: str
    dimension: str
    identity: str
    prompts: dict[str, str]  # condition -> full prompt text
    gold: dict[str, str]  # condition -> gold letter A-D
    permutation: tuple[int, ...] | None = None  # structured items only: source index shown as A, B, C, D


def normalize_dimension(name: str) -> str:
    cleaned = name.strip()
    canonical = {d.lower(): d for d in DIMENSIONS}
    return _DIMENSION_ALIASES.get(cleaned.lower()) or canonical.get(cleaned.lower(), cleaned)


def identity_from_prompt(prompt: str) -> str | None:
    """The identity named in an ID or COT header ("The user belongs to the X group.")."""
    match = _IDENTITY_IN_PROMPT.search(prompt)
    return match.group(1).strip() if match else None


def _records_of(data: Any, filename: str) -> dict[str, Mapping[str, Any]]:
    # The documented shape is an object keyed by item; a list is accepted and keyed by position.
    if isinstance(data, dict):
        records = {str(key): value for key, value in data.items()}
    elif isinstance(data, list):
        records = {str(index): value for index, value in enumerate(data)}
    else:
        raise DataError(f"{filename}: expected a JSON object of item records, got {type(data).__name__}")
    for key, record in records.items():
        if not isinstance(record, Mapping):
            raise DataError(f"{filename}: item {key!r} is not an object")
        for field_name in ("prompt", "correct", "category"):
            if not isinstance(record.get(field_name), str):
                raise DataError(f"{filename}: item {key!r} has no string field {field_name!r}")
        if record["correct"].strip() not in LETTERS:
            raise DataError(f"{filename}: item {key!r} has correct={record['correct']!r}, expected A, B, C or D")
    return records


def items_from_official(files: Mapping[str, Any]) -> list[GIEItem]:
    """Join the three parsed official files (condition -> JSON data) by item key."""
    records = {condition: _records_of(data, OFFICIAL_FILENAMES[condition]) for condition, data in files.items()}
    key_sets = {condition: set(recs) for condition, recs in records.items()}
    first_condition = next(iter(key_sets))
    for condition, keys in key_sets.items():
        if keys != key_sets[first_condition]:
            differing = sorted(keys ^ key_sets[first_condition])[:5]
            raise DataError(
                f"{OFFICIAL_FILENAMES[condition]} and {OFFICIAL_FILENAMES[first_condition]} hold different item "
                f"keys (e.g. {', '.join(differing)}); the three files must describe the same items"
            )
    items = []
    for key in records[first_condition]:
        per_condition = {condition: recs[key] for condition, recs in records.items()}
        dimensions = {normalize_dimension(str(r["category"])) for r in per_condition.values()}
        if len(dimensions) != 1:
            raise DataError(f"item {key!r} has different categories across the files: {sorted(dimensions)}")
        identity = next(
            (str(r["identity"]) for r in per_condition.values() if isinstance(r.get("identity"), str)), None
        )
        if identity is None:
            # No identity field is documented; ID and COT headers name it (§2.1).
            identity = next(
                (found for r in per_condition.values() if (found := identity_from_prompt(r["prompt"]))), None
            )
        items.append(
            GIEItem(
                item_id=key,
                dimension=dimensions.pop(),
                identity=identity or UNKNOWN_IDENTITY,
                prompts={condition: r["prompt"] for condition, r in per_condition.items()},
                gold={condition: r["correct"].strip() for condition, r in per_condition.items()},
            )
        )
    return items


def _parse_json(content: bytes, where: str) -> Any:
    try:
        return json.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise DataError(f"{where} is not a readable JSON file: {exc}") from None


def fetch_official(*, allow_unverified: bool) -> tuple[list[GIEItem], list[FetchedFile]]:
    """The official files through the project's fetch code (pinned commit, git blob sha1)."""
    fetched: list[FetchedFile] = []
    for condition in CONDITIONS:
        try:
            fetched.append(fetch_pinned(__package__, OFFICIAL_KEYS[condition], allow_unverified=allow_unverified))
        except DataError as exc:
            raise DataError(
                f"GIEBench data unavailable ({exc}). The official data/*-Prompt.json files are not in the offline "
                "mirror; give a copy with --option giebench.data_dir=DIR (Raw-Prompt.json, ID-Prompt.json, "
                "COT-Prompt.json) or structured items with --option giebench.items=FILE"
            ) from None
    data = {c: _parse_json(f.path.read_bytes(), str(f.path)) for c, f in zip(CONDITIONS, fetched, strict=True)}
    return items_from_official(data), fetched


def load_official_dir(directory: Path, *, allow_unverified: bool) -> tuple[list[GIEItem], list[FetchedFile]]:
    """The three official files from a user directory, checked against the pinned git blob sha1."""
    if not directory.is_dir():
        raise UserError(f"giebench.data_dir: no such directory: {directory}")
    fetched: list[FetchedFile] = []
    data: dict[str, Any] = {}
    for condition in CONDITIONS:
        path = directory / OFFICIAL_FILENAMES[condition]
        try:
            content = path.read_bytes()
        except FileNotFoundError:
            raise DataError(
                f"giebench.data_dir: {path} is missing; the directory needs {', '.join(OFFICIAL_FILENAMES.values())}"
            ) from None
        except OSError as exc:
            raise DataError(f"cannot read {path}: {exc.strerror}") from None
        expected = pin(__package__, OFFICIAL_KEYS[condition]).git_blob_sha1
        verified = git_blob_sha1_of(content) == expected
        if not verified and not allow_unverified:
            raise DataError(
                f"{path} is not the pinned GIEBench file (expected git blob sha1 {expected}, got "
                f"{git_blob_sha1_of(content)}); pass --allow-unverified to use a different copy"
            )
        fetched.append(FetchedFile(OFFICIAL_KEYS[condition], path.resolve(), sha256_of(content), verified, str(path)))
        data[condition] = _parse_json(content, str(path))
    return items_from_official(data), fetched


def items_from_structured(data: Any, *, seed: int, shuffle: bool, source: str = "items") -> list[GIEItem]:
    """Render structured items in the three conditions; the option order is shuffled per item with `seed`."""
    raw_items = data.get("items") if isinstance(data, dict) else data
    if not isinstance(raw_items, list) or not raw_items:
        raise DataError(f"{source}: expected a non-empty list of items (or an object with an 'items' list)")
    items: list[GIEItem] = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_items):
        if not isinstance(raw, Mapping):
            raise DataError(f"{source}: item {index} is not an object")
        item_id = str(raw.get("id", index))
        where = f"{source}: item {item_id!r}"
        if item_id in seen:
            raise DataError(f"{where} appears twice; item ids must be unique")
        seen.add(item_id)
        for field_name in ("dimension", "identity", "question"):
            if not isinstance(raw.get(field_name), str) or not raw[field_name].strip():
                raise DataError(f"{where} has no string field {field_name!r}")
        answers = raw.get("answers")
        if not isinstance(answers, list) or len(answers) != 4 or not all(isinstance(a, str) for a in answers):
            raise DataError(f"{where}: 'answers' must be a list of 4 strings")
        correct_index = raw.get("correct_index")
        if not isinstance(correct_index, int) or isinstance(correct_index, bool) or not 0 <= correct_index < 4:
            raise DataError(f"{where}: 'correct_index' must be 0, 1, 2 or 3")
        permutation = option_permutation(seed, item_id) if shuffle else (0, 1, 2, 3)
        shown = [answers[i] for i in permutation]
        identity = raw["identity"].strip()
        prompts = {
            condition: render_prompt(condition, identity=identity, question=raw["question"], answers=shown)
            for condition in CONDITIONS
        }
        gold = gold_letter(permutation, correct_index)
        items.append(
            GIEItem(
                item_id=item_id,
                dimension=normalize_dimension(raw["dimension"]),
                identity=identity,
                prompts=prompts,
                gold=dict.fromkeys(CONDITIONS, gold),
                permutation=permutation,
            )
        )
    return items


def load_structured_file(path: Path, *, seed: int, shuffle: bool) -> tuple[list[GIEItem], FetchedFile]:
    """Structured items from a user file; there is no pin to check it against, so it is recorded as unverified."""
    try:
        content = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"giebench.items: no such file: {path}") from None
    except OSError as exc:
        raise DataError(f"cannot read {path}: {exc.strerror}") from None
    items = items_from_structured(_parse_json(content, str(path)), seed=seed, shuffle=shuffle, source=str(path))
    return items, FetchedFile("giebench.items", path.resolve(), sha256_of(content), False, str(path))
