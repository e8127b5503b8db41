"""What an instrument provides to the engine."""

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

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
