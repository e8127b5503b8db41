"""What an instrument provides to the engine."""

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from empathybench.data.fetch import FetchedFile
from empathybench.engine.engine import ItemContext
from empathybench.errors import UserError

PRESETS = ("quick", "paper", "full")


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
