"""What an instrument provides to the engine."""

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar, get_args, get_type_hints

from empathybench.data.fetch import FetchedFile
from empathybench.engine.engine import ItemContext
from empathybench.errors import UserError

PRESETS = ("quick", "paper", "full")

T = TypeVar("T")


@dataclass(frozen=True)
class BenchItem:
    id: str
    payload: Any  # whatever the benchmark needs; never written to disk by the engine


@dataclass
class PreparedBenchmark:
    """A benchmark with its preset resolved, its data fetched and its items chosen."""

    name: str
    config: dict[str, Any]  # JSON-able; recorded in run.json and part of the run's fingerprint
    items: list[BenchItem]
    run_item: Callable[[BenchItem, ItemContext], Any]  # async: returns the record fields of one item
    summarize: Callable[[list[dict[str, Any]]], dict[str, Any]]
    data_files: list[FetchedFile] = field(default_factory=list)


class Benchmark(Protocol):
    name: str
    title: str
    presets: dict[str, str]  # preset name -> one-line description
    options: dict[str, str]  # option name -> one-line description (set with --option NAME=VALUE)

    def prepare(
        self,
        preset: str,
        *,
        options: dict[str, str],
        limit: int | None,
        seed: int,
        allow_unverified: bool,
    ) -> PreparedBenchmark: ...


def read_json_argument(path: Path) -> Any:
    """A JSON file named on the command line; a missing or broken file is a one-line UserError."""
    try:
        return json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise UserError(f"no such file: {path}") from None
    except (OSError, ValueError) as exc:
        raise UserError(f"{path} is not a JSON file: {exc}") from None


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


C = TypeVar("C")


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
    checked against `choices`; `custom` handles options that are not one plain field. Every mistake is a
    one-line UserError naming the option and the value.
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
        config = replace(config, **{key: _read_option(name, value, field_types[key])})  # type: ignore[type-var]
    return config


def _read_option(name: str, value: str, annotation: Any) -> Any:
    if annotation is bool:
        return bool_option(name, value)
    optional = type(None) in get_args(annotation)
    if optional and not value.strip():
        return None
    kinds = [a for a in get_args(annotation) if a is not type(None)] if optional else [annotation]
    if kinds and kinds[0] in (int, float):
        try:
            return kinds[0](value)
        except ValueError:
            what = "an integer" if kinds[0] is int else "a number"
            raise UserError(f"{name} must be {what}, not {value!r}") from None
    return value
