"""The one public reader of run directories: everything that renders or compares runs reads them through here.

`open_run(path)` gives the typed view (`RunDirectory`: run.json as `RunInfo`, summary.json as `RunSummary`, the
samples); `load_run(path)` the same files as plain dicts for the renderers (`RunData`). Both read summary schema 1
(every directory written since 0.1) and refuse any other version with one line naming it.
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from empathybench.errors import UserError
from empathybench.rundir.store import read_samples
from empathybench.schema.files import checked
from empathybench.schema.run import RunInfo
from empathybench.schema.summary import SUMMARY_SCHEMA_VERSION, InstrumentSummary, Metric, RunSummary

__all__ = ["RunData", "RunDirectory", "load_run", "open_run", "read_samples"]


@dataclass
class RunData:
    """A run's files as plain dicts. A run read from another harness's logs (the inspect bridge) carries its item
    records itself and names where they came from in `origin`; its `directory` is where its logs are."""

    directory: Path
    summary: dict[str, Any]
    run_info: dict[str, Any]
    records: list[dict[str, Any]] | None = None
    origin: str | None = None

    @property
    def label(self) -> str:
        return str(self.summary.get("model", self.directory.name))

    def samples(self) -> list[dict[str, Any]]:
        return list(self.records) if self.records is not None else read_samples(self.directory)


@dataclass(frozen=True)
class RunDirectory:
    """A finished run directory, typed: `run` (run.json), `summary` (summary.json) and its sample records."""

    directory: Path
    run: RunInfo | None  # None: a directory without run.json (the summary alone still renders)
    summary: RunSummary

    def samples(self) -> Iterator[dict[str, Any]]:
        """The latest record of every item (samples.jsonl), in file order."""
        yield from read_samples(self.directory)

    def headlines(self) -> dict[str, Metric | None]:
        """Each instrument's ONE headline metric (value, ci95, n, unit, reference); None for a skipped one."""
        return {
            name: entry.headline if isinstance(entry, InstrumentSummary) else None
            for name, entry in self.summary.benchmarks.items()
        }


def _read_files(directory: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    if not directory.is_dir():
        raise UserError(f"no such run directory: {directory}")
    summary_path = directory / "summary.json"
    if not summary_path.exists():
        raise UserError(f"{directory} has no summary.json: the run did not finish (re-run the same command to resume)")
    try:
        summary = json.loads(summary_path.read_text("utf-8"))
        run_path = directory / "run.json"
        run_info = json.loads(run_path.read_text("utf-8")) if run_path.exists() else {}
    except ValueError as exc:
        raise UserError(f"{directory}: unreadable run files: {exc}") from None
    if not isinstance(summary, dict) or "benchmarks" not in summary:
        raise UserError(f"{summary_path} is not an EmpathyBench summary")
    if not isinstance(run_info, dict):
        raise UserError(f"{directory / 'run.json'} is not an EmpathyBench run file")
    version = summary.get("schema_version")
    if version != SUMMARY_SCHEMA_VERSION or isinstance(version, bool):
        written_by = str(run_info.get("empathybench_version", "unknown"))[:40]
        raise UserError(
            f"{directory}: summary schema {version!r} written by EmpathyBench {written_by}; "
            f"this version reads schema {SUMMARY_SCHEMA_VERSION}"
        )
    return summary, run_info


def open_run(directory: Path | str) -> RunDirectory:
    """A finished run directory, typed; anything else (missing, unfinished, unknown version) is a one-line UserError."""
    directory = Path(directory)
    return _typed(directory, *_read_files(directory))


def _typed(directory: Path, summary: dict[str, Any], run_info: dict[str, Any]) -> RunDirectory:
    typed_summary = checked(RunSummary, summary, str(directory / "summary.json"))
    typed_run = checked(RunInfo, run_info, str(directory / "run.json")) if run_info else None
    return RunDirectory(directory, typed_run, typed_summary)


def load_run(directory: Path) -> RunData:
    """A finished run directory (summary.json and run.json) as written; anything else is a one-line UserError."""
    summary, run_info = _read_files(directory)
    _typed(directory, summary, run_info)  # read through the contract: a file that breaks it is refused here
    return RunData(directory, summary, run_info)
