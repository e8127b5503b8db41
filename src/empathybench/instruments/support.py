"""Shared support for instruments: option reading, quick subsets, config bounds (written once, used by all)."""

import itertools
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, get_args, get_type_hints

from empathybench.errors import DataError, UserError
from empathybench.formatting import printable
from empathybench.stats.intervals import mean_metric as mean_metric  # re-exported: the summary's metrics

__all__ = [  # what a third-party instrument may use (with instruments.protocol); see docs/write-an-instrument.md
    "MAX_ATTEMPTS",
    "MAX_TEMPERATURE",
    "MAX_TOKENS_LIMIT",
    "PRESETS",
    "UserError",
    "apply_options",
    "bool_option",
    "bounded",
    "chosen_names",
    "cot_conditions",
    "evenly_spread",
    "jsonl_file",
    "jsonl_records",
    "mean_metric",
    "preset_config",
    "read_json_argument",
    "read_number",
    "read_text_argument",
]

PRESETS = ("quick", "paper", "full")

T = TypeVar("T")


def read_json_argument(path: Path) -> Any:
    """A JSON file named on the command line; a missing or broken file is a one-line UserError."""
    try:
        return json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise UserError(f"no such file: {printable(path, 300)}") from None
    except (OSError, ValueError) as exc:
        raise UserError(f"{printable(path, 300)} is not a JSON file: {printable(exc, 200)}") from None


@contextmanager
def file_errors(shown: str, what: str) -> Iterator[None]:
    """Reading the file printed as `shown` (already printable) inside: a missing file, a directory or another OSError
    is one UserError line saying so and naming `what` the file should be."""
    try:
        yield
    except FileNotFoundError:
        raise UserError(f"no such file: {shown}") from None
    except IsADirectoryError:
        raise UserError(f"{shown} is a directory, not {what}") from None
    except OSError as exc:
        raise UserError(f"cannot read {shown}: {exc.strerror or exc}") from None


def read_text_argument(path: Path, *, limit: int, what: str) -> str:
    """A UTF-8 text file named on the command line, at most `limit` bytes (checked before it is read); a missing,
    unreadable, too large or undecodable file is a one-line UserError naming `what` it should be (the path printed
    printable: it came from the command line)."""
    shown = printable(path, 300)
    with file_errors(shown, what):
        size = path.stat().st_size
        if size > limit:
            raise UserError(f"{shown} is {size} bytes; {what} is smaller (limit {limit})")
        data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"{shown} is not UTF-8 text ({what}): {exc}") from None


# The longest line a JSON-lines reader takes unless its instrument states another: a line is one record (a
# conversation, a judgment), tens of kB in every released file; a longer line is refused before it is held whole.
MAX_JSONL_LINE_BYTES = 4 * 1024 * 1024


