"""What an instrument provides to the orchestrator (run/): its items, how to run one, how to summarise them."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from empathybench.data.fetch import FetchedFile
from empathybench.engine.engine import ItemContext


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

    def check_options(self, preset: str, options: dict[str, str]) -> None:
        """Raise a UserError for any bad option value; reads no data, calls no model."""
        ...