def jsonl_lines(
    lines: Iterable[bytes | str], *, source: str, max_line_bytes: int = MAX_JSONL_LINE_BYTES
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-empty line of a JSON-lines file, read one at a time (bytes are decoded as
    UTF-8): a line over `max_line_bytes`, not text, not an object (told by its first character, before anything is
    built: a one-line JSON array would otherwise be parsed whole), not JSON or nested past the parser's depth is one
    DataError."""
    for number, raw in enumerate(lines, start=1):
        if len(raw) > max_line_bytes:  # characters of a str: at most its UTF-8 bytes, so never refused wrongly
            raise DataError(f"{source}: line {number} is longer than {max_line_bytes:,} bytes: not one record")
        try:
            line = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        except UnicodeDecodeError:
            raise DataError(f"{source}: line {number} is not UTF-8 text") from None
        stripped = line.lstrip()
        if not stripped:
            continue
        if not stripped.startswith("{"):
            raise DataError(f"{source}: line {number} is not a JSON object")
        try:
            record = json.loads(line)
        except RecursionError:
            raise DataError(f"{source}: line {number} is nested too deeply to be read") from None
        except ValueError as exc:
            raise DataError(f"{source}: line {number} is not JSON ({printable(exc, 120)})") from None
        if not isinstance(record, dict):
            raise DataError(f"{source}: line {number} is not a JSON object")
        yield number, record


def bounded_lines(stream: BinaryIO, *, source: str, max_line_bytes: int = MAX_JSONL_LINE_BYTES) -> Iterator[bytes]:
    """The lines of a binary file without their "\\n", each read with at most `max_line_bytes` + 1 bytes held: a
    longer line is one DataError as soon as its first `max_line_bytes` + 1 bytes are read (memory stays bounded
    whatever the file holds)."""
    for number in itertools.count(1):
        line = stream.readline(max_line_bytes + 1)
        if not line:
            return
        if len(line) > max_line_bytes and not (len(line) == max_line_bytes + 1 and line.endswith(b"\n")):
            raise DataError(f"{source}: line {number} is longer than {max_line_bytes:,} bytes: not one record")
        yield line.removesuffix(b"\n")


def jsonl_file(
    path: Path, *, what: str, max_file_bytes: int, max_line_bytes: int = MAX_JSONL_LINE_BYTES
) -> Iterator[tuple[int, dict[str, Any]]]:
    """`jsonl_lines` of a JSON-lines file named on the command line, read a line at a time in bounded memory; the
    file over `max_file_bytes`, missing or unreadable, or any line refused, is one UserError."""
    shown = printable(path, 300)
    try:
        with file_errors(shown, what):
            size = path.stat().st_size
            if size > max_file_bytes:
                raise UserError(f"{shown} is {size:,} bytes; {what} is smaller (limit {max_file_bytes:,})")
            with path.open("rb") as stream:
                yield from jsonl_lines(
                    bounded_lines(stream, source=shown, max_line_bytes=max_line_bytes),
                    source=shown,
                    max_line_bytes=max_line_bytes,
                )
    except DataError as exc:
        raise UserError(str(exc)) from None


def jsonl_records(text: str, *, source: str, max_line_bytes: int = MAX_JSONL_LINE_BYTES) -> list[dict[str, Any]]:
    """One JSON object per line, split on "\\n" only: some texts hold U+2028, which str.splitlines() splits on."""
    return [record for _, record in jsonl_lines(text.split("\n"), source=source, max_line_bytes=max_line_bytes)]


def evenly_spread(items: Sequence[T], size: int) -> list[T]:
    """A fixed subset of `size` items spread evenly over `items` (all of them when there are fewer):
    the same items on every machine and every run, for quick presets."""
    if len(items) <= size:
        return list(items)
    return [items[i * len(items) // size] for i in range(size)]


def bool_option(name: str, value: str) -> bool:
    """A true/false `--option` value; anything else is a one-line UserError."""
    lowered = value.strip().lower()
    if lowered not in ("true", "false", "1", "0", "yes", "no"):
        raise UserError(f"{name} must be true or false, not {value!r}")
    return lowered in ("true", "1", "yes")


# `--option NAME.cot=...`: the prompt conditions an instrument with and without chain of thought runs (in order; the
# first is its headline's).
COT_CHOICES = {"false": (False,), "true": (True,), "both": (False, True)}


def cot_conditions(name: str, value: str) -> tuple[bool, ...]:
    """The conditions a `cot` option names (false | true | both); anything else is a one-line UserError."""
    conditions = COT_CHOICES.get(value.strip().lower())
    if conditions is None:
        raise UserError(f"{name} must be {', '.join(COT_CHOICES)}, not {value!r}")
    return conditions


def chosen_names(name: str, value: str, known: Sequence[str], *, lower: bool = False) -> tuple[str, ...]:
    """`all` (-> (), meaning every one) or known names, comma-separated, in the given order without repeats; an
    unknown or empty choice is a one-line UserError listing what is known."""
    if value.strip().lower() == "all":
        return ()
    parts = (part.strip().lower() if lower else part.strip() for part in value.split(","))
    chosen = tuple(dict.fromkeys(part for part in parts if part))
    unknown = [part for part in chosen if part not in known]
    if unknown or not chosen:
        raise UserError(f"unknown {name} {', '.join(unknown) or repr(value)}; choose all or from {', '.join(known)}")
    return chosen


C = TypeVar("C")


def preset_config(benchmark: str, presets: Mapping[str, C], preset: str) -> C:
    """The config of a preset by name; an unknown one is a one-line UserError naming the instrument's presets."""
    if preset not in presets:
        raise UserError(f"unknown {benchmark} preset {preset!r}; choose from {', '.join(presets)}")
    return presets[preset]


# Ceilings shared by the benchmarks' configs: generous for real use, small enough that a typo cannot run for days.
MAX_TOKENS_LIMIT = 131_072
MAX_TEMPERATURE = 2.0
MAX_ATTEMPTS = 10
# A truncated answer (a reasoning model spent the budget thinking) is re-asked this many times with a doubled
# budget, in protocols that already re-ask an unusable answer (attempts > 1); a protocol that asks once (e.g.
# EQ-Bench's lm-eval mode) keeps its one ask, and the truncation is counted.
TRUNCATION_REASKS = 2


def truncation_reasks(attempts: int) -> int:
    """How often a truncated answer is re-asked with a larger budget under a protocol of `attempts` asks."""
    return TRUNCATION_REASKS if attempts > 1 else 0


def bounded(low: float, high: float) -> dict[str, Any]:
    """Dataclass field metadata: the accepted range of a numeric config field, checked by `apply_options` (with a
    one-line message naming the option) and, on a pydantic dataclass config, by the model itself (ge/le), which
    also puts it in the config's JSON schema."""
    return {"range": (low, high), "ge": low, "le": high}


def config_schema(config_type: type) -> dict[str, Any]:
    """The JSON schema of an instrument's config (a pydantic dataclass): fields, types, defaults and ranges."""
    from pydantic import TypeAdapter

    return TypeAdapter(config_type).json_schema()


def field_range(config_type: type, name: str) -> tuple[float, float] | None:
    for entry in fields(config_type):
        if entry.name == name:
            return entry.metadata.get("range")
    return None


def read_number(name: str, value: str, kind: type, accepted: tuple[float, float] | None) -> Any:
    """A finite int or float `--option` value inside `accepted` (inclusive); else a one-line UserError naming it."""
    what = "an integer" if kind is int else "a number"
    try:
        number = kind(value)
    except ValueError:
        raise UserError(f"{name} must be {what}, not {value!r}") from None
    if not math.isfinite(number):
        raise UserError(f"{name} must be a finite number, not {value!r}")
    if accepted is not None and not accepted[0] <= number <= accepted[1]:
        low, high = (kind(bound) for bound in accepted)
        raise UserError(f"{name} must be between {low} and {high}, not {value!r}")
    return number


def apply_options(
    config: C,
    options: Mapping[str, str],
    *,
    benchmark: str,
    known: Mapping[str, str],
    choices: Mapping[str, Sequence[str]] | None = None,
    custom: Mapping[str, Callable[[C, str], C]] | None = None,
) -> C:
    """Set `--option NAME=VALUE` strings on a frozen dataclass config.

    Each value is read as its field's type (bool, int, float, str, or None for an empty optional string) and
    checked against `choices` and, for numbers, against the field's `bounded(...)` range (finite only);
    `custom` handles options that are not one plain field. Every mistake is a one-line UserError naming the
    option, the value and what is accepted.
    """
    field_types = get_type_hints(type(config))
    for key, value in options.items():
        name = f"{benchmark}.{key}"
        if key not in known:
            raise UserError(f"unknown {benchmark} option {key!r}; known: {', '.join(known)}")
        if custom and key in custom:
            config = custom[key](config, value)
            continue
        allowed = (choices or {}).get(key)
        if allowed is not None and value not in allowed:
            raise UserError(f"{name} must be {' or '.join(allowed)}, not {value!r}")
        accepted = field_range(type(config), key)
        config = replace(config, **{key: _read_option(name, value, field_types[key], accepted)})  # type: ignore[type-var]
    return config


def _read_option(name: str, value: str, annotation: Any, accepted: tuple[float, float] | None = None) -> Any:
    if annotation is bool:
        return bool_option(name, value)
    optional = type(None) in get_args(annotation)
    if optional and not value.strip():
        return None
    kinds = [a for a in get_args(annotation) if a is not type(None)] if optional else [annotation]
    if kinds and kinds[0] in (int, float):
        return read_number(name, value, kinds[0], accepted)
    return value
